"""What a campaign reports: each target's counts, the result of a run, and the snapshots of a
running campaign that the live display shows.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Callable

from campaign.execute import Outcome
from campaign.scheduler import Budget


@dataclass
class TargetStats:
    """One target's counts in a campaign and its timeline: every second of each of its driver
    workers' ``wall_s`` (``worker_s`` in all: campaign.cores) is in one of ``build_s`` and
    ``run_s`` (what the driver reported of every run the campaign recorded, as
    ``clfuzz stats`` sums them), ``harness_s`` (the target waiting for the harness: moving buffers
    and starting workers around its runs, and the time its worker waited while the harness drew,
    computed expectations for, prepared or judged its programs), ``timeouts_s`` (the rest of runs cut
    short: at their limit, or by the campaign's stop), ``isolating_s`` (the rest of the re-runs of
    halves that isolate a failure), ``triage_s`` (work beside the campaign: confirming and reducing
    buckets, the whole of each task) and ``idle_s`` (nothing to run: the draws over, every area
    closed to it). :class:`Clock` measures the waits, :meth:`spent` the worker's calls; ``calls_s``
    is the part of ``harness_s`` in the worker's calls of whole runs beyond the driver's build and
    run (buffers moved into and out of its shared memory, its messages: what a GPU's large
    extensions add there), the rest of ``harness_s`` the waits, which ``waits`` splits by what was
    in flight when each began (:class:`Clock`'s ``why``)."""

    programs: int = 0
    runs: int = 0
    checks: int = 0
    judged: int = 0
    mismatches: int = 0
    driver_s: float = 0.0
    wall_s: float = 0.0
    build_s: float = 0.0
    run_s: float = 0.0
    harness_s: float = 0.0
    timeouts_s: float = 0.0
    isolating_s: float = 0.0
    triage_s: float = 0.0
    idle_s: float = 0.0
    calls_s: float = 0.0  # of harness_s: the worker's calls beyond build and run
    waits: Counter = field(default_factory=Counter)  # of harness_s: the runner's waits by what it waited for (Clock)
    host_s: float = 0.0  # wall seconds the lane's host thread spent handling its events (campaign.pipeline)
    skipped: int = 0  # programs of its backlog it never ran (campaign.feed.BACKLOG)
    statuses: dict[str, int] = field(default_factory=dict)
    kinds: set = field(default_factory=set)
    widened: Counter = field(default_factory=Counter)  # (area, limit): its extensions' sizes (campaign.widening)
    workers: int = 1  # its driver workers (campaign.cores): each has a timeline of ``wall_s``
    together: Counter = field(default_factory=Counter)  # its workers as one target: :class:`Occupancy`'s seconds
    answered_at: float = field(default_factory=time.monotonic)  # when the driver last answered a run (not a timeout)

    TIMELINE = ("build_s", "run_s", "harness_s", "timeouts_s", "isolating_s", "triage_s", "idle_s")
    """The columns of the timeline: they add up to ``worker_s``."""

    @property
    def checks_per_s(self) -> float:
        return self.judged / self.wall_s if self.wall_s else 0.0

    @property
    def worker_s(self) -> float:
        """The wall time of its driver workers together: what the timeline adds up to."""
        return self.workers * self.wall_s

    @classmethod
    def merged(cls, parts: list[TargetStats], wall_s: float) -> TargetStats:
        """One target's counts from those of each of its driver workers (``parts``, campaign.cores),
        each running ``wall_s`` seconds: sums, the kinds seen by any, ``workers`` the number of parts."""
        out = cls(wall_s=wall_s, workers=len(parts), kinds=set().union(*(p.kinds for p in parts)))
        for f in fields(cls):
            if f.name in ("wall_s", "workers", "kinds", "together"):
                continue
            values = [getattr(p, f.name) for p in parts]
            if f.name == "answered_at":
                out.answered_at = max(values)
            elif isinstance(values[0], dict):
                setattr(out, f.name, type(values[0])(sum((Counter(v) for v in values), Counter())))
            else:
                setattr(out, f.name, sum(values))
        return out

    @property
    def busy_s(self) -> float:
        """Seconds the target's worker was running something for the campaign or its triage
        (not waiting for the harness, not idle)."""
        return self.build_s + self.run_s + self.timeouts_s + self.isolating_s + self.triage_s

    @property
    def accounted_s(self) -> float:
        """The timeline's columns added up: ``worker_s`` within the accounting's gaps."""
        return sum(getattr(self, c) for c in self.TIMELINE)

    def spent(self, wall_s: float, build_s: float, run_s: float, how: str) -> None:
        """One worker call of ``wall_s`` seconds of which the driver reported ``build_s`` and
        ``run_s``: a whole run (``how`` "run": the rest is the harness's), ``timeouts``, an
        ``isolating`` run or ``triage`` (the rest is that column's)."""
        self.build_s += build_s
        self.run_s += run_s
        rest = max(0.0, wall_s - build_s - run_s)
        column = "harness_s" if how == "run" else f"{how}_s"
        setattr(self, column, getattr(self, column) + rest)
        if how == "run":
            self.calls_s += rest

    def add(self, outcome: Outcome, whole: bool = True) -> None:
        """Count one run; its status only if it ran a whole part (not a half made to isolate)."""
        self.runs += outcome.runs
        self.checks += outcome.verdict.checks
        self.judged += outcome.verdict.judged
        if outcome.status != "timeout":
            self.answered_at = time.monotonic()
        self.mismatches += outcome.verdict.mismatches
        self.driver_s += outcome.driver_s
        if whole:
            self.statuses[outcome.status] = self.statuses.get(outcome.status, 0) + 1
        for r in outcome.verdict.rows + outcome.failures:
            self.kinds.add((r["kind"], r["operation"], r["src_type"], r["dst_type"]))


class Occupancy:
    """A target's driver workers as one (campaign.cores): each second of the campaign is the target's
    ``working`` while at least one of its workers is in a call (the runner's job: a build and run,
    a timeout, an isolating re-run, triage), else ``harness`` while one waits for the harness (as
    :class:`Clock` counts a wait), else ``idle``; of a GPU shared by several workers, what a farm
    asks: was a call of the driver in progress. Each worker's :class:`Clock` reports its state.
    Thread-safe; times are ``time.monotonic`` readings from ``started``."""

    STATES = ("working", "harness", "idle")

    def __init__(self, workers: int, started: float | None = None) -> None:
        self._lock = threading.Lock()
        self._states = ["harness"] * workers  # starting: the harness's, as the Clock counts it
        self._since = time.monotonic() if started is None else started
        self.seconds: Counter = Counter()

    def mark(self, worker: int, state: str, now: float | None = None) -> None:
        """Worker ``worker`` is now in ``state`` (one of :data:`STATES`)."""
        with self._lock:
            self._settle(time.monotonic() if now is None else now)
            self._states[worker] = state

    def settle(self) -> Counter:
        """The seconds of each state up to now."""
        with self._lock:
            self._settle(time.monotonic())
            return Counter(self.seconds)

    def _settle(self, now: float) -> None:
        if now > self._since:
            self.seconds[next(s for s in self.STATES if s in self._states or s == "idle")] += now - self._since
            self._since = now


class Clock:
    """A target's timeline between its worker's calls (campaign.pipeline): each second its runner
    thread waits for something to run is the harness's (``harness_s``: a program of the target is in
    flight, or its feeder is getting it one) or idle (``idle_s``); before the runner's first wait
    (the campaign's set-up, its worker starting) it is the harness's, after its stop idle. Times
    are ``time.monotonic`` readings from ``started`` (the campaign's start). ``why`` names what the
    target waits for as things stand (campaign.pipeline.Lane.why): each harness wait is added to
    ``stats.waits`` under the name it had when it began (:meth:`settle` when that changes). With
    ``together`` (an :class:`Occupancy` and this worker's place in it), each change of state is
    reported there too."""

    def __init__(self, stats: TargetStats, started: float | None = None,
                 why: Callable[[int], str] | None = None, together: tuple[Occupancy, int] | None = None) -> None:
        self.stats = stats
        self._together = together
        self._why, self._reason = why, "starting"
        self._lock = threading.Lock()
        self._since = time.monotonic() if started is None else started
        self._state = "starting"  # starting, waiting, working, stopped
        self._feeding = True
        self._work = 0

    def waiting(self, wait: bool) -> None:
        """The runner begins (True) or ends (False) a wait for its next item."""
        self._mark(state="waiting" if wait else "working")

    def feeding(self, active: bool) -> None:
        """The target's feeder begins (True) or ends (False) getting it programs (it ends while it
        waits for a program another target may draw, and once the draws are over)."""
        self._mark(feeding=active)

    def work(self, delta: int) -> None:
        """A program of the target submitted (+1) or finished (-1)."""
        self._mark(work=delta)

    def stop(self) -> None:
        """The runner has stopped: the rest of the wall time is idle."""
        self._mark(state="stopped")

    def settle(self) -> None:
        """Account the time up to now (before the stats are read)."""
        self._mark()

    def spent(self, wall_s: float, build_s: float, run_s: float, how: str) -> None:
        """:meth:`TargetStats.spent`, under the lock of the waits' accounting (both add to the harness)."""
        with self._lock:
            self.stats.spent(wall_s, build_s, run_s, how)

    def _mark(self, state: str | None = None, feeding: bool | None = None, work: int = 0) -> None:
        with self._lock:
            now = time.monotonic()
            if self._state != "working" and now > self._since:
                harness = self._for_harness()
                column = "harness_s" if harness else "idle_s"
                setattr(self.stats, column, getattr(self.stats, column) + now - self._since)
                if harness:
                    self.stats.waits[self._reason] += now - self._since
            self._since = now
            if state is not None and self._state != "stopped":
                self._state = state
            if feeding is not None:
                self._feeding = feeding
            self._work += work
            if self._state == "waiting":
                self._reason = self._why(self._work) if self._why and self._work else "draw"
            if self._together is not None:
                occupancy, worker = self._together
                state = "working" if self._state == "working" else "harness" if self._for_harness() else "idle"
                occupancy.mark(worker, state, now)

    def _for_harness(self) -> bool:
        """Whether a wait now is the harness's (the class docstring), not idle."""
        return self._state == "starting" or (self._state == "waiting" and (self._feeding or self._work > 0))


@dataclass
class PoolStats:
    """The harness's CPU seconds in a campaign (campaign.pool): ``jobs`` worker processes (0: the
    campaign's own process ran the tasks), per owner (a target; "" for programs a resumed run
    took up) and kind of task (draw, expect, judge) its CPU seconds and tasks, and the campaign
    process's own CPU seconds (its threads: scheduling, the corpus, the lanes; with ``jobs`` 0 the
    tasks too)."""

    jobs: int = 0
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)
    tasks: dict[str, dict[str, int]] = field(default_factory=dict)
    process_cpu_s: float = 0.0


@dataclass
class CampaignResult:
    name: str
    seed: int
    programs: int
    wall_s: float
    targets: dict[str, TargetStats]
    interrupted: bool = False
    unrun: dict[str, int] = field(default_factory=dict)  # per area not dropped, programs drawn that no target
    # here takes: the areas draw within what any target can take (campaign.caps), a program may need more than one has
    pending: int = 0  # programs left queued or running at the stop: a resumed run runs them first
    notices: list[str] = field(default_factory=list)  # one line each: areas dropped, ...
    pool: PoolStats = field(default_factory=PoolStats)  # the harness's CPU seconds


@dataclass
class AreaView:
    """One area as the live display shows it."""

    programs: int
    share: float
    find_rate: float
    seconds: float
    cells: int
    budget: Budget


@dataclass
class Progress:
    """A snapshot of a running campaign for the live display (app.cli)."""

    programs: int
    elapsed: float
    targets: dict[str, TargetStats]
    areas: dict[str, AreaView]
    new_buckets: list[dict]  # buckets first seen in this run, newest first (id, title)
    bucket_count: int
    notices: list[str] = field(default_factory=list)
