"""Image reads: the spec's addressing, filtering, border-colour and channel-conversion rules.

A read returns a 4-vector (§6.15.15.3-6). The oracle first turns every texel of the image into
the vector a read of it returns (:func:`texel_table`: the channel order's mapping with 0 and 1
for missing channels, SPIR-V env §7.6 / OpenCL C §6.15.15.7; the channel conversion of §8.3),
with one extra row for the border colour of the order (§6.15.15.1.1). Then, per work-item, the
coordinate selects rows of that table:

*Exact verdicts* (rule ``image.texel`` and the conversion rules): a sampler-less read (SPIR-V
env §7.7: NEAREST, unnormalized, ADDRESS_NONE) or a sampler with unnormalized coordinates,
NEAREST and CLAMP_TO_EDGE, CLAMP or NONE, for which "the location of the image element ... will
be computed without any loss of precision" (end of §8.2): ``i = address_mode((int)floor(u))``
(Table 70), the array layer ``clamp(rint(w), 0, d_t - 1)`` with ties to even (§8.4). The
texel's value is then exact bits, except normalized integer data: within 1.5 ulp of ``c/255``
etc. with exact endpoints (§8.3.1.1-2, an interval in :attr:`Expectation.ranges`), and FLOAT
data: a NaN may be any NaN, and a sampled read may flush a denormal (SPIR-V env §7.7).

*Tolerance verdicts* (severity ``tolerance``, kind ``imprecise-result``): every other sampler
(normalized coordinates, LINEAR, REPEAT, MIRRORED_REPEAT), whose "relative error or precision
... [is] not defined by this revision" (end of §8.2). The spec's formulas are evaluated at the
exact coordinate and at ``±DELTA`` texels around it (plus the float32 rounding of
``s * w_t``, 2^-22 relative): with NEAREST the read must return one of the texels selected
there (alternatives; where every candidate reads alike, as a missing channel does, the lane keeps
its exact rule); with LINEAR the result is a weighted mean with weights ``frac(u - 0.5)``
in [0, 1] (§8.2), so it lies within the hull of the texels selected there, widened by
``2 * axes + 1`` ulp for the arithmetic of the weighted sum (and to 0 where the device may flush
denormal results).

*Never judged* (DIGEST §11.1): NaN or infinite coordinates (§8.2), coordinates whose floor does
not fit an int (the formulas convert with ``(int)``), texels outside the image under
ADDRESS_NONE (Table 70: "the caller guarantees..."), sampler-less layers outside the array
(§8.4), LINEAR over an INF or NaN texel of float data (§8.2), and tolerance lanes whose
uncertainty spans half a texel or more.
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy as np

from fuzz.images import CHANNEL_TYPES, DIMS, ORDERS
from fuzz.ir import Image, Op, Program, Sampler
from fuzz.types import scalar
from oracles import rules
from oracles.evaluate import REFERENCES
from oracles.expect import Expectation, as_bits

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

RULE_TEXEL = rules.register(
    "image.texel",
    "unnormalized coordinates with NEAREST and CLAMP_TO_EDGE, CLAMP or NONE (and sampler-less reads) select "
    "texel address_mode((int)floor(u)) without loss of precision; the read returns that texel's channels "
    "as the channel order maps them (missing R, G, B are 0, a missing A is 1)",
    "OpenCL C 3.0 §8.2 Table 70 and end of §8.2, §6.15.15.7; SPIR-V env §7.6-7.7",
)
RULE_BORDER = rules.register(
    "image.border",
    "CLK_ADDRESS_CLAMP returns the border colour of the channel order for a texel outside the image: "
    "(0,0,0,1) for R, RG, RGB, LUMINANCE and (0,0,0,0) for the others (integer images: 0 and 1, or the "
    "bits of 1.0f, which the spec's float-only table leaves open)",
    "OpenCL C 3.0 §6.15.15.1.1, §8.2",
)
RULE_LAYER = rules.register(
    "image.layer",
    "a sampled read of an image array selects layer clamp(rint(layer), 0, count - 1), rint rounding ties "
    "to even",
    "OpenCL C 3.0 §8.4",
)
RULE_UNORM = rules.register(
    "image.unorm",
    "normalized integer data read as float or half: c / (2^n - 1), or max(-1, c / (2^(n-1) - 1)) for SNORM, "
    "within 1.5 ulp; 0, the maximum code and (SNORM) the two least codes convert exactly",
    "OpenCL C 3.0 §8.3.1.1-8.3.1.2",
)
RULE_HALF = rules.register(
    "image.half",
    "HALF_FLOAT data read as float or half is converted without loss (a NaN may be any NaN)",
    "OpenCL C 3.0 §8.3.2",
)
RULE_FLOAT = rules.register(
    "image.float",
    "FLOAT data is returned as stored; a NaN may be any NaN and a sampled read may flush a denormal to "
    "zero (a sampler-less read only where the device flushes float denormals)",
    "OpenCL C 3.0 §8.3.3; SPIR-V env §7.7",
)
RULE_INT = rules.register(
    "image.int",
    "SIGNED_INT data is sign-extended by read_imagei, UNSIGNED_INT data zero-extended by read_imageui",
    "OpenCL C 3.0 §8.3.4, §6.15.15.4-5",
)
RULE_NEAREST_TOLERANCE = rules.register(
    "image.nearest.tolerance",
    f"normalized coordinates, REPEAT or MIRRORED_REPEAT with NEAREST: precision undefined; clfuzz accepts "
    f"any texel the §8.2 formulas select within {DELTA:g} texel (+2^-22 relative) of the exact coordinate",
    "OpenCL C 3.0 §8.2 (end: precision not defined)",
    severity="tolerance",
)
RULE_LINEAR_TOLERANCE = rules.register(
    "image.linear.tolerance",
    f"LINEAR: a weighted mean with weights frac(u - 0.5) in [0, 1], so within the least and greatest of the "
    f"texels the formulas select within {DELTA:g} texel of the coordinate, widened by (2 * axes + 1) ulp",
    "OpenCL C 3.0 §8.2 (end: precision not defined)",
    severity="tolerance",
)

_CONVERSION_RULE = {"unorm": RULE_UNORM, "snorm": RULE_UNORM, "half": RULE_HALF, "float": RULE_FLOAT,
                    "sint": RULE_INT, "uint": RULE_INT}


@dataclass
class Table:
    """What a read returns for each texel (rows ``0 .. texels-1``) and for the border colour (row
    ``texels``), per component: ``bits`` (with ``alt`` a second allowed pattern), the interval
    ``lo..hi`` of values (equal to the value where exact; ``ranged`` marks a real interval),
    ``nan`` (any NaN), ``flush`` (may read as ±0), ``special`` (INF or NaN: LINEAR over it is
    undefined) and the rule."""

    result: str  # float, half, int or uint
    bits: np.ndarray
    alt: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    ranged: np.ndarray
    nan: np.ndarray
    flush: np.ndarray
    special: np.ndarray
    rule: np.ndarray


# ---- channel conversions (§8.3) -------------------------------------------------------------------


def norm_interval(codes: np.ndarray, signed: bool, bits: int, result: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalized integer ``codes`` read as ``result`` (float or half), §8.3.1: the correctly
    rounded value of ``c/M`` (``M = 2^bits - 1``; SNORM: ``2^(bits-1) - 1`` and at least -1), and
    the least and greatest ``result`` values ``y`` with ``|y - c/M| <= 1.5 ulp(c/M)`` (§7.4's ulp:
    the gap between the two floats around ``c/M``); the codes the spec pins (0, the maximum, the
    SNORM minimum and minimum + 1) have a one-value interval.

    The test is done in integers: with ``y = m * 2^q`` (``q`` the exponent of y's last bit) and
    ``ulp = 2^(E - p + 1)``, ``|m * M * 2^(q+S) - c * 2^S| <= 3 * M * 2^(E - p + S)`` for a scale
    ``2^S`` that makes every term an integer below 2^63. The reference ``float(c) / M`` rounded
    once more to ``result`` is correctly rounded: binary64 has at least 2p + 2 bits (Figueroa 1995)."""
    f = scalar(result)
    p = f.mant_bits
    M = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    c = codes.astype(np.int64)
    mag = np.minimum(np.abs(c), M)  # SNORM -2^(n-1) reads as -1, like -M
    neg = c < 0
    with np.errstate(all="ignore"):
        ref = (mag.astype(np.float64) / M).astype(f.dtype)
    pinned = (mag == 0) | (mag == M)
    # E: the binade of c/M (c/M is never a power of two unless pinned, and never within 2^-40 of
    # one, so the float64 logarithm decides it), no lower than the least normal exponent.
    E = np.maximum(np.floor(np.log2(np.where(pinned, M, mag) / M)), f.min_exp).astype(np.int64)
    S = p + bits + 8
    rhs = 3 * M * np.left_shift(np.int64(1), E - p + S)
    ref_bits = as_bits(ref).astype(np.int64)
    lo_bits, hi_bits = ref_bits.copy(), ref_bits.copy()
    for d in range(-3, 4):
        cand_bits = ref_bits + d
        cand = cand_bits.astype(f.bits_dtype).view(f.dtype).astype(np.float64)
        _, k = np.frexp(cand)  # cand in [2^(k-1), 2^k)
        q = np.maximum(k - 1, f.min_exp) - p + 1
        with np.errstate(invalid="ignore"):
            m = np.round(np.where(np.isfinite(cand), cand, 0) * np.exp2(-q)).astype(np.int64)
        lhs = np.abs(m * M * np.left_shift(np.int64(1), np.maximum(q + S, 0)) - mag * (np.int64(1) << S))
        ok = (lhs <= rhs) & (cand > 0) & np.isfinite(cand) & (q + S >= 0)
        lo_bits = np.where(ok & (cand_bits < lo_bits), cand_bits, lo_bits)
        hi_bits = np.where(ok & (cand_bits > hi_bits), cand_bits, hi_bits)
    lo = np.where(pinned, ref_bits, lo_bits).astype(f.bits_dtype).view(f.dtype)
    hi = np.where(pinned, ref_bits, hi_bits).astype(f.bits_dtype).view(f.dtype)
    ref, lo, hi = np.where(neg, -ref, ref), np.where(neg, -hi, lo), np.where(neg, -lo, hi)
    return ref.astype(f.dtype), lo.astype(f.dtype), hi.astype(f.dtype)


def _component(values: np.ndarray, kind: str, bits: int, result: str, may_flush: bool):
    """One channel of every texel as the read returns it: (bits, lo, hi, ranged, nan, flush, special)."""
    n = len(values)
    false = np.zeros(n, bool)
    if kind in ("unorm", "snorm"):
        ref, lo, hi = norm_interval(values, kind == "snorm", bits, result)
        return as_bits(ref), lo, hi, lo != hi, false, false, false
    if kind in ("sint", "uint"):
        wide = values.astype(np.int64).astype(scalar(result).dtype)  # sign- or zero-extension
        return as_bits(wide), wide, wide, false, false, false, false
    f = scalar(result)
    with np.errstate(all="ignore"):
        value = values.astype(f.dtype)  # half -> float and float -> float are exact
        nan = np.isnan(value)
        special = ~np.isfinite(value)
        tiny = (np.abs(value.astype(np.float64)) < 2.0**f.min_exp) & (value != 0) if may_flush else false
    return as_bits(value), value, value, false, nan, tiny, special


def texel_table(image: Image, stored: np.ndarray, result: str, may_flush: bool) -> Table:
    """The vector every texel reads as (a read returning ``result`` lanes), plus the border row."""
    order, channel = ORDERS[image.order], CHANNEL_TYPES[image.channel]
    f = scalar(result)
    data = stored.reshape(image.texels, image.channels)
    bits_of = scalar(channel.storage).bits
    one = np.array(1, f.dtype)
    cols = []
    for src in order.returned:
        if src in "01":
            v = np.full(image.texels, one if src == "1" else np.zeros((), f.dtype), f.dtype)
            z = np.zeros(image.texels, bool)
            cols.append((as_bits(v), v, v, z, z, z, z, RULE_TEXEL))
        else:
            raw = data[:, order.memory.index(src)]
            cols.append((*_component(raw, channel.kind, bits_of, result, may_flush), _CONVERSION_RULE[channel.kind]))
    border = np.array(order.border, f.dtype)
    rows = {}
    for i, name in enumerate(("bits", "lo", "hi", "ranged", "nan", "flush", "special")):
        body = np.stack([c[i] for c in cols], axis=1)
        if name == "bits":
            extra = as_bits(border)
        elif name in ("lo", "hi"):
            extra = border
        else:
            extra = np.zeros(4, bool)
        rows[name] = np.concatenate([body, extra[None, :].astype(body.dtype)])
    alt = rows["bits"].copy()
    if f.is_int and order.border[3] == 1:  # §6.15.15.1.1 gives float colours only: 1 or the bits of 1.0f
        alt[-1, 3] = np.array(1.0, np.float32).view(np.uint32)
    rule = np.concatenate([np.stack([np.full(image.texels, c[7], np.int16) for c in cols], axis=1),
                           np.full((1, 4), RULE_BORDER, np.int16)])
    return Table(result, rows["bits"], alt, rows["lo"], rows["hi"], rows["ranged"], rows["nan"], rows["flush"],
                 rows["special"], rule)


# ---- addressing (§8.2, §8.4) ----------------------------------------------------------------------


def _address(i: np.ndarray, size: int, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Table 70 on integer texel coordinates: (index, undefined). CLAMP may give -1 or size (the
    border); NONE leaves an index outside [0, size) undefined."""
    if mode == "clamp_to_edge":
        return np.clip(i, 0, size - 1), np.zeros(i.shape, bool)
    if mode == "clamp":
        return np.clip(i, -1, size), np.zeros(i.shape, bool)
    return i, (i < 0) | (i >= size)


def _floor(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        i, bad = _floor(_wrapped(u, size, mode))
        return np.where(i > size - 1, i - size, i), bad
    if mode == "mirrored_repeat":  # i = min((int)floor(u), w_t - 1)
        i, bad = _floor(_wrapped(u, size, mode))
        return np.minimum(i, size - 1), bad
    i, bad = _floor(u)
    i, outside = _address(i, size, mode)
    return i, bad | outside


def _linear(u: np.ndarray, size: int, sampler: Sampler) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two texels LINEAR blends along one axis: (i0, i1, undefined)."""
    mode = sampler.addressing
    if mode in ("repeat", "mirrored_repeat"):
        i0, bad = _floor(_wrapped(u, size, mode) - 0.5)
        i1 = i0 + 1
        if mode == "repeat":
            return np.where(i0 < 0, i0 + size, i0), np.where(i1 > size - 1, i1 - size, i1), bad
        return np.maximum(i0, 0), np.minimum(i1, size - 1), bad
    i0, bad = _floor(u - 0.5)
    a0, out0 = _address(i0, size, mode)
    a1, out1 = _address(i0 + 1, size, mode)
    return a0, a1, bad | out0 | out1


def _layer(w: np.ndarray, count: int, sampled: bool) -> tuple[np.ndarray, np.ndarray]:
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


def _axis_candidates(u: np.ndarray, size: int, sampler: Sampler) -> tuple[np.ndarray, np.ndarray]:
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
    return np.stack(cols, axis=1), bad


# ---- a read --------------------------------------------------------------------------------------


def expect_read(op: Op, coords: Expectation, program: Program, inputs: dict[str, np.ndarray],
                ftz: frozenset) -> Expectation:
    """The expectation of ``read_image{f,h,i,ui}`` for every work-item (4 lanes each)."""
    image = program.image(op.attr("image"))
    sampler = program.sampler(op.attr("sampler")) if op.attr("sampler") else None
    dim = DIMS[image.dim]
    n = len(coords) // dim.coord_width
    result = op.type.scalar
    may_flush = sampler is not None or "float" in ftz  # SPIR-V env §7.7
    table = texel_table(image, inputs[image.name], result, may_flush)
    with np.errstate(invalid="ignore"):
        c = coords.reference.reshape(n, dim.coord_width)
        c = c.astype(np.float64) if c.dtype.kind == "f" else c.astype(np.int64)
    bad = ~coords.judged.reshape(n, dim.coord_width).all(axis=1)
    shape = image.shape
    exact = sampler is None or sampler.exact
    axis_cols = []
    for a in range(dim.spatial):
        size = shape[a]
        if exact:
            if c.dtype.kind == "i":
                i = c[:, a]
                b = np.abs(i) > FLOAT_EXACT if sampler is not None else np.zeros(n, bool)
            else:
                i, b = _floor(c[:, a])
            i, outside = _address(i, size, sampler.addressing if sampler else "none")
            axis_cols.append((i[:, None], size))
            bad |= b | outside
        else:
            cand, b = _axis_candidates(c[:, a], size, sampler)
            axis_cols.append((cand, size))
            bad |= b
    flat = np.zeros((n, 1), np.int64)
    border = np.zeros((n, 1), bool)
    stride = 1
    for cand, size in axis_cols:
        border = border[:, :, None] | (cand < 0)[:, None, :] | (cand >= size)[:, None, :]
        flat = flat[:, :, None] + (np.clip(cand, 0, size - 1) * stride)[:, None, :]
        flat, border = flat.reshape(n, -1), border.reshape(n, -1)
        stride *= size
    layer_rule = np.zeros(n, bool)
    if dim.arrayed:
        layer, b = _layer(c[:, dim.spatial], shape[dim.spatial], sampler is not None)
        bad |= b
        flat = flat + (np.clip(layer, 0, shape[dim.spatial] - 1) * stride)[:, None]
        with np.errstate(invalid="ignore"):
            layer_rule = sampler is not None and np.abs(c[:, dim.spatial].astype(np.float64) % 1 - 0.5) < 0.5 - 1e-12
    rows = np.where(border, image.texels, flat)  # (n, K)
    rows[bad] = image.texels
    judged = np.repeat(~bad, 4)
    if exact:
        return _exact(table, rows[:, 0], judged, layer_rule)
    if sampler.filter == "nearest":
        return _alternatives(table, rows, judged, layer_rule)
    return _hull(table, rows, judged, dim.spatial, ftz)


def _gather(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return a[rows].ravel()


def _exact(table: Table, rows: np.ndarray, judged: np.ndarray, layer_rule: np.ndarray) -> Expectation:
    f = scalar(table.result)
    rule = _gather(table.rule, rows)
    if np.any(layer_rule):  # a fractional layer coordinate: the layer selection decided the lane
        rule = np.where(np.repeat(layer_rule, 4) & (rule != RULE_BORDER), RULE_LAYER, rule)
    flush = _gather(table.flush, rows)
    bits = _gather(table.bits, rows)
    allowed = [bits, _gather(table.alt, rows)]
    if flush.any():
        allowed += [np.where(flush, 0, bits), np.where(flush, 1 << (f.bits - 1), bits)]
    ranged = _gather(table.ranged, rows)
    # lanes without an interval get an empty one (lo > hi), in the result's own type
    empty_lo, empty_hi = (np.inf, -np.inf) if f.is_float else (np.iinfo(f.dtype).max, np.iinfo(f.dtype).min)
    lo = np.where(ranged, _gather(table.lo, rows), np.array(empty_lo, f.dtype)).astype(f.dtype)
    hi = np.where(ranged, _gather(table.hi, rows), np.array(empty_hi, f.dtype)).astype(f.dtype)
    e = Expectation(table.result, [allowed[0]], judged, _gather(table.nan, rows) & judged, rule,
                    [(lo, hi)] if ranged.any() else [])
    return e.with_alternatives(allowed[1:])


def _alternatives(table: Table, rows: np.ndarray, judged: np.ndarray, layer_rule: np.ndarray) -> Expectation:
    """NEAREST with uncertain coordinates: any of the candidate texels (each column of ``rows``);
    lanes all candidates agree on keep the rule of :func:`_exact` (the layer's where it is
    fractional: the layer is never normalized, §8.1, nor uncertain)."""
    distinct = [rows[:, 0]]
    for k in range(1, rows.shape[1]):
        if not any(np.array_equal(rows[:, k], d) for d in distinct):
            distinct.append(rows[:, k])
    parts = [_exact(table, r, judged, layer_rule) for r in distinct]
    e = parts[0]
    agree = np.ones(len(e), bool)  # lanes every candidate reads alike (a missing channel, one texel)
    for p in parts[1:]:
        agree &= (p.allowed[0] == e.allowed[0]) & (p.any_nan == e.any_nan)
        e = e.with_alternatives(p.allowed)
        e.any_nan = e.any_nan | p.any_nan
        e.ranges = e.ranges + p.ranges
    e.rule = np.where(agree, e.rule, RULE_NEAREST_TOLERANCE).astype(np.int16)
    return e


def _hull(table: Table, rows: np.ndarray, judged: np.ndarray, axes: int, ftz: frozenset) -> Expectation:
    """LINEAR: between the least and greatest candidate texel values, widened for the arithmetic."""
    f = scalar(table.result)
    lo = table.lo[rows].min(axis=1)  # (n, 4)
    hi = table.hi[rows].max(axis=1)
    special = table.special[rows].any(axis=1)
    flush = table.flush[rows].any(axis=1)
    with np.errstate(all="ignore"):
        top = np.maximum(np.abs(lo), np.abs(hi)).astype(np.float64)
        ulp = np.exp2(np.floor(np.log2(np.maximum(top, 2.0**f.min_exp))) - (f.mant_bits - 1))
        slack = (2 * axes + 1) * ulp
        lo64, hi64 = lo.astype(np.float64) - slack, hi.astype(np.float64) + slack
        tiny = 2.0 ** (f.min_exp + 1)
        zero = flush | ((lo64 < tiny) & (hi64 > -tiny))  # a denormal result may be flushed
        lo64 = np.where(zero, np.minimum(lo64, 0), lo64)
        hi64 = np.where(zero, np.maximum(hi64, 0), hi64)
    judged = judged & ~np.repeat(special.any(axis=1), 4)
    lo_f = _round_down(lo64.ravel(), f)
    hi_f = _round_up(hi64.ravel(), f)
    n = len(judged)
    return Expectation(table.result, [as_bits(lo_f)], judged, np.zeros(n, bool),
                       np.full(n, RULE_LINEAR_TOLERANCE, np.int16), [(lo_f, hi_f)])


def _round_down(x: np.ndarray, f) -> np.ndarray:
    """The greatest value of float type ``f`` at most ``x`` (float64)."""
    with np.errstate(over="ignore"):
        y = x.astype(f.dtype)
    return np.where(y.astype(np.float64) > x, np.nextafter(y, np.array(-np.inf, f.dtype)), y).astype(f.dtype)


def _round_up(x: np.ndarray, f) -> np.ndarray:
    """The least value of float type ``f`` at least ``x`` (float64)."""
    with np.errstate(over="ignore"):
        y = x.astype(f.dtype)
    return np.where(y.astype(np.float64) < x, np.nextafter(y, np.array(np.inf, f.dtype)), y).astype(f.dtype)



@REFERENCES.register("read_image")
def _read_image(op: Op, args: list[Expectation], n: int, ftz: frozenset, *, program: Program,
                inputs: dict[str, np.ndarray]) -> Expectation:
    """§6.15.15.2-6 and chapter 8: see the module docstring."""
    return expect_read(op, args[0], program, inputs, ftz)


_read_image.reads_program = True  # type: ignore[attr-defined]  (oracles.evaluate passes the program)
