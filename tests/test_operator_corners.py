"""The operators' corners (lang.corners.operators) and their sweep (fuzz.strategies.sweeps.operators):
every corner reached, and the keys of hand-worked operands as the spec sections say."""

from __future__ import annotations

import numpy as np

from fuzz.strategies import sweep_programs
from fuzz.strategies.conversions import Caps
from lang.corners import operators as operator_corners
from lang.corners import reached, table
from lang.ir import Buffer, Fill, Load, Op, Program, Store, validate
from lang.policy import Policy
from lang.types import Type, scalar

ALL_CAPS = Caps(fp64=True, fp16=True)


def test_the_sweeps_reach_every_operator_corner():
    want = {c for c in table() if c.op in operator_corners.OPERATIONS}
    got = set()
    for area in ("expressions", "conversions"):
        for p in sweep_programs(area, ALL_CAPS, Policy()):
            got |= reached(p)
    assert len(want) > 10_000 and not sorted(c.name for c in want - got)


def test_without_fp64_or_fp16_the_sweep_has_no_double_or_half():
    for area in ("expressions", "conversions"):
        for p in sweep_programs(area, Caps(), Policy()):
            assert not {"fp64", "fp16"} & p.requires


def _program(*statements: tuple[Op, dict[str, tuple[Type, list]]]) -> Program:
    """Statements ``op`` over input buffers named in its loads, given as (type, numbers)."""
    buffers, body = [], []
    for k, (op, inputs) in enumerate(statements):
        for name, (t, values) in inputs.items():
            s = scalar(t.scalar)
            bits = np.array(values, dtype=s.dtype).view(s.bits_dtype)
            buffers.append(Buffer(name, t, "in", Fill(0, (), values=tuple(int(b) for b in bits))))
        buffers.append(Buffer(f"o{k}", op.type, "out"))
        body.append(Store(f"o{k}", op))
    program = Program(tuple(buffers), tuple(body), 4, area="expressions")
    validate(program)
    return program


def _names(program: Program) -> set[str]:
    return {c.name for c in reached(program)}


def test_integer_arithmetic_keys_its_operands_and_where_the_exact_result_lies():
    """INT_MAX + 0 is MAX, INT_MIN + 0 is MIN, 5 + -7 is negative: in range, no overflow (C99 §6.5p5);
    UINT_MAX * 2 wraps (C99 §6.2.5p9)."""
    i, u = Type("int"), Type("uint")
    got = _names(_program(
        (Op("arith", (Load("x", i), Load("y", i)), i, (("operator", "+"),)),
         {"x": (i, [2**31 - 1, -(2**31), 5]), "y": (i, [0, 0, -7])}),
        (Op("arith", (Load("a", u), Load("b", u)), u, (("operator", "*"),)), {"a": (u, [2**32 - 1]), "b": (u, [2])})))
    assert {"arith:int:+:w1", "arith:int:+:result==max", "arith:int:+:result==min", "arith:int:+:result=in-",
            "arith:int:+:x=max", "arith:int:+:x=min", "arith:int:+:y=0", "arith:int:+:y=-small",
            "arith:uint:*:result=>max"} <= got


def test_a_division_keys_the_divisor_the_program_divides_by():
    """MIN / -1 and x / 0 are undefined (C99 §6.5.5): the program divides by 1 instead."""
    i = Type("int", 2)
    got = _names(_program((Op("div", (Load("x", i), Load("y", i)), i, (("operator", "/"),)),
                           {"x": (i, [-(2**31), 7]), "y": (i, [-1, 0])})))
    assert {"div:int:/:w2", "div:int:/:x=min,y=1", "div:int:/:x=+small,y=1"} <= got
    assert not {n for n in got if n.endswith("y=-1") or n.endswith("y=0")}


def test_a_shift_count_is_classed_against_the_lane_size():
    """§6.5.10: only the low log2(N) bits of the count count; for a char vector N is 8."""
    c = Type("char", 4)
    got = _names(_program((Op("shift", (Load("x", c), Load("n", c)), c, (("operator", ">>"),)),
                           {"x": (c, [-5, -5, 7, 0]), "n": (c, [8, 11, 7, -1])})))
    assert {"shift:char:>>:x=-,n=N", "shift:char:>>:x=-,n=beyond", "shift:char:>>:x=+,n=N-1",
            "shift:char:>>:x=0,n=neg"} <= got


def test_a_comparison_is_classed_in_the_type_it_compares_in():
    """-1 < 0u is false: both are compared as uint (C99 §6.3.1.8), -1 is UINT_MAX; -0 == +0 is a
    pair of classes of its own (IEEE 754 §5.11)."""
    i, u, f = Type("int"), Type("uint"), Type("float")
    got = _names(_program(
        (Op("compare", (Load("x", i), Load("y", u)), i, (("operator", "<"),)), {"x": (i, [-1]), "y": (u, [0])}),
        (Op("compare", (Load("a", f), Load("b", f)), i, (("operator", "=="),)),
         {"a": (f, [-0.0]), "b": (f, [0.0])})))
    assert {"compare:uint:<:gt", "compare:uint:<:w1", "compare:float:==:x=-0,y=+0"} <= got
    assert "compare:int:<:lt" not in got


def test_truth_values_conditions_and_msb_lanes():
    """-0 is false and NaN true (§6.5.7-§6.5.8); a vector select reads each condition lane's MSB
    (§6.15.6); any/all of lanes with no, some and every MSB set."""
    f, c4, i4 = Type("float"), Type("char", 4), Type("int", 4)
    got = _names(_program(
        (Op("logic", (Load("x", f), Load("y", f)), Type("int"), (("operator", "&&"),)),
         {"x": (f, [-0.0, float("nan")]), "y": (f, [1.0, 0.0])}),
        (Op("any", (Load("v", c4),), Type("int")), {"v": (c4, [0, 0, 0, 0, -1, 0, 0, 0, -1, -1, -1, -1])}),
        (Op("select", (Load("a", i4), Load("b", i4), Load("c", i4)), i4),
         {"a": (i4, [1]), "b": (i4, [2]), "c": (i4, [0, -1, 1, 0])})))
    assert {"logic:float:&&:x=-0", "logic:float:&&:x=nan", "logic:float:&&:y=0", "logic:float:&&:y=nz",
            "any:char:msb=none", "any:char:msb=some", "any:char:msb=all", "select:int:c=0:vector",
            "select:int:c=msb:vector", "select:int:c=low:vector"} <= got


def test_swizzle_halves_of_rvalues_and_the_undefined_lane_alone():
    """§6.3.7: .hi of a 3-component rvalue holds its undefined w lane; .s1 of it is that lane alone."""
    i4 = Type("int", 4)
    three = Op("swizzle", (Load("v", i4),), Type("int", 3), (("components", (2, 1, 0)), ("form", "s")))
    hi = Op("swizzle", (three,), Type("int", 2), (("components", (2, 3)), ("form", "hi")))
    lane = Op("swizzle", (hi,), Type("int"), (("components", (1,)), ("form", "s")))
    got = _names(_program((hi, {"v": (i4, [1, 2, 3, 4])}), (lane, {})))
    assert {"swizzle:int:s:w4:n3", "swizzle:int:hi:of-swizzle:w3", "swizzle:int:undefined-lane"} <= got


def test_a_shuffle_mask_with_bits_above_the_index():
    """§6.15.13: shuffle of a 4-vector reads 2 bits of each mask lane; 5 has a bit above them."""
    f4, u2 = Type("float", 4), Type("uint", 2)
    low = _names(_program((Op("shuffle", (Load("x", f4), Load("m", u2)), Type("float", 2)),
                           {"x": (f4, [1.0]), "m": (u2, [0, 3])})))
    high = _names(_program((Op("shuffle", (Load("x", f4), Load("m", u2)), Type("float", 2)),
                            {"x": (f4, [1.0]), "m": (u2, [0, 5])})))
    assert "shuffle:float:w4:n2" in low and "shuffle:float:mask=high" not in low
    assert "shuffle:float:mask=high" in high
