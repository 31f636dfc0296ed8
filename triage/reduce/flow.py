"""Reduction of flow programs (lang.flow) at the structure level: the smallest kernel that still
fails the same way.

A flow program's wrong lane is the compiler's (its data passes through loops, branches, arrays and
calls), so its reduction shrinks the structure, not a statement's operands: until no candidate
still fails, it tries, from the largest cut to the smallest,

1. what nothing names any more (variables, arrays, helpers, inputs, structs) removed at once: one cheap
   cut, tried first in every round, so a reduction its budget ends still drops them;
2. the launch: one work-group, then smaller work-groups (each local size halved), fewer
   dimensions; the outputs: one at a time;
3. the statements of every body (the kernel's, each helper's, each branch and loop body): halves,
   quarters, ... and single statements removed;
4. each statement made simpler: a branch replaced by its ``then`` or ``else`` body, a loop by its
   body or run once (``cap`` 1), a helper made inlinable (``noinline`` dropped) or its call
   dropped;
5. each expression replaced by one of its operands of its type, or by the constant 0 or 1;
6. what nothing names removed one at a time (the failure may need one) and private arrays
   halved (every index is reduced modulo the length, so any length keeps the program defined).

Every candidate is checked by the validator (lang.flow_rules.check: a candidate that breaks a rule
is never run, so the reduced program is defined as the original is), then run: the interestingness
test ``fails`` says whether it still fails (:func:`fails_on`: the same kind of failure on the
target, a wrong lane of the same class judged by the exact interpreter, or a crash or build
error with the same message). triage.flow_triage stores a campaign's reductions; triage.observe.size measures them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from corpus.buckets import WRONG_CODE, failure_message
from fuzz.drivers import Target, Worker
from lang.flow import (
    ALoad,
    Array,
    AStore,
    Assign,
    Bin,
    Call,
    Cast,
    Const,
    Exchange,
    Exit,
    Expr,
    FlowProgram,
    If,
    Invoke,
    Load,
    Loop,
    Select,
    Stmt,
    Un,
)
from lang.flow_structs import SInvoke
from lang.flow_tree import children, expressions, statements, walk
from lang.flow_rules import check
from lang.flow_vectors import EXPRESSIONS as VECTOR_EXPRESSIONS
from lang.flow_vectors import SwizzleStore, is_vector, with_child
from lang.nodes import InvalidProgram
from lang.types import scalar
from triage.flow_report import observe_flow


@dataclass
class FlowReduction:
    """A reduced flow program: the original, the smallest that still fails, the candidates run."""

    original: FlowProgram
    reduced: FlowProgram
    candidates: int
    seconds: float
    stopped: bool  # the budget ended it before a fixpoint


def reduce_flow(p: FlowProgram, fails: Callable[[FlowProgram], bool], budget_s: float = 120.0) -> FlowReduction:
    """The smallest program the passes (module docstring) reach from ``p`` on which ``fails`` holds,
    within ``budget_s`` seconds; ``fails(p)`` is assumed (the caller saw it fail)."""
    start = time.monotonic()
    current, runs, progress = p, 0, True
    while progress:
        progress = False
        for candidate in _candidates(current):
            if time.monotonic() - start > budget_s:
                return FlowReduction(p, current, runs, time.monotonic() - start, True)
            if candidate == current or not _valid(candidate):
                continue
            runs += 1
            if fails(candidate):
                current, progress = candidate, True
                break
    return FlowReduction(p, current, runs, time.monotonic() - start, False)


def fails_on(target: Target, worker: Worker, goal: dict, fresh: bool = False) -> Callable[[FlowProgram], bool]:
    """Whether a program fails on ``target`` (run on ``worker``; with ``fresh``, on the worker
    restarted first, nothing an earlier candidate built or ran left in it) as ``goal`` (a stored
    row of the original's run) did: :func:`same_failure`."""

    def fails(p: FlowProgram) -> bool:
        if fresh:
            worker.restart()
        return any(same_failure(r, goal) for r in observe_flow(p, target, worker) or [])
    return fails


def same_failure(row: dict, goal: dict) -> bool:
    """Whether a row of a flow program's run fails as ``goal`` did, so a reduction keeps the bug it
    started from: of its kind; a wrong lane (``wrong-code``: it differs from the interpreter's,
    oracles.flow) of its deviation class (campaign.flow.deviation) where it has one; a failure
    (``crash``, ``build_error``, ``timeout``) with its message as its bucket keys it
    (corpus.buckets.failure_message: an assertion does not become a SIGSEGV on the way)."""
    if row["kind"] != goal["kind"]:
        return False
    if goal["kind"] == WRONG_CODE:
        return goal.get("deviation") is None or row.get("deviation") == goal["deviation"]
    return failure_message(row.get("actual_value") or "") == failure_message(goal.get("actual_value") or "")


def _valid(p: FlowProgram) -> bool:
    try:
        check(p)
    except InvalidProgram:
        return False
    return True


# ---- candidates ----------------------------------------------------------------------------


def _candidates(p: FlowProgram) -> Iterator[FlowProgram]:
    unnamed = _unnamed(p)
    yield from unnamed[:1]  # first: one cheap cut, often the largest (a budget may end the rest)
    yield from _launches(p)
    if len(p.outputs) > 1:
        for o in p.outputs:
            yield replace(p, outputs=(o,))
    for body in _bodies(p.body):
        yield replace(p, body=body)
    yield from _helpers(p, "functions")
    yield from _helpers(p, "struct_functions")  # lang.flow_structs: the same passes on a struct helper
    yield from unnamed[1:]  # one declaration at a time: the failure may need one
    yield from _halved(p)


def _helpers(p: FlowProgram, field: str) -> Iterator[FlowProgram]:
    """Each helper of ``p``'s ``field`` (its plain or its struct helpers) with a smaller body, a
    smaller result expression (a struct helper returns a variable's name: none) or inlined."""
    helpers = getattr(p, field)
    for i, f in enumerate(helpers):
        def put(g) -> FlowProgram:
            return replace(p, **{field: helpers[:i] + (g,) + helpers[i + 1:]})
        for body in _bodies(f.body):
            yield put(replace(f, body=body))
        if not isinstance(f.result, str):
            for e in _exprs(f.result):
                yield put(replace(f, result=e))
        if f.noinline:
            yield put(replace(f, noinline=False))


def _launches(p: FlowProgram) -> Iterator[FlowProgram]:
    g, l = p.global_size, p.local_size
    if g != l:
        yield replace(p, global_size=l)
    for d in range(len(l)):
        if l[d] > 1 and l[d] % 2 == 0:
            half = l[:d] + (l[d] // 2,) + l[d + 1:]
            yield replace(p, global_size=tuple(a // b * c for a, b, c in zip(g, l, half)), local_size=half)
    if len(g) > 1:
        yield replace(p, global_size=g[:-1], local_size=l[:-1])


def _bodies(body: tuple[Stmt, ...]) -> Iterator[tuple[Stmt, ...]]:
    """Smaller forms of one body: slices removed (largest first), then each statement simpler."""
    n = len(body)
    size = n // 2 or 1
    while size >= 1 and n:
        for i in range(0, n, size):
            yield body[:i] + body[i + size:]
        size //= 2
    for i, s in enumerate(body):
        for simpler in _statements(s):
            yield body[:i] + simpler + body[i + 1:]


def _statements(s: Stmt) -> Iterator[tuple[Stmt, ...]]:
    """Simpler forms of one statement (each a run of statements)."""
    if isinstance(s, If):
        yield s.then
        yield s.orelse
        for b in _bodies(s.then):
            yield (replace(s, then=b),)
        for b in _bodies(s.orelse):
            yield (replace(s, orelse=b),)
    elif isinstance(s, Loop):
        yield s.body
        if s.cap > 1:
            yield (replace(s, cap=1),)
        for b in _bodies(s.body):
            yield (replace(s, body=b),)
    elif isinstance(s, (Invoke, SInvoke)) and s.var:
        yield (replace(s, var=""),)
    for field in _FIELDS.get(type(s), ()):
        for e in _exprs(getattr(s, field)):
            yield (replace(s, **{field: e}),)


_FIELDS = {Assign: ("value",), AStore: ("index", "value"), If: ("cond",), Exit: ("cond",), Loop: ("base", "trips"),
           Exchange: ("value", "index"), SwizzleStore: ("value",)}


def _exprs(e: Expr) -> Iterator[Expr]:
    """Simpler forms of one expression: an operand of its type, the constants 0 and 1, or one of
    its operands made simpler."""
    for c in children(e):
        if c.type == e.type:
            yield c
    if not isinstance(e, Const) and not is_vector(e.type):
        yield from _constants(e.type)
    for i, c in enumerate(children(e)):
        for simpler in _exprs(c):
            yield _with_child(e, i, simpler)


def _constants(t: str) -> Iterator[Const]:
    s = scalar(t)
    if s.is_float:
        yield Const(t, 0)
        yield Const(t, 0x3FF0000000000000 if s.size == 8 else 0x3F800000)
    else:
        yield Const(t, 0)
        yield Const(t, 1)


def _with_child(e: Expr, i: int, c: Expr) -> Expr:
    if isinstance(e, VECTOR_EXPRESSIONS):
        return with_child(e, i, c)
    if isinstance(e, (Load, ALoad)):
        return replace(e, index=c)
    if isinstance(e, Bin):
        return replace(e, a=c) if i == 0 else replace(e, b=c)
    if isinstance(e, (Un, Cast)):
        return replace(e, a=c)
    if isinstance(e, Call):
        return replace(e, args=e.args[:i] + (c,) + e.args[i + 1:])
    if isinstance(e, Select):
        return Select(*[c if j == i else x for j, x in enumerate((e.cond, e.a, e.b))])
    return e


def _unnamed(p: FlowProgram) -> list[FlowProgram]:
    """``p`` without everything nothing names any more (variables, arrays, helpers, inputs, struct
    variables, struct helpers and struct types), then without each such declaration alone (the
    failure may need one); empty when all are named."""
    bodies = [p.body, *(f.body for f in p.functions), *(f.body for f in p.struct_functions)]
    named: set[str] = {o.var for o in p.outputs}
    for body in bodies:
        for s in statements(body):
            named |= {getattr(s, k) for k in ("var", "array", "function") if isinstance(getattr(s, k, None), str)}
            named |= {ptr.name for ptr in getattr(s, "pointers", ())} | set(getattr(s, "structs", ()))
            for x in expressions(s):
                named |= {getattr(n, k) for n in walk(x) for k in ("name", "buffer", "array") if hasattr(n, k)}
    for f in p.functions:
        for x in walk(f.result):
            named |= {getattr(x, k) for k in ("name", "buffer", "array") if hasattr(x, k)}
    named |= {n.split(".")[0] for n in named if isinstance(n, str)}  # a member `s.m` names its struct variable
    kept = {field: tuple(d for d in getattr(p, field) if d.name in named)
            for field in ("variables", "arrays", "functions", "inputs", "struct_vars", "struct_functions")}
    types = {v.struct for v in kept["struct_vars"]} | {v.struct for f in kept["struct_functions"]
                                                        for v in (*f.structs, *f.locals)}
    kept["structs"] = tuple(d for d in p.structs if d.name in types)
    if all(kept[field] == getattr(p, field) for field in kept):
        return []
    return [replace(p, **kept)] + [replace(p, **{field: tuple(x for x in getattr(p, field) if x is not d)})
                                   for field in kept for d in getattr(p, field) if d not in kept[field]]


def _halved(p: FlowProgram) -> Iterator[FlowProgram]:
    """``p`` with one private array halved."""
    for i, a in enumerate(p.arrays):
        if a.space == "private" and a.length > 1:
            n = a.length // 2
            yield replace(p, arrays=p.arrays[:i] + (Array(a.name, a.type, n, a.space, a.init[:n]),) + p.arrays[i + 1:])
