"""The ``narrow`` pass: a statement of lane-wise operations over ``n``-vectors becomes the scalar
statement of the failing lane, unless an operator of it would then be promoted: a scalar char or
short operand of + - * / % & | ^ << >> ~ is computed in int (C99 §6.3.1.1, OpenCL C 3.0 §6.4.6,
§6.5.10) while a vector lane is not, so ``short4 << short4`` (count masked by 15) has no scalar
form of the same meaning (``short << short`` masks by 31 and is an int)."""

from __future__ import annotations

from dataclasses import replace

from lang.derive import work_item_lanes
from lang.ir import Buffer, Expr, Fill, Literal, Load, Op, Program, Store, walk
from lang.layout import input_values
from lang.ops import OPS
from lang.types import Type
from oracles import OPERATORS, operator_type
from triage.reduce.base import Candidates, Reducing

LANE_WISE = frozenset(name for name, spec in OPS.items() if spec.lane_wise)
"""Operations whose n-vector form computes each lane as the scalar form does on that lane
(§6.4.3, §6.5, §6.15.3: "component-wise"), so a vector statement narrows to its failing lane."""


def narrow_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
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
            bits = int(work_item_lanes(values[b.name], b, 0)[lane])
            buffers[b.name] = Buffer(b.name, t, "in", Fill(0, values=(bits,)))
            return Load(b.name, t)
        return replace(e, args=tuple(scalar_of(a) for a in e.args), type=t)

    value = scalar_of(stmt.value)
    if not _same_meaning(value):
        return
    buffers[out.name] = Buffer(out.name, Type(out.type.scalar), "out")
    yield replace(program, buffers=tuple(buffers.get(b.name, b) for b in program.buffers), body=(Store(out.name, value),))


def _same_meaning(value: Expr) -> bool:
    """Whether every operator of a narrowed statement has, as a scalar, the type it had as a vector
    lane (:func:`oracles.operands.operator_type`). A vector operator computes in its element type,
    a scalar char, uchar, short or ushort operand of + - * / % & | ^ << >> ~ is promoted to int (C99
    §6.3.1.1, OpenCL C 3.0 §6.4.6, §6.5.6, §6.5.10): ``short4 << short4`` masks each count by 15
    and wraps in 16 bits, ``short << short`` masks by 31 and is an int (its parent would see the
    int; a built-in would take its int overload), so such a statement stays a vector."""
    return all(n.type == operator_type(n) for n in walk(value) if isinstance(n, Op) and n.op in OPERATORS)
