"""SPIR-V handlers of the conversions (lang.ops area "conversions"; oracles.conversions):
convert, cast, as and arithmetic after the usual arithmetic conversions."""

from __future__ import annotations

from fuzz.emit.spirv.module import Emitter, Module
from fuzz.emit.spirv.opcodes import ARITH, BITWISE
from fuzz.emit.spirv.values import convert, operand
from lang.ir import Op
from lang.ops import Handlers
from lang.types import Type

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


@emitter("convert")
def _convert(m: Module, op: Op, args: list[int]) -> int:
    return convert(m, args[0], op.args[0].type, op.type, sat=bool(op.attr("sat")), rounding=op.attr("rounding"))


@emitter("cast")
def _cast(m: Module, op: Op, args: list[int]) -> int:
    """(T)x: the scalar converted with the default rounding, then replicated (§6.4.2)."""
    return operand(m, args[0], op.args[0].type, op.type)


@emitter("as")
def _as(m: Module, op: Op, args: list[int]) -> int:
    """as_T: OpBitcast; 4 lanes to 3 is a bitcast to 4 lanes of T, then lanes x, y, z."""
    src, dst = op.args[0].type, op.type
    four_to_three = (src.width, dst.width) == (4, 3)
    same_lanes = Type(dst.scalar, 4) if four_to_three else dst
    cast = args[0] if m.type(src) == m.type(same_lanes) else m.op("OpBitcast", m.type(same_lanes), args[0])
    if four_to_three:
        return m.op("OpVectorShuffle", m.type(dst), cast, cast, 0, 1, 2)
    return cast


@emitter("arith")
def _arith(m: Module, op: Op, args: list[int]) -> int:
    """x op y after the usual arithmetic conversions to the result type (C99 §6.3.1.8). OpIAdd,
    OpISub and OpIMul wrap; signed operands never overflow by construction."""
    t = op.type
    x, y = (operand(m, a, e.type, t) for a, e in zip(args, op.args))
    operator = op.attr("operator")
    if operator in BITWISE:
        return m.op(BITWISE[operator], m.type(t), x, y)
    return m.op(("OpF" if t.elem.is_float else "OpI") + ARITH[operator], m.type(t), x, y)
