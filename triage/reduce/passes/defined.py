"""The ``defined`` pass, first after ``alone``: a report shows a defined program. A statement with an
operation some lane of whose result the specification leaves undefined or implementation-defined
(:func:`oracles.undefined_results`: a float -> integer conversion without ``_sat`` of an operand
out of range, OpenCL C 3.0.19 §6.4.3.3; the undefined w lane of a 3-vector's .hi/.odd, §6.3.7; an
undefined OpVectorShuffle component, SPIR-V §3.42.12) is removed, or else the operation is
replaced by its defined form (:func:`defined_form`: the same conversion with ``_sat`` and the same
rounding; a defined component in place of the undefined one). The defined form's own lanes were
not judged in the program it was made from, so they may disagree now (:attr:`Candidate.defined`);
where they do, the bug fails in the defined form too and the goal moves to it: the bucket is filed
under the defined form (triage.reduce.engine).

A reduction that still holds such an operation at the end could not show the disagreement
without it (:func:`summary`, :attr:`triage.reduce.Reduction.undefined`): the bucket's severity is
then ``letter`` (triage.buglist.bucket_severity) and its report names the statement and the
section (:func:`sentence`).
"""

from __future__ import annotations

from dataclasses import replace

from fuzz.drivers.capabilities import ftz_of
from fuzz.judge import expression_text
from lang.derive import restrict
from lang.ir import Expr, Op, Program, Store
from lang.types import Type
from oracles import UndefinedBehaviour, UndefinedResult, undefined_results
from triage.reduce.base import Candidate, Candidates, Reducing, replace_at

__all__ = ["defined_form", "defined_pass", "sentence", "summary", "undefined"]


def undefined(program: Program, reducing: Reducing) -> list[UndefinedResult]:
    """The operations of ``program`` with undefined or implementation-defined lanes on the
    reducer's target (its float environment); none for a program the oracle refuses."""
    try:
        return undefined_results(program, ftz_of(reducing.target))
    except (UndefinedBehaviour, ValueError, KeyError):
        return []


def _saturated(value: Expr, dst: str) -> Op:
    """``convert_<dst>_sat`` of ``value`` at its own width (rtz: a cast's and an assignment's rounding)."""
    return Op("convert", (value,), Type(dst, value.type.width), (("sat", True),))


def _defined_node(node: Op) -> Expr | None:
    """The defined form of an operation (module docstring), or None where it has none."""
    if node.op == "convert" and not node.attr("sat"):
        return replace(node, attrs=tuple(sorted({**dict(node.attrs), "sat": True}.items())))
    if node.op == "cast":
        inner = _saturated(node.args[0], node.type.scalar)
        return inner if inner.type == node.type else replace(node, args=(inner,))
    if node.op == "swizzle":  # the w lane of a 3-vector (§6.3.7) becomes its z lane
        w = node.args[0].type.width
        attrs = {**dict(node.attrs), "components": tuple(min(c, w - 1) for c in node.attr("components")),
                 "form": "xyzw"}
        return replace(node, attrs=tuple(sorted(attrs.items())))
    if node.op == "vector_shuffle":  # an undefined component (0xFFFFFFFF) becomes Vector 1's first
        attrs = {**dict(node.attrs), "components": tuple(max(c, 0) for c in node.attr("components"))}
        return replace(node, attrs=tuple(sorted(attrs.items())))
    return None


def defined_form(program: Program, found: UndefinedResult) -> Program | None:
    """``program`` with the operation of ``found`` in its defined form; None where it has none."""
    stmt = program.body[found.statement]
    if found.assignment:
        value: Expr | None = _saturated(stmt.value, program.buffer(stmt.buffer).type.scalar)
    else:
        node = stmt.value
        for i in found.path:
            node = node.args[i]
        new = _defined_node(node) if isinstance(node, Op) else None
        value = None if new is None else replace_at(stmt.value, found.path, new)
    if value is None:
        return None
    body = list(program.body)
    body[found.statement] = Store(stmt.buffer, value)
    return replace(program, body=tuple(body))


def defined_pass(program: Program, rows: list[dict], reducing: Reducing) -> Candidates:
    """Without every statement with undefined lanes, then without each; then each operation in
    its defined form (:attr:`Candidate.defined`)."""
    found = undefined(program, reducing)
    where = sorted({f.statement for f in found})
    n = len(program.body)
    if where and len(where) < n:
        yield restrict(program, [i for i in range(n) if i not in where])
        if len(where) > 1:
            for i in where:
                yield restrict(program, [j for j in range(n) if j != i])
    for f in found:
        made = defined_form(program, f)
        if made is not None:
            yield Candidate(made, defined=program.body[f.statement].buffer)


def summary(program: Program, reducing: Reducing) -> list[dict]:
    """What a reduced program holds that the spec leaves undefined or implementation-defined, for
    the corpus and the report (:func:`sentence`): per operation its statement, its spelling, the
    operands' values at the first such lane, where that lane is, the rule and its section."""
    out = []
    for f in undefined(program, reducing):
        stmt = program.body[f.statement]
        node = stmt.value
        for i in f.path:
            node = node.args[i]
        first = f.lanes[0]
        where = f"work-item {first // f.width}" + (f" lane {first % f.width}" if f.width > 1 else "")
        spelled = (f"the assignment to {program.buffer(stmt.buffer).type.c_name}" if f.assignment
                   else f"`{expression_text(node)}`")
        out.append({"statement": f"{stmt.buffer}[gid] = {expression_text(stmt.value, stmt.buffer)}",
                    "operation": spelled, "operands": ", ".join(f.operands), "where": where,
                    "lanes": len(f.lanes), "rule": f.rule.id, "leaves": f.rule.leaves, "section": f.rule.section})
    return out


def sentence(entry: dict) -> str:
    """One entry of :func:`summary` for people: the statement, the operation and its operands, and
    what the spec leaves of its result, where."""
    operands = f" of {entry['operands']}" if entry["operands"] else ""
    return (f"`{entry['statement']}`: {entry['operation']}{operands} ({entry['where']}) has a result the "
            f"specification leaves {entry['leaves']}: {entry['section']} (rule `{entry['rule']}`)")
