"""The audit's own number model (triage.audit): scalar types, bit patterns, exact values and
rounding, written from the specification and sharing no code with the oracle.

Every value is handled as Python integers and :class:`fractions.Fraction`: an integer lane is
its bit pattern read as two's complement or unsigned, a floating-point lane is decoded into
its sign, class and exact value, and a real result is rounded to a format with integer
arithmetic in one of the four modes of OpenCL C 3.0 §7.1 (rte, rtz, rtp, rtn), with gradual
underflow and the overflow rule of footnote [17] (IEEE 754 §7.4).

A lane of an expression is an :class:`AuditLane`: the values the spec allows for it (the first
is the reference), whether any NaN is allowed, and why it is not specified at all (undefined or
implementation-defined), if so.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

# OpenCL C 3.0 §6.3.1 Table 2: (kind, bits, signed); §6.15.2.1 / IEEE 754 binary16/32/64 formats
SCALARS: dict[str, tuple[str, int, bool]] = {
    "char": ("int", 8, True), "uchar": ("int", 8, False), "short": ("int", 16, True),
    "ushort": ("int", 16, False), "int": ("int", 32, True), "uint": ("int", 32, False),
    "long": ("int", 64, True), "ulong": ("int", 64, False),
    "half": ("float", 16, True), "float": ("float", 32, True), "double": ("float", 64, True),
}
FORMATS: dict[str, tuple[int, int, int]] = {  # precision p (with the hidden bit), emin, emax
    "half": (11, -14, 15), "float": (24, -126, 127), "double": (53, -1022, 1023),
}
MODES = ("rte", "rtz", "rtp", "rtn")


def is_float(s: str) -> bool:
    return SCALARS[s][0] == "float"


def width(s: str) -> int:
    return SCALARS[s][1]


def signed(s: str) -> bool:
    return SCALARS[s][2]


def int_range(s: str) -> tuple[int, int]:
    n = width(s)
    return (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed(s) else (0, (1 << n) - 1)


def mask(s: str) -> int:
    return (1 << width(s)) - 1


# ---- integers ------------------------------------------------------------------------------------


def int_value(bits: int, s: str) -> int:
    """The value of an integer lane's bits (two's complement for signed types, §6.3.1)."""
    bits &= mask(s)
    if signed(s) and bits >> (width(s) - 1):
        return bits - (1 << width(s))
    return bits


def int_bits(value: int, s: str) -> int:
    """An integer reduced modulo 2^N: the bits of ``value`` in type ``s``."""
    return value & mask(s)


# ---- floating point --------------------------------------------------------------------------------

NAN, INF, FINITE = "nan", "inf", "finite"


class TooMany(Exception):
    """More alternative operand values than the audit enumerates (an audit limit, not a verdict)."""


@dataclass(frozen=True)
class Real:
    """A decoded float: ``kind`` nan, inf or finite; ``neg`` the sign bit; ``value`` the exact
    magnitude-with-sign of a finite one (a zero keeps its sign in ``neg``)."""

    kind: str
    neg: bool
    value: Fraction = Fraction(0)

    @property
    def is_zero(self) -> bool:
        return self.kind == FINITE and self.value == 0


def decode(bits: int, s: str) -> Real:
    """The IEEE 754 value of a half, float or double bit pattern."""
    p, emin, _ = FORMATS[s]
    n = width(s)
    neg = bool(bits >> (n - 1) & 1)
    ebits = n - p
    e = (bits >> (p - 1)) & ((1 << ebits) - 1)
    m = bits & ((1 << (p - 1)) - 1)
    if e == (1 << ebits) - 1:
        return Real(NAN if m else INF, neg)
    if e == 0:
        mag = Fraction(m) * Fraction(2) ** (emin - p + 1)
    else:
        mag = Fraction(m | (1 << (p - 1))) * Fraction(2) ** (e - 1 + emin - (p - 1))
    return Real(FINITE, neg, -mag if neg else mag)


def encode_zero(s: str, neg: bool) -> int:
    return (1 << (width(s) - 1)) if neg else 0


def encode_inf(s: str, neg: bool) -> int:
    p = FORMATS[s][0]
    return encode_zero(s, neg) | (((1 << (width(s) - p)) - 1) << (p - 1))


def quiet_nan(s: str) -> int:
    p = FORMATS[s][0]
    return encode_inf(s, False) | (1 << (p - 2))


def max_finite(s: str) -> Fraction:
    p, _, emax = FORMATS[s]
    return Fraction((1 << p) - 1) * Fraction(2) ** (emax - p + 1)


def is_nan(bits: int, s: str) -> bool:
    return is_float(s) and decode(bits, s).kind == NAN


def subnormal(bits: int, s: str) -> bool:
    """0 < |x| < TYPE_MIN (§7.5.3's definition)."""
    r = decode(bits, s)
    return r.kind == FINITE and r.value != 0 and abs(r.value) < Fraction(2) ** FORMATS[s][1]


def tiny(value: Fraction, s: str) -> bool:
    """A nonzero exact result below the least normal magnitude: subnormal before rounding."""
    return value != 0 and abs(value) < Fraction(2) ** FORMATS[s][1]


def _floor_log2(q: Fraction) -> int:
    """floor(log2 q) for q > 0, exactly."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    elif Fraction(2) ** (e + 1) <= q:
        e += 1
    return e


def round_real(value: Fraction, s: str, mode: str = "rte", zero_neg: bool = False) -> int:
    """The bits of the exact ``value`` rounded to the float type ``s`` in ``mode`` (IEEE 754
    roundTiesToEven, roundTowardZero, roundTowardPositive, roundTowardNegative), with gradual
    underflow and overflow to +-inf or +-MAX by mode (footnote [17]). ``zero_neg`` is the sign
    of an exact zero."""
    if mode not in MODES:
        raise ValueError(mode)
    if value == 0:
        return encode_zero(s, zero_neg)
    p, emin, emax = FORMATS[s]
    neg = value < 0
    mag = -value if neg else value
    e = max(_floor_log2(mag), emin)
    quantum = Fraction(2) ** (e - p + 1)
    scaled = mag / quantum
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    if rest:
        if mode == "rte":
            up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m & 1)
        elif mode == "rtz":
            up = False
        else:
            up = (mode == "rtp") != neg
        m += int(up)
    result = m * quantum
    if result > max_finite(s):
        toward_zero = mode == "rtz" or (mode == "rtp" and neg) or (mode == "rtn" and not neg)
        if toward_zero:
            result = max_finite(s)
        else:
            return encode_inf(s, neg)
    if result == 0:  # rounded to zero: it keeps the sign of the value
        return encode_zero(s, neg)
    return encode_finite(-result if neg else result, s)


def encode_finite(value: Fraction, s: str) -> int:
    """The bits of a value representable in ``s`` (it must be)."""
    p, emin, _ = FORMATS[s]
    neg = value < 0
    mag = -value if neg else value
    if mag == 0:
        return encode_zero(s, neg)
    e = max(_floor_log2(mag), emin)
    m = mag / Fraction(2) ** (e - p + 1)
    if m.denominator != 1:
        raise ValueError(f"{value} is not representable in {s}")
    m = m.numerator
    if m >> (p - 1):  # normal
        bits = ((e - emin + 1) << (p - 1)) | (m & ((1 << (p - 1)) - 1))
    else:
        bits = m
    return bits | encode_zero(s, neg)


def ulp(value: Fraction, s: str) -> Fraction:
    """ulp(x) as OpenCL C 3.0 §7.4 defines it: the gap between the two finite floats around a
    real x that is not a float; at a float x = 2^e the gap below it (the smaller one); 0 at the
    least subnormal; the top binade's gap beyond MAX."""
    p, emin, emax = FORMATS[s]
    mag = abs(value)
    if mag == 0:
        return Fraction(2) ** (emin - p + 1)
    e = min(max(_floor_log2(mag), emin), emax)
    gap = Fraction(2) ** (e - p + 1)
    if mag == Fraction(2) ** e and e > emin:
        return gap / 2
    return gap


def finite_neighbours(lo: Fraction, hi: Fraction, s: str) -> tuple[int, int] | None:
    """The least and greatest finite floats of ``s`` inside [lo, hi] (bits), or None."""
    top = max_finite(s)
    lo, hi = max(lo, -top), min(hi, top)
    if lo > hi:
        return None
    a = round_real(lo, s, "rtp") if lo != 0 else 0
    b = round_real(hi, s, "rtn") if hi != 0 else 0
    if exact_of(a, s) > exact_of(b, s):
        return None
    return a, b


def exact_of(bits: int, s: str) -> Fraction:
    r = decode(bits, s)
    return r.value


def order_key(bits: int, s: str) -> Fraction:
    return decode(bits, s).value


def bits_text(bits: int, s: str) -> str:
    """A lane's value for people: decimal for integers, hex float for floats."""
    if not is_float(s):
        return str(int_value(bits, s))
    r = decode(bits, s)
    if r.kind == NAN:
        return f"nan(0x{bits:x})"
    if r.kind == INF:
        return "-inf" if r.neg else "inf"
    if r.value == 0:
        return "-0" if r.neg else "0"
    return f"{float(r.value).hex()} ({float(r.value):.9g})"


# ---- one lane of an audited expression -----------------------------------------------------------

NOT_AUDITED = "not audited: "
"""The prefix of an undefined lane's reason that is the audit's limit, not the spec's (a lane
that depends on it is reported as not audited)."""



@dataclass(frozen=True)
class AuditLane:
    """What the spec allows one lane to hold: ``values`` (bit patterns; the first is the
    reference), ``nan`` (any NaN is also allowed), ``ranges`` (inclusive intervals of exact
    values a float may also take: an error bound), ``undefined`` (non-empty: the value is not
    specified, and says why)."""

    scalar: str
    values: tuple[int, ...]
    nan: bool = False
    ranges: tuple[tuple[Fraction, Fraction], ...] = ()
    undefined: str = ""
    check: Callable[[int], bool] | None = None  # a further test of the bits (remquo's quotient)

    @property
    def reference(self) -> int:
        return self.values[0]

    def allows(self, bits: int) -> bool:
        if self.undefined:
            return True
        if bits in self.values or (self.check is not None and self.check(bits)):
            return True
        if not is_float(self.scalar):
            return False
        r = decode(bits, self.scalar)
        if r.kind == NAN:
            return self.nan
        if r.kind == INF:
            return False
        return any(lo <= r.value <= hi for lo, hi in self.ranges)

    def text(self) -> str:
        if self.undefined:
            return f"not specified ({self.undefined})"
        parts = [bits_text(v, self.scalar) for v in dict.fromkeys(self.values)]
        if self.nan and not any(is_nan(v, self.scalar) for v in self.values):
            parts.append("any NaN")
        parts += [f"[{_number(lo)}, {_number(hi)}]" for lo, hi in self.ranges]
        if self.check is not None:
            parts.append("(or the same low 7 bits and sign)")
        return " or ".join(parts)


def _number(q: Fraction) -> str:
    try:
        return repr(float(q))
    except OverflowError:
        return f"{'-' if q < 0 else ''}2^{_floor_log2(abs(q))}"


def exact_lane(s: str, bits: int) -> AuditLane:
    """A lane holding exactly ``bits`` (a loaded value or a literal: a NaN there is a NaN with
    known bits; only a NaN an operation produces has an unspecified payload and sign, OpenCL C
    3.0 §7.5.1, SPIR-V environment §6.7.1)."""
    return AuditLane(s, (bits,))


def real_lane(r: Real, s: str) -> AuditLane:
    """A lane holding the exact value ``r`` rounded to ``s`` (a NaN: any NaN; a zero keeps its sign)."""
    if r.kind == NAN:
        return AuditLane(s, (quiet_nan(s),), nan=True)
    if r.kind == INF:
        return AuditLane(s, (encode_inf(s, r.neg),))
    return AuditLane(s, (round_real(r.value, s, zero_neg=r.neg),))


def undefined_lane(s: str, why: str) -> AuditLane:
    return AuditLane(s, (0,), undefined=why)
