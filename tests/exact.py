"""An independent exact reference for floating-point and integer rounding, shared by tests.

It shares no code with the oracle: values are decoded through Python floats and
``fractions.Fraction`` (half from its bits, by hand), exact rationals are rounded with Python's own
``round``/``math.floor``/``math.ceil`` and IEEE bit patterns are encoded by hand, from IEEE
754-2008 §4.3, §7.4, §7.5 and OpenCL C 3.0.19 §6.4.3, §7.1, footnote [17]. Format parameters
and integer ranges are spelled out here rather than taken from ``lang.types``, so that table is
cross-checked too.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# name: (total bits, precision p incl. implicit bit, emin, emax, exponent bits)
FLOATS = {
    "half": (16, 11, -14, 15, 5),
    "float": (32, 24, -126, 127, 8),
    "double": (64, 53, -1022, 1023, 11),
}
# name: (bits, signed)
INTS = {
    "char": (8, True), "uchar": (8, False), "short": (16, True), "ushort": (16, False),
    "int": (32, True), "uint": (32, False), "long": (64, True), "ulong": (64, False),
}
NP = {
    "char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
    "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16,
    "float": np.float32, "double": np.float64,
}
UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
MODES = ("rte", "rtz", "rtp", "rtn")


def int_range(name: str) -> tuple[int, int]:
    bits, signed = INTS[name]
    return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)


def float_max(name: str) -> Fraction:
    _, p, _, emax, _ = FLOATS[name]
    return Fraction(2**p - 1) * Fraction(2) ** (emax - p + 1)


def decode(bits: int, name: str):
    """('nan'|'inf'|Fraction, negative) of the value with bit pattern ``bits`` of type ``name``."""
    if name in INTS:
        nbits, signed = INTS[name]
        v = bits - (1 << nbits) if signed and bits >> (nbits - 1) else bits
        return Fraction(v), v < 0
    if name == "half":  # by hand, from the bits
        neg = bool(bits >> 15)
        e, m = (bits >> 10) & 31, bits & 1023
        if e == 31:
            return ("nan" if m else "inf"), neg
        mag = Fraction(m, 2**24) if e == 0 else Fraction(1024 + m) * Fraction(2) ** (e - 25)
        return (-mag if neg else mag), neg
    dtype = NP[name]
    x = float(np.array([bits], dtype=UNSIGNED[FLOATS[name][0]]).view(dtype)[0])
    neg = math.copysign(1.0, x) < 0
    if math.isnan(x):
        return "nan", neg
    if math.isinf(x):
        return "inf", neg
    return Fraction(x), neg  # exact: Fraction(float) is the float's exact value


def round_to_int(q: Fraction, mode: str) -> int:
    if mode == "rte":
        return round(q)  # Fraction.__round__ rounds half to even
    if mode == "rtz":
        return math.trunc(q)
    if mode == "rtp":
        return math.ceil(q)
    return math.floor(q)


def encode(name: str, neg: bool, expfield: int, mant: int) -> int:
    nbits, p = FLOATS[name][0], FLOATS[name][1]
    return (int(neg) << (nbits - 1)) | (expfield << (p - 1)) | mant


def round_to_float(q: Fraction, neg: bool, name: str, mode: str) -> tuple[int, str]:
    """Bits of ``q`` (sign ``neg`` for zeros) correctly rounded to ``name`` in ``mode``, and which
    case applied: 'exact', 'round', 'subnormal' (|q| < MIN, nonzero) or 'overflow'."""
    nbits, p, emin, emax, ebits = FLOATS[name]
    bias = 2 ** (ebits - 1) - 1
    if q == 0:
        return encode(name, neg, 0, 0), "exact"
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    tiny = e < emin
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    scaled = a / quantum
    if mode == "rte":
        m = round(scaled)
    elif mode == "rtz" or (mode == "rtp" and neg) or (mode == "rtn" and not neg):
        m = math.floor(scaled)
    else:
        m = math.ceil(scaled)
    case = "exact" if m == scaled else "round"
    if tiny:
        case = "subnormal"
    value = m * quantum
    if value > float_max(name):
        to_inf = mode == "rte" or (mode == "rtp" and not neg) or (mode == "rtn" and neg)
        if to_inf:
            return encode(name, neg, 2**ebits - 1, 0), "overflow"
        return encode(name, neg, 2**ebits - 2, 2 ** (p - 1) - 1), "overflow"
    if value == 0:
        return encode(name, neg, 0, 0), case
    # re-derive the exponent of the rounded value (rounding may have carried into the next binade)
    f = e if value < Fraction(2) ** (e + 1) else e + 1
    if f < emin:  # subnormal result
        mant = value / Fraction(2) ** (emin - p + 1)
        assert mant.denominator == 1
        return encode(name, neg, 0, int(mant)), case
    mant = value / Fraction(2) ** (f - p + 1)
    assert mant.denominator == 1 and 2 ** (p - 1) <= mant < 2**p
    return encode(name, neg, f + bias, int(mant) - 2 ** (p - 1)), case


