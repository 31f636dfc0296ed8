"""The corners of explicit conversions (OpenCL C 3.0 §6.4.3), a part of the corner table
(:mod:`lang.corners`): for each source type, destination, ``_sat`` and rounding mode, where the
source value lies against the destination.

* float to integer (§6.4.3.3 out-of-range behaviour and saturation, §6.4.3.2 rounding): ``nan``,
  ``+inf``, ``-inf``, ``>max``, ``<min`` (beyond the destination's range), ``tie`` (a
  half-integer in range: where the rounding modes differ), ``in`` (anything else in range);
* integer to float (§6.4.3.2: rounding to a narrower significand): ``exact`` (representable),
  ``mid`` (exactly halfway between two floats of the destination: where ties-to-even decides),
  ``near-mid`` (one away from a midpoint: where a conversion that rounds twice, through double,
  shows), ``other``;
* integer to integer: ``>max``, ``<min``, ``in`` (the saturation edges of Table 13's _sat
  conversions), only where the destination cannot hold every source value; rounding does not
  apply, so these have no rounding mode;
* floating to a narrower floating type (double to float or half, float to half: §6.4.3.2 "shall
  conform to IEEE-754 rounding rules", §7.4 "must be correctly rounded", footnote [17] for
  overflow), per sign (:data:`NARROWING_KINDS`): ``0``, ``inf``; in the destination's normal
  range ``exact``, ``tie`` (halfway between two destination numbers: where the modes differ
  most), ``near-tie`` (one source ulp from a tie), ``other``; the same four in its subnormal
  range (``sub-exact`` ... : gradual underflow, IEEE 754-2008 §7.5); below its least subnormal
  ``below-half-least``, ``half-least`` (the tie between 0 and the least subnormal),
  ``above-half-least`` (to 0 or to the least subnormal by mode); beyond its MAX ``above-max``
  (below MAX + half an ulp: rte gives MAX), ``max-tie`` (exactly there: rte gives inf, MAX being
  odd), ``overflow`` (past it; to inf or MAX by mode and sign, footnote [17]); and NaN;
* floating to a wider floating type (exact, §7.1: "lossless"), per sign (:data:`WIDENING_KINDS`):
  ``0``, ``inf``, ``sub`` (a source subnormal, normal in the destination), ``normal``; and NaN.
  ``_sat`` is not for floating destinations (§6.4.3.3), so these have no ``sat`` form.

Keys read ``to=int:sat:rte:x=tie`` (``to=float:rtz:x=mid``, ``to=half:rtp:x=-half-least``; no
``sat``/rounding part when the conversion has none). A conversion to its own type has no effect
(§6.4.3.1) and no corners.
"""

from __future__ import annotations

import numpy as np

from lang.ops import ROUNDINGS
from lang.types import Scalar, scalar

FLOAT_TYPES = ("half", "float", "double")
INT_TYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")
MANTISSA = {"half": 11, "float": 24, "double": 53}

TO_INT = ("nan", "+inf", "-inf", ">max", "<min", "tie", "in")
TO_FLOAT = ("exact", "mid", "near-mid", "other")
INT_TO_INT = (">max", "<min", "in")
POSITIONS = ("exact", "tie", "near-tie", "other")
NARROWING_KINDS: tuple[str, ...] = (("0", "inf") + POSITIONS + tuple(f"sub-{p}" for p in POSITIONS)
                                    + ("below-half-least", "half-least", "above-half-least",
                                       "above-max", "max-tie", "overflow"))
"""Where a finite or infinite value lies against a narrower floating destination (module docstring)."""
WIDENING_KINDS: tuple[str, ...] = ("0", "inf", "sub", "normal")
"""Where a value lies in its own format, converted to a wider floating type."""


def _signed(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """NaN, then each kind with each sign (the layout of :data:`lang.corners.FLOAT_CLASSES`)."""
    return ("nan",) + tuple(f"{s}{k}" for k in kinds for s in "+-")


def _range(name: str) -> tuple[int, int]:
    s = scalar(name)
    return ((1 << (s.bits - 1)) - 1, -(1 << (s.bits - 1))) if s.signed else ((1 << s.bits) - 1, 0)


def classes(src: str, dst: str) -> tuple[str, ...]:
    """The classes a ``src`` value can take against ``dst`` (() when the pair has no corners)."""
    s, d = scalar(src), scalar(dst)
    if s.is_float and d.is_float:
        return () if s.bits == d.bits else _signed(NARROWING_KINDS if s.bits > d.bits else WIDENING_KINDS)
    if s.is_float and d.is_int:
        top = float(np.finfo(s.dtype).max)  # half's 65504 never exceeds an int: no >max corner there
        dmax, dmin = _range(dst)
        return tuple(c for c in TO_INT if (c != ">max" or top > dmax) and (c != "<min" or -top < dmin))
    if s.is_int and d.is_float:
        return TO_FLOAT if s.bits > MANTISSA[dst] else ()
    if s.is_int and d.is_int:
        (smax, smin), (dmax, dmin) = _range(src), _range(dst)
        return tuple(c for c, beyond in ((">max", smax > dmax), ("<min", smin < dmin), ("in", True)) if beyond) \
            if (smax > dmax or smin < dmin) else ()
    return ()


def forms(src: str, dst: str) -> list[str]:
    """The ``to=...`` prefixes of one pair: with and without _sat (integer destinations), with
    each rounding mode and none (a float operand or destination)."""
    d = scalar(dst)
    sats = ("", ":sat") if d.is_int else ("",)
    rounds = ("",) if scalar(src).is_int and d.is_int else ("",) + tuple(f":{r}" for r in ROUNDINGS)
    return [f"to={dst}{sat}{rnd}" for sat in sats for rnd in rounds]


def keys(src: str) -> list[str]:
    """Every conversion corner key of one source type."""
    return [f"{form}:x={c}" for dst in FLOAT_TYPES + INT_TYPES for form in forms(src, dst) for c in classes(src, dst)]


def form_of(attrs: dict, src: str, dst: str) -> str:
    """The ``to=...`` prefix of one convert operation (its attributes)."""
    sat = ":sat" if attrs.get("sat") else ""
    rounds = attrs.get("rounding") and not (scalar(src).is_int and scalar(dst).is_int)
    return f"to={dst}{sat}{':' + attrs['rounding'] if rounds else ''}"


def dst_of(key: str) -> str:
    """The destination type a key names."""
    return key.split(":", 1)[0][len("to="):]


def value_classes(values: np.ndarray, src: str, dst: str) -> set[str]:
    """The classes the ``src`` values (typed lanes) take against ``dst``."""
    names = classes(src, dst)
    if not names:
        return set()
    s, d = scalar(src), scalar(dst)
    if s.is_float:
        with np.errstate(all="ignore"):
            x = values.astype(np.float64)  # exact for half, float and double
        index = _float_to_float(x, s, d) if d.is_float else _float_to_int(x, dst, names)
    elif d.is_int:
        index = _int_to_int(values, src, dst, names)
    else:
        index = _to_float(values, s.signed, MANTISSA[dst])
    return {names[i] for i in np.flatnonzero(np.bincount(np.asarray(index).ravel(), minlength=len(names)))}


def _float_to_int(x: np.ndarray, dst: str, names: tuple[str, ...]) -> np.ndarray:
    """Index into ``names`` (:data:`TO_INT`, less the edges ``dst`` cannot have) of each value."""
    dmax, dmin = _range(dst)
    with np.errstate(all="ignore"):
        beyond_max = (x > float(dmax)) | (x >= float(dmax + 1))
        index = np.select([np.isnan(x), x == np.inf, x == -np.inf, beyond_max, x < float(dmin),
                           np.abs(x) - np.floor(np.abs(x)) == 0.5], [0, 1, 2, 3, 4, 5], default=6)
    return np.array([names.index(c) if c in names else 0 for c in TO_INT])[index]  # (never selected)


def _int_to_int(values: np.ndarray, src: str, dst: str, names: tuple[str, ...]) -> np.ndarray:
    """Index into ``names`` (:data:`INT_TO_INT`, less the edges ``dst`` cannot have) of each value."""
    (smax, smin), (dmax, dmin) = _range(src), _range(dst)
    signed = scalar(src).signed
    x = values.astype(np.int64 if signed else np.uint64)
    above = (x > dmax) if smax > dmax else np.zeros(x.shape, bool)
    below = (x < 0) if dmin == 0 and signed else (x < dmin) if smin < dmin else np.zeros(x.shape, bool)
    at = {c: i for i, c in enumerate(names)}
    return np.select([above, below], [at.get(">max", 0), at.get("<min", 0)], default=at["in"])


def _float_to_float(x: np.ndarray, s: Scalar, d: Scalar) -> np.ndarray:
    """Index into :func:`classes` of each value (float64, exact) of ``s`` against the floating
    type ``d``. Exact in float64: the spacing of ``d`` and of ``s`` at |x| are powers of two, and
    ``fmod`` is exact, so ties and their neighbours are found without rounding."""
    a = np.abs(x)
    sinfo, dinfo = np.finfo(s.dtype), np.finfo(d.dtype)
    with np.errstate(all="ignore"):
        if s.bits < d.bits:
            kind = np.select([a == 0, np.isinf(a), a < float(sinfo.tiny)], [0, 1, 2], default=3)
        else:
            least, tiny, top = float(dinfo.smallest_subnormal), float(dinfo.tiny), float(dinfo.max)
            top_tie = top + 2.0 ** (dinfo.maxexp - d.mant_bits - 1)  # MAX + half its ulp
            lead = np.frexp(a)[1] - 1  # 2^lead <= |x| < 2^(lead + 1)
            spacing = np.ldexp(1.0, np.maximum(lead, dinfo.minexp) - (d.mant_bits - 1))
            own = np.ldexp(1.0, np.maximum(lead, sinfo.minexp) - (s.mant_bits - 1))
            r = np.fmod(a, spacing)
            position = np.select([r == 0, r == spacing / 2, np.abs(r - spacing / 2) == own], [0, 1, 2], default=3)
            at = NARROWING_KINDS.index
            kind = np.select([a == 0, np.isinf(a), a > top_tie, a == top_tie, a > top, a < least / 2,
                              a == least / 2, a < least, a < tiny],
                             [at("0"), at("inf"), at("overflow"), at("max-tie"), at("above-max"),
                              at("below-half-least"), at("half-least"), at("above-half-least"),
                              at("sub-exact") + position], default=at("exact") + position)
    return np.where(np.isnan(x), 0, 1 + 2 * kind + np.signbit(x))


def _to_float(values: np.ndarray, signed: bool, mant: int) -> np.ndarray:
    """TO_FLOAT index of each integer (exactly, in 64-bit unsigned arithmetic on |x|)."""
    if signed:
        v = values.astype(np.int64)
        mag = np.where(v < 0, (~v.view(np.uint64)) + np.uint64(1), v.view(np.uint64))
    else:
        mag = values.astype(np.uint64)
    length = np.zeros(mag.shape, np.int64)
    for k in range(64):  # bit length of |x|
        length = np.where(mag >> np.uint64(k) != 0, k + 1, length)
    e = np.maximum(length - mant, 0).astype(np.uint64)
    unit = np.left_shift(np.uint64(1), e)
    r = mag & (unit - np.uint64(1))
    half = unit >> np.uint64(1)
    exact = (e == 0) | (r == 0)
    mid = ~exact & (r == half)
    near = ~exact & ~mid & ((r == half + np.uint64(1)) | (r + np.uint64(1) == half))
    return np.select([exact, mid, near], [0, 1, 2], default=3)
