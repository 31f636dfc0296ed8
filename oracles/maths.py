"""The oracle of floating-point arithmetic and the math, common and geometric built-ins (area ``math``).

For every output lane it gives the values the spec allows (:class:`Lane`, packed into an
:class:`oracles.expect.Expectation`):

* a value the spec prescribes (OpenCL C 3.0.19 §7.5.1 edge cases, C99 Annex F.9 which §7.5
  incorporates, and each function's definition in §6.15.2/4/5) is exact, sign included;
* otherwise the infinitely precise result is computed with mpmath at twice the format's precision
  plus 40 bits (``oracles.floats``) and the bound of :mod:`fuzz.maths` for the type, the
  device's profile and the program's build options decides: correctly rounded (one value), 0 ulp,
  at most k ulp (the interval of floats within k ulp(x) of the reference, §7.4, infinity allowed
  where the next value past MAX is within it), an absolute error, or not judged;
* where the device may flush denormals (no CL_FP_DENORM, §7.2) or the program is built with
  -cl-denorms-are-zero, the four results of §7.5.3: the result from operands with subnormals read
  as zeros of either sign, and a result that is subnormal before rounding flushed to ±0;
* NaN results are "any NaN" (payload and sign unspecified, DIGEST §5.2).

The float environment ``env`` (a frozenset) holds the flushable type names and flags: of the
device (``embedded``: EMBEDDED_PROFILE; ``cl2``: OpenCL C >= 2.0) and of the program's options
(:func:`fuzz.maths.option_flags`: ``finite``, ``unsafe``, ``mad``, ``daz``, ``cr``).

Every lane also carries its reference and ulp so that the judge can measure the error a driver
made (``Expectation.error``), passing or not.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from itertools import product
from typing import Callable

import mpmath
import numpy as np
from mpmath import mpf

from fuzz.ir import Op
from fuzz.maths import FUNCTIONS, UNSAFE_BOUNDS, Bound, MathFn
from fuzz.types import Type, scalar
from oracles import rules
from oracles.expect import ErrorScale, Expectation
from oracles.floats import Format, fmt, interval, round_to, ulp

NAN = math.nan
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
SPECIAL_SECTION = "OpenCL C 3.0 §7.5.1 and C99 Annex F.9 (edge cases)"


@dataclass
class Lane:
    """What one output lane may hold."""

    values: list = field(default_factory=list)  # exact candidates (floats, or ints for int results); [0] the reference
    ranges: list = field(default_factory=list)  # (lo, hi) inclusive intervals of values
    nan: bool = False  # any NaN
    judged: bool = True
    masks: list = field(default_factory=list)  # (mask, value): accepted where actual & mask == value
    rule: str = "unspecified"
    exact: mpf | None = None  # the infinitely precise result, for the error measure
    ulp: float = math.nan
    limit: float = math.nan  # the bound in ulps (0.5 for a correctly rounded result)

    def merge(self, other: "Lane") -> "Lane":
        """Either lane's results (a flushed operand's alternative, §7.5.3)."""
        if not (self.judged and other.judged):
            return unjudged()
        values = self.values + [v for v in other.values if not any(_same(v, w) for w in self.values)]
        return Lane(values, self.ranges + other.ranges, self.nan or other.nan, True, self.masks + other.masks,
                    self.rule, self.exact, self.ulp, self.limit)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    return a == b


def unjudged() -> Lane:
    return Lane([0.0], judged=False)


def nan_lane(rule: str) -> Lane:
    return Lane([NAN], nan=True, rule=rule)


# ---- rules ---------------------------------------------------------------------------------------

_TABLES = {"float": "Table 65", "float_ep": "Table 66", "double": "Table 68", "half": "Table 69", "half_ep": "Table 69"}


def _rule(fn: str, kind: str, profile: str, bound: Bound | None = None) -> str:
    """Register (once) and return the id of the rule deciding one lane."""
    if kind == "special":
        rid = f"math.{fn}.special"
        rules.register(rid, f"{fn}: the value prescribed for this operand is exact, sign included (NaN: any NaN)",
                       SPECIAL_SECTION)
        return rid
    if kind == "unsafe":
        rid = f"math.{fn}.{profile}.unsafe.{bound.kind}"
        what = f"{bound} + floor(|2x|) ulp" if fn in ("exp", "exp2") else f"{bound} (in its domain)"
        rules.register(rid, f"{fn} on {profile} with -cl-unsafe-math-optimizations: {what}",
                       "OpenCL C 3.0 §7.4 Table 67")
        return rid
    rid = f"math.{fn}.{profile}.{kind}"
    text = {"cr": f"{fn} on {profile} is correctly rounded",
            "exact": f"{fn} on {profile} is exact (0 ulp)",
            "mad": f"{fn} on {profile} is a correctly rounded fma or a correctly rounded multiply then add",
            "ulp": f"{fn} on {profile} is within {bound} of the infinitely precise result",
            "abs": f"{fn} on {profile} is within an absolute error of {bound.value if bound else 0:g}",
            "dot": f"{fn} on {profile} is within max*max*(2n-1)*EPSILON (absolute)",
            "cross": f"{fn} on {profile} is within max*max*3*EPSILON per component (absolute)"}[kind]
    rules.register(rid, text, f"OpenCL C 3.0 §7.4 {_TABLES[profile]}")
    return rid


# ---- the environment -------------------------------------------------------------------------------


def profile_of(tname: str, env: frozenset) -> str:
    return tname + ("_ep" if "embedded" in env and tname != "double" else "")


def flushable(tname: str, env: frozenset, fn: str = "") -> bool:
    """Whether denormals of ``tname`` may be flushed (§7.2; -cl-denorms-are-zero for float and
    double, API §5.8.4.2; half_ functions may flush, §7.5.3)."""
    return tname in env or ("daz" in env and tname in ("float", "double")) or fn.startswith("half_")


def relaxed_judged(tname: str, env: frozenset, operands: list[np.ndarray], result: np.ndarray,
                   any_nan: np.ndarray) -> np.ndarray:
    """Which lanes of + - * on ``tname`` the build options leave judged: none under
    -cl-unsafe-math-optimizations except float on OpenCL C >= 2.0 (Table 67; + - * keep Table 65's
    correct rounding there), and under it or -cl-finite-math-only only lanes whose operands and
    result are finite (API §5.8.4.3: the compiler may assume no NaN or INF)."""
    ok = np.ones(len(result), bool)
    if "unsafe" in env and (tname != "float" or "cl2" not in env):
        return ~ok
    if {"finite", "unsafe"} & env:
        with np.errstate(invalid="ignore"):
            for o in operands:
                ok &= np.isfinite(o)
            ok &= np.isfinite(result) & ~any_nan
    return ok


def bound_for(f: MathFn, tname: str, env: frozenset) -> tuple[Bound, str]:
    """The bound of ``f`` on ``tname`` under ``env`` and the kind of rule that states it."""
    profile = profile_of(tname, env)
    if "unsafe" in env:
        if tname != "float" or "cl2" not in env:  # Table 67 is float only, for OpenCL C >= 2.0
            return Bound("none"), "unsafe"
        if f.name in UNSAFE_BOUNDS:
            b = UNSAFE_BOUNDS[f.name]
            if "embedded" in env and b.kind == "ulp" and b.value in (2.5, 3):
                b = Bound("ulp", b.value + (0.5 if b.value == 2.5 else 1))
            return b, "unsafe"
    b = f.bound(profile)
    if "cr" in env and tname == "float" and f.name in ("fdiv", "sqrt"):
        b = Bound("cr")
    return b, b.kind


# ---- references (mpmath at the format's working precision) ---------------------------------------


def _pi_scaled(fn: Callable) -> Callable:
    return lambda *a: fn(*a) / mpmath.pi


def _cbrt(x):
    return mpmath.sign(x) * mpmath.cbrt(abs(x))


def _rootn(x, n):
    r = mpmath.root(abs(x), abs(n))
    r = mpmath.sign(x) * r if n % 2 else r
    return 1 / r if n < 0 else r


def _erfc(x):
    """erfc; beyond x = 1e4 (mpmath's series cannot take it) the asymptotic exp(-x²)/(x√π), far
    below the least subnormal of every format, so its relative error (1/(2x²)) never matters."""
    return mpmath.erfc(x) if x < 10**4 else mpmath.exp(-x * x) / (x * mpmath.sqrt(mpmath.pi))


def _hermite(t):
    return t * t * (3 - 2 * t)


REFERENCES: dict[str, Callable] = {
    "fdiv": lambda x, y: x / y, "sqrt": mpmath.sqrt, "rsqrt": lambda x: 1 / mpmath.sqrt(x), "cbrt": _cbrt,
    "exp": mpmath.exp, "exp2": lambda x: mpmath.power(2, x), "exp10": lambda x: mpmath.power(10, x),
    "expm1": mpmath.expm1, "log": mpmath.log, "log2": lambda x: mpmath.log(x, 2), "log10": mpmath.log10,
    "log1p": mpmath.log1p, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "sinpi": mpmath.sinpi,
    "cospi": mpmath.cospi, "tanpi": lambda x: mpmath.sinpi(x) / mpmath.cospi(x), "sinh": mpmath.sinh,
    "cosh": mpmath.cosh, "tanh": mpmath.tanh, "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan,
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh, "asinpi": _pi_scaled(mpmath.asin),
    "acospi": _pi_scaled(mpmath.acos), "atanpi": _pi_scaled(mpmath.atan), "atan2": mpmath.atan2,
    "atan2pi": _pi_scaled(mpmath.atan2), "hypot": mpmath.hypot, "erf": mpmath.erf, "erfc": _erfc,
    "tgamma": mpmath.gamma, "pow": mpmath.power, "powr": mpmath.power, "pown": lambda x, n: mpmath.power(x, n),
    "rootn": _rootn, "degrees": lambda x: x * 180 / mpmath.pi, "radians": lambda x: x * mpmath.pi / 180,
    "sincos": mpmath.sin,
    "mix": lambda x, y, a: x + (y - x) * a,
    "smoothstep": lambda e0, e1, x: _hermite(min(max((x - e0) / (e1 - e0), 0), 1)),
    **{f"half_{n}": fn for n, fn in (("cos", mpmath.cos), ("exp", mpmath.exp), ("exp2", lambda x: mpmath.power(2, x)),
                                      ("exp10", lambda x: mpmath.power(10, x)), ("log", mpmath.log),
                                      ("log2", lambda x: mpmath.log(x, 2)), ("log10", mpmath.log10),
                                      ("recip", lambda x: 1 / x), ("rsqrt", lambda x: 1 / mpmath.sqrt(x)),
                                      ("sin", mpmath.sin), ("sqrt", mpmath.sqrt), ("tan", mpmath.tan),
                                      ("divide", lambda x, y: x / y), ("powr", mpmath.power))},
}
"""The infinitely precise value of each function with a rounding bound, at finite operands
the special values leave (mpmath at the working precision)."""

# ---- special values (§7.5.1, C99 F.9) --------------------------------------------------------------


def _neg(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def _is_int(x: float) -> bool:
    return math.isfinite(x) and x == math.floor(x)


def _half_int(x: float) -> bool:
    """x is n + 0.5 for an integer n (2x is exact for every float here and odd)."""
    return _is_int(2 * x) and not _is_int(x)


def _odd(x: float) -> bool:
    return _is_int(x) and math.fmod(x, 2.0) != 0


def _zero_pole(x: float, n_neg: bool, n_odd: bool) -> float:
    """pown/rootn/pow at ±0: ±inf for odd negative powers, +inf for even negative, ±0 for odd
    positive and +0 for even positive (§7.5.1; 004's '±0 for even n > 0' is +0, DIGEST §11.3)."""
    if n_neg:
        return math.copysign(math.inf, x) if n_odd else math.inf
    return x if n_odd else 0.0


def _pow_special(x: float, y: float):
    """C99 F.9.4.4 pow."""
    if y == 0:
        return 1.0
    if x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == 0:
        return _zero_pole(x, y < 0, _odd(y)) if math.isfinite(y) else (math.inf if y < 0 else 0.0)
    if math.isinf(y):
        if x == -1:
            return 1.0
        return (math.inf if y < 0 else 0.0) if abs(x) < 1 else (0.0 if y < 0 else math.inf)
    if math.isinf(x):
        if x > 0:
            return 0.0 if y < 0 else math.inf
        if y < 0:
            return -0.0 if _odd(y) else 0.0
        return -math.inf if _odd(y) else math.inf
    if x < 0 and not _is_int(y):
        return NAN
    return None


def _powr_special(x: float, y: float):
    """§7.5.1 powr (the listed cases; its other edges are not prescribed)."""
    if math.isnan(x) or math.isnan(y) or x < 0 or _neg(x) and x != 0:
        return NAN
    if x == 0:
        if y == 0:
            return NAN
        return math.inf if y < 0 else 0.0
    if math.isinf(x):
        return NAN if y == 0 else None
    if x == 1:
        return NAN if math.isinf(y) else 1.0
    if y == 0:
        return 1.0
    return None if math.isfinite(y) else "skip"


def _pown_special(x: float, n: int):
    if n == 0:
        return 1.0
    if math.isnan(x):
        return NAN
    if x == 0:
        return _zero_pole(x, n < 0, n % 2 == 1)
    if math.isinf(x):
        odd = n % 2 == 1
        if n > 0:
            return x if odd else math.inf
        return math.copysign(0.0, x) if odd else 0.0
    return None


def _rootn_special(x: float, n: int):
    if n == 0 or math.isnan(x):
        return NAN
    odd = n % 2 == 1
    if x < 0 and not odd:
        return NAN
    if x == 0:
        return _zero_pole(x, n < 0, odd)
    if math.isinf(x):
        return x if n > 0 else math.copysign(0.0, x)
    return None


def _tanpi_special(x: float):
    if math.isnan(x) or math.isinf(x):
        return NAN
    if x == 0:
        return x
    if _is_int(x):
        return math.copysign(0.0, x) if not _odd(x) else math.copysign(0.0, -x)
    if _half_int(x):
        n = x - 0.5  # exact: a half-integer float is below 2^(p-1)
        return math.inf if not _odd(n) else -math.inf
    return None


def _atan2_special(y: float, x: float, pi: bool):
    """C99 F.9.1.4 atan2 and §7.5.1 atan2pi; the π multiples of atan2 are references, not exact."""
    if math.isnan(x) or math.isnan(y):
        return NAN
    unit = 1.0 if pi else mpmath.pi
    if y == 0:
        if x < 0 or (x == 0 and _neg(x)):
            return ("ref", unit if not _neg(y) else -unit) if not pi else math.copysign(1.0, y)
        return y
    if math.isinf(y):
        frac = 0.75 if x == -math.inf else 0.25 if x == math.inf else 0.5
        return math.copysign(frac, y) if pi else ("ref", _signed(unit * frac, y))
    if x == 0:
        return math.copysign(0.5, y) if pi else ("ref", _signed(unit / 2, y))
    if math.isinf(x):
        if x > 0:
            return math.copysign(0.0, y)
        return math.copysign(1.0, y) if pi else ("ref", _signed(unit, y))
    return None


def _signed(value, sign_of: float):
    """|value| with the sign of the float ``sign_of`` (a limit value of atan and atan2)."""
    return -abs(value) if _neg(sign_of) else abs(value)


def _unary(nan_for: Callable[[float], bool] = lambda x: False, at: dict | None = None,
           inf: tuple | None = None, zero: str = "keep") -> Callable:
    """A unary function's edge cases: NaN in NaN out, NaN on a domain error, exact values at some
    points, its limits at -inf and +inf, and at ±0 either the operand itself (``keep``), a value,
    or nothing prescribed."""
    def special(x: float):
        if math.isnan(x) or nan_for(x):
            return NAN
        if x == 0 and zero == "keep":
            return x
        if math.isinf(x) and inf is not None:
            return inf[x > 0]
        if at:
            for point, value in at.items():
                if x == point and (point != 0 or zero != "keep"):
                    return value
        return None
    return special


_INF = math.inf
SPECIALS: dict[str, Callable] = {
    "acos": _unary(lambda x: abs(x) > 1, {1.0: 0.0}, None, zero="none"),
    "acospi": _unary(lambda x: abs(x) > 1, {1.0: 0.0}, None, zero="none"),
    "asin": _unary(lambda x: abs(x) > 1), "asinpi": _unary(lambda x: abs(x) > 1),
    "atan": lambda x: NAN if math.isnan(x) else x if x == 0 else (
        ("ref", _signed(mpmath.pi / 2, x)) if math.isinf(x) else None),
    "atanpi": _unary(inf=(-0.5, 0.5)),
    "acosh": _unary(lambda x: x < 1, {1.0: 0.0}, (NAN, _INF), zero="none"),
    "asinh": _unary(inf=(-_INF, _INF)),
    "atanh": _unary(lambda x: abs(x) > 1, {1.0: _INF, -1.0: -_INF}),
    "sin": _unary(math.isinf), "tan": _unary(math.isinf), "cos": _unary(math.isinf, {0.0: 1.0}, zero="none"),
    "sincos": _unary(math.isinf),
    "sinpi": lambda x: NAN if math.isnan(x) or math.isinf(x) else x if x == 0 else (
        math.copysign(0.0, x) if _is_int(x) else None),
    "cospi": lambda x: NAN if math.isnan(x) or math.isinf(x) else 1.0 if x == 0 else (
        0.0 if _half_int(x) else None),
    "tanpi": _tanpi_special,
    "sinh": _unary(inf=(-_INF, _INF)), "cosh": _unary(at={0.0: 1.0}, inf=(_INF, _INF), zero="none"),
    "tanh": _unary(inf=(-1.0, 1.0)),
    "exp": _unary(at={0.0: 1.0}, inf=(0.0, _INF), zero="none"),
    "exp2": _unary(at={0.0: 1.0}, inf=(0.0, _INF), zero="none"),
    "exp10": _unary(at={0.0: 1.0}, inf=(0.0, _INF), zero="none"),
    "expm1": _unary(inf=(-1.0, _INF)),
    **{n: _unary(lambda x: x < 0, {0.0: -_INF, 1.0: 0.0}, (NAN, _INF), zero="none") for n in ("log", "log2", "log10")},
    "log1p": _unary(lambda x: x < -1, {-1.0: -_INF}, (NAN, _INF)),
    "cbrt": _unary(inf=(-_INF, _INF)),
    "sqrt": _unary(lambda x: x < 0, inf=(NAN, _INF)),
    "rsqrt": lambda x: NAN if math.isnan(x) or x < 0 else math.copysign(_INF, x) if x == 0 else (
        0.0 if math.isinf(x) else None),
    "erf": _unary(inf=(-1.0, 1.0)),
    "erfc": _unary(inf=(2.0, 0.0), zero="none"),
    "tgamma": lambda x: NAN if math.isnan(x) or x == -_INF or (x < 0 and _is_int(x)) else (
        math.copysign(_INF, x) if x == 0 else _INF if x == _INF else None),
    "lgamma": lambda x: NAN if math.isnan(x) else _INF if math.isinf(x) or (x <= 0 and _is_int(x)) else (
        0.0 if x in (1.0, 2.0) else None),
    "hypot": lambda x, y: _INF if math.isinf(x) or math.isinf(y) else NAN if math.isnan(x) or math.isnan(y) else (
        abs(x) if y == 0 else abs(y) if x == 0 else None),
    "pow": _pow_special, "powr": _powr_special, "pown": _pown_special, "rootn": _rootn_special,
    "atan2": lambda y, x: _atan2_special(y, x, False), "atan2pi": lambda y, x: _atan2_special(y, x, True),
    "fdiv": lambda x, y: (NAN if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0) or (
        math.isinf(x) and math.isinf(y)) else math.copysign(_INF, x) * math.copysign(1, y) if y == 0 or math.isinf(x)
        else math.copysign(0.0, x) * math.copysign(1, y) if x == 0 or math.isinf(y) else None),
    "degrees": _unary(inf=(-_INF, _INF)), "radians": _unary(inf=(-_INF, _INF)),
    # undefined results (§6.15.4): mix with a outside [0, 1], smoothstep with edge0 >= edge1 or a NaN
    "mix": lambda x, y, a: None if all(map(math.isfinite, (x, y, a))) and 0 <= a <= 1 else "skip",
    "smoothstep": lambda e0, e1, x: None if all(map(math.isfinite, (e0, e1, x))) and e0 < e1 else "skip",
}
"""Edge cases with a prescribed result: a float (exact, NaN for any NaN), ``("ref", v)`` (a
reference the function's bound applies to: the π multiples of C99's atan2), ``"skip"`` (no
prescribed value and no finite reference: not judged) or None (the general rule)."""
for _n, _base in (("half_cos", "cos"), ("half_exp", "exp"), ("half_exp2", "exp2"), ("half_exp10", "exp10"),
                  ("half_log", "log"), ("half_log2", "log2"), ("half_log10", "log10"), ("half_rsqrt", "rsqrt"),
                  ("half_sin", "sin"), ("half_sqrt", "sqrt"), ("half_tan", "tan"), ("half_divide", "fdiv"),
                  ("half_powr", "powr")):
    SPECIALS[_n] = SPECIALS[_base]  # §7.5.1: half_ functions have the same edge cases
SPECIALS["half_recip"] = lambda x: SPECIALS["fdiv"](1.0, x)
SPECIALS["lgamma_r"] = SPECIALS["lgamma"]


# ---- exact functions (no rounding, or one correct rounding computed exactly) -----------------------


def _m(x: float) -> mpf:
    return mpf(x)


def _cr(value: mpf, f: Format) -> float:
    return round_to(value, f, "n")


def _fmin(x: float, y: float):
    """C99 fmin: the other argument when one is a NaN; a signaling NaN may act as a quiet one or
    not (§6.15.2 footnote 46), and operands reach the oracle quieted, so a NaN result is allowed
    too."""
    if math.isnan(x):
        return NAN if math.isnan(y) else [y, NAN]
    if math.isnan(y):
        return [x, NAN]
    if x == 0 and y == 0 and _neg(x) != _neg(y):
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
        s = math.copysign(_INF, x) * math.copysign(1, y)
        return NAN if math.isinf(z) and z != s else s
    return z if math.isinf(z) else None


def _fma(x, y, z, f: Format):
    special = _fma_special(x, y, z)
    if special is not None:
        return special
    exact = mpmath.fadd(mpmath.fmul(_m(x), _m(y), exact=True), _m(z), exact=True)
    if exact == 0:  # an exact zero sum: +0 unless both addends are -0 (IEEE 754 §6.3)
        prod_neg = _neg(x) != _neg(y)
        return -0.0 if (prod_neg and _neg(z)) else 0.0
    return _cr(exact, f)


def _mad(x, y, z, f: Format):
    """Either a correctly rounded fma or a correctly rounded multiply followed by a correctly
    rounded add (Table 65)."""
    fused = _fma(x, y, z, f)
    special = _fma_special(x, y, z)
    if special is not None:
        return special
    prod = _cr(mpmath.fmul(_m(x), _m(y), exact=True), f)
    if math.isinf(prod):
        split = NAN if math.isinf(z) and z != prod else prod
    else:
        s = mpmath.fadd(_m(prod), _m(z), exact=True)
        split = (-0.0 if _neg(prod) and _neg(z) else 0.0) if s == 0 else _cr(s, f)
    return [fused, split]


def _fdim(x, y, f):
    if math.isnan(x) or math.isnan(y):
        return NAN
    if not x > y:
        return 0.0
    if math.isinf(x) or math.isinf(y):
        return _INF
    return _cr(mpmath.fsub(_m(x), _m(y), exact=True), f)


def _ldexp(x, k, f):
    if math.isnan(x):
        return NAN
    if math.isinf(x) or x == 0:
        return x
    return _cr(mpmath.ldexp(_m(x), k), f)


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


def _quotient_lane(q: int, rule: str) -> Lane:
    """remquo's quo: only its sign and its low 7 bits are specified (§6.15.2 Table 14), so any
    int whose bits agree there is accepted (the sign is free when those bits are 0)."""
    low = abs(q) % 128
    mask = 0x7F | (0x80000000 if low else 0)
    return Lane([q], rule=rule, masks=[(mask, ((-low) & 0xFFFFFFFF if q < 0 else low) & mask)])


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
        return _INF
    if x == 0:
        return -_INF
    return float(math.frexp(x)[1] - 1)


def _fract(x, f):
    """§6.15.2: fmin(x - floor(x), 0x1.fffffep-1f) with iptr = floor(x) (DIGEST §5.5)."""
    if math.isnan(x):
        return NAN, NAN
    if math.isinf(x):
        return math.copysign(0.0, x), x
    if x == 0:
        return x, x
    fl = math.floor(x)
    r = _cr(mpmath.fsub(_m(x), _m(fl), exact=True), f)
    return min(r, 1.0 - 2.0 ** -f.p), float(fl)


def _modf(x):
    if math.isnan(x):
        return NAN, NAN
    ip = math.copysign(float(math.trunc(x)), x) if math.isfinite(x) else x
    return math.copysign(0.0 if math.isinf(x) else x - ip, x), ip


def _nextafter(x, y, tname):
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


# ---- one lane ------------------------------------------------------------------------------------------


def _bounded(fn: str, x: mpf, bound: Bound, f: Format, rule: str, n: int = 1, operand: float = 0.0) -> Lane:
    """The lane for a reference ``x`` (finite mpf, or ±inf) under ``bound``."""
    if mpmath.isinf(x):
        return Lane([float(x)], rule=rule)
    u = ulp(x, f)
    nearest = _cr(x, f)
    lane = Lane([nearest], rule=rule, exact=x, ulp=float(u), limit=0.5)
    if bound.kind in ("cr", "exact"):
        return lane
    if bound.kind == "ulp":
        k = bound.ulps(n)
        if ".unsafe." in rule and fn in ("exp", "exp2"):
            k += math.floor(abs(2 * operand))  # Table 67: 3 + floor(fabs(2x))
        width = mpf(k) * u
        lane.limit = k
    elif bound.kind == "abs":
        width = mpf(bound.value)
        lane.limit = math.nan
    else:
        raise ValueError(bound.kind)
    lo, hi, pos_inf, neg_inf = interval(x, width, f)
    lane.ranges.append((lo, hi))
    lane.values += [v for v, ok in ((_INF, pos_inf), (-_INF, neg_inf)) if ok and v != nearest]
    return lane


def _unsafe_domain(fn: str, args: tuple) -> Bound | None | str:
    """Table 67's domains: outside them the result is not judged (None), or a different bound."""
    x = args[0]
    if fn == "fdiv":
        return None if not all(2.0**-62 <= abs(a) <= 2.0**62 for a in args) else "keep"
    if fn in ("sin", "cos", "sincos"):
        return "keep" if abs(x) <= math.pi else None
    if fn in ("sinpi", "cospi"):
        return "keep" if abs(x) <= 1 else None
    if fn in ("log", "log2", "log10"):
        return Bound("abs", 2.0**-21) if 0.5 <= x <= 2 else "keep"
    return "keep"


def _as_lane(value, rule: str) -> Lane:
    """A prescribed result: one value, several allowed values (a list), NaN or 'skip'."""
    if isinstance(value, str):
        return unjudged()
    if isinstance(value, list):
        return Lane(list(value), rule=rule, nan=any(isinstance(v, float) and math.isnan(v) for v in value))
    if isinstance(value, float) and math.isnan(value):
        return nan_lane(rule)
    return Lane([value], rule=rule)


def lanewise(fn: str, tname: str, env: frozenset, args: tuple) -> tuple[Lane, ...]:
    """The lanes (result, and the out-parameter's where there is one) of a lane-wise function at
    one set of operand values, with every flush-to-zero alternative (§7.5.3)."""
    f = FUNCTIONS[fn]
    variants = [args]
    if flushable(tname, env, fn):
        tiny = fmt(tname).tiny
        options = [[a, 0.0, -0.0] if isinstance(a, float) and a != 0 and abs(a) < tiny and p in "gs" else [a]
                   for a, p in zip(args, f.params)]
        variants = list(product(*options))
    return _union(_lanewise_at(f, tname, env, tuple(struct.pack("<d", a) if isinstance(a, float) else a for a in v))
                  for v in variants)


def _union(alternatives) -> tuple[Lane, ...]:
    """Lane by lane, the results any of the alternatives (operand values) allows."""
    lanes = None
    for got in alternatives:
        lanes = got if lanes is None else tuple(a.merge(b) for a, b in zip(lanes, got))
    return lanes


@lru_cache(maxsize=200_000)
def _lanewise_at(f: MathFn, tname: str, env: frozenset, key: tuple) -> tuple[Lane, ...]:
    """One operand set's lanes; floats come as their bytes so that the cache tells -0.0 from +0.0
    and keeps a NaN's sign (copysign reads it)."""
    args = tuple(struct.unpack("<d", a)[0] if isinstance(a, bytes) else a for a in key)
    fm = fmt(tname)
    outputs = 2 if f.out else 1
    floats = [a for a, p in zip(args, f.params) if p in "gs"]
    if ("finite" in env or "unsafe" in env) and not all(math.isfinite(a) for a in floats):
        return (unjudged(),) * outputs  # the options assume no NaN or INF operands (API §5.8.4.3)
    bound, kind = bound_for(f, tname, env)
    profile = profile_of(tname, env)
    if kind == "unsafe" and bound.kind != "none":
        domain = _unsafe_domain(f.name, args)
        if domain is None:
            return (unjudged(),) * outputs
        if isinstance(domain, Bound):
            bound = domain
    special_rule = _rule(f.name, "special", profile)
    if f.name in EXACT:
        if bound.kind == "none":
            return (unjudged(),) * outputs
        value = EXACT[f.name](*args, fm, tname)
        rid = _rule(f.name, "mad" if bound.kind == "mad" else "cr" if bound.kind == "cr" else "exact", profile)
        out = tuple(_as_lane(v, rid) for v in (value if outputs == 2 else (value,)))
        if f.name == "remquo":
            out = (out[0], _quotient_lane(value[1], rid))
        return _after(out, f, tname, env, fm)
    with mpmath.workprec(fm.prec):  # a limit value (π multiples) at the working precision
        special = SPECIALS.get(f.name, lambda *a: None)(*args)
    if f.name == "sincos":
        cos = SPECIALS["cos"](*args)
        if special is not None or cos is not None:
            if special is None or cos is None:  # one prescribed, the other from the general rule
                general = _lanewise_at(FUNCTIONS["sin" if special is None else "cos"], tname, env, key)[0]
                lanes = (general, _as_lane(cos, special_rule)) if special is None else (
                    _as_lane(special, special_rule), general)
                return _after(lanes, f, tname, env, fm)
            return _after((_as_lane(special, special_rule), _as_lane(cos, special_rule)), f, tname, env, fm)
    if f.name in ("lgamma", "lgamma_r"):
        return _after(_lgamma(args[0], special, special_rule, outputs), f, tname, env, fm)
    if isinstance(special, tuple):  # ("ref", value): the function's bound around a limit value
        x = special[1]
        if bound.kind == "none":
            return (unjudged(),) * outputs
        return _after((_bounded(f.name, x, bound, fm, _rule(f.name, kind, profile, bound)),), f, tname, env, fm)
    if special is not None:
        return _after((_as_lane(special, special_rule),), f, tname, env, fm)
    if bound.kind == "none":
        return (unjudged(),) * outputs
    if f.name.startswith(("half_sin", "half_cos", "half_tan")) and abs(args[0]) > 2.0**16:
        return (unjudged(),) * outputs  # §7.4: half_sin/cos/tan need |x| <= 2^16
    rid = _rule(f.name, kind, profile, bound)
    with mpmath.workprec(fm.prec):
        mp_args = [mpf(a) if p in "gs" else int(a) for a, p in zip(args, f.inputs)]
        try:
            x = REFERENCES[f.name](*mp_args)
        except (OverflowError, ZeroDivisionError, ValueError):  # an operand mpmath cannot take: not judged
            return (unjudged(),) * outputs
        if f.name == "sincos":
            lanes = (_bounded("sin", x, bound, fm, rid), _bounded("cos", mpmath.cos(mp_args[0]), bound, fm, rid))
            return _after(lanes, f, tname, env, fm)
        if isinstance(x, mpmath.mpc):  # a domain the special values did not cover: not judged
            return (unjudged(),) * outputs
        x = mpf(x)
        return _after((_bounded(f.name, x, bound, fm, rid, operand=args[0]),), f, tname, env, fm)


def _lgamma(x: float, special, rule: str, outputs: int) -> tuple[Lane, ...]:
    """lgamma's value has no bound (Table 65: undefined): only its prescribed values are judged;
    lgamma_r's sign is Γ's sign (§6.15.2), not judged at zero and the negative integers."""
    value = _as_lane(special, rule) if special is not None else unjudged()
    if outputs == 1:
        return (value,)
    if math.isnan(x) or x == -_INF:
        sign = unjudged()
    elif x == 0 or (x < 0 and _is_int(x)):
        # 0 per the SPIR-V environment's edge cases (000 §OpExtInst lgamma_r); OpenCL C 3.0 (004)
        # does not say, and the oracle judges both paths alike: not judged
        sign = unjudged()
    elif x > 0:
        sign = Lane([1], rule=rule)
    else:
        sign = Lane([1 if math.floor(x) % 2 == 0 else -1], rule=rule)
    return value, sign


def _after(lanes: tuple[Lane, ...], f: MathFn, tname: str, env: frozenset, fm: Format) -> tuple[Lane, ...]:
    """The result-side allowances: a result subnormal before rounding may be flushed to ±0
    (§7.5.3), and under -cl-unsafe-math-optimizations or -cl-finite-math-only an INF or NaN result
    is not judged and (unsafe) a zero's sign is not significant (-cl-no-signed-zeros, implied)."""
    out = []
    for i, lane in enumerate(lanes):
        is_float = (f.out != "I" or i == 0) and f.result != "i"
        if not lane.judged or not is_float:
            out.append(lane)
            continue
        if ("finite" in env or "unsafe" in env) and (lane.nan or any(
                isinstance(v, float) and not math.isfinite(v) for v in lane.values[:1])):
            out.append(unjudged())
            continue
        extra = []
        if flushable(tname, env, f.name):
            probe = lane.exact if lane.exact is not None else (mpf(lane.values[0]) if math.isfinite(lane.values[0])
                                                                else None)
            if probe is not None and probe != 0 and abs(probe) < fm.tiny:
                extra += [0.0, -0.0]
            extra += [math.copysign(0.0, v) for v in lane.values if isinstance(v, float) and v != 0
                      and math.isfinite(v) and abs(v) < fm.tiny]
        if "unsafe" in env:
            extra += [-v for v in lane.values if isinstance(v, float) and v == 0]
        out.append(replace(lane, values=lane.values + [v for v in extra if not any(_same(v, w) for w in lane.values)]))
    return tuple(out)


# ---- geometric functions (whole vectors) ------------------------------------------------------------


def geometric(fn: str, tname: str, env: frozenset, args: tuple[tuple[float, ...], ...]) -> list[Lane]:
    """The lanes of one work-item's geometric function (§6.15.5, bounds of §7.4): a scalar for
    dot, length, distance and their fast_ forms, a vector for cross and normalize."""
    f = FUNCTIONS[fn]
    n = len(args[0])
    outputs = n if f.result == "g" else 1
    fm = fmt(tname)
    flat = [a for v in args for a in v]
    profile = profile_of(tname, env)
    bound, kind = bound_for(f, tname, env)
    if bound.kind == "none" or not all(math.isfinite(a) for a in flat):
        if fn in ("length", "fast_length") and bound.kind != "none" and "finite" not in env and "unsafe" not in env:
            vals = args[0]  # a NaN lane gives NaN, an infinite one +inf (when no NaN): C99 F.9.4.3 hypot
            if any(math.isnan(a) for a in vals) and not any(math.isinf(a) for a in vals):
                return [nan_lane(_rule(fn, "special", profile))]
            if any(math.isinf(a) for a in vals) and not any(math.isnan(a) for a in vals):
                return [Lane([_INF], rule=_rule(fn, "special", profile))]
        return [unjudged() for _ in range(outputs)]
    if flushable(tname, env, fn) and any(a != 0 and abs(a) < fm.tiny for a in flat):
        return [unjudged() for _ in range(outputs)]  # flushed operands change the whole result: not judged
    rid = _rule(fn, kind, profile, bound)
    mp = [[mpf(a) for a in v] for v in args]
    with mpmath.workprec(fm.prec):
        if fn == "dot":
            exact = mpmath.fsum(a * b for a, b in zip(*mp))
            tol = _abs_tolerance(flat, fm, 2 * n - 1, tname)
            return [_abs_lane(exact, tol, fm, rid)]
        if fn == "cross":
            (a0, a1, a2), (b0, b1, b2) = mp[0][:3], mp[1][:3]
            comps = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
            tol = _abs_tolerance(flat, fm, 3, tname)
            lanes = [_abs_lane(c, tol, fm, rid) for c in comps]
            return lanes + [Lane([0.0], rule=_rule(fn, "special", profile))] * (n - 3)
        vector = [a - b for a, b in zip(*mp)] if fn.endswith("distance") else mp[0]
        squares = mpmath.fsum(c * c for c in vector)
        if fn.startswith("fast_") and not (fm.tiny <= squares <= fm.max) and squares != 0:
            # the fast_ forms are defined by half_sqrt of the float sum of squares (§6.15.5):
            # where that sum overflows or underflows the result is undefined (fast_normalize: §7.4)
            return [unjudged() for _ in range(outputs)]
        norm = mpmath.sqrt(squares)
        if fn.endswith("normalize"):
            if norm == 0:
                return [Lane([a], rule=_rule(fn, "special", profile)) for a in args[0]]
            return _after(tuple(_bounded(fn, c / norm, bound, fm, rid, n) for c in vector), f, tname, env, fm)
        return list(_after((_bounded(fn, norm, bound, fm, rid, n),), f, tname, env, fm))


def _abs_tolerance(values: list[float], fm: Format, factor: int, tname: str) -> mpf:
    """max * max * factor * EPSILON (Tables 65, 68, 69: FLT_EPSILON for float and, as written,
    for double too; HALF_EPSILON for half)."""
    eps = fmt("float" if tname == "double" else tname).epsilon
    top = max(abs(a) for a in values)
    return mpf(top) * mpf(top) * factor * mpf(eps)


def _abs_lane(exact: mpf, tol: mpf, fm: Format, rule: str) -> Lane:
    if abs(exact) + tol > fm.max:
        return unjudged()  # the tolerance reaches past the largest float: nothing to decide
    return _bounded("", exact, Bound("abs", float(tol)), fm, rule)


# ---- packing lanes into expectations --------------------------------------------------------------------


def pack(lanes: list[Lane], tname: str) -> Expectation:
    """Lanes as an Expectation of ``tname`` (a float type, or int for ilogb/frexp/remquo/lgamma_r)."""
    s = scalar(tname)
    n = len(lanes)
    k = max(1, max(len(lane.values) for lane in lanes))
    r = max((len(lane.ranges) for lane in lanes), default=0)
    m = max((len(lane.masks) for lane in lanes), default=0)
    values = np.zeros((k, n), s.dtype)
    ranges = [(np.full(n, np.inf if s.is_float else s.max, s.dtype), np.full(n, -np.inf if s.is_float else s.min,
                                                                               s.dtype)) for _ in range(r)]
    masks = [(np.zeros(n, s.bits_dtype), np.ones(n, s.bits_dtype)) for _ in range(m)]
    judged, nan = np.zeros(n, bool), np.zeros(n, bool)
    rule = np.zeros(n, np.int16)
    hi, lo, unit, limit = np.full(n, np.nan), np.zeros(n), np.full(n, np.nan), np.full(n, np.nan)
    with np.errstate(over="ignore"):
        for i, lane in enumerate(lanes):
            vals = lane.values or [0.0]
            for j in range(k):
                values[j, i] = vals[min(j, len(vals) - 1)]
            for j, (a, b) in enumerate(lane.ranges):
                ranges[j][0][i], ranges[j][1][i] = a, b
            for j, (mask, value) in enumerate(lane.masks):
                masks[j][0][i], masks[j][1][i] = mask, value
            judged[i], nan[i] = lane.judged, lane.nan
            rule[i] = rules.index(lane.rule)
            if lane.exact is not None and lane.judged:
                hi[i] = float(lane.exact)
                lo[i] = float(lane.exact - mpf(hi[i])) if math.isfinite(hi[i]) else 0.0
                unit[i], limit[i] = lane.ulp, lane.limit
    allowed = values.view(s.bits_dtype) if s.is_float else values.astype(s.bits_dtype)
    return Expectation(tname, list(allowed), judged, nan, rule, ranges, masks=masks,
                       error=ErrorScale(hi, lo, unit, limit) if s.is_float and np.isfinite(unit).any() else None)


# ---- the references of the IR's operations ------------------------------------------------------------


def _operand_values(e: Expectation, tname: str) -> list[list | None]:
    """Per lane, the operand values a lane-wise function may see: the allowed candidates of a
    decided lane (a NaN for an any-NaN lane), or None where the operand is not pinned (not judged,
    or only bounded)."""
    s = scalar(tname)
    n = len(e)
    decided = e.judged.copy()
    for lo, hi in e.ranges:
        decided &= ~(lo <= hi)
    for mask, _ in e.masks:
        decided &= mask == 0
    cands = [a.view(s.dtype) if s.is_float else a.astype(s.bits_dtype).view(s.dtype) for a in e.allowed]
    out: list[list | None] = []
    for i in range(n):
        if not decided[i]:
            out.append(None)
            continue
        vals = []
        for c in cands:
            v = float(c[i]) if s.is_float else int(c[i])
            if not any(_same(v, w) for w in vals):
                vals.append(v)
        if e.any_nan[i] and not any(isinstance(v, float) and math.isnan(v) for v in vals):
            vals.append(NAN)
        out.append(vals)
    return out


def outputs(op: Op, args: list[Expectation], n: int, env: frozenset) -> tuple[Expectation, ...]:
    """The expectations of a math operation: its result, and its out-parameter's where it has one."""
    f = FUNCTIONS[op.op]
    t = op.args[0].type if op.args else op.type
    tname = op.type.scalar if f.result != "i" else t.scalar
    if f.group == "geometric":
        return (_geometric_outputs(f, op, args, n, env),)
    per_arg = []
    for a, e in zip(op.args, args):
        vals = _operand_values(e, a.type.scalar)
        per_arg.append(vals if a.type.width == op.type.width or op.type.width == 1 else
                       [vals[i // op.type.width] for i in range(len(vals) * op.type.width)])
    lanes_n = n * op.type.width
    results: list[list[Lane]] = [[] for _ in range(2 if f.out else 1)]
    for i in range(lanes_n):
        operand_sets = [p[i] for p in per_arg]
        if any(s is None for s in operand_sets) or math.prod(len(s) for s in operand_sets) > 16:
            got = (unjudged(),) * len(results)
        else:
            got = _union(lanewise(f.name, tname, env, combo) for combo in product(*operand_sets))
        for j, lane in enumerate(got):
            results[j].append(lane)
    types = [op.type.scalar] + ([f.operand_type(f.out, Type(tname)).scalar] if f.out else [])
    return tuple(pack(lanes, ty) for lanes, ty in zip(results, types))


def _geometric_outputs(f: MathFn, op: Op, args: list[Expectation], n: int, env: frozenset) -> Expectation:
    tname = op.args[0].type.scalar
    width = op.args[0].type.width
    per_arg = [_operand_values(e, tname) for e in args]
    lanes: list[Lane] = []
    out_width = op.type.width
    for item in range(n):
        vectors = []
        ok = True
        for p in per_arg:
            vals = p[item * width:(item + 1) * width]
            if any(v is None or len(v) != 1 for v in vals):
                ok = False
                break
            vectors.append(tuple(v[0] for v in vals))
        lanes += geometric(f.name, tname, env, tuple(vectors)) if ok else [unjudged() for _ in range(out_width)]
    return pack(lanes, tname)

