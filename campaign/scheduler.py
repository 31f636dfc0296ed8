"""Which area the next program of a campaign comes from: budgets and a bandit over the areas.

Budgets. An area may have a time budget (driver seconds per target: the time its programs kept a
target busy, summed over the targets that ran them and divided by their number, so a budget reads
as wall time on a campaign whose targets run side by side) and a program budget. Both count over
the campaign's whole life, across resumed runs; an area that has spent its budget is not drawn
from again, and a campaign whose every area is spent ends early.

Policy. Each finished program is a *find* when it taught the campaign something new on some
target: a disagreement of a kind not seen before in the campaign (target, kind, operation, types
and input class: what makes a bucket), or a coverage cell (construct x type x width,
corpus.coverage) that target had not yet run. An area's find rate is unknown and drifts (finds
get rarer as an area is explored), so the scheduler uses Thompson sampling: for every area with
budget left it draws a rate from Beta(1 + finds, 1 + misses), divides it by the area's mean cost
(driver seconds per program, 1 s before any is measured) and takes the area with the largest
finds-per-second draw (after ``WARMUP`` programs of every area, drawn in turn). Areas where disagreements or uncovered cells keep turning up get most of
the budget; one that stops yielding still gets a share that shrinks as its evidence grows, so a
lucky or unlucky start is corrected. Counts decay (``DECAY`` per program of the area) so the
rates follow the campaign as it saturates.

The state (draw index, programs, finds, misses, seconds per area) is plain JSON kept in the
campaign's row of the corpus: running the campaign again resumes where it stopped.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import numpy as np

DECAY = 0.99
"""Finds and misses are multiplied by this at each program of the area: the last ~100 count most."""

WARMUP = 3
"""Programs drawn from every area, in turn, before the sampling starts (each area gets measured)."""


class BudgetError(ValueError):
    """A budget that cannot be parsed; the message shows the accepted form."""


@dataclass(frozen=True)
class Budget:
    """What an area may spend over the campaign's life (None: no limit)."""

    seconds: float | None = None
    programs: int | None = None


_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_budgets(text: str, areas: tuple[str, ...]) -> dict[str, Budget]:
    """``"images=2m,atomics=300p,expressions=90s"``: per area a time (s, m, h) or a number of
    programs (p); both may be given for one area (``images=2m,images=100p``)."""
    out: dict[str, Budget] = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        m = re.fullmatch(r"([a-z0-9_]+)=(\d+(?:\.\d+)?)([smhp])", item)
        if not m:
            raise BudgetError(f"budget {item!r} is not AREA=NUMBER followed by s, m, h (time) or p (programs), "
                              "e.g. images=2m,atomics=300p")
        area, number, unit = m.groups()
        if area not in areas:
            raise BudgetError(f"budget for unknown area {area!r}; the campaign's areas: {', '.join(areas)}")
        old = out.get(area, Budget())
        out[area] = (Budget(old.seconds, int(float(number))) if unit == "p"
                     else Budget(float(number) * _UNITS[unit], old.programs))
    return out


@dataclass
class AreaState:
    next: int = 0  # the next draw index of the area's stream (fuzz.strategies.draws)
    searched: int = 0  # programs from the area's targeted search (campaign.targeted)
    programs: int = 0  # programs finished on every target that took them
    finds: float = 0.0  # decayed count of programs that found something new
    misses: float = 0.0
    seconds: float = 0.0  # driver seconds per target

    @property
    def cost(self) -> float:
        return self.seconds / self.programs if self.programs else 1.0


class Scheduler:
    """Picks areas (module docstring). Not thread-safe: the campaign calls it under its lock."""

    def __init__(self, areas: tuple[str, ...], budgets: dict[str, Budget] | None = None,
                 state: dict | None = None, seed: int = 0) -> None:
        self.areas = areas
        self.budgets = budgets or {}
        stored = (state or {}).get("areas", {})
        self.state = {a: AreaState(**stored.get(a, {})) for a in areas}
        self._rng = np.random.default_rng([seed, sum(s.next for s in self.state.values())])
        self._untaken = {a: 0 for a in areas}  # programs in a row that no target of this run took

    def untaken(self, area: str) -> None:
        """No target of this run took a program of ``area`` (after ``WARMUP`` in a row the area is
        dropped for this run: e.g. SPIR-V-only programs where no target has a SPIR-V path)."""
        self._untaken[area] += 1

    def open(self, area: str) -> bool:
        """Whether ``area`` has budget left (and this run's targets take its programs)."""
        b, s = self.budgets.get(area, Budget()), self.state[area]
        return (self._untaken[area] < WARMUP
                and (b.programs is None or s.next + s.searched < b.programs)
                and (b.seconds is None or s.seconds < b.seconds))

    def pick(self) -> str | None:
        """The area to draw the next program from, or None when every area has spent its budget."""
        candidates = [a for a in self.areas if self.open(a)]
        if not candidates:
            return None
        cold = [a for a in candidates if self.state[a].next < WARMUP]
        if cold:
            return min(cold, key=lambda a: self.state[a].next)
        draws = [self._rng.beta(1 + self.state[a].finds, 1 + self.state[a].misses) / self.state[a].cost
                 for a in candidates]
        return candidates[int(np.argmax(draws))]

    def take(self, area: str) -> int:
        """The next draw index of ``area`` (advanced: a program drawn is never drawn again)."""
        s = self.state[area]
        s.next += 1
        return s.next - 1

    def searched(self, area: str) -> None:
        """A program of ``area`` came from its targeted search instead of its draws."""
        self.state[area].searched += 1

    def observe(self, area: str, found: bool, seconds: float) -> None:
        """A program of ``area`` finished: whether it found something new, its driver seconds."""
        s = self.state[area]
        self._untaken[area] = 0
        s.finds, s.misses = s.finds * DECAY + found, s.misses * DECAY + (not found)
        s.programs += 1
        s.seconds += seconds

    def share(self) -> dict[str, float]:
        """Each area's fraction of the programs drawn so far."""
        total = sum(s.next + s.searched for s in self.state.values()) or 1
        return {a: (s.next + s.searched) / total for a, s in self.state.items()}

    def to_state(self) -> dict:
        return {"areas": {a: asdict(s) for a, s in self.state.items()}}
