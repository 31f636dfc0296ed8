"""What the audit's floating-point built-ins share (audit.math, audit.common, audit.geometric):
the setting of one call (its floating type, whether the device may flush, the build's rules,
audit.build), the values an operand lane may be read as, and the two kinds of bound of OpenCL C
3.0.19 §7.4 (ulp of the infinitely precise result, with its overflow rule; an absolute error).
No oracle code.

Operand readings: a lane's values (a NaN allowed as "any NaN" read as a NaN of either sign);
where the device may flush denormals (§7.2, §7.5.3 case 3; -cl-denorms-are-zero) a subnormal is
also read as +0 and -0; where the sign of zero is not significant (-cl-no-signed-zeros, implied
by -cl-unsafe-math-optimizations) a zero is also read as the other zero.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from audit.base import Unsupported
from audit.build import Build
from audit.convert import merge
from audit.values import (
    FINITE,
    FORMATS,
    NAN,
    NOT_AUDITED,
    AuditLane,
    Real,
    decode,
    encode_inf,
    encode_zero,
    int_value,
    is_float,
    max_finite,
    quiet_nan,
    round_real,
    subnormal,
    ulp,
)


class Setting:
    """How one call's lanes are judged: its floating type ``s``, whether the device may flush
    its denormals (half_ functions may, §6.15.2), the build's rules and the path."""

    def __init__(self, ev, fn: str, s: str):
        if s not in ("float", "double"):
            raise Unsupported(f"{fn} on {s} (the audit models float and double)")
        if "EMBEDDED" in str((getattr(ev, "fingerprint", {}) or {}).get("profile", "")):
            raise Unsupported("embedded-profile bounds")
        self.fn, self.s, self.spirv = fn, s, ev.spirv
        self.build: Build = ev.build
        self.flush = ev.env.flushes(s) or fn.startswith("half_")

    def void(self) -> str:
        """Why no rule judges this call at all ('' where some rule does)."""
        return self.build.voids_accuracy(self.s)


def readings(st: Setting, lane: AuditLane) -> list:
    """The values an operand lane may be read as (Real for floats, int for integers; module
    docstring); raises :class:`Uncertain` for a lane that is not specified or known only within
    a bound."""
    if lane.undefined:
        raise Uncertain(lane.undefined)
    if lane.ranges or len(set(lane.values)) > 1 and not is_float(lane.scalar):
        raise Uncertain(f"{NOT_AUDITED}an operand known only within an error bound or as one of several integers")
    s = lane.scalar
    if not is_float(s):
        return [int_value(lane.values[0], s)]
    values = list(dict.fromkeys(lane.values))
    if lane.nan and not any(decode(v, s).kind == NAN for v in values):
        values.append(quiet_nan(s))
    out = [decode(v, s) for v in values]
    if lane.nan:  # any NaN: of either sign (§7.5.1); a loaded NaN keeps its own bits
        out.append(Real(NAN, True))
    if st.flush:
        out += [Real(FINITE, n) for v in values if subnormal(v, s) for n in (False, True)]
    if st.build.no_signed_zeros:
        out += [Real(FINITE, not r.neg) for r in out if r.is_zero]
    return list(dict.fromkeys(out))


class Uncertain(Exception):
    """An operand lane with no single set of values (the message says why)."""


def zeros(s: str) -> AuditLane:
    """Both zeros."""
    return AuditLane(s, (encode_zero(s, False), encode_zero(s, True)))


def signless(lane: AuditLane, st: Setting) -> AuditLane:
    """``lane`` with both zeros where it allows a zero and the sign of zero is not significant."""
    if lane.undefined or not is_float(lane.scalar) or not st.build.no_signed_zeros:
        return lane
    if any(decode(v, lane.scalar).is_zero for v in lane.values) or any(lo <= 0 <= hi for lo, hi in lane.ranges):
        return merge(lane.scalar, [lane, zeros(lane.scalar)])
    return lane


def mpf(value: Fraction) -> mpmath.mpf:
    """An exact Fraction as an mpf (at the working precision)."""
    return mpmath.mpf(value.numerator) / value.denominator


def fraction(x, s: str) -> Fraction:
    """An mpf (a dyadic number) as an exact Fraction; a magnitude beyond 2^(emax+2), or below a
    quarter of the least subnormal, is clamped there (every bound then decides alike: overflow,
    or a result within a quarter ulp of zero of the same sign)."""
    sign, man, exp, bc = mpmath.mpf(x)._mpf_
    p, emin, emax = FORMATS[s]
    top = exp + bc - 1
    if man and top > emax + 2:
        man, exp = 1, emax + 2
    elif man and top < emin - p - 2:
        man, exp = 1, emin - p - 2
    v = Fraction(man) * Fraction(2) ** exp
    return -v if sign else v


def precision(s: str) -> int:
    """The working precision of mpmath references: four times the format's plus 64 bits."""
    return 4 * FORMATS[s][0] + 64


def bounded(ref: Fraction, s: str, k: float) -> AuditLane:
    """Within ``k`` ulp (§7.4) of the exact ``ref``; infinity where the value after MAX (as if the
    exponent range were unbounded) is within the bound ("result overflow ... is permitted")."""
    nearest = round_real(ref, s)
    if k == 0:
        return AuditLane(s, (nearest,))
    w = Fraction(k).limit_denominator(16) * ulp(ref, s)
    lo, hi = ref - w, ref + w
    values = [nearest]
    after_max = max_finite(s) + ulp(max_finite(s), s)
    if hi >= after_max:
        values.append(encode_inf(s, False))
    if lo <= -after_max:
        values.append(encode_inf(s, True))
    return AuditLane(s, tuple(values), ranges=((lo, hi),))


def absolute(ref: Fraction, s: str, err: Fraction) -> AuditLane:
    """Within the absolute error ``err`` of the exact ``ref``."""
    return AuditLane(s, (round_real(ref, s),), ranges=((ref - err, ref + err),))
