"""Floating-point formats as exact arithmetic: rounding of dyadic values, ulp, accepted intervals.

Values are mpmath ``mpf`` numbers, which are dyadic (``man * 2**exp``) and exact at any precision
the caller sets; a result is rounded to a format (half, float, double) with integer arithmetic on
the mantissa, so every rounding here is exact and independent of the host's float behaviour.

``ulp`` follows OpenCL C 3.0.19 §7.4 (Muller's definition): for a real x strictly between two
consecutive finite floats a and b, |b - a|; otherwise the distance between the two non-equal
finite floats nearest x (at a power of two 2^e that is the gap below it, 2^(e-p); at zero the
least subnormal). Beyond the largest finite float it is the gap of the top binade.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
from mpmath import mpf

from lang.types import scalar


@dataclass(frozen=True)
class Format:
    name: str
    p: int  # significand bits including the implicit one
    emin: int  # exponent of the least normal value
    emax: int  # exponent of the top binade

    @property
    def max(self) -> float:
        return math.ldexp(2.0 - 2.0 ** (1 - self.p), self.emax)

    @property
    def tiny(self) -> float:
        """The least normal value (FLT_MIN)."""
        return math.ldexp(1.0, self.emin)

    @property
    def denorm_min(self) -> float:
        return math.ldexp(1.0, self.emin - self.p + 1)

    @property
    def epsilon(self) -> float:
        return math.ldexp(1.0, 1 - self.p)

    @property
    def prec(self) -> int:
        """Working precision for references: twice the format's plus 40 guard bits."""
        return 2 * self.p + 40


@lru_cache(maxsize=None)
def fmt(name: str) -> Format:
    s = scalar(name)
    return Format(name, s.mant_bits, s.min_exp, s.max_exp)


def exponent(x: mpf) -> int:
    """floor(log2|x|) of a nonzero finite mpf."""
    _, man, exp, bc = x._mpf_
    return exp + bc - 1


def round_to(x: mpf, f: Format, mode: str = "n") -> float:
    """``x`` rounded to format ``f`` (to nearest even ``n``, toward -inf ``f``, toward +inf ``c``),
    as a Python float holding exactly that value (±inf on overflow where the mode rounds away
    from zero, ±MAX where it rounds toward zero)."""
    if mpmath.isnan(x):
        return math.nan
    if mpmath.isinf(x):
        return math.inf if x > 0 else -math.inf
    if x == 0:
        return -0.0 if x._mpf_[0] else 0.0
    sign, man, exp, bc = x._mpf_
    q = max(exp + bc - 1, f.emin) - (f.p - 1)
    shift = exp - q
    if shift >= 0:
        m = man << shift
    elif -shift > bc + 1:  # far below half the least quantum: 0, or one quantum away from zero
        m = int({"n": False, "f": bool(sign), "c": not sign}[mode])
    else:
        m, rem = man >> -shift, man & ((1 << -shift) - 1)
        if rem:
            half = 1 << (-shift - 1)
            up = {"n": rem > half or (rem == half and m & 1),
                  "f": bool(sign), "c": not sign}[mode]
            m += up
    if m.bit_length() + q - 1 > f.emax:
        toward_zero = mode == ("c" if sign else "f")
        v = f.max if toward_zero else math.inf
    else:
        v = math.ldexp(m, q)
    return -v if sign else v


def ulp(x: mpf, f: Format) -> mpf:
    """ulp(x) in format ``f`` (module docstring); x finite."""
    if x == 0:
        return mpf(f.denorm_min)
    e = exponent(x)
    if e > f.emax:
        return mpmath.ldexp(1, f.emax - f.p + 1)
    q = max(e, f.emin) - (f.p - 1)
    if e > f.emin and abs(x) == mpmath.ldexp(1, e):
        return mpmath.ldexp(1, q - 1)
    return mpmath.ldexp(1, q)


def interval(x: mpf, width: mpf, f: Format) -> tuple[float, float, bool, bool]:
    """The finite floats within ``width`` of ``x`` as ``(lo, hi)`` (lo > hi when none), and whether
    +inf and -inf are within it too: §7.4 allows infinity for a finite reference when the next
    value past MAX (2^(emax+1), as if the exponent range were unbounded) is within tolerance.
    The interval is widened by 2^-(prec-8) relative so a reference computed at working precision
    never rejects a result that is within the bound."""
    with mpmath.workprec(f.prec + 20):
        slack = abs(x) * mpmath.ldexp(1, -(f.prec - 8))
        lo, hi = x - width - slack, x + width + slack
        top = mpmath.ldexp(1, f.emax + 1)
        lo_f, hi_f = round_to(lo, f, "c"), round_to(hi, f, "f")
    lo_f, hi_f = max(lo_f, -f.max), min(hi_f, f.max)
    return lo_f, hi_f, hi >= top, lo <= -top
