"""The deviation classifier (oracles.deviation): one test per class with a hand-built expectation
or a small program and a wrong actual value; one per image rule with a real image program
evaluated by the oracle and a simulated wrong read; the judge's rows carry the class and the
rule the value breaks, and the classifier changes no verdict."""

from __future__ import annotations

import numpy as np
import pytest

from fuzz.judge import judge
from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Load, Op, Program, Sampler, Store
from lang.layout import input_values
from lang.types import Type, scalar
from oracles import Deviation, ErrorScale, Expectation, expected, rules
from oracles.deviation import CLASSES, ORDER, classify

F32 = np.float32


def _bits(values, name: str) -> tuple[int, ...]:
    s = scalar(name)
    return tuple(int(b) for b in np.asarray(values, s.dtype).view(s.bits_dtype))


def program(value_of, types: dict[str, str], out: str, inputs: dict[str, list], n: int | None = None) -> Program:
    """A one-statement program ``o = value_of(loads)`` over explicit input values (one element
    per work-item; vector inputs as flat lanes in memory order)."""
    loads = {k: Load(k, Type.parse(t)) for k, t in types.items()}
    n = n or len(next(iter(inputs.values()))) // loads[next(iter(inputs))].type.mem_lanes
    buffers = [Buffer(k, loads[k].type, "in", Fill(0, values=_bits(inputs[k], loads[k].type.scalar))) for k in types]
    buffers.append(Buffer("o", Type.parse(out), "out"))
    return Program(tuple(buffers), (Store("o", value_of(**loads)),), n, area="expressions")


def run(p: Program, tamper: dict[int, object]) -> tuple[dict, Expectation, np.ndarray, dict]:
    """The oracle's expectation of ``o`` and an actual output equal to its reference except at
    the given lanes (values of the lane type, or raw bits as ``('bits', n)``)."""
    inputs = input_values(p)
    exp = expected(p, frozenset(), inputs)["o"]
    s = scalar(exp.scalar)
    actual = exp.allowed[0].copy()
    for pos, v in tamper.items():
        actual[pos] = v[1] if isinstance(v, tuple) else np.array(v, s.dtype).view(s.bits_dtype)
    return inputs, exp, actual, {"o": exp}


def deviation(p: Program, tamper: dict[int, object], pos: int | None = None) -> Deviation:
    inputs, exp, actual, _ = run(p, tamper)
    pos = next(iter(tamper)) if pos is None else pos
    assert not exp.accepts(actual)[pos], "the simulated value must be wrong"
    return classify(p, p.body[0], "o", exp, actual, inputs, pos)


def hand(exp: Expectation, actual_bits: list[int], pos: int = 0, out: str | None = None) -> Deviation:
    """A hand-built expectation of a copy statement ``o = a`` and actual bits."""
    t = out or exp.scalar
    p = program(lambda a: a, {"a": t}, t, {"a": [0] * len(exp)})
    actual = np.array(actual_bits, np.uint64).astype(scalar(exp.scalar).bits_dtype)
    assert not exp.accepts(actual)[pos]
    return classify(p, p.body[0], "o", exp, actual, input_values(p), pos)


def f32(x) -> int:
    return int(np.array(x, F32).view(np.uint32))


# ---- the table ---------------------------------------------------------------------------------


def test_every_class_is_declared_with_a_description_and_one_check_in_order():
    assert all(CLASSES[c] for c in CLASSES) and list(CLASSES)[-1] == "other"
    assert [c.__name__.replace("_", "-") for c in ORDER] == list(CLASSES)[:-1]


# ---- one test per class (values) --------------------------------------------------------------


def test_nan():
    d = hand(Expectation.exact("float", np.array([1.5], F32)), [0x7FC00000])
    assert d.cls == "nan" and d.rule is None and "(1.5)" in d.detail


def test_number_for_nan():
    e = Expectation("float", [np.array([0x7FC00000], np.uint32)], np.ones(1, bool), np.ones(1, bool))
    assert hand(e, [f32(0.0)]).cls == "number-for-nan"


def test_nan_payload():
    e = Expectation.exact("float", np.array([0x7FC00001], np.uint32).view(F32))  # as_T keeps the payload
    d = hand(e, [0x7FC00000])
    assert d.cls == "nan-payload" and "0x7fc00001" in d.detail


def test_signed_zero():
    d = hand(Expectation.exact("float", np.array([0.0], F32)), [0x80000000])
    assert d.cls == "signed-zero" and d.detail.startswith("-0 where +0")


def test_flushed_result():
    d = hand(Expectation.exact("float", np.array([1e-40], F32)), [0])
    assert d.cls == "flushed" and "denormal result" in d.detail


def test_flushed_operand():
    """a + b with a denormal: the actual is b, the sum with a read as 0 (§7.2 allows it only
    where the device does not support denormals; the oracle here was told it does)."""
    p = program(lambda a, b: Op("arith", (a, b), Type("float"), (("operator", "+"),)),
                {"a": "float", "b": "float"}, "float", {"a": [3e-39, 1.0], "b": [1e-37, 2.0]})
    d = deviation(p, {0: F32(1e-37)})
    assert d.cls == "flushed" and "a = " in d.detail and "read as 0" in d.detail


def test_unsaturated_conversion_and_add_sat():
    p = program(lambda a: Op("convert", (a,), Type("char"), (("sat", True),)), {"a": "int"}, "char",
                {"a": [300, 5, -7, 1000]})
    d = deviation(p, {0: np.int8(44)})
    assert d.cls == "unsaturated" and "300 modulo 2^8" in d.detail and "127" in d.detail
    p = program(lambda a, b: Op("add_sat", (a, b), Type("uchar")), {"a": "uchar", "b": "uchar"}, "uchar",
                {"a": [200, 1, 2, 3], "b": [100, 1, 1, 1]})
    assert deviation(p, {0: np.uint8(44)}).cls == "unsaturated"


def test_wrong_rounding_of_a_conversion():
    """convert_int(2.5f) rounds toward zero (§6.4.3.2): 3 is rtp; convert_float(2^24 + 1) rounds
    to nearest even: 2^24 + 2 is rtp."""
    p = program(lambda a: Op("convert", (a,), Type("int")), {"a": "float"}, "int", {"a": [2.5, 7.25, -1.5, 9.0]})
    d = deviation(p, {0: np.int32(3)})
    assert d.cls == "wrong-rounding" and "(rtp)" in d.detail and "rtz applies" in d.detail
    p = program(lambda a: Op("convert", (a,), Type("float")), {"a": "int"}, "float", {"a": [2**24 + 1, 3, 4, 5]})
    assert deviation(p, {0: F32(2**24 + 2)}).cls == "wrong-rounding"


def test_wrong_rounding_of_a_tiny_operand_to_an_integer_is_no_flush():
    """Oclgrind: convert_short_rtn(-0x1p-149f) is -1 (OpenCL C 3.0.19 §6.4.3.2, rtn: toward -inf;
    the exact value is negative) and it returned 0. 0 is also the conversion of the operand flushed
    to -0, but no integer result is a flush (§7.2 lets denormal inputs and outputs of float
    operations be flushed): the class is wrong-rounding, checked before flushed, and the lane keeps
    the conversion's rule (a violation). A float zero where a denormal was expected stays flushed."""
    p = program(lambda a: Op("convert", (a,), Type("short"), (("rounding", "rtn"),)), {"a": "float"}, "short",
                {"a": [-(2.0**-149), 1.5, -2.5, 3.0]})
    inputs, exp, actual, expectations = run(p, {0: np.int16(0)})
    assert int(exp.allowed[0][0]) == 0xFFFF  # -1
    d = classify(p, p.body[0], "o", exp, actual, inputs, 0)
    assert d.cls == "wrong-rounding" and d.rule is None
    assert "-0x1p-149" in d.detail and "rtn applies" in d.detail and "toward zero (rtz)" in d.detail
    row = judge(p, expectations, {"o": actual}, inputs).rows[0]
    assert row["deviation"] == "wrong-rounding" and rules.severity_of(row["rule"]) == "violation"
    assert hand(Expectation.exact("float", np.array([1e-40], F32)), [0]).cls == "flushed"


def test_wrong_rounding_of_a_correctly_rounded_reference():
    third = 1 / 3
    e = Expectation.exact("float", np.array([third], F32))
    e.error = ErrorScale(np.array([third]), np.array([third - float(np.float64(third))]),
                         np.array([2.0**-25]), np.array([0.0]))
    d = hand(e, [f32(third) - 1])
    assert d.cls == "wrong-rounding" and "toward" in d.detail


def test_smallest_normal_for_nextafter_at_the_other_zero_is_a_letter():
    """rusticl without denormals: nextafter(-0, -1) = -FLT_MIN. OpenCL C 3.0.19 §7.5.3 lets a device
    that flushes denormals return the smallest normal for nextafter(+0, y < 0) and nextafter(-0,
    y > 0) ("a device may choose to conform to the following edge cases for nextafter instead");
    for -0 with y < 0 (and +0 with y > 0) it names nothing: the general cases allow -0x1p-149 and,
    flushed, ±0. -FLT_MIN is then a deviation from the letter (severity letter), not a violation;
    on a device with denormals it stays a violation of the function's rule."""
    p = program(lambda x, y: Op("nextafter", (x, y), Type("float")), {"x": "float", "y": "float"}, "float",
                {"x": [-0.0, 0.0, -0.0, 1.0], "y": [-1.0, 1.0, 1.0, 2.0]})
    inputs = input_values(p)
    exp = expected(p, frozenset({"float"}), inputs)["o"]
    tiny = 2.0**-126
    actual = np.array([f32(-tiny), f32(tiny), f32(tiny), f32(np.nextafter(F32(1), F32(2)))], np.uint32)
    assert list(exp.accepts(actual)) == [False, False, True, True]  # the named cases take FLT_MIN
    for pos in (0, 1):
        d = classify(p, p.body[0], "o", exp, actual, inputs, pos)
        r = rules.rule(d.rule)
        assert d.cls == "smallest-normal" and r.id == "math.nextafter.ftz.letter" and r.severity == "letter"
        assert "§7.5.3" in r.section and "may choose to conform" in r.section
    row = judge(p, {"o": exp}, {"o": actual}, inputs).rows[0]
    assert row["rule"] == "math.nextafter.ftz.letter" and rules.severity_of(row["rule"]) == "letter"
    strict = expected(p, frozenset(), inputs)["o"]  # denormals supported: -0x1p-149 only
    d = classify(p, p.body[0], "o", strict, actual, inputs, 0)
    assert d.cls != "smallest-normal" and d.rule is None
    assert rules.severity_of(judge(p, {"o": strict}, {"o": actual}, inputs).rows[0]["rule"]) == "violation"


def test_operand():
    p = program(lambda a, b: Op("arith", (a, b), Type("int"), (("operator", "+"),)), {"a": "int", "b": "int"}, "int",
                {"a": [11, 20, 30, 40], "b": [1000, 2000, 3000, 4000]})
    d = deviation(p, {0: np.int32(1000)})
    assert d.cls == "operand" and "b" in d.detail


def test_other_lane():
    p = program(lambda a: a, {"a": "int4"}, "int4", {"a": [1, 2, 3, 4, 5, 6, 7, 8]})
    d = deviation(p, {1: np.int32(4)})
    assert d.cls == "other-lane" and ".w" in d.detail and ".y" in d.detail


def test_type_limit():
    p = program(lambda a: a, {"a": "int"}, "int", {"a": [5, 6, 7, 8]})
    d = deviation(p, {0: np.int32(2**31 - 1)})
    assert d.cls == "type-limit" and d.detail.startswith("INT_MAX")
    d = hand(Expectation.exact("float", np.array([3.0], F32)), [f32(np.inf)])
    assert d.cls == "type-limit" and d.detail.startswith("INFINITY")


def test_off_by_ulps():
    d = hand(Expectation.exact("float", np.array([1.0], F32)), [f32(1.0) + 2])
    assert d.cls == "off-by-ulps" and d.detail.startswith("2 ulp")
    p = program(lambda a: a, {"a": "int"}, "int", {"a": [5, 600, 7, 8]})
    assert deviation(p, {1: np.int32(601)}).detail.startswith("1 from")


def test_other_item():
    p = program(lambda a: a, {"a": "int"}, "int", {"a": [100 + 37 * k for k in range(16)]})
    d = deviation(p, {3: np.int32(100 + 37 * 5)})
    assert d.cls == "other-item" and "work-item 5" in d.detail and "+2" in d.detail


def test_common_values_are_not_other_lanes_or_items():
    """A value half the buffer expects says nothing about where it came from."""
    p = program(lambda a: a, {"a": "int"}, "int", {"a": [3, 900] * 8})
    assert deviation(p, {0: np.int32(900)}).cls == "other"


def test_other():
    d = hand(Expectation.exact("float", np.array([1.0], F32)), [f32(12345.0)])
    assert d == Deviation("other", "none of the recognisable wrong values")


# ---- image reads: one test per image rule -------------------------------------------------------


def image_program(dim, shape, texels, coords, sampler, order="R", channel="FLOAT", result="float") -> Program:
    """One read of an image with the given stored channels at each work-item's coordinates."""
    storage = {"FLOAT": "float", "HALF_FLOAT": "half", "SIGNED_INT32": "int", "UNORM_INT8": "uchar"}[channel]
    image = Image("img", dim, order, channel, shape, Fill(0, values=_bits(texels, storage)))
    kind = "int" if isinstance(coords[0][0], int) else "float"
    coord_t = Type(kind, len(coords[0]))
    op = Op("read_image", (Load("c", coord_t),), Type(result, 4),
            (("dim", dim), ("form", read_form(sampler)), ("image", "img"), ("sampler", sampler.name if sampler else "")))
    c = Buffer("c", coord_t, "in", Fill(0, values=_bits(np.ravel(coords), kind)))
    return Program((c, Buffer("o", Type(result, 4), "out")), (Store("o", op),), len(coords), area="images",
                   images=(image,), samplers=(sampler,) if sampler else ())


def read_wrong(p: Program, item: int, vector, lane: int | None = None) -> tuple[Deviation, dict]:
    """Judge the read with work-item ``item`` returning ``vector``; the first wrong lane's
    deviation and its judge row."""
    inputs, exp, actual, expectations = run(p, {item * 4 + k: v for k, v in enumerate(vector)})
    bad = np.flatnonzero(~exp.accepts(actual))
    pos = int(bad[0]) if lane is None else item * 4 + lane
    assert pos in bad
    row = next(r for r in judge(p, expectations, {"o": actual}, inputs).rows if r["lane"] == pos)
    return classify(p, p.body[0], "o", exp, actual, inputs, pos), row


LAYERED = np.repeat(np.arange(4, dtype=F32) * 100, 2) + np.tile(np.array([1, 2], F32), 4)  # layer L: 100L+1, 100L+2


def test_image_layer_other_layers_texel():
    """§8.4: the layer is clamp(rint(w), 0, count - 1); a read of layer 2's texel at w = 1.0
    breaks the layer rule, whatever rule the lane was judged under."""
    p = image_program("1d_array", (2, 4), LAYERED, [[0.5, 1.0], [1.5, 3.0]], Sampler("s", False, "clamp", "nearest"))
    d, row = read_wrong(p, 0, [201.0, 0.0, 0.0, 1.0])
    assert d.cls == "other-layer" and rules.rule(d.rule).id == "image.layer" and "layer 2" in d.detail
    assert row["rule"] == "image.layer" and row["deviation"] == "other-layer" and row["kind"] == "wrong-result"


def test_image_layer_and_missing_alpha_together():
    """PoCL 3.1 on an R/SIGNED_INT32 array: layer floor(w + 0.5) and alpha 0 in one read; the
    stored channel names the layer rule, the alpha lane the channel mapping (§6.15.15.7)."""
    texels = np.arange(8) * 10 + 1  # layer L: 20L+1, 20L+11
    p = image_program("1d_array", (2, 4), texels, [[0.5, 2.5]], Sampler("s", False, "clamp_to_edge", "nearest"),
                      channel="SIGNED_INT32", result="int")
    d, row = read_wrong(p, 0, [61, 0, 0, 0], lane=0)  # layer 3 (floor(3.0)) where rint(2.5) = 2
    assert d.cls == "other-layer" and row["rule"] == "image.layer" and "layer 3" in d.detail
    d, row = read_wrong(p, 0, [61, 0, 0, 0], lane=3)
    assert d.cls == "missing-channel" and row["rule"] == "image.texel"


def test_image_layer_named_instead_of_the_conversion_rule():
    """The PoCL case: a UNORM array read judged under image.unorm (§8.3.1) returns another
    layer's texel; the row names image.layer, not image.unorm."""
    codes = np.array([[10, 20, 30, 40], [200, 210, 220, 230]], np.uint8).ravel()  # 1 texel per layer, RGBA
    p = image_program("2d_array", (1, 1, 2), codes, [[0.0, 0.0, 0.0, 0.0]], Sampler("s", False, "clamp_to_edge",
                      "nearest"), order="RGBA", channel="UNORM_INT8")
    _, exp, _, _ = run(p, {})
    assert rules.rule(int(exp.rule[0])).id == "image.unorm"
    d, row = read_wrong(p, 0, [np.float32(c / 255) for c in (200, 210, 220, 230)])
    assert d.cls == "other-layer" and row["rule"] == "image.layer"


def test_image_layer_under_a_tolerance_sampler():
    """Normalized coordinates leave the texel uncertain (image.nearest.tolerance), never the layer."""
    p = image_program("1d_array", (2, 4), LAYERED, [[0.25, 1.0]], Sampler("s", True, "repeat", "nearest"))
    d, row = read_wrong(p, 0, [301.0, 0.0, 0.0, 1.0])
    assert d.cls == "other-layer" and row["rule"] == "image.layer"


def test_image_layer_under_linear_filtering():
    """LINEAR (image.linear.tolerance): a blend of layer 3's texels where layer 1 is selected."""
    p = image_program("1d_array", (2, 4), LAYERED, [[1.0, 1.0]], Sampler("s", False, "clamp_to_edge", "linear"))
    _, exp, _, _ = run(p, {})
    assert rules.rule(int(exp.rule[0])).id == "image.linear.tolerance"
    d, row = read_wrong(p, 0, [301.5, 0.0, 0.0, 1.0])
    assert d.cls == "other-layer" and "layer 3" in d.detail and row["rule"] == "image.layer"
    assert row["kind"] == "wrong-result"  # the layer rule is not a tolerance


def test_a_few_ulps_outside_a_tolerance_stay_imprecise():
    """A value 3 ulp above layer 0's LINEAR hull that is also layer 1's texel (layers of nearby
    values) stays off-by-ulps under image.linear.tolerance (imprecise), not image.layer."""
    sampler = Sampler("s", False, "clamp_to_edge", "linear")
    first = image_program("1d_array", (2, 2), [101.0, 102.0, 0.0, 0.0], [[1.0, 0.0]], sampler)
    hi = run(first, {})[1].ranges[0][1][0]
    wrong = (np.array(hi, F32).view(np.uint32) + 3).view(F32)
    p = image_program("1d_array", (2, 2), [101.0, 102.0, wrong, wrong], [[1.0, 0.0]], sampler)
    d, row = read_wrong(p, 0, [wrong, 0.0, 0.0, 1.0])
    assert d.cls == "off-by-ulps" and d.detail.startswith("3 ulp")
    assert row["kind"] == "imprecise-result" and row["rule"] == "image.linear.tolerance"


def test_image_coordinate_denormal_flushed():
    """NVIDIA's case: u = -1e-45 floors to -1, outside: CLAMP's border colour (0,0,0,1) for R;
    the read returned texel 0, as if u were 0: a deviation by the letter of §8.2."""
    p = image_program("1d", (4,), [10.0, 11.0, 12.0, 13.0], [[-1e-45], [2.0]], Sampler("s", False, "clamp", "nearest"))
    d, row = read_wrong(p, 0, [10.0, 0.0, 0.0, 1.0])
    assert d.cls == "flushed-coordinate" and "border colour" in d.detail
    r = rules.rule(d.rule)
    assert r.id == "image.coordinate.denormal" and r.severity == "letter" and "§8.2" in r.section
    assert "neither shall nor should" in r.section
    assert row["rule"] == "image.coordinate.denormal" and rules.severity_of(row["rule"]) == "letter"


def test_image_half_no_texel_value_breaks_the_lossless_conversion_through_any_sampler():
    """PoCL 3.1: 234.0 from a HALF_FLOAT image whose texels hold 1.5, 2.5, 3.5 and 4.5. Through a
    normalized NEAREST sampler at s = 0.5 (u = 2.0, on the seam of texels 1 and 2) the lane is
    judged under image.nearest.tolerance (either texel); 234.0 is neither, nor any texel of the
    image: whichever texel is read, its half value was not converted losslessly (OpenCL C 3.0.19
    §8.3.2: "the conversions from half to float are lossless", a definition), as the exact
    sampler's lane says. A value another texel holds stays a tolerance miss."""
    texels = [1.5, 2.5, 3.5, 4.5]
    p = image_program("1d", (4,), texels, [[0.5]], Sampler("s", True, "clamp_to_edge", "nearest"),
                      channel="HALF_FLOAT")
    _, exp, _, _ = run(p, {})
    assert rules.rule(int(exp.rule[0])).id == "image.nearest.tolerance"
    d, row = read_wrong(p, 0, [234.0, 0.0, 0.0, 1.0])
    r = rules.rule(d.rule)
    assert r.id == row["rule"] == "image.half" and r.severity == "violation" and row["kind"] == "wrong-result"
    assert "§8.3.2" in r.section and "lossless" in r.section
    d, row = read_wrong(p, 0, [4.5, 0.0, 0.0, 1.0])  # texel 3: a texel's value, the coordinate missed
    assert d.cls == "other-texel" and row["rule"] == "image.nearest.tolerance" and row["kind"] == "imprecise-result"
    exact = image_program("1d", (4,), texels, [[2.0]], Sampler("s", False, "clamp_to_edge", "nearest"),
                          channel="HALF_FLOAT")
    _, row = read_wrong(exact, 0, [234.0, 0.0, 0.0, 1.0])
    assert row["rule"] == "image.half"  # the bucket that was right: the same rule, one bug


def test_image_layer_outside_the_array_is_clamped_whatever_the_sampler():
    """NVIDIA: a read of layer coordinate 7 of a 4-layer array under CLK_ADDRESS_NONE returned
    R's border colour (0,0,0,1). The array index is always addressed CLAMP_TO_EDGE (OpenCL C
    3.0.19 §6.15.15.1) and the layer is clamp(rint(7), 0, 3) = 3 (§8.4), whose texel holds 302:
    the lane's rule is image.layer, not image.texel. The same with CLAMP_TO_EDGE and 0 read in
    the stored channel, and below the array (-2 reads layer 0)."""
    p = image_program("1d_array", (2, 4), LAYERED, [[1.0, 7.0], [0.0, -2.0]], Sampler("s", False, "none", "nearest"))
    _, exp, _, _ = run(p, {})
    assert [rules.rule(int(exp.rule[k])).id for k in (0, 4)] == ["image.layer"] * 2
    assert [float(exp.reference[k]) for k in (0, 4)] == [302.0, 1.0]
    d, row = read_wrong(p, 0, [0.0, 0.0, 0.0, 1.0])
    r = rules.rule(d.rule)
    assert d.cls == "border-colour" and r.id == row["rule"] == "image.layer" and r.severity == "violation"
    assert "§6.15.15.1" in r.section and "CLK_ADDRESS_CLAMP_TO_EDGE" in r.section and "§8.4" in r.section
    assert "outside the array" in d.detail
    edge = image_program("1d_array", (2, 4), LAYERED, [[1.0, 7.0]], Sampler("s", False, "clamp_to_edge", "nearest"))
    d, row = read_wrong(edge, 0, [0.0, 0.0, 0.0, 1.0])
    assert d.cls == "missing-channel" and row["rule"] == "image.layer"
    d, row = read_wrong(p, 1, [0.0, 0.0, 0.0, 1.0])
    assert row["rule"] == "image.layer"


def test_image_border_colour_where_a_texel_was_selected():
    p = image_program("1d", (4,), [10.0, 11.0, 12.0, 13.0], [[3.5]], Sampler("s", False, "clamp", "nearest"))
    d, row = read_wrong(p, 0, [0.0, 0.0, 0.0, 1.0])
    assert d.cls == "border-colour" and row["rule"] == "image.texel" and "(3)" in d.detail


def test_image_border_colour_of_another_order():
    """§6.15.15.1.1: R's border colour is (0,0,0,1); (0,0,0,0) is the four-channel orders'."""
    p = image_program("1d", (4,), [10.0, 11.0, 12.0, 13.0], [[7.0]], Sampler("s", False, "clamp", "nearest"))
    d, row = read_wrong(p, 0, [0.0, 0.0, 0.0, 0.0])
    assert d.cls == "border-colour" and row["rule"] == "image.border" and "(0, 0, 0, 1)" in d.detail


def test_image_border_colour_read_through_address_none():
    """Oclgrind (regression b1d6e57b): a normalized LINEAR read with ADDRESS_NONE inside an RG
    image returns RG's border colour (0,0,0,1); under a tolerance rule the lane keeps its rule."""
    codes = np.array([-128, -87, -100, -40], np.int8)
    image = Image("img", "1d", "RG", "SNORM_INT8", (2,), Fill(0, values=tuple(int(c) & 0xFF for c in codes)))
    coord = Type("float")
    op = Op("read_image", (Load("c", coord),), Type("float", 4),
            (("dim", "1d"), ("form", read_form(Sampler("s", True, "none", "linear"))), ("image", "img"),
             ("sampler", "s")))
    p = Program((Buffer("c", coord, "in", Fill(0, values=_bits([0.5], "float"))), Buffer("o", Type("float", 4), "out")),
                (Store("o", op),), 1, area="images", images=(image,), samplers=(Sampler("s", True, "none", "linear"),))
    d, row = read_wrong(p, 0, [0.0, 0.0, 0.0, 1.0])
    assert d.cls == "border-colour" and "ADDRESS_NONE" in d.detail
    assert row["rule"] == "image.linear.tolerance" and row["kind"] == "imprecise-result"


def test_a_computed_nan_is_no_texel():
    """A NaN where a number was expected is the nan class even where a texel stores those bits."""
    texels = np.array([1.0, 2.0, 0.0], F32)
    texels[2] = np.uint32(0xFFC00000).view(F32)
    p = image_program("1d", (3,), texels, [[0]], None)
    d, _ = read_wrong(p, 0, [np.uint32(0xFFC00000).view(F32), 0.0, 0.0, 1.0])
    assert d.cls == "nan"


def test_image_texel_another_texel():
    p = image_program("2d", (3, 2), np.arange(6, dtype=F32) + 10, [[1.5, 0.5]], Sampler("s", False, "clamp_to_edge",
                      "nearest"))
    d, row = read_wrong(p, 0, [12.0, 0.0, 0.0, 1.0])  # texel (2, 0) where (1, 0) is selected
    assert d.cls == "other-texel" and row["rule"] == "image.texel" and "(2, 0)" in d.detail and "(1, 0)" in d.detail


def test_image_border_expected_edge_texel_read():
    """CLAMP read as CLAMP_TO_EDGE: the edge texel where the border colour was expected."""
    p = image_program("1d", (4,), [10.0, 11.0, 12.0, 13.0], [[5.0]], Sampler("s", False, "clamp", "nearest"))
    d, row = read_wrong(p, 0, [13.0, 0.0, 0.0, 1.0])
    assert d.cls == "other-texel" and row["rule"] == "image.border" and "edge texel" in d.detail


def test_image_texel_missing_channel_constant():
    """§6.15.15.7: an R image reads as (r, 0, 0, 1); PoCL's read_imagei gave alpha 0."""
    p = image_program("2d", (3, 2), np.arange(6) + 7, [[1, 1], [2, 0]], None, channel="SIGNED_INT32", result="int")
    d, row = read_wrong(p, 1, [9, 0, 0, 0])
    assert d.cls == "missing-channel" and row["rule"] == "image.texel" and "lane w" in d.detail


def test_image_texel_stored_channel_read_as_missing():
    codes = np.array([100, 150, 200, 250], np.uint8)
    p = image_program("1d", (1,), codes, [[0]], None, order="RGBA", channel="UNORM_INT8")
    d, row = read_wrong(p, 0, [100 / 255, 150 / 255, 0.0, 250 / 255])
    assert d.cls == "missing-channel" and row["rule"] == "image.texel" and "channel b" in d.detail


def test_image_unorm_off_by_ulps_keeps_its_rule():
    """§8.3.1: within 1.5 ulp; 4 ulp out of the interval stays the conversion's rule."""
    codes = np.array([100, 150, 200, 250], np.uint8)
    p = image_program("1d", (1,), codes, [[0]], None, order="RGBA", channel="UNORM_INT8")
    _, exp, _, _ = run(p, {})
    hi = float(exp.ranges[0][1][0])
    wrong = np.array(hi, F32).view(np.uint32) + 4
    d, row = read_wrong(p, 0, [wrong.view(F32), 150 / 255, 200 / 255, 250 / 255])
    assert d.cls == "off-by-ulps" and d.detail.startswith("4 ulp outside") and row["rule"] == "image.unorm"


# ---- the judge ---------------------------------------------------------------------------------


def test_rows_carry_the_deviation_and_verdicts_do_not_change():
    p = program(lambda a: a, {"a": "int4"}, "int4", {"a": list(range(40, 72))})
    inputs, exp, actual, expectations = run(p, {1: np.int32(43), 6: np.int32(2**31 - 1), 9: np.int32(1049),
                                                13: np.int32(56)})
    v = judge(p, expectations, {"o": actual}, inputs)
    assert v.mismatches == int((~exp.accepts(actual)).sum()) == 4
    assert [(r["lane"], r["deviation"]) for r in v.rows] == [(1, "other-lane"), (6, "type-limit"), (9, "other"),
                                                             (13, "off-by-ulps")]
    assert all(r["deviation_detail"] and r["rule"] == rules.rule(int(exp.rule[r["lane"]])).id for r in v.rows)


def test_rows_past_the_explained_cap_are_unclassified():
    """The reducer asks for every wrong lane (max_rows raised); only the first ``explained`` rows
    of a statement are classified, the others stored unclassified (None) under the lane's rule."""
    p = program(lambda a: a, {"a": "int"}, "int", {"a": list(range(100, 132))})
    inputs, _, actual, expectations = run(p, {k: np.int32(2**31 - 1) for k in range(0, 32, 2)})
    rows = judge(p, expectations, {"o": actual}, inputs, max_rows=1000, explained=3).rows
    assert len(rows) == 16
    assert [r["deviation"] for r in rows] == ["type-limit"] * 3 + [None] * 13
    assert all(r["deviation_detail"] is None for r in rows[3:])


def test_a_failing_check_is_reported_not_raised(monkeypatch):
    from oracles.deviation import classifier as deviation_module

    def broken(ctx, pos):
        raise RuntimeError("boom")

    broken.__name__ = "nan"
    monkeypatch.setattr(deviation_module, "ORDER", (broken,))
    d = hand(Expectation.exact("float", np.array([1.0], F32)), [f32(2.0)])
    assert d.cls == "other" and "boom" in d.detail


@pytest.mark.parametrize("area", ["conversions", "expressions", "images"])
def test_generated_programs_with_tampered_lanes_classify_without_failing(area):
    """Every wrong lane of generated programs gets a declared class and no check fails on it."""
    from fuzz.strategies.conversions import Caps, conversion_programs
    from fuzz.strategies.draws import sample
    from fuzz.strategies.expressions import expression_programs
    from fuzz.strategies.images import image_programs
    from lang.policy import Policy

    small = Policy(statements=6, global_size=32, image_statements=4, image_global_size=32)
    strategy = {"conversions": conversion_programs, "expressions": expression_programs,
                "images": image_programs}[area](Caps(fp64=True), small)
    rng = np.random.default_rng(5)
    seen = set()
    for p in sample(strategy, 6, seed=3):
        inputs = input_values(p)
        expectations = expected(p, frozenset(), inputs)
        actual = {}
        for name, e in expectations.items():
            bits = e.allowed[0].copy()
            flip = rng.random(len(bits)) < 0.2
            bits[flip] ^= (np.uint64(1) << rng.integers(0, bits.dtype.itemsize * 8, flip.sum()).astype(np.uint64)).astype(
                bits.dtype)
            actual[name] = bits.view(scalar(e.scalar).dtype)
        for r in judge(p, expectations, actual, inputs).rows:
            assert r["deviation"] in CLASSES and "check failed" not in r["deviation_detail"], r
            seen.add(r["deviation"])
    assert seen
