"""The math oracle (oracles.floats, oracles.math) against hand-worked values and exact arithmetic.

Rules: OpenCL C 3.0.19 §7.4 (ulp, Tables 65-69, 67 for unsafe math), §7.5.1 edge cases and C99
Annex F.9, §7.5.3 flush to zero, §6.15.2/4/5 definitions."""

from __future__ import annotations

import math
import random
import threading
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.maths import build_flags, option_flags
from lang.types import Type
from oracles import fmt
from oracles.floats import interval, round_to, ulp
from oracles.expect import Expectation
from oracles.math import outputs, pack
from oracles.math.lanewise import lanewise, lanewise_at
from oracles.math.precise import PRECISE

F32 = fmt("float")
NONE = frozenset()


def f32(x: float) -> float:
    return float(np.float32(x))


def bits32(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def floats_between(lo: float, hi: float) -> list[float]:
    """Every float32 in [lo, hi], by walking the bit patterns (an independent enumeration)."""
    out, x = [], np.float32(lo)
    while x <= np.float32(hi):
        out.append(float(x))
        x = np.nextafter(x, np.float32(np.inf))
    return out


# ---- exact rounding and ulp (oracles.floats) -----------------------------------------------------


def _round_fraction(q: Fraction, p: int, emin: int, mode: str) -> Fraction:
    """Rounding of a rational to a binary format by brute force over its quantum (independent)."""
    if q == 0:
        return Fraction(0)
    e = math.floor(math.log2(abs(q)))
    while Fraction(2) ** e > abs(q):
        e -= 1
    while Fraction(2) ** (e + 1) <= abs(q):
        e += 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    n = q / quantum
    lo = math.floor(n)
    if mode == "f":
        m = lo
    elif mode == "c":
        m = math.ceil(n)
    else:
        frac = n - lo
        m = lo + 1 if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and lo % 2) else lo
    return m * quantum


@pytest.mark.parametrize("mode", ["n", "f", "c"])
def test_round_to_matches_fractions(mode):
    rnd = random.Random(7)
    for _ in range(3000):
        man = rnd.getrandbits(rnd.randint(1, 80)) * rnd.choice((1, -1))
        exp = rnd.randint(-230, 60)
        if man == 0:
            continue
        q = Fraction(man) * Fraction(2) ** exp
        want = _round_fraction(q, 24, -126, mode)
        got = round_to(mpmath.ldexp(mpmath.mpf(man), exp), F32, mode)
        if abs(want) > Fraction(F32.max):
            continue
        assert Fraction(got) == want, (man, exp, mode)


def test_round_to_ties_to_even_and_overflow():
    assert round_to(mpmath.mpf(1) + mpmath.ldexp(1, -24), F32) == 1.0  # a tie goes to the even 1.0
    assert round_to(mpmath.mpf(1) + 3 * mpmath.ldexp(1, -24), F32) == 1.0 + 2.0**-22
    assert round_to(mpmath.ldexp(1, 128), F32) == math.inf
    assert round_to(mpmath.ldexp(1, 128), F32, "f") == F32.max  # toward zero stays finite
    assert round_to(mpmath.ldexp(1, -150), F32) == 0.0  # exactly half the least subnormal: even 0
    assert round_to(mpmath.ldexp(3, -151), F32) == 2.0**-149


def test_ulp_follows_the_spec_definition():
    # §7.4: strictly between floats: their gap; a float: the gap of the two nearest distinct floats
    assert ulp(mpmath.mpf(1.5), F32) == mpmath.ldexp(1, -23)
    assert ulp(mpmath.mpf(1), F32) == mpmath.ldexp(1, -24)  # 1.0 and its predecessor 1 - 2^-24
    assert ulp(mpmath.mpf(1) + mpmath.ldexp(1, -40), F32) == mpmath.ldexp(1, -23)
    assert ulp(mpmath.mpf(0), F32) == mpmath.ldexp(1, -149)
    assert ulp(mpmath.ldexp(1, -130), F32) == mpmath.ldexp(1, -149)  # subnormal range
    assert ulp(mpmath.ldexp(1, 200), F32) == mpmath.ldexp(1, 104)  # past MAX: the top binade's gap


def test_interval_allows_infinity_only_when_the_next_value_past_max_is_within():
    x = mpmath.mpf(F32.max)
    lo, hi, pos_inf, _ = interval(x, 3 * ulp(x, F32), F32)
    assert pos_inf and hi == F32.max  # MAX + 1 ulp (2^128) is within 3 ulp of MAX
    lo, hi, pos_inf, _ = interval(mpmath.mpf(1e38), 3 * ulp(mpmath.mpf(1e38), F32), F32)
    assert not pos_inf


# ---- the ulp rule against an independent computation -------------------------------------------------


@pytest.mark.parametrize("fn, x, k, reference", [
    ("sin", 1.0, 4, mpmath.sin), ("exp", 10.5, 3, mpmath.exp), ("log", 0.75, 3, mpmath.log),
    ("tan", 1.5, 5, mpmath.tan), ("erf", 0.3, 16, mpmath.erf), ("cbrt", 30.0, 2, mpmath.cbrt),
    ("sqrt", 2.0, 3, mpmath.sqrt), ("asin", 0.5, 4, mpmath.asin), ("tgamma", 4.5, 16, mpmath.gamma),
])
def test_ulp_bounded_lane_is_every_float_within_k_ulp(fn, x, k, reference):
    """Table 65: the accepted set is exactly the floats within k ulp(reference) of the reference
    computed here at 300 bits, independently of the oracle's precision."""
    lane, = lanewise(fn, "float", NONE, (x,))
    with mpmath.workprec(300):
        exact = reference(mpmath.mpf(x))
        width = k * ulp(exact, F32)
        lo_search, hi_search = float(exact - 2 * width), float(exact + 2 * width)
        want = [v for v in floats_between(lo_search, hi_search) if abs(mpmath.mpf(v) - exact) <= width]
    lo, hi = lane.ranges[0]
    assert floats_between(lo, hi) == want
    assert lane.values[0] == f32(float(exact))  # the reference shown is the correctly rounded value


def test_double_bounds_use_double_ulps():
    lane, = lanewise("exp", "double", NONE, (1.0,))
    lo, hi = lane.ranges[0]
    e = math.e
    assert lo <= e <= hi and (hi - lo) <= 7 * 2.0**-51  # 3 ulp either side of e (ulp 2^-51 in [2, 4))


# ---- correctly rounded and exact functions -------------------------------------------------------------


def test_fma_is_one_rounding_of_the_exact_value():
    a = f32(1 + 2.0**-23)
    lane, = lanewise("fma", "float", NONE, (a, a, -1.0))
    exact = Fraction(a) * Fraction(a) - 1
    assert Fraction(lane.values[0]) == _round_fraction(exact, 24, -126, "n")
    assert lane.values == [2.0**-22]  # 2^-22 + 2^-46 rounds to 2^-22 (the double-rounded product would not matter)


def test_mad_is_fma_or_multiply_then_add():
    x, y, z = f32(1.1), f32(2.2), f32(3.3)
    lane, = lanewise("mad", "float", NONE, (x, y, z))
    split = f32(f32(x * y) + z)
    fused = float(_round_fraction(Fraction(x) * Fraction(y) + Fraction(z), 24, -126, "n"))
    assert set(lane.values) == {split, fused}
    lane, = lanewise("mad", "double", NONE, (x, y, z))
    assert not lane.judged  # Table 68 (OpenCL C 3.0.19): any value


def test_divide_and_sqrt_bounds_and_the_correctly_rounded_option():
    lane, = lanewise("fdiv", "float", NONE, (1.0, 3.0))
    assert len(floats_between(*lane.ranges[0])) == 5  # 2.5 ulp either side of 1/3: five floats
    lane, = lanewise("fdiv", "float", frozenset({"cr"}), (1.0, 3.0))
    assert lane.values == [f32(1 / 3)] and not lane.ranges
    # a SPIR-V module keeps the environment's bounds (OpFDiv float: 2.5 ulp), the option names source
    lane, = lanewise("fdiv", "float", frozenset({"cr", "spirv"}), (1.0, 3.0))
    assert len(floats_between(*lane.ranges[0])) == 5
    lane, = lanewise("sqrt", "double", NONE, (2.0,))
    assert lane.values == [math.sqrt(2.0)] and not lane.ranges  # double sqrt is correctly rounded


@pytest.mark.parametrize("fn, args, want", [
    # §7.5.1 and C99 F.9 special values; signs matter (compared by bits)
    ("sinpi", (-3.0,), [-0.0]), ("sinpi", (2.0,), [0.0]), ("sinpi", (-0.0,), [-0.0]),
    ("cospi", (2.5,), [0.0]), ("cospi", (-0.5,), [0.0]), ("cospi", (0.0,), [1.0]),
    ("tanpi", (1.5,), [-math.inf]), ("tanpi", (0.5,), [math.inf]), ("tanpi", (-2.0,), [-0.0]),
    ("tanpi", (3.0,), [-0.0]), ("tanpi", (2.0**53,), [0.0]),
    ("pown", (-0.0, -3), [-math.inf]), ("pown", (-0.0, -2), [math.inf]), ("pown", (-0.0, 2), [0.0]),
    ("pown", (-0.0, 3), [-0.0]), ("pown", (math.nan, 0), [1.0]),
    ("rootn", (-0.0, 3), [-0.0]), ("rootn", (-0.0, -2), [math.inf]),
    ("pow", (-1.0, math.inf), [1.0]), ("pow", (math.nan, 0.0), [1.0]), ("pow", (1.0, math.nan), [1.0]),
    ("pow", (-0.0, -math.inf), [math.inf]), ("pow", (-0.0, -3.0), [-math.inf]), ("pow", (-8.0, 1 / 3), "nan"),
    ("powr", (0.0, -1.0), [math.inf]), ("powr", (2.0, 0.0), [1.0]), ("powr", (-1.0, 2.0), "nan"),
    ("powr", (1.0, math.inf), "nan"), ("powr", (0.0, 0.0), "nan"),
    ("atan2pi", (0.0, -0.0), [1.0]), ("atan2pi", (-0.0, -0.0), [-1.0]), ("atan2pi", (-math.inf, math.inf), [-0.25]),
    ("atan2pi", (math.inf, -math.inf), [0.75]), ("atan2pi", (-2.0, 0.0), [-0.5]),
    ("atanpi", (-math.inf,), [-0.5]), ("acospi", (1.0,), [0.0]), ("asinpi", (-0.0,), [-0.0]),
    ("exp10", (-math.inf,), [0.0]), ("expm1", (-math.inf,), [-1.0]), ("log", (-0.0,), [-math.inf]),
    ("log", (1.0,), [0.0]), ("log1p", (-1.0,), [-math.inf]), ("log2", (-1.0,), "nan"),
    ("sqrt", (-0.0,), [-0.0]), ("rsqrt", (-0.0,), [-math.inf]), ("rsqrt", (math.inf,), [0.0]),
    ("tanh", (-math.inf,), [-1.0]), ("erfc", (-math.inf,), [2.0]), ("tgamma", (-0.0,), [-math.inf]),
    ("tgamma", (-2.0,), "nan"), ("lgamma", (2.0,), [0.0]), ("lgamma", (-3.0,), [math.inf]),
    ("hypot", (math.inf, math.nan), [math.inf]), ("hypot", (-3.0, 0.0), [3.0]),
    ("ceil", (-0.5,), [-0.0]), ("trunc", (-0.9,), [-0.0]), ("round", (-0.4,), [-0.0]), ("round", (2.5,), [3.0]),
    ("rint", (2.5,), [2.0]), ("rint", (-0.5,), [-0.0]), ("floor", (-0.0,), [-0.0]),
    ("fdim", (2.0, 3.0), [0.0]), ("fmod", (-0.0, 3.0), [-0.0]), ("fmod", (5.5, math.inf), [5.5]),
    ("remainder", (5.0, 3.0), [-1.0]), ("remainder", (-4.0, 2.0), [-0.0]),
    ("fmin", (-0.0, 0.0), [-0.0, 0.0]), ("fmax", (math.nan, 2.0), [2.0]),
    ("minmag", (-3.0, 2.0), [2.0]), ("maxmag", (-3.0, 2.0), [-3.0]),
    ("nextafter", (-0.0, 1.0), [2.0**-149]), ("nextafter", (0.0, -1.0), [-(2.0**-149)]),
    ("copysign", (2.0, -0.0), [-2.0]), ("fabs", (-0.0,), [0.0]), ("logb", (0.0,), [-math.inf]),
    ("logb", (2.0**-140,), [-140.0]), ("ldexp", (1.5, -149), [2.0**-148]), ("ldexp", (-0.0, 5), [-0.0]),
    ("ilogb", (0.0,), [-(2**31), -(2**31) + 1]), ("ilogb", (math.inf,), [2**31 - 1]), ("ilogb", (0.75,), [-1]),
    ("sign", (math.nan,), [0.0]), ("sign", (-0.0,), [-0.0]), ("sign", (-7.0,), [-1.0]),
    ("step", (1.0, 0.5), [0.0]), ("step", (1.0, 1.0), [1.0]),
])
def test_prescribed_values_are_exact(fn, args, want):
    lane = lanewise(fn, "float", NONE, args)[0]
    assert lane.judged
    if want == "nan":
        assert lane.nan and not lane.ranges
        return
    assert not lane.ranges
    assert sorted(bits32(v) for v in lane.values if not math.isnan(v)) == sorted(
        bits32(v) for v in want if not math.isnan(v))
    assert lane.nan == any(math.isnan(v) for v in want)


@pytest.mark.parametrize("fn, x, result, pointee", [
    ("fract", -0.0, -0.0, -0.0), ("fract", math.inf, 0.0, math.inf), ("fract", -math.inf, -0.0, -math.inf),
    ("fract", -1e-10, 1 - 2.0**-24, -1.0), ("fract", 2.75, 0.75, 2.0),  # fmin(x - floor(x), 0x1.fffffep-1f)
    ("modf", -3.5, -0.5, -3.0), ("modf", -math.inf, -0.0, -math.inf), ("modf", 0.25, 0.25, 0.0),
    ("frexp", math.inf, math.inf, 0), ("frexp", 12.0, 0.75, 4), ("frexp", 2.0**-140, 0.5, -139),
    ("sincos", 0.0, 0.0, 1.0), ("lgamma_r", -0.5, None, -1), ("lgamma_r", 3.5, None, 1),
])
def test_out_parameters_are_judged_on_both_results(fn, x, result, pointee):
    value, out = lanewise(fn, "float", NONE, (f32(x),))
    if result is not None:
        assert [bits32(v) for v in value.values] == [bits32(result)]
    assert out.values[0] == pointee and math.copysign(1, out.values[0]) == math.copysign(1, pointee)


def test_lgamma_r_sign_at_poles_is_zero_on_both_paths():
    """OpenCL C 3.0.19 §7.5.1 and the OpenCL SPIR-V environment (§6.7.1, OpExtInst lgamma_r) say the same:
    "lgamma_r(x, signp) returns 0 in signp if x is zero or a negative integer"."""
    for env in (NONE, frozenset({"spirv"})):
        for x in (0.0, -0.0, -1.0, -2.0, -(2.0**30)):
            value, sign = lanewise("lgamma_r", "float", env, (x,))
            assert value.values == [math.inf]  # C99 F.9.5.3: +inf for x a negative integer or zero
            assert sign.judged and sign.values == [0] and sign.rule == "math.lgamma_r.sign.pole"
    # a subnormal operand that may be flushed to ±0 (§7.5.3): Γ's sign or the pole's 0
    _, sign = lanewise("lgamma_r", "float", frozenset({"float"}), (-(2.0**-140),))
    assert sorted(sign.values) == [-1, 0]


def test_remquo_quotient_sign_and_low_bits():
    r, q = lanewise("remquo", "float", NONE, (-7.0, 2.0))
    assert r.values == [1.0] and q.values == [-4]  # -3.5 rounds to even -4; r = -7 + 8
    e = pack([q], "int")
    # any quotient congruent to -4 in its low 7 bits with the sign of x/y: -4 and -132 pass, 4 and -5 fail
    got = np.array([-4, -132, 4, -5], np.int32).view(np.uint32)
    e4 = e.select(np.zeros(4, np.intp))
    assert list(e4.accepts(got)) == [True, True, False, False]


# ---- flush to zero and build options -------------------------------------------------------------------


def test_flush_to_zero_alternatives_only_where_allowed():
    sub = 2.0**-140
    lane, = lanewise("sqrt", "float", NONE, (sub,))
    assert 0.0 not in lane.values
    lane, = lanewise("sqrt", "float", frozenset({"float"}), (sub,))  # §7.5.3: the operand read as ±0
    assert {bits32(v) for v in lane.values} >= {bits32(0.0), bits32(-0.0)}
    lane, = lanewise("ldexp", "float", frozenset({"float"}), (1.0, -140))  # a subnormal result may flush
    assert {bits32(v) for v in lane.values} == {bits32(2.0**-140), bits32(0.0), bits32(-0.0)}
    lane, = lanewise("ldexp", "double", frozenset({"daz"}), (1.0, -1050))  # -cl-denorms-are-zero: double too
    assert 0.0 in lane.values


def test_build_options_change_the_rules():
    unsafe = build_flags("-cl-unsafe-math-optimizations", frozenset({"cl2.0"}))
    assert not lanewise("exp", "float", option_flags("-cl-finite-math-only"), (math.inf,))[0].judged
    assert not lanewise("sin", "float", option_flags("-cl-unsafe-math-optimizations"), (1.0,))[0].judged  # OpenCL C 1.2
    lane, = lanewise("sin", "float", unsafe, (1.0,))  # Table 67: absolute 2^-11 in [-pi, pi]
    lo, hi = lane.ranges[0]
    assert abs(lo - (math.sin(1.0) - 2.0**-11)) < 1e-6 and abs(hi - (math.sin(1.0) + 2.0**-11)) < 1e-6
    assert not lanewise("sin", "float", unsafe, (4.0,))[0].judged  # outside: larger
    lane, = lanewise("exp", "float", unsafe, (3.0,))
    assert lane.limit == 3 + 6  # 3 + floor(fabs(2x)) ulp
    assert not lanewise("tan", "float", unsafe, (1.0,))[0].judged  # derived: no ulp bound
    assert not lanewise("fabs", "float", unsafe, (-0.0,))[0].judged  # an edge case: void
    lane, = lanewise("fabs", "float", unsafe, (-2.5,))  # not an edge: Table 65's 0 ulp holds
    assert lane.judged and [bits32(v) for v in lane.values] == [bits32(2.5)]


def test_undefined_results_are_never_judged():
    assert not lanewise("mix", "float", NONE, (1.0, 2.0, 1.5))[0].judged  # a outside [0, 1]
    assert not lanewise("smoothstep", "float", NONE, (2.0, 1.0, 1.5))[0].judged  # edge0 >= edge1
    assert not lanewise("lgamma", "float", NONE, (3.5,))[0].judged  # Table 65: undefined accuracy
    assert not lanewise("half_sin", "float", NONE, (2.0**17,))[0].judged  # |x| > 2^16
    lane, = lanewise("mix", "float", NONE, (1.0, 3.0, 0.25))
    assert lane.ranges[0][0] <= 1.5 <= lane.ranges[0][1] and lane.ranges[0][1] - lane.ranges[0][0] <= 2.1e-3


def _accepts(lane, v: float) -> bool:
    return any(lo <= v <= hi for lo, hi in lane.ranges) or any(bits32(v) == bits32(w) for w in lane.values)


@pytest.mark.parametrize("x, y, a", [(3.4028234663852886e38, 1.0001, 1.0), (1e30, -3.0, 1.0), (1e8, 1.5, 0.75),
                                     (-2.5e38, 7.0, 0.999)])
def test_mix_accepts_the_exact_value_and_the_formula_rounded_to_float(x, y, a):
    """§6.15.4: mix is "implemented as x + (y - x) * a"; §7.4 measures from the infinitely precise
    result. Where float rounding loses y (|x| huge), both readings are accepted within 1e-3 and
    nothing else is (mix(FLT_MAX, 1.0001f, 1.0f): 1.0001 exactly, 0 in float)."""
    x, y, a = f32(x), f32(y), f32(a)
    lane, = lanewise("mix", "float", NONE, (x, y, a))
    X, Y, A = np.float32(x), np.float32(y), np.float32(a)
    with np.errstate(all="ignore"):
        in_float = float(X + (Y - X) * A)
    exact = Fraction(x) + (Fraction(y) - Fraction(x)) * Fraction(a)
    assert _accepts(lane, in_float) and _accepts(lane, f32(float(exact)))
    with np.errstate(all="ignore"):
        fused = f32(float(Fraction(float(Y - X)) * Fraction(a) + Fraction(x)))  # as a mad or fma contraction
    near = [exact, Fraction(in_float), Fraction(fused)]  # every accepted float: within 1e-3 of one, or nearest one
    for v in [b for r in lane.ranges if r[0] <= r[1] for b in r] + lane.values:
        assert min(abs(Fraction(v) - c) for c in near) <= Fraction(1001, 10**6) or v in [f32(float(c)) for c in near]
    assert lane.rule == "math.mix.float.formula"


def test_mix_and_smoothstep_are_not_judged_where_the_formula_overflows_in_the_type():
    big = 3.4028234663852886e38
    assert not lanewise("mix", "float", NONE, (-big, big, 0.0))[0].judged  # y - x: inf, inf * 0: NaN
    assert not lanewise("smoothstep", "float", NONE, (-big, big, 0.0))[0].judged  # e1 - e0: inf
    lane, = lanewise("smoothstep", "float", NONE, (0.0, 1.0, 0.25))
    assert _accepts(lane, 0.15625) and not _accepts(lane, 0.15625 + 2e-5)  # 0.25² (3 - 0.5), exact


# ---- programs: both results of an out-parameter reach their buffers ----------------------------------------


def test_expected_fills_the_out_parameter_buffer():
    bits = [bits32(v) for v in (2.75, -0.0, -1e-10, math.inf)]
    t = Type("float")
    program = Program((Buffer("in0", t, "in", Fill(0, values=tuple(bits))), Buffer("out0", t, "out"),
                       Buffer("out1", t, "out")),
                      (Store("out0", Op("fract", (Load("in0", t),), t, (("out", "out1"),))),), 4, area="math")
    from oracles import expected
    e = expected(program)
    assert [float(v) for v in e["out0"].reference] == [0.75, -0.0, f32(1 - 2.0**-24), 0.0]
    assert [float(v) for v in e["out1"].reference] == [2.0, -0.0, -1.0, math.inf]


# ---- §7.5.1 line by line, and the C99 Annex F.9 cases §7.5 incorporates -------------------------------
#
# OpenCL C 3.0.19 §7.5: "The edge case behavior of the math functions shall conform to sections F.9
# and G.6 of the C99 Specification, except where noted below." §7.5.1: "Those values shall produce
# exactly the prescribed answers, and no other. Where the ± symbol is used, the sign shall be
# preserved." Each case quotes its sentence: OpenCL C's from the specification's source (tag v3.0.19;
# the published text is quoted where it differs), C99's from ISO/IEC 9899:1999 Annex F.9. A ± sentence
# is checked for both signs. "nan": any NaN; ("near", v): a reference the function's bound applies to.

INF, NAN = math.inf, math.nan
SPIRV = frozenset({"spirv"})
PI = float(mpmath.pi)


def _ascii(quote: str) -> str:
    return quote.replace("±", "+-").replace("∞", "inf").replace("π", "pi").replace("≤", "<=").replace("−", "-")


OPENCL_C = [
    ("acospi(1) = +0.", "acospi", (1.0,), [0.0]),
    ("acospi(x) returns a NaN for |x| > 1.", "acospi", (1.5,), "nan"),
    ("acospi(x) returns a NaN for |x| > 1. (x = -inf)", "acospi", (-INF,), "nan"),
    ("asinpi(±0) = ±0. (+0)", "asinpi", (0.0,), [0.0]),
    ("asinpi(±0) = ±0. (-0)", "asinpi", (-0.0,), [-0.0]),
    ("asinpi(x) returns a NaN for |x| > 1.", "asinpi", (-2.0,), "nan"),
    ("atanpi(±0) = ±0. (+0)", "atanpi", (0.0,), [0.0]),
    ("atanpi(±0) = ±0. (-0)", "atanpi", (-0.0,), [-0.0]),
    ("atanpi(±∞) = ±0.5. (+inf)", "atanpi", (INF,), [0.5]),
    ("atanpi(±∞) = ±0.5. (-inf)", "atanpi", (-INF,), [-0.5]),
    ("atan2pi(±0, -0) = ±1. (+0)", "atan2pi", (0.0, -0.0), [1.0]),
    ("atan2pi(±0, -0) = ±1. (-0)", "atan2pi", (-0.0, -0.0), [-1.0]),
    ("atan2pi(±0, +0) = ±0. (+0)", "atan2pi", (0.0, 0.0), [0.0]),
    ("atan2pi(±0, +0) = ±0. (-0)", "atan2pi", (-0.0, 0.0), [-0.0]),
    ("atan2pi(±0, x) returns ±1 for x < 0. (+0)", "atan2pi", (0.0, -2.0), [1.0]),
    ("atan2pi(±0, x) returns ±1 for x < 0. (-0)", "atan2pi", (-0.0, -INF), [-1.0]),
    ("atan2pi(±0, x) returns ±0 for x > 0. (+0)", "atan2pi", (0.0, 3.0), [0.0]),
    ("atan2pi(±0, x) returns ±0 for x > 0. (-0)", "atan2pi", (-0.0, INF), [-0.0]),
    ("atan2pi(y, ±0) returns -0.5 for y < 0. (+0)", "atan2pi", (-2.0, 0.0), [-0.5]),
    ("atan2pi(y, ±0) returns -0.5 for y < 0. (-0)", "atan2pi", (-2.0, -0.0), [-0.5]),
    ("atan2pi(y, ±0) returns 0.5 for y > 0.", "atan2pi", (2.0, -0.0), [0.5]),
    ("atan2pi(±y, -∞) returns ±1 for finite y > 0. (+y)", "atan2pi", (2.0, -INF), [1.0]),
    ("atan2pi(±y, -∞) returns ±1 for finite y > 0. (-y)", "atan2pi", (-2.0, -INF), [-1.0]),
    ("atan2pi(±y, +∞) returns ±0 for finite y > 0. (+y)", "atan2pi", (2.0, INF), [0.0]),
    ("atan2pi(±y, +∞) returns ±0 for finite y > 0. (-y)", "atan2pi", (-2.0, INF), [-0.0]),
    ("atan2pi(±∞, x) returns ±0.5 for finite x. (+inf)", "atan2pi", (INF, -3.0), [0.5]),
    ("atan2pi(±∞, x) returns ±0.5 for finite x. (-inf)", "atan2pi", (-INF, 0.0), [-0.5]),
    ("atan2pi(±∞, -∞) returns ±0.75. (+inf)", "atan2pi", (INF, -INF), [0.75]),
    ("atan2pi(±∞, -∞) returns ±0.75. (-inf)", "atan2pi", (-INF, -INF), [-0.75]),
    ("atan2pi(±∞, +∞) returns ±0.25. (+inf)", "atan2pi", (INF, INF), [0.25]),
    ("atan2pi(±∞, +∞) returns ±0.25. (-inf)", "atan2pi", (-INF, INF), [-0.25]),
    ("ceil(-1 < x < 0) returns -0.", "ceil", (-0.75,), [-0.0]),
    ("cospi(±0) returns 1 (+0)", "cospi", (0.0,), [1.0]),
    ("cospi(±0) returns 1 (-0)", "cospi", (-0.0,), [1.0]),
    ("cospi(n + 0.5) is +0 for any integer n where n + 0.5 is representable. (n = 2)", "cospi", (2.5,), [0.0]),
    ("cospi(n + 0.5) is +0 for any integer n where n + 0.5 is representable. (n = -4)", "cospi", (-3.5,), [0.0]),
    ("cospi(n + 0.5) is +0 for any integer n where n + 0.5 is representable. (n = 2^22)", "cospi",
     (2.0**22 + 0.5,), [0.0]),
    ("cospi(±∞) returns a NaN.", "cospi", (-INF,), "nan"),
    ("exp10(-∞) returns +0.", "exp10", (-INF,), [0.0]),
    ("exp10(+∞) returns +∞.", "exp10", (INF,), [INF]),
    ("fdim(any, NaN) returns NaN.", "fdim", (INF, NAN), "nan"),
    ("fdim(NaN, any) returns NaN.", "fdim", (NAN, -INF), "nan"),
    ("fmod(±0, NaN) returns NaN. (-0)", "fmod", (-0.0, NAN), "nan"),
    ("frexp(±∞, exp) returns ±∞ and stores 0 in exp. (+inf)", "frexp", (INF,), ([INF], [0])),
    ("frexp(±∞, exp) returns ±∞ and stores 0 in exp. (-inf)", "frexp", (-INF,), ([-INF], [0])),
    ("frexp(NaN, exp) returns the NaN and stores 0 in exp.", "frexp", (NAN,), ("nan", [0])),
    (("fract(x, iptr) shall not return a value greater than or equal to 1.0, and shall not return a value "
      "less than 0."), "fract", (-(2.0**-149),), ([1 - 2.0**-24], [-1.0])),
    ("fract(+0, iptr) returns +0 and +0 in iptr.", "fract", (0.0,), ([0.0], [0.0])),
    ("fract(-0, iptr) returns -0 and -0 in iptr.", "fract", (-0.0,), ([-0.0], [-0.0])),
    ("fract(+∞, iptr) returns +0 and +∞ in iptr.", "fract", (INF,), ([0.0], [INF])),
    ("fract(-∞, iptr) returns -0 and -∞ in iptr.", "fract", (-INF,), ([-0.0], [-INF])),
    ("fract(NaN, iptr) returns the NaN and NaN in iptr.", "fract", (NAN,), ("nan", "nan")),
    ("lgamma_r(x, signp) returns 0 in signp if x is zero or a negative integer. (-0)", "lgamma_r", (-0.0,),
     ([INF], [0])),
    ("lgamma_r(x, signp) returns 0 in signp if x is zero or a negative integer. (-3)", "lgamma_r", (-3.0,),
     ([INF], [0])),
    ("nextafter(-0, y > 0) returns smallest positive denormal value.", "nextafter", (-0.0, 1.0), [2.0**-149]),
    ("nextafter(+0, y < 0) returns smallest negative denormal value.", "nextafter", (0.0, -INF), [-(2.0**-149)]),
    ("pow(±0, -∞) returns +∞ (+0)", "pow", (0.0, -INF), [INF]),
    ("pow(±0, -∞) returns +∞ (-0)", "pow", (-0.0, -INF), [INF]),
    ("pown(x, 0) is 1 for any x, even zero, NaN or infinity. (-0)", "pown", (-0.0, 0), [1.0]),
    ("pown(x, 0) is 1 for any x, even zero, NaN or infinity. (NaN)", "pown", (NAN, 0), [1.0]),
    ("pown(x, 0) is 1 for any x, even zero, NaN or infinity. (-inf)", "pown", (-INF, 0), [1.0]),
    ("pown(±0, n) is ±∞ for odd n < 0. (+0)", "pown", (0.0, -3), [INF]),
    ("pown(±0, n) is ±∞ for odd n < 0. (-0)", "pown", (-0.0, -1), [-INF]),
    ("pown(±0, n) is +∞ for even n < 0. (-0)", "pown", (-0.0, -2), [INF]),
    # §7.5.1 as published reads "±0 for even n > 0"; its source and the SPIR-V environment §6.7.1 read +0
    ("pown(±0, n) is +0 for even n > 0. (-0)", "pown", (-0.0, 2), [0.0]),
    ("pown(±0, n) is ±0 for odd n > 0. (+0)", "pown", (0.0, 3), [0.0]),
    ("pown(±0, n) is ±0 for odd n > 0. (-0)", "pown", (-0.0, 3), [-0.0]),
    ("powr(x, ±0) is 1 for finite x > 0. (+0)", "powr", (2.0, 0.0), [1.0]),
    ("powr(x, ±0) is 1 for finite x > 0. (-0)", "powr", (3e38, -0.0), [1.0]),
    ("powr(±0, y) is +∞ for finite y < 0. (-0)", "powr", (-0.0, -1.0), [INF]),
    ("powr(±0, -∞) is +∞. (-0)", "powr", (-0.0, -INF), [INF]),
    # §7.5.1 as published reads "±0 for y > 0", like its pown line; its source and the SPIR-V environment: +0
    ("powr(±0, y) is +0 for y > 0. (+0)", "powr", (0.0, 3.0), [0.0]),
    ("powr(±0, y) is +0 for y > 0. (-0)", "powr", (-0.0, 2.0), [0.0]),
    ("powr(±0, y) is +0 for y > 0. (-0, y = +inf)", "powr", (-0.0, INF), [0.0]),
    ("powr(+1, y) is 1 for finite y.", "powr", (1.0, -5.5), [1.0]),
    ("powr(x, y) returns NaN for x < 0.", "powr", (-1.0, 2.0), "nan"),
    ("powr(x, y) returns NaN for x < 0. (x = -inf)", "powr", (-INF, 1.0), "nan"),
    ("powr(±0, ±0) returns NaN. (-0, +0)", "powr", (-0.0, 0.0), "nan"),
    ("powr(+∞, ±0) returns NaN. (-0)", "powr", (INF, -0.0), "nan"),
    ("powr(+1, ±∞) returns NaN. (-inf)", "powr", (1.0, -INF), "nan"),
    ("powr(x, NaN) returns the NaN for x >= 0.", "powr", (0.0, NAN), "nan"),
    ("powr(NaN, y) returns the NaN.", "powr", (NAN, 0.0), "nan"),
    ("rint(-0.5 <= x < 0) returns -0. (x = -0.5)", "rint", (-0.5,), [-0.0]),
    ("rint(-0.5 <= x < 0) returns -0. (x = -0.25)", "rint", (-0.25,), [-0.0]),
    ("remquo(x, y, &quo) returns a NaN and 0 in quo if x is ±∞", "remquo", (-INF, 2.0), ("nan", [0])),
    ("remquo(x, y, &quo) returns a NaN and 0 in quo if ... y is 0 and the other argument is non-NaN",
     "remquo", (3.0, -0.0), ("nan", [0])),
    ("remquo(x, y, &quo) returns a NaN and 0 in quo if ... either argument is a NaN", "remquo", (NAN, 2.0),
     ("nan", [0])),
    ("rootn(±0, n) is ±∞ for odd n < 0. (-0)", "rootn", (-0.0, -3), [-INF]),
    ("rootn(±0, n) is +∞ for even n < 0. (-0)", "rootn", (-0.0, -2), [INF]),
    ("rootn(±0, n) is +0 for even n > 0. (-0)", "rootn", (-0.0, 2), [0.0]),  # as published: "±0"
    ("rootn(±0, n) is ±0 for odd n > 0. (-0)", "rootn", (-0.0, 3), [-0.0]),
    ("rootn(±0, n) is ±0 for odd n > 0. (+0)", "rootn", (0.0, 5), [0.0]),
    ("rootn(x, n) returns a NaN for x < 0 and n is even.", "rootn", (-4.0, 2), "nan"),
    ("rootn(x, 0) returns a NaN.", "rootn", (4.0, 0), "nan"),
    ("round(-0.5 < x < 0) returns -0.", "round", (-0.25,), [-0.0]),
    ("sinpi(±0) returns ±0. (+0)", "sinpi", (0.0,), [0.0]),
    ("sinpi(±0) returns ±0. (-0)", "sinpi", (-0.0,), [-0.0]),
    ("sinpi(+n) returns +0 for positive integers n.", "sinpi", (3.0,), [0.0]),
    ("sinpi(-n) returns -0 for negative integers n.", "sinpi", (-2.0**30,), [-0.0]),
    ("sinpi(±∞) returns a NaN.", "sinpi", (INF,), "nan"),
    ("tanpi(±0) returns ±0. (-0)", "tanpi", (-0.0,), [-0.0]),
    ("tanpi(±∞) returns a NaN.", "tanpi", (-INF,), "nan"),
    ("tanpi(n) is copysign(0.0, n) for even integers n. (n = -2)", "tanpi", (-2.0,), [-0.0]),
    ("tanpi(n) is copysign(0.0, n) for even integers n. (n = 4)", "tanpi", (4.0,), [0.0]),
    ("tanpi(n) is copysign(0.0, - n) for odd integers n. (n = 3)", "tanpi", (3.0,), [-0.0]),
    ("tanpi(n) is copysign(0.0, - n) for odd integers n. (n = -3)", "tanpi", (-3.0,), [0.0]),
    ("tanpi(n + 0.5) for even integer n is +∞ where n + 0.5 is representable. (n = -2)", "tanpi", (-1.5,), [INF]),
    ("tanpi(n + 0.5) for odd integer n is -∞ where n + 0.5 is representable. (n = -1)", "tanpi", (-0.5,), [-INF]),
    ("tanpi(n + 0.5) for odd integer n is -∞ where n + 0.5 is representable. (n = 2^22 + 1)", "tanpi",
     (2.0**22 + 1.5,), [-INF]),
    ("trunc(-1 < x < 0) returns -0.", "trunc", (-0.9,), [-0.0]),
    # "half_ functions behave identically to the function of the same name without the half_ prefix. They must
    # conform to the same edge case requirements"
    ("half_ functions ... must conform to the same edge case requirements (half_powr)", "half_powr", (-0.0, 2.0),
     [0.0]),
    ("half_ functions ... must conform to the same edge case requirements (half_sqrt)", "half_sqrt", (-0.0,), [-0.0]),
    ("half_ functions ... must conform to the same edge case requirements (half_log)", "half_log", (-0.0,), [-INF]),
    ("half_ functions ... must conform to the same edge case requirements (half_recip)", "half_recip", (-0.0,),
     [-INF]),
]

C99_F9 = [
    ("F.9.1.1 acos(1) returns +0.", "acos", (1.0,), [0.0]),
    ("F.9.1.1 acos(x) returns a NaN ... for |x| > 1.", "acos", (-1.5,), "nan"),
    ("F.9.1.2 asin(±0) returns ±0. (-0)", "asin", (-0.0,), [-0.0]),
    ("F.9.1.2 asin(x) returns a NaN ... for |x| > 1.", "asin", (INF,), "nan"),
    ("F.9.1.3 atan(±0) returns ±0. (-0)", "atan", (-0.0,), [-0.0]),
    ("F.9.1.3 atan(±∞) returns ±π/2. (-inf)", "atan", (-INF,), ("near", -PI / 2)),
    ("F.9.1.4 atan2(±0, -0) returns ±π. (-0)", "atan2", (-0.0, -0.0), ("near", -PI)),
    ("F.9.1.4 atan2(±0, +0) returns ±0. (-0)", "atan2", (-0.0, 0.0), [-0.0]),
    ("F.9.1.4 atan2(±0, x) returns ±π for x < 0. (+0)", "atan2", (0.0, -1.0), ("near", PI)),
    ("F.9.1.4 atan2(±0, x) returns ±0 for x > 0. (-0)", "atan2", (-0.0, 1.0), [-0.0]),
    ("F.9.1.4 atan2(y, ±0) returns -π/2 for y < 0.", "atan2", (-1.0, 0.0), ("near", -PI / 2)),
    ("F.9.1.4 atan2(y, ±0) returns π/2 for y > 0.", "atan2", (1.0, -0.0), ("near", PI / 2)),
    ("F.9.1.4 atan2(±y, -∞) returns ±π for finite y > 0. (-y)", "atan2", (-1.0, -INF), ("near", -PI)),
    ("F.9.1.4 atan2(±y, +∞) returns ±0 for finite y > 0. (-y)", "atan2", (-1.0, INF), [-0.0]),
    ("F.9.1.4 atan2(±∞, x) returns ±π/2 for finite x. (-inf)", "atan2", (-INF, 1.0), ("near", -PI / 2)),
    ("F.9.1.4 atan2(±∞, -∞) returns ±3π/4. (+inf)", "atan2", (INF, -INF), ("near", 3 * PI / 4)),
    ("F.9.1.4 atan2(±∞, +∞) returns ±π/4. (-inf)", "atan2", (-INF, INF), ("near", -PI / 4)),
    ("F.9.1.5 cos(±0) returns 1. (-0)", "cos", (-0.0,), [1.0]),
    ("F.9.1.5 cos(±∞) returns a NaN", "cos", (-INF,), "nan"),
    ("F.9.1.6 sin(±0) returns ±0. (-0)", "sin", (-0.0,), [-0.0]),
    ("F.9.1.6 sin(±∞) returns a NaN", "sin", (INF,), "nan"),
    ("F.9.1.7 tan(±0) returns ±0. (-0)", "tan", (-0.0,), [-0.0]),
    ("F.9.1.7 tan(±∞) returns a NaN", "tan", (-INF,), "nan"),
    ("F.9.2.1 acosh(1) returns +0.", "acosh", (1.0,), [0.0]),
    ("F.9.2.1 acosh(x) returns a NaN ... for x < 1.", "acosh", (0.5,), "nan"),
    ("F.9.2.1 acosh(+∞) returns +∞.", "acosh", (INF,), [INF]),
    ("F.9.2.2 asinh(±0) returns ±0. (-0)", "asinh", (-0.0,), [-0.0]),
    ("F.9.2.2 asinh(±∞) returns ±∞. (-inf)", "asinh", (-INF,), [-INF]),
    ("F.9.2.3 atanh(±0) returns ±0. (-0)", "atanh", (-0.0,), [-0.0]),
    ("F.9.2.3 atanh(±1) returns ±∞ (-1)", "atanh", (-1.0,), [-INF]),
    ("F.9.2.3 atanh(x) returns a NaN ... for |x| > 1.", "atanh", (INF,), "nan"),
    ("F.9.2.4 cosh(±0) returns 1. (-0)", "cosh", (-0.0,), [1.0]),
    ("F.9.2.4 cosh(±∞) returns +∞. (-inf)", "cosh", (-INF,), [INF]),
    ("F.9.2.5 sinh(±0) returns ±0. (-0)", "sinh", (-0.0,), [-0.0]),
    ("F.9.2.5 sinh(±∞) returns ±∞. (-inf)", "sinh", (-INF,), [-INF]),
    ("F.9.2.6 tanh(±0) returns ±0. (-0)", "tanh", (-0.0,), [-0.0]),
    ("F.9.2.6 tanh(±∞) returns ±1. (+inf)", "tanh", (INF,), [1.0]),
    ("F.9.3.1 exp(±0) returns 1. (-0)", "exp", (-0.0,), [1.0]),
    ("F.9.3.1 exp(-∞) returns +0.", "exp", (-INF,), [0.0]),
    ("F.9.3.1 exp(+∞) returns +∞.", "exp", (INF,), [INF]),
    ("F.9.3.2 exp2(±0) returns 1. (-0)", "exp2", (-0.0,), [1.0]),
    ("F.9.3.2 exp2(-∞) returns +0.", "exp2", (-INF,), [0.0]),
    ("F.9.3.3 expm1(±0) returns ±0. (-0)", "expm1", (-0.0,), [-0.0]),
    ("F.9.3.3 expm1(-∞) returns -1.", "expm1", (-INF,), [-1.0]),
    ("F.9.3.3 expm1(+∞) returns +∞.", "expm1", (INF,), [INF]),
    ("F.9.3.4 frexp(±0, exp) returns ±0, and stores 0 in the object pointed to by exp. (-0)", "frexp", (-0.0,),
     ([-0.0], [0])),
    ("7.12.6.5 ilogb: If x is zero they compute the value FP_ILOGB0 (INT_MIN or -INT_MAX, §6.15.2.1)", "ilogb",
     (-0.0,), [-(2**31), -(2**31) + 1]),
    ("7.12.6.5 ilogb: if x is infinite they compute the value INT_MAX", "ilogb", (-INF,), [2**31 - 1]),
    ("7.12.6.5 ilogb: if x is a NaN they compute the value FP_ILOGBNAN (INT_MAX or INT_MIN, §6.15.2.1)", "ilogb",
     (NAN,), [2**31 - 1, -(2**31)]),
    ("F.9.3.6 ldexp(±0, exp) returns ±0. (-0)", "ldexp", (-0.0, 7), [-0.0]),
    ("F.9.3.6 ldexp(±∞, exp) returns ±∞. (-inf)", "ldexp", (-INF, -7), [-INF]),
    ("F.9.3.7 log(±0) returns -∞ (+0)", "log", (0.0,), [-INF]),
    ("F.9.3.7 log(1) returns +0.", "log", (1.0,), [0.0]),
    ("F.9.3.7 log(x) returns a NaN ... for x < 0.", "log", (-INF,), "nan"),
    ("F.9.3.7 log(+∞) returns +∞.", "log", (INF,), [INF]),
    ("F.9.3.8 log10(±0) returns -∞ (-0)", "log10", (-0.0,), [-INF]),
    ("F.9.3.8 log10(1) returns +0.", "log10", (1.0,), [0.0]),
    ("F.9.3.9 log1p(±0) returns ±0. (-0)", "log1p", (-0.0,), [-0.0]),
    ("F.9.3.9 log1p(-1) returns -∞", "log1p", (-1.0,), [-INF]),
    ("F.9.3.9 log1p(x) returns a NaN ... for x < -1.", "log1p", (-2.0,), "nan"),
    ("F.9.3.9 log1p(+∞) returns +∞.", "log1p", (INF,), [INF]),
    ("F.9.3.10 log2(±0) returns -∞ (-0)", "log2", (-0.0,), [-INF]),
    ("F.9.3.10 log2(1) returns +0.", "log2", (1.0,), [0.0]),
    ("F.9.3.10 log2(x) returns a NaN ... for x < 0.", "log2", (-1.0,), "nan"),
    ("F.9.3.11 logb(±0) returns -∞ (-0)", "logb", (-0.0,), [-INF]),
    ("F.9.3.11 logb(±∞) returns +∞. (-inf)", "logb", (-INF,), [INF]),
    ("F.9.3.12 modf(±x, iptr) returns a result with the same sign as x. (-2)", "modf", (-2.0,), ([-0.0], [-2.0])),
    ("F.9.3.12 modf(±∞, iptr) returns ±0 and stores ±∞ in the object pointed to by iptr. (+inf)", "modf", (INF,),
     ([0.0], [INF])),
    ("F.9.3.12 modf(NaN, iptr) stores a NaN in the object pointed to by iptr (and returns a NaN).", "modf",
     (NAN,), ("nan", "nan")),
    ("F.9.4.1 cbrt(±0) returns ±0. (-0)", "cbrt", (-0.0,), [-0.0]),
    ("F.9.4.1 cbrt(±∞) returns ±∞. (-inf)", "cbrt", (-INF,), [-INF]),
    ("F.9.4.2 fabs(±0) returns +0. (-0)", "fabs", (-0.0,), [0.0]),
    ("F.9.4.2 fabs(±∞) returns +∞. (-inf)", "fabs", (-INF,), [INF]),
    ("F.9.4.3 hypot(x, ±0) is equivalent to fabs(x). (-0)", "hypot", (-5.0, -0.0), [5.0]),
    ("F.9.4.3 hypot(x, ±0) is equivalent to fabs(x). (x = -0)", "hypot", (-0.0, 0.0), [0.0]),
    ("F.9.4.3 hypot(±∞, y) returns +∞, even if y is a NaN. (-inf)", "hypot", (NAN, -INF), [INF]),
    ("F.9.4.4 pow(±0, y) returns ±∞ ... for y an odd integer < 0. (-0)", "pow", (-0.0, -1.0), [-INF]),
    ("F.9.4.4 pow(±0, y) returns +∞ ... for y < 0 and not an odd integer. (-0)", "pow", (-0.0, -0.5), [INF]),
    ("F.9.4.4 pow(±0, y) returns ±0 for y an odd integer > 0. (-0)", "pow", (-0.0, 3.0), [-0.0]),
    ("F.9.4.4 pow(±0, y) returns +0 for y > 0 and not an odd integer. (-0)", "pow", (-0.0, 2.0), [0.0]),
    ("F.9.4.4 pow(-1, ±∞) returns 1. (-inf)", "pow", (-1.0, -INF), [1.0]),
    ("F.9.4.4 pow(+1, y) returns 1 for any y, even a NaN.", "pow", (1.0, NAN), [1.0]),
    ("F.9.4.4 pow(x, ±0) returns 1 for any x, even a NaN. (-0)", "pow", (NAN, -0.0), [1.0]),
    ("F.9.4.4 pow(x, y) returns a NaN ... for finite x < 0 and finite non-integer y.", "pow", (-2.0, 0.5), "nan"),
    ("F.9.4.4 pow(x, -∞) returns +∞ for |x| < 1.", "pow", (-0.5, -INF), [INF]),
    ("F.9.4.4 pow(x, -∞) returns +0 for |x| > 1.", "pow", (-2.0, -INF), [0.0]),
    ("F.9.4.4 pow(x, +∞) returns +0 for |x| < 1.", "pow", (0.5, INF), [0.0]),
    ("F.9.4.4 pow(x, +∞) returns +∞ for |x| > 1.", "pow", (-3.0, INF), [INF]),
    ("F.9.4.4 pow(-∞, y) returns -0 for y an odd integer < 0.", "pow", (-INF, -3.0), [-0.0]),
    ("F.9.4.4 pow(-∞, y) returns +0 for y < 0 and not an odd integer.", "pow", (-INF, -2.5), [0.0]),
    ("F.9.4.4 pow(-∞, y) returns -∞ for y an odd integer > 0.", "pow", (-INF, 3.0), [-INF]),
    ("F.9.4.4 pow(-∞, y) returns +∞ for y > 0 and not an odd integer.", "pow", (-INF, 2.0), [INF]),
    ("F.9.4.4 pow(+∞, y) returns +0 for y < 0.", "pow", (INF, -1.0), [0.0]),
    ("F.9.4.4 pow(+∞, y) returns +∞ for y > 0.", "pow", (INF, 0.5), [INF]),
    ("F.9.4.5 sqrt is fully specified as a basic arithmetic operation in IEC 60559 (-0)", "sqrt", (-0.0,), [-0.0]),
    ("F.9.4.5 sqrt is fully specified as a basic arithmetic operation in IEC 60559 (x < 0)", "sqrt", (-1.0,), "nan"),
    ("F.9.4.5 sqrt is fully specified as a basic arithmetic operation in IEC 60559 (+inf)", "sqrt", (INF,), [INF]),
    ("F.9.5.1 erf(±0) returns ±0. (-0)", "erf", (-0.0,), [-0.0]),
    ("F.9.5.1 erf(±∞) returns ±1. (-inf)", "erf", (-INF,), [-1.0]),
    ("F.9.5.2 erfc(-∞) returns 2.", "erfc", (-INF,), [2.0]),
    ("F.9.5.2 erfc(+∞) returns +0.", "erfc", (INF,), [0.0]),
    ("F.9.5.3 lgamma(1) returns +0.", "lgamma", (1.0,), [0.0]),
    ("F.9.5.3 lgamma(2) returns +0.", "lgamma", (2.0,), [0.0]),
    ("F.9.5.3 lgamma(x) returns +∞ ... for x a negative integer or zero. (-0)", "lgamma", (-0.0,), [INF]),
    ("F.9.5.3 lgamma(-∞) returns +∞.", "lgamma", (-INF,), [INF]),
    ("F.9.5.3 lgamma(+∞) returns +∞.", "lgamma", (INF,), [INF]),
    ("F.9.5.4 tgamma(±0) returns ±∞ (-0)", "tgamma", (-0.0,), [-INF]),
    ("F.9.5.4 tgamma(x) returns a NaN ... for x a negative integer.", "tgamma", (-1.0,), "nan"),
    ("F.9.5.4 tgamma(-∞) returns a NaN", "tgamma", (-INF,), "nan"),
    ("F.9.5.4 tgamma(+∞) returns +∞.", "tgamma", (INF,), [INF]),
    ("F.9.6.1 ceil(±0) returns ±0. (-0)", "ceil", (-0.0,), [-0.0]),
    ("F.9.6.1 ceil(±∞) returns ±∞. (-inf)", "ceil", (-INF,), [-INF]),
    ("F.9.6.2 floor(±0) returns ±0. (-0)", "floor", (-0.0,), [-0.0]),
    ("F.9.6.2 floor(±∞) returns ±∞. (-inf)", "floor", (-INF,), [-INF]),
    ("F.9.6.4 rint (as nearbyint, F.9.6.3): rint(±0) returns ±0. (-0)", "rint", (-0.0,), [-0.0]),
    ("F.9.6.6 round(±0) returns ±0. (-0)", "round", (-0.0,), [-0.0]),
    ("F.9.6.6 round(±∞) returns ±∞. (-inf)", "round", (-INF,), [-INF]),
    ("F.9.6.8 trunc(±0) returns ±0. (-0)", "trunc", (-0.0,), [-0.0]),
    ("F.9.6.8 trunc(±∞) returns ±∞. (-inf)", "trunc", (-INF,), [-INF]),
    ("F.9.7.1 fmod(±0, y) returns ±0 for y not zero. (-0)", "fmod", (-0.0, -INF), [-0.0]),
    ("F.9.7.1 fmod(x, y) returns a NaN ... for x infinite or y zero. (x = inf)", "fmod", (INF, 2.0), "nan"),
    ("F.9.7.1 fmod(x, y) returns a NaN ... for x infinite or y zero. (y = -0)", "fmod", (2.0, -0.0), "nan"),
    ("F.9.7.1 fmod(x, ±∞) returns x for x not infinite.", "fmod", (-3.5, INF), [-3.5]),
    ("F.9.7.2 remainder ... fully specified as a basic arithmetic operation in IEC 60559 (x, inf)", "remainder",
     (-3.5, -INF), [-3.5]),
    ("F.9.7.2 remainder ... fully specified as a basic arithmetic operation in IEC 60559 (-0, y)", "remainder",
     (-0.0, 3.0), [-0.0]),
    ("F.9.7.2 remainder ... fully specified as a basic arithmetic operation in IEC 60559 (x, 0)", "remainder",
     (1.0, 0.0), "nan"),
    ("F.9.8.1 copysign is specified in the Appendix to IEC 60559.", "copysign", (INF, -0.0), [-INF]),
    ("F.9.8.2 All IEC 60559 implementations support quiet NaNs, in all floating types.", "nan", (0,), "nan"),
    # C99 7.12.11.3 "The nextafter functions ... return y if x equals y" is not incorporated (§7.5 takes F.9, and
    # OpenCL C's definition says nothing of x == y): nextafter(+0, -0) may be either zero
    ("(not prescribed) nextafter(+0, -0): x or y", "nextafter", (0.0, -0.0), [-0.0, 0.0]),
    ("7.12.12.1 fdim ... x - y if x > y, +0 if x <= y (x = -inf)", "fdim", (-INF, -INF), [0.0]),
    ("7.12.12.1 fdim ... x - y if x > y, +0 if x <= y (inf)", "fdim", (INF, 1.0), [INF]),
    ("F.9.9.2 If just one argument is a NaN, the fmax functions return the other argument", "fmax", (-INF, NAN),
     [-INF]),
    ("F.9.9.2 ... (if both arguments are NaNs, the functions return a NaN).", "fmax", (NAN, NAN), "nan"),
    ("F.9.9.3 If just one argument is a NaN, the fmin functions return the other argument", "fmin", (NAN, -0.0),
     [-0.0]),
    ("F.9.10.1 fma(x, y, z) returns a NaN ... if one of x and y is infinite, the other is zero, and z is a NaN.",
     "fma", (INF, 0.0, NAN), "nan"),
    ("F.9.10.1 fma(x, y, z) returns a NaN ... if one of x and y is infinite, the other is zero, and z is not a NaN.",
     "fma", (-0.0, INF, 1.0), "nan"),
    (("F.9.10.1 fma(x, y, z) returns a NaN ... if x times y is an exact infinity and z is also an infinity but "
      "with the opposite sign."), "fma", (INF, 2.0, -INF), "nan"),
    ("F.9 ¶11 Functions with a NaN argument return a NaN result ... (cbrt)", "cbrt", (NAN,), "nan"),
    ("F.9 ¶11 Functions with a NaN argument return a NaN result ... (atan2pi)", "atan2pi", (NAN, INF), "nan"),
    ("F.9 ¶11 Functions with a NaN argument return a NaN result ... (exp10)", "exp10", (NAN,), "nan"),
]


def _check(lane, want):
    assert lane.judged
    if want == "nan":
        assert lane.nan and not lane.ranges and all(math.isnan(v) for v in lane.values)
        return
    if isinstance(want, tuple):  # ("near", v): v is not a float; the function's bound around it, sign included
        lo, hi = lane.ranges[0]
        assert lo <= want[1] <= hi and math.copysign(1, lo) == math.copysign(1, hi) == math.copysign(1, want[1])
        return
    assert not lane.ranges and not lane.nan
    if isinstance(want[0], int):
        assert sorted(lane.values) == sorted(want)
    else:
        assert sorted(bits32(v) for v in lane.values) == sorted(bits32(v) for v in want)


@pytest.mark.parametrize("env", [NONE, SPIRV], ids=["opencl_c", "spirv"])
@pytest.mark.parametrize("quote, fn, args, want", OPENCL_C + C99_F9, ids=[_ascii(c[0]) for c in OPENCL_C + C99_F9])
def test_every_prescribed_value(quote, fn, args, want, env):
    """Each prescribed value of §7.5.1 (the SPIR-V environment's list, its §6.7.1, is the same apart
    from exp10(±0)) and of C99 F.9 is the oracle's only answer, sign included, on both paths."""
    lanes = lanewise(fn, "float", env, args)
    if isinstance(want, tuple) and want[0] != "near":  # (result, out-parameter)
        for lane, w in zip(lanes, want):
            _check(lane, w)
    else:
        _check(lanes[0], want)
    assert all(lane.rule != "unspecified" for lane in lanes)


def test_prescribed_values_hold_for_double_too():
    """'(and similar sections for other floating-point precisions)': the same cases for double."""
    assert lanewise("powr", "double", NONE, (-0.0, 3.0))[0].values == [0.0]
    assert math.copysign(1, lanewise("powr", "double", NONE, (-0.0, 3.0))[0].values[0]) == 1
    assert lanewise("pown", "double", NONE, (-0.0, -3))[0].values == [-math.inf]
    value, sign = lanewise("lgamma_r", "double", SPIRV, (-(2.0**60),))
    assert value.values == [math.inf] and sign.values == [0]


def test_flushing_allowances_do_not_apply_to_prescribed_values():
    """§7.5.1: "The usual allowances for rounding error or flushing behavior shall not apply for
    those values for which section F.9 ... prescribe a result (e.g. ceil(-1 < x < 0) returns -0).
    Those values shall produce exactly the prescribed answers, and no other." On a device that may
    flush, ceil(-0.5) is still only -0 and sinpi(-3) only -0."""
    ftz = frozenset({"float"})
    for fn, args, want in (("ceil", (-0.5,), -0.0), ("sinpi", (-3.0,), -0.0), ("powr", (-0.0, 2.0), 0.0)):
        lane, = lanewise(fn, "float", ftz, args)
        assert [bits32(v) for v in lane.values] == [bits32(want)] and not lane.ranges


def test_nextafter_flush_to_zero_alternatives():
    """§7.5.3: "If subnormals are flushed to zero, a device may choose to conform to the following
    edge cases for nextafter instead of those listed in the additional requirements section":
    "nextafter(-0, y > 0) returns smallest positive normal value", "nextafter(+0, y < 0) returns
    smallest negative normal value", "nextafter(+smallest normal, y < +smallest normal) = +0"."""
    ftz = frozenset({"float"})
    lane, = lanewise("nextafter", "float", ftz, (-0.0, 1.0))
    assert {bits32(v) for v in lane.values} == {bits32(v) for v in (2.0**-149, 2.0**-126, 0.0, -0.0)}
    assert lane.rule == "math.nextafter.ftz"
    lane, = lanewise("nextafter", "float", ftz, (0.0, -1.0))
    assert {bits32(v) for v in lane.values} == {bits32(v) for v in (-(2.0**-149), -(2.0**-126), 0.0, -0.0)}
    lane, = lanewise("nextafter", "float", ftz, (2.0**-126, 0.0))
    assert bits32(0.0) in {bits32(v) for v in lane.values}
    lane, = lanewise("nextafter", "float", NONE, (-0.0, 1.0))  # without flushing: the denormal only
    assert lane.values == [2.0**-149]


def test_exp10_of_zero_is_prescribed_on_spirv_paths_only():
    """OpenCL SPIR-V environment §6.7.1 (OpExtInst exp10): "exp10( ±0 ) returns 1."; OpenCL C 3.0.19
    §7.5.1 lists only
    "exp10(-∞) returns +0." and "exp10(+∞) returns +∞." and exp10 is not a C99 function: on the
    OpenCL C path exp10(±0) is within exp10's 3 ulp of 1 (Table 65)."""
    for x in (0.0, -0.0):
        lane, = lanewise("exp10", "float", SPIRV, (x,))
        assert lane.values == [1.0] and not lane.ranges and lane.rule == "math.exp10.special.spirv"
        lane, = lanewise("exp10", "float", NONE, (x,))
        assert lane.ranges and lane.ranges[0][0] < 1.0 < lane.ranges[0][1] and lane.rule == "math.exp10.float.ulp"


def test_fmin_fmax_with_a_signaling_nan():
    """Footnote 46: fmin and fmax "may not match the IEEE 754-2008 definition for minNum and maxNum
    with regard to signaling NaNs. Specifically, signaling NaNs may behave as quiet NaNs": with a
    signaling NaN the other operand or a NaN; with a quiet NaN the other operand only (F.9.9.2)."""
    from oracles.math import signaling
    lane, = lanewise("fmax", "float", NONE, (signaling(False), 2.0))
    assert lane.values[0] == 2.0 and lane.nan
    lane, = lanewise("fmin", "float", NONE, (2.0, math.nan))
    assert lane.values == [2.0] and not lane.nan


def test_limit_values_no_line_lists_name_their_rule():
    """No sentence lists rsqrt, degrees/radians or pown/rootn at ±∞; their value there is the limit
    signed as IEC 60559 arithmetic gives it (C99 F.9 ¶3: the functions "treat infinities, NaNs,
    signed zeros, subnormals ... in a manner consistent with the basic arithmetic operations")."""
    for fn, args, want in (("rsqrt", (-0.0,), -math.inf), ("rsqrt", (math.inf,), 0.0),
                           ("degrees", (-0.0,), -0.0), ("pown", (-math.inf, -3), -0.0),
                           ("rootn", (-math.inf, 3), -math.inf)):
        lane, = lanewise(fn, "float", NONE, args)
        assert [bits32(v) for v in lane.values] == [bits32(want)] and lane.rule == f"math.{fn}.limit"
    from oracles import RULES
    rule = next(r for r in RULES if r.id == "math.rsqrt.limit")
    assert "C99 F.9 ¶3" in rule.section and "shall" in rule.section


# ---- geometric functions at their edge cases (§7.5.1, §6.15.5) ----------------------------------------------


def test_normalize_prescribed_cases():
    """§7.5.1: "normalize(v) returns v if all elements of v are zero." "normalize(v) returns a
    vector full of NaNs if any element is a NaN." "normalize(v) for which any element in v is
    infinite shall proceed as if the elements in v were replaced as follows: v[i] = isinf(v[i]) ?
    copysign(1.0, v[i]) : 0.0 * v[i]" (then within normalize's 2 + n ulp)."""
    from oracles.math.geometric import geometric
    lanes = geometric("normalize", "float", NONE, ((0.0, -0.0, 0.0),))
    assert [[bits32(v) for v in lane.values] for lane in lanes] == [[bits32(0.0)], [bits32(-0.0)], [bits32(0.0)]]
    lanes = geometric("normalize", "float", NONE, ((1.0, math.nan, math.inf),))
    assert all(lane.judged and lane.nan for lane in lanes)
    lanes = geometric("normalize", "float", NONE, ((math.inf, 5.0, -math.inf, -1e30),))
    r = 1 / math.sqrt(2)
    for lane, want in zip(lanes, (r, 0.0, -r, 0.0)):  # normalize((1, +0, -1, -0))
        lo, hi = lane.ranges[0]
        assert lane.judged and lo <= want <= hi and lane.rule == "math.normalize.special.inf"
    assert lanes[0].limit == 6 and len(floats_between(*lanes[0].ranges[0])) == 12  # 2 + n = 6 ulp either side
    lanes = geometric("normalize", "float", NONE, ((-math.inf,),))
    assert lanes[0].ranges[0][0] <= -1.0 <= lanes[0].ranges[0][1]
    # fast_normalize: "If the sum of squares is greater than FLT_MAX then the value of the floating-point
    # values in the result vector are undefined" (§6.15.5): not judged
    assert not any(lane.judged for lane in geometric("fast_normalize", "float", NONE, ((math.inf, 1.0),)))


def test_length_and_distance_with_infinite_or_nan_components():
    """§6.15.5: length is "sqrt(p.x² + p.y² + ...)", distance "length(p0 - p1)": an infinite
    component (and no NaN) gives +∞, a NaN (and no infinity) a NaN. With both, that definition
    gives NaN and C99's hypot (F.9.4.3: "hypot(±∞, y) returns +∞, even if y is a NaN") +∞; §7.5
    incorporates F.9 for hypot, a math function, not for length, a geometric one: not judged."""
    from oracles.math.geometric import geometric
    assert geometric("length", "float", NONE, ((-math.inf, 2.0),))[0].values == [math.inf]
    assert geometric("fast_length", "float", NONE, ((1.0, -math.inf),))[0].values == [math.inf]
    assert geometric("length", "float", NONE, ((math.nan, 2.0),))[0].nan
    assert not geometric("length", "float", NONE, ((math.nan, math.inf),))[0].judged
    assert geometric("distance", "float", NONE, ((math.inf, 1.0), (0.0, 1.0)))[0].values == [math.inf]
    assert geometric("distance", "float", NONE, ((math.inf, 1.0), (math.inf, 1.0)))[0].nan  # inf - inf
    assert not geometric("distance", "float", NONE, ((math.inf, 1.0), (math.inf, -math.inf)))[0].judged
    assert not geometric("length", "float", frozenset({"finite"}), ((math.inf,),))[0].judged


@pytest.mark.parametrize("fn, args, nan", [
    ("distance", ((math.inf, 1.0), (0.0, 1.0)), False), ("distance", ((math.nan, 1.0), (0.0, 1.0)), True),
    ("length", ((2.0, -math.inf),), False), ("fast_length", ((math.nan, 1.0),), True),
    ("fast_distance", ((1.0, 1.0), (-math.inf, 0.0)), False), ("normalize", ((1.0, math.nan),), True),
    ("normalize", ((0.0, -0.0),), False), ("fast_normalize", ((0.0, 0.0),), False)])
def test_geometric_edge_values_cite_table_17_not_c99_f9(fn, args, nan):
    """The geometric functions are not math functions: §7.5 takes C99 F.9 for "the math
    functions" (§6.15.2). distance((inf, 1), (0, 1)) is +inf because Table 17 (OpenCL C 3.0.19
    §6.15.5) defines it as length(p0 - p1) = sqrt(inf² + 0²) and IEEE 754 arithmetic (chapter 7,
    "must be supported"; §7.2 "INF and NaNs must be supported") gives sqrt(inf) = inf; a NaN
    component gives NaN the same way; normalize's zero and NaN vectors are §7.5.1's lines ("shall
    produce exactly the prescribed answers"). The rule is a violation and cites no F.9."""
    from oracles.math.geometric import geometric
    from oracles import by_id
    lane = geometric(fn, "float", NONE, args)[0]
    assert lane.judged and (lane.nan if nan else lane.values[0] in (math.inf, 0.0))
    r = by_id(lane.rule)
    assert r.severity == "violation" and "§6.15.5 Table 17" in r.section and "F.9 ¶" not in r.section
    assert "shall conform" not in r.section and "covers the math functions, not the geometric ones" in r.section
    assert ("§7.5.1" in r.section) == (fn == "normalize")


def test_length_and_normalize_do_not_overflow_or_underflow():
    """§7.5.1: "length calculates the length of a vector without overflow or extraordinary precision
    loss due to underflow"; the same for distance and normalize: the reference is the exact value
    even where the sum of squares overflows or underflows in float."""
    from oracles.math.geometric import geometric
    lane, = geometric("length", "float", NONE, ((2e38, 2e38),))
    assert lane.ranges[0][0] <= f32(2e38 * math.sqrt(2)) <= lane.ranges[0][1] and lane.ranges[0][1] < math.inf
    lane, = geometric("distance", "float", NONE, ((1e-30, 0.0), (0.0, 1e-30)))
    assert lane.ranges[0][0] <= f32(1e-30 * math.sqrt(2)) <= lane.ranges[0][1]
    lanes = geometric("normalize", "float", NONE, ((3e38, -3e38),))
    assert lanes[1].ranges[0][0] <= -1 / math.sqrt(2) <= lanes[1].ranges[0][1]


def test_cross_w_is_zero_whatever_the_operands():
    """§6.15.5: "The w component of float4 result returned will be 0.0." dot and cross with an
    infinite operand: the bound, max·max·k·ε, is infinite: not judged."""
    from oracles.math.geometric import geometric
    lanes = geometric("cross", "float", NONE, ((math.inf, 1.0, 2.0, math.nan), (1.0, 2.0, 3.0, 4.0)))
    assert [lane.judged for lane in lanes] == [False, False, False, True]
    assert lanes[3].values == [0.0] and lanes[3].rule == "math.cross.w"
    lanes = geometric("cross", "float", NONE, ((1.0, 2.0, 3.0, 9.0), (4.0, 5.0, 6.0, 7.0)))
    assert all(lane.judged for lane in lanes) and lanes[3].values == [0.0]
    assert not geometric("dot", "float", NONE, ((math.inf, 1.0), (1.0, 1.0)))[0].judged


def test_every_special_rule_cites_a_section_and_its_verb():
    """Every rule of a prescribed value cites where it is written and whether the text is a 'shall'
    or 'must' (a violation) or a 'should' (a recommendation)."""
    from lang.maths import FUNCTIONS
    from oracles import rules
    from oracles.math import rule_for
    ids = [rule_for(fn, "special", "float") for fn in FUNCTIONS] + [
        "math.lgamma_r.sign", "math.lgamma_r.sign.pole", "math.nextafter.ftz", "math.normalize.special.inf",
        "math.cross.w", "math.exp10.special.spirv"]
    lanewise("exp10", "float", SPIRV, (0.0,))
    for rid in ids:
        r = rules.rule(rules.index(rid))
        assert r.section and r.severity == "violation", rid
        assert any(w in r.section for w in ("shall", "must", "definition", "F.3", "may choose")), (rid, r.section)


def test_common_min_max_clamp_follow_their_definitions():
    """§6.15.4 Table 16, worked by hand: min "returns y if y < x, otherwise x", max "y if x < y,
    otherwise x" (an infinity or NaN operand: undefined, not judged; two zeros of different sign:
    either); clamp "returns fmin(fmax(x, minval), maxval)", undefined when minval > maxval."""
    def allowed(fn, *args):
        lane, = lanewise(fn, "float", NONE, args)
        return None if not lane.judged else sorted((v, math.copysign(1, v)) for v in lane.values)

    assert allowed("fmin_common", 1.5, -2.0) == [(-2.0, -1)]
    assert allowed("fmax_common", 1.5, -2.0) == [(1.5, 1)]
    assert allowed("fmin_common", 0.0, -0.0) == allowed("fmax_common", 0.0, -0.0) == [(0.0, -1), (0.0, 1)]
    assert allowed("fmin_common", math.inf, 1.0) is None and allowed("fmax_common", 1.0, math.nan) is None
    assert allowed("fclamp", 5.0, 1.0, 3.0) == [(3.0, 1)] and allowed("fclamp", -4.0, -1.0, 3.0) == [(-1.0, -1)]
    assert allowed("fclamp", math.nan, 1.0, 3.0) == [(1.0, 1)]  # fmax(NaN, 1) = 1 (C99 F.9.9.2)
    assert allowed("fclamp", 2.0, 3.0, 1.0) is None  # minval > maxval


# ---- one thread's working precision is not another's (oracles.math.precise.PRECISION) -----------------

FLOAT = Type.parse("float")


def expectation(op: Op, values: list[float]) -> Expectation:
    """The float lanes of ``op`` on ``values``, every one computed with mpmath (no filter)."""
    return outputs(op, [Expectation.exact("float", np.array(values, np.float32))], len(values), NONE, fast=False)[0]



def test_another_threads_oracle_does_not_change_a_lanes_precision(monkeypatch):
    """expm1(-0x1.633df4p-77f) is the operand itself: expm1(x) = x + x²/2 + ..., and x²/2 is 2^-77
    below half an ulp of x. mpmath cancels exp(x) - 1 at x's magnitude in extra bits; when another
    thread's oracle entered the float working precision (88 bits) in the middle of that, the
    difference kept 88 - 77 = 11 bits of x and the lane expected -0x1.634p-77 (a campaign's three
    flaky buckets, whose expectations end in 13 zero bits). Here the other thread starts exactly
    there: it computes exp(1.5f) and pauses inside its working precision."""
    x = float.fromhex("-0x1.633df4p-77")
    main, started, paused, resume = threading.get_ident(), [], threading.Event(), threading.Event()
    exp = mpmath.mp.exp

    def other_oracle() -> None:
        expectation(Op("exp", (Load("a", FLOAT),), FLOAT), [1.5])

    def paused_exp(y):  # the other thread's reference, inside its mpmath.workprec(88)
        paused.set()
        resume.wait(5)
        return mpmath.exp(y)

    def exp_of_expm1(y, **kw):  # mpmath's expm1 calls mp.exp at its raised, cancelling precision
        if threading.get_ident() == main and mpmath.mp.prec > 2 * F32.prec and not started:
            started.append(threading.Thread(target=other_oracle))
            started[0].start()
            paused.wait(0.5)  # the other thread pauses in its working precision (or waits for this one)
        return exp(y, **kw)

    lanewise_at.cache_clear()
    monkeypatch.setitem(PRECISE, "exp", paused_exp)
    monkeypatch.setattr(mpmath.mp, "exp", exp_of_expm1)
    try:
        got = expectation(Op("expm1", (Load("a", FLOAT),), FLOAT), [x])
    finally:
        resume.set()
        for t in started:
            t.join()
        lanewise_at.cache_clear()
    assert started  # the other thread did start inside expm1's computation
    assert int(got.allowed[0][0]) == bits32(x) == 0x99319EFA


def test_a_tiny_absolute_tolerance_is_held_exactly():
    """dot(-3·2^-1074, 0x1.c93dacb66c9e6p-541) on double: the exact product is about -3.7e-486 and
    Table 68's absolute bound, max·max·(2n-1)·FLT_EPSILON (§7.4), about 7e-333: both under the
    smallest double, so [exact - tol, exact + tol] holds both zeros and no other double. A tolerance
    rounded to float64 (0) accepted only -0 (an Oclgrind +0 was filed as a violation); the filter
    leaves such lanes to the exact path, which holds the tolerance as it is."""
    from oracles.math.geometric import geometric
    a, b = -3 * 2.0**-1074, float.fromhex("0x1.c93dacb66c9e6p-541")
    tol = Fraction(b) ** 2 * Fraction(2.0**-23)
    assert 0 < tol < Fraction(2.0**-1074) and abs(Fraction(a) * Fraction(b)) < tol
    lane, = geometric("dot", "double", NONE, ((a,), (b,)))

    def takes(v: float) -> bool:
        return any(lo <= v <= hi for lo, hi in lane.ranges) or any(
            np.float64(v).view(np.uint64) == np.float64(w).view(np.uint64) for w in lane.values)
    assert takes(0.0) and takes(-0.0) and not takes(2.0**-1074) and not takes(-(2.0**-1074))
    d = Type("double")
    prog = Program((Buffer("a", d, "in", Fill(0, values=(int(np.float64(a).view(np.uint64)),))),
                    Buffer("b", d, "in", Fill(0, values=(int(np.float64(b).view(np.uint64)),))),
                    Buffer("o", d, "out")),
                   (Store("o", Op("dot", (Load("a", d), Load("b", d)), d)),), 1, area="math",
                   requires=frozenset({"fp64"}))
    from oracles import expected
    got = expected(prog)["o"]
    zeros = np.array([0, 1 << 63], np.uint64)
    assert got.judged[0] and got.accepts(zeros).all()
