"""How one checked lane of a piglit test is compared: by value with a tolerance, or by its bits.

piglit's ``cl-program-tester`` (Debian 12's ``piglit`` package) compares an output buffer element
by element, with one tolerance per buffer: an integer element passes when
``|actual - expected| <= tolerance``; a floating one (``tolerance N ulp``) when both are NaN, both
are infinities of one sign, ``N`` reaches 2^24 (2^53 for double), or ``|actual - expected| <=
N * ulp(expected)``, ulp being the distance from ``expected`` to the next value away from zero,
all computed in the element's type (``piglit_cl_probe_floating``/``_double``). So -0.0 equals +0.0,
every NaN equals every NaN, and an expected NaN or infinity accepts any finite value.

:func:`encode` picks, for a lane the oracle judges (its allowed bits, any NaN, value intervals:
triage.repro_script.checks), the first comparison that (i) passes every value the specification
allows and (ii) fails the driver's wrong value:

- by value: the reference (the correctly rounded result) with the smallest tolerance that holds
  every allowed value and interval (integers: the middle of the allowed values, the tolerance
  reaching both ends);
- by bits (floating types only): ``as_uint``/``as_ulong``/``as_ushort`` of the lane into an
  integer buffer, the tolerance holding every allowed bit pattern; with the sign bit cleared where
  that is what makes (i) and (ii) hold (any NaN of either sign).

A lane neither can express is left out with the reason. :func:`probe_float` and
:func:`probe_int` are the tester's comparisons, step by step in the element's type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from lang.types import scalar

BITS_TYPE = {"half": "ushort", "float": "uint", "double": "ulong"}
"""The integer type of a floating type's bits (``as_uint`` of a float)."""


@dataclass(frozen=True)
class Encoding:
    """How a lane is checked: ``form`` "value" (the lane itself into a ``ctype`` buffer) or "bits"
    (``as_<ctype>`` of it, ``& mask``); the expected element as the tester reads it, and the
    tolerance text of its buffer ("" exact, "N" or "N ulp")."""

    form: str
    ctype: str
    mask: int
    expect: str
    tolerance: str


def float_token(value: float) -> str:
    """A floating value as the tester parses it exactly: hexadecimal (``-0x1.8p+1``), ``inf``."""
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    return float(value).hex()


def probe_float(actual: float, expect: float, ulps: int, dtype: str) -> bool:
    """Whether the tester accepts ``actual`` for ``expect`` with ``tolerance ulps ulp`` in a
    ``float32``/``float64`` buffer (piglit_cl_probe_floating / piglit_cl_probe_double)."""
    t = np.dtype(dtype).type
    v, e = t(actual), t(expect)
    if (np.isnan(v) and np.isnan(e)) or (np.isinf(v) and np.isinf(e) and (v > 0) == (e > 0)):
        return True
    if ulps >= 1 << (np.finfo(t).nmant + 1):  # "any value"
        return True
    with np.errstate(all="ignore"):
        one_ulp = np.nextafter(e, t(-np.inf) if np.signbit(e) else t(np.inf)) - e
        tolerance = abs(t(ulps) * one_ulp)
        diff = abs(v - e)
    return not (diff > tolerance or np.isnan(v))


def probe_int(actual: int, expect: int, tolerance: int) -> bool:
    """Whether the tester accepts ``actual`` for ``expect`` (piglit_cl_probe_integer / _uinteger:
    the difference in 64 bits, compared unsigned)."""
    return (abs(actual - expect) % (1 << 64)) <= tolerance


def _value_of(bits: int, name: str) -> float | int:
    s = scalar(name)
    v = np.array([bits], dtype=s.bits_dtype).view(s.dtype)[0]
    return float(v) if s.is_float else int(v)


def _ulps_needed(points: list[float], expect: float, dtype: str) -> int | None:
    """The smallest N with which the tester accepts every point for ``expect``; None if none
    short of "any value"."""
    t = np.dtype(dtype).type
    e = t(expect)
    with np.errstate(all="ignore"):
        one_ulp = float(abs(np.nextafter(e, t(-np.inf) if np.signbit(e) else t(np.inf)) - e))
    if not math.isfinite(one_ulp) or one_ulp == 0 or not all(math.isfinite(p) for p in points):
        return None  # an infinity is not within any number of ulps of a finite value
    worst = max((abs(Fraction(p) - Fraction(expect)) for p in points), default=Fraction(0))
    n = math.ceil(worst / Fraction(one_ulp))
    limit = 1 << (np.finfo(t).nmant + 1)
    while n < limit and not all(probe_float(p, expect, n, dtype) for p in points):
        n += 1  # the tester's own rounding of |p - expect|
    return n if n < limit else None


def _by_value(check: dict, name: str, actual: int | None) -> Encoding | None:
    """The lane compared by value, or None where that cannot tell the driver's value apart."""
    s = scalar(name)
    allowed = [_value_of(b, name) for b in check["allowed"]]
    if s.is_float:
        if name == "half" or check["any_nan"] or any(math.isnan(a) for a in allowed):
            return None  # the tester's half parser converts by value; an expected NaN accepts anything
        expect = allowed[0]
        ulps = _ulps_needed(allowed + [x for r in check["ranges"] for x in r[2:]], expect, s.dtype.name)
        if ulps is None or (actual is not None and probe_float(_value_of(actual, name), expect, ulps, s.dtype.name)):
            return None
        return Encoding("value", name, 0, float_token(expect), f"{ulps} ulp" if ulps else "")
    ends = allowed + [x for r in check["ranges"] for x in r[2:]]
    found = _around(min(ends), max(ends), None if actual is None else _value_of(actual, name))
    return None if found is None else Encoding("value", name, 0, str(found[0]), str(found[1]) if found[1] else "")


def _around(lo: int, hi: int, actual: int | None) -> tuple[int, int] | None:
    """An expected integer and a tolerance the tester accepts every integer of [lo, hi] with and
    ``actual`` not (the middle, rounded down or up: the tolerance reaches one past the other end);
    None if there is none."""
    tolerance = (hi - lo + 1) // 2
    for expect in dict.fromkeys(((lo + hi) // 2, (lo + hi + 1) // 2)):
        if actual is None or not probe_int(actual, expect, tolerance):
            return expect, tolerance
    return None


def _bit_intervals(check: dict, name: str, mask: int) -> list[tuple[int, int]]:
    """Every allowed bit pattern of a floating lane as intervals of ``bits & mask``."""
    sign, inf = 1 << (scalar(name).bits - 1), _bits_of(math.inf, name)
    out = [(b & mask, b & mask) for b in check["allowed"]]
    if check["any_nan"]:
        out += [(inf + 1, sign - 1), (((sign | inf) + 1) & mask, (sign | (sign - 1)) & mask)]
    for _, _, lo, hi in check["ranges"]:
        if hi >= 0:  # the non-negative part: +0 (or lo) up to hi
            out.append((_bits_of(lo if lo > 0 else 0.0, name) & mask, _bits_of(hi, name) & mask))
        if math.copysign(1, lo) < 0:  # the negative part: -0 (or hi) down to lo
            out.append(((_bits_of(hi, name) if hi < 0 else sign) & mask, _bits_of(lo, name) & mask))
    return [(min(a, b), max(a, b)) for a, b in out]


def _bits_of(value: float, name: str) -> int:
    s = scalar(name)
    return int(np.array([value], dtype=s.dtype).view(s.bits_dtype)[0])


def _by_bits(check: dict, name: str, actual: int | None) -> Encoding | None:
    """The lane's bits (``as_uint``, with the sign bit or without) compared as an integer: of the
    two, the one with the smaller tolerance that fails the driver's bits."""
    everything = (1 << scalar(name).bits) - 1
    found = []
    for mask in (everything, everything >> 1):
        spans = _bit_intervals(check, name, mask)
        hit = _around(min(a for a, _ in spans), max(b for _, b in spans), None if actual is None else actual & mask)
        if hit is not None:
            expect, tolerance = hit
            found.append((tolerance, Encoding("bits", BITS_TYPE[name], mask, f"{expect:#x}",
                                              str(tolerance) if tolerance else "")))
    return min(found, key=lambda f: f[0])[1] if found else None


def encode(check: dict, name: str, actual: int | None) -> Encoding | str:
    """How the tester checks one lane (a triage.repro_script.checks entry) of scalar type
    ``name`` whose driver gave the bits ``actual`` (None: a lane the driver got right, which only
    has to pass); or why it cannot (one line)."""
    found = _by_value(check, name, actual) or (_by_bits(check, name, actual) if scalar(name).is_float else None)
    if found is not None:
        return found
    allowed = check["allowed_text"] + (["any NaN"] if check["any_nan"] else []) + [f"[{a}, {b}]" for a, b, *_ in
                                                                                  check["ranges"]]
    shown = "?" if actual is None else f"{actual:#x}"
    return (f"{check['buffer']} lane {check['lane']}: the driver's bits {shown} lie within every tolerance that "
            f"holds what the specification allows ({' or '.join(allowed)})")
