"""Triage on a real driver: PoCL 3.1 rounds convert_float_rtz of a long near LONG_MIN away from
zero when the long is a constant (found by the conversions campaign). A program hiding that lane among other statements and
work-items is run and recorded, confirmed on a fresh worker, reduced to the one statement and
work-item, and reported; the report's repro.py shows the bug with pyopencl alone."""

from __future__ import annotations

import subprocess
import sys

import pytest

from campaign.execute import execute
from corpus.store import Corpus
from fuzz.drivers import Worker
from lang.ir import Buffer, Fill, Literal, Load, Op, Program, Store
from lang.types import Type
from triage.report import write_report
from triage.session import find_row, triage

from .conftest import skip_without_icd, target_named

skip_without_icd()

NEAR_MIN = 2**64 - (2**63 - 1)  # -9223372036854775807 as a long's bits


def _program() -> Program:
    longs, ints, floats = Type("long", 4), Type("int", 2), Type("float", 4)
    buffers = (
        Buffer("in0", longs, "in", Fill(5, (NEAR_MIN, 1, 2**40 + 1), 3)),
        Buffer("in1", ints, "in", Fill(6, (7, 2**32 - 3), 3)),
        Buffer("out0", Type("int", 2), "out"),
        Buffer("out1", floats, "out"),
        Buffer("out2", Type("long", 4), "out"),
    )
    body = (
        Store("out0", Op("add_sat", (Load("in1", ints), Load("in1", ints)), ints)),
        Store("out1", Op("convert", (Literal(longs, (1, NEAR_MIN, 2**40 + 1, 3)),), floats, (("rounding", "rtz"),))),
        Store("out2", Op("max", (Load("in0", longs), Load("in0", longs)), longs)),
    )
    return Program(buffers, body, 64, requires=frozenset({"int64"}), area="conversions")


@pytest.fixture(scope="module")
def pocl():
    return target_named("pocl")


def test_triage_confirms_reduces_and_reports_a_real_bug(pocl, tmp_path):
    corpus = Corpus(tmp_path / "c.db")
    program = _program()
    corpus.add_program(program, "t")
    corpus.add_target(pocl.name, pocl.path, pocl.fingerprint_id, pocl.fingerprint)
    with Worker(pocl) as worker:
        outcome = execute(program, pocl, worker, corpus, campaign="t")
    if not outcome.verdict.rows:
        pytest.fail("PoCL computed convert_float4_rtz of the constant LONG_MIN + 1 correctly: the bug is fixed; "
                    "update this test and corpus/regressions/")
    result = triage(corpus, [pocl], "t", budget_s=120)
    assert result.confirmed and result.reduced and not result.flaky
    bucket = corpus.bucket(result.reduced[0])
    assert bucket["confirmation"] == "confirmed" and bucket["reduced"]
    reduction = corpus.reductions(bucket["id"])[0]
    small = corpus.program(reduction["reduced_id"])
    assert len(small.body) == 1 and small.global_size == 1
    assert small.body[0].value.op == "convert"
    assert find_row(corpus, reduction["reduced_id"])["operation"].startswith("convert_float")

    folder = write_report(corpus, bucket["id"], tmp_path / "report")
    readme = (folder / "README.md").read_text()
    assert "§6.4.3" in readme and "0xdeffffff" in readme and "0xdf000000" in readme
    assert (folder / "kernel.cl").read_text().count("convert_float") == 1
    run = subprocess.run([sys.executable, str(folder / "repro.py")], env=pocl.env(), capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "WRONG" in run.stdout and "bug present" in run.stdout


def test_clfuzz_reduce_takes_a_bug_id_of_the_bug_list(pocl, tmp_path):
    """The bug list names bugs (``bug-...``); ``clfuzz reduce`` takes one and reduces each of its
    buckets not reduced yet. PoCL 3.1 computes ``abs`` of a constant holding INT_MIN as 0 (§6.15.3:
    the ``uint`` 2^31; from a buffer it is right); under ``vstore16`` the bug list first blames
    ``vstoren``, and the reduction finds ``abs``. Once reduced, the command says so and points at
    the report."""
    from click.testing import CliRunner

    from app.cli import cli
    from triage.bugs import listed

    ints, uints, one = Type("int", 16), Type("uint", 16), Type("int", 1)
    lanes = (2**31, 5, 2**32 - 5, 0, 2**31, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    program = Program((Buffer("in0", one, "in", Fill(0, values=(7,))), Buffer("out0", uints, "out"),
                       Buffer("out1", one, "out")),
                      (Store("out0", Op("vstore", (Op("abs", (Literal(ints, lanes),), uints),), uints, (("offset", 0),))),
                       Store("out1", Op("arith", (Load("in0", one), Load("in0", one)), one, (("operator", "+"),)))), 4)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_program(program, "t")
    corpus.add_target(pocl.name, pocl.path, pocl.fingerprint_id, pocl.fingerprint)
    with Worker(pocl) as worker:
        rows = execute(program, pocl, worker, corpus, campaign="t").verdict.rows
    if not rows:
        pytest.fail("PoCL computed abs of a constant INT_MIN right: the bug is fixed; update this test")
    assert {(r["operation"], r["expected_value"], r["actual_value"]) for r in rows} == {("vstoren", "2147483648", "0")}
    (bug,) = listed(corpus)[0]
    run = CliRunner().invoke(cli, ["reduce", bug.id, "--corpus", str(tmp_path / "c.db")])
    assert run.exit_code == 0, run.output
    assert f"{bug.id}: bucket {bug.lead['id']} (1 of 1 not reduced yet)" in run.output
    assert "abs(((int)(-2147483647-1))): expected 2147483648, actual 0" in run.output
    (reduced,) = listed(corpus)[0]
    assert reduced.lead["operation"] == "abs" and reduced.lead["reduced"]
    again = CliRunner().invoke(cli, ["reduce", reduced.id, "--corpus", str(tmp_path / "c.db")])
    assert again.exit_code == 0 and f"every bucket of {reduced.id} is reduced: `clfuzz report {reduced.id}" in again.output
