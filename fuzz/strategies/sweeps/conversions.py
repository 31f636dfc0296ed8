"""The conversions area's corner sweep (lang.corners.conversions): every explicit conversion with
corners (float to integer, integer to a narrower significand, integer to a narrower integer,
floating to another floating type), with and without _sat (integer destinations only, §6.4.3.3)
and with each rounding mode, of operands in every class (:func:`conversion_sources`; long and ulong
at and next to the float and double rounding midpoints above 2^53,
:func:`fuzz.strategies.values.midpoint_integers`; a floating operand at and next to the ties,
overflow and underflow edges of each narrower floating type,
:func:`float_conversion_representatives`), and long/ulong to float through double; then
arithmetic, casts and as_ (:mod:`fuzz.strategies.sweeps.operators`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import CLASSES, Sweep, bits_of, by_pass, float_representatives, sweep_program
from fuzz.strategies.sweeps.operators import conversion_operator_statements
from fuzz.strategies.values import midpoint_integers
from lang.corners import INTS
from lang.corners import conversions as conversion_corners
from lang.ir import Load, Op, Program, Store
from lang.ops import ROUNDINGS
from lang.policy import Policy
from lang.types import Type, scalar


def _float_magnitudes(src: str, dst: str) -> dict[str, list[float]]:
    """Magnitudes of ``src`` in each kind (:data:`lang.corners.conversions.NARROWING_KINDS` or
    ``WIDENING_KINDS`` by the pair) against the floating type ``dst``, built from the two formats'
    parameters: ties are halfway between two ``dst`` numbers, their neighbours one ``src`` ulp off
    (``nextafter`` in ``src``), the overflow edges MAX and MAX + half its ulp."""
    s, d = scalar(src), scalar(dst)
    sinfo, dinfo = np.finfo(s.dtype), np.finfo(d.dtype)
    if s.bits < d.bits:
        return {"0": [0.0], "inf": [math.inf], "sub": [float(sinfo.smallest_subnormal), float(sinfo.tiny - sinfo.smallest_subnormal)],
                "normal": [1.0, float(sinfo.tiny), float(sinfo.max)]}

    def step(v: float, toward: float) -> float:  # the next number of src
        return float(np.nextafter(s.dtype.type(v), s.dtype.type(toward)))

    ulp1, least, tiny, top = 2.0 ** (1 - d.mant_bits), float(dinfo.smallest_subnormal), float(dinfo.tiny), float(dinfo.max)
    top_half = 2.0 ** (dinfo.maxexp - d.mant_bits - 1)  # half the ulp of MAX
    tie, sub_tie = 1 + ulp1 / 2, 1.5 * least
    return {
        "0": [0.0], "inf": [math.inf],
        "exact": [1.0, 1 + ulp1, top, tiny], "tie": [tie, 1 + 1.5 * ulp1, top - top_half],
        "near-tie": [step(tie, 2), step(tie, 0)], "other": [1 + ulp1 / 4, 1 + 0.75 * ulp1],
        "sub-exact": [least, 3 * least, tiny - least], "sub-tie": [sub_tie, 2.5 * least, tiny - least / 2],
        "sub-near-tie": [step(sub_tie, 1), step(sub_tie, 0)], "sub-other": [1.25 * least, tiny - least / 4],
        "below-half-least": [least / 4, step(least / 2, 0), float(sinfo.smallest_subnormal)],
        "half-least": [least / 2], "above-half-least": [0.75 * least, step(least, 0)],
        "above-max": [step(top, math.inf), top + top_half / 2], "max-tie": [top + top_half],
        "overflow": [step(top + top_half, math.inf), top + 2 * top_half, float(sinfo.max)],
    }


@lru_cache(maxsize=None)
def float_conversion_representatives(src: str, dst: str) -> dict[str, tuple[int, ...]]:
    """Bit patterns of ``src`` in each class of :func:`lang.corners.conversions.classes` against
    the floating type ``dst`` (both signs, NaNs quiet and signalling); each is checked to lie in
    its class."""
    s = scalar(src)
    out = {"nan": float_representatives(src)["nan"]}
    for kind, magnitudes in _float_magnitudes(src, dst).items():
        for sign in "+-":
            values = np.array([m if sign == "+" else -m for m in magnitudes], np.float64)
            bits = values.astype(s.dtype).view(s.bits_dtype)
            assert np.array_equal(bits.view(s.dtype).astype(np.float64), values), (src, dst, kind)  # exact in src
            assert all(conversion_corners.value_classes(bits[i:i + 1].view(s.dtype), src, dst) == {sign + kind}
                       for i in range(len(bits))), (src, dst, kind)
            out[sign + kind] = tuple(int(b) for b in bits)
    return out


@lru_cache(maxsize=None)
def conversion_sources(src: str) -> tuple[int, ...]:
    """Bit patterns of ``src`` in every class of :mod:`lang.corners.conversions` against every
    destination: for a float, NaN, the infinities, ties and values beyond each integer range, and
    every class against each other floating type (:func:`float_conversion_representatives`);
    for an integer, its limits and the values at, one next to and two past the rounding
    midpoints of half, float and double (64-bit ones: :func:`midpoint_integers`)."""
    s = scalar(src)
    if s.is_float:
        values = [math.nan, math.inf, -math.inf, 0.5, -2.5, 3.0, 100.5, -0.0, -1.0]
        for bits in (8, 16, 32, 64):
            values += [1.5 * 2.0 ** (bits - 1), -1.5 * 2.0 ** (bits - 1), 1.5 * 2.0**bits]
        with np.errstate(all="ignore"):
            own = [int(b) for b in np.array(values).astype(s.dtype).view(s.bits_dtype)]
        others = [b for dst in conversion_corners.FLOAT_TYPES if conversion_corners.classes(src, dst)
                  for reps in float_conversion_representatives(src, dst).values() for b in reps]
        return tuple(dict.fromkeys(own + others))
    values = [0, 1, s.max, s.min] + [s.max >> 1, s.min >> 1]
    for mant in (11, 24, 53):
        top = s.bits - 1 if s.signed else s.bits
        for k in sorted({*range(mant, min(top, mant + 3)), top - 1} - {mant - 1}):
            if k < mant or k >= top:
                continue
            step = 1 << (k + 1 - mant)
            for mid in ((1 << k) + step // 2, (1 << k) + step + step // 2):
                values += [mid - 1, mid, mid + 1, mid + 2]
    if s.bits == 64:
        values += [v - (1 << 64) if s.signed and v >> 63 else v for v in midpoint_integers(src)]
    values += [-v for v in values if s.signed and -v >= s.min]
    return tuple(dict.fromkeys(bits_of(v, src) for v in values if s.min <= v <= s.max))


def _convert_statement(src: str, dst: str, form: str, through_double: bool = False, width: int = 4):
    def build(s: Sweep) -> Store:
        parts = form.split(":")[1:]
        attrs = tuple(sorted((("sat", True),) * ("sat" in parts) + tuple(("rounding", p) for p in parts
                                                                         if p in ROUNDINGS)))
        x: Load | Op = s.load(Type(src, width), conversion_sources(src))
        if through_double:
            x = Op("convert", (x,), Type("double", width), attrs)
        op = Op("convert", (x,), Type(dst, width), attrs)
        return Store(s.output(op.type), op)
    return build


def conversion_sweep(caps: Caps, policy: Policy) -> list[tuple[int, Program]]:
    types = [t for t in ("half", "float", "double", *INTS) if (t != "double" or caps.fp64)
             and (t != "half" or caps.fp16) and (t not in ("long", "ulong") or caps.int64)]
    statements = [_convert_statement(src, dst, form) for src in types for dst in types
                  if conversion_corners.classes(src, dst) for form in conversion_corners.forms(src, dst)]
    if caps.fp64 and caps.int64:  # long -> double -> float rounds twice (a value next to a float midpoint)
        statements += [_convert_statement(src, "float", f"to=float{r}", True, 1)
                       for src in ("long", "ulong") for r in ("", *(f":{x}" for x in ROUNDINGS))]
    tagged = [(CLASSES, b) for b in statements] + conversion_operator_statements(caps)
    return [(k, sweep_program(c, policy.math_global_size, "conversions")) for k, c in by_pass(tagged, policy.statements)]
