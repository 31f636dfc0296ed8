"""The reference interpreter's own rules, each against an independent computation."""

from fractions import Fraction

import numpy as np
import pytest
from exact import round_to_float
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lang.ir import Buffer, Fill, Literal, Load, Op, Program, Store
from lang.layout import input_values
from lang.types import Type, common_type, scalar
from oracles import UndefinedBehaviour, arith_is_defined, expected


def _rte_float32(q: Fraction) -> int:
    """Independent binary32 round-to-nearest-even of an exact rational, as bits (tests/exact.py)."""
    return round_to_float(q, q < 0, "float", "rte")[0]


def _program(op: str, operator: str, x_t: str, y_t: str, xs, ys) -> Program:
    t = Type(common_type(x_t, y_t))
    x = Literal(Type(x_t), (int(np.array([xs], scalar(x_t).dtype).view(scalar(x_t).bits_dtype)[0]),))
    y = Literal(Type(y_t), (int(np.array([ys], scalar(y_t).dtype).view(scalar(y_t).bits_dtype)[0]),))
    return Program((Buffer("out0", t, "out"),), (Store("out0", Op(op, (x, y), t, (("operator", operator),))),), 1)


@pytest.mark.parametrize("a, b, c", [
    ("uint", "int", "uint"), ("long", "uint", "long"), ("ulong", "int", "ulong"), ("char", "uchar", "int"),
    ("int", "float", "float"), ("double", "float", "double"), ("ushort", "short", "int"), ("uint", "long", "long"),
])
def test_common_type_c99_examples(a, b, c):
    """C99 §6.3.1.8 worked by hand."""
    assert common_type(a, b) == c == common_type(b, a)


@pytest.mark.parametrize("op", ["+", "-", "*"])
@pytest.mark.parametrize("a", ["char", "uchar", "short", "ushort"])
@pytest.mark.parametrize("b", ["char", "uchar", "short", "ushort"])
def test_arith_is_defined_matches_brute_force(op, a, b):
    """Defined iff no operand pair overflows int (the promoted type), checked at the corners."""
    sa, sb = scalar(a), scalar(b)
    results = [eval(f"{x}{op}{y}") for x in range(sa.min, sa.max + 1, max(1, (sa.max - sa.min) // 64))
               for y in (sb.min, sb.max, 0, 1)] + [eval(f"{x}{op}{y}") for x in (sa.min, sa.max) for y in (sb.min, sb.max)]
    fits = all(-(2**31) <= r < 2**31 for r in results)
    assert arith_is_defined(op, a, b) == fits


@settings(max_examples=300, deadline=None)
@given(x=st.integers(-(2**31), 2**31 - 1), y=st.floats(width=32, allow_nan=False, allow_infinity=False),
       operator=st.sampled_from("+-*"))
@example(x=16777217, y=0.0, operator="+")  # the int rounds to 2^24 first (rte, §6.4.3.2)
@example(x=1, y=2.0**-24, operator="+")
def test_int_plus_float_is_correctly_rounded(x, y, operator):
    """int op float: the int converts to float (rte), then the operation rounds once (§7.4)."""
    xf = Fraction(int(np.array([_rte_float32(Fraction(x))], np.uint32).view(np.float32)[0]))
    yf = Fraction(float(np.float32(y)))
    exact = xf + yf if operator == "+" else xf - yf if operator == "-" else xf * yf
    e = expected(_program("arith", operator, "int", "float", x, np.float32(y)))["out0"]
    want = _rte_float32(exact)
    if exact == 0 and operator == "*" and np.signbit(np.float32(y)) and x >= 0:
        want = 0x80000000  # IEEE 754 §6.3: the sign of a zero product is the xor of the signs (x is +0 or > 0)
    if exact == 0 and operator == "*" and not np.signbit(np.float32(y)) and x < 0:
        want = 0x80000000
    assert int(e.allowed[0][0]) == want


@settings(max_examples=200, deadline=None)
@given(x=st.integers(0, 2**32 - 1), y=st.integers(-128, 127), operator=st.sampled_from("+-*"))
def test_unsigned_common_type_wraps(x, y, operator):
    """char op uint: the char converts to uint modulo 2^32, the result wraps (C99 §6.2.5p9)."""
    want = eval(f"{x} {operator} {y % 2**32}") % 2**32
    e = expected(_program("arith", operator, "uint", "char", x, y))["out0"]
    assert int(e.allowed[0][0]) == want


def test_signed_overflow_is_refused():
    """The oracle never judges undefined behaviour: it raises (a generator bug)."""
    with pytest.raises(UndefinedBehaviour):
        expected(_program("arith", "+", "long", "int", 2**63 - 1, 1))


def test_float_ftz_allows_flushed_result():
    """With float denormals flushed (§7.5.3), a subnormal sum may be ±0."""
    tiny = np.float32(2.0**-140)
    p = _program("arith", "+", "float", "float", tiny, tiny)
    strict = expected(p)["out0"]
    assert len(strict.allowed) == 1
    relaxed = expected(p, frozenset({"float"}))["out0"]
    allowed = {int(a[0]) for a in relaxed.allowed}
    assert {0, 0x80000000, int(np.float32(2.0**-139).view(np.uint32))} <= allowed


def _load_program(src: Type, dst: Type, op: str, pool: tuple[int, ...], n: int = 64) -> Program:
    return Program((Buffer("in0", src, "in", Fill(7, pool)), Buffer("out0", dst, "out")),
                   (Store("out0", Op(op, (Load("in0", src),), dst)),), n)


def test_as_4_to_3_passes_xyz_and_never_judges_padding():
    """§6.4.4: as_float3(int4) keeps the bits of x, y, z; lane w (padding) is not judged."""
    p = _load_program(Type("int", 4), Type("float", 3), "as", (1, 0x7FC00001, 0xFFFFFFFF))
    e = expected(p)["out0"]
    raw = input_values(p)["in0"].view(np.uint32).reshape(-1, 4)
    got = e.allowed[0].reshape(-1, 4)
    assert np.array_equal(got[:, :3], raw[:, :3])
    assert not e.judged.reshape(-1, 4)[:, 3].any()
    assert e.judged.reshape(-1, 4)[:, :3].all()


def test_as_different_lane_count_is_never_judged():
    """§6.4.4: as_short2(int) is implementation-defined in OpenCL C."""
    p = _load_program(Type("int", 1), Type("short", 2), "as", (1,))
    assert not expected(p)["out0"].judged.any()


def test_cast_scalar_to_vector_replicates_the_rtz_conversion():
    """§6.4.2: (int4)f converts f with rtz and replicates it in every lane."""
    pool = tuple(int(b) for b in np.array([2.7, -2.7, 0.5], np.float32).view(np.uint32))
    p = _load_program(Type("float"), Type("int", 4), "cast", pool)
    e = expected(p)["out0"]
    src = input_values(p)["in0"]
    lanes = e.reference.reshape(-1, 4)
    judged = e.judged.reshape(-1, 4)
    for i, f in enumerate(src):
        if np.isfinite(f) and abs(f) < 2**31:
            assert judged[i].all() and (lanes[i] == int(f)).all()  # Python int() truncates: rtz
