"""Running flow programs (lang.flow): the worker job, the builds, the exact judgement of every lane.

Pure like campaign.jobs: :func:`flow_job` builds what a worker runs (the OpenCL C kernel over the
packed ``in``/``out`` arguments of :func:`lang.flow.regions`, the launch's global and local
sizes, the program's build options), :func:`judge_flow` compares a run's ``out`` bytes with the
interpreter's outcome (oracles.flow): an integer lane by its bits (OpenCL C 3.0.19 §6.3, §6.5.1:
the arithmetic the rules of lang.flow_rules leave defined is exact), a float lane by its bits, any
NaN for a NaN (§7.4 Table 65: ``+ - *`` and ``fma`` correctly rounded; contraction off,
§6.15.2.1), and a lane that saw a subnormal value only on a device that keeps denormals (§7.2:
without CL_FP_DENORM a device may flush them).

Every program runs in :data:`BUILDS`: as drawn (the default options) and built with
``-cl-opt-disable`` (OpenCL 3.0 API §5.8.6.4: it turns off every optimisation; the program's
meaning is the same, so both builds are judged by the one oracle). Each build is a program of its
own in the corpus (its options are part of it). A wrong lane is a row of kind ``wrong-code``
(:func:`verdict_of`) keyed on what a compiler engineer would call the bug: the constructs through
which the output's variable is written (:func:`constructs_of`), its type and the rule, never the
random values; the build is an attribute of the bucket (the options its runs recorded, and the
options it was seen only under: triage.buglist.only_under), so one bug of both builds is one
bucket and a bug of one build says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

import numpy as np

from campaign.jobs import build_options, routed
from fuzz.drivers import BufferArg, Job
from fuzz.drivers.routes import PATH_OPENCL_C
from fuzz.emit.opencl_c import KERNEL_NAME
from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as spirv_module
from fuzz.judge import Verdict
from lang.flow import ALoad, Assign, Exchange, Exit, FlowProgram, If, Invoke, Loop, Select, Stmt, Var, regions
from lang.flow_fp import options_of_build
from lang.flow_structs import SInvoke, struct_function
from lang.flow_tree import expressions, statements, walk
from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, VBin, VCall, VSelect
from lang.types import format_value, scalar
from oracles import flow_inputs, flow_outcomes

OPT_DISABLE = "-cl-opt-disable"
BUILDS = ("", OPT_DISABLE)
"""The options each flow program is built with: the default and ``-cl-opt-disable``."""

RULES = {
    "int": ("flow.integer", "the kernel's integer arithmetic is exact: no operation of the program overflows, divides "
            "by zero or shifts out of range (lang.flow_rules), so every output has one value",
            "OpenCL C 3.0.19 §6.3, §6.5.1; C99 §6.5, §6.8, the statements' semantics ('shall')"),
    "float": ("flow.float", "float and double + - * / sqrt and fma (float / and sqrt built with "
              "-cl-fp32-correctly-rounded-divide-sqrt) and conversions between them are correctly rounded and not "
              "contracted: every output has one value (any NaN for a NaN; a lane that saw a float subnormal only on a "
              "device with CL_FP_DENORM)",
              "OpenCL C 3.0.19 §7.4 Table 65 ('shall' in force: '+ - * and fused multiply-add are IEEE 754 "
              "compliant and are therefore correctly rounded'), Table 68 (double x / y and sqrt: 'Correctly rounded'), "
              "§6.4.3.2, §6.15.2.1 (FP_CONTRACT OFF), §7.2; OpenCL 3.0 API §5.8.6.2"),
}
"""The rule a wrong lane breaks (id, text, section): §6.3/§6.5.1 for an integer output, §7.4 Table 65
and §6.15.2.1 for a float."""

MAX_ROWS = 8
"""Wrong lanes recorded per output of a run (all are counted: Verdict.mismatches)."""


@dataclass(frozen=True)
class Mismatch:
    """One output lane a target got wrong: the work-item (global linear id), expected and actual bits."""

    output: str
    item: int
    expected: int
    actual: int
    rule: str


class FlowExpectations:
    """A flow program's expectations (campaign.expectations.Expectations's place in a Part): the
    interpreter's outcome, computed when first judged and kept for the program's other runs (its
    builds, other targets). Nothing is computed ahead: the interpreter is faster than a build."""

    def __init__(self, program: FlowProgram, _shared: dict | None = None) -> None:
        self.program = program
        self._shared = {} if _shared is None else _shared  # its builds' views share the outcome

    def outcome(self) -> dict:
        if "outcome" not in self._shared:
            self._shared["outcome"] = flow_outcomes(self.program)
        return self._shared["outcome"]

    def view(self, part: FlowProgram) -> "FlowExpectations":
        """The expectations of a build of the program (other options, the same outcome)."""
        return FlowExpectations(part, self._shared)


def builds(p: FlowProgram) -> list[FlowProgram]:
    """``p`` as built with each of :data:`BUILDS` (the drawn program is the default build), each
    keeping the option its float ``/`` and ``sqrt`` need (lang.flow_fp.options_of_build)."""
    return [p if options == p.options else replace(p, options=options)
            for options in (options_of_build(p.options, b) for b in BUILDS)]


def flow_job(p: FlowProgram, path: str = PATH_OPENCL_C, lineage: str = "", fingerprint: dict | None = None) -> Job:
    """The worker job of ``p``: its kernel, its packed input, its launch, its options (on the
    OpenCL C path the program's own, campaign.jobs.c_options). On the SPIR-V path
    (``path="spirv"``) the kernel is its module (fuzz.emit.spirv.flow_kernel), validated and
    taken as the route of the ``lineage``'s device takes it (campaign.jobs.routed: raises
    RouteFailure when the module is invalid or the route fails on it)."""
    ins, in_bytes, _, out_bytes = regions(p)
    buf = bytearray(in_bytes)
    for name, values in flow_inputs(p).items():
        raw = values.tobytes()
        buf[ins[name]:ins[name] + len(raw)] = raw
    if path == PATH_OPENCL_C:
        kind, code, options = "source", emit(p).encode(), build_options(p, path, lineage, fingerprint)
    else:
        kind, code = routed(spirv_module(p), "opencl1.2", lineage, fingerprint)
        options = build_options(p, path, lineage, fingerprint)
    return Job(kind, code, options, KERNEL_NAME,
               (BufferArg("in", bytes(buf), in_bytes, False), BufferArg("out", None, out_bytes, True)),
               p.global_size, p.local_size, p.global_offset or None)


def judge_flow(p: FlowProgram, out: bytes, keeps_denormals: bool, expected: dict | None = None) -> tuple[int, list[Mismatch]]:
    """(lanes judged, the lanes that differ) of a run's ``out`` bytes."""
    _, _, offsets, _ = regions(p)
    expected = flow_outcomes(p) if expected is None else expected
    judged, wrong = 0, []
    for o in p.outputs:
        e = expected[o.name]
        s = scalar(o.type)
        actual = np.frombuffer(out, s.bits_dtype, p.work_items, offsets[o.name])
        lanes = np.ones(p.work_items, bool) if keeps_denormals else ~e.flushable
        ok = actual == e.bits
        if s.is_float:
            ok |= e.nan & np.isnan(actual.view(s.dtype))
        judged += int(lanes.sum())
        rule = RULES["float" if s.is_float else "int"][0]
        wrong += [Mismatch(o.name, int(i), int(e.bits[i]), int(actual[i]), rule) for i in np.nonzero(lanes & ~ok)[0]]
    return judged, wrong


def build_name(options: str) -> str:
    """How a row names a build: its options, or ``default``."""
    return options or "default"


def verdict_of(p: FlowProgram, expectations: FlowExpectations, out: bytes, keeps_denormals: bool) -> Verdict:
    """A run's verdict: every lane judged, each wrong one (up to :data:`MAX_ROWS` per output) a
    ``wrong-code`` row (module docstring)."""
    expected = expectations.outcome()
    judged, wrong = judge_flow(p, out, keeps_denormals, expected)
    verdict = Verdict(checks=judged, judged=judged, mismatches=len(wrong))
    verdict.failing_statements = len({m.output for m in wrong})
    outputs = {o.name: o for o in p.outputs}
    shown: dict[str, int] = {}
    for m in wrong:
        shown[m.output] = shown.get(m.output, 0) + 1
        if shown[m.output] > MAX_ROWS:
            continue
        o = outputs[m.output]
        rule, text, section = next(r for r in RULES.values() if r[0] == m.rule)
        nan = scalar(o.type).is_float and bool(expected[o.name].nan[m.item])
        verdict.rows.append({
            "kind": "wrong-code", "buffer": o.name, "work_item": m.item, "lane": m.item,
            "operation": f"flow {constructs_of(p, o.var)}",
            "src_type": o.type, "dst_type": o.type, "expression": f"{o.name}[global linear id] = {o.var}",
            "inputs": json.dumps({"global_linear_id": m.item}), "expected": f"{m.expected:#x}",
            "allowed": json.dumps([f"{m.expected:#x}"] + ["any NaN"] * nan), "actual": f"{m.actual:#x}",
            "expected_value": format_value(m.expected, o.type) + " or any NaN" * nan,
            "actual_value": format_value(m.actual, o.type), "rule": rule, "rule_text": text, "section": section,
            "input_class": "none", "deviation": deviation(o.type, m.expected, m.actual, nan),
            "deviation_detail": f"built with {build_name(p.options)}"})
    return verdict


def deviation(t: str, expected: int, actual: int, nan: bool) -> str:
    """A wrong lane's class (oracles.deviation's names, those a float value shows alone):
    ``signed-zero`` (the opposite zero), ``nan`` (a NaN for a number), ``number-for-nan``, else
    ``other`` (keyed as a wrong value, corpus.buckets.COINCIDENTAL)."""
    s = scalar(t)
    if not s.is_float:
        return "other"
    e, a = (np.array([v], np.uint64).astype(s.bits_dtype).view(s.dtype)[0] for v in (expected, actual))
    if e == 0 and a == 0:
        return "signed-zero"
    return "number-for-nan" if nan else "nan" if np.isnan(a) else "other"


def constructs_of(p: FlowProgram, var: str) -> str:
    """The constructs through which ``var`` is written in ``p``'s kernel body: the loops (their
    form, their ``break``/``continue``) and ``if``s around each statement that writes it, and the
    statement's own kind (an assignment through a private array or ``?:``, a local exchange, a
    call: inline or ``noinline``, through a pointer; the vector operations it reads, lang.flow_vectors);
    ``initial value`` where nothing writes it. A variable that holds a component of a vector
    (``c = v.s2``, as every vector reaches an output) is written through the vector's constructs."""
    return " + ".join(sorted(_constructs(p, var))) or "initial value"


def _constructs(p: FlowProgram, var: str) -> set[str]:
    """The constructs of :func:`constructs_of`, as a set (empty: only the initial value)."""
    found: set[str] = set()

    def visit(body: tuple[Stmt, ...], around: frozenset[str]) -> None:
        for s in body:
            if isinstance(s, If):
                visit(s.then, around | {"if"})
                visit(s.orelse, around | {"if"})
            elif isinstance(s, Loop):
                exits = {e.kind for e in s.body if isinstance(e, Exit)}
                visit(s.body, around | {f"{s.form} loop"} | exits)
            elif (own := _writes(p, s, var)):
                found.update(around | own)

    visit(p.body, frozenset())
    vectors = {s.value.a.name for s in statements(p.body) if isinstance(s, Assign) and s.var == var
               and isinstance(s.value, Swizzle) and isinstance(s.value.a, Var)}
    if vectors:  # a component read: how the vector was computed, not the read
        found = (found - {"assign", "swizzle"}) | {"vector"}
        for v in vectors:
            found |= _constructs(p, v)
    return found


READS = (("private array", ALoad), ("select", Select), ("vector arithmetic", VBin), ("vector built-in", VCall),
         ("swizzle", Swizzle), ("shuffle", Shuffle), ("vector select", VSelect))
"""The expression nodes a bucket's constructs name when a statement that writes the output reads them."""


def _writes(p: FlowProgram, s: Stmt, var: str) -> set[str]:
    """What statement ``s`` is, if it writes ``var`` (empty otherwise)."""
    nodes = [n for e in expressions(s) for n in walk(e)]
    reads = {name for name, kind in READS if any(isinstance(n, kind) for n in nodes)}
    if isinstance(s, SwizzleStore) and s.var == var:
        return {"swizzle store"} | reads
    if isinstance(s, Assign) and s.var == var:
        return {"assign"} | reads
    if isinstance(s, Exchange) and s.var == var:
        return {"local exchange"} | reads
    if isinstance(s, SInvoke) and "." in var:  # a member of a struct variable (lang.flow_structs.member)
        owner = var.split(".", 1)[0]
        helper = struct_function(p, s.function)
        pointer = any(n == owner and q.pointer for n, q in zip(s.structs, helper.structs))
        if s.var == owner or pointer:
            call = "noinline struct call" if helper.noinline else "struct call"
            return {call} | ({"struct pointer"} if pointer else set()) | reads
    if isinstance(s, Invoke):
        pointer = any(q.name == var and not q.array for q in s.pointers)
        if s.var == var or pointer:
            call = "noinline call" if p.function(s.function).noinline else "call"
            return {call} | ({"pointer"} if pointer else set()) | reads
    return set()
