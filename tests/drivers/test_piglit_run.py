"""Exported piglit tests run by the real ``cl-program-tester`` (Debian's ``piglit`` package, which
``bash setup.sh`` installs), both ways: each fails on the driver that has the bug and passes on a
local driver without it.

The corpus is built here from two bugs of Oclgrind 21.10 that PoCL 3.1 does not have: ``sign(+0.0f)``
gives -0 (OpenCL C 3.0.19 §6.15.4: sign(x) returns x for a zero; piglit sees -0 equal to +0, so the
lane is compared by its bits, ``as_uint``) and ``tanpi(1.0f)`` gives -0x1.1a6264p-53 where §7.5.1
prescribes -0 (compared by value). Each program is its own reduction (one statement, one work-item).
A regression file written by ``clfuzz export-regressions``' code is exported and run the same way.
"""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from campaign.execute import execute
from corpus.store import Corpus
from fuzz.drivers import Worker
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from triage import regressions
from triage.piglit import cl_program_tester
from triage.session import reduction_row

from .conftest import skip_without_icd, target_named

skip_without_icd()
if not Path(cl_program_tester()).exists():
    pytest.skip("piglit's cl-program-tester is not installed (`bash setup.sh test` installs piglit)",
                allow_module_level=True)


def _one(op: str, bits: int) -> Program:
    f = Type("float", 1)
    return Program((Buffer("in0", f, "in", Fill(0, values=(bits,))), Buffer("out0", f, "out")),
                   (Store("out0", Op(op, (Load("in0", f),), f)),), 1, area="math")


def _run(command: str, folder: Path) -> str:
    """The tester's verdict ("pass", "fail", ...) on a command run from the export's folder."""
    done = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, text=True, timeout=300)
    results = [line for line in done.stdout.splitlines() if line.startswith('PIGLIT: {"result"')]
    assert results, done.stdout + done.stderr
    return results[-1].split('"result": "')[1].split('"')[0]


def _on(target, row: dict) -> str:
    """``row``'s command with ``target``'s ICD folder and platform in place of its own."""
    platform = target.fingerprint["platform_name"].strip()
    return f"OCL_ICD_VENDORS={target.icd_folder} {cl_program_tester()} {row['file']} -platform '{platform}'"


def test_exported_tests_fail_on_the_buggy_driver_and_pass_on_another(tmp_path):
    oclgrind, pocl = target_named("oclgrind"), target_named("pocl")
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target(oclgrind.name, oclgrind.path, oclgrind.fingerprint_id, oclgrind.fingerprint)
    buckets = []
    for program in (_one("sign", 0x00000000), _one("tanpi", 0x3F800000)):
        corpus.add_program(program, "t")
        with Worker(oclgrind) as worker:
            if not execute(program, oclgrind, worker, corpus, campaign="t").verdict.rows:
                pytest.fail(f"Oclgrind computed {program.body[0].value.op} right: the bug is fixed; update this test")
        (bucket,) = [b for b in corpus.buckets() if b["id"] not in buckets]
        corpus.add_reduction(reduction_row(program, program, bucket["id"], oclgrind))
        buckets.append(bucket["id"])
    files = regressions.export(corpus, [oclgrind, pocl], tmp_path / "regressions", buckets[:1])
    corpus.close()
    out = tmp_path / "piglit"
    done = CliRunner().invoke(cli, ["export", "--format", "piglit", *buckets, str(files[0]),
                                    "--corpus", str(tmp_path / "c.db"), "-o", str(out)])
    assert done.exit_code == 0 and done.stdout.startswith("3 piglit tests"), done.output
    rows = list(csv.DictReader(open(out / "index.csv")))
    assert [r["driver"] for r in rows] == ["oclgrind"] * 3 and {r["platform"] for r in rows} == {"Oclgrind"}
    assert "as_uint(out0[0])" in (out / rows[0]["file"]).read_text()  # sign's -0: by its bits
    assert "arg_out: 2 buffer float[1] -0x0.0p+0" in (out / rows[1]["file"]).read_text()  # tanpi's -0: by value
    for row in rows:
        assert _run(row["command"], out) == "fail", row
        assert _run(_on(pocl, row), out) == "pass", row
