"""Programs for every target at its own pace: one stream of programs, a backlog per target.

A campaign draws programs one at a time (fuzz.strategies.draws; the area is the scheduler's pick
for the target that asks, campaign.scheduler), stores each in the corpus before anything runs it
and computes its expectations (for the flush-to-zero class of the target that asked; another
class's when a target of it takes the program: campaign.pool.Harness.complete). The target that asked runs
it at once; every other target that takes it (fuzz.drivers.capabilities.supports) finds it in its
*backlog*. No target waits for another: a target that needs a program takes, in order,

1. a program an interrupted run left unfinished (resume), or a program of an area's corner sweep
   (fuzz.strategies.sweeps: each area's first programs, which every target runs), oldest first:
   the sweep's order (its densest programs, the special values, first) holds on a slow target
   while a fast one hands the whole sweep out,
2. a backlog program on which another target opened a new bucket (newest first): a slow target
   still runs what the others found interesting, so cross-target comparisons are not lost,
3. a backlog program of the area the scheduler picks for it (oldest first),
4. a fresh draw of that area.

A sweep program whose longest run takes a target :data:`SLOW_SWEEP` times the median of its sweep
programs so far and at least :data:`QUIET_S` makes the rest of the sweep *trickle* there: the
target holds one sweep program in flight at most and takes another program between two of them
(fresh draws included), so a sweep's slow tail shares the target with programs that judge lanes
(PoCL 5.0 ran the math sweep's double ``fmod`` / ``remainder`` / ``remquo`` programs, 192 lanes
in about 30 s each, for six minutes in which it judged almost nothing else).

A backlog holds at most :data:`BACKLOG` programs besides those of the first kind (a sweep is
bounded by its own size, and its packed programs are small); beyond that the oldest one nobody found
interesting is *skipped* on that target (counted per target). A target with several driver
workers (campaign.cores) has one backlog, from which each of its lanes takes the next program it
runs. Once the draws are over (the program limit, every area's budget) the targets drain their
backlogs. A program drawn that no target takes is counted as *unrun*: the scheduler drops an
area a target keeps declining.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Iterable

from campaign.execute import Outcome
from campaign.expectations import Expectations
from campaign.scheduler import Scheduler
from corpus.buckets import bucket_id, signature
from fuzz.drivers import Target
from fuzz.drivers.capabilities import supports
from lang.ir import Program

BACKLOG = 64
"""Programs waiting for one target at most (memory stays bounded whatever the pace difference)."""

QUIET_S = 20.0
"""Seconds a target should not go without its driver answering a run: a sweep program that takes
longer (and :data:`SLOW_SWEEP` times its median) makes the sweep trickle, and a target that has
had no answer for that long starts no triage task (campaign.campaign.triage_hold)."""

SLOW_SWEEP = 4.0
"""A sweep program this many times slower than the median of the target's sweep programs so far
(and at least :data:`QUIET_S`) makes its sweep trickle (module docstring)."""

SLOW_SWEEP_SAMPLES = 5
"""Sweep programs a target finishes before one can be slow."""


@dataclass(eq=False)
class Entry:
    """A program of the campaign and who still has to run it."""

    area: str
    program: Program
    expectations: Expectations | Future  # a Future while the harness's pool computes them (campaign.pool)
    takers: frozenset[str]  # targets that take it
    done: set[str] = field(default_factory=set)  # targets that finished it
    busy: set[str] = field(default_factory=set)  # targets running it now
    hot: bool = False  # a target opened a new bucket with it, or an interrupted run left it
    first: bool = False  # a corner-sweep program or one an interrupted run left: oldest first, never skipped


class Feed:
    """The programs of a running campaign (module docstring). Thread-safe: every target's feeder
    thread calls :meth:`next_for` and its lane calls :meth:`finished`."""

    def __init__(self, targets: list[Target], scheduler: Scheduler, draw: Callable[[str, str, bool], Program | Future],
                 expect: Callable[[Program, str], Expectations | Future], known: set[str],
                 unfinished: Iterable[tuple[str, Program, Iterable[str] | None]] = (), max_programs: int | None = None,
                 on_first: Callable[[str, Program, str, list[Outcome]], None] | None = None,
                 everywhere: Callable[[Program], bool] = lambda program: False,
                 drawn: Callable[[Program], None] = lambda program: None) -> None:
        """``draw(area, target, sweep)``, called under the feed's lock, decides the program ``target``
        draws of ``area`` (a corner-sweep program only where ``sweep``): it returns it, or a Future
        of it (the harness's worker processes draw it: campaign.pool), which the feed waits for
        outside the lock and hands to ``drawn`` (the campaign stores it). ``expect(program,
        target)`` gives its expectations, or a Future of them."""
        self.targets, self.scheduler = targets, scheduler
        self._draw, self._expect, self._on_first, self._everywhere = draw, expect, on_first, everywhere
        self._drawn = drawn
        self.known = set(known)  # bucket ids the corpus holds: a run that opens another is a find
        self.max_programs = max_programs
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # a backlog grew
        self.backlog: dict[str, list[Entry]] = {t.name: [] for t in targets}
        self.open: dict[str, Entry] = {}  # by program id: entries some target still has to run
        self.drawn = 0  # programs drawn by this run (unfinished ones it resumed included)
        self.programs = 0  # programs finished on some target
        self.unrun: Counter = Counter()  # per area, programs drawn that no target takes
        self.skipped = {t.name: 0 for t in targets}  # backlog programs a target dropped (BACKLOG)
        self.over = False  # no more draws: the program limit or every area's budget is spent
        self.drawing = 0  # draws whose program is not yet in the backlogs
        self._sweep_s: dict[str, list[float]] = {t.name: [] for t in targets}  # each sweep program's longest run
        self.trickle: dict[str, tuple[float, str]] = {}  # targets whose sweep trickles (module docstring): since, why
        self._took_sweep = {t.name: False for t in targets}  # the last program it took was a sweep's
        for area, program, only in unfinished:
            self._add(area, program, self._expect(program, ""), hot=True, only=only, first=True)
            self.drawn += 1

    # -- a target asks -------------------------------------------------------------------------

    def next_for(self, target: Target, stop: threading.Event,
                 feeding: Callable[[bool], None] = lambda active: None) -> Entry | None:
        """The program ``target`` runs next (module docstring); None once ``stop`` is set, or the
        draws are over and its backlog is empty. Waits while the target can draw nothing (every
        area closed to it) until another target's program reaches its backlog (``feeding`` is told
        when such a wait begins, False, and ends, True: the target's timeline counts it idle)."""
        while not stop.is_set():
            with self.lock:
                entry = self._from_backlog(target)
                if entry is not None:
                    return entry
                if self.max_programs is not None and self.drawn >= self.max_programs:
                    self.over = True
                area = None if self.over else self.scheduler.pick(target.name)
                if area is None:
                    if self.over or self.scheduler.pick() is None:  # no target can draw
                        self.over = True
                        if not self.drawing:  # (a program still being drawn may be for this target)
                            return None
                    feeding(False)
                    self.changed.wait(0.2)
                    feeding(True)
                    continue
                program = self._draw(area, target.name, self._sweep_turn(target.name))
                self.drawn += 1
                self.drawing += 1
            try:
                if isinstance(program, Future):
                    program = program.result()
                self._drawn(program)
                sweep = self._everywhere(program)
                entry = self._add(area, program, self._expect(program, target.name), hot=sweep, first=sweep)
            finally:
                with self.lock:
                    self.drawing -= 1
                    self.changed.notify_all()
            with self.lock:
                if target.name in entry.takers and entry in self.backlog[target.name]:
                    return self._take(target, entry)
                if target.name in entry.busy | entry.done:  # another worker of the target took it
                    continue
                self.scheduler.untaken(area, target.name)
        return None

    def _from_backlog(self, target: Target) -> Entry | None:
        backlog = self.backlog[target.name]
        if not backlog:
            return None
        first = next((e for e in backlog if e.first), None)
        if first is not None and self._sweep_turn(target.name):
            return self._take(target, first)
        hot = [e for e in backlog if e.hot and not e.first]
        if hot:
            return self._take(target, hot[-1])
        area = None if self.over else self.scheduler.pick(target.name)
        of_area = [e for e in backlog if e.area == area and not e.first]
        if of_area:
            return self._take(target, of_area[0])
        if area is None:  # draining, or nothing this target could draw: oldest first
            return self._take(target, backlog[0])
        return None

    def _take(self, target: Target, entry: Entry) -> Entry:
        backlog = self.backlog[target.name]
        if entry in backlog:
            backlog.remove(entry)
        entry.busy.add(target.name)
        self._took_sweep[target.name] = entry.first
        return entry

    def _sweep_turn(self, target: str) -> bool:
        """Whether ``target`` may take a sweep program now: always, unless its sweep trickles and
        it has one in flight or took one last (module docstring)."""
        return target not in self.trickle or not (
            self._took_sweep[target] or any(e.first and target in e.busy for e in self.open.values()))

    def _waiting(self, entry: Entry) -> set[str]:
        return set(entry.takers) - entry.done - entry.busy

    def _add(self, area: str, program: Program, expectations: Expectations | Future, hot: bool = False,
             only: Iterable[str] | None = None, first: bool = False) -> Entry:
        """A new program: into the backlog of every target that takes it (of ``only``, if given)."""
        takers = frozenset(t.name for t in self.targets if (only is None or t.name in only) and supports(t, program))
        entry = Entry(area, program, expectations, takers, hot=hot, first=first)
        with self.lock:
            if not takers:
                self.unrun[area] += 1
                self.scheduler.untaken(area)
                return entry
            self.open[program.id] = entry
            for t in self.targets:
                if t.name in takers:
                    self._queue(t.name, entry)
        return entry

    def _queue(self, target: str, entry: Entry) -> None:
        backlog = self.backlog[target]
        if entry not in backlog:
            backlog.append(entry)
            self.changed.notify_all()
        bounded = [e for e in backlog if not e.first]
        if len(bounded) > BACKLOG:
            cold = next((e for e in bounded if not e.hot), bounded[0])
            backlog.remove(cold)
            self.skipped[target] += 1
            self._settle(cold, target)

    # -- a target is done ----------------------------------------------------------------------

    def finished(self, target: Target, entry: Entry, outcomes: list[Outcome]) -> None:
        """``target`` ran ``entry``'s program: the scheduler learns whether it opened a bucket the
        corpus did not have, and if it did, every target that has not run it gets it first."""
        rows = [r for o in outcomes for r in o.verdict.rows + o.failures]
        new = {bucket_id(signature({**r, "target": target.name})) for r in rows}
        with self.lock:
            new -= self.known
            self.known |= new
            first = not entry.done
            entry.busy.discard(target.name)
            entry.done.add(target.name)
            self.programs += first
            if entry.first:  # its longest run: a part's runs (halves isolating a failure) each answer
                self._timed_sweep(target.name, max((o.longest_s for o in outcomes), default=0.0))
            self.scheduler.observe(entry.area, bool(new), sum(o.driver_s for o in outcomes), target.name, first)
            if new and not entry.hot:
                entry.hot = True
                for name in self._waiting(entry):
                    self._queue(name, entry)
            self._settle(entry, target.name)
        if first and self._on_first is not None:
            self._on_first(entry.area, entry.program, target.name, outcomes)

    def _timed_sweep(self, target: str, driver_s: float) -> None:
        """A run of a sweep program took ``target`` ``driver_s`` seconds (the longest of the
        program's): one :data:`SLOW_SWEEP` times their median so far and :data:`QUIET_S` makes the
        target's sweep trickle from now on (:attr:`trickle`: since when, on the monotonic clock, and why)."""
        times = self._sweep_s[target]
        median = statistics.median(times) if len(times) >= SLOW_SWEEP_SAMPLES else None
        if median is not None and driver_s >= max(QUIET_S, SLOW_SWEEP * median) and target not in self.trickle:
            self.trickle[target] = (time.monotonic(), f"a run of a sweep program took {driver_s:.1f} s, the median of "
                                                      f"its {len(times)} before {median:.2f} s")
        times.append(driver_s)

    def _settle(self, entry: Entry, target: str) -> None:
        """Forget ``entry`` once no target is running it or has it queued."""
        if not entry.busy and not any(entry in self.backlog[t] for t in entry.takers):
            self.open.pop(entry.program.id, None)

    def pending(self, running: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
        """What a resumed run runs first, by program id: the targets still to run it. Programs
        drawn and run nowhere yet (on every target that takes them), and programs running at the
        stop on the targets running them, or, given ``running`` (target -> the parts its lane
        left unfinished, campaign.pipeline.Lane.unfinished), those parts instead. A program that
        some target ran and a slower one had only queued is not pending: that target skipped it."""
        with self.lock:
            out = {pid: sorted((set() if e.done else set(e.takers) - e.busy) | (e.busy if running is None else set()))
                   for pid, e in self.open.items()}
        for target, parts in (running or {}).items():
            for pid in parts:
                out.setdefault(pid, []).append(target)
        return {pid: sorted(set(ts)) for pid, ts in sorted(out.items()) if ts}
