"""Floating point of flow programs (lang.flow_fp): double + - * / sqrt fma, float / and sqrt
under -cl-fp32-correctly-rounded-divide-sqrt, casts between float and double. Hand-worked
values (checked against exact rationals), the validator's rules, the exact double fma against
rationals, the strategy's late stream, and drawn programs against the host C build and spirv-val."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaign.flow import OPT_DISABLE, builds, judge_flow
from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as spirv
from fuzz.emit.validate import disassemble, validate
from fuzz.strategies.flow import flow_programs, generate
from lang.flow import (Assign, Bin, Call, Cast, Const, Decl, FlowProgram, If, Input, Item, Load, Loop, Output, Var,
                       regions)
from lang.flow_fp import CR_OPTION
from lang.flow_rules import check
from lang.flow_tree import expressions, statements, walk
from lang.maths import CR_DIVIDE_SQRT
from lang.nodes import Fill, InvalidProgram
from oracles.flow import interpret
from oracles.flow_fp import fma64
from tests.flow_host import run_host

F = lambda bits: Const("float", bits)  # noqa: E731
D = lambda bits: Const("double", bits)  # noqa: E731
ONE_F, THREE_F, TWO_F = F(0x3F800000), F(0x40400000), F(0x40000000)
ONE_D, THREE_D, TWO_D = D(0x3FF0000000000000), D(0x4008000000000000), D(0x4000000000000000)
CR = frozenset({CR_DIVIDE_SQRT})


def _program(assigns: dict[str, tuple[str, object]], requires=frozenset(), options="", inputs=()) -> FlowProgram:
    """One work-item per lane of a 4-wide launch; variable ``name`` of ``type`` gets ``value``."""
    names = list(assigns)
    return FlowProgram(inputs, tuple(Output(f"o_{n}", n, t) for n, (t, _) in assigns.items()),
                       tuple(Decl(n, t) for n, (t, _) in assigns.items()), (), (),
                       tuple(Assign(n, assigns[n][1]) for n in names), (4,), (2,), requires, options)


def _value(bits: int, t: str) -> Fraction:
    return Fraction(float(np.array([bits], f"u{4 if t == 'float' else 8}").view(f"f{4 if t == 'float' else 8}")[0]))


def _nearest(bits: int, t: str, exact: Fraction) -> bool:
    """Whether ``bits`` is the value of type ``t`` nearest ``exact``, ties to even (its neighbours are farther)."""
    v = _value(bits, t)
    below, above = _value(bits - 1, t), _value(bits + 1, t)
    d = abs(v - exact)
    return d < abs(below - exact) and d < abs(above - exact) or d == abs(above - exact) and bits % 2 == 0


def _fp_program() -> FlowProgram:
    a = D(0x3FF0000000400000)  # 1 + 2**-30
    return _program({
        "f3": ("float", Bin("div", ONE_F, THREE_F, "float")),
        "d3": ("double", Bin("div", ONE_D, THREE_D, "double")),
        "fs": ("float", Call("sqrt", (TWO_F,), "float")),
        "ds": ("double", Call("sqrt", (TWO_D,), "double")),
        # (1 + 2**-30)**2 - 1 = 2**-29 + 2**-60 exactly; unfused the square rounds to 1 + 2**-29
        "dfma": ("double", Call("fma", (a, a, D(0xBFF0000000000000)), "double")),
        "dunf": ("double", Bin("sub", Bin("mul", a, a, "double"), ONE_D, "double")),
        # the least normal double halved: a subnormal, kept (§7.2 lets only float denormals flush)
        "dsub": ("double", Bin("mul", D(0x0010000000000000), D(0x3FE0000000000000), "double")),
        "dload": ("double", Load("din", "double", Item("global_id", 0))),
        "fz": ("float", Bin("div", ONE_F, F(0), "float")),  # IEEE 754: +inf
        "fn": ("float", Call("sqrt", (F(0xBF800000),), "float")),  # sqrt(-1): NaN
        "tie": ("float", Cast("float", D(0x3FF0000010000000))),  # 1 + 2**-24: a tie, to even (1)
        "up": ("float", Cast("float", D(0x3FF0000030000000))),  # 1 + 3 * 2**-24: a tie, to even (1 + 2**-22)
        "wide": ("double", Cast("double", Bin("div", ONE_F, THREE_F, "float"))),  # exact widening
    }, frozenset({"fp64"}) | CR, CR_OPTION,
        (Input("din", "double", 4, Fill(0, values=(1, 0x000FFFFFFFFFFFFF, 0x8000000000000001, 0x3FF0000000000000))),))


def test_hand_worked_values():
    p = _fp_program()
    check(p)
    out = interpret(p)
    bits = {o.var: out[o.name].bits for o in p.outputs}
    expected = {"f3": 0x3EAAAAAB, "d3": 0x3FD5555555555555, "fs": 0x3FB504F3, "ds": 0x3FF6A09E667F3BCD,
                "dfma": 0x3E20000000200000, "dunf": 0x3E20000000000000, "dsub": 0x0008000000000000,
                "fz": 0x7F800000, "tie": 0x3F800000, "up": 0x3F800002, "wide": 0x3FD5555560000000}
    for name, want in expected.items():
        assert bits[name].tolist() == [want] * 4, (name, hex(int(bits[name][0])))
    assert bits["dload"].tolist() == [1, 0x000FFFFFFFFFFFFF, 0x8000000000000001, 0x3FF0000000000000]
    assert out["o_fn"].nan.all() and np.isnan(bits["fn"].view(np.float32)).all()
    # the hand values are the nearest ones (exact rationals), and the fused one differs from the unfused
    assert _nearest(0x3EAAAAAB, "float", Fraction(1, 3)) and _nearest(0x3FD5555555555555, "double", Fraction(1, 3))
    assert _value(0x3E20000000200000, "double") == Fraction(1, 2**29) + Fraction(1, 2**60)
    for b, t in ((0x3FB504F3, "float"), (0x3FF6A09E667F3BCD, "double")):  # sqrt(2): v*v against 2
        v, lo, hi = (_value(x, t) for x in (b, b - 1, b + 1))
        assert (v + lo) ** 2 / 4 < 2 < (v + hi) ** 2 / 4
    # no double lane may be flushed; the float lanes that saw no subnormal neither
    for o in p.outputs:
        assert not out[o.name].flushable.any(), o.var


def test_the_host_c_build_agrees_on_the_hand_worked_program():
    p = _fp_program()
    expected, host = interpret(p), run_host(p)
    for o in p.outputs:
        e, h = expected[o.name], host[o.name]
        assert ((e.bits == h) | e.nan & np.isnan(h.view(np.float32 if o.type == "float" else np.float64))).all(), o.var


def test_a_narrowed_subnormal_and_a_float_divide_of_a_subnormal_are_flushable():
    p = _program({"n": ("float", Cast("float", D(0x3800000000000000))),  # 2**-127: a float subnormal
                  "q": ("float", Bin("div", Load("fin", "float", Item("global_id", 0)), TWO_F, "float"))},
                 frozenset({"fp64"}) | CR, CR_OPTION,
                 (Input("fin", "float", 4, Fill(0, values=(1, 0x00800000, 0x3F800000, 0))),))
    check(p)
    out = interpret(p)
    assert out["o_n"].bits.tolist() == [0x00400000] * 4 and out["o_n"].flushable.all()
    assert out["o_q"].flushable.tolist() == [True, True, False, False]  # a subnormal operand; FLT_MIN / 2


@pytest.mark.parametrize("breach, reason", [
    (dict(options=""), "only in a program built with -cl-fp32-correctly-rounded-divide-sqrt"),
    (dict(requires=frozenset({"fp64"})), "only in a program built with"),
    (dict(requires=CR), "needs fp64"),
])
def test_the_validator_names_each_rule(breach, reason):
    with pytest.raises(InvalidProgram, match=reason):
        check(replace(_fp_program(), **breach))


def test_the_validator_rejects_float_built_ins_of_integers_and_a_double_constant_that_is_subnormal():
    with pytest.raises(InvalidProgram, match="a float built-in of a float type"):
        check(_program({"x": ("int", Call("sqrt", (Const("int", 4),), "int"))}))
    with pytest.raises(InvalidProgram, match="finite and normal"):
        check(_program({"x": ("double", D(1))}, frozenset({"fp64"})))
    check(_program({"x": ("double", Bin("div", ONE_D, THREE_D, "double"))}, frozenset({"fp64"})))  # no option needed


def _exact_fma(a: float, b: float, c: float) -> int:
    """The bits of a * b + c rounded to nearest even, from rationals (a finite, nonzero sum)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    return int(np.array([exact.numerator / exact.denominator]).view(np.uint64)[0])


def test_double_fma_is_correctly_rounded_against_rationals():
    rnd = random.Random(3)
    n = 4000
    a = np.array([rnd.uniform(-1, 1) * 2.0 ** rnd.randint(-80, 80) for _ in range(n)])
    b = np.array([rnd.uniform(-1, 1) * 2.0 ** rnd.randint(-80, 80) for _ in range(n)])
    c = -(a * b) * np.array([1 + rnd.choice((0, 2.0**-52, -2.0**-53, 2.0**-30, 3.0)) for _ in range(n)])
    c[::4] = np.array([rnd.uniform(-1, 1) * 2.0 ** rnd.randint(-1060, -1000) for _ in range(n // 4)])  # subnormal sums
    r = fma64(a, b, c).view(np.uint64)
    for i in range(n):
        if Fraction(a[i]) * Fraction(b[i]) + Fraction(c[i]) != 0:
            assert int(r[i]) == _exact_fma(a[i], b[i], c[i]), (a[i], b[i], c[i])
    # an exact zero is +0 (opposite signs), -0 only for -0 + -0; infinities and NaN as IEEE 754
    z = fma64(np.array([2.0, -0.0, 1e308, np.inf, np.inf]), np.array([3.0, 1.0, 10.0, 0.0, 1.0]),
              np.array([-6.0, -0.0, -np.inf, 1.0, 1.0]))
    assert z[:3].tolist() == [0.0, -0.0, -np.inf] and not np.signbit(z[0]) and np.signbit(z[1])
    assert np.isnan(z[3]) and z[4] == np.inf


def test_the_judge_reads_double_lanes_by_their_bits_and_never_excuses_them():
    """A double subnormal lane one ulp off is wrong even on a device that flushes float denormals;
    the NaN lane takes any NaN."""
    p = _fp_program()
    expected = interpret(p)
    _, _, offsets, out_bytes = regions(p)
    out = bytearray(out_bytes)
    for o in p.outputs:
        raw = expected[o.name].bits.copy()
        if o.var == "dsub":
            raw[2] += 1
        if o.var == "fn":
            raw[:] = 0x7FC00001  # another NaN
        out[offsets[o.name]:offsets[o.name] + raw.nbytes] = raw.tobytes()
    for keeps in (True, False):
        judged, wrong = judge_flow(p, bytes(out), keeps, expected)
        assert judged == 4 * len(p.outputs)
        assert [(m.output, m.item, m.expected, m.actual, m.rule) for m in wrong] == [
            ("o_dsub", 2, 0x0008000000000000, 0x0008000000000001, "flow.float")]


def test_builds_keep_the_option_that_divide_and_sqrt_need():
    p = _fp_program()
    assert [b.options for b in builds(p)] == [CR_OPTION, f"{CR_OPTION} {OPT_DISABLE}"]
    assert [b.options for b in builds(replace(p, options=""))] == ["", OPT_DISABLE]


def _without_fp(body):
    """A body without the statements the floating-point stream adds (assignments to ``dv*``)."""
    out = []
    for s in body:
        if isinstance(s, Assign) and s.var.startswith("dv"):
            continue
        if isinstance(s, Loop):
            s = replace(s, body=_without_fp(s.body))
        elif isinstance(s, If):
            s = replace(s, then=_without_fp(s.then), orelse=_without_fp(s.orelse))
        out.append(s)
    return tuple(out)


def test_the_late_stream_leaves_the_rest_of_each_program_as_it_was():
    added = 0
    for seed in range(40):
        base, fp = generate(random.Random(seed)), generate(random.Random(seed), fp64=True, cr=True)
        assert _without_fp(fp.body) == base.body and fp.functions == base.functions and fp.arrays == base.arrays
        assert fp.inputs[:len(base.inputs)] == base.inputs and fp.outputs[:len(base.outputs)] == base.outputs
        assert (fp.global_size, fp.local_size, fp.global_offset, fp.cfg) == (
            base.global_size, base.local_size, base.global_offset, base.cfg)
        added += fp != base
    assert 10 < added < 35


def _has(p: FlowProgram, kind, name: str) -> bool:
    return any(isinstance(n, kind) and getattr(n, "op", getattr(n, "fn", "")) == name
               for s in statements(p.body) for x in expressions(s) for n in walk(x))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(flow_programs(fp64=True, cr=True))
def test_every_drawn_program_is_valid_and_needs_what_it_uses(program):
    check(program)
    doubles = "double" in {v.type for v in program.variables}
    assert ("fp64" in program.requires) == doubles
    assert ("cl_khr_fp64 : enable" in emit(program)) == doubles
    if CR_DIVIDE_SQRT in program.requires:
        assert program.options == CR_OPTION


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(flow_programs(fp64=True, cr=True))
def test_every_drawn_program_gives_a_valid_module(program):
    module = spirv(program)
    assert validate(module, "opencl1.2") is None
    text = disassemble(module).decode()
    assert ("OpCapability Float64" in text) == ("fp64" in program.requires)
    assert ("OpFDiv" in text) == (_has(program, Bin, "div"))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 2**64 - 1))
def test_drawn_programs_agree_with_the_host_c_build(seed):
    """Every output lane's bits, NaN for NaN (gcc -ffp-contract=off: SSE2 float and double, glibc's fma)."""
    program = generate(random.Random(seed), fp64=True, cr=True)
    expected, host = interpret(program), run_host(program)
    for o in program.outputs:
        e, h = expected[o.name], host[o.name]
        nan = e.nan & np.isnan(h.view({"float": np.float32, "double": np.float64}.get(o.type, np.float32))) \
            if o.type in ("float", "double") else np.zeros(len(h), bool)
        assert ((e.bits == h) | nan).all(), (o.name, np.nonzero((e.bits != h) & ~nan)[0][:4])
