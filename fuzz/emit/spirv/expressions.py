"""SPIR-V handlers of the expressions over scalars and vectors (lang.ops area "expressions";
oracles.expressions): components, vector literals, vloadn/vstoren, the operators and the
integer and relational built-ins."""

from __future__ import annotations

from fuzz.emit.spirv.module import Emitter, Module
from fuzz.emit.spirv.opcodes import PREDICATES, UNDEFINED
from fuzz.emit.spirv.values import broadcast, compare, compose, convert, operand, safe_divisor, truth
from lang.ir import Op
from lang.ops import INTEGER, INTEGER_BUILTINS, RELATIONAL_BUILTINS, Handlers
from lang.types import SIGNED_OF_BITS, UNSIGNED_OF_BITS, Type, operand_type, scalar

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


@emitter("swizzle")
def _swizzle(m: Module, op: Op, args: list[int]) -> int:
    """One component: OpCompositeExtract; several: OpVectorShuffle of the vector with itself, the
    undefined w lane of a 3-vector's .hi/.odd being the literal 0xFFFFFFFF."""
    w = op.args[0].type.width
    comps = op.attr("components")
    if op.type.width == 1:
        return m.op("OpCompositeExtract", m.type(op.type), args[0], comps[0])
    return m.op("OpVectorShuffle", m.type(op.type), args[0], args[0], *(c if c < w else UNDEFINED for c in comps))


def _lanes(m: Module, value: int, t: Type) -> list[int]:
    """The components of a scalar or vector value."""
    if t.width == 1:
        return [value]
    return [m.op("OpCompositeExtract", m.type(Type(t.scalar)), value, i) for i in range(t.width)]


@emitter("insert")
def _insert(m: Module, op: Op, args: list[int]) -> int:
    return compose(m, op.type, _lanes(m, args[1], op.args[1].type), args[0], list(op.attr("components")))


@emitter("vec")
def _vec(m: Module, op: Op, args: list[int]) -> int:
    if len(args) == 1:
        return broadcast(m, args[0], op.type)
    return compose(m, op.type, [lane for a, e in zip(args, op.args) for lane in _lanes(m, a, e.type)])


def _scalar_pointer(m: Module, buffer: str, elem: str) -> int:
    """The element pointer of ``buffer`` as a pointer to its scalar type."""
    return m.op("OpBitcast", m.pointer("CrossWorkgroup", m.type(Type(elem))), m.pointers[buffer])


@emitter("vload")
def _vload(m: Module, op: Op, args: list[int]) -> int:
    p = _scalar_pointer(m, op.args[0].buffer, op.type.scalar)
    return m.ext("vloadn", m.type(op.type), m.constant("ulong", op.attr("offset")), p, op.type.width)


@emitter("vstore")
def _vstore(m: Module, op: Op, args: list[int]) -> None:
    p = _scalar_pointer(m, m.target, op.type.scalar)
    m.ext("vstoren", m.void(), args[0], m.constant("ulong", op.attr("offset")), p)


def _std(m: Module, op: Op, args: list[int]) -> int:
    """An OpenCL.std instruction of the same name and operands (shuffle, select, ...)."""
    return m.ext(op.op, m.type(op.type), *args)


for _name in ("shuffle", "shuffle2", "select", "bitselect"):
    emitter(_name)(_std)


def _msb(m: Module, value: int, t: Type) -> int:
    """Whether each lane's most significant bit is set: a signed comparison with 0."""
    return m.op("OpSLessThan", m.bool_type(t.width), value, m.splat(t, 0))


def _nonzero(m: Module, value: int, t: Type) -> int:
    """x != 0 in the operand's own type (a NaN is nonzero: FUnordNotEqual)."""
    return compare(m, value, m.splat(t, 0.0 if t.elem.is_float else 0), t, "!=", ordered=False)


@emitter("ternary")
def _ternary(m: Module, op: Op, args: list[int]) -> int:
    """Scalars: c != 0; vectors: select(y, x, c), the MSB of each lane of c (§6.5.9)."""
    c, x, y = args
    ct = op.args[0].type
    cond = _msb(m, c, ct) if ct.is_vector else _nonzero(m, c, ct)
    return m.op("OpSelect", m.type(op.type), cond, x, y)


@emitter("compare")
def _compare(m: Module, op: Op, args: list[int]) -> int:
    """Ordered float comparisons, except != which is true with a NaN (FUnordNotEqual, §6.5.5)."""
    t = operand_type(*(a.type for a in op.args))
    x, y = (operand(m, v, e.type, t) for v, e in zip(args, op.args))
    how = op.attr("operator")
    return truth(m, compare(m, x, y, t, how, ordered=how != "!="), t)


@emitter("logic")
def _logic(m: Module, op: Op, args: list[int]) -> int:
    a, b = op.args
    t = a.type if a.type.is_vector else b.type
    conds = [_nonzero(m, operand(m, v, e.type, Type(e.type.scalar, t.width)), Type(e.type.scalar, t.width))
             for v, e in zip(args, op.args)]
    name = "OpLogicalAnd" if op.attr("operator") == "&&" else "OpLogicalOr"
    return truth(m, m.op(name, m.bool_type(t.width), *conds), t)


@emitter("not")
def _not(m: Module, op: Op, args: list[int]) -> int:
    t = op.args[0].type
    return truth(m, compare(m, args[0], m.splat(t, 0.0 if t.elem.is_float else 0), t, "=="), t)


@emitter("any")
@emitter("all")
def _any_all(m: Module, op: Op, args: list[int]) -> int:
    t = op.args[0].type
    folded = m.op("OpAny" if op.op == "any" else "OpAll", m.bool_type(), _msb(m, args[0], t))
    return m.op("OpSelect", m.type(op.type), folded, m.splat(op.type, 1), m.splat(op.type, 0))


@emitter("div")
def _div(m: Module, op: Op, args: list[int]) -> int:
    t = op.type
    x, y = (operand(m, v, e.type, t) for v, e in zip(args, op.args))
    signed = t.elem.signed
    name = {"/": "OpSDiv" if signed else "OpUDiv", "%": "OpSRem" if signed else "OpUMod"}[op.attr("operator")]
    return m.op(name, m.type(t), x, safe_divisor(m, x, y, t))


@emitter("shift")
def _shift(m: Module, op: Op, args: list[int]) -> int:
    """The count is masked to log2(N) bits explicitly: SPIR-V leaves a shift by N or more undefined."""
    t = op.type
    x = operand(m, args[0], op.args[0].type, t)
    count_t = op.args[1].type
    count = convert(m, args[1], count_t, Type(t.scalar if count_t.elem.signed == t.elem.signed
                                              else _same_signedness(count_t.scalar, t.scalar), count_t.width))
    count = broadcast(m, count, t) if count_t.width != t.width else count
    count = m.op("OpBitwiseAnd", m.type(t), count, m.splat(t, t.elem.bits - 1))
    if op.attr("operator") == "<<":
        return m.op("OpShiftLeftLogical", m.type(t), x, count)
    return m.op("OpShiftRightArithmetic" if t.elem.signed else "OpShiftRightLogical", m.type(t), x, count)


def _same_signedness(src: str, dst: str) -> str:
    """The integer type of ``dst``'s width with ``src``'s signedness: converting to it keeps the
    low bits (OpSConvert/OpUConvert; no width change is no instruction)."""
    return (SIGNED_OF_BITS if scalar(src).signed else UNSIGNED_OF_BITS)[scalar(dst).bits]


@emitter("complement")
def _complement(m: Module, op: Op, args: list[int]) -> int:
    return m.op("OpNot", m.type(op.type), convert(m, args[0], op.args[0].type, op.type))


def _integer_builtin(m: Module, op: Op, args: list[int]) -> int:
    """OpenCL.std instructions (lang.ops.IntegerBuiltin.spirv_name: s_/u_ by the operands'
    signedness); a scalar operand of the vector forms of min, max and clamp is replicated
    (OpenCL.std takes same-typed operands)."""
    t = op.args[0].type
    name = INTEGER[op.op].spirv_name(t.elem.signed)
    operands = [broadcast(m, a, Type(e.type.scalar, t.width)) if e.type.width != t.width else a
                for a, e in zip(args, op.args)]
    return m.ext(name, m.type(op.type), *operands)


for _name in (b.name for b in INTEGER_BUILTINS):
    emitter(_name)(_integer_builtin)


def _relational(m: Module, op: Op, args: list[int]) -> int:
    t = op.args[0].type
    return truth(m, m.op(PREDICATES[op.op], m.bool_type(t.width), *args), t)


for _name, _, _ in RELATIONAL_BUILTINS:
    emitter(_name)(_relational)
