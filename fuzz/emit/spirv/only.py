"""SPIR-V handlers of the forms only SPIR-V expresses (lang.ops area "spirv";
oracles.spirv_only): OpBitcast, OpVectorShuffle, remainders, extended arithmetic, OpSelect of a
comparison, OpAny/OpAll."""

from __future__ import annotations

from fuzz.emit.spirv.module import Emitter, Module
from fuzz.emit.spirv.values import compare, safe_divisor
from lang.ir import Op
from lang.ops import Handlers, spelling

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


@emitter("bitcast")
def _bitcast(m: Module, op: Op, args: list[int]) -> int:
    return m.op("OpBitcast", m.type(op.type), args[0])


@emitter("vector_shuffle")
def _shuffle(m: Module, op: Op, args: list[int]) -> int:
    """Component -1 of the IR is the literal 0xFFFFFFFF: an undefined result component."""
    return m.op("OpVectorShuffle", m.type(op.type), *args, *(c & 0xFFFFFFFF for c in op.attr("components")))


@emitter("rem")
def _rem(m: Module, op: Op, args: list[int]) -> int:
    """The divisor goes through OpSelect first: 1 where the remainder would be undefined
    (oracles.spirv_only.safe_divisor)."""
    t = op.type
    x, y = args
    divisor = safe_divisor(m, x, y, t)
    return m.op(spelling("rem", t, dict(op.attrs)), m.type(t), x, divisor)


@emitter("extended")
def _extended(m: Module, op: Op, args: list[int]) -> int:
    tid = m.type(op.type)
    pair = m.op(f"Op{op.attr('opcode')}", m.struct(tid, tid), *args)
    return m.op("OpCompositeExtract", tid, pair, op.attr("member"))


@emitter("op_select")
def _select(m: Module, op: Op, args: list[int]) -> int:
    a, b, x, y = args
    cond = compare(m, a, b, op.args[0].type, op.attr("compare"), op.attr("ordered", True))
    return m.op("OpSelect", m.type(op.type), cond, x, y)


@emitter("reduce")
def _reduce(m: Module, op: Op, args: list[int]) -> int:
    cond = compare(m, *args, op.args[0].type, op.attr("compare"), op.attr("ordered", True))
    truth = m.op("OpAny" if op.attr("reduce") == "any" else "OpAll", m.bool_type(), cond)
    return m.op("OpSelect", m.type(op.type), truth, m.splat(op.type, 1), m.splat(op.type, 0))
