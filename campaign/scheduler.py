"""Which area the next program of a campaign comes from: budgets and a bandit over the areas.

Budgets. An area may have a time budget (driver seconds per target: the time its programs kept a
target busy, summed over the targets that ran them and divided by their number, so a budget reads
as wall time on a campaign whose targets run side by side) and a program budget. Both count over
the campaign's whole life, across resumed runs; an area that has spent its budget is not drawn
from again, and a campaign whose every area is spent ends early.

Policy. Every target picks its own next area (campaign.feed: targets run at their own pace).
Corners first: while some area the target takes has corner-sweep programs not yet handed out
(fuzz.strategies.sweeps; every target runs each of them, campaign.feed), the target draws from
the one whose next sweep program is of the earliest pass (every area's prescribed special values,
then its other operand classes, then its shapes: fuzz.strategies.sweeps.base.place; the image,
atomic and SPIR-V sweeps, a few corners a program, next; the math built-ins' shapes, the slowest
to build for a corner each, last), of those the one with the fewest handed out, so every sweep is
out before the random draws begin and the most corners per second of build go first.
Each run of a program on a target is a *find* when it opened a bucket the corpus did not have: a
distinct bug (corpus.buckets), not a new cell or a second bucket of a known bug, which cheap areas
produce without end. An area's find rate is unknown and drifts (finds get rarer as an area is
explored), so the scheduler uses Thompson sampling: for every area with budget left it draws a
rate from Beta(1 + finds, 1 + misses), divides it by that target's mean cost in the area (its
driver seconds per program, 1 s before any is measured) and takes the area with the largest
finds-per-second draw. Before that, each target runs ``WARMUP`` programs of every area in turn,
and every area keeps a *floor*: ``floor`` (Policy.area_floor) of each target's time is shared
evenly by the areas it takes, and an area below its share of a target's time is that target's
next pick, so costly areas (math, images) are never starved by cheap ones. Areas where new bugs
keep turning up get the rest; counts decay (``DECAY`` per run of the area) so the rates follow
the campaign as it saturates.

The state (per area: draw index, programs, finds, misses, seconds; per target and area: programs
and seconds) is plain JSON kept in the
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

MIN_COST = 1e-3
"""Seconds per program an area is taken to cost at least (a run the driver did not time)."""


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
    swept: int = 0  # programs of the area's corner sweep handed out (fuzz.strategies.sweeps)
    sweep: str = ""  # which sweep (its key: another set of capabilities is another sweep)
    programs: int = 0  # programs finished on some target
    finds: float = 0.0  # decayed count of runs that found a new bug
    misses: float = 0.0
    seconds: float = 0.0  # driver seconds per target

    @property
    def cost(self) -> float:
        return max(self.seconds / self.programs, MIN_COST) if self.programs else 1.0


@dataclass
class Pace:
    """One target's time in one area: what its floor and its cost are measured by."""

    programs: int = 0
    seconds: float = 0.0

    @property
    def cost(self) -> float:
        return max(self.seconds / self.programs, MIN_COST) if self.programs else 1.0


class Scheduler:
    """Picks areas (module docstring). Not thread-safe: the campaign calls it under its lock."""

    def __init__(self, areas: tuple[str, ...], budgets: dict[str, Budget] | None = None,
                 state: dict | None = None, seed: int = 0, *, targets: tuple[str, ...] = (),
                 floor: float = 0.0, sweeps: dict[str, tuple[str, tuple[int, ...]]] | None = None) -> None:
        self.areas, self.targets, self.floor = areas, targets, floor
        self.sweeps = sweeps or {}  # per area: its corner sweep's key and the pass of each of its programs
        self.budgets = budgets or {}
        stored = (state or {}).get("areas", {})
        self.state = {a: AreaState(**stored.get(a, {})) for a in areas}
        paces = (state or {}).get("targets", {})
        self.pace = {t: {a: Pace(**paces.get(t, {}).get(a, {})) for a in areas}
                     for t in dict.fromkeys((*targets, *paces))}  # a resumed run keeps absent targets' paces
        self._rng = np.random.default_rng([seed, sum(s.next for s in self.state.values())])
        self._untaken: dict[tuple[str | None, str], int] = {}  # programs in a row a target of this run did not take

    def untaken(self, area: str, target: str | None = None) -> None:
        """``target`` (or, without one, every target) of this run did not take a program of
        ``area``: after ``WARMUP`` in a row the area is dropped for it in this run (e.g.
        SPIR-V-only programs on a target without a SPIR-V path)."""
        key = (target, area)
        self._untaken[key] = self._untaken.get(key, 0) + 1

    def open(self, area: str, target: str | None = None) -> bool:
        """Whether ``area`` has budget left and (``target``, or some target of this run) takes its
        programs."""
        b, s = self.budgets.get(area, Budget()), self.state[area]
        return (self._untaken.get((None, area), 0) < WARMUP
                and (target is None or self._untaken.get((target, area), 0) < WARMUP)
                and (b.programs is None or s.next + s.searched + s.swept < b.programs)
                and (b.seconds is None or s.seconds < b.seconds))

    def dropped(self, area: str) -> bool:
        """Whether no target of this run takes ``area``'s programs (every one of them has
        declined ``WARMUP`` in a row)."""
        return self._untaken.get((None, area), 0) >= WARMUP or bool(self.targets) and all(
            self._untaken.get((t, area), 0) >= WARMUP for t in self.targets)

    def pick(self, target: str | None = None) -> str | None:
        """The area to draw ``target``'s next program from (module docstring: warm-up, floors, then
        finds per second of that target), or None when every area has spent its budget."""
        candidates = [a for a in self.areas if self.open(a, target)]
        if not candidates:
            return None
        sweeping = {a: self._swept(a) for a in candidates if self._swept(a) is not None}
        if sweeping:  # corners first, a pass at a time
            return min(sweeping, key=lambda a: (self.sweeps[a][1][sweeping[a]], sweeping[a]))
        pace = self.pace.get(target) if target is not None else None
        ran = (lambda a: pace[a].programs) if pace else (lambda a: self.state[a].next)
        cold = [a for a in candidates if ran(a) < WARMUP]
        if cold:
            return min(cold, key=ran)
        if pace and self.floor > 0:
            total = sum(pace[a].seconds for a in candidates) or 1.0
            short = {a: self.floor / len(candidates) - pace[a].seconds / total for a in candidates}
            below = max(candidates, key=short.__getitem__)
            if short[below] > 0:
                return below
        cost = (lambda a: pace[a].cost) if pace else (lambda a: self.state[a].cost)
        draws = [self._rng.beta(1 + self.state[a].finds, 1 + self.state[a].misses) / cost(a) for a in candidates]
        return candidates[int(np.argmax(draws))]

    def take(self, area: str) -> int:
        """The next draw index of ``area`` (advanced: a program drawn is never drawn again)."""
        s = self.state[area]
        s.next += 1
        return s.next - 1

    def sweeping(self, area: str, key: str, size: int) -> int | None:
        """The index of ``area``'s next corner-sweep program (advanced), or None once its sweep
        ``key`` of ``size`` programs is handed out (a resumed campaign does not repeat it)."""
        s = self.state[area]
        if s.sweep != key:
            s.sweep, s.swept = key, 0
        if s.swept >= size:
            return None
        s.swept += 1
        return s.swept - 1

    def _swept(self, area: str) -> int | None:
        """How many of ``area``'s sweep programs are handed out, None once all are (or it has none)."""
        key, passes = self.sweeps.get(area, ("", ()))
        s = self.state[area]
        swept = s.swept if s.sweep == key else 0
        return swept if swept < len(passes) else None

    def searched(self, area: str) -> None:
        """A program of ``area`` came from its targeted search instead of its draws."""
        self.state[area].searched += 1

    def observe(self, area: str, found: bool, seconds: float, target: str | None = None,
                first: bool = True) -> None:
        """A program of ``area`` finished on ``target`` (without one: on every target, ``seconds``
        per target): whether it found a new bug, its driver seconds; ``first``: no other target
        had finished it."""
        s = self.state[area]
        self._untaken[(target, area)] = 0
        self._untaken[(None, area)] = 0
        s.finds, s.misses = s.finds * DECAY + found, s.misses * DECAY + (not found)
        s.programs += first
        s.seconds += seconds / max(len(self.targets), 1) if target is not None else seconds
        if target in self.pace:
            p = self.pace[target][area]
            p.programs += 1
            p.seconds += seconds

    def share(self) -> dict[str, float]:
        """Each area's fraction of the programs drawn so far."""
        total = sum(s.next + s.searched for s in self.state.values()) or 1
        return {a: (s.next + s.searched) / total for a, s in self.state.items()}

    def to_state(self) -> dict:
        return {"areas": {a: asdict(s) for a, s in self.state.items()},
                "targets": {t: {a: asdict(p) for a, p in pace.items()} for t, pace in self.pace.items()}}
