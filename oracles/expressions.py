"""References of the expression operations (``fuzz.ops`` area ``expressions``): vector components,
vector literals, vloadn/vstoren, shuffles, selections, relational, equality and logical operators,
integer operators and built-ins, relational built-ins (DIGEST §2, §4, §6).

Operations that move lanes (swizzles, literals, loads and stores, shuffles, selections) gather the
operands' expectations, so every candidate, NaN allowance and rule travels with its lane.
Operations that compute apply their function to every combination of the operands' candidates
(:func:`combine`); a lane is judged where every operand lane it reads is judged. Integer results
are computed exactly (numpy at twice the width, or Python integers for 64-bit products) and then
saturated or wrapped as each rule says.

The UB guard: a judged lane that reaches a case the spec leaves undefined or implementation-defined
(signed overflow, clamp with lo > hi, mul24 operands outside 24 bits) raises
:class:`~oracles.evaluate.UndefinedBehaviour`: the strategies build such programs never.
"""

from __future__ import annotations

from itertools import product
from typing import Callable

import numpy as np

from fuzz.ir import Op
from fuzz.ops import INTEGER_BUILTINS, RELATIONAL_BUILTINS
from fuzz.types import Scalar, Type, operand_type, scalar, truth_type, unsigned_of
from oracles import conversions, rules
from oracles.evaluate import (MAX_CANDIDATES, UndefinedBehaviour, converted_operands, flush_variants, reference,
                              widen)
from oracles.expect import Expectation, as_bits, concat, is_nan_bits
from oracles.spirv_only import extended, safe_divisor

_S = "OpenCL C 3.0"


def _rule(key: str, text: str, section: str) -> int:
    return rules.register(key, text, f"{_S} {section}")


RULE_COMPONENTS = _rule("vector.components", "a component selection, vector literal, vloadn, vstoren or "
                        "shuffle copies the lanes it names, bits unchanged", "§6.3.6, §6.3.7, §6.15.7, §6.15.13")
RULE_UNDEFINED_LANE = _rule("vector.undefined_lane", "the w lane of a 3-component vector read through .hi or "
                            ".odd is undefined (not judged)", "§6.3.7")
RULE_UNWRITTEN = _rule("vstore.unwritten", "lanes of an output element that vstoren does not write are "
                       "not judged", "§6.15.7")
RULE_SELECT = _rule("select.msb", "select and vector ?: take b (the second expression) where the MSB of "
                    "the condition lane is set, a scalar condition where it is nonzero", "§6.15.6, §6.5.9")
RULE_BITSELECT = _rule("bitselect.bits", "bitselect takes each bit from b where c's bit is 1, else from a",
                       "§6.15.6")
RULE_TRUTH = _rule("truth.values", "relational, equality, logical and ! operators and the is* built-ins give "
                   "1/0 for scalars and -1/0 per lane for vectors; ordered comparisons are false with a NaN, "
                   "!= and isnotequal true", "§6.5.4-§6.5.8, §6.15.6")
RULE_ANY_ALL = _rule("any_all.msb", "any / all test the MSB of each lane and give int 1 or 0", "§6.15.6")
RULE_DIV = _rule("div.trunc", "integer / truncates toward zero and % has the sign of the dividend (the program "
                 "replaces a divisor of 0, or -1 under MIN, by 1)", "§6.5.1 (C99 §6.5.5)")
RULE_SHIFT = _rule("shift.masked", "a shift uses the low log2(N) bits of the count (N after promotion for "
                   "scalars, the lane width for vectors); >> of a negative signed value fills with ones",
                   "§6.5.10")
RULE_COMPLEMENT = _rule("complement.bits", "~x flips every bit of the promoted operand", "§6.5.6")
RULE_INTEGER = _rule("integer.builtin", "integer built-ins are exact: computed at full precision, then "
                     "saturated (_sat), halved (hadd, rhadd) or reduced as Table 13 says", "§6.15.3 Table 13")
RULE_24BIT = _rule("integer.mul24", "mul24 / mad24 on operands within 24 bits give the exact product (and "
                   "sum); lanes whose exact result does not fit the type are not judged", "§6.15.3 Table 13")
RULE_MAD_HI = _rule("integer.mad_hi", "mad_hi is mul_hi(a, b) + c, wrapping for unsigned types; signed lanes "
                    "whose sum overflows are not judged", "§6.15.3 Table 13")


# ---- lane bookkeeping -------------------------------------------------------------------------


def _per_item(n: int, width: int, lanes: list[int] | np.ndarray) -> np.ndarray:
    """Indices of lanes ``lanes`` of every work-item of an operand of ``width`` lanes each."""
    return (np.arange(n)[:, None] * width + np.asarray(lanes, dtype=np.intp)[None, :]).ravel()


def _unjudge(e: Expectation, mask: np.ndarray, rule: int) -> Expectation:
    """``e`` with the lanes of ``mask`` not judged, for the reason ``rule``."""
    if not mask.any():
        return e
    judged = e.judged & ~mask
    return Expectation(e.scalar, e.allowed, judged, e.any_nan, np.where(mask, np.int16(rule), e.rule))


def _with_rule(e: Expectation, rule: int) -> Expectation:
    """The same lanes, decided by ``rule`` where they are judged (an unjudged lane keeps its reason).
    A NaN that an operation moves may come out as any NaN: its payload and sign are not specified
    (004 §7.5.1, DIGEST §11.1 item 6), and devices do quiet signalling NaNs they copy."""
    any_nan = e.any_nan | is_nan_bits(e.allowed[0], e.scalar) if scalar(e.scalar).is_float else e.any_nan
    return Expectation(e.scalar, e.allowed, e.judged, any_nan, np.where(e.judged, np.int16(rule), e.rule))


def combine(fn: Callable[..., np.ndarray], operands: list[Expectation], out: str, rule: int,
            ftz: frozenset, *, nan_ok: bool = False) -> Expectation:
    """``fn`` applied lane-wise to every combination of the operands' candidates (the first
    combination gives the reference). Float operands of a type in ``ftz`` are also read flushed.
    A lane is judged where every operand is; a lane that may be any NaN makes the result unjudged
    unless ``nan_ok`` (the function does not look at a NaN's bits)."""
    judged = np.logical_and.reduce([o.judged for o in operands])
    if not nan_ok:
        judged = judged & ~np.logical_or.reduce([o.any_nan for o in operands])
    choices = []
    for o in operands:
        cands = o.candidates()
        s = scalar(o.scalar)
        if s.is_float and s.name in ftz:
            cands = cands + [v for c in cands for v in flush_variants(c, s)]
        choices.append(cands)
    outs = []
    with np.errstate(all="ignore"):
        for combo in product(*choices):
            outs.append(np.asarray(fn(*combo)).astype(scalar(out).dtype))
            if len(outs) >= MAX_CANDIDATES:
                break
    base = Expectation(out, [as_bits(outs[0])], judged, np.zeros(len(judged), bool),
                       np.where(judged, np.int16(rule), _first_rule(operands)))
    return base.with_alternatives([as_bits(o) for o in outs[1:]])


def _first_rule(operands: list[Expectation]) -> np.ndarray:
    """For an unjudged lane, the rule of the first operand that is unjudged there (it says why)."""
    rule = operands[0].rule.copy()
    for o in reversed(operands):
        rule = np.where(o.judged, rule, o.rule)
    return rule


def _gather(parts: list[Expectation], index: np.ndarray) -> Expectation:
    """Lanes of several expectations of one type (numbered one after another), gathered."""
    return concat(parts).select(index) if len(parts) > 1 else parts[0].select(index)


# ---- vector components, literals, loads and stores, shuffles (§6.3.6, §6.3.7, §6.15.7, §6.15.13) --


@reference("swizzle")
def _swizzle(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """The named components; index ``w`` of a 3-vector is the undefined w lane (.hi, .odd)."""
    w = op.args[0].type.width
    comps = np.array(op.attr("components"))
    index = _per_item(n, w, np.minimum(comps, w - 1))
    out = _with_rule(args[0].select(index), RULE_COMPONENTS)
    undefined = np.tile(comps >= w, n)
    return _unjudge(out, undefined, RULE_UNDEFINED_LANE)


@reference("insert")
def _insert(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """``v.comps = value``: the named lanes of the variable take the value's lanes in order."""
    w, k = op.type.width, op.args[1].type.width
    lanes = np.arange(w)
    source = np.tile(lanes, (n, 1)) + (np.arange(n) * w)[:, None]
    for j, c in enumerate(op.attr("components")):
        source[:, c] = n * w + np.arange(n) * k + j
    return _with_rule(_gather([args[0], args[1]], source.ravel()), RULE_COMPONENTS)


@reference("vec")
def _vec(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """(Tn)(parts): the parts' lanes in order; a single scalar is replicated (§6.3.6)."""
    width = op.type.width
    if len(args) == 1:
        return _with_rule(widen(args[0], op.args[0].type, op.type), RULE_COMPONENTS)
    offsets = np.cumsum([0] + [n * a.type.width for a in op.args])
    index = np.concatenate([offsets[i] + _per_item(n, a.type.width, range(a.type.width)).reshape(n, -1)
                            for i, a in enumerate(op.args)], axis=1).ravel()
    assert index.size == n * width
    return _with_rule(_gather(args, index), RULE_COMPONENTS)


@reference("vload")
def _vload(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """vloadn(offset, p): the n scalars at p + offset * n, p the first scalar of the element."""
    m, k, o = op.args[0].type.width, op.type.width, op.attr("offset")
    return _with_rule(args[0].select(_per_item(n, m, range(o * k, o * k + k))), RULE_COMPONENTS)


@reference("vstore")
def _vstore(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """vstoren(value, offset, p): lanes offset*n .. offset*n+n-1 of the element; the others are not
    written by the program and are not judged."""
    m, k, o = op.type.width, op.args[0].type.width, op.attr("offset")
    value = args[0]
    s = scalar(value.scalar)
    pad = Expectation(s.name, [np.zeros(n, s.bits_dtype)], np.zeros(n, bool), np.zeros(n, bool),
                      np.full(n, RULE_UNWRITTEN, np.int16))
    index = np.full((n, m), n * k, dtype=np.intp) + np.arange(n)[:, None]
    index[:, o * k:o * k + k] = _per_item(n, k, range(k)).reshape(n, k)
    return _with_rule(_gather([value, pad], index.ravel()), RULE_COMPONENTS)


def _mask_index(mask: Expectation, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The lane each mask lane names (its low ``bits`` bits) and where that is certain."""
    values, ok = mask.certain()
    return (as_bits(values) & ((1 << bits) - 1)).astype(np.intp), ok


@reference("shuffle")
@reference("shuffle2")
def _shuffle(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """Result lane i is lane ``mask[i] mod m`` of x (shuffle) or of x ++ y (shuffle2, mod 2m): only
    the low ilogb(2m-1) bits (one more for shuffle2) of each mask lane count (§6.15.13)."""
    m, k = op.args[0].type.width, op.type.width
    sources = args[:-1]
    bits = int(np.log2(m)) + (len(sources) - 1)
    lane, ok = _mask_index(args[-1], bits)
    lane = lane.reshape(n, k)
    item = np.arange(n)[:, None]
    index = np.where(lane < m, item * m + lane, n * m + item * m + (lane - m)).ravel()
    out = _with_rule(_gather(sources, index), RULE_COMPONENTS)
    return _unjudge(out, ~ok, RULE_COMPONENTS)


def _choose(cond: Expectation, cond_type: Type, on_true: Expectation, on_false: Expectation, n: int,
            width: int) -> Expectation:
    """Lane-wise ``cond ? on_true : on_false`` where a vector condition's lane is true when its MSB
    is set and a scalar one when it is nonzero (§6.15.6 select, §6.5.9)."""
    values, ok = widen(cond, cond_type, Type(cond_type.scalar, width)).certain()
    if cond_type.is_vector:  # the MSB of each lane, whatever the signedness
        truth = (as_bits(values) >> (scalar(cond.scalar).bits - 1)).astype(bool)
    else:
        truth = values != 0
    lanes = np.arange(n * width)
    out = _gather([on_false, on_true], np.where(truth, lanes + n * width, lanes))
    out = _with_rule(out, RULE_SELECT)
    return _unjudge(out, ~ok, RULE_SELECT)


@reference("select")
def _select(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    a, b, c = args
    return _choose(c, op.args[2].type, b, a, n, op.type.width)


@reference("ternary")
def _ternary(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    c, x, y = args
    return _choose(c, op.args[0].type, x, y, n, op.type.width)


@reference("bitselect")
def _bitselect(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """(a & ~c) | (b & c) on the bit patterns (floats included, §6.15.6). A NaN operand's bits are
    not specified (a device may quiet it on the way, DIGEST §11.1 item 6): those lanes are not judged."""
    def bits(a, b, c):
        a, b, c = as_bits(a), as_bits(b), as_bits(c)
        return ((a & ~c) | (b & c)).view(op.type.elem.dtype)
    out = combine(bits, args, op.type.scalar, RULE_BITSELECT, frozenset())
    if not op.type.elem.is_float:
        return out
    nan = np.logical_or.reduce([is_nan_bits(a.allowed[0], a.scalar) for a in args])
    return _unjudge(out, nan, RULE_BITSELECT)


# ---- truth values (§6.5.4-§6.5.8, §6.15.6) -----------------------------------------------------


def _truth(values: np.ndarray, operand: Type) -> np.ndarray:
    """Booleans as the operator's result: int 1/0 for scalar operands, -1/0 lanes for vectors."""
    t = truth_type(operand)
    return np.where(values, -1 if operand.is_vector else 1, 0).astype(t.elem.dtype)


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
            ">=": np.greater_equal}


@reference("compare")
def _compare(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """The operands are brought to one type (§6.5.4, §6.5.5), which also sizes the result."""
    t = operand_type(*(a.type for a in op.args))
    operands = converted_operands(op, args, t, ftz)
    fn = _COMPARE[op.attr("operator")]
    return combine(lambda x, y: _truth(fn(x, y), t), operands, op.type.scalar, RULE_TRUTH, ftz, nan_ok=True)


@reference("logic")
def _logic(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """&& / ||: each operand compares unequal to 0 in its own type (§6.5.7)."""
    t = op.args[0].type if op.args[0].type.is_vector else op.args[1].type
    operands = [widen(e, a.type, t) for a, e in zip(op.args, args)]
    both = np.logical_and if op.attr("operator") == "&&" else np.logical_or
    return combine(lambda x, y: _truth(both(x != 0, y != 0), t), operands, op.type.scalar, RULE_TRUTH, ftz,
                   nan_ok=True)


@reference("not")
def _not(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    t = op.args[0].type
    return combine(lambda x: _truth(x == 0, t), args, op.type.scalar, RULE_TRUTH, ftz, nan_ok=True)


@reference("any")
@reference("all")
def _any_all(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """1 if the MSB of any (all) lanes is set, else 0 (§6.15.6)."""
    w = op.args[0].type.width
    fold = np.any if op.op == "any" else np.all
    values, ok = args[0].certain()
    out = fold((values < 0).reshape(n, w), axis=1).astype(np.int32)
    judged = ok.reshape(n, w).all(axis=1)
    return Expectation("int", [as_bits(out)], judged, np.zeros(n, bool),
                       np.where(judged, np.int16(RULE_ANY_ALL), args[0].rule.reshape(n, w)[:, 0]))


_RELATIONAL: dict[str, Callable[..., np.ndarray]] = {
    "isequal": np.equal, "isnotequal": np.not_equal, "isgreater": np.greater, "isgreaterequal": np.greater_equal,
    "isless": np.less, "islessequal": np.less_equal,
    "islessgreater": lambda x, y: np.less(x, y) | np.greater(x, y),
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
    "isordered": lambda x, y: ~(np.isnan(x) | np.isnan(y)), "isunordered": lambda x, y: np.isnan(x) | np.isnan(y),
    "signbit": np.signbit,
}


def _isnormal(x: np.ndarray) -> np.ndarray:
    s_min = np.finfo(x.dtype).tiny
    with np.errstate(all="ignore"):
        return np.isfinite(x) & (np.abs(x) >= s_min)


_RELATIONAL["isnormal"] = _isnormal
assert set(_RELATIONAL) == {name for name, _, _ in RELATIONAL_BUILTINS}


def _relational(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """Table 18; signbit reads the sign of a NaN, which is unspecified: such lanes are not judged."""
    t = op.args[0].type
    fn = _RELATIONAL[op.op]
    return combine(lambda *xs: _truth(fn(*xs), t), args, op.type.scalar, RULE_TRUTH, ftz,
                   nan_ok=op.op != "signbit")


for _name in _RELATIONAL:
    reference(_name)(_relational)


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


@reference("div")
def _div(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
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
    """The count is the low log2(N) bits of the right operand viewed as unsigned, N the bits of the
    (promoted) left operand's type or lane (§6.5.10)."""
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
    s = op.type.elem
    x = conversions.expect_convert(args[0], s.name, ftz=ftz)
    return combine(lambda v: ~v, [x], s.name, RULE_COMPLEMENT, ftz)


# ---- integer built-ins (§6.15.3 Table 13) ------------------------------------------------------


def _mul_hi(x: np.ndarray, y: np.ndarray, s: Scalar) -> np.ndarray:
    """The high half of the exact product: member 1 of SPIR-V's U/SMulExtended."""
    return extended("SMulExtended" if s.signed else "UMulExtended", 1, x, y, s)


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Bits needed for each unsigned value (0 for 0)."""
    x = u.astype(np.uint64)
    r = np.zeros(x.shape, np.int64)
    for k in (32, 16, 8, 4, 2, 1):
        big = x >= np.uint64(1 << k)
        r += big * k
        x = np.where(big, x >> np.uint64(k), x)
    return r + (x > 0)


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
        ok = None if not s.signed else (exact >= s.min) & (exact <= s.max)
        return _fit(exact, s), ok
    if name in ("mul24", "mad24"):
        exact = wide[0] * wide[1] + (wide[2] if name == "mad24" else 0)
        return _fit(np.minimum(np.maximum(exact, s.min), s.max), s), (exact >= s.min) & (exact <= s.max)
    if name == "rotate":
        k = (xs[1].view(u).astype(np.uint64) & np.uint64(s.bits - 1))
        v = xs[0].view(u).astype(np.uint64)
        mask = np.uint64((1 << s.bits) - 1) if s.bits < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        left = (v << k) & mask
        right = np.where(k == 0, np.uint64(0), v >> ((np.uint64(s.bits) - k) % np.uint64(64)))
        return (left | right).astype(u).view(s.dtype), None
    if name == "clz":
        return (s.bits - _bit_length(xs[0].view(u))).astype(s.dtype), None
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
    return _unjudge(out, ~(ok & certain), rule)


for _name, _, _ in INTEGER_BUILTINS:
    reference(_name)(_integer_builtin)
