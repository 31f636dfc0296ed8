"""Image reads: the spec's addressing, filtering, border-colour and channel-conversion rules.

A read returns a 4-vector (§6.15.15.3-6). The oracle first turns every texel of the image into
the vector a read of it returns (:func:`oracles.images.texels.texel_table`: the channel order's
mapping with 0 and 1 for missing channels, SPIR-V env §7.6 / OpenCL C §6.15.15.7; the channel
conversion of §8.3), with one extra row for the border colour of the order (§6.15.15.1.1). Then,
per work-item, the coordinate selects rows of that table (:mod:`oracles.images.addressing`):

*Exact verdicts* (rule ``image.texel`` and the conversion rules): a sampler-less read (SPIR-V
env §7.7: NEAREST, unnormalized, ADDRESS_NONE) or a sampler with unnormalized coordinates,
NEAREST and CLAMP_TO_EDGE, CLAMP or NONE, for which "the location of the image element ... will
be computed without any loss of precision" (end of §8.2): ``i = address_mode((int)floor(u))``
(Table 70), the array layer ``clamp(rint(w), 0, d_t - 1)`` with ties to even (§8.4; the array
index is always addressed CLAMP_TO_EDGE, §6.15.15.1: a lane whose layer coordinate is fractional
or outside the array is judged under ``image.layer``). The texel's value is then exact bits,
except normalized integer data: within 1.5 ulp of ``c/255`` etc. with exact endpoints
(§8.3.1.1-2, an interval in :attr:`Expectation.ranges`), and FLOAT data: a NaN may be any NaN,
and a sampled read may flush a denormal (SPIR-V env §7.7).

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

*Never judged* (undefined or implementation-defined): NaN or infinite coordinates (§8.2; rule
``image.coordinate.nonfinite``, which leaves them "undefined": ``oracles.undefined``),
coordinates whose floor does not fit an int (the formulas convert with ``(int)``), locations
outside the image under ADDRESS_NONE (§6.15.15.1 and Table 70: "otherwise the results are
undefined"; sampler-less reads and their layers outside the array alike, §6.15.15.3: rule
``image.none.outside``), LINEAR over an INF or NaN texel of float data (§8.2), and tolerance lanes whose
uncertainty spans half a texel or more.
"""

from __future__ import annotations

import numpy as np

from lang.images import DIMS, Dim
from lang.ir import Op, Program, Sampler
from lang.ops import Handlers
from lang.types import scalar
from oracles import rules
from oracles.expect import Expectation, as_bits
from oracles.images.addressing import DELTA, FLOAT_EXACT, address, array_layer, axis_candidates, int_floor
from oracles.images.texels import RULE_BORDER, Table, may_flush, texel_table
from oracles.operands import Reference

REFERENCES: Handlers[Reference] = Handlers()
"""The references of this module, by operation name (assembled in oracles.references)."""
reference = REFERENCES.register

RULE_LAYER = rules.register(
    "image.layer",
    "a sampled read of an image array selects layer clamp(rint(layer), 0, count - 1), rint rounding ties "
    "to even: the layer coordinate is never normalized and is always addressed CLAMP_TO_EDGE, whatever the "
    "sampler's addressing mode (a layer outside the array reads the first or the last layer)",
    "OpenCL C 3.0.19 §8.4 ('When read using a sampler, the 2D image layer selected is computed as layer = "
    "clamp(rint(w), 0, d_t - 1)', a definition); §6.15.15.1 Table 32 ('The addressing mode for the coordinate "
    "which specifies the array index is always CLK_ADDRESS_CLAMP_TO_EDGE', a definition, neither shall nor "
    "should); §8.1 (the array coordinate 'must always be the un-normalized image coordinate value'); OpenCL "
    "SPIR-V environment §7.5 the same selection",
)
RULE_COORDINATE_NONFINITE = rules.register(
    "image.coordinate.nonfinite",
    "a read at an INF or NaN coordinate is not judged: its result is undefined",
    "OpenCL C 3.0.19 §8.2 ('If values in (u, v, w) are INF or NaN, the behavior of read_image{f|i|ui} is "
    "undefined'; 'If values in (s, t, r) are INF or NaN, the behavior of the built-in image read functions is "
    "undefined'; neither shall nor should)",
    leaves="undefined",
)
RULE_NONE_OUTSIDE = rules.register(
    "image.none.outside",
    "a read with addressing mode CLK_ADDRESS_NONE (or a sampler-less read, which behaves as one) at a location "
    "outside the image is not judged: its result is undefined",
    "OpenCL C 3.0.19 §6.15.15.1 (CLK_ADDRESS_NONE: 'the programmer guarantees that the image coordinates used to "
    "sample elements of the image refer to a location inside the image; otherwise the results are undefined'), "
    "§8.2 Table 70; §6.15.15.3 (the sampler-less reads 'behave exactly as' those with CLK_ADDRESS_NONE); neither "
    "shall nor should",
    leaves="undefined",
)
RULE_COORDINATE_DENORMAL = rules.register(
    "image.coordinate.denormal",
    "a denormal coordinate is a coordinate like any other: the texel location is computed from its value "
    "(floor(-1e-45) = -1, outside the image: CLAMP's border colour), not from 0 as if it were flushed",
    "OpenCL C 3.0 §8.2 (end: the location 'will be computed without any loss of precision', a 'will', neither "
    "shall nor should); §8.3.3 lets channel data's denormals be flushed; §7.2 lets a device without denormal "
    "support flush the inputs of operations 'such as' add, mul and the math functions, image reads not named",
    severity="letter",
)
"""Named by the deviation classifier (oracles.deviation.images), never by the read's oracle: a
read that flushed a denormal coordinate breaks the letter of §8.2, which hardware commonly does."""
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


# ---- a read --------------------------------------------------------------------------------------


def expect_read(op: Op, coords: Expectation, program: Program, inputs: dict[str, np.ndarray],
                ftz: frozenset) -> Expectation:
    """The expectation of ``read_image{f,h,i,ui}`` for every work-item (4 lanes each)."""
    image = program.image(op.attr("image"))
    sampler = program.sampler(op.attr("sampler")) if op.attr("sampler") else None
    dim = DIMS[image.dim]
    n = len(coords) // dim.coord_width
    result = op.type.scalar
    table = texel_table(image, inputs[image.name], result, may_flush(image, sampler is not None, ftz))
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
                i, b = int_floor(c[:, a])
            i, outside = address(i, size, sampler.addressing if sampler else "none")
            axis_cols.append((i[:, None], size))
            bad |= b | outside
        else:
            cand, b = axis_candidates(c[:, a], size, sampler)
            axis_cols.append((cand, size))
            bad |= b
    flat = np.zeros((n, 1), np.int64)  # each combination of a candidate per axis, as a row of the table
    stride = 1
    for cand, size in axis_cols:  # a candidate outside the image counts past every texel: the border row
        offset = np.where((cand < 0) | (cand >= size), image.texels, cand * stride)
        flat = (flat[:, :, None] + offset[:, None, :]).reshape(n, -1)
        stride *= size
    layer_rule = np.zeros(n, bool)
    if dim.arrayed:
        layer, b = array_layer(c[:, dim.spatial], shape[dim.spatial], sampler is not None)
        bad |= b
        flat = flat + (np.clip(layer, 0, shape[dim.spatial] - 1) * stride)[:, None]
        if sampler is not None:
            layer_rule = _layer_decides(c[:, dim.spatial], shape[dim.spatial])
    rows = np.minimum(flat, image.texels)  # (n, K)
    rows[bad] = image.texels
    judged = np.repeat(~bad, 4)
    if exact:
        e = _exact(table, rows[:, 0], judged, layer_rule)
    elif sampler.filter == "nearest":
        e = _alternatives(table, rows, judged, layer_rule)
    else:
        e = _hull(table, rows, judged, dim.spatial, ftz)
    nonfinite, outside = _undefined(c, coords, image.shape, dim, sampler)
    e.rule = np.select([np.repeat(nonfinite, 4) & ~e.judged, np.repeat(outside, 4) & ~e.judged],
                       [RULE_COORDINATE_NONFINITE, RULE_NONE_OUTSIDE], e.rule).astype(np.int16)
    return e


def _undefined(c: np.ndarray, coords: Expectation, shape: tuple[int, ...], dim: Dim,
               sampler: Sampler | None) -> tuple[np.ndarray, np.ndarray]:
    """The work-items whose read the spec leaves undefined, of those whose coordinates are pinned:
    an INF or NaN coordinate (§8.2), and under CLK_ADDRESS_NONE (a sampler-less read included,
    §6.15.15.3) a location outside the image: ``floor(u)`` outside ``[0, size)`` on an axis, ``u``
    the unnormalized coordinate, or a sampler-less layer outside the array (§6.15.15.1). Only lanes
    the read leaves unjudged take their rule."""
    pinned = coords.judged.reshape(c.shape).all(axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        x = c.astype(np.float64)
        nonfinite = pinned & ~np.isfinite(x).all(axis=1)
        outside = np.zeros(len(c), bool)
        if sampler is None or sampler.addressing == "none":
            scale = sampler is not None and sampler.normalized
            for a in range(dim.spatial):
                u = np.floor(x[:, a] * (shape[a] if scale else 1))
                outside |= (u < 0) | (u >= shape[a])
            if dim.arrayed and sampler is None:
                w = x[:, dim.spatial]
                outside |= (w < 0) | (w >= shape[dim.spatial])
    return nonfinite, pinned & ~nonfinite & outside


def _layer_decides(w: np.ndarray, count: int) -> np.ndarray:
    """Where a sampled read's layer selection decides the lane (rule ``image.layer``, §8.4 and
    §6.15.15.1): a fractional layer coordinate (rint chooses) or one outside the array (the clamp
    chooses: the array index is always addressed CLAMP_TO_EDGE, whatever the sampler says)."""
    with np.errstate(invalid="ignore"):
        w = w.astype(np.float64)
        fractional = np.abs(w % 1 - 0.5) < 0.5 - 1e-12
        rounded = np.rint(w)
        return fractional | (rounded < 0) | (rounded > count - 1)


def _gather(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return np.take(a, rows, axis=0).ravel()


def _exact(table: Table, rows: np.ndarray, judged: np.ndarray, layer_rule: np.ndarray) -> Expectation:
    f = scalar(table.result)
    rule = _gather(table.rule, rows)
    if np.any(layer_rule):  # a fractional or out-of-range layer coordinate: the layer selection decided the lane
        rule = np.where(np.repeat(layer_rule, 4) & (rule != RULE_BORDER), RULE_LAYER, rule)
    bits = _gather(table.bits, rows)
    # the table's columns that no texel sets are not gathered (a table has a row per texel, a
    # read a row per work-item): they would add nothing to the expectation
    allowed = [bits] + ([_gather(table.alt, rows)] if table.has_alt else [])
    if table.flush_any:
        flush = _gather(table.flush, rows)
        allowed += [np.where(flush, 0, bits), np.where(flush, 1 << (f.bits - 1), bits)]
    ranges = []
    if table.ranged_any:
        ranged = _gather(table.ranged, rows)
        # lanes without an interval get an empty one (lo > hi), in the result's own type
        empty_lo, empty_hi = (np.inf, -np.inf) if f.is_float else (np.iinfo(f.dtype).max, np.iinfo(f.dtype).min)
        lo = np.where(ranged, _gather(table.lo, rows), np.array(empty_lo, f.dtype)).astype(f.dtype)
        hi = np.where(ranged, _gather(table.hi, rows), np.array(empty_hi, f.dtype)).astype(f.dtype)
        ranges = [(lo, hi)] if ranged.any() else []
    nan = _gather(table.nan, rows) & judged if table.nan_any else np.zeros(len(judged), bool)
    e = Expectation(table.result, [allowed[0]], judged, nan, rule, ranges)
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
    if table.ranged_any:
        (lo,), (hi,) = _over(table.lo, rows, np.minimum), _over(table.hi, rows, np.maximum)  # (n, 4) each
    else:  # every texel's interval is its value
        lo, hi = _over(table.lo, rows, np.minimum, np.maximum)
    # a flag that no texel has stays off without gathering it
    special = _over(table.special, rows, np.logical_or)[0] if table.special_any else np.zeros(lo.shape, bool)
    flush = _over(table.flush, rows, np.logical_or)[0] if table.flush_any else np.zeros(lo.shape, bool)
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


def _over(a: np.ndarray, rows: np.ndarray, *combines: np.ufunc) -> list[np.ndarray]:
    """Each of ``combines`` of ``a``'s rows over each lane's candidates (``rows``' columns): the
    reduction over a middle axis, a column at a time (a quarter of the time of ``a[rows]``
    reduced), each column gathered once for all of them."""
    out = [a[rows[:, 0]] for _ in combines]
    column = np.empty_like(out[0])
    for k in range(1, rows.shape[1]):
        np.take(a, rows[:, k], axis=0, out=column)
        for combine, o in zip(combines, out):
            combine(o, column, out=o)
    return out


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



@reference("read_image")
def _read_image(op: Op, args: list[Expectation], n: int, ftz: frozenset, *, program: Program,
                inputs: dict[str, np.ndarray]) -> Expectation:
    """§6.15.15.2-6 and chapter 8: see the module docstring."""
    return expect_read(op, args[0], program, inputs, ftz)


_read_image.reads_program = True  # type: ignore[attr-defined]  (oracles.interpreter passes the program)
