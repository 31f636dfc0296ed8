"""Build options decide the rules: each option of the OpenCL 3.0 API specification (§5.8.6.2 Math
Intrinsics Options, §5.8.6.3 Optimization Options) against a hand-worked case, through the
oracle's face (``oracles.expected``) on small hand-built programs.

The option texts (API §5.8.6.3): -cl-unsafe-math-optimizations "(c) assume[s] relaxed OpenCL
numerical compliance requirements as defined in the unsafe math optimization section" (OpenCL C
3.0.19 §7.4 Table 67: single precision, OpenCL C >= 2.0) "and (d) may violate edge case
behavior", and "includes the -cl-no-signed-zeros, -cl-mad-enable, and -cl-denorms-are-zero
options"; -cl-finite-math-only "may violate the OpenCL numerical compliance requirements for
single precision and double precision floating-point, as well as edge case behavior";
-cl-fast-relaxed-math "Sets the optimization options -cl-finite-math-only and
-cl-unsafe-math-optimizations"; under -cl-no-signed-zeros "the sign of a zero result is not
significant"; -cl-denorms-are-zero (§5.8.6.2): denormals "may be flushed to zero";
-cl-opt-disable "disables all optimizations" and relaxes nothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from lang.ir import Buffer, Fill, Load, Op, Program, Store, validate
from lang.maths import option_flags
from lang.types import Type, scalar
from oracles import Expectation, expected

INF = float("inf")
TINY = 2.0**-149  # the smallest float denormal, 0x1p-149f

UNSAFE = "-cl-unsafe-math-optimizations"
FAST = "-cl-fast-relaxed-math"
FINITE = "-cl-finite-math-only"
NSZ = "-cl-no-signed-zeros"
DAZ = "-cl-denorms-are-zero"


def bits(x: float, tname: str = "float") -> int:
    """The bit pattern of ``x`` in ``tname``."""
    s = scalar(tname)
    return int(np.array([x], np.float64).astype(s.dtype).view(s.bits_dtype)[0])


def lane(fn: str, args: tuple[float, ...], options: str = "", tname: str = "float", cl2: bool = False,
         operator: str = "", path: frozenset = frozenset()) -> Expectation:
    """The expectation of one work-item of ``fn(args)`` (``arith`` with ``operator``) on ``tname``,
    built with ``options`` (as OpenCL C 2.0 where ``cl2``) on a device that keeps denormals, on the
    OpenCL C path (``path``: ``{"spirv"}`` for a SPIR-V path)."""
    t = Type(tname)
    ins = tuple(Buffer(f"in{i}", t, "in", Fill(0, values=(bits(a, tname),))) for i, a in enumerate(args))
    op = Op(fn, tuple(Load(b.name, t) for b in ins), t, (("operator", operator),) if operator else ())
    requires = {"double": {"fp64"}, "half": {"fp16"}}.get(tname, set()) | ({"cl2.0"} if cl2 else set())
    program = Program((*ins, Buffer("out0", t, "out")), (Store("out0", op),), 1, options, frozenset(requires), "math")
    validate(program)
    return expected(program, path)["out0"]


def accepts(e: Expectation, x: float, tname: str = "float") -> bool:
    """Whether the lane accepts the bits of ``x`` (an unjudged lane accepts everything)."""
    return bool(e.accepts(np.array([bits(x, tname)], scalar(tname).bits_dtype))[0])


def test_the_options_set_the_options_the_api_names():
    """API §5.8.6.3: unsafe math "includes the -cl-no-signed-zeros, -cl-mad-enable, and
    -cl-denorms-are-zero options"; fast-relaxed "Sets ... -cl-finite-math-only and
    -cl-unsafe-math-optimizations"; -cl-opt-disable sets nothing."""
    assert option_flags(UNSAFE) == {"unsafe", "nsz", "mad", "daz"}
    assert option_flags(FAST) == {"finite", "unsafe", "nsz", "mad", "daz"}
    assert option_flags(f"{FAST} {UNSAFE}") == option_flags(FAST)
    assert option_flags(FINITE) == {"finite"}
    assert option_flags(NSZ) == {"nsz"} and option_flags(DAZ) == {"daz"}
    assert option_flags("-cl-opt-disable") == set() and option_flags("") == set()


@pytest.mark.parametrize("cl2", [False, True])
def test_nvidia_hypot_of_the_smallest_denormal_and_zero(cl2):
    """hypot(0x1p-149f, 0.0f) = 0 from a program built with "-cl-fast-relaxed-math
    -cl-unsafe-math-optimizations": C99 F.9.4.3 prescribes fabs(x), but the build voids edge case
    behaviour and allows flushing the operand: not judged, 0 accepted."""
    e = lane("hypot", (TINY, 0.0), f"{FAST} {UNSAFE}", cl2=cl2)
    assert not e.judged[0] and accepts(e, 0.0)
    plain = lane("hypot", (TINY, 0.0), cl2=cl2)  # no option: exactly 0x1p-149f
    assert plain.judged[0] and accepts(plain, TINY) and not accepts(plain, 0.0)


@pytest.mark.parametrize("fn, args, value, path", [
    ("exp", (-INF,), 0.0, ""),  # C99 F.9.3.1: exp(-inf) returns +0
    ("pow", (2.5, 0.0), 1.0, ""),  # C99 F.9.4.4: pow(x, ±0) returns 1 for any x
    ("pow", (2.5, -0.0), 1.0, ""),
    ("sinpi", (2.0,), 0.0, ""),  # OpenCL C 3.0.19 §7.5.1: sinpi(+n) is +0
    ("rsqrt", (-0.0,), -INF, ""),  # a limit (C99 F.9 ¶3, as IEC 60559 arithmetic gives 1/sqrt(-0))
    ("exp10", (0.0,), 1.0, "spirv"),  # the SPIR-V environment's list: exp10(±0) = 1
])
def test_a_prescribed_value_is_void_under_unsafe_fast_relaxed_and_finite_math(fn, args, value, path):
    on = frozenset({path} - {""})
    e = lane(fn, args, cl2=True, path=on)
    assert e.judged[0] and accepts(e, value) and not accepts(e, 0.5)
    for options in (UNSAFE, FAST, FINITE):
        for cl2 in (False, True):
            assert not lane(fn, args, options, cl2=cl2, path=on).judged[0], (options, cl2)


def test_an_accuracy_rule_holds_only_where_the_build_keeps_one():
    """sin(1.0f): §7.4 Table 65's 4 ulp without options; Table 67's absolute 2^-11 under unsafe math
    in an OpenCL C 2.0 build (float only); nothing under -cl-finite-math-only, under unsafe math in
    an OpenCL C 1.2 build, or on double under unsafe math."""
    near = float(np.float32(np.sin(1.0)))
    off = near + 2.0**-12  # within 2^-11, far beyond 4 ulp
    e = lane("sin", (1.0,))
    assert e.judged[0] and accepts(e, near) and not accepts(e, off)
    e = lane("sin", (1.0,), UNSAFE, cl2=True)
    assert e.judged[0] and accepts(e, off) and not accepts(e, near + 2.0**-10)
    assert not lane("sin", (1.0,), FINITE, cl2=True).judged[0]
    assert not lane("sin", (1.0,), FAST, cl2=True).judged[0]
    assert not lane("sin", (1.0,), UNSAFE).judged[0]
    assert lane("sin", (1.0,), tname="double", cl2=True).judged[0]
    assert not lane("sin", (1.0,), UNSAFE, tname="double", cl2=True).judged[0]


def test_arithmetic_keeps_correct_rounding_only_where_the_build_keeps_it():
    """1.0f + 2^-24 rounds to 1.0f (a tie, to even): Table 65's correctly rounded + holds without
    options and under unsafe math in an OpenCL C 2.0 build (Table 67 does not list +), nowhere
    under -cl-finite-math-only."""
    for options, cl2, judged in (("", False, True), (UNSAFE, True, True), (UNSAFE, False, False),
                                 (FINITE, True, False)):
        e = lane("arith", (1.0, 2.0**-24), options, cl2=cl2, operator="+")
        assert e.judged[0] == judged, (options, cl2)
        assert accepts(e, 1.0) and accepts(e, 1.0 + 2.0**-23) != judged


def test_no_signed_zeros_accepts_a_zero_of_either_sign():
    """0.0f * 1.0f is +0 (IEC 60559); fdim(2, 3) is +0 (C99 F.9.9.1 with §7.5.1's fdim): -0 only
    under -cl-no-signed-zeros, where both lanes stay judged (a nonzero result is still wrong)."""
    for fn, args, operator in (("arith", (0.0, 1.0), "*"), ("fdim", (2.0, 3.0), "")):
        e = lane(fn, args, operator=operator)
        assert e.judged[0] and accepts(e, 0.0) and not accepts(e, -0.0)
        e = lane(fn, args, NSZ, operator=operator)
        assert e.judged[0] and accepts(e, 0.0) and accepts(e, -0.0) and not accepts(e, TINY)


def test_denorms_are_zero_accepts_a_flushed_result():
    """0x1p-149f * 1.0f (and 0x1p-1074 * 1.0 on double): the denormal result, and under
    -cl-denorms-are-zero a zero of either sign (§7.5.3's alternatives); still judged."""
    for tname, tiny in (("float", TINY), ("double", 2.0**-1074)):
        e = lane("arith", (tiny, 1.0), tname=tname, operator="*")
        assert e.judged[0] and accepts(e, tiny, tname) and not accepts(e, 0.0, tname)
        e = lane("arith", (tiny, 1.0), DAZ, tname=tname, operator="*")
        assert e.judged[0] and accepts(e, tiny, tname) and accepts(e, 0.0, tname) and accepts(e, -0.0, tname)
        assert not accepts(e, 2 * tiny, tname)
    e = lane("hypot", (TINY, 0.0), DAZ)  # the operand read as ±0: hypot(±0, 0) = +0, prescribed and judged
    assert e.judged[0] and accepts(e, 0.0) and accepts(e, TINY) and not accepts(e, 1.0)


def test_minmag_of_denormals_under_denorms_are_zero():
    """minmag (OpenCL C 3.0.19 §6.15.2: x if |x| < |y|, y if |y| < |x|, otherwise fmin(x, y)) of
    denormal operands, worked by hand. Without options only the exact result; under
    -cl-denorms-are-zero also what any operand read as zero gives (and a flushed result), here a
    zero of either sign in every case, never the operand the exact rule did not pick:
    minmag(3·0x1p-149f, -2·0x1p-149f) is -2·0x1p-149f, and 0 where either operand reads as 0
    (minmag(±0, -2·0x1p-149f) = ±0, minmag(3·0x1p-149f, ±0) = ±0), never 3·0x1p-149f."""
    cases = {(TINY, 1.0): TINY, (TINY, -TINY): -TINY,  # |x| = |y|: fmin(x, y)
             (TINY, 2 * TINY): TINY, (3 * TINY, -2 * TINY): -2 * TINY}
    for (x, y), exact in cases.items():
        other = y if exact == x else x
        e = lane("minmag", (x, y))
        assert e.judged[0] and accepts(e, exact) and not accepts(e, 0.0) and not accepts(e, other)
        e = lane("minmag", (x, y), DAZ)
        assert e.judged[0] and accepts(e, exact) and accepts(e, 0.0) and accepts(e, -0.0)
        assert not accepts(e, other)


def test_edge_rules_of_every_kind_are_void_under_unsafe_math():
    """Under unsafe math in an OpenCL C 2.0 build (float keeps its accuracy rules) the edge rules
    judge nothing: an exact function at a zero operand (copysign), nextafter from a zero, lgamma_r's
    sign at a pole, normalize of the zero vector; off the edges the same functions stay judged."""
    assert lane("copysign", (2.0, -0.0), cl2=True).judged[0]
    assert not lane("copysign", (2.0, -0.0), UNSAFE, cl2=True).judged[0]
    assert lane("copysign", (2.0, -1.0), UNSAFE, cl2=True).judged[0]  # §7.4 Table 65: 0 ulp
    assert lane("nextafter", (-0.0, 1.0), cl2=True).judged[0]
    assert not lane("nextafter", (-0.0, 1.0), UNSAFE, cl2=True).judged[0]
    for x, sign_judged in ((-2.0, False), (-2.5, True)):  # a pole (§7.5.1: signp = 0), and Γ(-2.5) < 0
        t = Type("float")
        program = Program((Buffer("in0", t, "in", Fill(0, values=(bits(x),))), Buffer("out0", t, "out"),
                           Buffer("out1", Type("int"), "out")),
                          (Store("out0", Op("lgamma_r", (Load("in0", t),), t, (("out", "out1"),))),), 1, "",
                          frozenset({"cl2.0"}), "math")
        assert expected(program)["out1"].judged[0]
        assert expected(replace(program, options=UNSAFE))["out1"].judged[0] == sign_judged
    v = Type("float", 2)
    zero = Program((Buffer("in0", v, "in", Fill(0, values=(0, 0))), Buffer("out0", v, "out")),
                   (Store("out0", Op("normalize", (Load("in0", v),), v)),), 1, "", frozenset({"cl2.0"}), "math")
    assert expected(zero)["out0"].judged.all()  # "normalize(v) returns v if all elements of v are zero"
    assert not expected(replace(zero, options=UNSAFE))["out0"].judged.any()


def test_opt_disable_changes_no_expectation():
    """-cl-opt-disable "disables all optimizations": every expectation bit for bit as without it."""
    t = Type("float", 2)
    values = tuple(bits(x) for x in (TINY, 0.0, -INF, 2.5, 1.0, -0.0, 2.0, 3.0, float("nan"), -2.0))
    ins = tuple(Buffer(f"in{i}", t, "in", Fill(i, values=values[i:] + values[:i])) for i in range(3))
    calls = [("hypot", 2), ("exp", 1), ("pow", 2), ("sin", 1), ("fdim", 2), ("lgamma", 1), ("nextafter", 2),
             ("fma", 3), ("sinpi", 1)]
    body = [Store(f"out{k}", Op(fn, tuple(Load(b.name, t) for b in ins[:n]), t)) for k, (fn, n) in enumerate(calls)]
    body.append(Store(f"out{len(calls)}", Op("arith", (Load("in0", t), Load("in1", t)), t, (("operator", "*"),))))
    outs = tuple(Buffer(s.buffer, t, "out") for s in body)
    for requires in (frozenset(), frozenset({"cl2.0"})):
        plain = Program((*ins, *outs), tuple(body), len(values), "", requires, "math")
        validate(plain)
        off = expected(replace(plain, options="-cl-opt-disable"))
        assert any(e.judged.any() for e in off.values())
        for name, e in expected(plain).items():
            f = off[name]
            assert np.array_equal(e.judged, f.judged) and np.array_equal(e.any_nan, f.any_nan)
            assert np.array_equal(e.rule, f.rule) and len(e.allowed) == len(f.allowed)
            assert all(np.array_equal(a, b) for a, b in zip(e.allowed, f.allowed))
            assert len(e.ranges) == len(f.ranges) and len(e.masks) == len(f.masks)
            for (a, b), (c, d) in zip(e.ranges + e.masks, f.ranges + f.masks):
                assert a.tobytes() == c.tobytes() and b.tobytes() == d.tobytes()
