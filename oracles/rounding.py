"""Exact rounding to binary floating-point formats, vectorized on integers.

Every finite value is ``(-1)**sign * M * 2**E`` with ``M`` a uint64 (an integer's magnitude, or a
float's significand, :func:`decode_int` / :func:`decode_float`), and rounding it to a binary format
of precision ``p`` (:func:`round_binary`) is integer shifting with an explicit remainder: no
floating-point rounding is ever trusted. Gradual underflow and IEEE overflow (OpenCL C 3.0.19 §7.4,
footnote [17]; IEEE 754-2008 §7.4) are part of the rounding. (:mod:`oracles.floats` does the same
for single mpmath values.) For the conversions to integer types, a float64's exact place against
an integer type's range (:func:`below_above`) and the cast of integral values (:func:`float64_to_int`).

One exception, for speed: rounding to nearest, ties to even (a conversion's default to a
floating-point type, OpenCL C 3.0.19 §6.4.3.2) is :func:`nearest_even`, numpy's casts, which IEEE
754-2008 §5.4.2 and §5.4.1 require to be correctly rounded in that mode (C casts under the
default floating-point environment; numpy's own routines for half). Every pair of types is
checked against :func:`round_binary` in ``tests/oracles/test_nearest_even.py``; it is 5 to 19
times faster into float and double, 1.0 to 1.6 times into half from the 32- and 64-bit types
(numpy's half casts are software), ``bench/oracle_rounding.py``. Where the process's casts do not
round to nearest even with gradual underflow (:func:`ieee_casts`: another library in the process
set flush-to-zero, denormals-are-zero or another rounding mode, as one linked with -ffast-math does
when it is loaded), :func:`round_to` rounds as integers again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lang.types import Scalar

_U64 = np.uint64
_ONE = np.uint64(1)


def bit_length(m: np.ndarray) -> np.ndarray:
    """Bit length of each uint64 (0 for 0), as int64, by a 6-step binary search."""
    x = m.copy()
    n = np.zeros(m.shape, np.int64)
    for k in (32, 16, 8, 4, 2, 1):
        t = x >> _U64(k)
        big = t != 0
        x = np.where(big, t, x)
        n += big * k
    return n + (x != 0)


def decode_float(values: np.ndarray, s: Scalar) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split floats into (sign, M, E, is_nan, is_inf) with value = (-1)**sign * M * 2**E."""
    p = s.mant_bits
    ebits = s.bits - p
    bias = (1 << (ebits - 1)) - 1
    b = np.ascontiguousarray(values).view(s.bits_dtype).astype(np.uint64)
    sign = (b >> _U64(s.bits - 1)) != 0
    efield = ((b >> _U64(p - 1)) & _U64((1 << ebits) - 1)).astype(np.int64)
    mant = b & _U64((1 << (p - 1)) - 1)
    special = efield == (1 << ebits) - 1
    is_nan = special & (mant != 0)
    is_inf = special & (mant == 0)
    normal = efield != 0
    m = np.where(normal, mant | _U64(1 << (p - 1)), mant)
    e = np.where(normal, efield, 1) - bias - (p - 1)
    m = np.where(special, _U64(0), m)
    return sign, m, e, is_nan, is_inf


def decode_int(values: np.ndarray, s: Scalar) -> tuple[np.ndarray, np.ndarray]:
    """(sign, magnitude as uint64) of integers; exact for every 64-bit value."""
    if s.signed:
        v = values.astype(np.int64)
        sign = v < 0
        u = v.view(np.uint64)
        return sign, np.where(sign, _U64(0) - u, u)
    return np.zeros(values.shape, bool), values.astype(np.uint64)


def float64_to_int(r: np.ndarray, d: Scalar) -> np.ndarray:
    """Integral float64 values known to lie in [d.min, d.max] (others: any value) -> d.dtype."""
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.where(np.isfinite(r), r, 0.0)
        if d.bits == 64 and not d.signed:
            hi = r >= 2.0**63
            low = np.where(hi, r - 2.0**63, r)  # exact: r is an integer < 2**64
            low = np.where((low >= -(2.0**63)) & (low < 2.0**63), low, 0.0)
            u = low.astype(np.int64).view(np.uint64)
            return np.where(hi, u + np.uint64(1 << 63), u)
        r = np.where((r >= -(2.0**63)) & (r < 2.0**63), r, 0.0)
        return r.astype(np.int64).astype(d.dtype)


def below_above(x: np.ndarray, d: Scalar) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``x < d.min`` and ``x > d.max`` for float64 ``x`` (False for NaN).

    d.min is 0 or -2**(bits-1): exact in float64. d.max is exact for bits <= 32; for 64 bits it is
    2**k - 1 and no float64 lies strictly between 2**k - 1 and 2**k, so ``x > max`` <=> ``x >= 2**k``.
    """
    below = x < float(d.min)
    if d.bits <= 32:
        above = x > float(d.max)
    else:
        above = x >= float(d.max + 1)
    return below, above


@dataclass
class Rounded:
    """A magnitude rounded by :func:`round_binary`, and what the rounding did."""

    value: np.ndarray  # float64 magnitude (finite, or inf on overflow), before the sign
    exact: np.ndarray
    tiny: np.ndarray  # nonzero and |exact value| < 2**emin: "subnormal before rounding" (§7.5.3)
    overflow: np.ndarray


def round_binary(sign: np.ndarray, m: np.ndarray, e: np.ndarray, d: Scalar, mode: str) -> Rounded:
    """Round |x| = m * 2**e (m uint64, e int64) to the binary format ``d`` in ``mode``.

    Precision p = d.mant_bits; the quantum of the result is 2**max(top - p + 1, emin - p + 1)
    where 2**top <= |x| < 2**(top+1) (the second term gives gradual underflow). The dropped bits
    are compared with half a quantum exactly, as integers. Overflow (IEEE 754-2008 §7.4, footnote
    [17]) is judged on the result rounded with unbounded exponent.
    """
    p, emin = d.mant_bits, d.min_exp
    bl = bit_length(m)
    nonzero = m != 0
    top = e + bl - 1
    qexp = np.maximum(top - (p - 1), emin - (p - 1))
    shift = qexp - e
    rounds = nonzero & (shift > 0)
    sh = np.clip(shift, 0, 63).astype(np.uint64)
    q = np.where(shift >= 64, _U64(0), m >> sh)
    rem = m - (q << sh)  # the dropped bits (all of m when shift >= 64)
    half_sh = np.clip(shift - 1, 0, 63).astype(np.uint64)
    half = _ONE << half_sh
    beyond = shift > 64  # half a quantum is >= 2**64 > rem
    gt = rounds & ~beyond & (rem > half)
    eq = rounds & ~beyond & (rem == half)
    inexact = rounds & (rem != 0)
    if mode == "rte":
        inc = gt | (eq & ((q & _ONE) == 1))
    elif mode == "rtz":
        inc = np.zeros(m.shape, bool)
    elif mode == "rtp":
        inc = inexact & ~sign
    elif mode == "rtn":
        inc = inexact & sign
    else:  # pragma: no cover - checked by callers
        raise ValueError(mode)
    mag = np.where(rounds, q + inc.astype(np.uint64), m)
    ex = np.where(rounds, qexp, e)
    with np.errstate(over="ignore", invalid="ignore"):
        # mag <= 2**p <= 2**53 is exact in float64; ldexp by a power of two is exact unless it
        # overflows float64 (then inf, still > MAX) -- only possible for a double destination.
        val = np.ldexp(mag.astype(np.float64), np.clip(ex, -2000, 2000).astype(np.int32))
    fmax = float(np.finfo(d.dtype).max)
    overflow = val > fmax
    to_inf = np.full(m.shape, mode == "rte") | ((mode == "rtp") & ~sign) | ((mode == "rtn") & sign)
    val = np.where(overflow, np.where(to_inf, np.inf, fmax), val)
    tiny = nonzero & (top < emin)
    return Rounded(val, ~inexact, tiny, overflow)


_PROBE = np.array([1 + 2.0**-24, 1 + 2.0**-24 + 2.0**-40, -(1 + 2.0**-24 + 2.0**-40), 2.0**-140])
_PROBE_BITS = np.array([0x3F800000, 0x3F800001, 0xBF800001, 0x00000200], np.uint32)
"""float64 values (a tie, above a tie either side of 0, a float subnormal) and their float bits
rounded to nearest even with gradual underflow."""


def ieee_casts() -> bool:
    """Whether this process's float casts round to nearest even with gradual underflow now: the
    probe's ties and subnormal come out right and a float subnormal widens to a nonzero double (the
    x86 MXCSR's rounding, flush-to-zero and denormals-are-zero bits are per thread and any library
    may set them)."""
    with np.errstate(under="ignore"):
        cast = _PROBE.astype(np.float32)
    return bool(np.array_equal(cast.view(np.uint32), _PROBE_BITS) and cast[3].astype(np.float64) != 0)


def round_to(values: np.ndarray, s: Scalar, d: Scalar, mode: str) -> Rounded:
    """The magnitudes of ``values`` (of type ``s``, an integer or floating type other than ``d``)
    rounded to the floating type ``d`` in ``mode``: by numpy's casts where the mode is ``"rte"``
    and they round that way here (:func:`nearest_even`, :func:`ieee_casts`), else by
    :func:`round_exactly`. NaN and infinite operands are the caller's."""
    return nearest_even(values, s, d) if mode == "rte" and ieee_casts() else round_exactly(values, s, d, mode)


def round_exactly(values: np.ndarray, s: Scalar, d: Scalar, mode: str) -> Rounded:
    """:func:`round_binary` of ``values``, decoded (:func:`decode_int`, :func:`decode_float`)."""
    if s.is_int:
        sign, m = decode_int(values, s)
        return round_binary(sign, m, np.zeros(m.shape, np.int64), d, mode)
    sign, m, e, _, _ = decode_float(values, s)
    return round_binary(sign, m, e, d, mode)


def nearest_even(values: np.ndarray, s: Scalar, d: Scalar) -> Rounded:
    """What :func:`round_exactly` gives in mode ``"rte"``, by numpy's casts (module docstring:
    right where :func:`ieee_casts` holds)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        cast = values.astype(d.dtype).astype(np.float64)
    if s.is_int:
        below, above = below_above(cast, s)
        exact = ~(below | above) & (float64_to_int(cast, s) == values)
        return Rounded(np.abs(cast), exact, np.zeros(values.shape, bool), np.isinf(cast))
    with np.errstate(invalid="ignore"):
        x = values.astype(np.float64)  # exact for half, float and double
    tiny = (x != 0) & (np.abs(x) < 2.0**d.min_exp)
    return Rounded(np.abs(cast), cast == x, tiny, np.isinf(cast) & np.isfinite(x))
