"""The campaign loop: generate, store, run on every target at once, judge, record, display.

A producer thread draws programs from the Hypothesis strategies of the campaign's areas; the
scheduler (:mod:`fuzz.scheduler`) picks the area of each program within its budgets, and program
``i`` of an area is reproducible from the seed, ``i`` and the policy
(:mod:`fuzz.strategies.draws`). Each program is written to the corpus *before* it runs, with the
oracle's expectations computed on the producer's thread; the main thread hands each program to
the lane of every target that supports it (:mod:`fuzz.pipeline`: each target's worker is its own
process, kept busy while the lane judges and records the verdicts), so generation, the oracle,
judging and every driver run at the same time. A time budget, a program limit, spent area
budgets or Ctrl-C stop it; every write is a transaction, so the corpus is consistent whenever the
process stops.

A campaign has a name. Its settings (seed, areas, policy, budgets) and its state (where each
area's stream of draws stands, the scheduler's counts) live in the corpus's ``campaigns`` row,
updated after every program: running the same name again resumes, first running the programs an
interruption left stored but unrun, then continuing each area's stream where it stopped.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Callable, Iterator

import numpy as np
from hypothesis import strategies as st

from corpus.coverage import program_cells, coverage
from corpus.hypothesis_db import CorpusDatabase
from corpus.store import Corpus
from fuzz.batching import batch_for
from fuzz.drivers import Target, Worker
from fuzz.execute import Expectations, Outcome, ftz_of, has, supports
from fuzz.ir import Program
from fuzz.pipeline import Lane
from fuzz.policy import Policy
from fuzz.scheduler import Budget, Scheduler
from fuzz.targeted import Search
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws
from fuzz.strategies.spirv_only import spirv_programs
from fuzz.strategies.atomics import atomic_programs
from fuzz.strategies.images import image_programs
from fuzz.images import DIMS, modelled
from fuzz.strategies.expressions import expression_programs
from fuzz.strategies.maths import math_programs
from fuzz.maths import CR_DIVIDE_SQRT

AREAS = {"conversions": conversion_programs, "spirv": spirv_programs, "expressions": expression_programs,
         "atomics": atomic_programs, "images": image_programs, "math": math_programs}
"""What a campaign can generate: each program is drawn from one of the chosen areas."""


class CampaignError(ValueError):
    """Bad campaign settings (unknown area, no targets): one line saying what to do."""


@dataclass
class TargetStats:
    programs: int = 0
    runs: int = 0
    checks: int = 0
    judged: int = 0
    mismatches: int = 0
    driver_s: float = 0.0
    wall_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    kinds: set = field(default_factory=set)

    @property
    def checks_per_s(self) -> float:
        return self.judged / self.wall_s if self.wall_s else 0.0

    def add(self, outcome: Outcome, whole: bool = True) -> None:
        """Count one run; its status only if it ran a whole part (not a half made to isolate)."""
        self.runs += outcome.runs
        self.checks += outcome.verdict.checks
        self.judged += outcome.verdict.judged
        self.mismatches += outcome.verdict.mismatches
        self.driver_s += outcome.driver_s
        if whole:
            self.statuses[outcome.status] = self.statuses.get(outcome.status, 0) + 1
        for r in outcome.verdict.rows + outcome.failures:
            self.kinds.add((r["kind"], r["operation"], r["src_type"], r["dst_type"]))


@dataclass
class CampaignResult:
    name: str
    seed: int
    programs: int
    wall_s: float
    targets: dict[str, TargetStats]
    interrupted: bool = False


def area_strategy(areas: tuple[str, ...], caps: Caps, policy: Policy) -> st.SearchStrategy[Program]:
    """Programs drawn from one of ``areas`` (names of :data:`AREAS`)."""
    return st.one_of(*[AREAS[a](caps, policy) for a in areas])


ATOMIC_CAPABILITIES = ("int64_atomics", "cl3.0", "atomic_order_acq_rel", "atomic_order_seq_cst",
                       "atomic_scope_device")


def capabilities(targets: list[Target]) -> Caps:
    """What any of the targets can take; each program then runs where it is supported."""
    fps = [t.fingerprint for t in targets]
    return Caps(
        fp64=any(fp.get("fp64") for fp in fps),
        fp16=any(fp.get("fp16") for fp in fps),
        int64=all(fp.get("int64", True) for fp in fps),
        atomics=frozenset(k for k in ATOMIC_CAPABILITIES if any(fp.get(k) for fp in fps)),
        images=tuple(sorted({f for f in (_formats(fp) for fp in fps if fp.get("image_support")) if f}, key=sorted)),
        cr_divide_sqrt=any(has(fp, CR_DIVIDE_SQRT) for fp in fps),
    )


def _formats(fp: dict) -> frozenset[tuple[str, str]]:
    """The (image kind, format) pairs a device reports that clfuzz models (fuzz.images)."""
    return frozenset((dim, key) for dim, keys in fp.get("image_formats", {}).items() if dim in DIMS
                     for key in keys if "/" in key and modelled(*key.split("/")))


def _produce(draws: dict[str, Draws], searches: dict, plan: "_Plan", corpus: Corpus, name: str,
             ftz_classes: set, out: queue.Queue, stop: threading.Event) -> None:
    """Draw programs until ``stop`` or until every area has spent its budget (the plan says which
    area, and which index of its stream), store each, pair it with its expectations (computed
    here, off the drivers' critical path, for every flush-to-zero class in use)."""
    try:
        for area, program in plan.programs(draws, searches):
            if stop.is_set():
                return
            corpus.add_program(program, name)
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


@dataclass(frozen=True)
class Settings:
    """What defines a campaign's programs; stored with it, so that running it again resumes it."""

    seed: int = 0
    areas: tuple[str, ...] = tuple(AREAS)
    policy: Policy = Policy()
    budgets: dict[str, Budget] = field(default_factory=dict)

    def to_row(self) -> dict:
        return {"seed": self.seed, "areas": list(self.areas), "policy": asdict(self.policy),
                "budgets": {a: asdict(b) for a, b in sorted(self.budgets.items())}}

    @classmethod
    def from_row(cls, seed: int, row: dict) -> "Settings":
        return cls(seed, tuple(row.get("areas", AREAS)), Policy.from_json(json.dumps(row.get("policy", {}))),
                   {a: Budget(**b) for a, b in row.get("budgets", {}).items()})


def check_areas(areas: tuple[str, ...]) -> None:
    """A CampaignError naming the first unknown area, if any."""
    unknown = [a for a in areas if a not in AREAS]
    if unknown:
        raise CampaignError(f"unknown area {unknown[0]!r}; available areas: {', '.join(AREAS)}")


def check_resumable(corpus: Corpus, stored: dict, settings: Settings) -> None:
    """A CampaignError unless the stored campaign row ``stored`` has ``settings`` (resuming
    never mixes settings)."""
    if Settings.from_row(stored["seed"], stored["settings"]).to_row() != settings.to_row():
        raise CampaignError(f"campaign {stored['name']!r} is in {corpus.path} with other settings (seed "
                            f"{stored['seed']}, areas {','.join(stored['settings'].get('areas', []))}); run it "
                            "again without --seed/--areas/--statements/--global-size/--budget to resume it, "
                            "or pick another --name")


def stored_settings(corpus: Corpus, name: str) -> Settings | None:
    """The settings of the campaign ``name`` if the corpus holds it (to resume it), else None."""
    row = corpus.campaign(name)
    return Settings.from_row(row["seed"], row["settings"]) if row else None


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
    """A snapshot of a running campaign for the live display (fuzz.cli)."""

    programs: int
    elapsed: float
    targets: dict[str, TargetStats]
    areas: dict[str, AreaView]
    new_buckets: list[dict]  # buckets first seen in this run, newest first (id, title)
    bucket_count: int


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
    scheduler whether it found a new disagreement kind or coverage cell (fuzz.scheduler)."""

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
        close (the targeted searches' score, fuzz.targeted)."""
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
    for t in targets:
        corpus.add_target(t.name, t.path, t.fingerprint_id, t.fingerprint)
    settings_row = {**settings.to_row(), "targets": [t.name for t in targets], "timeout_s": timeout_s}
    unfinished, seen = _history(corpus, name, stored["state"]) if stored else ([], set())
    shares = {a: policy.p_targeted_error if a == "math" else policy.p_targeted for a in areas}
    plan = _Plan(Scheduler(tuple(areas), settings.budgets, stored["state"] if stored else None, seed),
                 unfinished, seen, shares, seed)
    # the math area's search climbs toward larger observed errors (score reported after the run);
    # the others toward coverage gaps (scored when drawn): fuzz.targeted
    searches = {a: Search(AREAS[a](caps, run_policy), CorpusDatabase(corpus, f"{name}/{a}"),
                          None if a == "math" else plan.novelty, a) for a in areas if shares[a] > 0}
    done_before = stored["programs"] if stored else 0
    corpus.update_campaign(name, seed, settings_row, done_before, stored["checks"] if stored else 0,
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
        corpus.update_campaign(name, seed, settings_row, done_before + finished.value, checks, plan.state())

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
