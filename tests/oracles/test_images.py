"""The image-read oracle against hand-worked examples of OpenCL C 3.0 chapter 8 and against exact
rational arithmetic (the 1.5 ulp bound of §8.3.1)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Load, Op, Program, Sampler, Store
from lang.types import Type
from oracles import Expectation, rule
import oracles.images.addressing as addressing_module
from oracles.images import (
    RULE_BORDER,
    RULE_LAYER,
    RULE_LINEAR_TOLERANCE,
    RULE_NEAREST_TOLERANCE,
    expect_read,
    norm_interval,
)

F32 = np.float32
distinct = addressing_module.distinct


def read(dim, shape, texels, coords, sampler=None, order="R", channel="FLOAT", result="float", ftz=frozenset()):
    """The expectation of reading an image with the given stored channels at each coordinate."""
    image = Image("img", dim, order, channel, shape, Fill(0))
    coord_t = Type("int" if np.asarray(coords).dtype.kind == "i" else "float", len(coords[0]))
    op = Op("read_image", (Load("c", coord_t),), Type(result, 4),
            (("dim", dim), ("form", read_form(sampler)), ("image", "img"), ("sampler", sampler.name if sampler else "")))
    program = Program((Buffer("c", coord_t, "in", Fill(0)), Buffer("o", Type(result, 4), "out")), (Store("o", op),),
                      len(coords), area="images", images=(image,), samplers=(sampler,) if sampler else ())
    values = np.asarray(coords, dtype=np.int32 if coord_t.scalar == "int" else F32).ravel()
    stored = np.asarray(texels).astype(image.storage.elem.dtype)
    return expect_read(op, Expectation.exact(coord_t.scalar, values), program, {"img": stored}, ftz)


def accepted(e: Expectation, item: int, lane: int, value) -> bool:
    dtype = np.dtype(F32) if e.scalar == "float" else np.dtype(np.int32) if e.scalar == "int" else np.dtype(np.uint32)
    bits = np.zeros(len(e), dtype.str.replace("f", "u").replace("i", "u"))
    bits[item * 4 + lane] = np.array(value, dtype).view(bits.dtype)
    return bool(e.accepts(bits)[item * 4 + lane])


def ref(e: Expectation, item: int) -> list:
    return [float(x) if e.scalar == "float" else int(x) for x in e.reference[item * 4: item * 4 + 4]]


def judged(e: Expectation, item: int) -> bool:
    return bool(e.judged[item * 4])


S = lambda normalized, addressing, filter_: Sampler("s", normalized, addressing, filter_)  # noqa: E731
ROW = [10.0, 11.0, 12.0, 13.0]  # texel i holds 10 + i


# ---- NEAREST, unnormalized: exact (§8.2 Table 70, end of §8.2) ----------------------------------


@pytest.mark.parametrize("u, edge, clamp, none", [
    (0.0, 10, 10, 10), (0.99999994, 10, 10, 10), (1.0, 11, 11, 11), (3.5, 13, 13, 13),
    (4.0, 13, "border", None), (-0.5, 10, "border", None), (-100.0, 10, "border", None), (1e6, 13, "border", None),
])
def test_nearest_unnormalized_1d(u, edge, clamp, none):
    """i = address_mode((int)floor(u)): CLAMP_TO_EDGE clamps to [0, w-1], CLAMP to [-1, w] (the
    border colour outside), NONE leaves outside undefined; R's border is (0,0,0,1) (§6.15.15.1.1)."""
    for mode, want in (("clamp_to_edge", edge), ("clamp", clamp), ("none", none)):
        e = read("1d", (4,), ROW, [[u]], S(False, mode, "nearest"))
        if want is None:
            assert not judged(e, 0)
        elif want == "border":
            assert ref(e, 0) == [0.0, 0.0, 0.0, 1.0] and e.rule[0] == RULE_BORDER
        else:
            assert ref(e, 0) == [want, 0.0, 0.0, 1.0]
            assert not accepted(e, 0, 0, want + 1)


def test_nearest_2d_and_3d_index_row_major():
    """(i, j, k) address texel i + w*j + w*h*k (x fastest); int coordinates select directly."""
    texels = np.arange(2 * 3 * 2, dtype=F32)
    e = read("3d", (2, 3, 2), texels, [[1.5, 2.0, 1.25, 99.0]], S(False, "clamp_to_edge", "nearest"))
    assert ref(e, 0)[0] == 1 + 2 * 2 + 6 * 1
    e = read("2d", (2, 3), texels[:6], [[1, 2], [-5, 9]], S(False, "clamp_to_edge", "nearest"))
    assert ref(e, 0)[0] == 5 and ref(e, 1)[0] == 0 + 2 * 2


def test_samplerless_reads_are_none_nearest_unnormalized():
    """SPIR-V env §7.7: a sampler-less read is NEAREST, unnormalized, ADDRESS_NONE; outside the
    image (and outside the layers, §8.4) it is undefined."""
    e = read("1d_array", (4, 2), ROW + [20.0, 21.0, 22.0, 23.0], [[2, 1], [4, 0], [0, 2], [0, -1]])
    assert ref(e, 0)[0] == 22.0 and judged(e, 0)
    assert not judged(e, 1) and not judged(e, 2) and not judged(e, 3)


@pytest.mark.parametrize("layer, want", [(0.5, 0), (1.5, 2), (2.5, 2), (0.49999997, 0), (1.4999999, 1),
                                         (-0.7, 0), (7.0, 3), (3.5, 3)])
def test_array_layer_rint_ties_to_even(layer, want):
    """§8.4: layer = clamp(rint(w), 0, d_t - 1) and rint rounds half to even; the lane is judged
    under image.layer where the layer selection decides it: a fractional coordinate, or one outside
    the array (the array index is always addressed CLAMP_TO_EDGE, §6.15.15.1)."""
    texels = np.repeat(np.arange(4, dtype=F32) * 100, 2)  # 2 texels per layer, layer L holds 100 L
    e = read("1d_array", (2, 4), texels, [[0.5, layer]], S(False, "clamp", "nearest"))
    assert ref(e, 0)[0] == 100 * want
    assert (e.rule[0] == RULE_LAYER) == (layer != int(layer) or not 0 <= layer <= 3)
    e = read("2d_array", (1, 1, 4), np.arange(4, dtype=F32) * 100, [[0.0, 0.0, layer, 0.0]],
             S(True, "repeat", "nearest"))  # normalized coordinates: the layer is still unnormalized
    assert ref(e, 0)[0] == 100 * want


def test_undefined_coordinates_not_judged():
    """§8.2: NaN or INF coordinates are undefined; so is a floor outside int."""
    e = read("2d", (2, 2), [1, 2, 3, 4], [[np.nan, 0], [np.inf, 0], [3e9, 0], [0.5, 0.5]],
             S(False, "clamp_to_edge", "nearest"))
    assert [judged(e, i) for i in range(4)] == [False, False, False, True]


# ---- REPEAT and MIRRORED_REPEAT (normalized only): tolerance class -------------------------------


@pytest.mark.parametrize("s, repeat, mirrored", [
    (0.3, 1, 1),  # u = 1.2
    (1.3, 1, 2),  # REPEAT: frac 0.3; MIRRORED: s' = |1.3 - 2 rint(0.65)| = 0.7, u = 2.8
    (-0.2, 3, 0),  # REPEAT: frac 0.8 -> u 3.2; MIRRORED: s' = 0.2 -> u 0.8
    (2.6, 2, 1),  # REPEAT: u = 2.4; MIRRORED: s' = |2.6 - 2| = 0.6 -> u = 2.4 ... flipped: 2
])
def test_repeat_and_mirrored_nearest(s, repeat, mirrored):
    e = read("1d", (4,), ROW, [[s]], S(True, "repeat", "nearest"))
    assert ref(e, 0)[0] == 10 + repeat
    assert not accepted(e, 0, 0, 10 + (repeat + 2) % 4)
    e = read("1d", (4,), ROW, [[s]], S(True, "mirrored_repeat", "nearest"))
    want = {2.6: 2}.get(s, mirrored)
    assert ref(e, 0)[0] == 10 + want


def test_repeat_seam_allows_both_sides():
    """At the seam s = 1 (u = 0 after wrapping) the spec's precision is undefined: texel 0 or
    texel w-1 (lower severity); texel 1 is still wrong."""
    e = read("1d", (4,), ROW, [[1.0]], S(True, "repeat", "nearest"))
    assert accepted(e, 0, 0, 10.0) and accepted(e, 0, 0, 13.0) and not accepted(e, 0, 0, 11.0)
    assert e.rule[0] == RULE_NEAREST_TOLERANCE and rule(RULE_NEAREST_TOLERANCE).severity == "tolerance"
    assert e.rule[3] != RULE_NEAREST_TOLERANCE and not accepted(e, 0, 3, 0.0)  # R's alpha is 1 whatever the texel


def test_mirrored_seam_is_one_texel():
    """MIRRORED_REPEAT flips at integers: both sides of s = 1 read the last texel."""
    e = read("1d", (4,), ROW, [[1.0]], S(True, "mirrored_repeat", "nearest"))
    assert accepted(e, 0, 0, 13.0) and not accepted(e, 0, 0, 10.0)


def test_normalized_clamp_texel_centres_are_unambiguous():
    e = read("2d", (4, 2), np.arange(8, dtype=F32), [[(2 + 0.5) / 4, 0.75]], S(True, "clamp_to_edge", "nearest"))
    assert ref(e, 0)[0] == 2 + 4 and not accepted(e, 0, 0, 3 + 4)


# ---- LINEAR: the hull of the texels the formulas can select ---------------------------------------


def test_linear_1d_hull():
    """u = 1.5 blends texels 1 and 2 with a = 0 (§8.2); within 1/16 texel the blend can reach
    texels 0..2, so any value in [10, 12] (+3 ulp) is accepted, 13 is not."""
    e = read("1d", (4,), ROW, [[1.5]], S(False, "clamp_to_edge", "linear"))
    assert e.rule[0] == RULE_LINEAR_TOLERANCE
    assert accepted(e, 0, 0, 11.0) and accepted(e, 0, 0, 10.0) and accepted(e, 0, 0, 12.0)
    assert not accepted(e, 0, 0, 13.0) and not accepted(e, 0, 0, 9.99)


def test_linear_clamp_blends_the_border():
    """CLAMP: i0 = -1 is outside, so the border colour (0 for R's red) enters the blend."""
    e = read("1d", (4,), ROW, [[0.25]], S(False, "clamp", "linear"))
    assert accepted(e, 0, 0, 5.0) and accepted(e, 0, 0, 0.0) and not accepted(e, 0, 0, 11.5)


def test_linear_2d_3d_and_undefined():
    texels = np.arange(27, dtype=F32)
    e = read("3d", (3, 3, 3), texels, [[1.5, 1.5, 1.5, 0.0]], S(False, "clamp_to_edge", "linear"))
    assert accepted(e, 0, 0, 13.0) and not accepted(e, 0, 0, 27.0)
    e = read("1d", (4,), [10.0, np.inf, 12.0, 13.0], [[1.5], [3.7]], S(False, "clamp_to_edge", "linear"))
    assert not judged(e, 0) and judged(e, 1)  # LINEAR over an INF texel is undefined (§8.2)
    e = read("1d", (4,), ROW, [[0.3], [0.7]], S(False, "none", "linear"))
    assert not judged(e, 0) and judged(e, 1)  # i0 = floor(0.3 - 0.5) = -1 is outside the image under NONE


# ---- channel orders, borders and conversions (§6.15.15.7, §6.15.15.1.1, §8.3) ----------------------


@pytest.mark.parametrize("order, stored, want, border", [
    ("RA", [0.25, 0.5], [0.25, 0, 0, 0.5], [0, 0, 0, 0]),
    ("RG", [0.25, 0.5], [0.25, 0.5, 0, 1], [0, 0, 0, 1]),
    ("BGRA", [0.1, 0.2, 0.3, 0.4], [0.3, 0.2, 0.1, 0.4], [0, 0, 0, 0]),
    ("ARGB", [0.1, 0.2, 0.3, 0.4], [0.2, 0.3, 0.4, 0.1], [0, 0, 0, 0]),
    ("INTENSITY", [0.25], [0.25] * 4, [0, 0, 0, 0]),
    ("LUMINANCE", [0.25], [0.25, 0.25, 0.25, 1], [0, 0, 0, 1]),
    ("A", [0.25], [0, 0, 0, 0.25], [0, 0, 0, 0]),
    ("Rx", [0.25], [0.25, 0, 0, 1], [0, 0, 0, 0]),
])
def test_channel_orders_and_borders(order, stored, want, border):
    e = read("1d", (1,), stored, [[0.5], [-3.0]], S(False, "clamp", "nearest"), order=order)
    assert ref(e, 0) == [float(F32(x)) for x in want]
    assert ref(e, 1) == border


def test_unorm_endpoints_exact_and_interior_within_bound():
    """§8.3.1.1: 0 -> 0.0 and 255 -> 1.0 exactly; 128 -> 128/255 within 1.5 ulp."""
    e = read("1d", (3,), [0, 255, 128], [[0], [1], [2]], order="R", channel="UNORM_INT8")
    assert ref(e, 0)[0] == 0.0 and ref(e, 1)[0] == 1.0
    assert not accepted(e, 1, 0, np.nextafter(F32(1), F32(0)))
    x = F32(128 / 255)
    assert accepted(e, 2, 0, np.nextafter(x, F32(1))) and not accepted(e, 2, 0, x + F32(2 ** -22))


def test_snorm_minimum_codes_are_minus_one():
    e = read("1d", (4,), [-128, -127, 127, 0], [[0], [1], [2], [3]], order="R", channel="SNORM_INT8")
    assert [ref(e, i)[0] for i in range(4)] == [-1.0, -1.0, 1.0, 0.0]
    assert not accepted(e, 0, 0, -0.99999994)


def test_float_data_nan_and_denormals():
    """§8.3.3 (CL_FLOAT): "NaNs may be converted to a NaN value(s) supported by the device" and
    "Denorms can be flushed to zero", for every read (the sampler-less read "may return the
    denormalized data", §6.15.15: a permission). A denormal CL_HALF_FLOAT texel read as float is a
    normal float: returned as stored by a sampler-less read."""
    tiny = np.array(1, np.uint32).view(F32)
    e = read("1d", (2,), [np.nan, tiny], [[0], [1]], S(False, "none", "nearest"))
    assert accepted(e, 0, 0, np.array(0x7FC00001, np.uint32).view(F32)) and accepted(e, 1, 0, -0.0)
    e = read("1d", (2,), [np.nan, tiny], [[0], [1]])
    assert accepted(e, 1, 0, 0.0) and accepted(e, 1, 0, tiny)
    tiny_half = float(np.array(1, np.uint16).view(np.float16))
    e = read("1d", (2,), [1.0, tiny_half], [[0], [1]], channel="HALF_FLOAT")
    assert not accepted(e, 1, 0, 0.0) and accepted(e, 1, 0, tiny_half)
    e = read("1d", (2,), [1.0, tiny_half], [[0], [1]], channel="HALF_FLOAT", ftz=frozenset({"float"}))
    assert not accepted(e, 1, 0, 0.0)  # read as float it is a normal number: nothing to flush


def test_integer_reads_extend_and_border_alpha():
    """§8.3.4: sign-extension for read_imagei, zero-extension for read_imageui; R's border alpha
    is 1 (or the bits of 1.0f: the spec gives float colours only)."""
    e = read("1d", (1,), [-5], [[0], [9]], S(False, "clamp", "nearest"), channel="SIGNED_INT8", result="int")
    assert ref(e, 0) == [-5, 0, 0, 1] and ref(e, 1) == [0, 0, 0, 1]
    assert accepted(e, 1, 3, 0x3F800000) and not accepted(e, 1, 3, 0)
    e = read("1d", (1,), [250], [[0]], S(False, "clamp", "nearest"), channel="UNSIGNED_INT8", result="uint")
    assert ref(e, 0)[0] == 250


# ---- the 1.5 ulp intervals against exact rational arithmetic ---------------------------------------


def _exact_interval(c: int, M: int, dtype) -> tuple[float, float]:
    """Every float of ``dtype`` within 1.5 ulp of max(-1, c/M), by brute force with Fractions."""
    x = max(Fraction(-1), Fraction(c, M))
    if x in (0, 1, -1):
        return float(x), float(x)
    y = np.array(float(x), dtype)
    around = [y]
    for direction in (np.inf, -np.inf):
        v = y
        for _ in range(4):
            v = np.nextafter(v, dtype(direction))
            around.append(v)
    lo_near = max(v for v in around if Fraction(float(v)) <= x)
    hi_near = min(v for v in around if Fraction(float(v)) > x)
    ulp = Fraction(float(hi_near)) - Fraction(float(lo_near))  # §7.4: the gap around x
    ok = [v for v in around if abs(Fraction(float(v)) - x) <= Fraction(3, 2) * ulp]
    return float(min(ok)), float(max(ok))


@pytest.mark.parametrize("bits, signed, result", [(8, False, "float"), (8, True, "float"), (16, False, "float"),
                                                  (16, True, "half"), (8, False, "half")])
def test_norm_interval_matches_fractions(bits, signed, result):
    rng = np.random.default_rng(bits)
    lo_code, hi_code = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    codes = np.unique(np.concatenate([np.arange(lo_code, lo_code + 40), np.arange(hi_code - 40, hi_code + 1),
                                      rng.integers(lo_code, hi_code + 1, 400)]))
    dtype = np.float32 if result == "float" else np.float16
    M = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    _, lo, hi = norm_interval(codes, signed, bits, result)
    for c, l, h in zip(codes, lo, hi):
        assert (float(l), float(h)) == _exact_interval(int(c), M, dtype), c


# ---- every combination of the axes' candidates, computed once each ---------------------------------


def test_distinct_keeps_each_lanes_candidates_and_its_first():
    cand = np.array([[3, 4, 3, 4, 4, 5], [7, 7, 7, 7, 7, 7], [0, 1, 9, 0, 1, 9]])
    out = distinct(cand)
    assert out.shape == (3, 3)  # the row with the most distinct values: 3
    assert out.tolist() == [[3, 4, 5], [7, 7, 7], [0, 1, 9]]


@settings(max_examples=60, deadline=None)
@given(dim=st.sampled_from(["2d", "3d"]), normalized=st.booleans(),
       addressing=st.sampled_from(["clamp_to_edge", "clamp", "repeat", "mirrored_repeat"]),
       filter_=st.sampled_from(["nearest", "linear"]), data=st.data())
def test_reads_accept_what_every_combination_of_the_formulas_selections_gives(dim, normalized, addressing,
                                                                             filter_, data):
    """A read's candidates are every combination of a texel per axis (§8.2's formulas at the coordinate
    and DELTA around it): the same values accepted, lane by lane, as from the formulas' six (LINEAR) or
    three (NEAREST) selections per axis without removing repeats."""
    if addressing in ("repeat", "mirrored_repeat") and not normalized:
        normalized = True  # §6.15.15.1: REPEAT and MIRRORED_REPEAT need normalized coordinates
    shape = (4, 3) if dim == "2d" else (3, 2, 3)
    texels = np.arange(np.prod(shape), dtype=F32) * 1.5 + 1
    scale = 1.0 if normalized else float(max(shape))
    coords = data.draw(st.lists(st.lists(st.floats(-0.25, 1.25, width=32).map(lambda x: x * scale),
                                         min_size=len(shape), max_size=len(shape)).map(lambda c: c + [0.0] * (dim == "3d")),
                                min_size=1, max_size=12))
    sampler = S(normalized, addressing, filter_)
    e = read(dim, shape, texels, coords, sampler)
    addressing_module.distinct = lambda cand: cand  # every selection, repeats and all
    try:
        full = read(dim, shape, texels, coords, sampler)
    finally:
        addressing_module.distinct = distinct
    assert np.array_equal(e.judged, full.judged) and np.array_equal(e.rule, full.rule)
    assert np.array_equal(e.allowed[0], full.allowed[0])  # the reference: the first combination's
    probes = np.concatenate([*full.allowed, *(r for pair in full.ranges for r in pair)]).view(F32)
    for value in np.unique(np.concatenate([probes, probes + F32(0.25)])):
        bits = np.full(len(e), np.array(value, F32).view(np.uint32))
        assert np.array_equal(e.accepts(bits), full.accepts(bits))
