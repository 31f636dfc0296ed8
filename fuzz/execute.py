"""Running one program on one target and judging it: the step every command shares.

``execute`` builds the job (source and packed buffers), runs it on the target's worker, judges the
raw output against the oracle and writes the run and its disagreements to the corpus in one
transaction. A program that fails to build, crashes or hangs is split in halves and each half
re-run, recursively, so the other statements still get a verdict and the statement that fails is
isolated and recorded as a failure of its own (a valid program must build and run). A run in
which most statements disagree at once (a driver that drops the whole kernel, as PoCL 3.1 does
for some constant conversions) is isolated the same way, so the disagreement is recorded on the
statement that causes it rather than on every statement beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np

from corpus.store import Corpus
from fuzz.drivers import BufferArg, Job, Result, Target, Worker
from fuzz.drivers.routes import PATH_OPENCL_C, PATH_SPIRV, ROUTES, RouteFailure, binary
from fuzz.emit import spirv
from fuzz.emit.opencl_c import KERNEL_NAME, emit
from fuzz.emit.validate import target_env, validate
from fuzz.ir import Program, restrict
from fuzz.judge import Verdict, failure_row, judge
from fuzz.layout import input_bytes, input_values, layout, split_outputs
from oracles.evaluate import expected
from oracles.expect import Expectation



def job_for(program: Program, inputs: dict[str, np.ndarray] | None = None, path: str = PATH_OPENCL_C,
            family: str = "") -> Job:
    """The worker job of a program over the packed ``in``/``out`` buffers: its OpenCL C source,
    or (``path="spirv"``) its SPIR-V module, validated, in the binary the ``family``'s route
    loads. Raises RouteFailure when the module is invalid or the route fails on it."""
    lay = layout(program)
    kind, code, options = "source", emit(program).encode(), program.options
    if path == PATH_SPIRV:
        module = spirv.emit(program)
        problem = validate(module, target_env(program))
        if problem is not None:
            raise RouteFailure("invalid_module", f"spirv-val --target-env {target_env(program)}: {problem}")
        route = ROUTES[family]
        kind, code = "binary", binary(route, module)
        options = " ".join(o for o in (route.options, program.options) if o)
    return Job(
        kind=kind,
        program=code,
        options=options,
        kernel=KERNEL_NAME,
        args=(
            BufferArg("in", input_bytes(program, inputs), lay.in_bytes, False),
            BufferArg("out", None, lay.out_bytes, True),
        ),
        global_size=(program.global_size,),
        local_size=None,
    )


def ftz_of(target: Target) -> frozenset[str]:
    """Floating types whose denormals this target may flush: its FP config lacks CL_FP_DENORM
    (OpenCL C 3.0 §7.2; the flush-to-zero results of §7.5.3 are then allowed)."""
    fp = target.fingerprint
    out = set()
    for name, key, present in (("half", "half_fp_config", fp.get("fp16")), ("float", "single_fp_config", True),
                               ("double", "double_fp_config", fp.get("fp64"))):
        if present and not (fp.get(key) or {}).get("denorm", False):
            out.add(name)
    return frozenset(out)


def supports(target: Target, program: Program) -> bool:
    """Whether the target has every capability the program requires (fp64, fp16, int64) and,
    for a SPIR-V path, whether its route takes them (routes.Route.unsupported)."""
    fp = target.fingerprint
    if target.path == PATH_SPIRV and program.requires & ROUTES[target.family].unsupported:
        return False
    return all(bool(fp.get(cap, False)) for cap in program.requires)


class Expectations:
    """Oracle results for one program, computed once per flush-to-zero class of target.

    ``view(part)`` serves a part of the program made by :func:`fuzz.ir.restrict` (a batch of its
    statements over a prefix of its work-items) from the same results, without re-running the
    oracle: buffers keep their names and a prefix of work-items is a prefix of lanes."""

    def __init__(self, program: Program, *, _inputs=None, _by_ftz=None):
        self.program = program
        self.inputs = input_values(program) if _inputs is None else _inputs
        self._by_ftz: dict[frozenset, dict[str, Expectation]] = {} if _by_ftz is None else _by_ftz

    def get(self, ftz: frozenset[str]) -> dict[str, Expectation]:
        if ftz not in self._by_ftz:
            self._by_ftz[ftz] = expected(self.program, ftz, self.inputs)
        return self._by_ftz[ftz]

    def view(self, part: Program) -> "Expectations":
        n = part.global_size
        inputs = {b.name: self.inputs[b.name][: n * b.type.mem_lanes] for b in part.inputs}
        outputs = part.outputs
        by_ftz = {
            ftz: {b.name: exp[b.name].select(slice(0, n * b.type.mem_lanes)) for b in outputs}
            for ftz, exp in self._by_ftz.items()
        }
        return Expectations(part, _inputs=inputs, _by_ftz=by_ftz)


@dataclass
class Outcome:
    """What running one program on one target gave, failures of split halves included."""

    status: str
    verdict: Verdict = field(default_factory=Verdict)
    driver_s: float = 0.0  # build + run time the driver itself reported
    runs: int = 0
    failures: list[dict] = field(default_factory=list)  # isolated failing statements


def execute(
    program: Program,
    target: Target,
    worker: Worker,
    corpus: Corpus | None,
    *,
    campaign: str = "",
    expectations: Expectations | None = None,
) -> Outcome:
    """Run, judge and record ``program`` on ``target`` (see the module docstring)."""
    expectations = expectations or Expectations(program)
    try:
        job = job_for(program, expectations.inputs, target.path, target.family)
    except RouteFailure as e:  # the module never reached the driver
        result = Result(e.status, log=e.log)
    else:
        result = worker.run(job)
    outcome = Outcome(result.status, driver_s=result.build_s + result.run_s, runs=1)
    run_row = {
        "program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
        "path": target.path, "status": result.status, "build_s": result.build_s, "run_s": result.run_s,
        "log": result.log[-4000:] if result.status != "ok" else "", "campaign": campaign,
    }
    if result.status == "ok":
        actual = split_outputs(program, result.outputs["out"])
        verdict = judge(program, expectations.get(ftz_of(target)), actual, expectations.inputs)
        if kernel_wide(verdict, program):
            run_row["status"] = outcome.status = "split"
            run_row["log"] = f"{verdict.failing_statements} of {len(program.body)} statements disagree: isolating"
            return _split(program, target, worker, corpus, campaign, expectations, run_row, outcome)
        outcome.verdict = verdict
        rows = [{**r, "program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
                 "path": target.path} for r in verdict.rows]
        if corpus is not None:
            corpus.add_run({**run_row, "checks": verdict.checks, "judged": verdict.judged,
                            "mismatches": verdict.mismatches}, rows)
        return outcome
    if result.status == "invalid_module":  # our emitter's bug, not the driver's: no disagreement
        if corpus is not None:
            corpus.add_run({**run_row, "checks": 0, "judged": 0, "mismatches": 0}, [])
        return outcome
    # build error, crash, timeout, runtime error: record, then isolate by halving
    if len(program.body) == 1:
        row = {**failure_row(program, result.status, result.log), "program_id": program.id,
               "target": target.name, "fingerprint_id": target.fingerprint_id, "path": target.path}
        outcome.failures.append(row)
        if corpus is not None:
            corpus.add_run({**run_row, "checks": 0, "judged": 0, "mismatches": 0}, [row])
        return outcome
    return _split(program, target, worker, corpus, campaign, expectations, run_row, outcome)


def kernel_wide(verdict: Verdict, program: Program) -> bool:
    """Whether a run looks like code was dropped rather than computed wrongly: most statements
    disagree at once, or several are wrong on every lane (PoCL 3.1 drops the code after a
    statement it miscompiles)."""
    return verdict.failing_statements >= 2 and (
        2 * verdict.failing_statements >= len(program.body) or verdict.wholly_wrong >= 2
    )


def _split(program, target, worker, corpus, campaign, expectations, run_row, outcome) -> Outcome:
    """Record the run (no lanes counted: its halves are), then run each half on its own."""
    if corpus is not None:
        corpus.add_run({**run_row, "checks": 0, "judged": 0, "mismatches": 0}, [])
    half = len(program.body) // 2
    for part in (list(range(half)), list(range(half, len(program.body)))):
        sub = restrict(program, part)
        if corpus is not None:
            corpus.add_program(sub, campaign)
        inner = execute(sub, target, worker, corpus, campaign=campaign, expectations=expectations.view(sub))
        outcome.runs += inner.runs
        outcome.driver_s += inner.driver_s
        outcome.failures.extend(inner.failures)
        for key in ("checks", "judged", "mismatches", "failing_statements", "wholly_wrong"):
            setattr(outcome.verdict, key, getattr(outcome.verdict, key) + getattr(inner.verdict, key))
        outcome.verdict.rows.extend(inner.verdict.rows)
    return outcome
