"""The expression references against Python integers and floats, one independent formula per
construct taken from the spec's wording, for every integer type and for scalar and vector widths,
and hand-worked examples from OpenCL C 3.0 §6.3.7, §6.5, §6.15.3, §6.15.6 and §6.15.13.

Nothing here calls the oracle's helpers: values go in as numpy arrays and come out as bit
patterns, which are compared with what plain Python arithmetic on the decoded values gives."""

from __future__ import annotations

import math

import numpy as np
import pytest
from exact import INTS, NP, UNSIGNED, int_range

from fuzz.strategies.values import edge_bits
from lang.ir import InvalidProgram, Literal, Load, Op
from lang.types import Type
from oracles import REFERENCES, Expectation, UndefinedBehaviour

RNG = np.random.default_rng(23)
N = 512
INT_NAMES = tuple(INTS)
WIDTHS = (1, 3, 4)  # scalar, a 3-vector, a power-of-two vector


def _values(name: str, n: int) -> np.ndarray:
    nbits = np.dtype(NP[name]).itemsize * 8
    edges = np.array(edge_bits(name), dtype=np.uint64).astype(UNSIGNED[nbits])
    uniform = RNG.integers(0, 2**nbits, n, dtype=np.uint64, endpoint=False).astype(UNSIGNED[nbits])
    bits = np.where(RNG.random(n) < 0.6, edges[RNG.integers(0, len(edges), n)], uniform)
    return bits.view(NP[name])


def _in_range(name: str, lo: int, hi: int, n: int) -> np.ndarray:
    return RNG.integers(lo, hi, n, endpoint=True).astype(NP[name])


def _ref(op: str, types: list[Type], result: Type, arrays: list[np.ndarray], n: int,
         attrs: dict | None = None, ftz: frozenset = frozenset()) -> Expectation:
    node = Op(op, tuple(Load(f"in{i}", t) for i, t in enumerate(types)), result, tuple(sorted((attrs or {}).items())))
    args = [Expectation.exact(t.scalar, a) for t, a in zip(types, arrays)]
    return REFERENCES[op](node, args, n, ftz)


def _signed(value: int, name: str) -> int:
    bits, signed = INTS[name]
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def _got(e: Expectation, name: str) -> list[int]:
    return [_signed(int(b), name) for b in e.allowed[0]]


def _lanes(a: np.ndarray) -> list[int]:
    return [int(v) for v in a]


def _unsigned(name: str) -> str:
    return {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}[INTS[name][0]]


def _ctz(v: int, bits: int) -> int:
    """Trailing zero bits of the unsigned value ``v``, counted one by one; the width for 0."""
    n = 0
    while n < bits and not (v >> n) & 1:
        n += 1
    return n


def _sat(v: int, name: str) -> int:
    lo, hi = int_range(name)
    return min(max(v, lo), hi)


# -- integer built-ins (§6.15.3 Table 13) --------------------------------------------------------

PYTHON = {
    "abs": lambda t, x: abs(x),
    "abs_diff": lambda t, x, y: abs(x - y),
    "add_sat": lambda t, x, y: _sat(x + y, t),
    "sub_sat": lambda t, x, y: _sat(x - y, t),
    "mad_sat": lambda t, a, b, c: _sat(a * b + c, t),
    "hadd": lambda t, x, y: (x + y) // 2,  # floor of the exact mean
    "rhadd": lambda t, x, y: (x + y + 1) // 2,
    "mul_hi": lambda t, x, y: (x * y) >> INTS[t][0],
    "rotate": lambda t, v, i: _signed(((v % 2 ** INTS[t][0]) << (i % INTS[t][0]))
                                      | ((v % 2 ** INTS[t][0]) >> (INTS[t][0] - i % INTS[t][0])), t),
    "clz": lambda t, x: INTS[t][0] - (x % 2 ** INTS[t][0]).bit_length(),
    "ctz": lambda t, x: _ctz(x % 2 ** INTS[t][0], INTS[t][0]),
    "popcount": lambda t, x: bin(x % 2 ** INTS[t][0]).count("1"),
    "min": lambda t, x, y: y if y < x else x,
    "max": lambda t, x, y: y if x < y else x,
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", INT_NAMES)
@pytest.mark.parametrize("fn", sorted(PYTHON))
def test_integer_builtin_matches_python_integers(fn, name, width):
    t = Type(name, width)
    arity = PYTHON[fn].__code__.co_argcount - 1
    types = [t] * arity
    result = Type(_unsigned(name), width) if fn in ("abs", "abs_diff") else t
    if fn in ("min", "max") and width > 1:
        types[1] = Type(name)  # the sgentype form: the scalar is replicated
    arrays = [_values(name, N * a.width) for a in types]
    e = _ref(fn, types, result, arrays, N)
    got = _got(e, result.scalar)
    for lane in range(N * width):
        item = lane // width
        xs = [int(a[lane if ty.width > 1 else item]) for a, ty in zip(arrays, types)]
        assert got[lane] == _signed(PYTHON[fn](name, *xs), result.scalar), (fn, name, xs)
    assert e.judged.all()


@pytest.mark.parametrize("name", INT_NAMES)
def test_mad_hi_wraps_unsigned_and_leaves_signed_overflow_unjudged(name):
    t = Type(name, 4)
    a, b, c = (_values(name, 4 * N) for _ in range(3))
    e = _ref("mad_hi", [t] * 3, t, [a, b, c], N)
    bits, signed = INTS[name]
    lo, hi = int_range(name)
    for lane in range(4 * N):
        exact = ((int(a[lane]) * int(b[lane])) >> bits) + int(c[lane])
        if signed and not lo <= exact <= hi:
            assert not e.judged[lane]
        else:
            assert e.judged[lane] and _got(e, name)[lane] == _signed(exact, name)


@pytest.mark.parametrize("name,lo,hi", [("int", -(1 << 23), (1 << 23) - 1), ("uint", 0, (1 << 24) - 1)])
@pytest.mark.parametrize("fn", ["mul24", "mad24"])
def test_24_bit_products_are_exact_where_they_fit(fn, name, lo, hi):
    t = Type(name, 3)
    x, y = (_in_range(name, lo, hi, 3 * N) for _ in range(2))
    x[:8] = [lo, hi, 0, 1, 2, 4095, 4096, hi]
    y[:8] = [lo, hi, 5, 1, 3, 4095, 4097, 1]
    z = _values(name, 3 * N)
    e = _ref(fn, [t] * (2 if fn == "mul24" else 3), t, [x, y] + ([z] if fn == "mad24" else []), N)
    tlo, thi = int_range(name)
    for lane in range(3 * N):
        product = int(x[lane]) * int(y[lane])
        exact = product + (int(z[lane]) if fn == "mad24" else 0)
        if tlo <= product <= thi and tlo <= exact <= thi:
            assert e.judged[lane] and _got(e, name)[lane] == exact
        else:
            assert not e.judged[lane]  # the spec does not say what an oversize product gives


def test_mad24_of_a_product_beyond_32_bits_is_not_judged_even_where_the_sum_fits():
    """PoCL 5.0 (the GPU machine) gave mad24(8388607, 285, -2147483647) as -4051697948 (its 32-bit
    product -1904214301, then a 64-bit sum); the exact sum 243269348 fits an int but the product
    2390752995 does not: Table 13 adds mul24's "32-bit integer result" to z, which this product has not."""
    t = Type("int")
    e = _ref("mad24", [t] * 3, t, [np.array([8388607, 8388607], np.int32), np.array([285, 255], np.int32),
                                    np.array([-2147483647, -2147483647], np.int32)], 1)
    assert not e.judged[0]
    assert e.judged[1] and _got(e, "int")[1] == 8388607 * 255 - 2147483647


def test_mul24_outside_24_bits_is_a_generator_bug():
    t = Type("int")
    with pytest.raises(UndefinedBehaviour):
        _ref("mul24", [t, t], t, [np.array([1 << 23], np.int32), np.array([1], np.int32)], 1)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", INT_NAMES)
def test_upsample_concatenates_hi_and_lo(name, width):
    bits, signed = INTS[name]
    if bits == 64:
        return
    wide = {8: "short", 16: "int", 32: "long"}[bits]
    result = Type(wide if signed else _unsigned(wide), width)
    hi, lo = _values(name, N * width), _values(_unsigned(name), N * width)
    e = _ref("upsample", [Type(name, width), Type(_unsigned(name), width)], result, [hi, lo], N)
    for lane, got in enumerate(_got(e, result.scalar)):
        assert got == _signed((int(hi[lane]) << bits) | int(lo[lane]), result.scalar)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", INT_NAMES)
def test_clamp_with_ordered_bounds(name, width):
    t = Type(name, width)
    bound = Type(name) if width > 1 else t  # the scalar-bounds form where it exists
    x = _values(name, N * width)
    a, b = _values(name, N * bound.width), _values(name, N * bound.width)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    e = _ref("clamp", [t, bound, bound], t, [x, lo, hi], N)
    for lane, got in enumerate(_got(e, name)):
        k = lane if bound.width > 1 else lane // width
        assert got == min(max(int(x[lane]), int(lo[k])), int(hi[k]))
    with pytest.raises(UndefinedBehaviour):
        _ref("clamp", [t, bound, bound], t, [x, hi + 0, lo + 0] if (hi > lo).any() else [x, hi, lo - 1], N)


def test_integer_builtin_worked_examples():
    i = Type("int")
    one = lambda v, tname="int": np.array([v], NP[tname])  # noqa: E731
    assert _got(_ref("abs", [i], Type("uint"), [one(-2**31)], 1), "uint") == [2**31]  # abs(INT_MIN) = 2^31
    assert _got(_ref("clz", [i], i, [one(0)], 1), "int") == [32]  # clz(0) is the width
    # ctz: "If x is 0, returns the size in bits of the type of x" (OpenCL C §6.15.3 Table 13)
    assert _got(_ref("ctz", [i], i, [one(0)], 1), "int") == [32]
    assert _got(_ref("ctz", [i], i, [one(-2**31)], 1), "int") == [31]  # INT_MIN: only the sign bit
    assert _got(_ref("ctz", [i], i, [one(12)], 1), "int") == [2]
    ul = Type("ulong")
    assert _got(_ref("ctz", [ul], ul, [one(1 << 63, "ulong")], 1), "ulong") == [63]
    assert _got(_ref("hadd", [i, i], i, [one(2**31 - 1), one(2**31 - 1)], 1), "int") == [2**31 - 1]  # no overflow
    assert _got(_ref("rhadd", [i, i], i, [one(-1), one(0)], 1), "int") == [0]  # (-1 + 0 + 1) >> 1
    assert _got(_ref("hadd", [i, i], i, [one(-1), one(0)], 1), "int") == [-1]  # floor(-0.5)
    c = Type("char")
    assert _got(_ref("rotate", [c, c], c, [one(-128, "char"), one(9, "char")], 1), "char") == [1]  # count mod 8
    assert _got(_ref("upsample", [c, Type("uchar")], Type("short"), [one(-1, "char"), one(0x34, "uchar")], 1),
                "short") == [_signed(0xFF34, "short")]


# -- integer operators (§6.5.1, §6.5.6, §6.5.10) -------------------------------------------------

def _c_div(x: int, y: int) -> tuple[int, int]:
    """C99 §6.5.5: the quotient truncated toward zero, (x/y)*y + x%y == x."""
    q = abs(x) // abs(y)
    q = -q if (x < 0) != (y < 0) else q
    return q, x - q * y


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["int", "uint", "long", "ulong", "char", "ushort"])
@pytest.mark.parametrize("operator", ["/", "%"])
def test_division_with_the_program_guard(operator, name, width):
    # char and ushort only as vectors: scalars are promoted to int first
    t = Type(name, width) if width > 1 or INTS[name][0] >= 32 else None
    if t is None:
        return
    x, y = _values(name, N * width), _values(name, N * width)
    y[:4] = 0
    lo, _ = int_range(name)
    x[4:8], y[4:8] = lo, -1 if INTS[name][1] else 1
    e = _ref("div", [t, t], t, [x, y], N, {"operator": operator})
    for lane, got in enumerate(_got(e, name)):
        a, b = int(x[lane]), int(y[lane])
        if b == 0 or (INTS[name][1] and a == lo and b == -1):
            b = 1  # what the program's guard divides by
        assert got == _signed(_c_div(a, b)[0 if operator == "/" else 1], name)


@pytest.mark.parametrize("operator", ["<<", ">>"])
@pytest.mark.parametrize("name", INT_NAMES)
def test_shift_counts_are_masked_after_promotion_for_scalars_and_per_lane_for_vectors(name, operator):
    bits = INTS[name][0]
    for width in (1, 4):
        result = Type(name if width > 1 or bits >= 32 else "int", width)
        rbits = INTS[result.scalar][0]
        x, k = _values(name, N * width), _values("uchar", N * width)
        e = _ref("shift", [Type(name, width), Type("uchar", width)], result, [x, k], N, {"operator": operator})
        for lane, got in enumerate(_got(e, result.scalar)):
            count = int(k[lane]) % rbits  # only the low log2(N) bits (§6.5.10)
            v = int(x[lane])
            want = v << count if operator == "<<" else v >> count  # >> of a negative fills with ones
            assert got == _signed(want, result.scalar), (name, width, v, int(k[lane]))


def test_shift_worked_examples():
    # char4 << 9 is a shift by 1; a scalar char is promoted and shifted by 9 (OpenCL C §6.5.10)
    v = _ref("shift", [Type("char", 4), Type("char", 4)], Type("char", 4),
             [np.full(4, 1, np.int8), np.full(4, 9, np.int8)], 1, {"operator": "<<"})
    assert _got(v, "char") == [2, 2, 2, 2]
    s = _ref("shift", [Type("char"), Type("char")], Type("int"), [np.array([1], np.int8), np.array([9], np.int8)], 1,
             {"operator": "<<"})
    assert _got(s, "int") == [512]


@pytest.mark.parametrize("name", INT_NAMES)
@pytest.mark.parametrize("operator", ["&", "|", "^", "+", "-", "*"])
def test_vector_arith_with_a_widened_scalar(operator, name):
    t = Type(name, 3)
    x, y = _values(name, 3 * N), _values(name, N)
    signed = INTS[name][1]
    if signed and operator in "+-*":  # keep the operands where no value overflows
        limit = 2 ** ((INTS[name][0] - 2) if operator != "*" else (INTS[name][0] - 1) // 2)
        x, y = (np.clip(a, -limit, limit - 1).astype(a.dtype) for a in (x, y))
    e = _ref("arith", [t, Type(name)], t, [x, y], N, {"operator": operator})
    py = {"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "+": lambda a, b: a + b,
          "-": lambda a, b: a - b, "*": lambda a, b: a * b}[operator]
    for lane, got in enumerate(_got(e, name)):
        assert got == _signed(py(int(x[lane]), int(y[lane // 3])), name)


def test_signed_overflow_is_a_generator_bug():
    t = Type("int", 2)
    with pytest.raises(UndefinedBehaviour):
        _ref("arith", [t, t], t, [np.array([2**31 - 1, 0], np.int32), np.array([1, 0], np.int32)], 1,
             {"operator": "+"})


@pytest.mark.parametrize("name", INT_NAMES)
def test_complement(name):
    result = Type(name if INTS[name][0] >= 32 else "int")
    x = _values(name, N)
    e = _ref("complement", [Type(name)], result, [x], N)
    assert _got(e, result.scalar) == [_signed(~int(v), result.scalar) for v in x]


# -- truth values (§6.5.4-§6.5.8, §6.15.6) -------------------------------------------------------

COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
           "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
TRUTH = {8: "char", 16: "short", 32: "int", 64: "long"}


def _float_values(name: str, n: int) -> np.ndarray:
    nbits = np.dtype(NP[name]).itemsize * 8
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324 if nbits == 64 else 1e-45],
                        NP[name])
    v = RNG.standard_normal(n).astype(NP[name])
    pick = RNG.random(n) < 0.4
    v[pick] = specials[RNG.integers(0, len(specials), pick.sum())]
    return v


@pytest.mark.parametrize("width", (1, 4))
@pytest.mark.parametrize("name", INT_NAMES + ("float", "double"))
@pytest.mark.parametrize("operator", sorted(COMPARE))
def test_comparisons_give_1_for_scalars_and_minus_1_for_vectors(operator, name, width):
    t = Type(name, width)
    make = _float_values if name in ("float", "double") else _values
    x, y = make(name, N * width), make(name, N * width)
    x[:3 * width] = y[:3 * width]  # some equal pairs
    result = Type("int") if width == 1 else Type(TRUTH[np.dtype(NP[name]).itemsize * 8], width)
    e = _ref("compare", [t, t], result, [x, y], N, {"operator": operator})
    true = 1 if width == 1 else -1
    for lane, got in enumerate(_got(e, result.scalar)):
        a, b = x[lane].item(), y[lane].item()
        assert got == (true if COMPARE[operator](a, b) else 0), (a, b)  # Python: NaN compares false, != true
    assert e.judged.all()


def test_comparison_uses_the_usual_arithmetic_conversions():
    # (char)-1 < (uint)1: -1 converts to uint 4294967295, so the answer is 0 (C99 §6.3.1.8)
    e = _ref("compare", [Type("char"), Type("uint")], Type("int"), [np.array([-1], np.int8), np.array([1], np.uint32)],
             1, {"operator": "<"})
    assert _got(e, "int") == [0]
    e = _ref("compare", [Type("char"), Type("short")], Type("int"), [np.array([-1], np.int8), np.array([1], np.int16)],
             1, {"operator": "<"})
    assert _got(e, "int") == [1]


@pytest.mark.parametrize("operator", ["&&", "||"])
@pytest.mark.parametrize("width", (1, 4))
@pytest.mark.parametrize("name", INT_NAMES + ("float", "double"))
def test_logical_operators(operator, width, name):
    t = Type(name, width)
    make = _float_values if name in ("float", "double") else _values
    x, y = make(name, N * width), make(name, N * width)
    x[:N // 4], y[N // 4:N // 2] = 0, 0  # some zero operands
    result = Type("int") if width == 1 else Type(TRUTH[np.dtype(NP[name]).itemsize * 8], width)
    e = _ref("logic", [t, t], result, [x, y], N, {"operator": operator})
    true = 1 if width == 1 else -1
    for lane, got in enumerate(_got(e, result.scalar)):
        a, b = x[lane].item() != 0, y[lane].item() != 0  # NaN compares unequal to 0
        assert got == (true if (a and b if operator == "&&" else a or b) else 0)
    n = _ref("not", [Type("uchar", 4)], Type("char", 4), [np.array([0, 1, 255, 0], np.uint8)], 1)
    assert _got(n, "char") == [-1, 0, 0, -1]


def test_any_and_all_look_at_the_most_significant_bit_only():
    # any((int4)1) == 0 (OpenCL C §6.15.6: the most significant bit of each lane)
    t = Type("int", 4)
    for fn, lanes, want in [("any", [1, 1, 1, 1], 0), ("any", [1, -5, 0, 0], 1), ("all", [-1, -2, -3, -4], 1),
                            ("all", [-1, -2, 3, -4], 0)]:
        assert _got(_ref(fn, [t], Type("int"), [np.array(lanes, np.int32)], 1), "int") == [want]


RELATIONAL = {
    "isequal": lambda a, b: a == b, "isnotequal": lambda a, b: a != b, "isgreater": lambda a, b: a > b,
    "isgreaterequal": lambda a, b: a >= b, "isless": lambda a, b: a < b, "islessequal": lambda a, b: a <= b,
    "islessgreater": lambda a, b: a < b or a > b, "isordered": lambda a, b: a == a and b == b,
    "isunordered": lambda a, b: a != a or b != b,
    "isfinite": math.isfinite, "isinf": math.isinf, "isnan": math.isnan,
    "signbit": lambda a: math.copysign(1.0, a) < 0,
}


@pytest.mark.parametrize("width", (1, 3))
@pytest.mark.parametrize("name", ["float", "double"])
@pytest.mark.parametrize("fn", sorted(RELATIONAL) + ["isnormal"])
def test_relational_builtins(fn, name, width):
    t = Type(name, width)
    arity = 1 if fn in ("isfinite", "isinf", "isnan", "isnormal", "signbit") else 2
    arrays = [_float_values(name, N * width) for _ in range(arity)]
    arrays[0] = np.abs(arrays[0]) if fn == "signbit" else arrays[0]  # a NaN's sign is unspecified
    arrays[0][:2] = [-0.0, -1.5] if fn == "signbit" else arrays[0][:2]
    result = Type("int") if width == 1 else Type(TRUTH[np.dtype(NP[name]).itemsize * 8], width)
    e = _ref(fn, [t] * arity, result, arrays, N)
    tiny = 2.0**-126 if name == "float" else 2.0**-1022
    py = RELATIONAL.get(fn, lambda a: math.isfinite(a) and abs(a) >= tiny)
    true = 1 if width == 1 else -1
    for lane, got in enumerate(_got(e, result.scalar)):
        assert got == (true if py(*(a[lane].item() for a in arrays)) else 0)


def test_flushed_denormals_may_compare_equal_to_zero():
    t = Type("float")
    tiny, zero = np.array([1e-40], np.float32), np.array([0.0], np.float32)
    exact = _ref("isequal", [t, t], Type("int"), [tiny, zero], 1)
    assert [set(int(a[0]) for a in exact.allowed)] == [{0}]
    flush = _ref("isequal", [t, t], Type("int"), [tiny, zero], 1, ftz=frozenset({"float"}))
    assert set(int(a[0]) for a in flush.allowed) == {0, 1}


# -- vector components, literals, loads and stores, shuffles, selection --------------------------

def _comps(op, types, result, arrays, n, attrs=None):
    e = _ref(op, types, result, arrays, n, attrs)
    return _got(e, result.scalar), e


def test_half_selections_of_a_3_vector_leave_w_undefined():
    # (1,2,3).lo=(1,2), .hi=(3,undef), .even=(1,3), .odd=(2,undef) (OpenCL C §6.3.7)
    v = np.array([1, 2, 3], np.int32)
    for form, comps, want in [("lo", (0, 1), [1, 2]), ("hi", (2, 3), [3, None]), ("even", (0, 2), [1, 3]),
                              ("odd", (1, 3), [2, None])]:
        got, e = _comps("swizzle", [Type("int", 3)], Type("int", 2), [v], 1, {"components": comps, "form": form})
        for lane, w in enumerate(want):
            if w is None:
                assert not e.judged[lane]
            else:
                assert e.judged[lane] and got[lane] == w


def test_swizzle_with_repeats_and_insert():
    v = np.arange(16, dtype=np.int16) * 3
    got, _ = _comps("swizzle", [Type("short", 16)], Type("short", 4), [v], 1, {"components": (15, 10, 10, 0), "form": "S"})
    assert got == [45, 30, 30, 0]
    got, _ = _comps("insert", [Type("short", 4), Type("short", 2)], Type("short", 4),
                    [np.array([1, 2, 3, 4], np.int16), np.array([8, 9], np.int16)], 1, {"components": (3, 1), "form": "xyzw"})
    assert got == [1, 9, 3, 8]  # v.wy = (8, 9)


def test_vector_literal_parts_fill_lanes_in_order():
    # (int4)(a.xy, b, c) for two work-items: the first argument's lanes come first (§6.3.6)
    node = Op("vec", (Load("a", Type("int", 2)), Load("b", Type("int")), Load("c", Type("int"))), Type("int", 4))
    args = [Expectation.exact("int", np.array(x, np.int32)) for x in ([1, 2, 10, 20], [3, 30], [4, 40])]
    e = REFERENCES["vec"](node, args, 2, frozenset())
    assert _got(e, "int") == [1, 2, 3, 4, 10, 20, 30, 40]


def test_vload_and_vstore_address_offset_times_n():
    lanes = np.arange(8, dtype=np.uint32)
    got, _ = _comps("vload", [Type("uint", 8)], Type("uint", 3), [lanes], 1, {"offset": 1})
    assert got == [3, 4, 5]  # vload3(1, p) reads p[3..5]
    e = _ref("vstore", [Type("uint", 3)], Type("uint", 8), [np.array([7, 8, 9], np.uint32)], 1, {"offset": 1})
    assert list(e.judged) == [False, False, False, True, True, True, False, False]
    assert _got(e, "uint")[3:6] == [7, 8, 9]


def test_shuffle_examples_from_the_spec():
    # §6.15.13: mask (3,2,1,0) reverses a float4; shuffle2 with (0..7) concatenates a and b
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    b = np.array([5.0, 6.0, 7.0, 8.0], np.float32)
    r = _ref("shuffle", [Type("float", 4), Type("uint", 4)], Type("float", 4), [a, np.array([3, 2, 1, 0], np.uint32)], 1)
    assert list(r.allowed[0].view(np.float32)) == [4.0, 3.0, 2.0, 1.0]
    r = _ref("shuffle2", [Type("float", 4), Type("float", 4), Type("uint", 8)], Type("float", 8),
             [a, b, np.arange(8, dtype=np.uint32)], 1)
    assert list(r.allowed[0].view(np.float32)) == [1, 2, 3, 4, 5, 6, 7, 8]
    # only the low ilogb(2m-1) bits count: 6 & 3 == 2 for shuffle, 13 & 7 == 5 for shuffle2
    r = _ref("shuffle", [Type("float", 4), Type("uint", 2)], Type("float", 2), [a, np.array([6, 0xFFFFFFFF], np.uint32)], 1)
    assert list(r.allowed[0].view(np.float32)) == [3.0, 4.0]
    r = _ref("shuffle2", [Type("float", 4), Type("float", 4), Type("uint", 2)], Type("float", 2),
             [a, b, np.array([13, 8], np.uint32)], 1)
    assert list(r.allowed[0].view(np.float32)) == [6.0, 1.0]


def test_select_and_vector_ternary_test_the_msb():
    t, c = Type("int", 4), Type("uint", 4)
    a, b = np.array([1, 2, 3, 4], np.int32), np.array([5, 6, 7, 8], np.int32)
    got, _ = _comps("select", [t, t, c], t, [a, b, np.array([1, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF], np.uint32)], 1)
    assert got == [1, 6, 3, 8]
    # (int4)1 ? a : b gives b (OpenCL C §6.5.9: select, the MSB decides)
    got, _ = _comps("ternary", [Type("int", 4), t, t], t, [np.ones(4, np.int32), a, b], 1)
    assert got == [5, 6, 7, 8]
    # a scalar condition is C's: nonzero
    got, _ = _comps("select", [Type("int")] * 3, Type("int"), [np.array([1]), np.array([2]), np.array([1])], 1)
    assert got == [2]


def test_bitselect_mixes_bits_and_leaves_nan_operands_unjudged():
    t = Type("uint")
    got, _ = _comps("bitselect", [t, t, t], t, [np.array([0xF0F0F0F0], np.uint32), np.array([0x0F0F0F0F], np.uint32),
                                                 np.array([0xFFFF0000], np.uint32)], 1)
    assert got == [0x0F0FF0F0]
    f = Type("float")
    e = _ref("bitselect", [f, f, f], f, [np.array([np.nan], np.float32), np.array([1.0], np.float32),
                                         np.array([0.0], np.float32)], 1)
    assert not e.judged[0]


def test_a_moved_nan_may_be_any_nan():
    e = _ref("swizzle", [Type("float", 2)], Type("float"), [np.array([np.nan, 1.0], np.float32)], 1,
             {"components": (0,), "form": "xyzw"})
    assert e.any_nan[0] and e.judged[0]


def test_literal_operands_work_like_loads():
    node = Op("add_sat", (Literal(Type("uchar"), (200,)), Load("x", Type("uchar"))), Type("uchar"))
    from lang.ir import Buffer, Fill, Program, Store
    from oracles import expected
    p = Program((Buffer("x", Type("uchar"), "in", Fill(1, (100,), 4)), Buffer("out", Type("uchar"), "out")),
                (Store("out", node),), 4)
    assert list(expected(p)["out"].allowed[0]) == [255] * 4


# -- lane-moving constructs for every type and width class ---------------------------------------

ALL_NAMES = INT_NAMES + ("float", "double")
VECTOR_WIDTHS = (2, 3, 4, 8, 16)


def _bits_of(a: np.ndarray) -> list[int]:
    return [int(v) for v in a.view(UNSIGNED[a.dtype.itemsize * 8])]


def _any_values(name: str, n: int) -> np.ndarray:
    v = (_float_values if name in ("float", "double") else _values)(name, n)
    if name in ("float", "double"):
        v[np.isnan(v)] = 1.5  # a moved NaN may come out as any NaN: keep the bits comparable
    return v


@pytest.mark.parametrize("w", VECTOR_WIDTHS)
@pytest.mark.parametrize("name", ALL_NAMES)
def test_swizzle_and_insert_move_bits_for_every_type_and_width(name, w):
    k = 16 if w > 4 else 4
    comps = tuple(int(c) for c in RNG.integers(0, w, k))
    v = _any_values(name, 8 * w)
    e = _ref("swizzle", [Type(name, w)], Type(name, k), [v], 8, {"components": comps, "form": "s"})
    bits = _bits_of(v)
    assert [int(b) for b in e.allowed[0]] == [bits[i * w + c] for i in range(8) for c in comps]
    distinct = tuple(int(c) for c in RNG.permutation(w)[:2])
    x = _any_values(name, 8 * 2)
    e = _ref("insert", [Type(name, w), Type(name, 2)], Type(name, w), [v, x], 8, {"components": distinct, "form": "s"})
    want = []
    for i in range(8):
        lanes = bits[i * w:(i + 1) * w]
        for j, c in enumerate(distinct):
            lanes[c] = _bits_of(x)[i * 2 + j]
        want += lanes
    assert [int(b) for b in e.allowed[0]] == want and e.judged.all()


@pytest.mark.parametrize("name", ALL_NAMES)
def test_shuffles_select_vload_and_vstore_for_every_type(name):
    bits = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[np.dtype(NP[name]).itemsize * 8]
    mask_t = {np.uint8: "uchar", np.uint16: "ushort", np.uint32: "uint", np.uint64: "ulong"}[bits]
    for m, k in ((2, 4), (4, 2), (8, 16), (16, 8)):
        x, y = _any_values(name, 4 * m), _any_values(name, 4 * m)
        mask = RNG.integers(0, 255, 4 * k).astype(bits)
        one = _ref("shuffle", [Type(name, m), Type(mask_t, k)], Type(name, k), [x, mask], 4)
        two = _ref("shuffle2", [Type(name, m), Type(name, m), Type(mask_t, k)], Type(name, k), [x, y, mask], 4)
        xb, yb = _bits_of(x), _bits_of(y)
        for i in range(4):
            for j in range(k):
                sel = int(mask[i * k + j])
                assert int(one.allowed[0][i * k + j]) == xb[i * m + sel % m]
                both = xb[i * m:(i + 1) * m] + yb[i * m:(i + 1) * m]
                assert int(two.allowed[0][i * k + j]) == both[sel % (2 * m)]
    t = Type(name, 3)
    cond_t = Type({8: "char", 16: "short", 32: "int", 64: "long"}[np.dtype(NP[name]).itemsize * 8], 3)
    a, b, c = _any_values(name, 12), _any_values(name, 12), _values(cond_t.scalar, 12)
    e = _ref("select", [t, t, cond_t], t, [a, b, c], 4)
    assert [int(v) for v in e.allowed[0]] == [(_bits_of(b) if c[i] < 0 else _bits_of(a))[i] for i in range(12)]
    src = _any_values(name, 4 * 8)
    e = _ref("vload", [Type(name, 8)], Type(name, 3), [src], 4, {"offset": 1})
    assert [int(v) for v in e.allowed[0]] == [_bits_of(src)[i * 8 + 3 + j] for i in range(4) for j in range(3)]
    e = _ref("vstore", [Type(name, 2)], Type(name, 8), [src[:8]], 4, {"offset": 3})
    assert [int(v) for v, ok in zip(e.allowed[0], e.judged) if ok] == _bits_of(src[:8])
    assert list(np.flatnonzero(e.judged[:8])) == [6, 7]


# -- integer promotion: scalar char, uchar, short and ushort operands are promoted, vector lanes not --
# C99 §6.3.1.1 (integer promotions), §6.3.1.8 (usual arithmetic conversions), §6.5.3.3 (~), §6.5.15
# (?:); OpenCL C §6.4.6 ("shall"; its note: vector elements are not promoted, short8 + char is a short8),
# §6.5.1, §6.5.6, §6.5.10 (the count is masked by the width of E1 "after integer promotion, if E1 is
# a scalar", by the element's width for a vector). The model is plain Python on decoded values: a
# scalar operand converts to the operation's type by value (_signed wraps it there), a vector lane
# stays in its own width.

NARROW = ("char", "uchar", "short", "ushort")
SCALAR_PAIRS = [(a, a) for a in NARROW] + [("char", "uchar"), ("uchar", "short"), ("ushort", "char"),
                                           ("short", "ushort"), ("char", "uint"), ("ushort", "int"),
                                           ("uchar", "long"), ("short", "ulong")]
INT_OPERATORS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
KIND = {"/": "div", "%": "div", "<<": "shift", ">>": "shift"}


def _promoted(name: str) -> str:
    return "int" if INTS[name][0] < 32 else name


def _usual(a: str, b: str) -> str:
    """C99 §6.3.1.8 for integer types, spelled out: both promoted, then the one of greater width,
    the unsigned one at equal width (a wider signed type holds every value of a narrower unsigned)."""
    return max(_promoted(a), _promoted(b), key=lambda n: (INTS[n][0], not INTS[n][1]))


def _c_operator(operator: str, x: int, y: int, t: str) -> int | None:
    """``x operator y`` computed in type ``t`` as C does, from the operands' values; None where C
    leaves it undefined (a signed + - * whose exact result does not fit)."""
    bits, signed = INTS[t]
    if operator in ("<<", ">>"):  # x converts to t (the promoted left operand's type); the count is not converted
        k = y & (bits - 1)  # its low log2(N) bits, viewed as unsigned (Python's & works on two's complement)
        return _signed(x << k, t) if operator == "<<" else _signed(x, t) >> k
    a, b = _signed(x, t), _signed(y, t)  # the usual arithmetic conversions: by value, modulo 2^N if unsigned
    if operator in "/%":
        lo, _ = int_range(t)
        if b == 0 or (signed and a == lo and b == -1):
            b = 1  # what the program's guard divides by
        return _c_div(a, b)[0 if operator == "/" else 1]
    exact = {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[operator]
    lo, hi = int_range(t)
    if signed and not lo <= exact <= hi:
        return None
    return _signed(exact, t)


def _defined(operator: str, x: np.ndarray, y: np.ndarray, t: str, y_lane) -> list[int]:
    """What C gives for every lane, after making the undefined lanes (signed overflow) defined by
    setting their y to 0 (+ -) or 1 (*), as the strategies' range analysis would."""
    for lane in range(len(x)):
        if _c_operator(operator, int(x[lane]), int(y[y_lane(lane)]), t) is None:
            y[y_lane(lane)] = 1 if operator == "*" else 0
    return [_c_operator(operator, int(x[lane]), int(y[y_lane(lane)]), t) for lane in range(len(x))]


@pytest.mark.parametrize("x_t,y_t", SCALAR_PAIRS)
@pytest.mark.parametrize("operator", INT_OPERATORS)
def test_scalar_narrow_operands_are_promoted(operator, x_t, y_t):
    """A scalar char/uchar/short/ushort operand is computed in int (or in the wider type of the
    other operand): the result has that type, a shift count is masked by its width (31 for int)."""
    result = _promoted(x_t) if operator in ("<<", ">>") else _usual(x_t, y_t)
    x, y = _values(x_t, N), _values(y_t, N)
    y[:6] = [9, 15, 16, 17, 31, 33]  # counts beyond the narrow width, within and beyond the promoted one
    want = _defined(operator, x, y, result, lambda lane: lane)
    e = _ref(KIND.get(operator, "arith"), [Type(x_t), Type(y_t)], Type(result), [x, y], N, {"operator": operator})
    assert _got(e, result) == want
    assert e.judged.all()


@pytest.mark.parametrize("scalar_y", (False, True))
@pytest.mark.parametrize("width", (3, 4))
@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("operator", INT_OPERATORS)
def test_vector_narrow_lanes_are_not_promoted(operator, name, width, scalar_y):
    """The same operators on charn/ucharn/shortn/ushortn: each lane is computed in the element type
    (wrapping in its width; a shift count masked by the element's width), a scalar operand widened."""
    t = Type(name, width)
    y_t = Type(name) if scalar_y else t
    x, y = _values(name, N * width), _values(name, N * y_t.width)
    y[:6] = [9, 15, 16, 17, 31, 33]
    y_lane = (lambda lane: lane // width) if scalar_y else (lambda lane: lane)
    want = _defined(operator, x, y, name, y_lane)
    e = _ref(KIND.get(operator, "arith"), [t, y_t], t, [x, y], N, {"operator": operator})
    assert _got(e, name) == want
    assert e.judged.all()


@pytest.mark.parametrize("width", (1, 3, 4))
@pytest.mark.parametrize("name", NARROW)
def test_complement_of_narrow_types(name, width):
    """~ on a scalar promotes (C99 §6.5.3.3: "the result has the promoted type"); on a vector it is
    component-wise in the element type (OpenCL C §6.5.6)."""
    result = Type("int" if width == 1 else name, width)
    x = _values(name, N * width)
    e = _ref("complement", [Type(name, width)], result, [x], N)
    assert _got(e, result.scalar) == [_signed(~int(v), result.scalar) for v in x]


@pytest.mark.parametrize("x_t,y_t", SCALAR_PAIRS)
def test_scalar_truth_operators_on_narrow_types(x_t, y_t):
    """Comparisons convert both operands to the usual arithmetic conversions' type (so (char)-1 and
    (uint)1 compare as uints); && || ! test each operand against 0 in its own type; int 1/0."""
    x, y = _values(x_t, N), _values(y_t, N)
    x[:4] = [0, 0, 1, -1 if INTS[x_t][1] else 1]
    y[:4] = [0, 1, 0, 1]
    c = _usual(x_t, y_t)
    for operator, fn in COMPARE.items():
        e = _ref("compare", [Type(x_t), Type(y_t)], Type("int"), [x, y], N, {"operator": operator})
        assert _got(e, "int") == [int(fn(_signed(int(a), c), _signed(int(b), c))) for a, b in zip(x, y)], operator
    for operator in ("&&", "||"):
        e = _ref("logic", [Type(x_t), Type(y_t)], Type("int"), [x, y], N, {"operator": operator})
        truth = [(a != 0 and b != 0) if operator == "&&" else (a != 0 or b != 0) for a, b in zip(x, y)]
        assert _got(e, "int") == [int(bool(v)) for v in truth]
    e = _ref("not", [Type(x_t)], Type("int"), [x], N)
    assert _got(e, "int") == [int(a == 0) for a in x]


@pytest.mark.parametrize("name", NARROW)
def test_vector_truth_operators_on_narrow_lanes(name):
    """charn/ucharn give charn, shortn/ushortn give shortn: -1/0 per lane (OpenCL C §6.5.4-§6.5.8); a
    scalar beside the vector is converted to the element type and widened."""
    t, s = Type(name, 4), Type(name)
    truth = Type(TRUTH[INTS[name][0]], 4)
    x, y = _values(name, 4 * N), _values(name, N)
    x[:4] = [0, int(y[0]), 1, 0]
    for operator, fn in COMPARE.items():
        e = _ref("compare", [t, s], truth, [x, y], N, {"operator": operator})
        assert _got(e, truth.scalar) == [-int(fn(int(x[i]), int(y[i // 4]))) for i in range(4 * N)]
    for operator in ("&&", "||"):
        e = _ref("logic", [t, s], truth, [x, y], N, {"operator": operator})
        both = [(x[i] != 0, y[i // 4] != 0) for i in range(4 * N)]
        assert _got(e, truth.scalar) == [-int(a and b if operator == "&&" else a or b) for a, b in both]
    e = _ref("not", [t], truth, [x], N)
    assert _got(e, truth.scalar) == [-int(v == 0) for v in x]


def _one(name: str, *values: int) -> np.ndarray:
    return np.array([_signed(v, name) for v in values]).astype(NP[name])


def test_promotion_worked_examples():
    s, s4, i = Type("short"), Type("short", 4), Type("int")
    # (short)-16384 << 17: promoted to int, the count masked by 31: 0x80000000; << 16 is -2^30
    e = _ref("shift", [s, s], i, [_one("short", -16384, -16384), _one("short", 17, 16)], 2, {"operator": "<<"})
    assert _got(e, "int") == [-2**31, -2**30]
    # ... and stored into a short (§6.5.15: converted to the short, modulo 2^16): 0, what PoCL and
    # Oclgrind return for the scalar statement
    from lang.ir import Buffer, Fill, Program, Store
    from oracles import expected
    shift = Op("shift", (Load("x", s), Load("k", s)), i, (("operator", "<<"),))
    p = Program((Buffer("x", s, "in", Fill(0, values=(0xC000,))), Buffer("k", s, "in", Fill(0, values=(17, 16))),
                 Buffer("out", s, "out")), (Store("out", shift),), 2)
    assert _got(expected(p)["out"], "short") == [0, 0]
    # a short4 lane masks the count by 15: 17 -> 1, 16 -> 0, 15, 32 -> 0
    v = _ref("shift", [s4, s4], s4, [_one("short", *[-16384] * 4), _one("short", 17, 16, 15, 32)], 1,
             {"operator": "<<"})
    assert _got(v, "short") == [-32768, -16384, 0, -16384]
    u, u4 = Type("uchar"), Type("uchar", 4)
    # (uchar)200 + (uchar)100 is the int 300; uchar4 lanes wrap to 44 (OpenCL C §6.4.6)
    assert _got(_ref("arith", [u, u], i, [_one("uchar", 200), _one("uchar", 100)], 1, {"operator": "+"}), "int") == [300]
    assert _got(_ref("arith", [u4, u], u4, [_one("uchar", *[200] * 4), _one("uchar", 100)], 1, {"operator": "+"}),
                "uchar") == [44] * 4
    # ~(uchar)200 is the int -201; ~(uchar4)200 lanes are 55
    assert _got(_ref("complement", [u], i, [_one("uchar", 200)], 1), "int") == [-201]
    assert _got(_ref("complement", [u4], u4, [_one("uchar", *[200] * 4)], 1), "uchar") == [55] * 4
    # (uchar)255 >> 9 is 0 (9 & 31); a uchar4 lane shifts by 9 & 7 = 1: 127
    assert _got(_ref("shift", [u, u], i, [_one("uchar", 255), _one("uchar", 9)], 1, {"operator": ">>"}), "int") == [0]
    assert _got(_ref("shift", [u4, u], u4, [_one("uchar", *[255] * 4), _one("uchar", 9)], 1, {"operator": ">>"}),
                "uchar") == [127] * 4
    # (char)-128 / (char)-1 is the int 128: no overflow after promotion; a char4 lane's guard divides by 1
    c, c4 = Type("char"), Type("char", 4)
    assert _got(_ref("div", [c, c], i, [_one("char", -128), _one("char", -1)], 1, {"operator": "/"}), "int") == [128]
    assert _got(_ref("div", [c4, c], c4, [_one("char", *[-128] * 4), _one("char", -1)], 1, {"operator": "/"}),
                "char") == [-128] * 4
    # (char)-1 < (uchar)1 compares ints: true; (char)-1 < (uint)1 compares uints: false
    assert _got(_ref("compare", [c, u], i, [_one("char", -1), _one("uchar", 1)], 1, {"operator": "<"}), "int") == [1]


def test_builtins_take_no_promotion():
    """Built-ins compute in their gentype (OpenCL C §6.15.3: "the actual type has to be the same for all
    arguments and the return type"): a char stays a char."""
    c, u, s = Type("char"), Type("uchar"), Type("short")
    cases = [("clz", [c], c, [1], 7), ("clz", [s], s, [1], 15), ("ctz", [c], c, [0], 8), ("popcount", [c], c, [-1], 8),
             ("rotate", [u, u], u, [0x81, 1], 0x03), ("rotate", [s, s], s, [1, 17], 2),
             ("add_sat", [c, c], c, [100, 100], 127), ("sub_sat", [u, u], u, [0, 1], 0),
             ("hadd", [u, u], u, [255, 255], 255), ("rhadd", [c, c], c, [127, 126], 127),
             ("mul_hi", [u, u], u, [255, 255], 254), ("mad_sat", [c, c, c], c, [100, 2, 0], 127),
             ("abs", [c], u, [-128], 128), ("abs_diff", [c, c], u, [127, -128], 255),
             ("max", [u, u], u, [200, 100], 200), ("min", [c, c], c, [-1, 1], -1)]
    for fn, types, result, values, want in cases:
        e = _ref(fn, types, result, [_one(t.scalar, v) for t, v in zip(types, values)], 1)
        assert _got(e, result.scalar) == [want], fn


@pytest.mark.parametrize("op,types,result,attrs", [
    ("shift", ["short", "short"], "short", {"operator": "<<"}),  # the reducer's narrowed short4 shift
    ("shift", ["uchar", "int"], "uchar", {"operator": ">>"}),
    ("shift", ["short4", "short4"], "int4", {"operator": "<<"}),  # vectors are not promoted
    ("shift", ["int", "int4"], "int", {"operator": "<<"}),  # a scalar's count must be a scalar
    ("complement", ["char"], "char", {}),
    ("arith", ["uchar", "uchar"], "uchar", {"operator": "+"}),
    ("arith", ["char4", "char"], "int4", {"operator": "&"}),
    ("div", ["short", "short"], "short", {"operator": "/"}),
    ("ternary", ["int", "char", "char"], "char", {}),  # C99 §6.5.15p5: char ? char : char is an int
])
def test_an_operator_typed_against_promotion_is_not_a_program(op, types, result, attrs):
    """An IR node whose type is not the one OpenCL C gives it would be judged against a meaning its
    OpenCL C text does not have: the oracle refuses it (the program is not well formed)."""
    ts = [Type.parse(t) for t in types]
    with pytest.raises(InvalidProgram):
        _ref(op, ts, Type.parse(result), [_values(t.scalar, t.width) for t in ts], 1, attrs)
