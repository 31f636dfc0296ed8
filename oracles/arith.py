"""References of the conversions area: ``convert``, cast, ``as_T`` and the arithmetic operators.

Each reference maps the expectations of its operands to the expectation of its result, lane by
lane over all work-items at once (oracles.interpreter).
"""

from __future__ import annotations

from itertools import product

import numpy as np

from lang.ir import Op
from lang.ops import Handlers
from lang.types import common_type, scalar
from oracles import conversions, rules
from oracles.expect import Expectation, as_bits
from oracles.math.lanewise import flushable, relaxed_judged
from oracles.operands import (
    MAX_CANDIDATES,
    Reference,
    UndefinedBehaviour,
    convert_to,
    converted_operands,
    flush_result,
    flush_variants,
)

REFERENCES: Handlers[Reference] = Handlers()
"""The references of this module, by operation name (assembled in oracles.references)."""
reference = REFERENCES.register


@reference("convert")
def _convert(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§6.4.3: lane-wise conversion with the requested saturation and rounding."""
    return conversions.expect_convert(
        args[0], op.type.scalar, saturate=bool(op.attr("sat")), rounding=op.attr("rounding"), ftz=ftz
    )


@reference("cast")
def _cast(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§6.4.2: a cast converts the value (rtz to integers, rte to floats) and replicates a scalar."""
    return convert_to(args[0], op.args[0].type, op.type, ftz)


RULE_AS_SAME = rules.register(
    "as.bits",
    "as_T with the same number of elements copies the bits unchanged",
    "OpenCL C 3.0 §6.4.4",
)
RULE_AS_4_TO_3 = rules.register(
    "as.4to3",
    "as_T from a 4-component to a 3-component type passes the bits of the first three lanes through",
    "OpenCL C 3.0 §6.4.4",
)


@reference("as")
def _as(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§6.4.4: same lane count copies bits; 4 -> 3 lanes keeps xyz; other lane counts are
    implementation-defined (never judged). A lane that may be any NaN has unspecified bits."""
    src_t, dst_t = op.args[0].type, op.type
    arg = args[0]
    dst = scalar(dst_t.scalar)
    if src_t.width == dst_t.width or (src_t.width == 4 and dst_t.width == 3):
        if src_t.width == dst_t.width:
            keep = np.arange(len(arg))
            rule = RULE_AS_SAME
        else:
            keep = (np.arange(n)[:, None] * 4 + np.arange(3)[None, :]).ravel()
            rule = RULE_AS_4_TO_3
        sel = arg.select(keep)
        return Expectation(
            dst.name,
            [a.view(dst.bits_dtype) for a in sel.allowed],
            sel.judged & ~sel.any_nan,
            np.zeros(len(sel), bool),
            np.full(len(sel), rule, np.int16),
        )
    lanes = n * dst_t.width
    return Expectation(dst.name, [np.zeros(lanes, dst.bits_dtype)], np.zeros(lanes, bool), np.zeros(lanes, bool))


def arith_is_defined(operator: str, a: str, b: str) -> bool:
    """Whether ``a op b`` is defined for *every* pair of operand values (no signed overflow)."""
    c = scalar(common_type(a, b))
    if c.is_float or not c.signed:
        return True
    lo_a, hi_a = scalar(a).min, scalar(a).max
    lo_b, hi_b = scalar(b).min, scalar(b).max
    if operator == "+":
        extremes = [lo_a + lo_b, hi_a + hi_b]
    elif operator == "-":
        extremes = [lo_a - hi_b, hi_a - lo_b]
    else:
        extremes = [x * y for x in (lo_a, hi_a) for y in (lo_b, hi_b)]
    return c.min <= min(extremes) and max(extremes) <= c.max


RULE_ARITH_FLOAT = rules.register(
    "arith.float.correctly_rounded",
    "x + y, x - y and x * y are correctly rounded (0 ulp) in round-to-nearest-even",
    "OpenCL C 3.0 §7.4 Table 65; §7.1 default rounding",
)
RULE_ARITH_UNSIGNED = rules.register(
    "arith.unsigned.wrap",
    "unsigned arithmetic is reduced modulo 2^N",
    "C99 §6.2.5p9 (OpenCL C 3.0 §6.5.1)",
)
RULE_ARITH_SIGNED = rules.register(
    "arith.signed.exact",
    "signed arithmetic that cannot overflow gives the exact result",
    "C99 §6.5.5-6.5.6 (OpenCL C 3.0 §6.5.1)",
)


def _float_op(operator: str, x: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    """Correctly rounded + - * on a float type. binary32 and binary16 are computed in binary64
    and rounded once more: with 53 >= 2p + 2 bits the double rounding is innocuous
    (Figueroa, 'When is double rounding innocuous?', 1995), so the result is correctly rounded."""
    dtype = scalar(name).dtype
    with np.errstate(all="ignore"):
        a, b = x.astype(np.float64), y.astype(np.float64)
        r = a + b if operator == "+" else a - b if operator == "-" else a * b
        return r.astype(dtype)




RULE_BITWISE = rules.register(
    "arith.bitwise",
    "& | ^ act on the bits of the operands after the usual arithmetic conversions",
    "OpenCL C 3.0 §6.5.6",
)

_INT_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and, "|": np.bitwise_or,
            "^": np.bitwise_xor}


@reference("arith")
def _arith(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """x op y: both operands convert to the common type (§6.4.1, C99 §6.3.1.8), a scalar beside a
    vector is widened (§6.5.1), then the operation is applied in that type. Signed + - * must not
    overflow (the strategies bound the operands): an overflow in a judged lane is a generator bug."""
    operator = op.attr("operator")
    c = scalar(op.type.scalar)
    operands = converted_operands(op, args, op.type, ftz)
    judged = operands[0].judged & operands[1].judged
    outs: list[np.ndarray] = []
    if c.is_float:
        if flushable(c.name, ftz):  # a subnormal operand may be read as a zero of either sign (§7.5.3)
            choices = [[v for x in o.candidates() for v in [x, *flush_variants(x, c)]] for o in operands]
        else:
            choices = [o.candidates() for o in operands]
        for x, y in product(*choices):
            r = _float_op(operator, x, y, c.name)
            outs.append(r)
            if flushable(c.name, ftz):
                with np.errstate(all="ignore"):
                    wide = _float_op(operator, x, y, "double")
                outs.extend(flush_result(r, c.name, wide))
        rule = RULE_ARITH_FLOAT
    else:
        x, y = operands[0].reference, operands[1].reference
        with np.errstate(all="ignore"):
            if not c.signed or operator in "&|^":  # unsigned wraps modulo 2^N (C99 §6.2.5p9)
                result = _INT_OPS[operator](x, y)
            else:  # exact in int64 for 32 bits and less, in Python integers for long
                wide = np.int64 if c.bits <= 32 else object
                exact = _INT_OPS[operator](x.astype(wide), y.astype(wide))
                if (judged & ((exact < c.min) | (exact > c.max))).any():
                    raise UndefinedBehaviour(f"signed overflow in {op.type} {operator}")
                result = np.where(judged, exact, 0).astype(c.dtype)
        outs.append(result.astype(c.dtype))
        rule = RULE_BITWISE if operator in "&|^" else RULE_ARITH_SIGNED if c.signed else RULE_ARITH_UNSIGNED
    any_nan = np.zeros(len(judged), bool)
    masks = []
    if c.is_float:
        any_nan = np.isnan(outs[0]) | operands[0].any_nan | operands[1].any_nan
        judged = judged & relaxed_judged(c.name, ftz, [o.reference for o in operands], outs[0], any_nan)
        if "nsz" in ftz:
            masks = [signless_zero(outs, c.name)]
    base = Expectation(c.name, [as_bits(outs[0])], judged, any_nan, np.full(len(judged), rule, np.int16),
                       masks=masks)
    return base.with_alternatives([as_bits(o) for o in outs[1:MAX_CANDIDATES]])


def signless_zero(outs: list[np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    """The mask that accepts a zero of either sign in every lane where some allowed result is a
    zero (and nothing elsewhere): under -cl-no-signed-zeros "the sign of a zero result is not
    significant" (OpenCL 3.0 API §5.8.6.3; set by -cl-unsafe-math-optimizations too)."""
    s = scalar(name)
    zero = np.zeros(len(outs[0]), bool)
    for o in outs:
        zero |= o == 0
    magnitude = np.where(zero, (1 << (s.bits - 1)) - 1, 0).astype(s.bits_dtype)  # every bit but the sign
    return magnitude, np.where(zero, 0, 1).astype(s.bits_dtype)  # 1: matches no lane (its mask is 0)
