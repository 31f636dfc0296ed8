"""References of the operations only SPIR-V expresses (``lang.ops``, area ``spirv``).

The SPIR-V core specification is cited by the sections of the SPIR-V 1.6
unified specification (§3.42.11 conversion, §3.42.12 composite, §3.42.13 arithmetic, §3.42.15
relational and logical instructions), each rule quoting the sentence it applies. The OpenCL
SPIR-V environment (§6) adds the floating-point rules: flush-to-zero where the device lacks
denormals (OpenCL C 3.0.19 §7.2, §7.5.3) and accuracy (SPIR-V environment §6.6: "0 ULP is used
for math functions that do not require rounding"; OpFRem and OpFMod are not in its accuracy
tables).

Operands are loads and literals (exact values). A lane whose operand is not certain (not judged,
any NaN, or several candidates) makes the lanes that depend on it unjudged.
"""

from __future__ import annotations

import numpy as np

from lang.ir import Op
from lang.ops import Handlers
from lang.types import Scalar
from oracles import rules
from oracles.expect import Expectation, as_bits
from oracles.operands import Reference

REFERENCES: Handlers[Reference] = Handlers()
"""The references of this module, by operation name (assembled in oracles.references)."""
reference = REFERENCES.register

RULE_BITCAST = rules.register(
    "spirv.bitcast.components",
    "OpBitcast between types of different component counts: the lower-ordered bits of each "
    "component of the type with fewer components map to the lower-numbered components of the other",
    "SPIR-V §3.42.11 OpBitcast",
)
RULE_SHUFFLE = rules.register(
    "spirv.shuffle.select",
    "OpVectorShuffle: each result component is the component of Vector 1 ++ Vector 2 its literal "
    "names; a literal 0xFFFFFFFF gives an undefined component, never judged",
    "SPIR-V §3.42.12 OpVectorShuffle",
)
RULE_SHUFFLE_UNDEFINED = rules.register(
    "spirv.shuffle.undefined",
    "OpVectorShuffle: a component literal 0xFFFFFFFF gives a result component that has no source and is "
    "undefined (not judged)",
    "SPIR-V §3.42.12 OpVectorShuffle (the component 'is undefined': neither shall nor should)",
    leaves="undefined",
)
RULE_REM_INT = rules.register(
    "spirv.rem.int",
    "OpSRem takes the sign of Operand 1, OpSMod the sign of Operand 2, OpUMod is unsigned: the exact "
    "remainder (the divisor is replaced by 1 where it is 0, or -1 with Operand 1 the minimum: "
    "undefined behaviour otherwise)",
    "SPIR-V §3.42.13 OpSRem, OpSMod, OpUMod",
)
# The environment gives OpFRem and OpFMod no accuracy (they are not in the OpenCL SPIR-V
# environment's §6.6.1), so only the lanes whose remainder involves no division are judged:
# |x| < |y|, where the remainder whose sign matches x is x itself (clfuzz's reading).
RULE_FREM = rules.register(
    "spirv.frem.small",
    "OpFRem is the remainder whose sign matches Operand 1: x itself when |x| < |y| (other lanes "
    "are not judged: SPIR-V environment §6.6.1 lists no accuracy for OpFRem); a zero result may be of either sign",
    "SPIR-V §3.42.13 OpFRem; OpenCL SPIR-V environment §6.6.1",
)
RULE_FMOD = rules.register(
    "spirv.fmod.small",
    "OpFMod is the remainder whose sign matches Operand 2: for |x| < |y|, x when the signs agree, "
    "else x + y where that sum is exact (other lanes are not judged: SPIR-V environment §6.6.1 lists no "
    "accuracy for OpFMod); a zero result may be of either sign",
    "SPIR-V §3.42.13 OpFMod; OpenCL SPIR-V environment §6.6.1",
)
RULE_EXTENDED = rules.register(
    "spirv.extended.exact",
    "OpIAddCarry / OpISubBorrow: member 0 is the low N bits of the sum / difference, member 1 the "
    "carry (1 on unsigned overflow) / borrow (1 if Operand 1 < Operand 2); OpUMulExtended / "
    "OpSMulExtended: the low and high N bits of the exact unsigned / signed 2N-bit product",
    "SPIR-V §3.42.13 OpIAddCarry, OpISubBorrow, OpUMulExtended, OpSMulExtended",
)
RULE_SELECT = rules.register(
    "spirv.select.components",
    "OpSelect with a Boolean vector condition picks each component from Object 1 where the "
    "condition component is true, else from Object 2 (bits unchanged); FOrd comparisons are "
    "false and FUnord comparisons true when an operand is NaN",
    "SPIR-V §3.42.15 OpSelect, OpFOrd*/OpFUnord*, OpS*/OpU*/OpI* comparisons",
)
RULE_REDUCE = rules.register(
    "spirv.any_all",
    "OpAny is true if any component of the Boolean vector is true, OpAll if all are "
    "(written as int 1 or 0 through OpSelect)",
    "SPIR-V §3.42.15 OpAny, OpAll",
)


def _subnormal(values: np.ndarray, s: Scalar) -> np.ndarray:
    with np.errstate(all="ignore"):
        mag = np.abs(values.astype(np.float64))
    return (mag < 2.0**s.min_exp) & (mag != 0)


def _flushed(values: np.ndarray, s: Scalar) -> np.ndarray:
    """Subnormals replaced by a zero of the same sign (OpenCL C 3.0.19 §7.5.3)."""
    return np.where(_subnormal(values, s), np.copysign(np.zeros((), s.dtype), values), values)


def _result(name: str, candidates: list[np.ndarray], judged: np.ndarray, rule: int) -> Expectation:
    base = Expectation(name, [as_bits(np.ascontiguousarray(candidates[0]))], judged,
                       np.zeros(len(judged), bool), np.full(len(judged), rule, np.int16))
    return base.with_alternatives([as_bits(np.ascontiguousarray(c)) for c in candidates[1:]])


@reference("bitcast")
def _bitcast(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§3.42.11: the mapping "lower-ordered bits to lower-numbered components" is a little-endian
    reinterpretation of the operand's bytes, whatever the host's byte order."""
    src, dst = op.args[0].type, op.type
    values, ok = args[0].certain()
    little = as_bits(values).astype(src.elem.bits_dtype.newbyteorder("<"))
    out = little.view(dst.elem.bits_dtype.newbyteorder("<")).astype(dst.elem.bits_dtype)
    # a result component is certain when every operand component it takes bytes from is
    byte_ok = np.repeat(ok.reshape(n, src.width), src.elem.size, axis=1)
    judged = byte_ok.reshape(n, dst.width, dst.elem.size).all(axis=2).ravel()
    return _result(dst.scalar, [out], judged, RULE_BITCAST)


@reference("vector_shuffle")
def _shuffle(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§3.42.12: components index Vector 1 then Vector 2; 0xFFFFFFFF (-1 in the IR) is undefined."""
    (va, oka), (vb, okb) = (a.certain() for a in args)
    wa, wb = (a.type.width for a in op.args)
    both = np.concatenate([as_bits(va).reshape(n, wa), as_bits(vb).reshape(n, wb)], axis=1)
    ok = np.concatenate([oka.reshape(n, wa), okb.reshape(n, wb)], axis=1)
    comps = np.array(op.attr("components"))
    index = np.where(comps >= 0, comps, 0)
    undefined = np.tile(comps < 0, n)
    out = _result(op.type.scalar, [both[:, index].ravel()], ok[:, index].ravel() & ~undefined, RULE_SHUFFLE)
    out.rule = np.where(undefined, np.int16(RULE_SHUFFLE_UNDEFINED), out.rule).astype(np.int16)
    return out


def safe_divisor(x: np.ndarray, y: np.ndarray, s: Scalar) -> np.ndarray:
    """The divisor the program divides by: 1 where ``y`` would make the remainder undefined
    (0 for every type; -1 with ``x`` the minimum of a signed type)."""
    unsafe = y == 0
    if s.is_int and s.signed:
        unsafe = unsafe | ((x == s.min) & (y == -1))
    return np.where(unsafe, np.ones((), s.dtype), y).astype(s.dtype)


@reference("rem")
def _rem(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§3.42.13; see the rules for the sign and the accuracy of each instruction."""
    s = op.type.elem
    (x, okx), (y, oky) = (a.certain() for a in args)
    judged = okx & oky
    mod = op.attr("mode") == "mod"
    y = safe_divisor(x, y, s)
    if s.is_int:
        out = np.remainder(x, y) if mod or not s.signed else np.fmod(x, y)
        return _result(s.name, [out], judged, RULE_REM_INT)
    with np.errstate(all="ignore"):
        r = np.fmod(x, y)  # exact: fmod never rounds
        judged = judged & np.isfinite(x) & np.isfinite(y) & (np.abs(x) < np.abs(y))
        out = r
        if mod:
            differ = (r != 0) & (np.signbit(r) != np.signbit(y))
            total = (r + y).astype(s.dtype)  # rounded to the type
            # Fast2Sum (|y| > |r|): the rounding error of r + y is exactly r - (total - y)
            error = (r - (total - y).astype(s.dtype)).astype(s.dtype)
            judged = judged & ~(differ & (error != 0))
            out = np.where(differ, total, r)
        if s.name in ftz:  # a flushed operand, remainder or result changes the answer: not judged
            for v in (x, y, r, out):
                judged = judged & ~_subnormal(v, s)
    zero = out == 0
    other_zero = np.where(zero, np.copysign(np.zeros((), s.dtype), -np.copysign(np.ones((), s.dtype), out)), out)
    return _result(s.name, [out.astype(s.dtype), other_zero.astype(s.dtype)], judged,
                   RULE_FMOD if mod else RULE_FREM)


def _mulhi_u64(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The high 64 bits of the exact 128-bit product of two uint64 arrays (32-bit limbs)."""
    m = np.uint64(0xFFFFFFFF)
    k = np.uint64(32)
    x0, x1, y0, y1 = x & m, x >> k, y & m, y >> k
    p00, p01, p10, p11 = x0 * y0, x0 * y1, x1 * y0, x1 * y1
    middle = (p00 >> k) + (p01 & m) + (p10 & m)  # < 3 * 2^32: no overflow
    return p11 + (p01 >> k) + (p10 >> k) + (middle >> k)


def extended(opcode: str, member: int, x: np.ndarray, y: np.ndarray, s: Scalar) -> np.ndarray:
    """Member ``member`` of the struct the instruction returns, as values of ``s``."""
    bits = s.bits
    ux, uy = x.astype(s.bits_dtype).astype(np.uint64), y.astype(s.bits_dtype).astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    with np.errstate(all="ignore"):
        if opcode in ("IAddCarry", "ISubBorrow"):
            low = ((ux + uy) if opcode == "IAddCarry" else (ux - uy)) & mask
            flag = (low < ux) if opcode == "IAddCarry" else (ux < uy)
            out = low if member == 0 else flag.astype(np.uint64)
        elif member == 0:
            out = (ux * uy) & mask
        elif bits < 64 and opcode == "UMulExtended":
            out = (ux * uy) >> np.uint64(bits)
        elif bits < 64:  # SMulExtended: |x*y| <= 2^62 fits in int64
            out = ((x.astype(np.int64) * y.astype(np.int64)) >> np.int64(bits)).astype(np.uint64) & mask
        else:
            out = _mulhi_u64(ux, uy)
            if opcode == "SMulExtended":  # signed high = unsigned high - (x<0)*y - (y<0)*x mod 2^64
                out = out - np.where(x < 0, uy, np.uint64(0)) - np.where(y < 0, ux, np.uint64(0))
    return out.astype(s.bits_dtype).view(s.dtype)


@reference("extended")
def _extended(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    (x, okx), (y, oky) = (a.certain() for a in args)
    out = extended(op.attr("opcode"), op.attr("member"), x, y, op.type.elem)
    return _result(op.type.scalar, [out], okx & oky, RULE_EXTENDED)


_NUMPY_COMPARES = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                   ">": np.greater, ">=": np.greater_equal}


def compare(a: np.ndarray, b: np.ndarray, how: str, ordered: bool) -> np.ndarray:
    """The Boolean result of the comparison instruction ``how`` (FOrd* if ``ordered``, else FUnord*
    for floats; the operands' own signedness for integers)."""
    with np.errstate(all="ignore"):
        result = _NUMPY_COMPARES[how](a, b)
    if a.dtype.kind != "f":
        return result
    unordered = np.isnan(a) | np.isnan(b)
    return (result & ~unordered) if ordered else (result | unordered)


def _conditions(op: Op, args: list[Expectation], ftz: frozenset) -> tuple[list[np.ndarray], np.ndarray]:
    """The comparison of the first two operands: its possible results (a second one where
    denormals may be flushed) and the lanes where the operands are certain."""
    (a, oka), (b, okb) = (x.certain() for x in args[:2])
    how, ordered = op.attr("compare"), op.attr("ordered", True)
    conds = [compare(a, b, how, ordered)]
    s = op.args[0].type.elem
    if s.name in ftz:
        conds.append(compare(_flushed(a, s), _flushed(b, s), how, ordered))
    return conds, oka & okb


@reference("op_select")
def _select(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    conds, judged = _conditions(op, args, ftz)
    (x, okx), (y, oky) = (e.certain() for e in args[2:])
    outs = [np.where(c, as_bits(x), as_bits(y)) for c in conds]
    return _result(op.type.scalar, outs, judged & okx & oky, RULE_SELECT)


@reference("reduce")
def _reduce(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    conds, ok = _conditions(op, args, ftz)
    width = op.args[0].type.width
    fold = np.any if op.attr("reduce") == "any" else np.all
    outs = [fold(c.reshape(n, width), axis=1).astype(op.type.elem.dtype) for c in conds]
    return _result(op.type.scalar, outs, ok.reshape(n, width).all(axis=1), RULE_REDUCE)
