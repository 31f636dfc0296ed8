"""References of the integer operators and built-ins (``lang.ops`` area ``expressions``): / and %,
shifts, ~, and the integer built-ins of Table 13 (OpenCL C 3.0 §6.5.1, §6.5.6, §6.5.10, §6.15.3;
§6.4.6 for the operand types).

Results are computed exactly (numpy at twice the width, or Python integers for 64-bit products)
and then saturated or wrapped as each rule says; every combination of the operands' candidates is
computed (:func:`oracles.lanes.combine`).

Integer promotion (C99 §6.3.1.1) applies to scalar operators only: a scalar char, uchar, short or
ushort operand of / % << >> ~ is computed in int, and the IR gives such an operator its promoted
type (``(short)a << (short)b`` is an ``int`` node whose operands convert to int); a node typed
otherwise is not a well-formed program (:func:`oracles.operands.check_operator_type`). Vector
operators compute in their element type, never promoted (OpenCL C §6.4.6's note, §6.5.10). The
built-ins take and return gentype: add_sat(char, char) is computed and saturated in char
(§6.15.3: "the actual type has to be the same for all arguments and the return type").

The UB guard: a judged lane that reaches a case the spec leaves undefined or implementation-defined
(signed overflow, clamp with lo > hi, mul24 operands outside 24 bits) raises
:class:`~oracles.operands.UndefinedBehaviour`: the strategies build such programs never.
"""

from __future__ import annotations

import numpy as np

from lang.ir import Op
from lang.ops import INTEGER_BUILTINS, Handlers
from lang.types import Scalar, scalar, unsigned_of
from oracles import conversions, rules
from oracles.expect import Expectation, as_bits
from oracles.lanes import combine, unjudge
from oracles.operands import (
    Reference,
    UndefinedBehaviour,
    check_operator_type,
    converted_operands,
    widen,
)
from oracles.rounding import bit_length
from oracles.spirv_only import extended, safe_divisor

REFERENCES: Handlers[Reference] = Handlers()
"""The references of this module, by operation name (assembled in oracles.references)."""
reference = REFERENCES.register

_S = "OpenCL C 3.0"

RULE_DIV = rules.register(
    "div.trunc", "integer / truncates toward zero and % has the sign of the dividend (the program replaces "
    "a divisor of 0, or -1 under MIN, by 1)", f"{_S} §6.5.1 (C99 §6.5.5)")
RULE_SHIFT = rules.register(
    "shift.masked", "a shift uses the low log2(N) bits of the count (N after promotion for scalars, the lane "
    "width for vectors); >> of a negative signed value fills with ones", f"{_S} §6.5.10")
RULE_COMPLEMENT = rules.register("complement.bits", "~x flips every bit of the promoted operand", f"{_S} §6.5.6")
RULE_INTEGER = rules.register(
    "integer.builtin", "integer built-ins are exact: computed at full precision, then saturated (_sat), "
    "halved (hadd, rhadd) or reduced as Table 13 says", f"{_S} §6.15.3 Table 13")
RULE_24BIT = rules.register(
    "integer.mul24", "mul24 / mad24 on operands within 24 bits give the exact product (and sum); lanes whose "
    "exact product, or mad24's exact sum, does not fit the type are not judged",
    f"{_S} §6.15.3 Table 13 (mul24, mad24: definitions, neither shall nor should; operands beyond 24 bits "
    "'implementation-defined')")
RULE_MAD_HI = rules.register(
    "integer.mad_hi", "mad_hi is mul_hi(a, b) + c, wrapping for unsigned types; signed lanes whose sum "
    "overflows are not judged", f"{_S} §6.15.3 Table 13")


# ---- integer operators (§6.5.1, §6.5.6, §6.5.10) -----------------------------------------------


def _wide(x: np.ndarray) -> np.ndarray:
    """Exact integers: int64 for types of 32 bits or less, Python integers for 64-bit types (the
    callers' sums and products of 32-bit values stay within int64, except an unsigned mad_sat's)."""
    return x.astype(np.int64) if x.dtype.itemsize < 8 else x.astype(object)


def _fit(exact: np.ndarray, s: Scalar) -> np.ndarray:
    """An exact integer result reduced modulo 2^N, as values of ``s`` (two's complement)."""
    if exact.dtype == object:  # Python integers: the remainder is below 2^64
        return (exact % (1 << s.bits)).astype(np.uint64).astype(s.bits_dtype).view(s.dtype)
    return (exact.astype(np.int64) & ((1 << s.bits) - 1) if s.bits < 64 else exact).astype(s.bits_dtype).view(s.dtype)


def _magnitude(x: np.ndarray) -> np.ndarray:
    """|x| as uint64, exact for every integer type (two's complement negation modulo 2^64)."""
    u = x.astype(np.uint64)
    return np.where(x < 0, np.uint64(0) - u, u)


def _saturate(exact: np.ndarray, s: Scalar) -> np.ndarray:
    return _fit(np.minimum(np.maximum(exact, s.min), s.max), s)


def _within(exact: np.ndarray, s: Scalar) -> np.ndarray:
    """The lanes whose exact integer is a value of ``s``."""
    return (exact >= s.min) & (exact <= s.max)


@reference("div")
def _div(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """x / y and x % y in the type of the usual arithmetic conversions (OpenCL C §6.5.1, §6.4.6 "shall";
    two scalar chars or shorts are divided as ints, C99 §6.3.1.8): the operands are converted to
    ``op.type``, which must be that type (:func:`~oracles.operands.converted_operands` checks)."""
    s = op.type.elem

    def divide(x, y):
        y = safe_divisor(x, y, s)
        mx, my = _magnitude(x), _magnitude(y)
        if op.attr("operator") == "/":  # C99 §6.5.5: the quotient truncates toward zero
            out, negative = mx // my, (x < 0) != (y < 0)
        else:  # (x/y)*y + x%y == x: the remainder has the dividend's sign
            out, negative = mx % my, x < 0
        return np.where(negative, np.uint64(0) - out, out).astype(s.bits_dtype).view(s.dtype)

    return combine(divide, converted_operands(op, args, op.type, ftz), s.name, RULE_DIV, ftz)


@reference("shift")
def _shift(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """OpenCL C 3.0.19 §6.5.10 (normative, no shall/should: "The result of E1 << E2 is E1 left-shifted by
    log2(N) least significant bits in E2 viewed as an unsigned integer value, where N is the number
    of bits used to represent the data type of E1 after integer promotion, if E1 is a scalar, or
    [...] of E1 elements, if E1 is a vector"). ``op.type`` is the promoted left operand's type for a
    scalar and its own type for a vector (checked), so the left operand converts to it (a scalar
    char or short is sign- or zero-extended to int) and the count is masked by that type's width:
    31 for a scalar short, 15 for a short vector's lanes. The count's own promotion keeps its low
    bits, so its bits are read as they are."""
    check_operator_type(op)
    s = op.type.elem
    x = conversions.expect_convert(args[0], s.name, ftz=ftz)
    count = widen(args[1], op.args[1].type, op.type)

    def shifted(v, c):
        k = (as_bits(c).astype(np.uint64) & np.uint64(s.bits - 1)).astype(s.bits_dtype)
        if op.attr("operator") == "<<":
            return (as_bits(v) << k).view(s.dtype)
        return v >> k.astype(s.dtype)  # arithmetic for signed types, logical for unsigned

    return combine(shifted, [x, count], s.name, RULE_SHIFT, ftz)


@reference("complement")
def _complement(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """~x on the promoted operand (C99 §6.5.3.3p4: "The integer promotions are performed on the
    operand, and the result has the promoted type"; OpenCL C §6.5.6 for vectors, component-wise in the
    element type): ~(uchar)200 is the int -201, ~(uchar4)200 lanes are 55."""
    check_operator_type(op)
    s = op.type.elem
    x = conversions.expect_convert(args[0], s.name, ftz=ftz)
    return combine(lambda v: ~v, [x], s.name, RULE_COMPLEMENT, ftz)


# ---- integer built-ins (§6.15.3 Table 13) ------------------------------------------------------


def _mul_hi(x: np.ndarray, y: np.ndarray, s: Scalar) -> np.ndarray:
    """The high half of the exact product: member 1 of SPIR-V's U/SMulExtended."""
    return extended("SMulExtended" if s.signed else "UMulExtended", 1, x, y, s)


def _integer(name: str, s: Scalar, xs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray | None]:
    """The built-in ``name`` on lanes of type ``s`` (all operands already of type ``s``, except
    upsample's lo): the result values and, where some lanes are outside the built-in's defined
    cases, a mask of the lanes that are judged."""
    u = scalar(unsigned_of(s.name)).dtype
    exact = name in ("mad_sat", "mad_hi", "mul24", "mad24") or (name in ("add_sat", "sub_sat") and s.bits < 64)
    wide = [_wide(x) for x in xs] if exact else []
    if name == "abs":
        return _magnitude(xs[0]).astype(u), None
    if name == "abs_diff":  # the exact difference is below 2^N: modulo 2^64 it is exact
        a, b = xs[0].astype(np.uint64), xs[1].astype(np.uint64)
        return np.where(xs[0] >= xs[1], a - b, b - a).astype(u), None
    if name in ("add_sat", "sub_sat") and s.bits == 64:  # wrap, then detect the overflow from the signs
        x, y = xs
        with np.errstate(over="ignore"):
            r = x + y if name == "add_sat" else x - y
        if not s.signed:
            over = (r < x) if name == "add_sat" else (x < y)
            return np.where(over, s.dtype.type(s.max if name == "add_sat" else 0), r), None
        over = (((x ^ r) & (y ^ r)) if name == "add_sat" else ((x ^ y) & (x ^ r))) < 0
        return np.where(over, np.where(x < 0, s.dtype.type(s.min), s.dtype.type(s.max)), r), None
    if name in ("add_sat", "sub_sat"):
        return _saturate(wide[0] + wide[1] if name == "add_sat" else wide[0] - wide[1], s), None
    if name == "mad_sat":
        if s.bits == 32 and not s.signed:  # (2^32-1)^2 + 2^32-1 < 2^64
            exact = xs[0].astype(np.uint64) * xs[1].astype(np.uint64) + xs[2].astype(np.uint64)
            return np.minimum(exact, np.uint64(s.max)).astype(s.dtype), None
        return _saturate(wide[0] * wide[1] + wide[2], s), None
    if name in ("hadd", "rhadd"):  # floor((x + y [+ 1]) / 2) of the exact sum, without overflow
        x, y = xs
        one = s.dtype.type(1)
        carry = (x & y & one) if name == "hadd" else ((x | y) & one)
        return (x >> one) + (y >> one) + carry, None
    if name == "mul_hi":
        return _mul_hi(xs[0], xs[1], s), None
    if name == "mad_hi":
        hi = _mul_hi(xs[0], xs[1], s)
        exact = _wide(hi) + wide[2]
        ok = None if not s.signed else _within(exact, s)
        return _fit(exact, s), ok
    if name in ("mul24", "mad24"):  # mad24 adds "the 32-bit integer result" of mul24 to z (Table 13)
        product = wide[0] * wide[1]
        exact = product + (wide[2] if name == "mad24" else 0)
        return _saturate(exact, s), _within(product, s) & _within(exact, s)
    if name == "rotate":
        k = (xs[1].view(u).astype(np.uint64) & np.uint64(s.bits - 1))
        v = xs[0].view(u).astype(np.uint64)
        mask = np.uint64((1 << s.bits) - 1) if s.bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        left = (v << k) & mask
        right = np.where(k == 0, np.uint64(0), v >> ((np.uint64(s.bits) - k) % np.uint64(64)))
        return (left | right).astype(u).view(s.dtype), None
    if name == "ctz":  # the lowest set bit alone (v & -v) has bit length ctz + 1
        v = xs[0].view(u)
        lowest = (v & (~v + u.type(1))).astype(np.uint64)
        return np.where(v == 0, s.bits, bit_length(lowest) - 1).astype(s.dtype), None
    if name == "clz":
        return (s.bits - bit_length(xs[0].view(u).astype(np.uint64))).astype(s.dtype), None
    if name == "popcount":
        return np.bitwise_count(xs[0].view(u)).astype(s.dtype), None
    if name == "upsample":
        d = scalar({8: "short", 16: "int", 32: "long"}[s.bits] if s.signed else unsigned_of({8: "short", 16: "int", 32: "long"}[s.bits]))
        hi = xs[0].astype(d.dtype).view(d.bits_dtype)
        return ((hi << d.bits_dtype.type(s.bits)) | xs[1].view(u).astype(d.bits_dtype)).view(d.dtype), None
    if name == "min":
        return np.minimum(xs[0], xs[1]), None
    if name == "max":
        return np.maximum(xs[0], xs[1]), None
    if name == "clamp":
        return np.minimum(np.maximum(xs[0], xs[1]), xs[2]), None
    raise KeyError(name)


def _guard(op: Op, operands: list[Expectation]) -> None:
    """The UB guard of the built-ins: clamp with lo > hi; mul24/mad24 operands beyond 24 bits."""
    judged = np.logical_and.reduce([o.judged for o in operands])
    xs = [o.reference for o in operands]
    s = op.type.elem
    if op.op == "clamp" and (judged & (xs[1] > xs[2])).any():
        raise UndefinedBehaviour("clamp with minval > maxval (§6.15.3)")
    if op.op in ("mul24", "mad24"):
        lo, hi = (-(1 << 23), (1 << 23) - 1) if s.signed else (0, (1 << 24) - 1)
        for x in xs[:2]:
            if (judged & ((x < lo) | (x > hi))).any():
                raise UndefinedBehaviour(f"{op.op} operand outside 24 bits (§6.15.3)")


def _integer_builtin(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    s = op.args[0].type.elem
    operands = [widen(e, a.type, op.args[0].type) for a, e in zip(op.args, args)]
    _guard(op, operands)
    result = scalar(op.type.scalar)
    rule = RULE_24BIT if op.op in ("mul24", "mad24") else RULE_MAD_HI if op.op == "mad_hi" else RULE_INTEGER
    out = combine(lambda *xs: _integer(op.op, s, xs)[0], operands, result.name, rule, ftz)
    if op.op not in ("mad_hi", "mul24", "mad24"):  # the others are defined for every operand
        return out
    _, ok = _integer(op.op, s, tuple(o.reference for o in operands))
    if ok is None:
        return out
    certain = np.logical_and.reduce([o.certain()[1] for o in operands])
    return unjudge(out, ~(ok & certain), rule)


for _name in (b.name for b in INTEGER_BUILTINS):
    reference(_name)(_integer_builtin)
