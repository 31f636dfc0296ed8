"""The judge: a target's raw output bits against the oracle's expectations.

For every output lane the oracle allowed some bit patterns or intervals (or none judged); a lane
whose actual bits are not allowed is a disagreement: kind ``wrong-result``, or
``imprecise-result`` (a lower-severity class) under a rule of severity ``tolerance``. Each one is recorded with everything a report needs
without re-running: the statement's expression and operation spelling, source and destination
types, the inputs of that work-item, expected and actual bits and values, the rule and its
section, the input class, and the deviation (oracles.deviation: what the wrong value is, e.g.
another layer's texel, a flushed zero, off by 2 ulp). Where the deviation identifies the rule the
value breaks, the row names that rule instead of the lane's (and its kind follows that rule's
severity); the deviation never changes which lanes are judged or accepted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from corpus.buckets import first_error
from fuzz.drivers.protocol import time_given
from fuzz.drivers.routes import PATH_OPENCL_C, PATH_SPIRV
from fuzz.emit.opencl_c import text as c_text
from lang.families import OUT_PARAMETER
from lang.flow import FlowProgram
from lang.ir import Literal, Load, Op, Program, Store, walk
from lang.ops import spelling
from lang.types import format_value, scalar
from oracles import SLOW, Classifier, Deviation, Expectation, Histories, as_bits, check, failure_rule, input_class, rule

UNEXPLAINED = Deviation("other", "")  # a row past ``explained``: stored as None (unclassified)

MAX_ROWS_PER_STATEMENT = 8
"""A systematic bug fails every lane; a few rows per statement and run are enough to report it,
while the run's ``mismatches`` column keeps the full count."""


def expression_text(expr, target: str = "") -> str:
    """An expression for people: OpenCL C, with an operation only SPIR-V has written as its
    instruction and attributes (``OpVectorShuffle(uint4)(in0[gid], in1[gid]) components=(1, -1)``)."""
    return c_text(expr, _instruction_text, target)


def _instruction_text(expr: Op, args: list[str]) -> str:
    extra = " ".join(f"{k}={v}" for k, v in expr.attrs if k == "components")
    return f"{spelling(expr.op, expr.type, dict(expr.attrs))}({', '.join(args)}){' ' + extra if extra else ''}"


@dataclass
class Verdict:
    """The outcome of judging one run of one program."""

    checks: int = 0  # lanes compared (judged or not)
    judged: int = 0  # lanes with a decided expectation
    mismatches: int = 0
    failing_statements: int = 0  # statements with at least one mismatching lane
    wholly_wrong: int = 0  # statements wrong on every judged lane (a sign of dropped code)
    rows: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)  # per statement: its largest error in ulps (math area)


def describe_statement(stmt: Store, program: Program) -> tuple[str, str, str]:
    """(operation spelling, source type, destination type) of a statement, for bucketing."""
    target = program.buffer(stmt.buffer).type
    value = stmt.value
    if value.type != target:
        return spelling("store", target, {}), value.type.c_name, target.c_name
    if isinstance(value, Op):
        src = value.args[0].type.c_name if len(value.args) == 1 else "+".join(a.type.c_name for a in value.args)
        return spelling(value.op, value.type, dict(value.attrs)), src, value.type.c_name
    return "copy", value.type.c_name, target.c_name


def _statement_inputs(stmt: Store, program: Program, inputs: dict[str, np.ndarray], item: int) -> dict:
    """The values this statement read for one work-item (buffers and literals)."""
    out = {}
    for node in walk(stmt.value):
        if isinstance(node, Load):
            t = node.type
            lanes = inputs[node.buffer][item * t.mem_lanes : item * t.mem_lanes + t.width]
            bits = lanes.view(t.elem.bits_dtype)
            out[node.buffer] = {"type": t.c_name, "bits": [f"{int(b):#x}" for b in bits],
                                "values": [format_value(int(b), t.scalar) for b in bits]}
        elif isinstance(node, Literal):
            out.setdefault("literals", []).append(
                {"type": node.type.c_name, "values": [format_value(b, node.type.scalar) for b in node.bits]}
            )
    return out


def _class_of(stmt: Store, inputs: dict[str, np.ndarray], item: int, lane: int) -> str:
    for node in walk(stmt.value):
        if isinstance(node, Load):
            t = node.type
            j = min(lane, t.width - 1)
            v = inputs[node.buffer][item * t.mem_lanes + j : item * t.mem_lanes + j + 1]
            return str(input_class(v, t.scalar)[0])
        if isinstance(node, Literal):
            j = min(lane, node.type.width - 1)
            v = np.array([node.bits[j]], dtype=np.uint64).astype(node.type.elem.bits_dtype).view(node.type.elem.dtype)
            return "literal:" + str(input_class(v, node.type.scalar)[0])
    return "none"


def judge(
    program: Program,
    expectations: dict[str, Expectation],
    actual: dict[str, np.ndarray],
    inputs: dict[str, np.ndarray],
    *,
    histories: Histories | None = None,
    max_rows: int = MAX_ROWS_PER_STATEMENT,
    explained: int = MAX_ROWS_PER_STATEMENT,
) -> Verdict:
    """Compare every output lane; return counts and the disagreement rows (capped per statement).
    An atomics program's shared locations are judged first (:func:`_judge_histories`). The first
    ``explained`` rows of each statement's buffer carry their deviation (oracles.deviation, about
    0.2 ms a row); rows past it (``max_rows`` raised, as the reducer does to see every lane) keep
    the lane's rule and have no deviation (None: unclassified)."""
    verdict = Verdict()
    _judge_histories(program, expectations, actual, histories, verdict)
    for stmt in program.body:  # a statement fails (wholly) if its result or out-parameter does
        wrong = [_judge_buffer(program, stmt, buffer, expectations[buffer], actual[buffer], inputs, verdict,
                               max_rows, explained) for buffer in (stmt.buffer, *([stmt.pointee] if stmt.pointee else []))]
        verdict.failing_statements += any(w is not None for w in wrong)
        verdict.wholly_wrong += any(w for w in wrong)
    return verdict


def _judge_buffer(program: Program, stmt: Store, buffer: str, exp: Expectation, got: np.ndarray,
                  inputs: dict[str, np.ndarray], verdict: Verdict, max_rows: int, explained: int) -> bool | None:
    """One output buffer of a statement: its result, or a math built-in's out-parameter. Returns
    None where every lane agrees, else whether every judged lane disagrees."""
    bits = np.ascontiguousarray(got).view(scalar(exp.scalar).bits_dtype)
    ok = exp.accepts(bits)
    verdict.checks += len(exp)
    verdict.judged += int(exp.judged.sum())
    operation, src, dst = describe_statement(stmt, program)
    if buffer != stmt.buffer:
        operation, dst = operation + OUT_PARAMETER, program.buffer(buffer).type.c_name
    mem_lanes = program.buffer(buffer).type.mem_lanes
    text = expression_text(stmt.value, stmt.buffer)
    if exp.error is not None:
        _largest_error(stmt, buffer, program, exp, bits, ok, inputs, mem_lanes, operation, dst, text, verdict)
    bad = np.flatnonzero(~ok)
    verdict.mismatches += len(bad)
    if not len(bad):
        return None
    explain = Classifier(program, stmt, buffer, exp, bits, inputs)
    for row, pos in enumerate(bad[:max_rows]):
        item, lane = divmod(int(pos), mem_lanes)
        deviation = explain.classify(int(pos)) if row < explained else UNEXPLAINED
        own = rule(int(exp.rule[pos]))  # the rule the lane was judged under
        r = own if deviation.rule is None else rule(deviation.rule)
        allowed, intervals, masks = accepted(exp, int(pos))
        verdict.rows.append({
            "kind": "imprecise-result" if r.severity == "tolerance" else "wrong-result",
            "buffer": buffer,
            "work_item": item,
            "lane": int(pos),
            "operation": operation,
            "src_type": src,
            "dst_type": dst,
            "expression": text,
            "inputs": json.dumps(_statement_inputs(stmt, program, inputs, item), sort_keys=True),
            "expected": f"{int(exp.allowed[0][pos]):#x}",
            "allowed": json.dumps(allowed + intervals + masks),
            "actual": f"{int(bits[pos]):#x}",
            "expected_value": " or ".join(intervals) if intervals and own.severity == "tolerance"
            else format_value(int(exp.allowed[0][pos]), exp.scalar) + "".join(f" or {i}" for i in intervals + masks),
            "actual_value": format_value(int(bits[pos]), exp.scalar),
            "rule": r.id,
            "rule_text": r.text,
            "section": r.section,
            "input_class": _class_of(stmt, inputs, item, lane),
            "deviation": None if deviation is UNEXPLAINED else deviation.cls,
            "deviation_detail": None if deviation is UNEXPLAINED else deviation.detail,
            **shaped(program),
        })
    return len(bad) == int(exp.judged.sum())


def accepted(exp: Expectation, pos: int) -> tuple[list[str], list[str], list[str]]:
    """What lane ``pos`` of ``exp`` accepts, for people: its allowed bit patterns (and "any NaN"),
    its non-empty intervals and its masks (a disagreement row's ``allowed``, in that order)."""
    allowed = [f"{int(a[pos]):#x}" for a in exp.allowed]
    if exp.any_nan[pos]:
        allowed.append("any NaN")
    intervals = [f"[{format_value(int(as_bits(lo[pos : pos + 1])[0]), exp.scalar)}, "
                 f"{format_value(int(as_bits(hi[pos : pos + 1])[0]), exp.scalar)}]"
                 for lo, hi in exp.ranges if lo[pos] <= hi[pos]]
    masks = [f"bits & {int(m[pos]):#x} == {int(v[pos]):#x}" for m, v in exp.masks if int(m[pos])]
    return allowed, intervals, masks


def shaped(program: Program) -> dict[str, str]:
    """A wrong lane of a shaped program (lang.shapes) keys apart from the same operation's in
    straight-line programs until triage knows whether its twin shows it too (corpus.buckets:
    the ``shape`` of its ``culprit``): then it moves to the built-in's bucket or to the shape's."""
    return {"culprit": json.dumps({"shape": "unreduced"})} if program.shape is not None else {}


def _largest_error(stmt: Store, buffer: str, program: Program, exp: Expectation, bits: np.ndarray, ok: np.ndarray,
                   inputs: dict[str, np.ndarray], mem_lanes: int, operation: str, dst: str, text: str,
                   verdict: Verdict) -> None:
    """The largest error in ulps (OpenCL C 3.0 §7.4) among the statement's judged lanes with a
    measured reference, within the bound or not: what `clfuzz stats` ranks per function."""
    values = bits.view(scalar(exp.scalar).dtype)
    # a lane accepted as another allowed result (a flushed zero, §7.5.3) has no error to measure
    # against the unflushed reference
    other = np.zeros(len(bits), bool)
    for a in exp.allowed[1:]:
        other |= (bits == a) & (bits != exp.allowed[0])
    err = np.where(exp.judged & ~other, exp.error.ulps(values), np.nan)
    if not np.isfinite(err).any():
        return
    pos = int(np.nanargmax(err))
    item = pos // mem_lanes
    reference = exp.error.hi[pos] + exp.error.lo[pos]
    verdict.errors.append({
        "buffer": buffer,
        "operation": operation, "type": dst, "ulps": float(err[pos]), "accepted": bool(ok[pos]),
        "limit": float(exp.error.limit[pos]),
        "rule": rule(int(exp.rule[pos])).id, "bound": rule(int(exp.rule[pos])).text,
        "work_item": item, "lane": pos, "expression": text,
        "inputs": json.dumps(_statement_inputs(stmt, program, inputs, item), sort_keys=True),
        "reference": float(reference).hex() if np.isfinite(reference) else str(reference),
        "actual_value": format_value(int(bits[pos]), exp.scalar),
    })


def _judge_histories(program: Program, expectations: dict[str, Expectation], actual: dict[str, np.ndarray],
                     histories: Histories | None, verdict: Verdict) -> None:
    """Shared locations: final values where they are exact (rule atomic.final), and each
    location's history (oracles.atomics): one row per location no order explains."""
    if histories is None:
        return
    verdict.checks += histories.operations
    verdict.judged += histories.operations
    for b in program.shared:
        if b.kind == "flag":
            continue
        exp = expectations[b.name]
        bits = np.ascontiguousarray(actual[b.name]).view(scalar(exp.scalar).bits_dtype)
        bad = np.flatnonzero(~exp.accepts(bits))
        verdict.checks += len(exp)
        verdict.judged += int(exp.judged.sum())
        verdict.mismatches += len(bad)
        ops = [s for s in program.body if isinstance(s.value, Op) and s.value.attr("location") == b.name]
        for lane in bad[:MAX_ROWS_PER_STATEMENT]:
            loc = next(x for x in histories.locations if x["buffer"] == b.name and x["lane"] == lane)
            verdict.rows.append(_atomic_row(program, loc, ops, int(exp.rule[lane]), "final value",
                                            f"{int(exp.allowed[0][lane]):#x}", f"{int(bits[lane]):#x}",
                                            format_value(int(exp.allowed[0][lane]), exp.scalar),
                                            format_value(int(bits[lane]), exp.scalar), {"initial": loc["init"]}))
    violations = check(histories, actual)
    verdict.mismatches += len(violations)
    verdict.failing_statements += len({s for v in violations for s in v.statements})
    for v in violations[: MAX_ROWS_PER_STATEMENT * max(1, len(program.body))]:
        stmts = [program.body[i] for i in v.statements]
        verdict.rows.append(_atomic_row(program, v.location, stmts, v.rule, "some total order explains the results",
                                        "", v.why, "some total order explains the results", v.why, v.observed,
                                        v.work_item))


def _atomic_row(program: Program, loc: dict, stmts: list[Store], rule_index: int, expected: str, allowed: str,
                actual: str, expected_value: str, actual_value: str, observed: dict, work_item: int = -1) -> dict:
    """A disagreement about one shared location (its buffer and lane; the statements using it)."""
    r = rule(rule_index)
    names = sorted({spelling(s.value.op, s.value.type, dict(s.value.attrs)) for s in stmts})
    where = f"{loc['buffer']}[{loc['lane']}] ({loc['memory']} memory)"
    return {
        "kind": "wrong-result",
        "buffer": loc["buffer"],
        "work_item": work_item,
        "lane": loc["lane"],
        "operation": " + ".join(names) or "no operation",
        "src_type": loc["type"],
        "dst_type": loc["type"],
        "expression": f"{where}: " + "; ".join(expression_text(s.value, s.buffer) for s in stmts[:6]),
        "inputs": json.dumps({"location": where, **observed}, sort_keys=True, default=str),
        "expected": expected if not allowed else allowed,
        "allowed": json.dumps([allowed] if allowed else []),
        "actual": actual,
        "expected_value": expected_value,
        "actual_value": actual_value,
        "rule": r.id,
        "rule_text": r.text,
        "section": r.section,
        "input_class": f"atomics:{loc['memory']}",
    }


def failure_row(program: Program | FlowProgram, status: str, log: str, path: str = PATH_OPENCL_C) -> dict:
    """A row for a valid program that failed to build or crashed: a bug too (programs are valid and
    free of undefined behaviour by construction: docs/oracle.md, "Verdicts"), under the rule of the
    ``path`` it ran on (oracles.rules.failure_rule: a SPIR-V module's is the SPIR-V environment's).
    A run cut at its time limit (status ``timeout``) is recorded as slow (oracles.SLOW, severity
    performance), with the seconds it was given (``slow``: ``given_s``, from the worker's message)
    until triage.slow re-runs it at ten times that. A flow program's (lang.flow) names the ``program``."""
    stmt = program.body[0] if isinstance(program, Program) and len(program.body) == 1 else None
    operation, src, dst = describe_statement(stmt, program) if stmt else ("program", "", "")
    broken = SLOW if status == "timeout" else failure_rule(path == PATH_SPIRV)
    given = time_given(log) if status == "timeout" else None
    return {
        "kind": status,
        "buffer": stmt.buffer if stmt else "",
        "work_item": -1,
        "lane": -1,
        "operation": operation,
        "src_type": src,
        "dst_type": dst,
        "expression": expression_text(stmt.value, stmt.buffer) if stmt else "",
        "inputs": "{}",
        "expected": "",
        "allowed": "[]",
        "actual": "",
        "expected_value": "builds and runs",
        "actual_value": first_error(log) or status,
        "rule": broken.id,
        "rule_text": broken.text,
        "section": broken.section,
        "input_class": "none",
        **({"slow": json.dumps({"given_s": given})} if given is not None else {}),
    }
