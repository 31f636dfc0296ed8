"""Shared helpers for the benchmarks: the repository on sys.path and a fixed program sample."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.strategies import Caps, conversion_programs, sample  # noqa: E402
from lang.ir import Program  # noqa: E402
from lang.policy import Policy  # noqa: E402


def sample_programs(n: int, caps: Caps, policy: Policy, seed: int = 0) -> list[Program]:
    """The first ``n`` programs a campaign with this seed and policy would generate."""
    return sample(conversion_programs(caps, policy), n, seed)
