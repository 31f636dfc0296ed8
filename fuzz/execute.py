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
from fuzz.drivers.protocol import ImageArg, SamplerArg
from fuzz.images import ADDRESSING, CHANNEL_TYPES, DIMS, FILTERS, ORDERS, format_key
from fuzz.maths import CR_DIVIDE_SQRT
from fuzz.drivers.routes import PATH_OPENCL_C, PATH_SPIRV, ROUTES, RouteFailure, binary
from fuzz.emit import spirv
from fuzz.emit.opencl_c import KERNEL_NAME, emit
from fuzz.emit.validate import target_env, validate
from fuzz.batching import Batch, parts
from fuzz.ir import Program, restrict
from fuzz.judge import Verdict, failure_row, judge
from fuzz.layout import input_bytes, input_values, layout, output_bytes, sampler_arguments, split_outputs
from fuzz.ops import constructs, paths_of
from oracles import atomics
from oracles.evaluate import expected
from oracles.expect import Expectation



def job_for(program: Program, inputs: dict[str, np.ndarray] | None = None, path: str = PATH_OPENCL_C,
            family: str = "") -> Job:
    """The worker job of a program over the packed ``in``/``out`` buffers: its OpenCL C source,
    or (``path="spirv"``) its SPIR-V module, validated, in the binary the ``family``'s route
    loads. Raises RouteFailure when the module is invalid or the route fails on it."""
    lay = layout(program)
    inputs = input_values(program) if inputs is None else inputs
    if path == PATH_OPENCL_C:
        kind, code, options = "source", emit(program).encode(), c_options(program)
    else:
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
            BufferArg("out", output_bytes(program, inputs), lay.out_bytes, True),
            *(ImageArg(i.name, DIMS[i.dim].cl_type, ORDERS[i.order].code, CHANNEL_TYPES[i.channel].code, i.shape,
                       inputs[i.name].tobytes(), inputs[i.name].nbytes) for i in program.images),
            *(SamplerArg(s.name, s.normalized, ADDRESSING[s.addressing][0], FILTERS[s.filter][0])
              for s in sampler_arguments(program)),
        ),
        global_size=(program.global_size,),
        local_size=(program.local_size,) if program.local_size else None,
    )


def c_options(program: Program) -> str:
    """Build options of the OpenCL C path: the program's, and -cl-std=CL3.0 where it uses OpenCL C
    3.0 features (the C11 atomics; a device's default is OpenCL C 1.2, §5.8.4.5 of the API)."""
    return " ".join(o for o in (program.options, "-cl-std=CL3.0" if "cl3.0" in program.requires else "") if o)


def ftz_of(target: Target) -> frozenset[str]:
    """Floating types whose denormals this target may flush (:func:`ftz_for` its fingerprint)."""
    return ftz_for(target.fingerprint)


def ftz_for(fp: dict) -> frozenset[str]:
    """The device's float environment (oracles.maths): the floating types whose denormals it may
    flush (its FP config lacks CL_FP_DENORM, OpenCL C 3.0 §7.2; the flush-to-zero results of
    §7.5.3 are then allowed), ``embedded`` for an EMBEDDED_PROFILE device (Tables 66, 69) and
    ``cl2`` where it supports OpenCL C 2.0 or newer (Table 67 applies only there)."""
    out = set()
    for name, key, present in (("half", "half_fp_config", fp.get("fp16")), ("float", "single_fp_config", True),
                               ("double", "double_fp_config", fp.get("fp64"))):
        if present and not (fp.get(key) or {}).get("denorm", False):
            out.add(name)
    if "EMBEDDED" in str(fp.get("profile", "")):
        out.add("embedded")
    if fp.get("cl3.0"):
        out.add("cl2")
    return frozenset(out)


def has(fp: dict, capability: str) -> bool:
    """Whether a device's fingerprint has a capability a program requires (a fingerprint key,
    or float's CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT for -cl-fp32-correctly-rounded-divide-sqrt)."""
    if capability == CR_DIVIDE_SQRT:
        return bool((fp.get("single_fp_config") or {}).get("correctly_rounded_divide_sqrt", False))
    return bool(fp.get(capability, False))


def runnable(target: Target, program: Program) -> Program | None:
    """The part of ``program`` the target takes: every statement its path can express (an
    operation only SPIR-V has stays off the OpenCL C path) and, on a SPIR-V path, its route can
    take (routes.Route.unsupported). None when its device lacks a capability the program
    requires (fp64, fp16, int64), an image format of the program (its fingerprint's
    ``image_formats``), or no statement is left."""
    fp = target.fingerprint
    blocked = ROUTES[target.family].unsupported if target.path == PATH_SPIRV else frozenset()
    if program.requires & blocked or not all(has(fp, cap) for cap in program.requires):
        return None
    if not all(format_key(i.order, i.channel) in fp.get("image_formats", {}).get(i.dim, ()) for i in program.images):
        return None
    keep = [i for i, s in enumerate(program.body)
            if target.path in paths_of(s.value) and not constructs(s.value) & blocked]
    if not keep:
        return None
    return program if len(keep) == len(program.body) else restrict(program, keep)


def supports(target: Target, program: Program) -> bool:
    """Whether the target takes any of ``program`` (:func:`runnable`)."""
    return runnable(target, program) is not None


class Expectations:
    """Oracle results for one program, computed once per flush-to-zero class of target.

    ``view(part)`` serves a part of the program made by :func:`fuzz.ir.restrict` (a batch of its
    statements over a prefix of its work-items) from the same results, without re-running the
    oracle: buffers keep their names and a prefix of work-items is a prefix of lanes."""

    def __init__(self, program: Program, *, _inputs=None, _by_ftz=None):
        self.program = program
        self.inputs = input_values(program) if _inputs is None else _inputs
        self._by_ftz: dict[frozenset, dict[str, Expectation]] = {} if _by_ftz is None else _by_ftz
        self._histories: atomics.Histories | None = None

    def get(self, ftz: frozenset[str]) -> dict[str, Expectation]:
        if ftz not in self._by_ftz:
            self._by_ftz[ftz] = expected(self.program, ftz, self.inputs, self.histories())
        return self._by_ftz[ftz]

    def histories(self) -> atomics.Histories | None:
        """The atomics oracle's histories of the program's shared locations (None without any)."""
        if not self.program.shared:
            return None
        if self._histories is None:
            self._histories = atomics.histories(self.program, self.inputs)
        return self._histories

    def view(self, part: Program) -> "Expectations":
        if part.shared:  # histories change with the operations kept: computed anew for the part
            return Expectations(part, _inputs={b.name: self.inputs[b.name][: part.lanes(b.name)]
                                               for b in part.buffers if b.fill is not None})
        n = part.global_size
        inputs = {b.name: self.inputs[b.name][: n * b.type.mem_lanes] for b in part.inputs}
        inputs.update({i.name: self.inputs[i.name] for i in part.images})  # texels are not per work-item
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

    def absorb(self, other: "Outcome") -> "Outcome":
        """Add the outcome of a later run of a part of the same program (its status is this one's)."""
        self.runs += other.runs
        self.driver_s += other.driver_s
        self.failures.extend(other.failures)
        for key in ("checks", "judged", "mismatches", "failing_statements", "wholly_wrong"):
            setattr(self.verdict, key, getattr(self.verdict, key) + getattr(other.verdict, key))
        self.verdict.rows.extend(other.verdict.rows)
        self.verdict.errors.extend(other.verdict.errors)
        return self


@dataclass
class Part:
    """A program, or a part of one, to run on a target, with its expectations; ``depth`` counts
    the halvings that made it (0: a program as generated or batched)."""

    program: Program
    expectations: Expectations
    depth: int = 0

    def half(self, statements: list[int], corpus: Corpus | None, campaign: str) -> "Part":
        sub = restrict(self.program, statements)
        if corpus is not None:
            corpus.add_program(sub, campaign)  # stored before it runs, like every program
        return Part(sub, self.expectations.view(sub), self.depth + 1)


def prepare(part: Part, target: Target) -> Job | Result:
    """The job that runs ``part`` on ``target``, or the Result of a module that never reaches the
    driver (invalid, or the route failed on it)."""
    try:
        return job_for(part.program, part.expectations.inputs, target.path, target.family)
    except RouteFailure as e:
        return Result(e.status, log=e.log)


def conclude(part: Part, target: Target, result: Result, corpus: Corpus | None,
             campaign: str = "") -> tuple[Outcome, list[Part]]:
    """Judge and record one run of ``part``: its outcome, and the halves to run next when the run
    must be isolated (see the module docstring). The run and its disagreements are one
    transaction."""
    program, expectations = part.program, part.expectations
    outcome = Outcome(result.status, driver_s=result.build_s + result.run_s, runs=1)
    run_row = {
        "program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
        "path": target.path, "status": result.status, "build_s": result.build_s, "run_s": result.run_s,
        "log": result.log[-4000:] if result.status != "ok" else "", "campaign": campaign,
        "checks": 0, "judged": 0, "mismatches": 0,
    }
    rows: list[dict] = []
    errors: list[dict] = []
    halves: list[Part] = []
    if result.status == "ok":
        actual = split_outputs(program, result.outputs["out"])
        verdict = judge(program, expectations.get(ftz_of(target)), actual, expectations.inputs,
                        histories=expectations.histories())
        if kernel_wide(verdict, program):
            run_row["status"] = outcome.status = "split"
            run_row["log"] = f"{verdict.failing_statements} of {len(program.body)} statements disagree: isolating"
            halves = _halves(part, corpus, campaign)
        else:
            outcome.verdict = verdict
            rows, errors = verdict.rows, verdict.errors
            run_row.update(checks=verdict.checks, judged=verdict.judged, mismatches=verdict.mismatches)
    elif result.status == "invalid_module":  # our emitter's bug, not the driver's: no disagreement
        pass
    elif len(program.body) == 1:  # build error, crash, timeout, runtime error of one statement
        rows = [failure_row(program, result.status, result.log)]
        outcome.failures = rows
    else:  # ... of several: record, then isolate by halving
        halves = _halves(part, corpus, campaign)
    keys = {"program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
            "path": target.path}
    for r in rows:
        r.update(keys)
    if corpus is not None:
        corpus.add_run(run_row, rows, errors)
    return outcome, halves


def first_parts(target: Target, program: Program, expectations: Expectations, corpus: Corpus | None,
                campaign: str = "", batch: Batch | None = None) -> list[Part]:
    """What ``target`` runs of ``program``: the statements it takes (:func:`runnable`), cut into
    parts of ``batch`` (fuzz.batching; whole if None), each stored before it runs."""
    taken = runnable(target, program)
    if taken is None:
        raise ValueError(f"{target.name} takes no statement of program {program.id}")
    pieces = [taken] if batch is None else parts(taken, batch)
    for piece in pieces:
        if piece is not program and corpus is not None:
            corpus.add_program(piece, campaign)
    return [Part(piece, expectations.view(piece)) for piece in pieces]


def execute(
    program: Program,
    target: Target,
    worker: Worker,
    corpus: Corpus | None,
    *,
    campaign: str = "",
    expectations: Expectations | None = None,
) -> Outcome:
    """Run, judge and record the part of ``program`` that ``target`` takes (:func:`runnable`),
    isolating failures by halving, one run after the other (campaigns overlap these steps:
    :mod:`fuzz.pipeline`). The caller checks :func:`supports` first."""
    todo = first_parts(target, program, expectations or Expectations(program), corpus, campaign)
    total: Outcome | None = None
    while todo:
        part = todo.pop(0)
        job = prepare(part, target)
        result = job if isinstance(job, Result) else worker.run(job)
        outcome, halves = conclude(part, target, result, corpus, campaign)
        total = outcome if total is None else total.absorb(outcome)
        todo[0:0] = halves
    return total


def kernel_wide(verdict: Verdict, program: Program) -> bool:
    """Whether a run looks like code was dropped rather than computed wrongly: most statements
    disagree at once, or several are wrong on every lane (PoCL 3.1 drops the code after a
    statement it miscompiles)."""
    if program.area == "math":  # edge-case disagreements in most statements are the norm there:
        return verdict.wholly_wrong >= 2  # only statements wrong on every lane suggest dropped code
    return verdict.failing_statements >= 2 and (
        2 * verdict.failing_statements >= len(program.body) or verdict.wholly_wrong >= 2
    )


def _halves(part: Part, corpus: Corpus | None, campaign: str) -> list[Part]:
    n = len(part.program.body)
    return [part.half(list(range(n // 2)), corpus, campaign), part.half(list(range(n // 2, n)), corpus, campaign)]
