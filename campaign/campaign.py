"""The campaign loop: generate, store, run on every target at once, judge, record, display.

A producer thread draws programs from the Hypothesis strategies of the campaign's areas
(:mod:`fuzz.strategies.areas`); the scheduler (:mod:`campaign.scheduler`) picks the area of each program
within its budgets, and program ``i`` of an area is reproducible from the seed, ``i`` and the
policy (:mod:`fuzz.strategies.draws`). Each program is written to the corpus *before* it runs, with the
oracle's expectations computed on the producer's thread; the main thread hands each program to
the lane of every target that supports it (:mod:`campaign.pipeline`: each target's worker is its own
process, kept busy while the lane judges and records the verdicts), so generation, the oracle,
judging and every driver run at the same time. A time budget, a program limit, spent area
budgets or Ctrl-C stop it; every write is a transaction, so the corpus is consistent whenever the
process stops.

A campaign has a name. Its settings (seed, areas, policy, budgets: :mod:`campaign.settings`) and
its state (where each area's stream of draws stands, the scheduler's counts) live in the corpus's
``campaigns`` row, updated after every program: running the same name again resumes, first
running the programs an interruption left stored but unrun, then continuing each area's stream
where it stopped.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import replace
from functools import partial
from typing import Callable, Iterator

import numpy as np

from campaign import record
from campaign.batching import batch_for
from campaign.caps import capabilities
from campaign.execute import Outcome
from campaign.expectations import Expectations
from campaign.pipeline import Lane
from campaign.progress import AreaView, CampaignResult, Progress, TargetStats
from campaign.scheduler import Budget, Scheduler
from campaign.settings import CampaignError, Settings, check_areas, check_resumable
from campaign.targeted import Search
from corpus.coverage import coverage, program_cells
from corpus.hypothesis_db import CorpusDatabase
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from fuzz.drivers.capabilities import ftz_of, supports
from fuzz.strategies.areas import AREAS
from fuzz.strategies.draws import Draws
from lang.ir import Program
from lang.policy import Policy


def _produce(draws: dict[str, Draws], searches: dict, plan: "_Plan", corpus: Corpus, name: str,
             ftz_classes: set, out: queue.Queue, stop: threading.Event) -> None:
    """Draw programs until ``stop`` or until every area has spent its budget (the plan says which
    area, and which index of its stream), store each, pair it with its expectations (computed
    here, off the drivers' critical path, for every flush-to-zero class in use)."""
    try:
        for area, program in plan.programs(draws, searches):
            if stop.is_set():
                return
            record.store_program(corpus, program, name)
            expectations = Expectations(program)
            for ftz in ftz_classes:
                expectations.get(ftz)
            if not _offer(out, (area, program, expectations), stop):
                return
    except BaseException as e:  # surface generator bugs in the main thread
        _offer(out, e, stop)
    finally:
        _offer(out, None, stop)


def _offer(out: queue.Queue, item, stop: threading.Event) -> bool:
    """Put ``item`` once there is room; False if the campaign stopped first."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.2)
            return True
        except queue.Full:
            continue
    return False


def error_score(outcomes) -> float:
    """The largest numerical error the targets made on a program, in units of the bound the spec
    allows for it (the judge's per-statement largest errors in ulps, OpenCL C 3.0 §7.4; a bound of
    a correctly rounded result counts as half an ulp): what the math area's search maximises."""
    ratios = [e["ulps"] / e["limit"] for o in outcomes for e in o.verdict.errors
              if e.get("limit") and e["limit"] > 0 and e["ulps"] == e["ulps"]]
    return max(ratios, default=0.0)


class _Plan:
    """The campaign's order of programs and what it has learnt: stored programs that never ran
    (an interrupted run) come first, then the scheduler's picks; each finished program tells the
    scheduler whether it found a new disagreement kind or coverage cell (campaign.scheduler)."""

    def __init__(self, scheduler: Scheduler, unfinished: list[tuple[str, Program]], seen: set,
                 shares: dict[str, float] | None = None, seed: int = 0) -> None:
        self.scheduler, self.unfinished, self.seen = scheduler, unfinished, seen
        self.cells: dict[str, set] = {a: set() for a in scheduler.areas}
        self.generated = {key[2:] for key in seen if key[0] == "cell"}  # cells the campaign has drawn
        self.pending: set[str] = set()  # handed out, not yet finished everywhere: run first on resume
        self.lock = threading.Lock()
        self.shares = shares or {}  # per area: the share of programs from its targeted search
        self.from_search: dict[str, Search] = {}  # programs a feedback search waits to hear about
        self._rng = np.random.default_rng([seed, len(seen)])

    def novelty(self, program: Program) -> int:
        """Cells ``program`` uses that the campaign has not drawn yet: the coverage gap it would
        close (the targeted searches' score, campaign.targeted)."""
        with self.lock:
            return len(program_cells(program).keys() - self.generated)

    def programs(self, draws: dict[str, Draws], searches: dict[str, Search]) -> Iterator[tuple[str, Program]]:
        for area, program in self.unfinished:
            with self.lock:
                self.pending.add(program.id)
            yield area, program
        while True:
            with self.lock:
                area = self.scheduler.pick()
                if area is None:
                    return
                searched = area in searches and self._rng.random() < self.shares.get(area, 0.0)
            program = searches[area].next() if searched else None
            with self.lock:
                if program is not None:
                    self.scheduler.searched(area)
                    if searches[area].feedback:
                        self.from_search[program.id] = searches[area]
                else:
                    program = draws[area][self.scheduler.take(area)]
                self.generated |= program_cells(program).keys()
                self.pending.add(program.id)
            yield area, program

    def finished(self, area: str, program: Program, results: dict[str, list[Outcome]]) -> None:
        """``program`` of ``area`` has run everywhere it was sent: ``results`` per target."""
        cells = program_cells(program)
        found = False
        seconds = 0.0
        with self.lock:
            self.pending.discard(program.id)
            for target, outcomes in results.items():
                seconds += sum(o.driver_s for o in outcomes)
                keys = {("row", target, r["kind"], r["operation"], r["src_type"], r["dst_type"], r.get("input_class"))
                        for o in outcomes for r in o.verdict.rows + o.failures}
                if any(o.status == "ok" for o in outcomes):
                    keys |= {("cell", target, *c) for c in cells}
                    self.cells.setdefault(area, set()).update(cells)
                found |= not keys <= self.seen
                self.seen |= keys
            if area in self.scheduler.state:
                self.scheduler.observe(area, found, seconds / max(len(results), 1))
            search = self.from_search.pop(program.id, None)
        if search is not None:
            search.observed(program.id, error_score(o for outcomes in results.values() for o in outcomes))

    def untaken(self, area: str, program: Program) -> None:
        """No target took ``program`` of ``area``."""
        with self.lock:
            self.pending.discard(program.id)
            if area in self.scheduler.state:
                self.scheduler.untaken(area)
            search = self.from_search.pop(program.id, None)
        if search is not None:
            search.observed(program.id, 0.0)

    def state(self) -> dict:
        """What the corpus keeps to resume: the scheduler's state and the programs in flight."""
        with self.lock:
            return {**self.scheduler.to_state(), "pending": sorted(self.pending)}

    def view(self) -> dict[str, AreaView]:
        with self.lock:
            share = self.scheduler.share()
            return {a: AreaView(s.programs, share[a], (1 + s.finds) / (2 + s.finds + s.misses), s.seconds,
                                len(self.cells.get(a, ())), self.scheduler.budgets.get(a, Budget()))
                    for a, s in self.scheduler.state.items()}


def _history(corpus: Corpus, name: str, state: dict) -> tuple[list[tuple[str, Program]], set]:
    """A resumed campaign's programs that were handed out but never finished (an interrupted run;
    ``pending`` in its state), and what it had already found (disagreement kinds and covered cells,
    per target: _Plan.finished's keys)."""
    pending = state.get("pending", [])
    unfinished = [(r["area"], Program.from_json(r["json"])) for r in corpus.query(
        f"select area, json from programs where id in ({','.join('?' * len(pending))}) order by created",
        pending)] if pending else []
    seen = {("row", r["target"], r["kind"], r["operation"], r["src_type"], r["dst_type"], r["input_class"])
            for r in corpus.query("""select distinct target, kind, operation, src_type, dst_type, input_class
                                     from disagreements where campaign = ?""", [name])}
    for target, cov in coverage(corpus, name).items():
        seen |= {("cell", target, c, ty, w) for c, ty, w, _ in cov["cells"]}
    return unfinished, seen


def run_campaign(
    corpus: Corpus,
    targets: list[Target],
    *,
    minutes: float,
    seed: int = 0,
    areas: tuple[str, ...] = tuple(AREAS),
    policy: Policy = Policy(),
    budgets: dict[str, Budget] | None = None,
    name: str | None = None,
    timeout_s: float = 60.0,
    max_programs: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> CampaignResult:
    """Run the campaign ``name`` for ``minutes`` (or ``max_programs``, or until every area's
    budget is spent); a campaign the corpus already holds resumes (module docstring)."""
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
    draws = {a: Draws(AREAS[a](caps, run_policy), seed) for a in areas}
    record.register_targets(corpus, targets)
    settings_row = {**settings.to_row(), "targets": [t.name for t in targets], "timeout_s": timeout_s}
    unfinished, seen = _history(corpus, name, stored["state"]) if stored else ([], set())
    shares = {a: policy.p_targeted_error if a == "math" else policy.p_targeted for a in areas}
    plan = _Plan(Scheduler(tuple(areas), settings.budgets, stored["state"] if stored else None, seed),
                 unfinished, seen, shares, seed)
    # the math area's search climbs toward larger observed errors (score reported after the run);
    # the others toward coverage gaps (scored when drawn): campaign.targeted
    searches = {a: Search(AREAS[a](caps, run_policy), CorpusDatabase(corpus, f"{name}/{a}"),
                          None if a == "math" else plan.novelty, a) for a in areas if shares[a] > 0}
    done_before = stored["programs"] if stored else 0
    record.save_campaign(corpus, name, seed, settings_row, done_before, stored["checks"] if stored else 0,
                         plan.state())

    stats = {t.name: TargetStats() for t in targets}
    items: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()
    ftz_classes = {ftz_of(t) for t in targets}
    producer = threading.Thread(target=_produce, args=(draws, searches, plan, corpus, name, ftz_classes, items, stop),
                                daemon=True)
    deadline = time.monotonic() + minutes * 60
    start = time.monotonic()
    started_at = time.time()
    submitted = 0
    finished = _Counter()
    interrupted = False
    # each lane opens its device while the first program is generated
    lanes = {t.name: Lane(t, Worker(t, timeout_s=timeout_s), corpus, name,
                          _recorder(stats[t.name], start)) for t in targets}
    buckets = _BucketWatch(corpus, started_at)

    def save() -> None:
        checks = (stored["checks"] if stored else 0) + sum(s.judged for s in stats.values())
        record.save_campaign(corpus, name, seed, settings_row, done_before + finished.value, checks, plan.state())

    def report() -> None:
        save()
        if on_progress:
            recent, count = buckets.poll()
            on_progress(Progress(finished.value, time.monotonic() - start, stats, plan.view(), recent, count))

    producer.start()
    try:
        while time.monotonic() < deadline and (max_programs is None or submitted < max_programs):
            item = items.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            area, program, exp = item
            chosen = [t.name for t in targets if supports(t, program)]
            if not chosen:
                plan.untaken(area, program)
            done = finished.after(chosen, partial(plan.finished, area, program))
            for t in chosen:
                lanes[t].submit(program, exp, partial(_finish, stats[t], t, done))
            submitted += 1
            report()
        stop.set()
        for lane in lanes.values():
            lane.drain()
        report()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stop.set()
        for lane in lanes.values():
            lane.close()
        for search in searches.values():
            search.close()
        producer.join(timeout=5)
        save()  # what is still pending after the stop runs first on resume
    return CampaignResult(name, seed, finished.value, time.monotonic() - start, stats, interrupted)


class _BucketWatch:
    """The buckets a running campaign has opened, asked of the corpus at most once a second."""

    def __init__(self, corpus: Corpus, since: float) -> None:
        self.corpus, self.since = corpus, since
        self._last, self._value = 0.0, ([], 0)

    def poll(self) -> tuple[list[dict], int]:
        if time.monotonic() - self._last >= 1.0:
            self._last = time.monotonic()
            rows = self.corpus.query("select id, title from buckets where created >= ? order by created desc",
                                     [self.since])
            self._value = (rows[:5], len(rows))
        return self._value


class _Counter:
    """Programs that every chosen target has finished (counted from the lanes' threads)."""

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def after(self, targets: list[str], then: Callable[[dict[str, list[Outcome]]], None]
              ) -> Callable[[str, list[Outcome]], None]:
        """A callback for each of ``targets``; once all have called it, the program is counted
        and ``then`` gets every target's outcomes."""
        results: dict[str, list[Outcome]] = {}

        def done(target: str, outcomes: list[Outcome]) -> None:
            with self._lock:
                results[target] = outcomes
                complete = len(results) == len(targets)
                if complete:
                    self.value += 1
            if complete:
                then(results)

        if not targets:  # no target takes it: nothing to wait for
            with self._lock:
                self.value += 1
        return done


def _finish(stats: TargetStats, target: str, done: Callable[[str, list[Outcome]], None],
            outcomes: list[Outcome]) -> None:
    stats.programs += 1
    done(target, outcomes)


def _recorder(stats: TargetStats, start: float) -> Callable[[Outcome, bool], None]:
    def record(outcome: Outcome, whole: bool) -> None:
        stats.add(outcome, whole)
        stats.wall_s = time.monotonic() - start

    return record
