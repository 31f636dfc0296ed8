"""Running one program on one target and judging it: the step every command shares.

``execute`` builds the job (source and packed buffers), runs it on the target's worker, judges the
raw output against the oracle, re-derives each disagreement (:mod:`campaign.rederive`: one the
uncached exact reference does not confirm is an oracle defect, not a disagreement) and hands each
run to :mod:`campaign.record`, the one writer of runs and disagreements. A program that fails to
build, crashes or hangs is split in halves and each half re-run, recursively, so the other
statements still get a verdict and the statement that fails is isolated and recorded as a
failure of its own (a valid program must build and run); a part of up to :data:`TIMEOUT_SPLIT`
statements that hangs is split into its statements at once. A run in which most statements
disagree at once (a driver that drops the whole kernel, as PoCL 3.1 does for some constant
conversions) is isolated the same way, so the disagreement is recorded on the statement that
causes it rather than on every statement beside it.

:func:`prepare`, :func:`conclude` and :func:`first_parts` are pure: they return jobs, verdicts and
parts; what is stored, and when, is the caller's (:func:`execute`, :mod:`campaign.pipeline`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from campaign import record
from campaign.batching import Batch, parts
from campaign.exchange import Block
from campaign.expectations import Expectations
from campaign.flow import FlowExpectations, builds, flow_job, verdict_of
from campaign.flow_variants import variants
from campaign.jobs import job_for
from campaign.learned import Learned
from campaign.record import Run
from campaign.rederive import confirm
from corpus.store import Corpus
from fuzz.drivers import Job, Mapped, Result, Target, Worker
from fuzz.drivers.capabilities import ftz_of, runnable
from fuzz.drivers.routes import RouteFailure
from fuzz.judge import Verdict, failure_row, judge
from lang.derive import restrict
from lang.flow import FlowProgram
from lang.ir import Program
from lang.layout import split_outputs


@dataclass
class Outcome:
    """What running one program on one target gave, failures of split halves included."""

    status: str
    verdict: Verdict = field(default_factory=Verdict)
    driver_s: float = 0.0  # build + run time the driver itself reported
    runs: int = 0
    longest_s: float = 0.0  # of its runs, the longest one's build + run (campaign.feed: a slow sweep)
    failures: list[dict] = field(default_factory=list)  # isolated failing statements

    def absorb(self, other: "Outcome") -> "Outcome":
        """Add the outcome of a later run of a part of the same program (its status is this one's)."""
        self.runs += other.runs
        self.driver_s += other.driver_s
        self.longest_s = max(self.longest_s, other.longest_s)
        self.failures.extend(other.failures)
        for key in ("checks", "judged", "mismatches", "failing_statements", "wholly_wrong"):
            setattr(self.verdict, key, getattr(self.verdict, key) + getattr(other.verdict, key))
        self.verdict.rows.extend(other.verdict.rows)
        self.verdict.errors.extend(other.verdict.errors)
        return self


TIMEOUT_SPLIT = 16
"""A part of at most this many statements that timed out is split into single statements, not
halves: every half that holds the slow statement times out again at the full limit (a 16-statement
part cost five timeouts, 300 s at the ceiling), while a statement alone costs one build. So is one
in which every statement disagrees at once: each is isolated anyway, and halving would build
nearly twice as many parts (PoCL 3.1's image reads: 23 runs for 12 statements instead of 12)."""


@dataclass
class Part:
    """A program, or a part of one, to run on a target, with its expectations; ``depth`` counts
    the halvings that made it (0: a program as generated or batched)."""

    program: Program | FlowProgram
    expectations: Expectations | FlowExpectations
    depth: int = 0
    timeout_s: float | None = None  # the limit it runs with (None: the target's measured one, campaign.timeouts)
    low: bool = False  # a statement of a class that timed out on the target: after the others (campaign.learned)
    extends: bool = False  # an extension or one of its windows (campaign.widening)
    variant: tuple[str, str] = ()  # an EMI variant's original program id and kind (campaign.flow_variants)
    blocks: tuple[Block, Block] | None = None  # an extension's: its packed ``in`` argument as the harness drew it,
    # and where its ``out`` argument is read back (campaign.widening, campaign.exchange: the driver's worker maps both)

    def free(self) -> None:
        """Close an extension's blocks (where its run failed, or never ran)."""
        for block in self.blocks or ():
            block.close()

    def half(self, statements: list[int]) -> "Part":
        sub = restrict(self.program, statements)
        return Part(sub, self.expectations.view(sub), self.depth + 1)


def prepare(part: Part, target: Target) -> Job | Result:
    """The job that runs ``part`` on ``target``, or the Result of a module that never reaches the
    driver (invalid, or the route failed on it)."""
    try:
        if isinstance(part.program, FlowProgram):
            return flow_job(part.program, target.path, target.lineage, target.fingerprint)
        mapped = (Mapped(part.blocks[0].path), Mapped(part.blocks[1].path, zeros=True)) if part.blocks else (None, None)
        return job_for(part.program, part.expectations.inputs, target.path, target.lineage, target.fingerprint,
                       *mapped)
    except RouteFailure as e:
        return Result(e.status, log=e.log)


def conclude(part: Part, target: Target, result: Result) -> tuple[Outcome, list[Part], Run]:
    """Judge one run of ``part``: its outcome, the halves to run next when the run must be
    isolated (see the module docstring), and the run to record."""
    outcome, cuts, run = judged(part.program, part.expectations, target, result)
    return outcome, [part.half(statements) for statements in cuts], run


def judged(program: Program, expectations: Expectations, target: Target,
           result: Result) -> tuple[Outcome, list[list[int]], Run]:
    """:func:`conclude` of a part ``program`` with its ``expectations``, the halves to run next
    given as the statements of each (``Part.half``): what a harness worker process computes
    (campaign.pool). A flow program (lang.flow) is judged whole, every lane (campaign.flow), and
    never cut: a failure is the program's."""
    outcome = Outcome(result.status, driver_s=result.build_s + result.run_s, runs=1,
                      longest_s=result.build_s + result.run_s)
    run = Run(program, target, result, result.status, result.log[-4000:] if result.status != "ok" else "")
    flow = isinstance(program, FlowProgram)
    n = 1 if flow else len(program.body)
    cuts: list[list[int]] = []
    if result.status == "ok" and flow:
        keeps = "float" not in ftz_of(target)
        outcome.verdict = run.verdict = verdict_of(program, expectations, result.outputs["out"], keeps)
        run.rows = run.verdict.rows
    elif result.status == "ok":
        actual = split_outputs(program, result.outputs["out"])
        ftz = ftz_of(target)
        expected = expectations.get(ftz)
        verdict = judge(program, expected, actual, expectations.inputs, histories=expectations.histories())
        if kernel_wide(verdict, program):
            run.status = outcome.status = "split"
            run.log = f"{verdict.failing_statements} of {n} statements disagree: isolating"
            every = verdict.wholly_wrong if program.base_area == "math" else verdict.failing_statements
            cuts = _singles(n) if every == n else _halves(n)
        else:  # each disagreement re-derived before it is recorded (campaign.rederive)
            verdict.rows, run.defects = confirm(program, verdict.rows, expected, ftz, expectations.inputs)
            verdict.mismatches -= len(run.defects)
            outcome.verdict = run.verdict = verdict
            run.rows, run.errors = verdict.rows, verdict.errors
    elif result.status == "invalid_module":  # our emitter's bug, not the driver's: no disagreement
        pass
    elif n == 1:  # build error, crash, timeout, runtime error of one statement
        run.rows = outcome.failures = [failure_row(program, result.status, result.log, target.path)]
    elif result.status == "timeout":  # ... one statement each
        cuts = _singles(n)
    else:  # ... of several: record, then isolate by halving
        cuts = _halves(n)
    return outcome, cuts, run


def first_parts(target: Target, program: Program | FlowProgram, expectations: Expectations | FlowExpectations,
                batch: Batch | None = None, learned: Learned | None = None) -> list[Part]:
    """What ``target`` runs of ``program``: the statements it takes (:func:`runnable`), cut into
    parts of ``batch`` (campaign.batching; whole if None); with ``learned``, its statements of
    classes that failed on the target each alone, those of classes that timed out each alone at low
    priority, after the others, or not at all (campaign.learned). A flow program runs whole, once
    per build (campaign.flow.builds: the default options and -cl-opt-disable), then as its variants
    (campaign.flow_variants), each judged by its own expectations."""
    taken = runnable(target, program)
    if taken is None:
        raise ValueError(f"{target.name} takes no statement of program {program.id}")
    if isinstance(program, FlowProgram):
        return ([Part(build, expectations.view(build)) for build in builds(program)]
                + [Part(v, FlowExpectations(v), variant=(program.id, kind)) for kind, v in variants(program)])
    usual, slow, failing = learned.split(taken) if learned is not None else (range(len(taken.body)), [], [])
    kept = taken if len(usual) == len(taken.body) else restrict(taken, list(usual)) if usual else None
    pieces = [] if kept is None else [kept] if batch is None else parts(kept, batch)
    alone = [(restrict(taken, [i]), i in slow) for i in sorted([*failing, *slow], key=lambda i: i in slow)]
    return ([Part(piece, expectations.view(piece)) for piece in pieces]
            + [Part(piece, expectations.view(piece), low=low) for piece, low in alone])


def expectations_of(program: Program | FlowProgram) -> Expectations | FlowExpectations:
    """What judges ``program``'s runs: the oracle's expectations, or a flow program's interpreter."""
    return FlowExpectations(program) if isinstance(program, FlowProgram) else Expectations(program)


def execute(
    program: Program | FlowProgram,
    target: Target,
    worker: Worker,
    corpus: Corpus | None,
    *,
    campaign: str = "",
    expectations: Expectations | FlowExpectations | None = None,
) -> Outcome:
    """Run, judge and record the part of ``program`` that ``target`` takes (:func:`runnable`),
    isolating failures by halving, one run after the other (campaigns overlap these steps:
    :mod:`campaign.pipeline`). The caller checks :func:`supports` first."""
    todo = first_parts(target, program, expectations or expectations_of(program))
    record.store_parts(corpus, program, [p.program for p in todo], campaign)
    record.link_variants(corpus, [(p.program, *p.variant) for p in todo if p.variant])
    total: Outcome | None = None
    while todo:
        part = todo.pop(0)
        job = prepare(part, target)
        result = job if isinstance(job, Result) else worker.run(job)
        outcome, halves, run = conclude(part, target, result)
        record.record_run(corpus, run, campaign)
        record.store_parts(corpus, program, [h.program for h in halves], campaign)
        total = outcome if total is None else total.absorb(outcome)
        todo[0:0] = halves
    return total


def kernel_wide(verdict: Verdict, program: Program) -> bool:
    """Whether a run looks like code was dropped rather than computed wrongly: most statements
    disagree at once, or several are wrong on every lane (PoCL 3.1 drops the code after a
    statement it miscompiles); never a part of one statement (isolated already)."""
    if len(program.body) < 2:
        return False
    if program.base_area == "math":  # edge-case disagreements in most statements are the norm there:
        return verdict.wholly_wrong >= 2  # only statements wrong on every lane suggest dropped code
    return verdict.failing_statements >= 2 and (
        2 * verdict.failing_statements >= len(program.body) or verdict.wholly_wrong >= 2
    )


def _singles(n: int) -> list[list[int]]:
    """Each statement alone, for a part of up to :data:`TIMEOUT_SPLIT` statements (halves beyond)."""
    return [[i] for i in range(n)] if n <= TIMEOUT_SPLIT else _halves(n)


def _halves(n: int) -> list[list[int]]:
    return [list(range(n // 2)), list(range(n // 2, n))]
