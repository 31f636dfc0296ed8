"""A report of a real bucket seen on both front ends, run as its README says: Oclgrind 21.10
computes tanpi(1.0f) as -0x1.1a6264p-53 where OpenCL C 3.0.19 §7.5.1 prescribes -0, on its OpenCL
C path and on its SPIR-V path (found by the math campaign). The report ships kernel.cl and the
SPIR-V module, and its repro.py, run with the commands of the README (Oclgrind has no ICD file:
the README's commands make one), exits 1 and names both front ends, each alone with --path."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from campaign.execute import execute
from corpus.store import Corpus
from fuzz.drivers import Worker
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from triage.report import write_report

from .conftest import skip_without_icd, target_named

skip_without_icd()

ONE = 0x3F800000


def _tanpi_of_one() -> Program:
    f = Type("float", 1)
    return Program((Buffer("in0", f, "in", Fill(0, values=(ONE,))), Buffer("out0", f, "out")),
                   (Store("out0", Op("tanpi", (Load("in0", f),), f)),), 1, area="math")


def _readme_commands(readme: str) -> str:
    """The shell block of the README's Reproduce section without its pip line (pyopencl and numpy
    are this interpreter's), ``python3`` being this interpreter."""
    block = readme.split("## Reproduce")[1].split("```sh\n")[1].split("```")[0]
    lines = [line for line in block.splitlines() if not line.startswith("pip ")]
    return "\n".join(line.replace("python3 ", f"{sys.executable} ") for line in lines)


def test_the_report_of_a_bug_on_both_front_ends_reproduces_on_each(tmp_path):
    targets = [target_named("oclgrind"), target_named("oclgrind/spirv")]
    corpus = Corpus(tmp_path / "c.db")
    program = _tanpi_of_one()
    corpus.add_program(program, "t")
    for t in targets:
        corpus.add_target(t.name, t.path, t.fingerprint_id, t.fingerprint)
        with Worker(t) as worker:
            if not execute(program, t, worker, corpus, campaign="t").verdict.rows:
                pytest.fail(f"{t.name} computed tanpi(1.0f) right: the bug is fixed; update this test")
    (bucket,) = corpus.buckets()
    assert bucket["paths"] == ["opencl-c", "spirv"]
    folder = write_report(corpus, bucket["id"], tmp_path / "report", targets)
    assert {"kernel.cl", "kernel.spv", "kernel.spvasm", "kernel.bc"} <= {p.name for p in folder.iterdir()}
    readme = (folder / "README.md").read_text()
    script = _readme_commands(readme)
    assert "OCL_ICD_VENDORS" in script  # the README's own way to show Oclgrind's device
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no ICD folder of clfuzz's
    run = subprocess.run(["bash", "-ec", script], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert re.search(r"bug present on: (opencl-c, spirv|spirv, opencl-c)", run.stdout), run.stdout
    assert run.stdout.count("WRONG out0 lane 0: actual -0x1.1a6264") == 2
    for path in ("opencl-c", "spirv"):
        one = script.splitlines()[-2].replace("repro.py", f"repro.py --path {path}")
        alone = subprocess.run(["bash", "-ec", "\n".join([*script.splitlines()[:-2], one])], cwd=folder, env=env,
                               capture_output=True, text=True, timeout=300)
        assert alone.returncode == 1 and f"bug present on: {path}\n" in alone.stdout, alone.stdout + alone.stderr
    missing = subprocess.run([sys.executable, "repro.py"], cwd=folder, env=env, capture_output=True, text=True,
                             timeout=300)  # without the README's environment: Oclgrind's device is not there
    assert missing.returncode == 2 and "could not check" in missing.stdout, missing.stdout
