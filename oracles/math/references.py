"""Vectorized references of the math built-ins, each with a stated error bound, and the start-up
check of those bounds on the installed numpy (the filter of :mod:`oracles.math.fast`).

A :class:`Reference` evaluates a function over numpy arrays of a *working* type wider than the
lane's: ``numpy.float64`` for half and float operands, the x87 80-bit ``numpy.longdouble`` (64-bit
significand) for double. Its bound is stated per function in ulps of the working type, taken as a
relative bound (``ulps * 2^-m`` of the result, ``m`` the working type's stored fraction bits: an ulp
of the working type is at most ``2^-m`` times the value):

* float64 (numpy's own SIMD loops, SVML on AVX-512 builds, or glibc: each documents at most 4 ulp
  for these functions): 4 ulp for one rounding or two (``/``, ``sqrt``, ``degrees``), 64 for a
  primitive or tanpi (tan of an argument rounded twice, where tan's relative sensitivity is at
  most π/2) and exp10 (exp2 of an argument within 2^-64 of its value), 128 where the reference is
  a composition (asinpi = asin / π),
  256 for rootn = pow(|x|, 1/n), whose rounded exponent costs |ln x| / n ulp; erf, erfc and tgamma
  come from Python's :mod:`math` (the C library's erf and erfc, CPython's own Lanczos gamma with
  an exact sinpi reflection), which documents no bound: 64 ulp, and the check below is the only
  evidence;
* long double (glibc's ldbl-96 functions, whose largest known errors are a few ulp): 4 ulp for a
  primitive and exp10, 8 for the hyperbolic functions, the compositions and tanpi; a function
  without a trustworthy long double reference has none (``wide=None``).

The bounds are claims about code this project does not control (numpy's SIMD paths differ by
build and CPU), so :func:`trusted` checks each one the first time it is used in a process: on a
fixed sample of operands of the lane's type (uniform magnitudes and the function's hard cases:
near the zeros of sin and cos, near 1 for log, near the overflow of exp, next to the integers of
sinpi) every result must be within half the stated bound of mpmath's value. A function
that fails is not filtered: all its lanes go to mpmath.

``refine``, where a function has one, gives for the working precision of mpmath and operands of
the working type (ints as int64) the lanes where a closer value is cheap, as a double-word ``hi +
lo`` of the working type within ``rel·|x|`` of the infinitely precise result x (per lane; ``rel`` 0:
``hi`` is the very value the exact path computes with): pown at n = 1 and at a power of two (x^n
is exact), hypot of operands more than 2^20 apart (|x|·sqrt(1 + t²) = |x| + |x|·t²/(1 + sqrt(1 +
t²)) with t = y/x: the small second term's relative error, under 16 ulps, is under 2^-37 ulp of the
sum), atan2pi of |y| = |x| (±1/4 or ±3/4 exactly). The filter decides those
of the reference's ambiguous lanes with it before it asks mpmath.

``fixed`` gives the operands off the general rule where a value is prescribed, and that value (one
for all, or one per lane; a NaN: any NaN): pown(x, 0) = 1 for any x (§7.5.1), pow(+1, y) = 1 and
pow of a negative x and a non-integer y, a NaN (C99 F.9.4.4), tgamma of a negative integer, a NaN
(F.9.5.4), rootn(x, 0) and rootn of a negative x and an even n, a NaN (OpenCL C 3.0.19 §7.5.1).

``domain`` gives, per lane of finite nonzero normal operands, whether the function's general
rule applies there: the operands where OpenCL C 3.0.19 §7.5.1 or C99 Annex F.9 (incorporated by
§7.5) prescribe a value (log(1) = +0, sinpi(n) = ±0, cospi(n + 0.5) = +0, pow(1, y) = 1, pown(x,
0) = 1, acos(1) = +0 ...) or a NaN (a domain error) are left to the exact path
(:mod:`oracles.math.specials`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import mpmath
import numpy as np

from lang.types import scalar
from oracles.floats import fmt
from oracles.math.precise import PRECISE

LONG = np.longdouble
WIDE_OK = np.finfo(LONG).nmant >= 63
"""Whether numpy's long double has a 64-bit significand (x87 on x86-64); elsewhere double has no
fast reference (an IEEE quad long double would be exact enough but is software, no faster)."""
_PI = {np.dtype(np.float64): np.float64(np.pi), np.dtype(LONG): LONG("3.14159265358979323846264338327950288")}


def working(tname: str) -> type:
    """The working type of the references for lanes of ``tname``."""
    return LONG if tname == "double" else np.float64


def _pi(x: np.ndarray):
    return _PI[x.dtype]


def _over_pi(fn: Callable) -> Callable:
    return lambda *a: fn(*a) / _pi(a[0])


def _sinpi(x):
    """sin(πx) with exact argument reduction: x = n + r, |r| <= 1/2 (r = x - rint(x) is exact),
    sin(πx) = (-1)^n sin(πr); πr costs one rounding of the product and one of π."""
    n = np.rint(x)
    r = x - n
    return np.where(np.fmod(n, 2) == 0, 1, -1) * np.sin(_pi(x) * r)


def _cospi(x):
    """cos(πx) = (-1)^n sin(π(1/2 - |r|)) with x = n + r as in :func:`_sinpi`; 1/2 - |r| is exact
    where |r| >= 1/4 (Sterbenz) and otherwise rounded once, where cos is flat."""
    n = np.rint(x)
    r = np.abs(x - n)
    return np.where(np.fmod(n, 2) == 0, 1, -1) * np.sin(_pi(x) * (0.5 - r))


def _tanpi(x):
    """tan(πx) with x = n + r exactly (period 1): tan(π|r|) for |r| <= 1/4 and 1/tan(π(1/2 - |r|))
    above (1/2 - |r| is exact), r's sign. tan's argument is at most π/4, where its relative
    sensitivity 2θ/sin 2θ is at most π/2: the two roundings of π|r| cost under 1.6 ulp."""
    n = np.rint(x)
    r = x - n
    a = np.abs(r)
    low = a <= 0.25
    t = np.tan(_pi(x) * np.where(low, a, 0.5 - a))
    t = np.where(low, t, 1 / t)
    return np.where(r < 0, -t, t)


_LOG2_10_HI = 1701 / 512  # log2(10) to 11 bits: x·_LOG2_10_HI is exact for x of 53 bits in 64
with mpmath.workprec(200):
    _LOG2_10_LO = mpmath.nstr(mpmath.log(10, 2) - mpmath.mpf(1701) / 512, 40)


def _exp10(x):
    """10^x = 2^(x·log2 10) = 2^k·2^(f + x·lo) with x·hi = k + f exactly (hi: log2 10 to 11 bits, lo
    the rest, both as the working type holds them; |f + x·lo| < 0.6 is rounded once): the argument
    of exp2 is within 2^-64 of its value for |x| < 330, under one ulp of the result with exp2's. An
    operand beyond ±2^14 is clipped there: 10^x overflows or underflows every working type either
    way (and k stays an integer numpy can scale by)."""
    w = x.dtype.type
    x = np.clip(x, w(-(2.0**14)), w(2.0**14))
    a = x * w(_LOG2_10_HI)
    k = np.rint(a)
    return np.ldexp(np.exp2((a - k) + x * w(_LOG2_10_LO)), k.astype(np.int64))


def _python(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A double function of Python's :mod:`math` over a float64 array, called once per distinct
    value (math.erf and math.erfc are the C library's, math.gamma CPython's own Lanczos sum with an
    exact sinpi reflection; none has a numpy loop). Its error is the start-up check's to bound."""
    def evaluate(x: np.ndarray) -> np.ndarray:
        u, inverse = np.unique(x, return_inverse=True)
        return np.fromiter(map(fn, u.tolist()), np.float64, len(u))[inverse.ravel()]
    return evaluate


def _rootn(x, n):
    mag = np.power(np.abs(x), 1 / n)
    return np.where(x < 0, -mag, mag)


def _pown_exact(prec, x, n):
    """pown where x^n is exact: n = 1, and x a power of two (x^n = ±2^(e·n), its sign x's for odd n)."""
    m, e = np.frexp(x)
    power = np.ldexp(np.ones(len(x), x.dtype) * 0.5, (e - 1) * n + 1)  # 2^((e-1)·n), within the working type's range
    power = np.where((x < 0) & (n % 2 != 0), -power, power)
    return (n == 1) | (np.abs(m) == 0.5), np.where(n == 1, x, power), np.zeros(len(x), x.dtype), np.zeros(len(x))


def _pow_fixed(x, y):
    """pow(+1, y) = 1 for any y, and a NaN (the invalid exception) for a finite x < 0 and a finite
    non-integer y: C99 F.9.4.4, incorporated by OpenCL C 3.0.19 §7.5 ("shall conform"). ``fixed``
    (module docstring): the operands are finite here."""
    return (x == 1) | ((x < 0) & (np.floor(y) != y)), np.where(x == 1, 1.0, np.nan)


def _atan2pi_diagonal(prec, y, x):
    """atan2pi where |y| = |x|: ±1/4 or ±3/4 exactly, the exact path's own value
    (oracles.math.precise)."""
    hi = np.where(x > 0, 0.25, 0.75) * np.sign(y)
    return np.abs(y) == np.abs(x), hi.astype(x.dtype), np.zeros(len(x), x.dtype), np.zeros(len(x))


def _hypot_apart(prec, x, y):
    """hypot where one operand is more than 2^20 times the other (``refine``, module docstring); where
    t² <= 2^-(prec+6) mpmath's value is the larger operand itself (it rounds x² + y² to prec + 4 bits,
    which leaves x², then takes the square root)."""
    big, small = np.maximum(np.abs(x), np.abs(y)), np.minimum(np.abs(x), np.abs(y))
    t = small / big
    tail = big * (t * t / (1 + np.sqrt(1 + t * t)))
    hi = big + tail
    back = hi - big
    lo = (big - (hi - back)) + (tail - back)  # TwoSum: hi + lo = big + tail exactly
    rel = float(np.finfo(big.dtype).eps) * 2.0**-37  # 16 ulps of t²/2 <= 2^-41
    gone = t * t <= 2.0 ** -(prec + 6) * (1 - 2.0**-20)
    return small < big * 2.0**-20, np.where(gone, big, hi), np.where(gone, 0, lo), np.where(gone, 0, rel)


def _pos(x):
    return x > 0


def _log_domain(x):
    return (x > 0) & (x != 1)


def _true(*a):
    return np.ones(a[0].shape, bool)


def _not_int(x):
    return x != np.floor(x)


def _not_half_int(x):
    return x - np.floor(x) != 0.5


@dataclass(frozen=True)
class Reference:
    """A function's vectorized reference and its stated bounds (module docstring)."""

    evaluate: Callable[..., np.ndarray]
    ulps64: float  # bound in ulps of float64, for half and float lanes
    wide: float | None  # bound in ulps of the x87 long double, for double lanes; None: no reference
    domain: Callable[..., np.ndarray] = _true  # operands (float64 view, ints as int64) on the general rule
    hard: Callable[[np.random.Generator, str], list[tuple]] = lambda rng, t: []  # the check's hard operands
    refine: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None = None  # module docstring
    fixed: Callable[..., tuple[np.ndarray, float | np.ndarray]] | None = None  # operands off the domain, prescribed

    def bound(self, tname: str) -> float | None:
        """The stated relative bound for lanes of ``tname`` (None where there is no reference)."""
        if tname == "double":
            return None if self.wide is None or not WIDE_OK else self.wide * 2.0 ** -np.finfo(LONG).nmant
        return self.ulps64 * 2.0**-52


def _near_multiples(unit: float, lo: int = 1, hi: int = 60):
    """Operands next to k·unit for k = 2^j (the zeros and poles of the trig functions)."""
    def hard(rng, tname):
        dtype = scalar(tname).dtype
        out = []
        for j in range(lo, hi, 3):
            with mpmath.workprec(300):
                v = np.array(float(mpmath.mpf(2) ** j * unit), np.float64).astype(dtype)
            out += [(w,) for w in (v, np.nextafter(v, dtype.type(np.inf)), np.nextafter(v, dtype.type(0)))]
        return out
    return hard


def _near(*points: float):
    def hard(rng, tname):
        dtype = scalar(tname).dtype
        out = []
        for p in points:
            v = dtype.type(p)
            for _ in range(4):
                out.append((v,))
                v = np.nextafter(v, dtype.type(np.inf))
        return out
    return hard


_TRIG = _near_multiples(float(mpmath.pi) / 2)
_REFS: dict[str, Reference] = {
    "fdiv": Reference(lambda x, y: x / y, 4, 4), "sqrt": Reference(np.sqrt, 4, 4, _pos),
    "rsqrt": Reference(lambda x: 1 / np.sqrt(x), 6, 6, _pos), "cbrt": Reference(np.cbrt, 64, 4),
    "exp": Reference(np.exp, 64, 4, hard=_near(88.7, -87.3, 709.7, 11.08)),
    "exp2": Reference(np.exp2, 64, 4, hard=_near(127.9, -125.9, 15.9)),
    "exp10": Reference(_exp10, 64, 4, hard=_near(38.5, -37.9, 4.8, 307.9, -307.2)),
    "expm1": Reference(np.expm1, 64, 8, hard=_near(1e-5, -1e-5, 88.7)),
    "log": Reference(np.log, 64, 4, _log_domain, _near(1.0, 0.99999994)),
    "log2": Reference(np.log2, 64, 4, _log_domain, _near(1.0, 0.99999994)),
    "log10": Reference(np.log10, 64, 4, _log_domain, _near(1.0, 0.99999994)),
    "log1p": Reference(np.log1p, 64, 8, lambda x: x > -1, _near(-0.99999994, 1e-6)),
    "sin": Reference(np.sin, 64, 4, hard=_TRIG), "cos": Reference(np.cos, 64, 4, hard=_TRIG),
    "tan": Reference(np.tan, 64, 4, hard=_TRIG),
    "sinpi": Reference(_sinpi, 64, 8, _not_int, _near(0.99999994, 1.5, 2.0**20 + 0.5)),
    "cospi": Reference(_cospi, 64, 8, _not_half_int, _near(0.49999997, 1.0, 2.0**20 + 1)),
    "tanpi": Reference(_tanpi, 64, 8, lambda x: _not_int(x) & _not_half_int(x), _near(0.49999997, 0.25, 0.2500001)),
    "sinh": Reference(np.sinh, 64, 8, hard=_near(1e-4, 89.4)), "cosh": Reference(np.cosh, 64, 8),
    "tanh": Reference(np.tanh, 64, 8, hard=_near(1e-4)),
    "asin": Reference(np.arcsin, 64, 4, lambda x: np.abs(x) <= 1, _near(0.99999994, -1.0)),
    "acos": Reference(np.arccos, 64, 4, lambda x: (np.abs(x) <= 1) & (x != 1), _near(0.99999994, -1.0)),
    "atan": Reference(np.arctan, 64, 4), "asinh": Reference(np.arcsinh, 64, 8),
    "acosh": Reference(np.arccosh, 64, 4, lambda x: x > 1, _near(1.0)),
    "atanh": Reference(np.arctanh, 64, 8, lambda x: np.abs(x) < 1, _near(0.99999994, 1e-4)),
    "asinpi": Reference(_over_pi(np.arcsin), 128, 8, lambda x: np.abs(x) <= 1, _near(0.99999994, -1.0)),
    "acospi": Reference(_over_pi(np.arccos), 128, 8, lambda x: (np.abs(x) <= 1) & (x != 1), _near(-1.0)),
    "atanpi": Reference(_over_pi(np.arctan), 128, 8),
    "atan2": Reference(np.arctan2, 64, 4),
    "atan2pi": Reference(_over_pi(np.arctan2), 128, 8, refine=_atan2pi_diagonal),
    "hypot": Reference(np.hypot, 64, 4, refine=_hypot_apart),
    "pow": Reference(np.power, 64, 4, lambda x, y: ((x > 0) | (y == np.floor(y))) & (x != 1), fixed=_pow_fixed),
    "powr": Reference(np.power, 64, 4, lambda x, y: _log_domain(x)),
    "pown": Reference(lambda x, n: np.power(x, n.astype(x.dtype)), 64, 4, lambda x, n: n != 0, refine=_pown_exact,
                      fixed=lambda x, n: (n == 0, 1.0)),
    "rootn": Reference(_rootn, 256, None, lambda x, n: (n != 0) & ((x > 0) | (n % 2 != 0)),
                       fixed=lambda x, n: ((n == 0) | ((x < 0) & (n % 2 == 0)), np.nan)),  # §7.5.1 rootn
    "erf": Reference(_python(math.erf), 64, None, hard=_near(1e-8, 0.47, 3.9, -2.5)),
    "erfc": Reference(_python(math.erfc), 64, None, hard=_near(0.47, 3.9, 9.1, 26.5, -0.3)),
    "tgamma": Reference(_python(math.gamma), 64, None, lambda x: (x < 171) & ((x > 0) | _not_int(x)),
                        _near(1.0, 2.0, 1.4616321, 35.0, -0.5, -1.0, -2.0, -33.99),
                        fixed=lambda x: ((x < 0) & (np.floor(x) == x), np.nan)),  # C99 F.9.5.4: a negative integer
    "degrees": Reference(lambda x: x * (180 / _pi(x)), 4, 4),
    "radians": Reference(lambda x: x * (_pi(x) / 180), 4, 4),
}
for _n, _base in (("half_cos", "cos"), ("half_exp", "exp"), ("half_exp2", "exp2"), ("half_exp10", "exp10"),
                  ("half_log", "log"), ("half_log2", "log2"), ("half_log10", "log10"), ("half_rsqrt", "rsqrt"),
                  ("half_sin", "sin"), ("half_sqrt", "sqrt"), ("half_tan", "tan"), ("half_divide", "fdiv"),
                  ("half_powr", "powr")):
    _REFS[_n] = _REFS[_base]
_REFS["half_recip"] = Reference(lambda x: 1 / x, 4, 4)

REFERENCES: dict[str, Reference] = _REFS
"""Every function with a vectorized reference (sincos uses sin's and cos's). Not here: erf, erfc and
tgamma on double (no long double reference), lgamma, lgamma_r, fract, modf, frexp and mad (no
reference needed: their lanes are :mod:`oracles.math.fast_exact`'s), mix and smoothstep (absolute
bounds of the undefined edges), the other exact and correctly rounded functions of
:mod:`oracles.math.exact` (fma: a double fma in float64 rounds twice), rootn on double (the rounded
1/n costs |ln x| / n ulp, too much for a double's ulp) and the geometric functions
(:mod:`oracles.math.fast_geometric`)."""


def sample(fn: str, params: str, tname: str, rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """``n`` operand sets of the lane type: magnitudes uniform in log scale over the normal range,
    either sign (ints: small and large exponents), for the start-up check and the tests."""
    s = scalar(tname)
    out = []
    for p in params:
        if p in "gs":
            e = rng.uniform(s.min_exp + 1, s.max_exp, n)
            wide = np.where(rng.random(n) < 0.7, rng.uniform(-12, 12, n), e)
            with np.errstate(over="ignore"):
                v = (np.exp2(wide) * np.where(rng.random(n) < 0.5, -1, 1)).astype(s.dtype)
            out.append(v)
        else:
            out.append(np.where(rng.random(n) < 0.8, rng.integers(-9, 10, n), rng.integers(-300, 300, n)).astype(np.int32))
    return out


def exact(v) -> mpmath.mpf:
    """A float64 or long double value as an mpf, exactly (mpmath cannot take a long double)."""
    m, e = np.frexp(v)
    return mpmath.ldexp(mpmath.mpf(int(np.ldexp(m, 64))), int(e) - 64)


def _evaluated(ref: "Reference", tname: str, cols: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """The operand sets of ``cols`` on the reference's general rule (finite, nonzero, in its domain),
    in the working type as the filter passes them (one contiguous array each), and its values there."""
    ops = [c.astype(np.float64) if c.dtype.kind == "f" else c.astype(np.int64) for c in cols]
    w = working(tname)
    with np.errstate(all="ignore"):
        ok = ref.domain(*ops) & np.all([np.isfinite(o) & (o != 0) for o in ops], axis=0)
        args = [np.ascontiguousarray(c[ok].astype(w) if c.dtype.kind == "f" else c[ok].astype(np.int64)) for c in cols]
        return args, ref.evaluate(*args).astype(w)


def _truth(fn: str, args: list[np.ndarray], i: int) -> mpmath.mpf | None:
    """mpmath's value of ``fn`` at operand set ``i`` of ``args`` (at the caller's precision); None
    where mpmath cannot take the operands or the value is complex."""
    try:
        truth = PRECISE[fn](*[exact(a[i]) if a.dtype.kind == "f" else int(a[i]) for a in args])
    except (OverflowError, ZeroDivisionError, ValueError):
        return None
    return None if isinstance(truth, mpmath.mpc) else truth


@cache
def trusted(fn: str, tname: str) -> bool:
    """Whether ``fn``'s reference meets half its stated bound for lanes of ``tname`` on the
    installed numpy (module docstring), on a fixed sample evaluated as the filter evaluates it (one
    contiguous array, long enough for the SIMD loops and their tails)."""
    from lang.maths import FUNCTIONS  # the parameters' kinds

    ref = REFERENCES.get(fn)
    rel = ref.bound(tname) if ref is not None else None
    if rel is None:
        return False
    params = FUNCTIONS[fn].inputs
    rng = np.random.default_rng(20261124)
    cols = sample(fn, params, tname, rng, 509)
    with np.errstate(over="ignore"):  # hard cases beyond the type's range: infinite, left out below
        hard = ref.hard(rng, tname) if len(params) == 1 else []
    if hard:
        cols[0] = np.concatenate([cols[0], np.array([h[0] for h in hard], cols[0].dtype)])
    args, got = _evaluated(ref, tname, cols)
    fm = fmt(tname)
    worst = 0.0
    with mpmath.workprec(2 * np.finfo(working(tname)).nmant + 60):
        for i in range(len(got)):
            if not np.isfinite(got[i]) or got[i] == 0:
                continue
            truth = _truth(fn, args, i)
            if truth is None or not fm.tiny <= abs(truth) <= fm.max:
                continue  # a result the filter never decides here (oracles.math.fast: near zero or overflow)
            worst = max(worst, float(abs((exact(got[i]) - truth) / truth)))
    return worst <= rel / 2


@cache
def trusted_beyond(fn: str, tname: str) -> bool:
    """Whether ``fn``'s reference, :func:`trusted` in the type's range, also meets half its stated
    bound where the result is within twice the least normal value of zero or past the largest value
    (the lanes oracles.math.fast_decide.beyond decides), on a sample of the whole range of operands
    (:func:`sample`, most of whose lanes there come from its magnitudes over the normal range),
    and overflows its working type only where the true result is past 2^64 times the lane type's
    largest value, and underflows it (zero, or within 2^60 of its least normal value) only where
    the true result is below 2^-(P+3) of the least subnormal (``P`` the interval's precision,
    oracles.math.fast_decide._uniform), each with the true result's sign."""
    from lang.maths import FUNCTIONS  # the parameters' kinds

    if not trusted(fn, tname):
        return False
    ref, fm, w = REFERENCES[fn], fmt(tname), working(tname)
    cols = sample(fn, FUNCTIONS[fn].inputs, tname, np.random.default_rng(20261128), 1024)
    args, got = _evaluated(ref, tname, cols)
    rel = ref.bound(tname)
    with mpmath.workprec(2 * np.finfo(w).nmant + 60):
        for i in np.flatnonzero(~((np.abs(got) >= fm.tiny * 2) & (np.abs(got) <= fm.max / 4))):
            truth = _truth(fn, args, i)
            if truth is None:
                continue
            sign = bool(np.signbit(got[i])) == (truth < 0)
            if np.isnan(got[i]) or (np.isinf(got[i]) and not (abs(truth) > fm.max * mpmath.mpf(2) ** 64 and sign)):
                return False
            if abs(got[i]) < np.finfo(w).tiny * w(2.0**60):
                if not (abs(truth) < mpmath.ldexp(fm.denorm_min, -(fm.prec + 23)) and sign):
                    return False
            elif np.isfinite(got[i]) and abs(exact(got[i]) - truth) > rel / 2 * abs(truth):
                return False
    return True
