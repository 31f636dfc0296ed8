"""Values the SPIR-V operation handlers share: conversions, vectors composed lane by lane,
comparisons, OpenCL C truth values and safe divisors.

Conversions follow the SPIR-V environment for OpenCL (OpenCL SPIR-V environment §6.2-6.3): integer types
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

from fuzz.emit.spirv.module import Module
from fuzz.emit.spirv.opcodes import COMPARE_NAMES
from lang.types import Type, truth_type

# -- conversions (one helper for convert, cast, implicit conversions) -----------------------------


def convert(m: Module, value: int, src: Type, dst: Type, *, sat: bool = False, rounding: str | None = None) -> int:
    """``value`` of type ``src`` converted lane-wise to ``dst`` (same lane count), as
    ``convert_dst[_sat][_rounding]`` (OpenCL C §6.4.3; OpenCL SPIR-V environment §6.2-6.3)."""
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


def compose(m: Module, t: Type, lanes: list[int], into: int | None = None, at: list[int] | None = None) -> int:
    """A vector of type ``t`` with ``lanes`` inserted at positions ``at`` (all, in order, by
    default) of ``into`` (undefined by default): OpCompositeInsert, never OpCompositeConstruct of
    non-constants, which the LLVM translator rejects (drivers.md)."""
    out = m.undef(m.type(t)) if into is None else into
    for lane, position in zip(lanes, range(t.width) if at is None else at):
        out = m.op("OpCompositeInsert", m.type(t), lane, out, position)
    return out


def broadcast(m: Module, value: int, t: Type) -> int:
    """A scalar replicated into every lane of the vector type ``t``."""
    return value if t.width == 1 else compose(m, t, [value] * t.width)


def operand(m: Module, value: int, src: Type, dst: Type) -> int:
    """An operand converted to the element type of ``dst`` (the usual arithmetic conversions) and,
    a scalar beside a vector, replicated (OpenCL C 3.0 §6.5.1)."""
    return broadcast(m, convert(m, value, src, Type(dst.scalar, src.width)), dst) if src.width != dst.width \
        else convert(m, value, src, dst)


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


def compare(m: Module, a: int, b: int, t: Type, how: str, ordered: bool = True) -> int:
    """The Boolean (vector) ``a how b``: OpFOrd*/OpFUnord* for floats, OpS*/OpU* by the operands'
    signedness for integers, OpIEqual/OpINotEqual for equality."""
    name = COMPARE_NAMES[how]
    if t.elem.is_float:
        opname = f"Op{'FOrd' if ordered else 'FUnord'}{name}"
    elif how in ("==", "!="):
        opname = f"OpI{name}"
    else:
        opname = f"Op{'S' if t.elem.signed else 'U'}{name}"
    return m.op(opname, m.bool_type(t.width), a, b)


def truth(m: Module, cond: int, operand: Type) -> int:
    """A Boolean (vector) as the OpenCL C result: int 1/0 for a scalar operand, -1/0 lanes of the
    same-sized signed type for vectors (OpenCL C 3.0 §6.5.4)."""
    t = truth_type(operand)
    return m.op("OpSelect", m.type(t), cond, m.splat(t, -1 if operand.is_vector else 1), m.splat(t, 0))
