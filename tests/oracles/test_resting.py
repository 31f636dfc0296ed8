"""A lane whose value is computed from a value the specification only recommends is decided by that
recommendation (oracles.interpreter.resting): OpenCL C 3.0.19 §6.4.3.3 says a saturated
conversion's NaN "should be converted to 0", so ``convert_double(convert_uchar_sat_rte(NaN))`` is
0.0 only as far as that should goes, and a driver giving 128.0 there breaks a recommendation, not
the exactness of the outer conversion (§6.4.3.2: a violation). Hand-worked lanes: which rule each
lane of a small program is judged under, and which value."""

from __future__ import annotations

from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from oracles import expected, rules

F4, UC4, D4, I4 = Type("float", 4), Type("uchar", 4), Type("double", 4), Type("int", 4)
NAN, BIG = 0x7FC00000, 0x60AD78EC  # a quiet NaN; 1e20 (outside int's range)
X = (NAN, 0x40200000, 0x43960000, 0xBF800000)  # NaN, 2.5, 300.0, -1.0


def _sat(arg, to: Type = UC4) -> Op:
    return Op("convert", (arg,), to, (("rounding", "rte"), ("sat", True)))


def _judged(value, out: Type = D4, x: tuple[int, ...] = X) -> tuple[list[str], list[float]]:
    program = Program((Buffer("in0", F4, "in", Fill(0, values=x)), Buffer("out0", out, "out")),
                      (Store("out0", value),), 1, requires=frozenset({"fp64"}))
    e = expected(program)["out0"]
    return [rules.rule(int(r)).id for r in e.rule], [float(v) for v in e.reference]


def test_a_conversion_of_a_saturated_nan_rests_on_the_should_lane_by_lane():
    ids, values = _judged(Op("convert", (_sat(Load("in0", F4)),), D4, ()))
    assert values == [0.0, 2.0, 255.0, 0.0]  # NaN -> 0 (should), 2.5 -> 2 (rte), 300 -> 255, -1 -> 0
    assert ids == ["convert.sat.nan", "convert.to_float.exact", "convert.to_float.exact", "convert.to_float.exact"]
    assert rules.by_id(ids[0]).severity == "recommendation"


def test_a_moved_lane_keeps_the_rule_it_rests_on():
    """``.wzyx`` moves the NaN lane to the last place; the lanes around it stay violations."""
    swizzled = Op("swizzle", (_sat(Load("in0", F4)),), UC4, (("components", (3, 2, 1, 0)), ("form", "xyzw")))
    ids, values = _judged(Op("convert", (swizzled,), D4, ()))
    assert values == [0.0, 255.0, 2.0, 0.0]
    assert ids == ["convert.to_float.exact", "convert.to_float.exact", "convert.to_float.exact", "convert.sat.nan"]


def test_a_geometric_function_rests_on_every_lane_of_its_operand():
    """normalize (OpenCL C 3.0.19 §6.15.5) reads the whole vector: each lane of its result rests
    on the recommended 0 of lane x."""
    floats = Op("convert", (_sat(Load("in0", F4), I4),), F4, ())
    ids, _ = _judged(Op("normalize", (floats,), F4, ()), F4)
    assert ids == ["convert.sat.nan"] * 4


def test_the_assignment_conversion_rests_on_the_stored_value():
    """A uchar4 stored into a double4 buffer converts as by assignment (§6.4.1)."""
    ids, values = _judged(_sat(Load("in0", F4)))
    assert values == [0.0, 2.0, 255.0, 0.0]
    assert ids == ["convert.sat.nan", "convert.to_float.exact", "convert.to_float.exact", "convert.to_float.exact"]


def test_an_unjudged_lane_keeps_its_reason_and_a_violation_stays_one():
    """Without _sat, 1e20 -> int is implementation-defined (§6.4.3.3): that lane is not judged and
    keeps the rule that says why; no lane here rests on a should."""
    ids, _ = _judged(Op("convert", (Op("convert", (Load("in0", F4),), I4, ()),), D4, ()),
                     x=(BIG, 0x40200000, 0x43960000, 0xBF800000))
    assert ids[0] == "convert.float_to_int.out_of_range"
    assert ids[1:] == ["convert.to_float.exact"] * 3
