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
from fuzz.layout import layout
from fuzz.ops import Handlers, spelling
from fuzz.types import Type, scalar

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


def broadcast(m: Module, value: int, t: Type) -> int:
    """A scalar replicated into every lane of the vector type ``t``."""
    if t.width == 1:
        return value
    tid = m.type(t)
    out = m.undef(tid)
    for lane in range(t.width):
        out = m.op("OpCompositeInsert", tid, value, out, lane)
    return out


EMITTERS: Handlers[Callable[[Module, Op, list[int]], int]] = Handlers()
emitter = EMITTERS.register


@emitter("convert")
def _convert(m: Module, op: Op, args: list[int]) -> int:
    return convert(m, args[0], op.args[0].type, op.type, sat=bool(op.attr("sat")), rounding=op.attr("rounding"))


@emitter("cast")
def _cast(m: Module, op: Op, args: list[int]) -> int:
    """(T)x: the scalar converted with the default rounding, then replicated (§6.4.2)."""
    src = op.args[0].type
    return broadcast(m, convert(m, args[0], src, Type(op.type.scalar)), op.type)


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
    """x op y after the usual arithmetic conversions to the result type (C99 §6.3.1.8)."""
    t = op.type
    x, y = (convert(m, a, e.type, t) for a, e in zip(args, op.args))
    prefix = "OpF" if t.elem.is_float else "OpI"
    name = {"+": "Add", "-": "Sub", "*": "Mul"}[op.attr("operator")]
    return m.op(prefix + name, m.type(t), x, y)


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
    if t.elem.is_float:
        unsafe = compare(m, y, m.splat(t, 0.0), t, "==")
    else:
        unsafe = compare(m, y, m.splat(t, 0), t, "==")
        if t.elem.signed:
            overflow = m.op("OpLogicalAnd", m.bool_type(t.width), compare(m, x, m.splat(t, t.elem.min), t, "=="),
                            compare(m, y, m.splat(t, -1), t, "=="))
            unsafe = m.op("OpLogicalOr", m.bool_type(t.width), unsafe, overflow)
    divisor = m.op("OpSelect", m.type(t), unsafe, m.splat(t, 1), y)
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


def words(program: Program) -> list[int]:
    """The module of ``program`` as 32-bit words (see the module docstring)."""
    m = Module()
    m.capability("Addresses")
    m.capability("Kernel")
    m.capability("Int64")  # size_t under Physical64
    m.inst("ext_import", "OpExtInstImport", m.id(), "OpenCL.std")
    m.inst("memory_model", "OpMemoryModel", m.g.enum("AddressingModel", "Physical64"),
           m.g.enum("MemoryModel", "OpenCL"))
    k = _Kernel(m, program)
    v3ulong = m.type(Type("ulong", 3))
    gid_var = m.id()
    m.inst("global", "OpVariable", m.pointer("Input", v3ulong), gid_var, m.g.enum("StorageClass", "Input"))
    m.decorate(gid_var, "BuiltIn", m.g.enum("BuiltIn", "GlobalInvocationId"))
    m.decorate(gid_var, "Constant")
    void = m.void()
    fn = m.id()
    m.inst("entry_point", "OpEntryPoint", m.g.enum("ExecutionModel", "Kernel"), fn, KERNEL_NAME, gid_var)
    # FP_CONTRACT OFF, as in the OpenCL C kernel
    m.inst("execution_mode", "OpExecutionMode", fn, m.g.enum("ExecutionMode", "ContractionOff"))
    m.inst("debug", "OpName", fn, KERNEL_NAME)
    m.inst("function", "OpFunction", void, fn, m.g.enum("FunctionControl", "None"),
           m.function_type(void, k.uchar_ptr, k.uchar_ptr))
    bases = {}
    for role in ("in", "out"):
        bases[role] = m.id()
        m.inst("function", "OpFunctionParameter", k.uchar_ptr, bases[role])
        m.inst("debug", "OpName", bases[role], role)
    m.inst("function", "OpLabel", m.id())
    ids = m.op("OpLoad", v3ulong, gid_var, m.g.enum("MemoryAccess", "Aligned"), 32)
    gid = m.op("OpCompositeExtract", k.ulong, ids, 0)
    pointers = {}
    for b in program.buffers:
        region = (k.layout.inputs if b.role == "in" else k.layout.outputs)[b.name]
        pointers[b.name] = k.address(bases[b.role], region.offset, b.type, gid)
    for s in program.body:
        dst = program.buffer(s.buffer).type
        value = k.expression(s.value, pointers)
        src = s.value.type
        if src != dst:  # assignment: converted as by a cast (§6.4.1)
            value = broadcast(m, convert(m, value, src, Type(dst.scalar)), dst)
        m.inst("function", "OpStore", pointers[s.buffer], value, m.g.enum("MemoryAccess", "Aligned"), dst.size)
    m.inst("function", "OpReturn")
    m.inst("function", "OpFunctionEnd")
    return m.words()


def emit(program: Program) -> bytes:
    """The module of ``program`` as a little-endian binary (a ``.spv`` file)."""
    return np.array(words(program), dtype="<u4").tobytes()
