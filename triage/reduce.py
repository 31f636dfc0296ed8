"""Reduce a disagreeing program inside the IR until no smaller program shows the same disagreement.

The *goal* is one disagreement: the same target (driver and path), the same operation (its
spelling, vector widths aside) and the same kind (wrong or imprecise result; for a build error,
crash or timeout, the same failure message, :func:`corpus.buckets.failure_message`). A candidate
is judged anew from its own program (its own expectations, run on the target) and kept when it
shows the goal again *and* no output lane disagrees whose counterpart in the program it was made
from agreed (:meth:`Reducer.keeps`: each pass says where its candidate's lanes come from,
:class:`Candidate`); a reduction that makes a disagreement appear has changed what the program
means, not found the bug. The passes run in a fixed order until none changes the program, so the
result is deterministic for a given program and driver:

0. shaped programs (area ``shapes``) first: :mod:`triage.reduce_shapes` (``twin``: the straight-line
   twin, kept when it shows the disagreement; ``shape_parts``; ``work_group``). A reduction that
   ends on a shaped program is *wrong code* (:attr:`Reduction.blame`): its twin does not show it.
1. ``statements``: keep the statement the disagreement is in alone, else halve the body
   (delta debugging), then drop the others one at a time.
2. ``work_items``: keep only the failing work-item, its inputs written as explicit values
   (:class:`lang.ir.Fill` ``values``); not for programs with shared (atomic) locations, whose
   histories need their own passes (:mod:`triage.reduce_atomics`: ``atomic_statements``,
   ``work_groups``, ``locations``, run after this one).
3. ``subexpressions``: replace an operation below the statement's root by a literal, or else an
   input buffer, holding the value the oracle computes for it (only where that value is certain:
   one allowed bit pattern on every lane), outermost first.
4. ``culprit``: an operation below the root of the one failing statement that the driver gets
   wrong on its own becomes the statement, and the goal moves to it (the faulty operation, not
   the outer one: a nested ``convert_long_sat`` of NaN under ``as_double(hadd(...))``), deepest
   first; the bug is then keyed on it (triage.session).
5. ``narrow``: a statement of lane-wise operations over ``n``-vectors becomes the scalar statement
   of the failing lane, unless an operator of it would then be promoted: a scalar char or short
   operand of + - * / % & | ^ << >> ~ is computed in int (C99 §6.3.1.1, OpenCL C 3.0 §6.4.6,
   §6.5.10) while a vector lane is not, so ``short4 << short4`` (count masked by 15) has no scalar
   form of the same meaning (``short << short`` masks by 31 and is an int).
6. ``values``: each input or literal lane becomes the simplest value of its input class
   (:mod:`oracles.classes`: 1.0 for an integral float, -1 for a negative integer, ...).
7. ``requirements``: fp64 or fp16 is no longer required once no type needs it.

Images programs also go through :mod:`triage.reduce_images` (``image_size``, ``sampler``,
``format``, ``texels``, before ``values``). A reduction that ends above one operation on one
work-item says why in :attr:`Reduction.why_not_minimal` (:func:`why_not_minimal`).

Every candidate is a valid program (:func:`lang.ir.validate`) and defined: the oracle raises
:class:`~oracles.evaluate.UndefinedBehaviour` on anything else and the candidate is dropped
before it reaches a driver.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

import numpy as np

from corpus.buckets import RESULT_KINDS, base_operation, failure_message
from fuzz.drivers import Target, Worker
from fuzz.drivers.capabilities import ftz_of
from lang.derive import restrict, twin
from lang.ir import Buffer, Expr, Fill, Literal, Load, Op, Program, Store, type_needs, walk
from lang.layout import input_values
from lang.ops import OPS
from lang.types import TYPE_CAPABILITIES, Type
from oracles.evaluate import UndefinedBehaviour, environment, evaluate
from oracles.operands import OPERATORS, operator_type
from triage import reduce_atomics, reduce_images, reduce_shapes
from triage.observe import observe
from triage.reduce_base import Candidate, Candidates, simplest

__all__ = ["PASSES", "Candidate", "Goal", "Reducer", "Reduction", "reduce_program", "simplest", "why_not_minimal"]

LANE_WISE = frozenset(name for name, spec in OPS.items() if spec.lane_wise)
"""Operations whose n-vector form computes each lane as the scalar form does on that lane
(§6.4.3, §6.5, §6.15.3: "component-wise"), so a vector statement narrows to its failing lane."""


@dataclass(frozen=True)
class Goal:
    """The disagreement a reduction keeps (see the module docstring)."""

    target: str
    operation: str
    kind: str
    types: str = ""  # source and destination types, widths aside
    failure: str = ""

    @classmethod
    def of(cls, row: dict[str, Any]) -> "Goal":
        if row["kind"] in RESULT_KINDS:
            return cls(row["target"], base_operation(row["operation"]), row["kind"], _types(row))
        return cls(row["target"], base_operation(row["operation"]), row["kind"],
                   failure=failure_message(row.get("actual_value", "")))

    def matches(self, row: dict[str, Any]) -> bool:
        """The same disagreement; for a shared location's row (named after every atomic operation on
        its buffer, fuzz.judge), also one naming fewer of the same operations: the history is the
        same bug with the operations it does not need gone (triage.reduce_atomics)."""
        if row["kind"] != self.kind:
            return False
        if self.kind in RESULT_KINDS:
            op = base_operation(row["operation"])
            fewer = str(row.get("input_class", "")).startswith("atomics:") and (
                set(op.split(" + ")) < set(self.operation.split(" + ")))
            return (op == self.operation or fewer) and _types(row) == self.types
        # a failure: the same message; the operation once the candidate is down to one statement
        return failure_message(row["actual_value"]) == self.failure and row["operation"] in (self.operation, "program")


def _types(row: dict[str, Any]) -> str:
    return base_operation(f"{row.get('src_type', '')} -> {row.get('dst_type', '')}")


@dataclass
class Reduction:
    original: Program
    reduced: Program
    rows: list[dict]  # the goal's rows on the reduced program
    candidates: int = 0
    seconds: float = 0.0
    passes: dict[str, int] = field(default_factory=dict)  # candidates kept per pass
    discarded: int = 0  # candidates that showed the goal but made another lane disagree
    culprit: bool = False  # the goal moved to a sub-expression wrong on its own (the ``culprit`` pass), or
    # to fewer of the atomic operations on its location (Goal.matches): the bug is then keyed on ``rows``
    why_not_minimal: str = ""  # why the result is not one operation on one work-item ("" when it is)
    blame: dict | None = None  # wrong code: the culprit fields of the reduced shape (triage.reduce_shapes.blame)
    bucket: str = ""  # the bucket the reduced rows are stored in (triage.session.reduce_stored; it may be another)


class Reducer:
    """One reduction on one target's worker (see the module docstring)."""

    def __init__(self, target: Target, worker: Worker, goal: Goal, budget_s: float = 120.0) -> None:
        self.target, self.worker, self.goal = target, worker, goal
        self.deadline = time.monotonic() + budget_s
        self.candidates = 0
        self.discarded = 0
        self.narrowed = False  # the goal moved to fewer atomic operations on its location (Goal.matches)
        self.seen: dict[str, tuple[list[dict], set[tuple[str, int]]] | None] = {}  # rows and lanes, by program id

    # -- the interestingness test ---------------------------------------------------------------

    def observed(self, program: Program) -> tuple[list[dict], set[tuple[str, int]]] | None:
        """The disagreement rows of ``program`` on the target and every output lane that disagrees,
        judged from its own program (its own expectations); None for an invalid or undefined
        program, which never reaches the driver."""
        if program.id not in self.seen:
            lanes: set[tuple[str, int]] = set()
            found = observe(program, self.target, self.worker, lanes)
            self.candidates += found is not None
            self.seen[program.id] = None if found is None else (found, lanes)
        return self.seen[program.id]

    def rows(self, program: Program) -> list[dict] | None:
        """The goal's rows when ``program`` shows it on the target; None otherwise (also for an
        invalid or undefined candidate, which never reaches the driver)."""
        seen = self.observed(program)
        return ([r for r in seen[0] if self.goal.matches(r)] or None) if seen else None

    def keeps(self, candidate: Candidate, source: Program) -> bool:
        """Whether every output lane that disagrees on ``candidate`` is a lane that disagreed on
        ``source``, the program it was made from (:meth:`Candidate.origin`). By induction from the
        first program, a kept reduction never shows a disagreement where the original agreed."""
        before, after = self.observed(source), self.observed(candidate.program)
        names = {b.name for b in source.outputs}
        return before is not None and after is not None and all(
            buffer in names and candidate.origin(buffer, lane, source) in before[1] for buffer, lane in after[1])

    def accepted(self, candidate: Candidate, source: Program) -> list[dict] | None:
        """The rows ``candidate`` is kept with, or None. A culprit candidate is kept with its
        wrong rows, and the goal moves to them; any other with the goal's rows, unless it makes a
        lane disagree that agreed on ``source`` (:meth:`keeps`: counted as discarded)."""
        if candidate.retarget:
            seen = self.observed(candidate.program)
            wrong = [r for r in seen[0] if r["kind"] in RESULT_KINDS] if seen else []
            if wrong:
                self.goal = Goal.of(wrong[0])
            return wrong or None
        hit = self.rows(candidate.program)
        if hit and not self.keeps(candidate, source):
            self.discarded += 1  # the goal, but also a disagreement the program did not have
            return None
        if hit and base_operation(hit[0]["operation"]) != self.goal.operation:  # fewer atomic operations
            self.goal = replace(self.goal, operation=base_operation(hit[0]["operation"]))
            self.narrowed = True
            hit = [r for r in hit if self.goal.matches(r)]
        return hit

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    # -- the passes ----------------------------------------------------------------------------

    def run(self, program: Program, rows: list[dict]) -> Reduction:
        """The fixpoint of the passes from ``program`` (whose goal rows are ``rows``); the
        caller times the whole reduction."""
        current, current_rows = program, rows
        visited = {program.id}  # a candidate that undoes an earlier one is not taken again
        passes: dict[str, int] = {}
        changed, culprit = True, False
        while changed and not self.out_of_time():
            changed = False
            for name, make in PASSES:
                for made in make(current, current_rows, self):
                    if self.out_of_time():
                        break
                    candidate = made if isinstance(made, Candidate) else Candidate(made)
                    if candidate.program.id in visited:
                        continue
                    hit = self.accepted(candidate, current)
                    if hit:
                        current, current_rows = candidate.program, hit
                        visited.add(current.id)
                        culprit |= candidate.retarget
                        passes[name] = passes.get(name, 0) + 1
                        changed = True
                        break  # on to the next pass; the while loop runs them all again on the smaller program
        why = why_not_minimal(current, current_rows, self.out_of_time())
        blame, twinned = None, program.shape is not None and current.shape is None
        if current.shape is not None:  # the twin was not kept: it may still show the disagreement
            if self.rows(twin(current)):  # on other lanes too: the built-in's bug, keyed as the built-in's
                twinned = True
            else:  # wrong code (triage.reduce_shapes)
                blame = reduce_shapes.blame(current)
                current_rows = [{**r, "culprit": reduce_shapes.culprit_json(current)} for r in current_rows]
        return Reduction(program, current, current_rows, self.candidates, passes=passes, discarded=self.discarded,
                         culprit=culprit or self.narrowed or twinned or blame is not None, why_not_minimal=why,
                         blame=blame)


def _statements(program: Program, rows: list[dict], _: Reducer) -> Candidates:
    n = len(program.body)
    if n == 1:
        return
    where = [i for i, s in enumerate(program.body) if s.buffer in {r["buffer"] for r in rows}]
    if where and len(where) < n:
        yield restrict(program, where[:1])
        yield restrict(program, where)
    for chunk in (n // 2, max(1, n // 4)):
        for start in range(0, n, chunk):
            keep = [i for i in range(n) if not start <= i < start + chunk]
            if keep:
                yield restrict(program, keep)
    for i in range(n):
        yield restrict(program, [j for j in range(n) if j != i])


def _work_items(program: Program, rows: list[dict], _: Reducer) -> Candidates:
    if program.global_size == 1 or program.shared:  # shared locations: reduce_atomics' work_groups
        return
    item = max(0, min(r["work_item"] for r in rows))
    values = input_values(program)
    buffers = tuple(
        replace(b, fill=Fill(0, values=tuple(int(v) for v in _lanes(values[b.name], b, item))))
        if b.role == "in" else b for b in program.buffers)
    yield Candidate(replace(program, buffers=buffers, global_size=1, local_size=0), item=item)


def _lanes(values: np.ndarray, b: Buffer, item: int) -> np.ndarray:
    n = b.type.mem_lanes
    return np.ascontiguousarray(values[item * n:(item + 1) * n]).view(b.type.elem.bits_dtype)


def _paths(expr: Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Expr]]:
    """Every node with its path of argument indices, parents first."""
    yield path, expr
    if isinstance(expr, Op):
        for i, a in enumerate(expr.args):
            yield from _paths(a, path + (i,))


def _replace(expr: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    if not path:
        return new
    assert isinstance(expr, Op)
    args = list(expr.args)
    args[path[0]] = _replace(args[path[0]], path[1:], new)
    return replace(expr, args=tuple(args))


def _fresh_input(program: Program, t: Type, bits: tuple[int, ...]) -> tuple[Buffer, Load]:
    names = {b.name for b in program.buffers}
    name = next(f"r{i}" for i in range(len(names) + 1) if f"r{i}" not in names)
    lanes = bits + (0,) * (t.mem_lanes - t.width)
    return Buffer(name, t, "in", Fill(0, values=lanes)), Load(name, t)


def _subexpressions(program: Program, rows: list[dict], reducer: Reducer) -> Candidates:
    if program.global_size != 1 or program.shared:
        return
    inputs = input_values(program)
    ftz = ftz_of(reducer.target)
    for index, stmt in enumerate(program.body):
        for path, node in _paths(stmt.value):
            if not path or not isinstance(node, Op):
                continue
            try:
                values, certain = evaluate(node, program, inputs, environment(program, ftz)).certain()
            except (UndefinedBehaviour, ValueError, KeyError):
                continue
            if not certain.all():
                continue
            bits = tuple(int(b) for b in np.ascontiguousarray(values).view(node.type.elem.bits_dtype)[:node.type.width])
            yield _with_statement(program, index, _replace(stmt.value, path, Literal(node.type, bits)))
            buffer, load = _fresh_input(program, node.type, bits)
            yield _with_statement(replace(program, buffers=program.buffers + (buffer,)), index,
                                  _replace(stmt.value, path, load))


def _culprit(program: Program, rows: list[dict], _: Reducer) -> Candidates:
    """The faulty operation, not the outer one: an operation below the root of the one failing
    statement becomes the statement itself, over the same inputs; if the driver gets it wrong on
    its own, it is the culprit and the goal moves to it (:attr:`Candidate.retarget`; the bug is
    then keyed on it, triage.session). Deepest first, so the smallest sub-expression that is
    itself wrong is kept; where none is wrong alone (the compiler folded or fused them), the
    smallest failing composite stays."""
    if program.global_size != 1 or program.shared or len(program.body) != 1 or program.body[0].pointee:
        return
    stmt = program.body[0]
    found = [(path, node) for path, node in _paths(stmt.value) if path and isinstance(node, Op)]
    for _, node in sorted(found, key=lambda pn: -len(pn[0])):
        buffers = tuple(Buffer(b.name, node.type, "out") if b.name == stmt.buffer else b for b in program.buffers)
        yield Candidate(restrict(replace(program, buffers=buffers, body=(Store(stmt.buffer, node),)), [0]),
                        retarget=True)


def _with_statement(program: Program, index: int, value: Expr) -> Program:
    body = list(program.body)
    body[index] = Store(body[index].buffer, value)
    return restrict(replace(program, body=tuple(body)), list(range(len(body))))  # drops unused inputs


def _narrow(program: Program, rows: list[dict], _: Reducer) -> Candidates:
    """The scalar statement of the failing lane, where it means what that lane of the vector
    statement means: lane-wise operations only (§6.4.3, §6.5, §6.15.3 "component-wise"), and no
    operator whose scalar form is promoted (:func:`_same_meaning`)."""
    if program.global_size != 1 or program.shared or len(program.body) != 1:
        return
    stmt = program.body[0]
    out = program.buffer(stmt.buffer)
    width = out.type.width
    if width == 1 or not all(isinstance(n, (Load, Literal)) or (n.op in LANE_WISE and n.type.width == width)
                             for n in walk(stmt.value)):
        return
    lane = rows[0]["lane"] % out.type.mem_lanes
    if lane >= width:
        return
    values = input_values(program)
    buffers: dict[str, Buffer] = {}

    def scalar_of(e: Expr) -> Expr:
        if e.type.width == 1:
            return e
        t = Type(e.type.scalar)
        if isinstance(e, Literal):
            return Literal(t, (e.bits[lane],))
        if isinstance(e, Load):
            b = program.buffer(e.buffer)
            bits = int(_lanes(values[b.name], b, 0)[lane])
            buffers[b.name] = Buffer(b.name, t, "in", Fill(0, values=(bits,)))
            return Load(b.name, t)
        return replace(e, args=tuple(scalar_of(a) for a in e.args), type=t)

    value = scalar_of(stmt.value)
    if not _same_meaning(value):
        return
    buffers[out.name] = Buffer(out.name, Type(out.type.scalar), "out")
    yield Candidate(replace(program, buffers=tuple(buffers.get(b.name, b) for b in program.buffers),
                            body=(Store(out.name, value),)), lane=lane)


def _same_meaning(value: Expr) -> bool:
    """Whether every operator of a narrowed statement has, as a scalar, the type it had as a vector
    lane (:func:`oracles.operands.operator_type`). A vector operator computes in its element type,
    a scalar char, uchar, short or ushort operand of + - * / % & | ^ << >> ~ is promoted to int (C99
    §6.3.1.1, OpenCL C 3.0 §6.4.6, §6.5.6, §6.5.10): ``short4 << short4`` masks each count by 15
    and wraps in 16 bits, ``short << short`` masks by 31 and is an int (its parent would see the
    int; a built-in would take its int overload), so such a statement stays a vector."""
    return all(n.type == operator_type(n) for n in walk(value) if isinstance(n, Op) and n.op in OPERATORS)


def _values(program: Program, rows: list[dict], _: Reducer) -> Candidates:
    if program.global_size != 1 or program.shared:
        return
    edits: list[tuple[Callable[[Program], Program], int, int]] = []  # (rewrite, old, new) per lane
    for b in program.inputs:
        if not b.fill.values:
            continue
        for i, old in enumerate(b.fill.values):
            new = simplest(old, b.type.scalar) if i % b.type.mem_lanes < b.type.width else 0
            if new != old:
                edits.append((_set_input(b.name, i, new), old, new))
    for index, stmt in enumerate(program.body):
        for path, node in _paths(stmt.value):
            if isinstance(node, Literal):
                for i, old in enumerate(node.bits):
                    new = simplest(old, node.type.scalar)
                    if new != old:
                        edits.append((_set_literal(index, path, i, new), old, new))
    if len(edits) > 1:
        whole = program
        for rewrite, _, _ in edits:
            whole = rewrite(whole)
        yield whole
    for rewrite, _, _ in edits:
        yield rewrite(program)


def _set_input(name: str, lane: int, value: int) -> Callable[[Program], Program]:
    def rewrite(p: Program) -> Program:
        b = p.buffer(name)
        values = list(b.fill.values)
        values[lane] = value
        return replace(p, buffers=tuple(replace(x, fill=replace(x.fill, values=tuple(values))) if x.name == name
                                        else x for x in p.buffers))
    return rewrite


def _set_literal(index: int, path: tuple[int, ...], lane: int, value: int) -> Callable[[Program], Program]:
    def rewrite(p: Program) -> Program:
        stmt = p.body[index]
        node = stmt.value
        for i in path:
            node = node.args[i]
        bits = list(node.bits)
        bits[lane] = value
        return _with_statement(p, index, _replace(stmt.value, path, Literal(node.type, tuple(bits))))
    return rewrite


def _requirements(program: Program, rows: list[dict], _: Reducer) -> Candidates:
    """Drop fp64/fp16 once no type of the program needs them (more drivers can then run it)."""
    unused = (program.requires & TYPE_CAPABILITIES) - type_needs(program)
    if unused:
        yield replace(program, requires=program.requires - unused)


PASSES: tuple[tuple[str, Callable[[Program, list[dict], Reducer], Candidates]], ...] = (
    *reduce_shapes.PASSES,
    ("statements", _statements),
    ("work_items", _work_items),
    *reduce_atomics.PASSES,
    ("subexpressions", _subexpressions),
    ("culprit", _culprit),
    ("narrow", _narrow),
    *reduce_images.PASSES,
    ("values", _values),
    ("requirements", _requirements),
)


def why_not_minimal(program: Program, rows: list[dict], stopped: bool = False) -> str:
    """Why a reduced program is not one operation on one work-item ("" when it is): what the
    disagreement needs (an atomic history's contending work-items, an image read's texels: the pass
    modules' ``why``), the statements, work-items or operations no smaller candidate showed it
    without, and whether the time budget ended the reduction."""
    ops = sum(isinstance(n, Op) for s in program.body for n in walk(s.value))
    if program.shared:
        parts = [reduce_atomics.why(program, rows)]
    else:
        parts = [reduce_images.why(program, rows) if program.images else ""]
        if len(program.body) > 1:
            parts.append(f"{len(program.body)} statements: none shows it alone")
        if program.global_size > 1:
            parts.append(f"{program.global_size} work-items: no single one shows it")
        if len(program.body) == 1 and ops > 1:
            parts.append(f"{ops} operations together: none shows it alone")
    parts = [p for p in parts if p]
    if parts and stopped:
        parts.append("the time budget ended the reduction")
    return "; ".join(parts)


def reduce_program(program: Program, row: dict[str, Any], target: Target, worker: Worker,
                   budget_s: float = 120.0) -> Reduction | None:
    """Reduce ``program`` keeping the disagreement of ``row`` on ``target``; None when the program
    does not show it when run again (a flaky disagreement is not reduced)."""
    start = time.monotonic()
    reducer = Reducer(target, worker, Goal.of(row), budget_s)
    rows = reducer.rows(program)
    if not rows:
        return None
    reduction = reducer.run(program, rows)
    reduction.seconds = time.monotonic() - start
    return reduction
