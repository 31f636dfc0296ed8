"""Program -> SPIR-V module (binary words) for the OpenCL environment.

The module is what the OpenCL C emitter's kernel means, written instruction by instruction
(SPIR-V 1.0; Addresses, Kernel and the Int8/Int16/Int64/Float16/Float64/Vector16 capabilities a
program needs; Physical64 addressing; OpenCL memory model; OpenCL.std imported). Opcodes and
enumerants come from the official grammar (:mod:`fuzz.emit.grammar`).

The kernel ``clfuzz(in, out)`` takes the same packed byte buffers as the OpenCL C one
(:mod:`fuzz.layout`): element ``gid`` of a buffer lives at byte ``offset + gid * sizeof(T)``.

Conversions follow the SPIR-V environment for OpenCL (000 §6.2-6.3, DIGEST §3): integer types
carry no signedness (Kernel: Signedness 0), so a same-width int <-> uint conversion is no
instruction; OpSConvert/OpUConvert extend by the source's signedness; float -> integer is
OpConvertFToS/FToU (round toward zero unless an FPRoundingMode decoration says otherwise);
integer -> float is OpConvertSToF/UToF (round to nearest even by default); _sat is the
SaturatedConversion decoration, or OpSatConvertSToU/UToS when the signedness changes;
FPRoundingMode is only put on the five conversions that allow it. Vectors are built from
OpUndef with OpCompositeInsert (the LLVM translator crashes on OpCompositeConstruct with
non-constant operands, drivers.md).
"""

from __future__ import annotations

import struct
from typing import Callable

import numpy as np

from fuzz.emit.grammar import grammar
from fuzz.emit.opencl_c import KERNEL_NAME
from fuzz.ir import Expr, Literal, Load, Op, Program
from fuzz.images import ADDRESSING, DIMS, FILTERS
from fuzz.maths import FUNCTIONS
from fuzz.layout import layout, sampler_arguments
from fuzz.ops import ATOMICS, INTEGER_BUILTINS, RELATIONAL_BUILTINS, Handlers, spelling
from fuzz.types import SIGNED_OF_BITS, UNSIGNED_OF_BITS, Type, operand_type, scalar, truth_type

VERSION = (1, 0)
GENERATOR = 0  # no registered generator id


def _string_words(text: str) -> list[int]:
    """A LiteralString: UTF-8, NUL-terminated, padded with NULs to whole words."""
    raw = text.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


class Module:
    """A SPIR-V module under construction: logical-layout sections, type and constant caches."""

    SECTIONS = ("capability", "ext_import", "memory_model", "entry_point", "execution_mode", "debug",
                "annotation", "global", "function")

    def __init__(self) -> None:
        self.g = grammar()
        self.bound = 1
        self.sections: dict[str, list[int]] = {s: [] for s in self.SECTIONS}
        self._types: dict[tuple, int] = {}
        self._constants: dict[tuple, int] = {}
        self._capabilities: set[str] = set()
        self.std = 0  # the id of the imported OpenCL.std instruction set
        # the kernel being written: each buffer's element pointer, the statement's output buffer
        self.pointers: dict[str, int] = {}
        self.target = ""
        # atomics: each shared buffer's first element (of the work-group's partition), its storage
        # class, and the work-item's ids (ulong) an atomic's location is computed from
        self.shared: dict[str, tuple[int, str]] = {}
        self.ids: dict[str, int] = {}
        # images: each image parameter and its type; each sampler (a parameter or a constant)
        self.images: dict[str, tuple[int, int]] = {}
        self.samplers: dict[str, int] = {}

    def id(self) -> int:
        self.bound += 1
        return self.bound - 1

    def inst(self, section: str, opname: str, *operands: int | str) -> None:
        words: list[int] = []
        for o in operands:
            words.extend(_string_words(o) if isinstance(o, str) else [o])
        self.sections[section].extend([(len(words) + 1) << 16 | self.g.opcode(opname), *words])

    def op(self, opname: str, result_type: int, *operands: int) -> int:
        """A function-body instruction with a result; returns the result id."""
        rid = self.id()
        self.inst("function", opname, result_type, rid, *operands)
        return rid

    def ext(self, name: str, result_type: int, *operands: int) -> int:
        """An OpenCL.std extended instruction (OpExtInst)."""
        return self.op("OpExtInst", result_type, self.std, self.g.opencl_std[name], *operands)

    def capability(self, name: str) -> None:
        if name not in self._capabilities:
            self._capabilities.add(name)
            self.inst("capability", "OpCapability", self.g.enum("Capability", name))

    def decorate(self, target: int, decoration: str, *literals: int) -> None:
        self.inst("annotation", "OpDecorate", target, self.g.enum("Decoration", decoration), *literals)

    # -- types ---------------------------------------------------------------------------------

    def _type(self, key: tuple, opname: str, *operands: int) -> int:
        if key not in self._types:
            tid = self.id()
            self.inst("global", opname, tid, *operands)
            self._types[key] = tid
        return self._types[key]

    def void(self) -> int:
        return self._type(("void",), "OpTypeVoid")

    def scalar_type(self, name: str) -> int:
        s = scalar(name)
        if s.is_float:
            self.capability({16: "Float16", 32: "Kernel", 64: "Float64"}[s.bits])
            return self._type(("float", s.bits), "OpTypeFloat", s.bits)
        self.capability({8: "Int8", 16: "Int16", 32: "Kernel", 64: "Int64"}[s.bits])
        return self._type(("int", s.bits), "OpTypeInt", s.bits, 0)  # Kernel: Signedness 0

    def type(self, t: Type) -> int:
        elem = self.scalar_type(t.scalar)
        if t.width == 1:
            return elem
        if t.width > 4:
            self.capability("Vector16")
        return self._type(("vector", elem, t.width), "OpTypeVector", elem, t.width)

    def sampler_type(self) -> int:
        return self._type(("sampler",), "OpTypeSampler")

    def bool_type(self, width: int = 1) -> int:
        """OpTypeBool, or a vector of it (comparison results, OpSelect conditions)."""
        b = self._type(("bool",), "OpTypeBool")
        if width == 1:
            return b
        if width > 4:
            self.capability("Vector16")
        return self._type(("vector", b, width), "OpTypeVector", b, width)

    def struct(self, *members: int) -> int:
        return self._type(("struct", members), "OpTypeStruct", *members)

    def pointer(self, storage: str, pointee: int) -> int:
        sc = self.g.enum("StorageClass", storage)
        return self._type(("pointer", sc, pointee), "OpTypePointer", sc, pointee)

    def function_type(self, ret: int, *params: int) -> int:
        return self._type(("function", ret, params), "OpTypeFunction", ret, *params)

    # -- constants -----------------------------------------------------------------------------

    def constant(self, name: str, bits: int) -> int:
        """A scalar constant of type ``name`` with exactly these bits (low word first)."""
        s = scalar(name)
        tid = self.scalar_type(name)
        key = ("const", tid, bits)
        if key not in self._constants:
            cid = self.id()
            words = [bits & 0xFFFFFFFF, bits >> 32] if s.bits == 64 else [bits]
            self.inst("global", "OpConstant", tid, cid, *words)
            self._constants[key] = cid
        return self._constants[key]

    def literal(self, lit: Literal) -> int:
        lanes = [self.constant(lit.type.scalar, b) for b in lit.bits]
        if lit.type.width == 1:
            return lanes[0]
        tid = self.type(lit.type)
        key = ("composite", tid, tuple(lanes))
        if key not in self._constants:
            cid = self.id()
            self.inst("global", "OpConstantComposite", tid, cid, *lanes)
            self._constants[key] = cid
        return self._constants[key]

    def splat(self, t: Type, value: float | int) -> int:
        """The constant ``value`` (a number) in every lane of ``t``."""
        elem = t.elem
        bits = int(np.array(value, elem.dtype).view(elem.bits_dtype))
        return self.literal(Literal(t, (bits,) * t.width))

    def undef(self, tid: int) -> int:
        key = ("undef", tid)
        if key not in self._constants:
            cid = self.id()
            self.inst("global", "OpUndef", tid, cid)
            self._constants[key] = cid
        return self._constants[key]

    def words(self) -> list[int]:
        header = [self.g.magic, VERSION[0] << 16 | VERSION[1] << 8, GENERATOR, self.bound, 0]
        return header + [w for s in self.SECTIONS for w in self.sections[s]]


# -- conversions (one helper for convert, cast, implicit conversions) -----------------------------


def convert(m: Module, value: int, src: Type, dst: Type, *, sat: bool = False, rounding: str | None = None) -> int:
    """``value`` of type ``src`` converted lane-wise to ``dst`` (same lane count), as
    ``convert_dst[_sat][_rounding]`` (OpenCL C §6.4.3; SPIR-V env 000 §6.2-6.3, DIGEST §3)."""
    s, d = src.elem, dst.elem
    tid = m.type(dst)

    def decorated(opname: str) -> int:
        rid = m.op(opname, tid, value)
        if sat and d.is_int and opname not in ("OpSatConvertSToU", "OpSatConvertUToS"):
            m.decorate(rid, "SaturatedConversion")
        if rounding and opname in ("OpConvertFToU", "OpConvertFToS", "OpConvertSToF", "OpConvertUToF", "OpFConvert"):
            m.decorate(rid, "FPRoundingMode", m.g.enum("FPRoundingMode", rounding.upper()))
        return rid

    if s.is_float and d.is_float:
        return value if s.bits == d.bits else decorated("OpFConvert")
    if s.is_float:
        return decorated("OpConvertFToS" if d.signed else "OpConvertFToU")
    if d.is_float:
        return decorated("OpConvertSToF" if s.signed else "OpConvertUToF")
    if sat and s.signed != d.signed:
        return decorated("OpSatConvertSToU" if s.signed else "OpSatConvertUToS")
    if s.bits == d.bits:  # same width, same type in SPIR-V (and in range when saturating)
        return value
    return decorated("OpSConvert" if s.signed else "OpUConvert")


def _compose(m: Module, t: Type, lanes: list[int], into: int | None = None, at: list[int] | None = None) -> int:
    """A vector of type ``t`` with ``lanes`` inserted at positions ``at`` (all, in order, by
    default) of ``into`` (undefined by default): OpCompositeInsert, never OpCompositeConstruct of
    non-constants, which the LLVM translator rejects (drivers.md)."""
    out = m.undef(m.type(t)) if into is None else into
    for lane, position in zip(lanes, range(t.width) if at is None else at):
        out = m.op("OpCompositeInsert", m.type(t), lane, out, position)
    return out


def broadcast(m: Module, value: int, t: Type) -> int:
    """A scalar replicated into every lane of the vector type ``t``."""
    return value if t.width == 1 else _compose(m, t, [value] * t.width)


def operand(m: Module, value: int, src: Type, dst: Type) -> int:
    """An operand converted to the element type of ``dst`` (the usual arithmetic conversions) and,
    a scalar beside a vector, replicated (OpenCL C 3.0 §6.5.1)."""
    return broadcast(m, convert(m, value, src, Type(dst.scalar, src.width)), dst) if src.width != dst.width \
        else convert(m, value, src, dst)


EMITTERS: Handlers[Callable[[Module, Op, list[int]], int]] = Handlers()
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


_ARITH = {"+": "Add", "-": "Sub", "*": "Mul"}
_BITWISE = {"&": "OpBitwiseAnd", "|": "OpBitwiseOr", "^": "OpBitwiseXor"}


@emitter("arith")
def _arith(m: Module, op: Op, args: list[int]) -> int:
    """x op y after the usual arithmetic conversions to the result type (C99 §6.3.1.8). OpIAdd,
    OpISub and OpIMul wrap; signed operands never overflow by construction."""
    t = op.type
    x, y = (operand(m, a, e.type, t) for a, e in zip(args, op.args))
    operator = op.attr("operator")
    if operator in _BITWISE:
        return m.op(_BITWISE[operator], m.type(t), x, y)
    return m.op(("OpF" if t.elem.is_float else "OpI") + _ARITH[operator], m.type(t), x, y)


def safe_divisor(m: Module, x: int, y: int, t: Type) -> int:
    """``y``, or 1 where the division or remainder would be undefined: y == 0, or y == -1 with x
    the minimum of a signed type (oracles.spirv_only.safe_divisor, which the oracle of both uses)."""
    zero = m.splat(t, 0.0 if t.elem.is_float else 0)
    unsafe = compare(m, y, zero, t, "==")
    if t.elem.is_int and t.elem.signed:
        overflow = m.op("OpLogicalAnd", m.bool_type(t.width), compare(m, x, m.splat(t, t.elem.min), t, "=="),
                        compare(m, y, m.splat(t, -1), t, "=="))
        unsafe = m.op("OpLogicalOr", m.bool_type(t.width), unsafe, overflow)
    return m.op("OpSelect", m.type(t), unsafe, m.splat(t, 1), y)


# -- forms only SPIR-V expresses (fuzz.ops area "spirv"; oracles.spirv_only) -----------------------

_COMPARE_NAMES = {"==": "Equal", "!=": "NotEqual", "<": "LessThan", "<=": "LessThanEqual",
                  ">": "GreaterThan", ">=": "GreaterThanEqual"}


def compare(m: Module, a: int, b: int, t: Type, how: str, ordered: bool = True) -> int:
    """The Boolean (vector) ``a how b``: OpFOrd*/OpFUnord* for floats, OpS*/OpU* by the operands'
    signedness for integers, OpIEqual/OpINotEqual for equality."""
    name = _COMPARE_NAMES[how]
    if t.elem.is_float:
        opname = f"Op{'FOrd' if ordered else 'FUnord'}{name}"
    elif how in ("==", "!="):
        opname = f"OpI{name}"
    else:
        opname = f"Op{'S' if t.elem.signed else 'U'}{name}"
    return m.op(opname, m.bool_type(t.width), a, b)


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


# -- expressions (fuzz.ops area "expressions"; oracles.expressions) --------------------------------

UNDEFINED = 0xFFFFFFFF  # an OpVectorShuffle component literal that leaves the component undefined


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
    return _compose(m, op.type, _lanes(m, args[1], op.args[1].type), args[0], list(op.attr("components")))


@emitter("vec")
def _vec(m: Module, op: Op, args: list[int]) -> int:
    if len(args) == 1:
        return broadcast(m, args[0], op.type)
    return _compose(m, op.type, [lane for a, e in zip(args, op.args) for lane in _lanes(m, a, e.type)])


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


def truth(m: Module, cond: int, operand: Type) -> int:
    """A Boolean (vector) as the OpenCL C result: int 1/0 for a scalar operand, -1/0 lanes of the
    same-sized signed type for vectors (OpenCL C 3.0 §6.5.4)."""
    t = truth_type(operand)
    return m.op("OpSelect", m.type(t), cond, m.splat(t, -1 if operand.is_vector else 1), m.splat(t, 0))


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


_UNPREFIXED = {"rotate", "clz", "popcount"}


def _integer_builtin(m: Module, op: Op, args: list[int]) -> int:
    """OpenCL.std s_/u_ instructions by the operands' signedness; a scalar operand of the vector
    forms of min, max and clamp is replicated (OpenCL.std takes same-typed operands)."""
    t = op.args[0].type
    name = op.op if op.op in _UNPREFIXED else f"{'s' if t.elem.signed else 'u'}_{op.op}"
    operands = [broadcast(m, a, Type(e.type.scalar, t.width)) if e.type.width != t.width else a
                for a, e in zip(args, op.args)]
    return m.ext(name, m.type(op.type), *operands)


for _name, _, _ in INTEGER_BUILTINS:
    emitter(_name)(_integer_builtin)

_PREDICATES = {"isequal": "OpFOrdEqual", "isnotequal": "OpFUnordNotEqual", "isgreater": "OpFOrdGreaterThan",
               "isgreaterequal": "OpFOrdGreaterThanEqual", "isless": "OpFOrdLessThan",
               "islessequal": "OpFOrdLessThanEqual", "islessgreater": "OpFOrdNotEqual", "isfinite": "OpIsFinite",
               "isinf": "OpIsInf", "isnan": "OpIsNan", "isnormal": "OpIsNormal", "isordered": "OpOrdered",
               "isunordered": "OpUnordered", "signbit": "OpSignBitSet"}


def _relational(m: Module, op: Op, args: list[int]) -> int:
    t = op.args[0].type
    return truth(m, m.op(_PREDICATES[op.op], m.bool_type(t.width), *args), t)


for _name, _, _ in RELATIONAL_BUILTINS:
    emitter(_name)(_relational)


class _Kernel:
    """Emission state of one program's kernel function."""

    def __init__(self, m: Module, program: Program) -> None:
        self.m, self.program = m, program
        self.layout = layout(program)
        self.ulong = m.type(Type("ulong"))
        self.uchar_ptr = m.pointer("CrossWorkgroup", m.type(Type("uchar")))

    def address(self, base: int, offset: int, t: Type, gid: int) -> int:
        """``(global T*)(base + offset) + gid`` as a pointer to T."""
        m = self.m
        index = m.op("OpIMul", self.ulong, gid, m.constant("ulong", t.size))
        index = m.op("OpIAdd", self.ulong, index, m.constant("ulong", offset))
        byte = m.op("OpInBoundsPtrAccessChain", self.uchar_ptr, base, index)
        return m.op("OpBitcast", m.pointer("CrossWorkgroup", m.type(t)), byte)

    def expression(self, e: Expr, pointers: dict[str, int]) -> int:
        m = self.m
        if isinstance(e, Load):
            return m.op("OpLoad", m.type(e.type), pointers[e.buffer], m.g.enum("MemoryAccess", "Aligned"), e.type.size)
        if isinstance(e, Literal):
            return m.literal(e)
        return EMITTERS[e.op](m, e, [self.expression(a, pointers) for a in e.args])


def _builtin(m: Module, name: str) -> int:
    """An Input variable of the work-item built-in ``name`` (a ulong3), declared constant."""
    var = m.id()
    m.inst("global", "OpVariable", m.pointer("Input", m.type(Type("ulong", 3))), var, m.g.enum("StorageClass", "Input"))
    m.decorate(var, "BuiltIn", m.g.enum("BuiltIn", name))
    m.decorate(var, "Constant")
    return var


def _if(m: Module, cond: int, then) -> None:
    """``if (cond) { then() }`` as a selection construct."""
    body, merge = m.id(), m.id()
    m.inst("function", "OpSelectionMerge", merge, m.g.enum("SelectionControl", "None"))
    m.inst("function", "OpBranchConditional", cond, body, merge)
    m.inst("function", "OpLabel", body)
    then()
    m.inst("function", "OpBranch", merge)
    m.inst("function", "OpLabel", merge)


def barrier(m: Module) -> None:
    """barrier(CLK_LOCAL_MEM_FENCE): Workgroup execution and memory scope, SequentiallyConsistent
    | WorkgroupMemory (SPIR-V env 000 §5.2.8, 001 "OpenCL 1.2 environment")."""
    workgroup = m.constant("uint", SCOPES["work_group"])
    m.inst("function", "OpControlBarrier", workgroup, workgroup, m.constant("uint", 0x10 | 0x100))


def _shared(m: Module, k: "_Kernel", b, bases: dict[str, int], prologue: list, epilogue: list) -> None:
    """A shared buffer's first element (see opencl_c._shared for the program it means): a pointer
    into ``out`` (moved to the work-group's partition when per_group), or a Workgroup array
    (named ``clfuzz.<name>``: Oclgrind needs the name, drivers.md) initialised and copied out by
    one work-item per element around barriers."""
    t = m.type(b.type)
    aligned = (m.g.enum("MemoryAccess", "Aligned"), b.type.size)
    if b.role == "global":
        first = k.address(bases["out"], k.layout.outputs[b.name].offset, b.type,
                          m.op("OpIMul", k.ulong, m.ids["grp"], m.constant("ulong", b.count)) if b.per_group
                          else m.constant("ulong", 0))
        m.shared[b.name] = (first, "CrossWorkgroup")
        return
    array = m._type(("array", t, b.count), "OpTypeArray", t, m.constant("uint", b.count))
    var = m.id()
    m.inst("global", "OpVariable", m.pointer("Workgroup", array), var, m.g.enum("StorageClass", "Workgroup"))
    m.inst("debug", "OpName", var, f"{KERNEL_NAME}.{b.name}")
    m.shared[b.name] = (var, "Workgroup")
    lid, grp = m.ids["lid"], m.ids["grp"]

    def element() -> int:
        return m.op("OpInBoundsAccessChain", m.pointer("Workgroup", t), var, lid)

    def lane(base: str, region) -> int:
        index = m.op("OpIAdd", k.ulong, m.op("OpIMul", k.ulong, grp, m.constant("ulong", b.count)), lid)
        return k.address(bases[base], region.offset, b.type, index)

    def init() -> None:
        if b.kind == "flag":
            m.inst("function", "OpAtomicFlagClear", element(), m.constant("uint", SCOPES["work_group"]),
                   m.constant("uint", 0))
        else:
            value = m.op("OpLoad", t, lane("in", k.layout.inputs[b.name]), *aligned)
            m.inst("function", "OpStore", element(), value)  # atomic_init is a plain store (§6.15.12.6)

    def copy_out() -> None:
        value = m.op("OpLoad", t, element()) if b.kind == "" else m.op(
            "OpAtomicLoad", t, element(), m.constant("uint", SCOPES["work_group"]), m.constant("uint", 0))
        m.inst("function", "OpStore", lane("out", k.layout.outputs[b.name]), value, *aligned)

    def inside() -> int:
        return m.op("OpULessThan", m.bool_type(), lid, m.constant("ulong", b.count))

    prologue.append(lambda: _if(m, inside(), init))
    if b.kind != "flag":
        epilogue.append(lambda: _if(m, inside(), copy_out))


def words(program: Program) -> list[int]:
    """The module of ``program`` as 32-bit words (see the module docstring)."""
    m = Module()
    m.capability("Addresses")
    m.capability("Kernel")
    m.capability("Int64")  # size_t under Physical64
    if "int64_atomics" in program.requires:
        # the capability alone, as the LLVM translator writes it: its reader rejects the
        # OpExtension "cl_khr_int64_base_atomics" that 001 asks for ("unknown extension")
        m.capability("Int64Atomics")
    m.std = m.id()
    m.inst("ext_import", "OpExtInstImport", m.std, "OpenCL.std")
    m.inst("memory_model", "OpMemoryModel", m.g.enum("AddressingModel", "Physical64"),
           m.g.enum("MemoryModel", "OpenCL"))
    k = _Kernel(m, program)
    v3ulong = m.type(Type("ulong", 3))
    builtins = {"gid": _builtin(m, "GlobalInvocationId")}
    if program.local_size:
        builtins.update(lid=_builtin(m, "LocalInvocationId"), grp=_builtin(m, "WorkgroupId"))
    void = m.void()
    fn = m.id()
    m.inst("entry_point", "OpEntryPoint", m.g.enum("ExecutionModel", "Kernel"), fn, KERNEL_NAME, *builtins.values())
    # FP_CONTRACT OFF, as in the OpenCL C kernel
    m.inst("execution_mode", "OpExecutionMode", fn, m.g.enum("ExecutionMode", "ContractionOff"))
    m.inst("debug", "OpName", fn, KERNEL_NAME)
    params = [("in", k.uchar_ptr), ("out", k.uchar_ptr), *((i.name, image_type(m, i)) for i in program.images),
              *((s.name, m.sampler_type()) for s in sampler_arguments(program))]
    m.inst("function", "OpFunction", void, fn, m.g.enum("FunctionControl", "None"),
           m.function_type(void, *(t for _, t in params)))
    bases = {}
    for name, t in params:
        bases[name] = m.id()
        m.inst("function", "OpFunctionParameter", t, bases[name])
        m.inst("debug", "OpName", bases[name], name)
    m.images = {i.name: (bases[i.name], image_type(m, i)) for i in program.images}
    m.samplers = {s.name: bases[s.name] if s.scope == "argument" else constant_sampler(m, s) for s in program.samplers}
    m.inst("function", "OpLabel", m.id())
    for name, var in builtins.items():
        ids = m.op("OpLoad", v3ulong, var, m.g.enum("MemoryAccess", "Aligned"), 32)
        m.ids[name] = m.op("OpCompositeExtract", k.ulong, ids, 0)
    gid = m.ids["gid"]
    prologue: list = []
    epilogue: list = []
    for b in program.buffers:
        if b.shared:
            _shared(m, k, b, bases, prologue, epilogue)
            continue
        region = (k.layout.inputs if b.role == "in" else k.layout.outputs)[b.name]
        m.pointers[b.name] = k.address(bases[b.role], region.offset, b.type, gid)
    for step in prologue:
        step()
    if prologue:
        barrier(m)
    for s in program.body:
        dst = program.buffer(s.buffer).type
        m.target = s.buffer
        value = k.expression(s.value, m.pointers)
        if value is None:  # a statement form that wrote its own store (vstoren, void atomics)
            continue
        src = s.value.type
        if src != dst:  # assignment: converted as by a cast (§6.4.1)
            value = operand(m, value, src, dst)
        m.inst("function", "OpStore", m.pointers[s.buffer], value, m.g.enum("MemoryAccess", "Aligned"), dst.size)
    if epilogue:
        barrier(m)
    for step in epilogue:
        step()
    m.inst("function", "OpReturn")
    m.inst("function", "OpFunctionEnd")
    return m.words()


def emit(program: Program) -> bytes:
    """The module of ``program`` as a little-endian binary (a ``.spv`` file)."""
    return np.array(words(program), dtype="<u4").tobytes()


# -- atomics (fuzz.ops area "atomics"; oracles.atomics) ----------------------------------------------

SCOPES = {"device": 1, "work_group": 2}  # SPIR-V Scope: Device 1, Workgroup 2
ORDER_BITS = {"relaxed": 0, "acquire": 0x2, "release": 0x4, "acq_rel": 0x8, "seq_cst": 0x10}
ATOMIC_OPCODES = {
    "add": "OpAtomicIAdd", "sub": "OpAtomicISub", "xchg": "OpAtomicExchange", "inc": "OpAtomicIIncrement",
    "dec": "OpAtomicIDecrement", "and": "OpAtomicAnd", "or": "OpAtomicOr", "xor": "OpAtomicXor",
    "load": "OpAtomicLoad", "store": "OpAtomicStore", "flag_test_and_set": "OpAtomicFlagTestAndSet",
    "flag_clear": "OpAtomicFlagClear",
}


def _location(m: Module, op: Op) -> int:
    """The pointer ``&A[base + (id / div) % mod]`` (opencl_c.location)."""
    ulong = m.type(Type("ulong"))
    which, div, mod, base = op.attr("index")
    index = m.ids[which]
    if div != 1:
        index = m.op("OpUDiv", ulong, index, m.constant("ulong", div))
    index = m.op("OpUMod", ulong, index, m.constant("ulong", mod))
    if base:
        index = m.op("OpIAdd", ulong, index, m.constant("ulong", base))
    first, storage = m.shared[op.attr("location")]
    elem = m.type(Type(op.type.scalar))
    if storage == "Workgroup":
        return m.op("OpInBoundsAccessChain", m.pointer(storage, elem), first, index)
    return m.op("OpInBoundsPtrAccessChain", m.pointer(storage, elem), first, index)


def _scope_and_semantics(m: Module, op: Op, order: str) -> tuple[int, int]:
    """The Scope and Memory Semantics operands. OpenCL 1.x functions: Device and Relaxed (the
    only ones an OpenCL 1.2 environment allows, 000 §5.2.8). C11 ones: the scope asked for
    (seq_cst and device without _explicit, §6.15.12.7), the order's bit, and for an order
    stronger than relaxed the memory it orders (CrossWorkgroupMemory for global, WorkgroupMemory
    for local, which needs Workgroup scope, 001)."""
    form = op.attr("form")
    if form in ("atomic", "atom"):
        return m.constant("uint", SCOPES["device"]), m.constant("uint", 0)
    scope = op.attr("scope") if form == "explicit" else "device"
    bits = ORDER_BITS[order]
    if bits:
        if op.attr("memory") != "local":
            bits |= 0x200
        elif scope == "work_group":
            bits |= 0x100
    return m.constant("uint", SCOPES[scope]), m.constant("uint", bits)


def _atomic(m: Module, op: Op, args: list[int]) -> int | None:
    """OpAtomic* on the location; a compare-exchange gives (original, original == expected) as
    the two lanes, test-and-set its Boolean as 0 or 1; store and clear write no result."""
    name = op.op[len("atomic_"):]
    t = Type(op.type.scalar)
    tid = m.type(t)
    order = op.attr("order") if op.attr("form") == "explicit" else "seq_cst"
    scope, semantics = _scope_and_semantics(m, op, order)
    p = _location(m, op)
    if name in ("store", "flag_clear"):
        m.inst("function", ATOMIC_OPCODES[name], p, scope, semantics, *args)
        return None
    if name in ("cmpxchg", "compare_exchange"):
        failure = semantics
        if name == "compare_exchange" and op.attr("form") == "explicit":
            failure = _scope_and_semantics(m, op, op.attr("failure"))[1]
        opcode = "OpAtomicCompareExchangeWeak" if op.attr("weak") else "OpAtomicCompareExchange"
        original = m.op(opcode, tid, p, scope, semantics, failure, args[-1], args[0])
        if name == "cmpxchg":
            return original
        success = m.op("OpIEqual", m.bool_type(), original, args[0])
        flag = m.op("OpSelect", tid, success, m.splat(t, 1), m.splat(t, 0))
        return _compose(m, op.type, [original, flag])
    if name == "flag_test_and_set":
        was_set = m.op("OpAtomicFlagTestAndSet", m.bool_type(), p, scope, semantics)
        return m.op("OpSelect", tid, was_set, m.splat(t, 1), m.splat(t, 0))
    if name in ("min", "max"):
        opcode = f"OpAtomic{'S' if t.elem.signed else 'U'}{name.title()}"
    else:
        opcode = ATOMIC_OPCODES[name]
    return m.op(opcode, tid, p, scope, semantics, *args)


for _name, *_ in ATOMICS:
    emitter(f"atomic_{_name}")(_atomic)


# -- images (fuzz.ops area "images"; oracles.images) ------------------------------------------------

_IMAGE_CAPABILITIES = {"1D": ("ImageBasic", "Sampled1D"), "Buffer": ("ImageBasic", "SampledBuffer"),
                       "2D": ("ImageBasic",), "3D": ("ImageBasic",)}


def image_type(m: Module, image) -> int:
    """``OpTypeImage %void Dim 0 Arrayed 0 0 Unknown ReadOnly``: the OpenCL environment's form
    (000 §2.9: Sampled Type void, Sampled 0, Image Format Unknown, an access qualifier)."""
    dim = DIMS[image.dim]
    for cap in _IMAGE_CAPABILITIES[dim.spirv_dim]:
        m.capability(cap)
    return m._type(("image", dim.name), "OpTypeImage", m.void(), m.g.enum("Dim", dim.spirv_dim), 0, int(dim.arrayed),
                   0, 0, m.g.enum("ImageFormat", "Unknown"), m.g.enum("AccessQualifier", "ReadOnly"))


def constant_sampler(m: Module, s) -> int:
    """OpConstantSampler for a sampler the program declares (program or kernel scope)."""
    m.capability("LiteralSampler")
    key = ("sampler", s.normalized, s.addressing, s.filter)
    if key not in m._constants:
        cid = m.id()
        m.inst("global", "OpConstantSampler", m.sampler_type(), cid, ADDRESSING[s.addressing][2], int(s.normalized),
               FILTERS[s.filter][2])
        m._constants[key] = cid
    return m._constants[key]


@emitter("read_image")
def _read_image(m: Module, op: Op, args: list[int]) -> int:
    """OpImageSampleExplicitLod (Lod 0.0) on OpSampledImage(image, sampler), or OpImageRead
    without a sampler (000 §7.7). The result is a 4-vector of float or of 32-bit int; whether
    8- and 16-bit integer channels are sign- or zero-extended follows the image's channel type
    (SPIR-V 1.0 has no SignExtend/ZeroExtend image operands)."""
    image, itype = m.images[op.attr("image")]
    result = m.type(op.type)
    if not op.attr("sampler"):
        return m.op("OpImageRead", result, image, args[0])
    sampled = m.op("OpSampledImage", m._type(("sampled", itype), "OpTypeSampledImage", itype), image,
                   m.samplers[op.attr("sampler")])
    return m.op("OpImageSampleExplicitLod", result, sampled, args[0], m.g.enum("ImageOperands", "Lod"),
                m.constant("float", 0))


# -- floating-point arithmetic and built-ins (fuzz.ops area "math"; oracles.maths) ------------------


def _math(m: Module, op: Op, args: list[int]) -> int:
    """The OpenCL.std instruction of the same name (an out-parameter: the pointer to its output
    element, CrossWorkgroup), OpFDiv for fdiv, OpDot for dot of vectors (OpFMul of scalars:
    OpDot takes vectors only)."""
    t = m.type(op.type)
    if op.op == "fdiv":
        return m.op("OpFDiv", t, *args)
    if op.op == "dot":
        return m.op("OpDot" if op.args[0].type.is_vector else "OpFMul", t, *args)
    pointee = [m.pointers[op.attr("out")]] if FUNCTIONS[op.op].out else []
    return m.ext(op.op, t, *args, *pointee)


for _name in FUNCTIONS:
    emitter(_name)(_math)
