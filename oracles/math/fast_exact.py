"""Vectorized lanes of the math built-ins whose accepted set needs no reference value: the exact
functions (oracles.math.exact.EXACT: OpenCL C 3.0.19 §6.15.2 Table 14 and §6.15.4, 0 ulp or
correctly rounded in Tables 65, 66, 68, 69; those with an out-parameter, fract, modf, frexp and
remquo, give both results; fma on half and float only), mad (Table 65: "Implemented either as a correctly
rounded fma or as a multiply followed by an add both of which are correctly rounded"), lgamma and
lgamma_r (Table 65: the value is undefined off its prescribed points; lgamma_r's sign is Γ's
sign), and every lane of a function the build leaves unjudged (:func:`never_judged`: every
function where the build voids every accuracy rule, oracles.math.bounds.accuracy_void; an exact
function whose bound is none, mad on double, half and the embedded profile), for
:mod:`oracles.math.fast`.

Each gives, for operands that are finite, normal and nonzero (the filter's candidates: flushing,
§7.5.3, and the edge cases of §7.5.1 and C99 F.9 stay with :mod:`oracles.math.lanewise`), the lanes the
exact path (``oracles.math.lanewise.lanewise_at``) builds there, bit for bit: the result computed in
numpy where it is exact (checked: a subtraction is kept only where TwoSum's error is 0, so its one
rounding to the lane's type is numpy's cast, round to nearest even), the rule the exact path names
(the function's bound, or its special rule where an operand or a result is zero: C99 F.9 and the
definitions prescribe those values, sign included), and no error scale (none is measured for an
exact function). Lanes whose result is not such a value, and under -cl-no-signed-zeros lanes with
a zero result (either sign is accepted there), are left to the exact path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from lang.maths import MathFn
from lang.types import Type, scalar
from oracles import rules
from oracles.expect import Expectation
from oracles.floats import fmt
from oracles.math.bounds import RULE_LGAMMA_SIGN, accuracy_void, bound_for, profile_of, rule_for
from oracles.math.exact import EXACT
from oracles.math.references import WIDE_OK

_Lanes = tuple[np.ndarray, list[np.ndarray]]  # which lanes are decided, and each output's values there


def _exact_difference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x - y`` in a type wider than ``x``'s where there is one (float64 for half and float, the
    x87 long double for double), and where that difference is exact (TwoSum's error 0)."""
    w = np.longdouble if x.dtype == np.float64 and WIDE_OK else np.float64
    a, b = x.astype(w), -y.astype(w)
    s = a + b
    back = s - a
    return s, ((a - (s - back)) + (b - back)) == 0


def _fract(x: np.ndarray, tname: str) -> _Lanes:
    """fract(x) = fmin(x - floor(x), 0x1.fffffep-1f), iptr = floor(x) (§6.15.2; the bound of the
    type's largest value below 1 for every type, as oracles.math.exact.EXACT["fract"] has it): the
    difference correctly rounded, then the fmin. float and double subtract in their own type (one
    IEEE 754 subtraction, rounded to nearest even: the correctly rounded difference, a negative x
    near 0 included); half, whose numpy arithmetic is not its own, where the wider difference is
    exact."""
    floor = np.floor(x)
    if x.dtype == np.float16:
        d, ok = _exact_difference(x, floor)
    else:
        d, ok = x - floor, np.ones(len(x), bool)
    below_one = x.dtype.type(1 - 2.0 ** -fmt(tname).p)
    return ok, [np.minimum(d.astype(x.dtype), below_one), floor]


def _modf(x: np.ndarray, tname: str) -> _Lanes:
    """modf: the integral part trunc(x) with x's sign, and x minus it (exact in x's type) with x's
    sign (C99 F.9.3.12)."""
    whole = np.trunc(x)
    return np.ones(len(x), bool), [np.copysign(x - whole, x), whole]


def _frexp(x: np.ndarray, tname: str) -> _Lanes:
    """frexp: x = m·2^e with 0.5 <= |m| < 1 (exact for normal x)."""
    m, e = np.frexp(x)
    return np.ones(len(x), bool), [m, e.astype(np.int32)]


def _remquo(x: np.ndarray, y: np.ndarray, tname: str) -> _Lanes:
    """remquo: r = x - n·y with n = x/y rounded to nearest even, and quo = sign(n)·(|n| mod 128)
    (§6.15.2 Table 14, C99 F.9.7.3; oracles.math.exact.EXACT["remquo"]). With a = |x|, b = |y|
    in the wider type ``w`` of :func:`_exact_difference` (where 128·b cannot overflow), a' =
    fmod(a, 128·b) is exact (C99 7.12.10.1) and a/b = 128·M + a'/b, so n = 128·M + rint(a'/b)
    (128·M is even: a tie rounds the same way) and the remainder is a' - rint(a'/b)·b, x's sign
    applied (remainder(-x, y) = -remainder(x, y)). q = fl(a'/b) < 129 is within ``eps_w·q`` of
    a'/b, so rint(q) is rint(a'/b) where q is farther than that from a half-integer; then
    rint(q)·b (8 + p bits) and a' - rint(q)·b, a value of the lane's type (the remainder is exact),
    are exact; an exact zero has x's sign, and quo's low 7 bits are rint(a'/b)'s with the sign of
    x/y (n is not 0 where they are not)."""
    w = np.longdouble if x.dtype == np.float64 and WIDE_OK else np.float64
    a, b = np.abs(x.astype(w)), np.abs(y.astype(w))
    a = np.fmod(a, b * w(128))
    q = a / b
    n = np.rint(q)
    ok = np.abs(np.abs(q - n) - w(0.5)) > q * np.finfo(w).eps
    n = np.where(ok, n, 0)
    r = (a - n * b).astype(x.dtype)
    r = np.where(r == 0, x.dtype.type(0), r)
    r = np.where(np.signbit(x), -r, r)
    m = n.astype(np.int64) % 128
    return ok, [r, np.where(np.signbit(x) != np.signbit(y), -m, m).astype(np.int32)]


def _quotient_masks(quo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """remquo's quo accepts any int with its sign and low 7 bits (the sign free where they are 0),
    as oracles.math.lanewise.quotient_lane has it."""
    low = np.abs(quo).astype(np.uint32)
    mask = np.uint32(0x7F) | np.where(low != 0, np.uint32(0x80000000), np.uint32(0))
    return mask, quo.astype(np.uint32) & mask


def _all(x: np.ndarray, *_: object) -> np.ndarray:
    return np.ones(len(x), bool)


def _one(fn: Callable[..., np.ndarray]) -> Callable[..., _Lanes]:
    """An exact function whose numpy form gives the exact path's value at every finite, normal,
    nonzero operand set (oracles.math.exact.EXACT: the same definitions)."""
    return lambda *args: (_all(*args), [fn(*args[:-1])])


def _min_common(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(y < x, y, x)  # §6.15.4 min: "Returns y if y < x, otherwise it returns x"


def _max_common(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(x < y, y, x)  # §6.15.4 max: "Returns y if x < y, otherwise it returns x"


def _by_magnitude(x: np.ndarray, y: np.ndarray, smaller: bool) -> np.ndarray:
    """minmag/maxmag (§6.15.2): the operand of smaller (larger) magnitude, fmin (fmax) where the
    magnitudes are equal."""
    ax, ay = np.abs(x), np.abs(y)
    tie = np.fmin(x, y) if smaller else np.fmax(x, y)
    return np.where(ax == ay, tie, np.where((ax < ay) == smaller, x, y))


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """round (§6.15.2: halfway cases away from zero): x - trunc(x) is exact, and so is adding 1 to an
    integer below 2^p; a zero keeps x's sign."""
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.copysign(x.dtype.type(1), x), whole)


def _fdim(x: np.ndarray, y: np.ndarray, tname: str) -> _Lanes:
    """fdim: x - y correctly rounded where x > y (where the wider difference is exact), else +0."""
    d, ok = _exact_difference(x, y)
    return ok | ~(x > y), [np.where(x > y, d.astype(x.dtype), x.dtype.type(0))]


def _fma(x: np.ndarray, y: np.ndarray, z: np.ndarray, tname: str) -> _Lanes:
    """fma on half and float: x·y is exact in float64 (at most 48 bits, no overflow or underflow for
    normal operands), so the correctly rounded x·y + z is one :func:`_rounded_sum` (an exact zero
    sum is +0, IEEE 754 §6.3, as in the exact path: its addends differ in sign); double's product
    needs more bits than numpy has, left to the exact path."""
    if x.dtype == np.float64:
        return np.zeros(len(x), bool), [x]
    r, ok = _rounded_sum(x.astype(np.float64) * y.astype(np.float64), z.astype(np.float64), x.dtype)
    return ok, [r]


def _ldexp(x: np.ndarray, k: np.ndarray, tname: str) -> _Lanes:
    """ldexp: x·2^k, exact where it is a finite normal value (others are left by exact_lanes)."""
    big = np.abs(k) > 4 * fmt(tname).emax  # keeps numpy's exponent within its int
    return ~big, [np.ldexp(x, np.where(big, 0, k).astype(np.int32)).astype(x.dtype)]


def _logb(x: np.ndarray, tname: str) -> _Lanes:
    return _all(x), [(np.frexp(x)[1] - 1).astype(x.dtype)]


def _ilogb(x: np.ndarray, tname: str) -> _Lanes:
    return _all(x), [(np.frexp(x)[1] - 1).astype(np.int32)]


def _remainder(x: np.ndarray, y: np.ndarray, tname: str) -> _Lanes:
    """remainder: remquo's remainder (oracles.math.exact.EXACT, C99 F.9.7.2)."""
    ok, (r, _) = _remquo(x, y, tname)
    return ok, [r]


def _clamp(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, tname: str) -> _Lanes:
    """clamp (§6.15.4): fmin(fmax(x, minval), maxval); undefined where minval > maxval (the exact
    path's lanes there name that rule)."""
    return lo <= hi, [np.fmin(np.fmax(x, lo), hi)]


_EXACT: dict[str, Callable[..., _Lanes]] = {
    "fract": _fract, "modf": _modf, "frexp": _frexp, "remquo": _remquo,
    "remainder": _remainder,
    "fmin": _one(np.fmin), "fmax": _one(np.fmax), "fmin_common": _one(_min_common), "fmax_common": _one(_max_common),
    "minmag": _one(lambda x, y: _by_magnitude(x, y, True)), "maxmag": _one(lambda x, y: _by_magnitude(x, y, False)),
    "fabs": _one(np.abs), "copysign": _one(np.copysign), "fmod": _one(np.fmod), "nextafter": _one(np.nextafter),
    "ceil": _one(np.ceil), "floor": _one(np.floor), "trunc": _one(np.trunc), "rint": _one(np.rint),
    "round": _one(_round_half_away), "sign": _one(lambda x: np.copysign(x.dtype.type(1), x)),
    "step": _one(lambda e, x: np.where(x < e, x.dtype.type(0), x.dtype.type(1))),
    "fdim": _fdim, "fma": _fma, "ldexp": _ldexp, "logb": _logb, "ilogb": _ilogb, "fclamp": _clamp,
}


def _rounded_sum(a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``a + b`` (float64) correctly rounded to ``dtype`` (float), and where that is certain.

    ``s = fl64(a + b)`` and its error ``t`` are exact (TwoSum). Every rounding boundary of
    ``dtype`` (a midpoint of two floats, subnormal ones and MAX + ulp/2 included: 25 bits) is a
    float64, so none lies in ``(s, s + t]``: it would be nearer ``a + b`` than ``s``, the nearest
    float64. Rounding ``s`` (numpy's cast, to nearest even) therefore rounds ``a + b`` the same way
    where ``t = 0`` or ``s`` is not itself a boundary (where it is, the tie would be ``s``'s, not
    ``a + b``'s)."""
    s = a + b
    back = s - a
    t = (a - (s - back)) + (b - back)
    r = s.astype(dtype)
    c = r.astype(np.float64)
    up = np.nextafter(r, dtype.type(np.inf)).astype(np.float64)
    down = np.nextafter(r, dtype.type(-np.inf)).astype(np.float64)
    tie = (s == (c + up) / 2) | (s == (c + down) / 2)
    return r, (t == 0) | ~tie


def _mad(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """mad's two results on float lanes (oracles.math.exact.EXACT["mad"]): the correctly rounded fma and the
    correctly rounded product followed by the correctly rounded add, and where both are certain and
    finite. x·y of two floats is exact in float64 (48 bits), so each is one :func:`_rounded_sum`; an
    exact zero sum of nonzero operands is +0 (IEEE 754 §6.3) in numpy as in the exact path."""
    dtype = x.dtype
    z64 = z.astype(np.float64)
    product = x.astype(np.float64) * y.astype(np.float64)
    fused, fused_ok = _rounded_sum(product, z64, dtype)
    rounded = product.astype(dtype)  # the correctly rounded multiply
    split, split_ok = _rounded_sum(rounded.astype(np.float64), z64, dtype)
    return fused, split, fused_ok & split_ok & np.isfinite(rounded)


def _lgamma_unprescribed(x: np.ndarray) -> np.ndarray:
    """Finite x where C99 F.9.5.3 prescribes nothing: not 1 or 2 (+0), not a pole (+inf)."""
    return (x != 1) & (x != 2) & ((x > 0) | (x != np.floor(x)))


def unjudged(f: MathFn, tname: str, n: int) -> list[Expectation]:
    """``n`` lanes of each output of ``f`` on ``tname``, none judged (as ``oracles.math.lanes.unjudged``
    packs them)."""
    types = [f.operand_type(f.result, Type(tname)).scalar] + ([f.operand_type(f.out, Type(tname)).scalar] if f.out
                                                               else [])  # ilogb's result: int
    return [Expectation(t, [np.zeros(n, scalar(t).bits_dtype)], np.zeros(n, bool), np.zeros(n, bool),
                        np.full(n, rules.index("unspecified"), np.int16)) for t in types]


def never_judged(f: MathFn, tname: str, env: frozenset) -> bool:
    """Whether ``oracles.math.lanewise.lanewise_at`` (and ``oracles.math.geometric``) judges none of
    ``f``'s lanes here, whatever the operands (a lane whose operand is not one certain value is not
    judged either): the build voids every accuracy rule (and so every edge case rule,
    oracles.math.bounds.accuracy_void), or ``f`` is an exact function whose bound is none, which
    is decided before any special value."""
    return accuracy_void(tname, env) or (f.name in EXACT and bound_for(f, tname, env)[0].kind == "none")


def exact_lanes(f: MathFn, tname: str, env: frozenset,
                values: list[np.ndarray]) -> tuple[np.ndarray, list[Expectation]] | None:
    """The lanes of ``f`` (one of :data:`DECIDED`) at operands ``values`` (finite, normal, nonzero,
    of the lane's type) that this module decides, and their expectations per output (module
    docstring); None for another function or a build with -cl-unsafe-math-optimizations (mad
    aside: Table 67 keeps its bound)."""
    if f.name not in DECIDED or ("unsafe" in env and f.name != "mad"):
        return None
    profile = profile_of(tname, env)
    x = values[0]
    n = len(x)
    if f.name == "mad":
        bound, _ = bound_for(f, tname, env)
        if bound.kind != "mad":
            return None
        fused, split, ok = _mad(*values)
        tiny = fmt(tname).tiny
        for r in (fused, split):  # finite, and no flushable result (§7.5.3); a zero sum is +0 in both paths
            ok &= np.isfinite(r) & ((r == 0) | (np.abs(r) >= tiny))
            ok &= (r != 0) | ("nsz" not in env)  # a zero of either sign (-cl-no-signed-zeros): the exact path
        m = int(ok.sum())
        return ok, [Expectation(tname, [fused[ok], split[ok]], np.ones(m, bool), np.zeros(m, bool),
                                np.full(m, rules.index(rule_for("mad", "mad", profile)), np.int16))]
    if f.name in ("lgamma", "lgamma_r"):
        ok = _lgamma_unprescribed(x)
        m = int(ok.sum())
        value = Expectation(tname, [np.zeros(m, scalar(tname).bits_dtype)], np.zeros(m, bool), np.zeros(m, bool),
                            np.full(m, rules.index("unspecified"), np.int16))  # undefined (Table 65): not judged
        if f.name == "lgamma":
            return ok, [value]
        v = x[ok]
        sign = np.where((v > 0) | (np.floor(v) % 2 == 0), 1, -1).astype(np.int32)  # Γ's sign (§6.15.2 Table 14)
        return ok, [value, Expectation.exact("int", sign, rules.index(RULE_LGAMMA_SIGN))]
    bound, _ = bound_for(f, tname, env)
    bound_rule = rules.index(rule_for(f.name, "cr" if bound.kind == "cr" else "exact", profile))
    special_rule = rules.index(rule_for(f.name, "special", profile))
    with np.errstate(all="ignore"):
        ok, outputs = _EXACT[f.name](*values, tname)
        tiny = fmt(tname).tiny
        edge = np.zeros(n, bool)
        for out in outputs:
            if out.dtype.kind == "f":
                ok &= np.isfinite(out) & ((out == 0) | (np.abs(out) >= tiny))  # no flushable result (§7.5.3)
                ok &= (out != 0) | ("nsz" not in env)  # a zero of either sign (-cl-no-signed-zeros): the exact path
                edge |= out == 0
    rule = np.where(edge, special_rule, bound_rule)[ok].astype(np.int16)
    types = [tname if out.dtype.kind == "f" else "int" for out in outputs]
    got = [replace(Expectation.exact(t, out[ok]), rule=rule) for t, out in zip(types, outputs)]
    if f.name == "remquo":
        got[1].masks = [_quotient_masks(outputs[1][ok])]
    return ok, got


DECIDED = frozenset({*_EXACT, "mad", "lgamma", "lgamma_r"})
"""The functions this module decides lanes of."""
