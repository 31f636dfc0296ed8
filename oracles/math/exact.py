"""The math built-ins whose result is exact, or one correct rounding computed exactly (OpenCL C
3.0 §6.15.2/4 definitions, C99 Annex F.9 edge cases; Table 65's 0 ulp and correctly rounded
entries): :data:`EXACT` gives each one's result (or its allowed results) at one operand set.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import mpmath
import numpy as np
from mpmath import mpf

from lang.types import scalar
from oracles.floats import Format, round_to
from oracles.math.lanes import same
from oracles.math.specials import (
    CLAMP_UNDEFINED,
    INF,
    MAX_UNDEFINED,
    MIN_UNDEFINED,
    NAN,
    is_negative,
    is_signaling,
)

INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def _m(x: float) -> mpf:
    return mpf(x)


def cr(value: mpf, f: Format) -> float:
    """``value`` correctly rounded (to nearest even) to the format ``f``."""
    return round_to(value, f, "n")


def _fmin(x: float, y: float):
    """C99 fmin (F.9.9.3, §6.15.2): "If one argument is a NaN, fmin() returns the other argument.
    If both arguments are NaNs, fmin() returns a NaN"; for a signaling NaN "signaling NaNs may
    behave as quiet NaNs" (footnote 46: may, so IEEE 754-2008 minNum's NaN is allowed too)."""
    if math.isnan(x):
        return NAN if math.isnan(y) else [y, NAN] if is_signaling(x) else y
    if math.isnan(y):
        return [x, NAN] if is_signaling(y) else x
    if x == 0 and y == 0 and is_negative(x) != is_negative(y):
        return [x, y]  # the order of ±0 is not specified (C99 F.9.9.2 recommends, does not require)
    return min(x, y)


def _fmax(x: float, y: float):
    r = _fmin(-x if not math.isnan(x) else x, -y if not math.isnan(y) else y)
    return [-v if not math.isnan(v) else v for v in r] if isinstance(r, list) else -r


def _minmag(x, y):
    if not (math.isnan(x) or math.isnan(y)) and abs(x) != abs(y):
        return x if abs(x) < abs(y) else y
    return _fmin(x, y)


def _maxmag(x, y):
    if not (math.isnan(x) or math.isnan(y)) and abs(x) != abs(y):
        return x if abs(x) > abs(y) else y
    return _fmax(x, y)


def _min_common(x: float, y: float):
    """§6.15.4 min: "Returns y if y < x, otherwise it returns x. If x or y are infinite or NaN, the
    return values are undefined" (not judged: specials.MIN_UNDEFINED). Of two zeros of either sign
    the formula returns x; IEEE 754's minNum, which compilers lower min to, may return either: both
    accepted."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return MIN_UNDEFINED
    if x == 0 and y == 0 and is_negative(x) != is_negative(y):
        return [x, y]
    return y if y < x else x


def _max_common(x: float, y: float):
    """§6.15.4 max: "Returns y if x < y, otherwise it returns x" (the same undefined operands, the
    same freedom between zeros; specials.MAX_UNDEFINED)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return MAX_UNDEFINED
    r = _min_common(-x, -y)
    return [-v for v in r] if isinstance(r, list) else -r


def _clamp(x: float, lo: float, hi: float):
    """§6.15.4 clamp on floats: "Returns fmin(fmax(x, minval), maxval). Results are undefined if
    minval > maxval" (not judged: specials.CLAMP_UNDEFINED; nor with a NaN bound, where that
    comparison says nothing: "skip"). fmin and fmax are C99's (a NaN x gives minval; the order of ±0
    is free)."""
    if math.isnan(lo) or math.isnan(hi):
        return "skip"
    if lo > hi:
        return CLAMP_UNDEFINED
    out: list[float] = []
    for m in _values(_fmax(x, lo)):
        out += [v for v in _values(_fmin(m, hi)) if not any(same(v, w) for w in out)]
    return out if len(out) > 1 else out[0]


def _values(result) -> list:
    """An exact function's result as a list of the values it allows."""
    return result if isinstance(result, list) else [result]


def _round_half_away(x: float) -> float:
    if not math.isfinite(x):
        return x
    n = math.floor(abs(x))
    r = n + 1 if abs(x) - n >= 0.5 else n
    return math.copysign(float(r), x)


def _rint(x: float) -> float:
    if not math.isfinite(x):
        return x
    return math.copysign(float(round(x)), x)  # Python's round is half to even


def _fma_special(x, y, z):
    if math.isnan(x) or math.isnan(y) or math.isnan(z):
        return NAN
    if math.isinf(x) or math.isinf(y):
        if x == 0 or y == 0:
            return NAN
        s = math.copysign(INF, x) * math.copysign(1, y)
        return NAN if math.isinf(z) and z != s else s
    return z if math.isinf(z) else None


def _fma(x, y, z, f: Format):
    special = _fma_special(x, y, z)
    if special is not None:
        return special
    exact = mpmath.fadd(mpmath.fmul(_m(x), _m(y), exact=True), _m(z), exact=True)
    if exact == 0:  # an exact zero sum: +0 unless both addends are -0 (IEEE 754 §6.3)
        prod_neg = is_negative(x) != is_negative(y)
        return -0.0 if (prod_neg and is_negative(z)) else 0.0
    return cr(exact, f)


def _mad(x, y, z, f: Format):
    """Either a correctly rounded fma or a correctly rounded multiply followed by a correctly
    rounded add (Table 65)."""
    fused = _fma(x, y, z, f)
    special = _fma_special(x, y, z)
    if special is not None:
        return special
    prod = cr(mpmath.fmul(_m(x), _m(y), exact=True), f)
    if math.isinf(prod):
        split = NAN if math.isinf(z) and z != prod else prod
    else:
        s = mpmath.fadd(_m(prod), _m(z), exact=True)
        split = (-0.0 if is_negative(prod) and is_negative(z) else 0.0) if s == 0 else cr(s, f)
    return [fused, split]


def _fdim(x, y, f):
    if math.isnan(x) or math.isnan(y):
        return NAN
    if not x > y:
        return 0.0
    if math.isinf(x) or math.isinf(y):
        return INF
    return cr(mpmath.fsub(_m(x), _m(y), exact=True), f)


def _ldexp(x, k, f):
    if math.isnan(x):
        return NAN
    if math.isinf(x) or x == 0:
        return x
    return cr(mpmath.ldexp(_m(x), k), f)


def _fmod(x, y):
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return NAN
    return x if math.isinf(y) else math.fmod(x, y)  # fmod is exact (C99 F.9.7.1)


def _remquo(x, y):
    """(remainder, quotient): n = x/y rounded to nearest even, r = x - n*y exact with x's sign
    at zero (§6.15.2, C99 F.9.7.2-3); quo has the sign of x/y and at least its low 7 bits."""
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return NAN, 0
    if math.isinf(y):
        return x, 0
    r = math.remainder(x, y)  # IEEE remainder, exact
    if r == 0:
        r = math.copysign(0.0, x)
    n = round(Fraction(x) / Fraction(y))  # ties to even
    return r, (-1 if n < 0 else 1) * (abs(n) % 128)  # only the sign and the low 7 bits are specified


def _frexp(x):
    if math.isnan(x):
        return NAN, 0
    if math.isinf(x) or x == 0:
        return x, 0
    m, e = math.frexp(x)
    return m, e


def _ilogb(x):
    if x == 0:
        return [INT_MIN, -INT_MAX]  # FP_ILOGB0 (§6.15.2.1: INT_MIN or -INT_MAX)
    if math.isnan(x):
        return [INT_MAX, INT_MIN]  # FP_ILOGBNAN
    if math.isinf(x):
        return INT_MAX
    return math.frexp(x)[1] - 1


def _logb(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return INF
    if x == 0:
        return -INF
    return float(math.frexp(x)[1] - 1)


def _fract(x, f):
    """§6.15.2: fmin(x - floor(x), 0x1.fffffep-1f) with iptr = floor(x) (and its footnote [47])."""
    if math.isnan(x):
        return NAN, NAN
    if math.isinf(x):
        return math.copysign(0.0, x), x
    if x == 0:
        return x, x
    fl = math.floor(x)
    r = cr(mpmath.fsub(_m(x), _m(fl), exact=True), f)
    return min(r, 1.0 - 2.0 ** -f.p), float(fl)


def _modf(x):
    if math.isnan(x):
        return NAN, NAN
    ip = math.copysign(float(math.trunc(x)), x) if math.isfinite(x) else x
    return math.copysign(0.0 if math.isinf(x) else x - ip, x), ip


def _nextafter(x, y, tname):
    """§6.15.2: "the next representable floating-point value following x in the direction of y".
    Where x == y (±0 and ∓0) no direction is given: C99 7.12.11.3 returns y, but OpenCL C's text
    (and F.9.8.3) does not say so, so x is allowed too."""
    if x == y and is_negative(x) != is_negative(y):
        return [y, x]
    dt = scalar(tname).dtype
    return float(np.nextafter(np.array(x, dt), np.array(y, dt)))


def _sign(x):
    if math.isnan(x):
        return 0.0
    return x if x == 0 else math.copysign(1.0, x)


EXACT: dict[str, Callable] = {
    "fma": lambda x, y, z, f, t: _fma(x, y, z, f), "mad": lambda x, y, z, f, t: _mad(x, y, z, f),
    "ceil": lambda x, f, t: float(np.ceil(x)), "floor": lambda x, f, t: float(np.floor(x)),
    "trunc": lambda x, f, t: float(np.trunc(x)), "rint": lambda x, f, t: _rint(x),
    "round": lambda x, f, t: _round_half_away(x), "fdim": lambda x, y, f, t: _fdim(x, y, f),
    "ldexp": lambda x, k, f, t: _ldexp(x, k, f), "fabs": lambda x, f, t: abs(x),
    "copysign": lambda x, y, f, t: math.copysign(x, y) if not math.isnan(x) else NAN,
    "fmin": lambda x, y, f, t: _fmin(x, y), "fmax": lambda x, y, f, t: _fmax(x, y),
    "fmin_common": lambda x, y, f, t: _min_common(x, y), "fmax_common": lambda x, y, f, t: _max_common(x, y),
    "fclamp": lambda x, lo, hi, f, t: _clamp(x, lo, hi),
    "minmag": lambda x, y, f, t: _minmag(x, y), "maxmag": lambda x, y, f, t: _maxmag(x, y),
    "fmod": lambda x, y, f, t: _fmod(x, y),
    "remainder": lambda x, y, f, t: _remquo(x, y)[0], "nextafter": lambda x, y, f, t: _nextafter(x, y, t),
    "logb": lambda x, f, t: _logb(x), "ilogb": lambda x, f, t: _ilogb(x), "sign": lambda x, f, t: _sign(x),
    "step": lambda e, x, f, t: ("skip" if math.isnan(e) or math.isnan(x) else 0.0 if x < e else 1.0),
    "nan": lambda code, f, t: NAN,
    # with an out-parameter: (result, pointee)
    "fract": lambda x, f, t: _fract(x, f), "modf": lambda x, f, t: _modf(x), "frexp": lambda x, f, t: _frexp(x),
    "remquo": lambda x, y, f, t: _remquo(x, y),
}
"""Functions whose result is exact or one correct rounding, computed exactly (copysign of a NaN
is a NaN of either sign here: its sign bit is the one exception we do not judge)."""
