"""Image addressing: the texel (and array layer) a coordinate selects along each axis, under each
sampler's addressing and filter mode (OpenCL C 3.0 §8.2 Table 70, §8.4), exactly or, where the
spec leaves precision undefined, as every texel the formulas select near the coordinate.
"""

from __future__ import annotations

import numpy as np

from lang.ir import Sampler

DELTA = 1.0 / 16
"""Texels of uncertainty allowed in a computed coordinate where the spec leaves precision
undefined: 4 bits of sub-texel precision, the least that Vulkan allows (subTexelPrecisionBits);
OpenCL states none."""

INT_LIMIT = 2.0**31
"""Coordinates whose floor is outside int: the formulas' ``(int)floor(u)`` is undefined (C99 §6.3.1.4)."""
FLOAT_EXACT = 2**24
"""Integer coordinates read through a sampler are judged up to this magnitude: §8.2's formulas
work on (u, v, w) as floating-point values, and a larger int loses bits on the way (INT_MAX
becomes 2^31, whose ``(int)floor`` is undefined; PoCL, rusticl and Oclgrind then read texel 0
under CLAMP_TO_EDGE)."""


def address(i: np.ndarray, size: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Table 70 on integer texel coordinates: (index, undefined). CLAMP may give -1 or size (the
    border); NONE leaves an index outside [0, size) undefined."""
    if mode == "clamp_to_edge":
        return np.clip(i, 0, size - 1), np.zeros(i.shape, bool)
    if mode == "clamp":
        return np.clip(i, -1, size), np.zeros(i.shape, bool)
    return i, (i < 0) | (i >= size)


def int_floor(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int)floor(u) and where it is undefined (NaN, INF, outside int)."""
    with np.errstate(invalid="ignore"):
        f = np.floor(u)
        bad = ~np.isfinite(f) | (np.abs(f) >= INT_LIMIT)
    return np.where(bad, 0, f).astype(np.int64), bad


def _wrapped(s: np.ndarray, size: int, mode: str) -> np.ndarray:
    """The unnormalized coordinate u of REPEAT, ``(s - floor(s)) * w_t``, or of MIRRORED_REPEAT,
    ``|s - 2 rint(0.5 s)| * w_t`` (§8.2; rint ties to even), from normalized ``s``."""
    if mode == "repeat":
        return (s - np.floor(s)) * size
    return np.abs(s - 2 * np.rint(0.5 * s)) * size


def _nearest(u: np.ndarray, size: int, sampler: Sampler) -> tuple[np.ndarray, np.ndarray]:
    """The texel NEAREST selects along one axis for unnormalized ``u`` (or, for REPEAT and
    MIRRORED_REPEAT, normalized ``s``): (index, undefined)."""
    mode = sampler.addressing
    if mode == "repeat":  # i = (int)floor(u); if (i > w_t - 1) i -= w_t
        i, bad = int_floor(_wrapped(u, size, mode))
        return np.where(i > size - 1, i - size, i), bad
    if mode == "mirrored_repeat":  # i = min((int)floor(u), w_t - 1)
        i, bad = int_floor(_wrapped(u, size, mode))
        return np.minimum(i, size - 1), bad
    i, bad = int_floor(u)
    i, outside = address(i, size, mode)
    return i, bad | outside


def _linear(u: np.ndarray, size: int, sampler: Sampler) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two texels LINEAR blends along one axis: (i0, i1, undefined)."""
    mode = sampler.addressing
    if mode in ("repeat", "mirrored_repeat"):
        i0, bad = int_floor(_wrapped(u, size, mode) - 0.5)
        i1 = i0 + 1
        if mode == "repeat":
            return np.where(i0 < 0, i0 + size, i0), np.where(i1 > size - 1, i1 - size, i1), bad
        return np.maximum(i0, 0), np.minimum(i1, size - 1), bad
    i0, bad = int_floor(u - 0.5)
    a0, out0 = address(i0, size, mode)
    a1, out1 = address(i0 + 1, size, mode)
    return a0, a1, bad | out0 | out1


def array_layer(w: np.ndarray, count: int, sampled: bool) -> tuple[np.ndarray, np.ndarray]:
    """The array layer (§8.4): clamp(rint(w), 0, count - 1) through a sampler (rint ties to even,
    numpy's rint), else w itself, undefined outside 0 .. count - 1. A layer coordinate beyond
    int is not judged: PoCL, rusticl and Oclgrind all convert it to an integer before clamping,
    and the spec's own addressing formulas convert coordinates with ``(int)``."""
    if not sampled:
        w = w.astype(np.int64)
        return w, (w < 0) | (w >= count)
    limit = FLOAT_EXACT if w.dtype.kind == "i" else INT_LIMIT  # like the axes' coordinates
    with np.errstate(invalid="ignore"):
        w = w.astype(np.float64)
        bad = ~np.isfinite(w) | (np.abs(w) >= limit)
        layer = np.clip(np.rint(np.where(bad, 0, w)), 0, count - 1)
    return layer.astype(np.int64), bad


def axis_candidates(u: np.ndarray, size: int, sampler: Sampler) -> tuple[np.ndarray, np.ndarray]:
    """Tolerance class: the texel indices along one axis the formulas select for coordinates within
    the uncertainty of ``u`` (a float coordinate as given: normalized or not), shape (n, K), and
    the lanes left undefined."""
    with np.errstate(invalid="ignore", over="ignore"):
        s = u.astype(np.float64)
        finite = np.isfinite(s)
        texels = np.abs(s) * (size if sampler.normalized else 1)
        spread = DELTA + texels * 2.0**-22  # in texels
        bad = ~finite | (spread >= 0.5) | (texels >= INT_LIMIT)
        s = np.where(bad, 0.0, s)
        step = spread / size if sampler.normalized else spread
        unnormalized = sampler.addressing not in ("repeat", "mirrored_repeat") and sampler.normalized
        cols = []
        for k in (-1, 0, 1):
            point = s + k * step
            if unnormalized:
                point = point * size
            if sampler.filter == "nearest":
                i, b = _nearest(point, size, sampler)
                cols.append(i)
            else:
                i0, i1, b = _linear(point, size, sampler)
                cols.extend([i0, i1])
            bad = bad | b
    return distinct(np.stack(cols, axis=1)), bad


def distinct(cand: np.ndarray) -> np.ndarray:
    """Each row of ``cand`` (n, K) with its distinct values first, in the order they first appear,
    then its first value repeated; as few columns as the row with the most distinct values needs.
    A lane's set of candidates is unchanged, and its first one too (a read's reference): the
    formulas at three points along an axis select two or three texels, not six, and the texels of a
    read are every combination of one candidate per axis (``expect_read``), so this cuts LINEAR's
    combinations from 36 to 9 in 2D and from 216 to 27 in 3D."""
    n, k = cand.shape
    cols = list(np.ascontiguousarray(cand.T))
    new = np.ones((n, k), bool)  # a value no column before it holds
    for j in range(1, k):
        for i in range(j):
            new[:, j] &= cols[i] != cols[j]
    place = np.cumsum(new, axis=1) - 1  # its column in the result
    out = np.repeat(cand[:, :1], int(place[:, -1].max()) + 1 if n else 1, axis=1)
    r, c = np.nonzero(new)
    out[r, place[r, c]] = cand[r, c]
    return out
