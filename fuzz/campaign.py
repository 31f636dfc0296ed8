"""The campaign loop: generate, store, run on every target at once, judge, record, display.

A producer thread draws programs from the Hypothesis strategy (program ``i`` of a campaign is
reproducible from its seed, ``i`` and the policy: :mod:`fuzz.strategies.draws`), writes each to the corpus *before* it runs and computes
the oracle's expectations; the main thread hands each program to the lane of every target that
supports it (:mod:`fuzz.pipeline`: each target's worker is its own process, kept busy while the
lane judges and records the verdicts). A time budget or Ctrl-C stops it; every write is a
transaction, so the corpus is consistent whenever the process stops.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Callable

from hypothesis import strategies as st

from corpus.store import Corpus
from fuzz.batching import batch_for
from fuzz.drivers import Target, Worker
from fuzz.execute import Expectations, Outcome, ftz_of, supports
from fuzz.ir import Program
from fuzz.pipeline import Lane
from fuzz.policy import Policy
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws
from fuzz.strategies.spirv_only import spirv_programs
from fuzz.strategies.atomics import atomic_programs
from fuzz.strategies.images import image_programs
from fuzz.images import DIMS, modelled
from fuzz.strategies.expressions import expression_programs

AREAS = {"conversions": conversion_programs, "spirv": spirv_programs, "expressions": expression_programs,
         "atomics": atomic_programs, "images": image_programs}
"""What a campaign can generate: each program is drawn from one of the chosen areas."""


class CampaignError(ValueError):
    """Bad campaign settings (unknown area, no targets): one line saying what to do."""


class _Stop(BaseException):
    """Raised inside the Hypothesis loop to end generation (BaseException: Hypothesis lets it through)."""


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
    )


def _formats(fp: dict) -> frozenset[tuple[str, str]]:
    """The (image kind, format) pairs a device reports that clfuzz models (fuzz.images)."""
    return frozenset((dim, key) for dim, keys in fp.get("image_formats", {}).items() if dim in DIMS
                     for key in keys if "/" in key and modelled(*key.split("/")))


def _produce(draws: Draws, corpus: Corpus, name: str, ftz_classes: set, out: queue.Queue,
             stop: threading.Event) -> None:
    """Draw programs until ``stop``, store each, pair it with its expectations (computed here,
    off the drivers' critical path, for every flush-to-zero class in use)."""
    try:
        for _, program in draws.stream():
            if stop.is_set():
                return
            corpus.add_program(program, name)
            expectations = Expectations(program)
            for ftz in ftz_classes:
                expectations.get(ftz)
            if not _offer(out, (program, expectations), stop):
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


def run_campaign(
    corpus: Corpus,
    targets: list[Target],
    *,
    minutes: float,
    seed: int = 0,
    areas: tuple[str, ...] = tuple(AREAS),
    policy: Policy = Policy(),
    name: str | None = None,
    timeout_s: float = 60.0,
    max_programs: int | None = None,
    on_progress=None,
) -> CampaignResult:
    """Run a campaign for ``minutes`` (or ``max_programs``); see the module docstring."""
    unknown = [a for a in areas if a not in AREAS]
    if unknown:
        raise CampaignError(f"unknown area {unknown[0]!r}; available areas: {', '.join(AREAS)}")
    if not targets:
        raise CampaignError("no OpenCL target selected: `clfuzz drivers` lists what was found")
    name = name or f"campaign-{seed}"
    caps = capabilities(targets)
    # no target uses more work-items than its batch: do not generate (or judge) more than that
    policy = replace(policy, global_size=min(policy.global_size, max(batch_for(t).global_size for t in targets)))
    strategy = area_strategy(areas, caps, policy)
    for t in targets:
        corpus.add_target(t.name, t.path, t.fingerprint_id, t.fingerprint)
    settings_row = {"areas": list(areas), "policy": asdict(policy), "targets": [t.name for t in targets],
                    "timeout_s": timeout_s}
    corpus.update_campaign(name, seed, settings_row, 0, 0)

    stats = {t.name: TargetStats() for t in targets}
    items: queue.Queue = queue.Queue(maxsize=2)
    stop = threading.Event()
    ftz_classes = {ftz_of(t) for t in targets}
    producer = threading.Thread(target=_produce, args=(Draws(strategy, seed), corpus, name, ftz_classes, items, stop),
                                daemon=True)
    deadline = time.monotonic() + minutes * 60
    start = time.monotonic()
    submitted = 0
    finished = _Counter()
    interrupted = False
    # each lane opens its device while the first program is generated
    lanes = {t.name: Lane(t, Worker(t, timeout_s=timeout_s), corpus, name,
                          _recorder(stats[t.name], start)) for t in targets}

    def report() -> None:
        corpus.update_campaign(name, seed, settings_row, finished.value, sum(s.judged for s in stats.values()))
        if on_progress:
            on_progress(finished.value, stats, time.monotonic() - start)

    producer.start()
    try:
        while time.monotonic() < deadline and (max_programs is None or submitted < max_programs):
            item = items.get()
            if item is None:
                break
            if isinstance(item, BaseException):
                raise item
            program, exp = item
            chosen = [t.name for t in targets if supports(t, program)]
            done = finished.after(len(chosen))
            for t in chosen:
                lanes[t].submit(program, exp, partial(_finish, stats[t], done))
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
        producer.join(timeout=5)
    return CampaignResult(name, seed, finished.value, time.monotonic() - start, stats, interrupted)


class _Counter:
    """Programs that every chosen target has finished (counted from the lanes' threads)."""

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def after(self, lanes: int) -> Callable[[], None]:
        """A callback that counts one program once ``lanes`` targets have called it."""
        left = [lanes]

        def done() -> None:
            with self._lock:
                left[0] -= 1
                if left[0] <= 0:
                    self.value += 1

        if lanes == 0:  # no target takes it: nothing to wait for
            done()
        return done


def _finish(stats: TargetStats, done: Callable[[], None]) -> None:
    stats.programs += 1
    done()


def _recorder(stats: TargetStats, start: float) -> Callable[[Outcome, bool], None]:
    def record(outcome: Outcome, whole: bool) -> None:
        stats.add(outcome, whole)
        stats.wall_s = time.monotonic() - start

    return record
