"""The campaign loop: every target at its own pace, triage beside it, ended when it is told.

Each target has a *feeder* thread and a lane (:mod:`campaign.pipeline`: its worker process, kept
busy while the lane judges and records the verdicts) for each of its driver workers (one, or more
for a GPU on a machine with cores to spare: :mod:`campaign.cores`). The feeder asks
:mod:`campaign.feed` for the target's next program (a program another target found interesting, one
of its backlog, or a fresh draw of the area the scheduler, :mod:`campaign.scheduler`, picks for
that target), so no target waits for another. Each area's first programs sweep its corner table
(:mod:`fuzz.strategies.sweeps`, every target runs them; the state keeps how far the sweep went, so
a resumed campaign does not repeat it), then program ``i`` of an area is reproducible from the
seed, ``i`` and the policy (:mod:`fuzz.strategies.draws`); each is written to the corpus *before*
anything runs it. While a target's triage time is under its share of the campaign's time so far,
its feeder runs the work beside the campaign that the caller gives (``side``: triage.beside
confirms and reduces the buckets of that target's driver) on the same worker, so triage shares the
drivers' time (a target the campaign keeps busy gives triage that share of its busy time; one that
waits for programs, as a fast simulator does, gives its idle time instead), never in a block that
leaves it twice campaign.feed.QUIET_S without a run answered. In the campaign's
*closing* stretch (its last :data:`CLOSING` of the time, at most :data:`CLOSING_MAX_S`) the share
is lifted: a target with buckets waiting triages them first and runs programs only when none waits,
so the buckets found near the end are reduced within the campaign as well.

A campaign ends at its deadline (``minutes`` after ``started``), at ``max_programs`` drawn, when
every area's budget is spent (the targets then run what is left in their backlogs), or on Ctrl-C.
At the deadline nothing is waited for: runs in flight are killed with their workers, and their
programs, like every program still queued, are *pending* in the campaign's state and run first on
resume. Every write is a transaction, so the corpus is consistent whenever the process stops.

A campaign has a name. Its settings (seed, areas, policy, budgets: :mod:`campaign.settings`) and
its state (where each area's stream of draws stands, the scheduler's counts) live in the corpus's
``campaigns`` row, updated after every program: running the same name again resumes, first
running the programs an interruption left stored but unrun, then continuing each area's stream
where it stopped.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import Callable

import numpy as np

from campaign import record
from campaign.batching import batch_for
from campaign.caps import capabilities
from campaign.cores import default_jobs, default_workers
from campaign.execute import Outcome
from campaign.feed import QUIET_S, Entry, Feed
from campaign.learned import Learned
from campaign.pipeline import Lane, LaneClosed
from campaign.widening import Widths
from campaign.pool import Harness
from campaign.progress import AreaView, CampaignResult, Occupancy, PoolStats, Progress, TargetStats
from campaign.scheduler import Budget, Scheduler
from campaign.settings import CampaignError, Settings, check_areas, check_resumable
from campaign.targeted import Search
from campaign.timeouts import Timeouts
from corpus.bucket_queries import bucket_ids, buckets_created_since
from corpus.coverage import coverage, program_cells
from corpus.hypothesis_db import CorpusDatabase
from corpus.reads import programs_by_id
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from fuzz.drivers.capabilities import ftz_of
from fuzz.strategies import AREAS, DEFAULT_AREAS, sweep_key_of, sweep_plan
from lang.flow import program_from_json
from lang.ir import Program
from lang.policy import Policy


def error_score(outcomes) -> float:
    """The largest numerical error the targets made on a program, in units of the bound the spec
    allows for it (the judge's per-statement largest errors in ulps, OpenCL C 3.0 §7.4; a bound of
    a correctly rounded result counts as half an ulp): what the math area's search maximises."""
    ratios = [e["ulps"] / e["limit"] for o in outcomes for e in o.verdict.errors
              if e.get("limit") and e["limit"] > 0 and e["ulps"] == e["ulps"]]
    return max(ratios, default=0.0)


SideTask = Callable[[Lane, float, float], None]
"""Work beside the campaign on one target (triage: confirm and reduce a bucket): called with the
target's lane (its ``beside`` runs the work on the worker the campaign's runs use), the seconds
it may take (what the campaign's deadline and the target's triage share leave) and the seconds of
the target's triage share left (its share of the campaign's time so far less the triage time
spent; in the closing stretch, to the deadline)."""


class _Drawer:
    """Draws the campaign's programs: each area's stream, or its targeted search (campaign.targeted)
    for its share of the programs; remembers the coverage cells drawn and run (the searches' score
    and the display's cells). Called under the feed's lock."""

    def __init__(self, harness: Harness, searches: dict[str, Search], scheduler: Scheduler,
                 shares: dict[str, float], seed: int, seen_cells: set,
                 sweeps: dict[str, tuple[str, list[Program]]] | None = None) -> None:
        self.harness, self.searches, self.scheduler, self.shares = harness, searches, scheduler, shares
        self.sweeps = sweeps or {}  # per area: its corner sweep's key and programs, handed out first
        self._swept: set[str] = set()  # ids of the sweep programs handed out: every target runs them first
        self.generated = set(seen_cells)  # cells the campaign has drawn
        self.cells: dict[str, set] = {a: set() for a in scheduler.areas}  # cells run, per area
        self.from_search: dict[str, Search] = {}  # programs a feedback search waits to hear about
        self._rng = np.random.default_rng([seed, sum(s.next for s in scheduler.state.values())])
        self._lock = threading.Lock()

    def novelty(self, program: Program) -> int:
        """Cells ``program`` uses that the campaign has not drawn yet: the coverage gap it would
        close (the targeted searches' score, campaign.targeted)."""
        with self._lock:
            return len(program_cells(program).keys() - self.generated)

    def draw(self, area: str, owner: str, sweeping: bool = True) -> Program | Future:
        """The program ``owner`` draws of ``area`` (under the feed's lock): a sweep's (where
        ``sweeping``: campaign.feed), a search's, or a Future of the next of the area's stream (the
        harness draws it: campaign.pool)."""
        key, sweep = self.sweeps.get(area, ("", []))
        index = self.scheduler.sweeping(area, key, len(sweep)) if sweep and sweeping else None
        if index is not None:  # corners first (fuzz.strategies.sweeps)
            self._swept.add(sweep[index].id)
            return sweep[index]
        searched = area in self.searches and self._rng.random() < self.shares.get(area, 0.0)
        program = self.searches[area].next() if searched else None
        if program is None:
            return self.harness.draw(area, self.scheduler.take(area), owner)
        self.scheduler.searched(area)
        if self.searches[area].feedback:
            self.from_search[program.id] = self.searches[area]
        return program

    def everywhere(self, program: Program) -> bool:
        """Whether ``program`` is a corner-sweep program this drawer handed out: every target runs it
        before its other programs, and no backlog drops it (campaign.feed)."""
        return program.id in self._swept

    def drawn(self, program: Program) -> None:
        """A program drawn: its cells count as generated."""
        with self._lock:
            self.generated |= program_cells(program).keys()

    def first_run(self, area: str, program: Program, target: str, outcomes: list[Outcome]) -> None:
        """The first target finished ``program``: its cells count as covered, its search hears
        its score."""
        if any(o.status == "ok" for o in outcomes):
            with self._lock:
                self.cells.setdefault(area, set()).update(program_cells(program))
        search = self.from_search.pop(program.id, None)
        if search is not None:
            search.observed(program.id, error_score(outcomes))


def _history(corpus: Corpus, name: str, state: dict) -> tuple[list[tuple[str, Program, list[str] | None]], set]:
    """A resumed campaign's programs that an interruption left running or unrun (``pending`` in
    its state: program id -> the targets still to run it; a list of ids from older corpora: every
    target), and the coverage cells it had drawn."""
    pending = state.get("pending") or {}
    if isinstance(pending, list):
        pending = dict.fromkeys(pending)
    unfinished = [(r["area"], program_from_json(r["json"]), pending[r["id"]])
                  for r in programs_by_id(corpus, pending)]
    cells = {(c, ty, w) for cov in coverage(corpus, name).values() for c, ty, w, _ in cov["cells"]}
    return unfinished, cells


def run_campaign(
    corpus: Corpus,
    targets: list[Target],
    *,
    minutes: float,
    seed: int = 0,
    areas: tuple[str, ...] = DEFAULT_AREAS,
    policy: Policy = Policy(),
    budgets: dict[str, Budget] | None = None,
    name: str | None = None,
    timeout_s: float = 60.0,
    max_programs: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    side: Callable[[Target], SideTask | None] | None = None,
    side_share: float = 0.25,
    started: float | None = None,
    jobs: int | None = None,
    workers: int | None = None,
) -> CampaignResult:
    """Run the campaign ``name`` until ``minutes`` after ``started`` (a ``time.monotonic()``
    reading; default now), ``max_programs`` drawn, or every area's budget spent; a campaign the
    corpus already holds resumes (module docstring). ``side`` gives each target's work beside
    the campaign (triage), which takes up to ``side_share`` of the campaign's time on each target
    and what it needs in the closing stretch (:func:`closing_s`).
    ``jobs`` harness worker processes draw, compute expectations and judge (campaign.pool; None:
    :func:`campaign.cores.default_jobs`, 0: this process's threads); each target has ``workers``
    driver workers (None: :func:`campaign.cores.default_workers`), each a lane of its own that
    triages within its share of its own time."""
    start = time.monotonic() if started is None else started
    cpu0 = time.process_time()
    deadline = start + minutes * 60
    check_areas(areas)
    if not targets:
        raise CampaignError("no OpenCL target selected: `clfuzz drivers` lists what was found")
    name = name or f"campaign-{seed}"
    settings = Settings(seed, tuple(areas), policy, dict(budgets or {}))
    stored = corpus.campaign(name)
    if stored:
        check_resumable(corpus, stored, settings)
    caps = capabilities(targets)
    # no target uses more work-items than its batch: do not generate (or judge) more than that
    run_policy = replace(policy, global_size=min(policy.global_size, max(batch_for(t).global_size for t in targets)))
    record.register_targets(corpus, targets)
    count = default_workers(targets) if workers is None else {t.name: max(1, workers) for t in targets}
    harness = Harness(default_jobs(sum(count.values())) if jobs is None else jobs, targets, (caps, run_policy, seed))
    parts = {t.name: [TargetStats() for _ in range(count[t.name])] for t in targets}  # per driver worker
    stats = {t.name: TargetStats.merged(parts[t.name], 0.0) for t in targets}
    # programs in flight per lane: two ready beside the one running and the one being judged, or
    # its share of the pool busy where that is more (without a pool the feeder's own draws and
    # expectations take seconds of wall time on a machine its drivers share: docs/campaigns.md)
    depth = 2 + max(2, -(-harness.jobs // sum(count.values())))
    # each lane opens its device (its worker starts) while the corners are planned; a target's lanes
    # share what they learn of its timeouts and slow classes, and its part of the pool (its extensions'
    # size: campaign.widening)
    shared = {t.name: (Timeouts(timeout_s), Learned()) for t in targets}
    together = {t.name: Occupancy(count[t.name], start) for t in targets}  # its workers as one target
    lanes = {t.name: [Lane(t, Worker(t, timeout_s=timeout_s), corpus, name, part, shared[t.name][0], depth,
                           harness=harness, started=start, learned=shared[t.name][1], together=(together[t.name], i),
                           widths=Widths(partial(_pool_part, harness, t.name, count[t.name]),
                                         t.fingerprint.get("max_mem_alloc_size", 0), part.widened))
                      for i, part in enumerate(parts[t.name])]
             for t in targets}
    every = [lane for of_target in lanes.values() for lane in of_target]
    try:
        settings_row = {**settings.to_row(), "targets": [t.name for t in targets], "timeout_s": timeout_s}
        unfinished, cells = _history(corpus, name, stored["state"]) if stored else ([], set())
        shares = {a: policy.p_targeted_error if a == "math" else policy.p_targeted for a in areas}
        plans = {a: sweep_plan(a, caps, run_policy) for a in areas} if policy.corner_sweep else {}
        sweeps = {a: (sweep_key_of(a, [p for _, p in plan]), [p for _, p in plan]) for a, plan in plans.items()}
        scheduler = Scheduler(tuple(areas), settings.budgets, stored["state"] if stored else None, seed,
                              targets=tuple(t.name for t in targets), floor=policy.area_floor,
                              sweeps={a: (sweeps[a][0], tuple(k for k, _ in plan)) for a, plan in plans.items()})
        drawer = _Drawer(harness, {}, scheduler, shares, seed, cells, sweeps)
        # the math area's search climbs toward larger observed errors (score reported after the run);
        # the others toward coverage gaps (scored when drawn): campaign.targeted
        drawer.searches.update({a: Search(AREAS[a](caps, run_policy), CorpusDatabase(corpus, f"{name}/{a}"),
                                          None if a == "math" else drawer.novelty, a) for a in areas if shares[a] > 0})
        ftz = {t.name: ftz_of(t) for t in targets}

        def expect(program: Program, owner: str) -> Future:
            """The drawing target's class now; each other class when a target of it takes the program
            (campaign.pool.Harness.complete: most programs of a fast target run on it alone)."""
            return harness.expect(program, (ftz[owner],) if owner in ftz else (), owner)

        def drawn(program: Program) -> None:
            drawer.drawn(program)
            record.store_program(corpus, program, name)  # in the corpus before anything runs it

        known = bucket_ids(corpus)
        feed = Feed(targets, scheduler, drawer.draw, expect, known, unfinished, max_programs, drawer.first_run,
                    everywhere=drawer.everywhere, drawn=drawn)
        done_before = stored["programs"] if stored else 0

        running: dict[str, list[str]] | None = None  # after the stop: the parts each lane left unfinished

        def state() -> dict:
            return {**scheduler.to_state(), "pending": feed.pending(running)}

        record.save_campaign(corpus, name, seed, settings_row, done_before, stored["checks"] if stored else 0, state())
        stop = threading.Event()
        started_at = time.time()
        interrupted = False
        notices: list[str] = []
        errors: list[BaseException] = []
        feeders = [threading.Thread(target=_feed, args=(lane, feed, stop, side, side_share, start,
                                                       deadline - closing_s(minutes), deadline, errors),
                                    name=f"{t.name}-feeder-{k}", daemon=True)
                   for t in targets for k, lane in enumerate(lanes[t.name])]
        buckets = _BucketWatch(corpus, started_at)
    except BaseException:  # nothing ran: the lanes' workers and the harness's processes stop with the set-up
        for lane in every:
            lane.close()
        harness.close()
        raise

    def save() -> None:
        checks = (stored["checks"] if stored else 0) + sum(s.judged for s in stats.values())
        with feed.lock:
            programs = feed.programs
        record.save_campaign(corpus, name, seed, settings_row, done_before + programs, checks, state())

    def report() -> None:
        elapsed = time.monotonic() - start
        for t in stats:
            for lane in lanes[t]:
                lane.clock.settle()
            stats[t] = TargetStats.merged(parts[t], elapsed)
            stats[t].skipped = feed.skipped[t]
            stats[t].together = together[t].settle()
        with feed.lock:
            lines = [f"area {a}: no target of this run takes its programs; dropped" for a in areas if scheduler.dropped(a)]
            lines += [f"{t}: its corner sweep trickles from {since - start:.0f} s on ({why})"
                      for t, (since, why) in feed.trickle.items()]
            notices.extend(line for line in lines if line not in notices)
        save()
        if on_progress:
            recent, count = buckets.poll()
            on_progress(Progress(feed.programs, elapsed, stats, _view(scheduler, drawer), recent, count, notices))

    for f in feeders:
        f.start()
    try:
        while time.monotonic() < deadline:
            if errors:
                raise errors[0]
            if not any(f.is_alive() for f in feeders) and all(lane.idle() for lane in every):
                break  # the draws are over and every target has run its backlog
            time.sleep(min(0.25, max(0.0, deadline - time.monotonic())))
            report()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stop.set()
        closing = [threading.Thread(target=lane.close) for lane in every]  # all at once: each
        for c in closing:  # may wait half a second before it kills its worker's run
            c.start()
        for c in closing:
            c.join()
        running = {t: sorted({p for lane in of_target for p in lane.unfinished()})  # killed runs stay pending
                   for t, of_target in lanes.items()}
        harness.close()  # a feeder waiting for a draw or expectations gets its cancellation
        until = time.monotonic() + 2.0
        for f in feeders:  # a feeder drawing a program finishes it (daemon threads: never waited for long)
            f.join(timeout=max(0.0, until - time.monotonic()))
        for search in drawer.searches.values():
            search.close()
        report()  # the stop's state: what is still pending runs first on resume
    return CampaignResult(name, seed, feed.programs, time.monotonic() - start, stats, interrupted,
                          unrun={a: n for a, n in feed.unrun.items() if not scheduler.dropped(a)},  # a dropped area's: its notice
                          pending=len(feed.pending(running)), notices=notices,
                          pool=PoolStats(harness.jobs, harness.cpu, harness.tasks, time.process_time() - cpu0))


def _pool_part(harness: Harness, target: str, workers: int) -> float:
    """The worker processes of the harness's pool one of ``target``'s ``workers`` lanes can count on
    now (campaign.pool.Harness.share)."""
    return harness.share(target) / workers


SIDE_CHECK_S = 2.0
"""How often a target with nothing to do beside the campaign asks again."""

MIN_TASK_S = 5.0
"""The triage share a target must have left to start a task beside the campaign (a task is held
to what is left: a PoCL run of a reduced case takes 1 to 3 s)."""

CLOSING = 0.1
"""The share of a campaign's time at its end in which triage is not held to its share."""

CLOSING_MAX_S = 30.0
"""The closing stretch's length at most: a long campaign's triage keeps up by its share, and a
target runs programs in every minute where triage leaves it time."""


def triage_hold(now: float, closing: float, deadline: float, left: float, quiet: float) -> float:
    """The seconds a triage task may take on a target at ``now``, whose triage share has ``left``
    seconds (to the ``deadline`` from ``closing`` on) and whose driver answered no run (only
    timeouts, or nothing) for ``quiet`` seconds: before ``closing``, none once that is
    campaign.feed.QUIET_S, and held so that it is not twice that. Triage's share is its share,
    not a block of it: PoCL 5.0 judged no lane in a whole minute while it triaged a crash."""
    if now >= closing:
        return left
    if quiet >= QUIET_S:
        return 0.0
    return min(left, deadline - now, 2 * QUIET_S - quiet)


def closing_s(minutes: float) -> float:
    """The seconds at the end of a ``minutes``-long campaign in which triage is not held to its
    share (module docstring)."""
    return min(CLOSING * minutes * 60, CLOSING_MAX_S)


def _feed(lane: Lane, feed: Feed, stop: threading.Event, side: Callable[[Target], SideTask | None] | None,
          share: float, start: float, closing: float, deadline: float, errors: list[BaseException]) -> None:
    """One target's feeder thread: work beside the campaign while it is under its share of the
    campaign's time since ``start`` by :data:`MIN_TASK_S` (from ``closing`` on, whenever there is
    some), held to the share it has left and by campaign.feed.QUIET_S (:func:`triage_hold`), else
    the target's next program (campaign.feed) once the lane takes one (while it waits, work beside
    the campaign may come), until the stop or the end of the draws."""
    target, stats = lane.target, lane.stats
    asked = -SIDE_CHECK_S
    try:
        while not stop.is_set():
            lane.clock.feeding(True)
            now = time.monotonic()
            left = share * (now - start) - stats.triage_s if now < closing else deadline - now
            hold = triage_hold(now, closing, deadline, left, now - stats.answered_at)
            if side is not None and hold >= MIN_TASK_S and now - asked > SIDE_CHECK_S:
                task = side(target)
                if task is None:
                    asked = time.monotonic()
                else:
                    task(lane, hold, left)
                    continue
            if not lane.ready(SIDE_CHECK_S):  # its programs in flight: a slow target's runs take long
                continue
            entry = feed.next_for(target, stop, lane.clock.feeding)
            if entry is None:
                return
            expectations = lane.harness.complete(entry.expectations, ftz_of(target), target.name)
            lane.submit(entry.program, expectations, partial(_finished, feed, lane, entry))
    except LaneClosed:
        return
    except BaseException as e:  # a bug of ours: surfaced on the campaign's thread
        if not stop.is_set():
            errors.append(e)
    finally:
        lane.clock.feeding(False)


def _finished(feed: Feed, lane: Lane, entry: Entry, outcomes: list[Outcome]) -> None:
    lane.stats.programs += 1
    feed.finished(lane.target, entry, outcomes)


def _view(scheduler: Scheduler, drawer: _Drawer) -> dict[str, AreaView]:
    share = scheduler.share()
    return {a: AreaView(s.programs, share[a], (1 + s.finds) / (2 + s.finds + s.misses), s.seconds,
                        len(drawer.cells.get(a, ())), scheduler.budgets.get(a, Budget()))
            for a, s in scheduler.state.items()}


class _BucketWatch:
    """The buckets a running campaign has opened, asked of the corpus at most once a second."""

    def __init__(self, corpus: Corpus, since: float) -> None:
        self.corpus, self.since = corpus, since
        self._last, self._value = 0.0, ([], 0)

    def poll(self) -> tuple[list[dict], int]:
        if time.monotonic() - self._last >= 1.0:
            self._last = time.monotonic()
            rows = buckets_created_since(self.corpus, self.since)
            self._value = (rows[:5], len(rows))
        return self._value


