"""Edge-biased values of every scalar type, as bit patterns.

Examples from these strategies shrink toward the first entries of the fixed edge lists (zero,
one, the type limits) and then toward small bit patterns. The classes are where conversions and
rounding go wrong most (OpenCL C 3.0.19 §6.4.3, §7.1): ties at every magnitude and one ulp either
side, ±0, subnormals, NaNs with payloads (quiet and signalling, both signs), ±inf, each type's
limits and neighbours, the powers
2^7..2^64 and their neighbours (where integer<->float conversions change behaviour), float ties
of the narrower float formats, and uniform bit patterns.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

from lang.types import SCALARS, Scalar, scalar
from oracles import input_class

POWERS = (7, 8, 15, 16, 23, 24, 25, 31, 32, 52, 53, 54, 63, 64)


def _float_bits(values: list[float], s: Scalar) -> list[int]:
    with np.errstate(all="ignore"):
        arr = np.array(values, dtype=np.float64).astype(s.dtype)
    arr = arr[np.isfinite(arr) | np.isinf(arr)]
    return [int(b) for b in arr.view(s.bits_dtype)]


def _neighbours(bits: list[int], s: Scalar) -> list[int]:
    """Each pattern and the patterns one ulp above and below (in magnitude order)."""
    out = []
    top = (1 << s.bits) - 1
    for b in bits:
        out.extend(x for x in (b - 1, b, b + 1) if 0 <= x <= top)
    return out


@lru_cache(maxsize=None)
def edge_bits(name: str) -> tuple[int, ...]:
    """The fixed edge list of one scalar type, simplest first (what shrinking moves toward)."""
    s = scalar(name)
    if s.is_int:
        vals = [0, 1, -1, 2, s.max, s.min, s.max - 1, s.min + 1]
        for p in POWERS:
            for v in (1 << p, -(1 << p)):
                vals.extend((v - 1, v, v + 1))
        # integers that are ties when converted to float/double/half: m.5 ulp patterns
        for mant in (11, 24, 53):
            for shift in (1, 2, 8, 40 - mant if mant < 40 else 3):
                base = ((1 << mant) | 1) << shift | (1 << (shift - 1))
                vals.extend((base - 1, base, base + 1, -base))
        mask = (1 << s.bits) - 1
        seen, out = set(), []
        for v in vals:
            if s.min <= v <= s.max:
                b = v & mask
                if b not in seen:
                    seen.add(b)
                    out.append(b)
        return tuple(out)
    # floating point
    tiny = 2.0 ** (s.min_exp - s.mant_bits + 1)  # least subnormal
    fmin = 2.0**s.min_exp
    fmax = float(np.finfo(s.dtype).max)
    base = [0.0, 1.0, 0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, 0.25, 0.75, 4.5, 5.5, 1e3 + 0.5,
            fmax, fmin, tiny, fmin - tiny, 2 * tiny, 3 * tiny]
    for p in POWERS:
        for v in (2.0**p, -(2.0**p)):
            base.extend((v - 1, v, v + 1, v + 0.5, v - 0.5))
    for p in range(0, s.mant_bits + 1):  # ties k + 0.5 at every magnitude up to the precision
        base.extend((2.0**p + 0.5, 2.0**p + 1.5, -(2.0**p) - 0.5))
    bits = _float_bits(base + [-v for v in base], s)
    bits = _neighbours(bits, s)
    exp_mask = ((1 << (s.bits - s.mant_bits)) - 1) << (s.mant_bits - 1)
    sign = 1 << (s.bits - 1)
    quiet = 1 << (s.mant_bits - 2)
    inf = exp_mask
    specials = [inf, inf | sign, inf | quiet, inf | quiet | sign, inf | quiet | 1, inf | 1, inf | sign | 5]
    # ties of narrower formats (for double->float, float->half): midpoints between neighbours
    narrower = [t for t in SCALARS.values() if t.is_float and t.bits < s.bits]
    mids = []
    for t in narrower:
        with np.errstate(all="ignore"):
            grid = np.array([1.0, 1.5, 3.0, 2.0**t.min_exp, 2.0 ** (t.min_exp - 3), 65504.0, 2.0**20 + 1],
                            dtype=np.float64).astype(t.dtype)
            up = np.nextafter(grid, np.array(np.inf, t.dtype))
        mid = (grid.astype(np.float64) + up.astype(np.float64)) / 2
        mids.extend(list(mid) + [float(-m) for m in mid])
    mid_bits = _neighbours(_float_bits(mids, s), s)
    seen, out = set(), []
    for b in bits[:6] + specials + bits[6:] + mid_bits:  # 0, 1, 0.5 ... first: what shrinking aims at
        if b not in seen:
            seen.add(b)
            out.append(b)
    return tuple(out)


@lru_cache(maxsize=None)
def edge_classes(name: str) -> dict[str, tuple[int, ...]]:
    """The edge list split by input class (zero, inf, nan, subnormal, tie, ...), in list order."""
    s = scalar(name)
    bits = np.array(edge_bits(name), dtype=np.uint64).astype(s.bits_dtype)
    classes: dict[str, list[int]] = {}
    for b, c in zip(edge_bits(name), input_class(bits.view(s.dtype), name)):
        classes.setdefault(str(c), []).append(b)
    return {c: tuple(v) for c, v in classes.items()}


@lru_cache(maxsize=None)
def values(name: str) -> st.SearchStrategy[int]:
    """Bit patterns of the scalar type ``name``: an edge value of a class chosen first (so that
    rare classes such as infinities are as likely as common ones), or uniform bits.

    Examples shrink toward the first class (zero) and its simplest values."""
    s = scalar(name)
    ordered = sorted(edge_classes(name).items(), key=lambda kv: edge_bits(name).index(kv[1][0]))
    return st.one_of(
        *[st.sampled_from(v) for _, v in ordered],
        st.integers(0, (1 << s.bits) - 1),
    )


def pools(name: str, max_size: int) -> st.SearchStrategy[tuple[int, ...]]:
    """A pool of edge values for one input buffer; shrinks toward a single simple value."""
    return st.lists(values(name), min_size=1, max_size=max_size).map(tuple)


# ---- pools the corner sweeps need (lang.corners; fuzz.strategies.sweeps) --------------------------


def _float_midpoints(k: int, mant: int) -> list[int]:
    """Integers in [2^k, 2^(k+1)) at the rounding midpoints of a float format with ``mant``
    significand bits (24: float, 53: double): m * 2^(k+1-mant) + 2^(k-mant) for an even and an
    odd m (ties-to-even goes down from one, up from the other)."""
    step = 1 << (k + 1 - mant)
    return [(1 << k) + m * step + step // 2 for m in (0, 1, (1 << (mant - 2)) + 5, (1 << (mant - 1)) - 2)]


@lru_cache(maxsize=None)
def midpoint_integers(name: str) -> tuple[int, ...]:
    """64-bit integers above 2^53 at and one next to the rounding midpoints of float and double
    (OpenCL C 3.0 §6.4.3: a long or ulong converted to float or double rounds; one converted to
    float through double rounds twice, which only shows where the value sits next to a float
    midpoint and the double rounding lands on it), as bit patterns of ``name`` (long, ulong),
    negatives included for long."""
    s = scalar(name)
    assert s.is_int and s.bits == 64
    out = []
    for k in range(53, 64 if not s.signed else 63):
        for mant in (24, 53):
            for mid in _float_midpoints(k, mant):
                out.extend((mid - 1, mid, mid + 1))
    if s.signed:
        out += [-v for v in out]
    mask = (1 << 64) - 1
    return tuple(dict.fromkeys(v & mask for v in out if s.min <= v <= s.max and abs(v) > 2**53))


@lru_cache(maxsize=None)
def mixed_magnitudes(name: str) -> tuple[int, ...]:
    """Integers of every magnitude 2^k (k from 0 to N-2) with low bits set, both signs for a signed
    type, as bit patterns: paired with each other their products fall on both sides of the type's
    range, negative ones in range included (mad_sat, mul_hi, mad_hi; Table 13)."""
    s = scalar(name)
    out = []
    for k in range(0, s.bits - 1):
        v = (1 << k) | ((1 << k) - 1) // 3  # 2^k with a pattern of lower bits
        out.append(v)
        if s.signed:
            out.append(-v)
    mask = (1 << s.bits) - 1
    return tuple(dict.fromkeys(v & mask for v in out))
