"""piglit CL program tests from the corpus (triage.piglit_lanes, triage.piglit_text, triage.piglit and
``clfuzz export --format piglit``) without a driver: piglit's comparisons worked by hand, the
comparison each kind of lane gets, the test file's header and kernel, what is skipped, bad input.
tests/drivers/test_piglit_run.py runs exported tests with the real cl-program-tester."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from campaign.expectations import Expectations
from corpus.store import Corpus
from fuzz.drivers.capabilities import ftz_for
from fuzz.judge import judge
from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Load, Op, Program, Sampler, Store
from lang.types import Type
from triage.bugs import listed
from triage.piglit_lanes import Encoding, encode, probe_float, probe_int
from triage.piglit_text import piglit_file, unexpressible
from triage.session import reduction_row

F, D = Type("float"), Type("double")
ULP1 = 2.0 ** -23  # the ulp of 1.0 and 1.5 in float


def _f32(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def _check(allowed, any_nan=False, ranges=()):
    """A lane as triage.repro_script.checks gives it (value ranges: [text, text, lo, hi])."""
    return {"buffer": "out0", "lane": 0, "allowed": list(allowed), "any_nan": any_nan,
            "ranges": [["", "", lo, hi] for lo, hi in ranges], "allowed_text": [hex(a) for a in allowed], "rule": "r"}


def test_the_float_comparison_is_the_testers():
    """piglit_cl_probe_floating: |actual - expected| <= N ulp(expected), the ulp towards infinity
    away from zero; -0 equals +0; an expected NaN or infinity accepts any value but NaN."""
    assert probe_float(1 + ULP1, 1.0, 1, "float32") and not probe_float(1 + 2 * ULP1, 1.0, 1, "float32")
    assert probe_float(1 - ULP1 / 2, 1.0, 1, "float32")  # below 1.0 the values are twice as close
    assert not probe_float(1 + ULP1, 1.0, 0, "float32")
    assert probe_float(-0.0, 0.0, 0, "float32") and probe_float(0.0, -0.0, 0, "float32")
    assert probe_float(1.0, math.nan, 0, "float32") and probe_float(1.0, math.inf, 0, "float32")
    assert probe_float(math.nan, math.nan, 0, "float32") and not probe_float(math.nan, 1.0, 100, "float32")
    assert probe_float(math.inf, -math.inf, 0, "float32")  # inf - inf is NaN: so is the tolerance
    assert not probe_float(math.nan, math.inf, 0, "float32")
    assert probe_float(1e30, 1.0, 1 << 24, "float32") and not probe_float(1e30, 1.0, (1 << 24) - 1, "float32")
    assert probe_float(1 + 2.0 ** -52, 1.0, 1, "float64") and not probe_float(1 + 2.0 ** -51, 1.0, 1, "float64")


def test_the_integer_comparison_is_the_testers():
    assert probe_int(7, 5, 2) and not probe_int(8, 5, 2) and probe_int(3, 5, 2) and not probe_int(2, 5, 2)
    assert not probe_int(-(2 ** 63), 2 ** 63 - 1, 2 ** 63)  # the 64-bit difference wraps to 1 ... and back


@pytest.mark.parametrize("check, name, actual, expected", [
    # sign(+0) = +0 exact; the driver gave -0, which piglit's value comparison takes for +0: bits
    (_check([0]), "float", 0x80000000, Encoding("bits", "uint", 0xFFFFFFFF, "0x0", "")),
    # tanpi(1) = -0 exact; -0x1.1a6264p-53 is a value apart from it
    (_check([0x80000000]), "float", 0xA50D3132, Encoding("value", "float", 0, "-0x0.0p+0", "")),
    # any NaN (an expected NaN accepts anything): the bits without the sign, 0x7fc00000 +- 0x3fffff
    # being exactly 0x7f800001 ... 0x7fffffff, every NaN
    (_check([0x7FC00000], any_nan=True), "float", 0, Encoding("bits", "uint", 0x7FFFFFFF, "0x7fc00000", "4194303")),
    # within [1.5 - 2 ulp, 1.5 + 3 ulp] around the correctly rounded 1.5: 3 ulp hold the whole range
    (_check([0x3FC00000], ranges=[(1.5 - 2 * ULP1, 1.5 + 3 * ULP1)]), "float", _f32(1.5 + 4 * ULP1),
     Encoding("value", "float", 0, "0x1.8000000000000p+0", "3 ulp")),
    (_check([0x3FC00000], ranges=[(1.5 - 2 * ULP1, 1.5 + 3 * ULP1)]), "float", None,
     Encoding("value", "float", 0, "0x1.8000000000000p+0", "3 ulp")),
    # 1 or 1065353216: the middle, rounded up so that the tolerance's extra step misses 0
    (_check([1, 1065353216]), "int", 0, Encoding("value", "int", 0, "532676609", "532676608")),
    (_check([1, 1065353216]), "int", 1065353217, Encoding("value", "int", 0, "532676608", "532676608")),
    (_check([0xFFFF]), "short", 0xC882, Encoding("value", "short", 0, "-1", "")),
    (_check([0x8000000000000000]), "double", 0, Encoding("bits", "ulong", 0xFFFFFFFFFFFFFFFF, "0x8000000000000000", "")),
    # overflow allowed: FLT_MAX or +inf; the driver gave 1.0: the bits from FLT_MAX's to inf's
    (_check([0x7F7FFFFF, 0x7F800000]), "float", 0x3F800000, Encoding("bits", "uint", 0xFFFFFFFF, "0x7f7fffff", "1")),
])
def test_each_lane_gets_the_first_comparison_that_tells_the_driver_apart(check, name, actual, expected):
    assert encode(check, name, actual) == expected


@pytest.mark.parametrize("check, name, actual", [
    (_check([0x3FC00000], ranges=[(1.5 - 2 * ULP1, 1.5 + 3 * ULP1)]), "float", _f32(1.5 + 3 * ULP1)),
    (_check([0, 1, 0x80000000]), "float", 0),  # a denormal, or flushed to either zero
    (_check([1, 1065353216]), "int", 5),
])
def test_a_wrong_value_within_what_any_comparison_allows_is_left_out_with_why(check, name, actual):
    why = encode(check, name, actual)
    assert isinstance(why, str) and why.startswith("out0 lane 0: the driver's bits") and f"{actual:#x}" in why


def _program(op: str = "sign", t: Type = F, values=(0.0, 1.5, -1.5), options: str = "", **kw) -> Program:
    bits = tuple(int(np.array([v], t.elem.dtype).view(t.elem.bits_dtype)[0]) for v in values)
    return Program((Buffer("in0", t, "in", Fill(0, values=bits)), Buffer("out0", t, "out")),
                   (Store("out0", Op(op, (Load("in0", t),), t)),), len(values), area="math", options=options, **kw)


FP = {"platform_name": "Oclgrind", "device_name": "Sim", "single_fp_config": {"denorm": True}, "path": "opencl-c"}


def _rows(program: Program, wrong: dict[int, int]) -> list[dict]:
    """The rows of a driver that gives the oracle's first allowed bits but ``wrong`` (lane -> bits)."""
    exp = Expectations(program)
    judged = exp.get(ftz_for(FP))
    actual = {s.buffer: judged[s.buffer].allowed[0].copy() for s in program.body}
    for lane, bits in wrong.items():
        actual["out0"][lane] = bits
    return judge(program, judged, actual, exp.inputs).rows


def _header(text: str) -> dict[str, list[str]]:
    """The header's lines by key, continuation lines joined as the tester joins them."""
    block = text.split("/*!\n")[1].split("\n!*/")[0].replace(" \\\n", " ")
    out: dict[str, list[str]] = {}
    for line in block.splitlines():
        if ":" in line and not line.startswith(("#", "[")):
            key, value = line.split(":", 1)
            out.setdefault(key.strip(), []).append(" ".join(value.split()))
    return out


def test_a_lane_test_has_the_kernel_its_inputs_and_the_judged_lanes():
    program = _program()
    made = piglit_file(program, frozenset(), _rows(program, {0: 0x80000000}), "wrong-result", "clfuzz x: sign / -0", FP)
    text, left_out = made
    head = _header(text)
    assert left_out == []
    assert head["name"] == ["clfuzz x: sign - -0", "the lanes the specification judges"]  # no '/' in a name
    assert head["clc_version_min"] == ["12"] and head["build_options"] == ["-cl-std=CL1.2"]
    assert (head["global_size"], head["local_size"], head["kernel_name"]) == (["3 0 0"], ["NULL"], ["clfuzz"])
    assert "require_device_extensions" not in head and "need_image_support" not in head
    zeros = " ".join(["0x0.0p+0"] * 29)
    assert head["arg_in"] == [f"0 buffer float[32] 0x0.0p+0 0x1.8000000000000p+0 -0x1.8000000000000p+0 {zeros}",
                              "1 buffer uchar[128] repeat 0"]
    # lane 0 (the wrong one, +0 against -0) by its bits; lanes 1 and 2, sign(1.5) = 1 and sign(-1.5) = -1, by value
    assert head["arg_out"] == ["2 buffer uint[1] 0x0", "3 buffer float[2] 0x1.0000000000000p+0 -0x1.0000000000000p+0"]
    kernel = text.split("!*/\n")[1]
    assert "global uint* restrict check0, global float* restrict check1)" in kernel
    assert "    out0[gid] = sign(in0[gid]);\n" in kernel
    assert "if (gid == 0) { check0[0] = as_uint(out0[0]); }" in kernel
    assert "if (gid == 2) { check1[1] = out0[2]; }" in kernel


def test_what_the_kernel_needs_is_in_the_config():
    program = _program("sqrt", D, (2.0, 4.0), options="-cl-opt-disable", requires=frozenset({"fp64"}))
    text, _ = piglit_file(program, frozenset(), _rows(program, {1: 0}), "wrong-result", "t", FP)
    head = _header(text)
    assert head["build_options"] == ["-cl-opt-disable -cl-std=CL1.2"]
    assert head["require_device_extensions"] == ["cl_khr_fp64"]
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in text


def test_a_build_error_is_a_build_test_and_a_crash_a_test_that_only_runs():
    program = _program()
    build, _ = piglit_file(program, frozenset(), [{"kind": "build_error"}], "build_error", "b", FP)
    assert "[test]" not in build and "kernel_name" not in build and "check0" not in build
    assert build.split("!*/\n")[1] == __import__("fuzz.emit.opencl_c", fromlist=["emit"]).emit(program)
    crash, _ = piglit_file(program, frozenset(), [{"kind": "crash"}], "crash", "c", FP)
    assert "[test]" in crash and "arg_in: 1 buffer uchar[128] repeat 0" in crash and "arg_out" not in crash


def test_inputs_the_tester_cannot_read_as_floats_are_written_as_bits():
    payload = 0x7FC00001  # a NaN whose payload the tester's "nan" cannot spell
    program = Program((Buffer("in0", F, "in", Fill(0, values=(payload, 0x7FC00000))), Buffer("out0", F, "out")),
                      (Store("out0", Op("sqrt", (Load("in0", F),), F)),), 2, area="math")
    text, _ = piglit_file(program, frozenset(), _rows(program, {0: 0}), "wrong-result", "t", FP)
    assert _header(text)["arg_in"][0].startswith(f"0 buffer uint[32] {payload} {0x7FC00000} 0 ")


def _image_program(dim: str = "2d", addressing: str = "clamp", order: str = "RGBA") -> Program:
    t, result = Type("int", 2 if dim == "2d" else 4), Type("uint", 4)
    sampler = Sampler("s", addressing in ("repeat", "mirrored_repeat"), addressing, "nearest")
    shape = {"2d": (2, 1), "3d": (2, 1, 1), "2d_array": (2, 1, 1)}[dim]
    image = Image("i", dim, order, "UNSIGNED_INT8", shape, Fill(1, values=tuple(range(8))))
    read = Op("read_image", (Load("c", t),), result, (("dim", dim), ("form", read_form(sampler)), ("image", "i"),
                                                      ("sampler", "s")))
    return Program((Buffer("c", t, "in", Fill(0, values=(1,) * t.width)), Buffer("o", result, "out")),
                   (Store("o", read),), 1, area="images", images=(image,), samplers=(sampler,))


def test_a_2d_image_and_its_sampler_are_arguments_of_the_test():
    program = _image_program()
    text, _ = piglit_file(program, frozenset(), _rows_of(program, "o", {0: 9}), "wrong-result", "t", FP)
    head = _header(text)
    assert head["need_image_support"] == ["true"]
    assert head["arg_in"][2] == ("2 image uchar4 0 1 2 3 4 5 6 7 image_type 2d image_width 2 image_height 1 "
                                 "image_channel_order RGBA image_channel_data_type UNSIGNED_INT8")
    assert head["arg_in"][3] == "3 sampler normalized_coords 0 addressing_mode CLAMP filter_mode NEAREST"
    assert head["arg_out"][0].startswith("4 buffer uint[")


def _rows_of(program: Program, buffer: str, wrong: dict[int, int]) -> list[dict]:
    exp = Expectations(program)
    judged = exp.get(frozenset())
    actual = {s.buffer: judged[s.buffer].allowed[0].copy() for s in program.body}
    for lane, bits in wrong.items():
        actual[buffer][lane] = bits
    return judge(program, judged, actual, exp.inputs).rows


@pytest.mark.parametrize("program, kind, why", [
    (_image_program("3d"), "wrong-result", "a 3D image (i: the tester takes 2D images only)"),
    (_image_program("2d_array"), "wrong-result", "an image array (i: the tester takes 2D images only)"),
    (_image_program(addressing="repeat"), "wrong-result", "a sampler argument with addressing mode REPEAT"),
    (_image_program(order="ABGR"), "wrong-result", "image channel order ABGR"),
    (_program(), "timeout", "a timeout (the tester has no time limit"),
])
def test_what_the_tester_cannot_express_is_one_line(program, kind, why):
    assert unexpressible(program, kind).startswith(why)


def _corpus(tmp_path, reduced: bool = True) -> tuple[str, str]:
    """A corpus file with one bucket (sign(+0) given as -0 by a simulated Oclgrind), reduced to itself."""
    corpus = Corpus(tmp_path / "c.db")
    program = _program()
    corpus.add_program(program, "c")
    corpus.add_target("oclgrind", "opencl-c", "fp", FP)
    rows = [{**r, "program_id": program.id, "target": "oclgrind", "fingerprint_id": "fp", "path": "opencl-c"}
            for r in _rows(program, {0: 0x80000000})]
    corpus.add_run({"program_id": program.id, "target": "oclgrind", "fingerprint_id": "fp", "path": "opencl-c",
                    "status": "ok", "campaign": "c", "checks": 3, "judged": 3, "mismatches": 1}, rows)
    (bucket,) = corpus.buckets()
    if reduced:
        target = type("T", (), {"name": "oclgrind"})()
        corpus.add_reduction(reduction_row(program, program, bucket["id"], target))
    corpus.close()
    return str(tmp_path / "c.db"), bucket["id"]


def test_export_writes_the_tests_and_their_index(tmp_path, monkeypatch):
    monkeypatch.setattr("app.commands_export.local_targets", lambda drivers: [])
    path, bucket = _corpus(tmp_path)
    done = CliRunner().invoke(cli, ["export", "--format", "piglit", bucket, "--corpus", path, "-o", str(tmp_path / "out")])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [f"1 piglit tests in {tmp_path / 'out'} (index.csv)"]
    (row,) = list(csv.DictReader(open(tmp_path / "out" / "index.csv")))
    assert (row["file"], row["id"], row["driver"], row["platform"]) == (f"{bucket}.cl", bucket, "oclgrind", "Oclgrind")
    assert row["command"].endswith(f"cl-program-tester {bucket}.cl -platform Oclgrind")
    assert _header((tmp_path / "out" / row["file"]).read_text())["arg_out"][0] == "2 buffer uint[1] 0x0"


def test_bad_input_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.setattr("app.commands_export.local_targets", lambda drivers: [])
    path, bucket = _corpus(tmp_path, reduced=False)
    (bug,) = listed(Corpus(path))[0]
    runs = {
        "not reduced": ["export", "--format", "piglit", bucket, "--corpus", path, "-o", str(tmp_path / "o")],
        "bug not reduced": ["export", "--format", "piglit", bug.id, "--corpus", path, "-o", str(tmp_path / "o")],
        "nothing named": ["export", "--format", "piglit", "--corpus", path, "-o", str(tmp_path / "o")],
        "no such file": ["export", "--format", "piglit", str(tmp_path / "none.json"), "-o", str(tmp_path / "o")],
        "no such bucket": ["export", "--format", "piglit", "abcdef", "--corpus", path, "-o", str(tmp_path / "o")],
    }
    said = {}
    for what, args in runs.items():
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 2 and len(done.stderr.splitlines()) == 1, (what, done.output)
        said[what] = done.stderr
    assert f"bucket {bucket} has no reduced program: `clfuzz reduce {bucket}` first" in said["not reduced"]
    assert f"bug {bug.id} has no reduced bucket: `clfuzz reduce {bug.id}` first" in said["bug not reduced"]
    assert "or give --all" in said["nothing named"] and "no such regression file" in said["no such file"]
    assert not (tmp_path / "o").exists()


def test_a_regression_file_whose_driver_is_not_here_is_listed_and_skipped(tmp_path, monkeypatch):
    from lang.ir import to_data

    monkeypatch.setattr("app.commands_export.local_targets", lambda drivers: [])
    file = tmp_path / "r.json"
    file.write_text(json.dumps({"title": "t", "program": to_data(_program()), "ftz": [], "verdict": [],
                                "known_wrong": {"oclgrind": {"bucket": "b", "what": "w"}}, "found_in": []}))
    done = CliRunner().invoke(cli, ["export", "--format", "piglit", str(file), "-o", str(tmp_path / "o")])
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[1] == ("skipped: r.json: oclgrind is not a driver of this machine: its wrong "
                                           "values are unknown")


def test_a_file_that_is_not_a_regression_file_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.setattr("app.commands_export.local_targets", lambda drivers: [])
    file = tmp_path / "x.json"
    file.write_text(json.dumps({"title": "t"}))
    done = CliRunner().invoke(cli, ["export", "--format", "piglit", str(file), "-o", str(tmp_path / "o")])
    assert done.exit_code == 2 and done.stderr.startswith(f"Error: {file}: not a regression file"), done.output
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "o").exists()
