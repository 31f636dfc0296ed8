"""How long one build and run may take on a target: what that target's runs of that area measured.

A fixed limit is wrong both ways: rusticl compiles a 16-statement math program in 5-14 s while
PoCL runs most conversion programs in under a second, so 60 s lets a hung PoCL program cost a
minute per try, and a limit that fits PoCL would call every rusticl math build a hang. Each lane
keeps, per area, the wall times of its recent whole runs that finished; the limit is
:data:`FACTOR` times their median, within [:data:`FLOOR`, ceiling] (the ceiling is the campaign's
``--timeout``; before :data:`SAMPLES` runs are measured the ceiling applies). A run that exceeds a
limit below the ceiling is not yet a hang (campaign.pipeline): the statement that timed out is
tried once more at the ceiling, and only a timeout there is recorded as one.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque

FACTOR = 8.0
"""A limit is this many times the median of the area's recent runs on the target."""

FLOOR = 10.0
"""No limit is below this many seconds (a cold compiler cache, a loaded machine)."""

SAMPLES = 3
"""Runs measured before the median decides (the ceiling applies until then)."""

WINDOW = 32
"""Recent runs the median is taken over (the limit follows the campaign's programs)."""


class Timeouts:
    """One target's limits per area (module docstring). Thread-safe."""

    def __init__(self, ceiling: float) -> None:
        self.ceiling = ceiling
        self._walls: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def limit(self, area: str) -> float:
        """Seconds a run of ``area`` may take on the target now."""
        with self._lock:
            walls = self._walls.get(area)
            if walls is None or len(walls) < SAMPLES:
                return self.ceiling
            return min(self.ceiling, max(FLOOR, FACTOR * statistics.median(walls)))

    def observe(self, area: str, wall_s: float) -> None:
        """A whole run of ``area`` finished in ``wall_s`` seconds."""
        with self._lock:
            self._walls.setdefault(area, deque(maxlen=WINDOW)).append(wall_s)
