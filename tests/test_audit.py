"""The audit (triage.audit, ``clfuzz audit``): verdicts of the real oracle and judge on known-wrong
results are reproduced by the independent derivation; a deliberately wrong stored expectation and a
correct result judged wrong are reported as not reproduced. That the audit imports no oracle code
is the import-linter contract ``audit-independent`` (pyproject.toml, tests/test_architecture.py)."""

from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from audit import bits_text, decode, round_real
from corpus.store import Corpus
from fuzz.judge import judge
from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Literal, Load, Op, Program, Store
from lang.layout import input_values
from lang.types import Type
from oracles import expected
from triage.audit import audit_corpus, flush_set, report_lines, sample_buckets

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


def _store(corpus: Corpus, program: Program, flip: int = 1, stored: Callable[[dict], dict] = lambda r: r) -> None:
    """``program`` run on a driver wrong in every lane (``flip``), its rows as ``stored`` writes them."""
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
                    "mismatches": verdict.mismatches}, rows)


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
    assert "1 build-error/crash/timeout buckets skipped" in "\n".join(report_lines(result))


def test_the_sample_is_deterministic_and_spread_over_operations(corpus):
    picked, total, failures = sample_buckets(corpus, 4)
    assert len(picked) == 4 and failures == 0 and total > 4
    assert len({b["signature"]["operation"] for b in picked}) == 4
    assert [b["id"] for b in sample_buckets(corpus, 4)[0]] == [b["id"] for b in picked]


def test_lanes_the_audit_has_no_reference_for_are_not_audited(memory_corpus):
    program = _program("o", Op("dot", (Load("a", Type("float", 2)), Load("b", Type("float", 2))), Type("float")),
                       Type("float"), {"a": (Type("float", 2), (_f32(1.0), _f32(2.0))),
                                       "b": (Type("float", 2), (_f32(3.0), _f32(4.0)))}, "math")
    _store(memory_corpus, program, flip=1 << 22)
    result = audit_corpus(memory_corpus, 10)
    assert [f.status for f in result.findings] == ["not audited"]
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
    assert result.exit_code == 1
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
