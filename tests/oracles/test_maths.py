"""The math oracle (oracles.floats, oracles.maths) against hand-worked values and exact arithmetic.

Rules: OpenCL C 3.0.19 §7.4 (ulp, Tables 65-69, 67 for unsafe math), §7.5.1 edge cases and C99
Annex F.9, §7.5.3 flush to zero, §6.15.2/4/5 definitions (DIGEST §5)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest

import oracles.evaluate  # noqa: F401  (registers every reference)
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from oracles.floats import fmt, interval, round_to, ulp
from oracles.maths import lanewise, pack

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
    assert not lane.judged  # Table 68 (004): any value


def test_divide_and_sqrt_bounds_and_the_correctly_rounded_option():
    lane, = lanewise("fdiv", "float", NONE, (1.0, 3.0))
    assert len(floats_between(*lane.ranges[0])) == 5  # 2.5 ulp either side of 1/3: five floats
    lane, = lanewise("fdiv", "float", frozenset({"cr"}), (1.0, 3.0))
    assert lane.values == [f32(1 / 3)] and not lane.ranges
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
    ("fmin", (-0.0, 0.0), [-0.0, 0.0]), ("fmax", (math.nan, 2.0), [2.0, math.nan]),
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


def test_lgamma_r_sign_at_poles_is_not_judged():
    """Only the SPIR-V environment prescribes signp = 0 at zero and the negative integers; the
    oracle judges both paths alike, so it leaves the sign there undecided (the value is +inf)."""
    value, sign = lanewise("lgamma_r", "float", NONE, (-2.0,))
    assert value.values == [math.inf] and not sign.judged


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
    assert not lanewise("exp", "float", frozenset({"finite"}), (math.inf,))[0].judged  # finite-math-only
    assert not lanewise("sin", "float", frozenset({"unsafe"}), (1.0,))[0].judged  # Table 67 needs OpenCL C 2.0
    lane, = lanewise("sin", "float", frozenset({"unsafe", "cl2"}), (1.0,))  # absolute 2^-11 in [-pi, pi]
    lo, hi = lane.ranges[0]
    assert abs(lo - (math.sin(1.0) - 2.0**-11)) < 1e-6 and abs(hi - (math.sin(1.0) + 2.0**-11)) < 1e-6
    assert not lanewise("sin", "float", frozenset({"unsafe", "cl2"}), (4.0,))[0].judged  # outside: larger
    lane, = lanewise("exp", "float", frozenset({"unsafe", "cl2"}), (3.0,))
    assert lane.limit == 3 + 6  # 3 + floor(fabs(2x)) ulp
    assert not lanewise("tan", "float", frozenset({"unsafe", "cl2"}), (1.0,))[0].judged  # derived: no ulp bound
    lane, = lanewise("fabs", "float", frozenset({"unsafe", "cl2"}), (-0.0,))
    assert {bits32(v) for v in lane.values} == {bits32(0.0), bits32(-0.0)}  # signed zeros insignificant


def test_undefined_results_are_never_judged():
    assert not lanewise("mix", "float", NONE, (1.0, 2.0, 1.5))[0].judged  # a outside [0, 1]
    assert not lanewise("smoothstep", "float", NONE, (2.0, 1.0, 1.5))[0].judged  # edge0 >= edge1
    assert not lanewise("lgamma", "float", NONE, (3.5,))[0].judged  # Table 65: undefined accuracy
    assert not lanewise("half_sin", "float", NONE, (2.0**17,))[0].judged  # |x| > 2^16
    lane, = lanewise("mix", "float", NONE, (1.0, 3.0, 0.25))
    assert lane.ranges[0][0] <= 1.5 <= lane.ranges[0][1] and lane.ranges[0][1] - lane.ranges[0][0] <= 2.1e-3


# ---- programs: both results of an out-parameter reach their buffers ----------------------------------------


def test_expected_fills_the_out_parameter_buffer():
    bits = [bits32(v) for v in (2.75, -0.0, -1e-10, math.inf)]
    t = Type("float")
    program = Program((Buffer("in0", t, "in", Fill(0, values=tuple(bits))), Buffer("out0", t, "out"),
                       Buffer("out1", t, "out")),
                      (Store("out0", Op("fract", (Load("in0", t),), t, (("out", "out1"),))),), 4, area="math")
    from oracles.evaluate import expected
    e = expected(program)
    assert [float(v) for v in e["out0"].reference] == [0.75, -0.0, f32(1 - 2.0**-24), 0.0]
    assert [float(v) for v in e["out1"].reference] == [2.0, -0.0, -1.0, math.inf]
