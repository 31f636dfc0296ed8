"""The audit (triage.audit, ``clfuzz audit``): verdicts of the real oracle and judge on known-wrong
results are reproduced by the independent derivation; a deliberately wrong stored expectation and a
correct result judged wrong are reported as not reproduced. That the audit imports no oracle code
is the import-linter contract ``audit-independent`` (pyproject.toml, tests/test_architecture.py)."""

from __future__ import annotations

import json
import math
import struct
from typing import Callable

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from audit import Env, Evaluator, bits_text, decode, round_real
from corpus.reads import first_result_row
from corpus.store import Corpus
from fuzz.judge import judge
from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Literal, Load, Op, Program, Sampler, Store
from lang.layout import input_values
from lang.types import Type
from oracles import expected
from triage.audit import audit_corpus, audit_row, flush_set, report_lines, sample_buckets

FINGERPRINT = {"device_name": "fake", "driver_version": "1", "single_fp_config": {"denorm": True},
               "double_fp_config": {"denorm": True}, "fp64": True}


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _program(name: str, value, t: Type, inputs: dict[str, tuple[Type, tuple[int, ...]]], area: str,
             size: int = 8, **extra) -> Program:
    buffers = tuple(Buffer(n, bt, "in", Fill(1, values=vals)) for n, (bt, vals) in inputs.items())
    return Program(buffers + (Buffer(name, t, "out"),), (Store(name, value),), size, area=area, **extra)


def _int(bt: str, width: int = 1) -> Type:
    return Type(bt, width)


PROGRAMS = [
    # integers: wrap-around, a Table 13 built-in, a shift whose count is masked (§6.5.10)
    _program("o", Op("arith", (Load("a", _int("uint")), Load("b", _int("uint"))), _int("uint"), (("operator", "*"),)),
             _int("uint"), {"a": (_int("uint"), (0xFFFFFFFF, 7, 1 << 31)), "b": (_int("uint"), (3, 0x10000001, 2))},
             "conversions"),
    _program("o", Op("add_sat", (Load("a", _int("short", 4)), Load("b", _int("short", 4))), _int("short", 4)),
             _int("short", 4), {"a": (_int("short", 4), (0x7FFF, 0x8000, 5, 0xFFFF)),
                                "b": (_int("short", 4), (1, 0xFFFF, 0x7FF0, 0x8000))}, "expressions"),
    _program("o", Op("shift", (Load("a", _int("char")), Load("b", _int("uint"))), _int("int"), (("operator", "<<"),)),
             _int("int"), {"a": (_int("char"), (0x81, 3, 0x7F)), "b": (_int("uint"), (33, 7, 0xFFFFFFE1))},
             "expressions"),
    # conversions: rounding modes, saturation, NaN to 0 with _sat (§6.4.3)
    _program("o", Op("convert", (Load("a", Type("float")),), _int("int"), (("rounding", "rte"), ("sat", True))),
             _int("int"), {"a": (Type("float"), (_f32(2.5), _f32(-3.5), _f32(float("nan")), _f32(3e9),
                                                  _f32(-0.5)))}, "conversions"),
    _program("o", Op("convert", (Load("a", _int("long")),), Type("float"), (("rounding", "rtp"),)), Type("float"),
             {"a": (_int("long"), ((1 << 60) + 1, (1 << 64) - 3, 16777217))}, "conversions", requires=frozenset()),
    # floats: + and * correctly rounded (§7.4), with a literal
    _program("o", Op("arith", (Load("a", Type("float", 2)), Literal(Type("float"), (_f32(0.1),))), Type("float", 2),
                     (("operator", "+"),)), Type("float", 2),
             {"a": (Type("float", 2), (_f32(1.0), _f32(-0.1), _f32(3e38), _f32(1e-45)))}, "conversions"),
    _program("o", Op("arith", (Load("a", Type("double")), Load("b", Type("double"))), Type("double"),
                     (("operator", "*"),)), Type("double"),
             {"a": (Type("double"), (struct.unpack("<Q", struct.pack("<d", 0.1))[0],)),
              "b": (Type("double"), (struct.unpack("<Q", struct.pack("<d", 3.0))[0],))}, "conversions",
             requires=frozenset({"fp64"})),
    # a vector component selection and a math built-in
    _program("o", Op("swizzle", (Load("a", _int("uint", 4)),), _int("uint", 2), (("components", (3, 0)),
                                                                                 ("form", "xyzw"))),
             _int("uint", 2), {"a": (_int("uint", 4), (1, 2, 3, 4, 5, 6, 7))}, "expressions"),
    _program("o", Op("fmin", (Load("a", Type("float")), Load("b", Type("float"))), Type("float")), Type("float"),
             {"a": (Type("float"), (_f32(1.5), _f32(float("nan")), _f32(-2.0))),
              "b": (Type("float"), (_f32(-1.0), _f32(4.0), _f32(-2.5)))}, "math"),
    # an image read without a sampler (a plain texel walk)
    Program((Buffer("c", _int("int", 2), "in", Fill(1, values=(0, 1, 1, 0, 2, 1))), Buffer("o", _int("uint", 4), "out")),
            (Store("o", Op("read_image", (Load("c", _int("int", 2)),), _int("uint", 4),
                           (("dim", "2d"), ("form", read_form(None)), ("image", "i"), ("sampler", "")))),),
            4, area="images", images=(Image("i", "2d", "RG", "UNSIGNED_INT16", (3, 2), Fill(5)),)),
]


def _wrong(bits: np.ndarray, flip: int) -> np.ndarray:
    """Every lane with a bit flipped: a driver that is wrong everywhere."""
    return bits ^ np.array(flip, bits.dtype)


def _store(corpus: Corpus, program: Program, flip: int = 1, stored: Callable[[dict], dict] = lambda r: r,
           options: str | None = None) -> None:
    """``program`` run on a driver wrong in every lane (``flip``), its rows as ``stored`` writes them,
    its run recording ``options``."""
    corpus.add_program(program)
    corpus.add_target("fake", "opencl-c", "fp", FINGERPRINT)
    exp = expected(program, flush_set(FINGERPRINT))
    inputs = input_values(program)
    actual = {name: _wrong(e.allowed[0].copy(), flip) for name, e in exp.items()}
    verdict = judge(program, exp, actual, inputs)
    assert verdict.rows
    rows = [stored({**r, "program_id": program.id, "target": "fake", "fingerprint_id": "fp", "path": "opencl-c"})
            for r in verdict.rows]
    corpus.add_run({"program_id": program.id, "target": "fake", "fingerprint_id": "fp", "path": "opencl-c",
                    "status": "ok", "checks": verdict.checks, "judged": verdict.judged,
                    "mismatches": verdict.mismatches, "options": options}, rows)


def _corpus(stored: Callable[[dict], dict] = lambda r: r) -> Corpus:
    c = Corpus(":memory:")
    for p in PROGRAMS:
        _store(c, p, stored=stored)
    return c


@pytest.fixture
def corpus():
    c = _corpus()
    yield c
    c.close()


def test_the_oracles_verdicts_on_wrong_results_are_reproduced(corpus):
    result = audit_corpus(corpus, 100)
    assert result.findings and not result.with_status("not audited")
    lost = [(f.row["operation"], f.reason, f.independent) for f in result.with_status("not reproduced")]
    assert not lost
    areas = {corpus.program(f.row["program_id"]).area for f in result.with_status("reproduced")}
    assert areas == {"conversions", "expressions", "math", "images"}


def test_a_wrong_stored_expectation_is_not_reproduced():
    def bogus(r: dict) -> dict:  # the expected value of convert_int_sat_rte stored wrong
        if r["operation"] != "convert_int_sat_rte":
            return r
        return {**r, "expected": f"{(int(r['expected'], 16) + 1) & 0xFFFFFFFF:#x}", "expected_value": "bogus"}

    corpus = _corpus(bogus)
    result = audit_corpus(corpus, 100)
    lost = result.with_status("not reproduced")
    assert lost and {(f.row["operation"], f.reason) for f in lost} == {
        ("convert_int_sat_rte", "the expected values differ")}
    text = "\n".join(report_lines(result))
    assert f"NOT REPRODUCED  bucket {lost[0].row['bucket']}" in text and "oracle:      expected bogus" in text
    corpus.close()


def test_a_correct_result_judged_wrong_is_not_reproduced():
    corpus = _corpus(lambda r: {**r, "actual": r["expected"]} if r["operation"] == "operator*" else r)
    lost = audit_corpus(corpus, 100).with_status("not reproduced")
    assert lost and {(f.row["operation"], f.reason) for f in lost} == {
        ("operator*", "the independent derivation allows the actual value")}
    corpus.close()


def test_failures_are_skipped_and_counted(corpus):
    program = PROGRAMS[0]
    failure = {"kind": "build_error", "buffer": "", "work_item": -1, "lane": -1, "operation": "program",
               "src_type": "", "dst_type": "", "expression": "", "inputs": "{}", "expected": "", "allowed": "[]",
               "actual": "", "expected_value": "builds and runs", "actual_value": "error", "rule": "valid-program",
               "rule_text": "", "section": "", "input_class": "none", "program_id": program.id, "target": "fake",
               "fingerprint_id": "fp", "path": "opencl-c"}
    corpus.add_run({"program_id": program.id, "target": "fake", "fingerprint_id": "fp", "path": "opencl-c",
                    "status": "build_error"}, [failure])
    result = audit_corpus(corpus, 100)
    assert result.failures == 1
    assert all(f.row["kind"] != "build_error" for f in result.findings)
    assert "1 build-error/crash buckets skipped" in "\n".join(report_lines(result))


def test_the_sample_is_deterministic_and_spread_over_operations(corpus):
    picked, total, failures = sample_buckets(corpus.buckets(), 4)
    assert len(picked) == 4 and failures == 0 and total > 4
    assert len({b["signature"]["operation"] for b in picked}) == 4
    assert [b["id"] for b in sample_buckets(corpus.buckets(), 4)[0]] == [b["id"] for b in picked]


def test_lanes_the_audit_has_no_reference_for_are_not_audited(memory_corpus):
    # a*b+c under -cl-mad-enable may be contracted into a mad: the audit does not model it
    f2 = Type("float", 2)
    product = Op("arith", (Load("a", f2), Load("b", f2)), f2, (("operator", "*"),))
    program = _program("o", Op("arith", (product, Load("a", f2)), f2, (("operator", "+"),)), f2,
                       {"a": (f2, (_f32(1.0), _f32(2.0))), "b": (f2, (_f32(3.0), _f32(4.0)))}, "math",
                       options="-cl-mad-enable")
    _store(memory_corpus, program, flip=1 << 22)
    result = audit_corpus(memory_corpus, 10)
    assert {f.status for f in result.findings} == {"not audited"}
    assert "not audited 1:" in "\n".join(report_lines(result))


def test_the_command_exits_1_when_a_verdict_is_not_reproduced(tmp_path):
    runner = CliRunner()
    for name, stored in (("good.db", lambda r: r), ("bad.db", lambda r: {**r, "actual": r["expected"]})):
        c = Corpus(tmp_path / name)
        _store(c, PROGRAMS[0], stored=stored)
        c.close()
    ok = runner.invoke(cli, ["audit", "--corpus", str(tmp_path / "good.db"), "--sample", "5"])
    assert ok.exit_code == 0, ok.output
    assert "not reproduced 0" in ok.output
    bad = runner.invoke(cli, ["audit", "--corpus", str(tmp_path / "bad.db")])
    assert bad.exit_code == 1 and "NOT REPRODUCED" in bad.output


@pytest.mark.parametrize("path", ["missing.db", "."])
def test_a_bad_corpus_path_is_one_line(tmp_path, path):
    result = CliRunner().invoke(cli, ["audit", "--corpus", str(tmp_path / path)])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_exact_rounding_of_the_number_model():
    assert round_real(decode(_f32(2.5), "float").value * 0 + 1, "half") == 0x3C00
    third = decode(_f32(1.0), "float").value / 3
    for mode, want in (("rte", 0x3EAAAAAB), ("rtz", 0x3EAAAAAA), ("rtp", 0x3EAAAAAB), ("rtn", 0x3EAAAAAA)):
        assert round_real(third, "float", mode) == want
    assert round_real(decode(0x7F7FFFFF, "float").value * 2, "float", "rtz") == 0x7F7FFFFF
    assert round_real(decode(0x7F7FFFFF, "float").value * 2, "float", "rte") == 0x7F800000
    assert round_real(decode(1, "float").value / 2, "float", "rte") == 0  # a tie to even: +0
    assert bits_text(_f32(math.inf), "float") == "inf"


# ---- lanes derived by hand: build options, geometric and common functions, out-parameters, images ----

F, F2, F3, F4, D = Type("float"), Type("float", 2), Type("float", 3), Type("float", 4), Type("double")
CL2 = frozenset({"cl2.0"})


def _f64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _call(fn: str, operands: list[tuple[Type, list[int]]], result: Type, options: str = "",
          requires: frozenset = frozenset(), out: Type | None = None, fingerprint: dict = FINGERPRINT,
          recorded: str | None = None, spirv: bool = False) -> list:
    """The audit's lanes of ``fn(operands...)`` (one work-item; with ``out``, of its out-parameter;
    ``recorded``: the options string its run recorded)."""
    names = [f"a{i}" for i in range(len(operands))]
    buffers = tuple(Buffer(n, t, "in", Fill(1, values=tuple(bits))) for n, (t, bits) in zip(names, operands))
    outs = (Buffer("o", result, "out"),) + ((Buffer("q", out, "out"),) if out else ())
    op = Op(fn, tuple(Load(n, t) for n, (t, _) in zip(names, operands)), result, (("out", "q"),) if out else ())
    program = Program(buffers + outs, (Store("o", op),), 1, options, requires | (
        {"fp64"} if result.scalar == "double" else set()), area="math")
    ev = Evaluator(program, {n: list(bits) for n, (_, bits) in zip(names, operands)}, Env(flush_set(fingerprint)), 0,
                   spirv, fingerprint, recorded)
    return ev.stored(program.body[0], "q" if out else "o")


def _one(fn: str, *xs: float, t: Type = F, **kw):
    """The audit's first lane of ``fn`` on scalar operands of type ``t``."""
    enc = _f32 if t.scalar == "float" else _f64
    return _call(fn, [(t, [enc(x)]) for x in xs], t, **kw)[0]


def _row(program: Program, inputs: dict[str, list[int]], expected: int, actual: int) -> dict:
    return {"id": "r", "buffer": "o", "work_item": 0, "lane": 0, "path": "opencl-c", "rule": "math.hypot.special",
            "inputs": json.dumps({n: {"bits": [hex(b) for b in v]} for n, v in inputs.items()}),
            "expected": hex(expected), "actual": hex(actual)}


@pytest.mark.parametrize("options, status", [
    ("-cl-fast-relaxed-math -cl-unsafe-math-optimizations", "not reproduced"),  # NVIDIA's build
    ("-cl-unsafe-math-optimizations", "not reproduced"),  # denormals may be flushed: hypot(0, 0) = 0
    ("", "reproduced"), ("-cl-opt-disable", "reproduced"), ("-cl-mad-enable", "reproduced")])
def test_nvidias_hypot_of_the_least_subnormal_is_judged_by_its_build(options, status):
    """hypot(0x1p-149f, 0) = 0: a violation of F.9.4.3's hypot(x, +-0) = |x| only where the build
    leaves the prescribed value standing."""
    hypot = Op("hypot", (Load("x", F), Load("y", F)), F)
    program = Program((Buffer("x", F, "in", Fill(1, values=(1,))), Buffer("y", F, "in", Fill(1, values=(0,))),
                       Buffer("o", F, "out")), (Store("o", hypot),), 1, options, CL2, "math")
    finding = audit_row("b", _row(program, {"x": [1], "y": [0]}, 1, 0), program, FINGERPRINT)
    assert finding.status == status, finding.reason


def test_finite_math_only_leaves_no_rule_of_a_math_function_or_an_operator():
    for options in ("-cl-finite-math-only", "-cl-fast-relaxed-math"):
        assert "-cl-finite-math-only" in _one("sqrt", 4.0, options=options, requires=CL2).undefined
        assert _one("fmin", 1.0, 2.0, options=options).undefined
    assert _one("sqrt", 4.0).allows(_f32(2.0)) and not _one("sqrt", 4.0).allows(_f32(3.0))


def test_unsafe_math_keeps_table_67_for_float_on_opencl_c_2_only():
    unsafe = "-cl-unsafe-math-optimizations"
    assert "Table 67" in _one("sqrt", 2.0, options=unsafe).undefined  # an OpenCL C 1.2 build
    assert _one("sqrt", 2.0, t=D, options=unsafe, requires=CL2).undefined  # double
    lane = _one("sqrt", 4.0, options=unsafe, requires=CL2)  # Table 65's 3 ulp (sqrt is not in Table 67)
    assert lane.allows(_f32(2.0)) and lane.allows(_f32(2.0) - 3) and not lane.allows(_f32(2.0) - 4)


def test_the_options_a_run_recorded_decide_and_spirv_has_table_67_on_any_version():
    unsafe = "-cl-unsafe-math-optimizations"
    assert _one("sqrt", 2.0, options=unsafe).undefined  # the program alone: an OpenCL C 1.2 build
    assert not _one("sqrt", 2.0, options=unsafe, recorded=f"{unsafe} -cl-std=CL3.0").undefined
    assert not _one("sqrt", 2.0, options=unsafe, spirv=True).undefined  # OpenCL SPIR-V environment §6.6.3
    assert _one("sqrt", 2.0, recorded="-cl-finite-math-only").undefined


def test_unsafe_math_voids_edge_cases_and_the_sign_of_zero():
    unsafe = dict(options="-cl-unsafe-math-optimizations", requires=CL2)
    assert _one("sqrt", -1.0, **unsafe).undefined  # a NaN result: "results are valid"
    assert _one("sqrt", math.inf, **unsafe).undefined  # an infinite operand
    lane = _one("sqrt", -0.0, **unsafe)  # sqrt(-0) = -0 is F.9's; the bound and either zero remain
    assert lane.allows(_f32(0.0)) and lane.allows(_f32(-0.0)) and not lane.allows(_f32(1e-30))
    assert not _one("sqrt", -0.0).allows(_f32(0.0))  # without options the sign is prescribed
    assert _one("lgamma_r", -3.0, out=Type("int"), **unsafe).undefined  # the pole's sign
    assert _call("ilogb", [(F, [0])], Type("int"), **unsafe)[0].undefined  # FP_ILOGB0
    assert _call("ilogb", [(F, [_f32(8.0)])], Type("int"), **unsafe)[0].allows(3)


def test_no_signed_zeros_voids_only_the_sign_of_zero():
    lane = _one("sin", -0.0, options="-cl-no-signed-zeros")
    assert lane.allows(_f32(0.0)) and lane.allows(_f32(-0.0)) and not lane.allows(_f32(1e-30))
    assert _one("sqrt", -1.0, options="-cl-no-signed-zeros").nan  # edge cases still judge
    assert not _one("sin", -0.0, options="-cl-opt-disable").allows(_f32(0.0))


def test_denorms_are_zero_lets_a_subnormal_operand_be_read_as_zero():
    least = decode(1, "float").value
    assert float(least) == 2.0**-149
    for options, flushed in (("-cl-denorms-are-zero", True), ("-cl-unsafe-math-optimizations", True), ("", False)):
        lane = _call("fabs", [(F, [1])], F, options=options, requires=CL2)[0]
        assert lane.allows(1) and lane.allows(0) == flushed, options


def _steps(lane, center: float, below: int, above: int, t: Type = F) -> bool:
    """Whether ``lane`` allows the floats ``below`` steps under and ``above`` steps over ``center``
    and rejects one step further on either side (a positive center)."""
    c = _f32(center) if t.scalar == "float" else _f64(center)
    return (lane.allows(c - below) and lane.allows(c + above) and not lane.allows(c - below - 1)
            and not lane.allows(c + above + 1))


def test_geometric_functions_by_table_17_and_their_bounds():
    # length((3, 4)) = 5, 2.75 + 0.5 * 2 = 3.75 ulp (ulp(5) = 2^-21 on both sides)
    assert _steps(_call("length", [(F2, [_f32(3), _f32(4)])], F)[0], 5.0, 3, 3)
    # distance((4, 6), (1, 2)) = 5, 2.5 + 2 * 2 = 6.5 ulp
    assert _steps(_call("distance", [(F2, [_f32(4), _f32(6)]), (F2, [_f32(1), _f32(2)])], F)[0], 5.0, 6, 6)
    # on double, length has 5.5 + n ulp: 7.5
    assert _steps(_call("length", [(Type("double", 2), [_f64(3), _f64(4)])], D)[0], 5.0, 7, 7, D)
    # fast_length: 8191.5 + n ulp
    assert _steps(_call("fast_length", [(F2, [_f32(3), _f32(4)])], F)[0], 5.0, 8193, 8193)
    # normalize((3, 4)) = (0.6, 0.8) within 2 + 2 = 4 ulp (2^-24 in [0.5, 1)); 0.6 = 0x3f19999a - 0.4 ulp
    x = _call("normalize", [(F2, [_f32(3), _f32(4)])], F2)[0]
    assert x.allows(_f32(0.6) + 3) and x.allows(_f32(0.6) - 4) and not x.allows(_f32(0.6) + 4)
    assert not x.allows(_f32(0.6) - 5)


def test_normalize_edge_cases_of_section_7_5_1():
    zero = _call("normalize", [(F2, [_f32(0.0), _f32(-0.0)])], F2)  # returns v: the same zeros
    assert zero[0].allows(_f32(0.0)) and not zero[0].allows(_f32(-0.0)) and zero[1].allows(_f32(-0.0))
    inf = _call("normalize", [(F2, [_f32(-math.inf), _f32(2.0)])], F2)  # as if (-1, 0): (-1, 0)
    assert inf[0].allows(_f32(-1.0)) and inf[1].allows(_f32(0.0)) and not inf[0].allows(_f32(1.0))
    nan = _call("normalize", [(F2, [_f32(math.nan), _f32(1.0)])], F2)  # a vector full of NaNs
    assert all(lane.nan and not lane.allows(_f32(1.0)) for lane in nan)
    unsafe = _call("normalize", [(F2, [0, 0])], F2, options="-cl-unsafe-math-optimizations", requires=CL2)
    assert all(lane.undefined for lane in unsafe)


def test_fast_normalize_may_return_p_where_the_sum_of_squares_is_under_flt_min():
    tiny = _f32(2.0**-70)  # (2^-70)^2 = 2^-140 < FLT_MIN
    lane = _call("fast_normalize", [(F2, [tiny, 0])], F2)[0]
    assert lane.allows(tiny) and lane.allows(_f32(1.0)) and not lane.allows(_f32(0.5))


def test_dot_and_cross_absolute_tolerances():
    # dot((1, 2), (3, 4)) = 11 within max^2 (2n - 1) FLT_EPSILON = 16 * 3 * 2^-23 = 6 * 2^-20 (ulp(11) = 2^-20)
    assert _steps(_call("dot", [(F2, [_f32(1), _f32(2)]), (F2, [_f32(3), _f32(4)])], F)[0], 11.0, 6, 6)
    # Table 68 gives double the same tolerance in FLT_EPSILON: 11 + 2^-20 is a double dot's too
    d2 = Type("double", 2)
    lane = _call("dot", [(d2, [_f64(1), _f64(2)]), (d2, [_f64(3), _f64(4)])], D)[0]
    assert lane.allows(_f64(11 + 2.0**-20)) and not lane.allows(_f64(11 + 2.0**-17))
    # a product far under the least subnormal: within the tolerance either zero is (Oclgrind's +0 for -0)
    tiny = _call("dot", [(D, [0x8000000000000003]), (D, [0x1E2C93DACB66C9E6])], D)[0]
    assert tiny.allows(_f64(0.0)) and tiny.allows(_f64(-0.0)) and not tiny.allows(1)
    # cross((1, 0, 0), (0, 1, 0)) = (0, 0, 1) within 3 FLT_EPSILON; a float4 cross's w is 0.0
    z = _call("cross", [(F3, [_f32(1), 0, 0]), (F3, [0, _f32(1), 0])], F3)
    assert _steps(z[2], 1.0, 6, 3) and z[0].allows(_f32(3 * 2.0**-23)) and not z[0].allows(_f32(2.0**-21))
    w = _call("cross", [(F4, [_f32(1), 0, 0, _f32(7)]), (F4, [0, _f32(1), 0, _f32(9)])], F4)[3]
    assert w.allows(_f32(0.0)) and not w.allows(_f32(-0.0)) and not w.allows(_f32(2.0**-149))


@pytest.mark.parametrize("x, sign", [(2.5, 1), (-0.5, -1), (-1.5, 1), (-2.5, -1), (-3.0, 0), (0.0, 0), (-0.0, 0),
                                     (math.inf, 1), (-math.inf, None), (math.nan, None)])
def test_lgamma_r_stores_the_sign_of_the_gamma_function(x, sign):
    lane = _one("lgamma_r", x, out=Type("int"))
    if sign is None:
        assert lane.undefined
    else:
        assert lane.allows(sign & 0xFFFFFFFF) and not any(lane.allows(s & 0xFFFFFFFF) for s in (-1, 0, 1) if s != sign)


def test_lgamma_has_only_its_prescribed_values():
    assert _one("lgamma", 1.0).values == (_f32(0.0),) and _one("lgamma", 2.0).allows(_f32(0.0))
    for pole in (-3.0, 0.0, -0.0, -math.inf, math.inf):
        assert _one("lgamma", pole).values == (_f32(math.inf),) and not _one("lgamma", pole).allows(_f32(-math.inf))
    assert "undefined" in _one("lgamma", 0.5).undefined  # Table 65: no bound
    assert _one("lgamma_r", 1.0).allows(_f32(0.0)) and _one("lgamma_r", 3.0).undefined


def test_out_parameters_of_frexp_remquo_sincos_modf_and_fract():
    i, i1 = Type("int"), lambda v: v & 0xFFFFFFFF
    assert _one("frexp", 12.0, out=i).values == (4,) and _one("frexp", 12.0).allows(_f32(0.75))
    assert _one("frexp", math.inf, out=i).values == (0,) and _one("frexp", 0.0, out=i).values == (0,)
    q = _one("remquo", 7.0, 2.0, out=i)  # 7 / 2 = 3.5, rounded to even: 4; only the sign and 7 low bits
    assert q.allows(4) and q.allows(4 + 128) and not q.allows(5) and not q.allows(i1(-4))
    assert _one("remquo", -7.0, 2.0, out=i).allows(i1(-4)) and not _one("remquo", -7.0, 2.0, out=i).allows(4)
    assert _one("remquo", math.inf, 2.0, out=i).values == (0,)  # §7.5.1
    assert _one("sincos", 0.0, out=F).values == (_f32(1.0),)  # cos(+-0) = 1
    cos = _one("sincos", 2.0**-10, out=F)  # cos(2^-10) = 1 - 2^-21 + 2^-44/24 - ...: 8 steps of 2^-24 under 1
    one = _f32(1.0)
    assert cos.allows(one - 4) and cos.allows(one - 11) and not cos.allows(one - 3) and not cos.allows(one - 12)
    assert _one("modf", -3.5, out=F).values == (_f32(-3.0),) and _one("modf", -3.5).values == (_f32(-0.5),)
    assert _one("fract", -0.5, out=F).values == (_f32(-1.0),) and _one("fract", -0.5).values == (_f32(0.5),)


def test_mix_smoothstep_min_max_and_clamp_of_section_6_15_4():
    mix = _one("mix", 1.0, 3.0, 0.25)  # 1 + (3 - 1) * 0.25 = 1.5 within 1e-3
    assert mix.allows(_f32(1.5009)) and not mix.allows(_f32(1.5011))
    assert _one("mix", 1.0, 3.0, 2.0).undefined and _one("mix", 1.0, 3.0, 0.5, t=D).undefined
    assert _one("mix", math.inf, 1.0, 0.5).nan  # inf + (1 - inf) * 0.5 = inf - inf
    smooth = _one("smoothstep", 0.0, 1.0, 0.25)  # t = 0.25: t * t * (3 - 2t) = 0.15625 within 1e-5
    assert smooth.allows(_f32(0.156259)) and not smooth.allows(_f32(0.156261))
    assert _one("smoothstep", 1.0, 0.0, 0.5).undefined and _one("smoothstep", 0.0, 1.0, math.nan).undefined
    assert _one("smoothstep", 0.0, 1.0, -math.inf).allows(_f32(0.0))
    assert _one("fmin_common", 1.0, 2.0).values == (_f32(1.0),) and _one("fmax_common", 1.0, 2.0).allows(_f32(2.0))
    assert {_f32(0.0), _f32(-0.0)} <= set(_one("fmax_common", -0.0, 0.0).values)
    assert _one("fmin_common", math.inf, 1.0).undefined and _one("fmax_common", math.nan, 1.0).undefined
    assert _one("fclamp", 5.0, 0.0, 1.0).values == (_f32(1.0),) and _one("fclamp", 0.5, 1.0, 0.0).undefined


def _image_read(sampler, image, coordinate: list[int], ctype: Type, result: Type) -> list:
    read = Op("read_image", (Load("c", ctype),), result, (("dim", image.dim), ("form", read_form(sampler)),
                                                          ("image", image.name), ("sampler", sampler.name)))
    program = Program((Buffer("c", ctype, "in", Fill(1, values=tuple(coordinate))), Buffer("o", result, "out")),
                      (Store("o", read),), 1, area="images", images=(image,), samplers=(sampler,))
    ev = Evaluator(program, {"c": coordinate}, Env(flush_set(FINGERPRINT)), 0, False, FINGERPRINT)
    return ev.stored(program.body[0], "o")


def test_a_linear_read_lies_within_the_hull_of_the_texels_it_may_blend():
    image = Image("i", "1d", "R", "FLOAT", (3,), Fill(1, values=(_f32(0.25), _f32(0.75), _f32(4.0))))
    linear = Sampler("s", False, "clamp_to_edge", "linear")
    r, g, _, a = _image_read(linear, image, [_f32(1.0)], F, F4)  # u - 0.5 = 0.5: texels 0 and 1 (a = 0.5)
    assert r.allows(_f32(0.5)) and r.allows(_f32(0.25)) and r.allows(_f32(0.75) + 3)  # (2 * 1 + 1) ulp wider
    assert not r.allows(_f32(0.75) + 4) and not r.allows(_f32(0.1)) and not r.allows(_f32(4.0))
    assert g.allows(_f32(0.0)) and a.allows(_f32(1.0)) and not a.allows(_f32(0.5))
    nan = Image("i", "1d", "R", "FLOAT", (2,), Fill(1, values=(_f32(math.nan), _f32(1.0))))
    assert _image_read(linear, nan, [_f32(1.0)], F, F4)[0].undefined  # §8.2: LINEAR over a NaN texel


def test_a_normalized_read_near_a_texel_boundary_may_read_either_texel():
    image = Image("i", "1d", "R", "UNSIGNED_INT8", (4,), Fill(1, values=(10, 20, 30, 40)))
    nearest = Sampler("s", True, "clamp_to_edge", "nearest")
    u4 = Type("uint", 4)
    on_boundary = _image_read(nearest, image, [_f32(0.5)], F, u4)[0]  # u = 2.0: texel 1 or 2 within 1/16 texel
    assert on_boundary.allows(20) and on_boundary.allows(30) and not on_boundary.allows(10)
    inside = _image_read(nearest, image, [_f32(0.375)], F, u4)[0]  # u = 1.5: texel 1 only
    assert inside.values == (20,)


def test_the_audit_reads_the_options_the_run_recorded(memory_corpus):
    """A run built with -cl-finite-math-only (recorded, whatever the program says) leaves its
    float verdicts no rule: not reproduced."""
    _store(memory_corpus, PROGRAMS[5], options="-cl-finite-math-only")
    row = first_result_row(memory_corpus, memory_corpus.buckets()[0]["id"])
    assert row["build_options"] == "-cl-finite-math-only"
    result = audit_corpus(memory_corpus, 10)
    assert result.findings and {f.status for f in result.findings} == {"not reproduced"}
    assert all("-cl-finite-math-only" in f.reason for f in result.findings)


def test_json_counts_per_bucket_kind(tmp_path):
    c = Corpus(tmp_path / "c.db")
    _store(c, PROGRAMS[0])
    c.close()
    result = CliRunner().invoke(cli, ["audit", "--corpus", str(tmp_path / "c.db"), "--json"])
    data = json.loads(result.output)
    assert data["kinds"]["wrong-result"] == {"buckets": 1, "sampled": 1, "audited": 1, "reproduced": 1}
    assert data["sampled"] == data["audited"] == data["reproduced"] == 1 and data["not_reproduced"] == []


# ---- timeouts: the hang verdict against the bucket's runs ----------------------------------------------------

def _timeout_bucket(hang, runs):
    return {"id": "t1", "signature": {"kind": "timeout"}, "hang": hang, "slow_runs": runs}


@pytest.mark.parametrize("hang, runs, status", [
    # the re-run had ten times the 60 s the cut run was given and gave no result: a hang
    (True, [{"given_s": 60.0, "hang": True, "limit_s": 600.0}], "reproduced"),
    # a "hang" whose re-run had only five times as long: not shown to be one
    (True, [{"given_s": 60.0, "hang": True, "limit_s": 300.0}], "not reproduced"),
    # the re-run finished: slow, not a hang
    (False, [{"given_s": 60.0, "hang": False, "limit_s": 600.0, "seconds": 302.0, "status": "ok"}], "reproduced"),
    (True, [{"given_s": 60.0, "hang": False, "limit_s": 600.0, "seconds": 302.0, "status": "ok"}], "not reproduced"),
    # never re-run: undecided (performance), whatever else the bucket claims
    (None, [{"given_s": 60.0}], "reproduced"),
    (True, [{"given_s": 60.0}], "not reproduced"),
])
def test_a_timeout_bucket_is_audited_from_its_runs(hang, runs, status):
    """No OpenCL specification sets a time limit: a run cut at the ceiling is a hang only where a
    re-run given ten times as long gave no result either (docs/triage.md, "Slow runs and hangs")."""
    from triage.audit import audit_timeout
    finding = audit_timeout(_timeout_bucket(hang, runs), {"id": "r1"})
    assert (finding.status, finding.kind) == (status, "timeout")
