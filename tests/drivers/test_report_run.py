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


def test_a_report_of_a_bug_the_driver_does_not_have_exits_0(tmp_path):
    """The same commands on a report whose row is made up (int addition stored as if Oclgrind had
    computed 5 + 5 as 11): the real Oclgrind computes it right, repro.py says fixed and exits 0."""
    from campaign.expectations import Expectations
    from fuzz.judge import judge

    target = target_named("oclgrind")
    i = Type("int", 1)
    program = Program((Buffer("in0", i, "in", Fill(0, values=(5,))), Buffer("out0", i, "out")),
                      (Store("out0", Op("arith", (Load("in0", i), Load("in0", i)), i, (("operator", "+"),))),), 1)
    exp = Expectations(program)
    rows = judge(program, exp.get(frozenset()), {"out0": exp.get(frozenset())["out0"].allowed[0] + 1}, exp.inputs).rows
    assert [r["actual_value"] for r in rows] == ["11"]
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_program(program, "t")
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    for r in rows:
        r.update(program_id=program.id, target=target.name, fingerprint_id=target.fingerprint_id, path=target.path)
    corpus.add_run({"program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
                    "path": target.path, "status": "ok", "campaign": "t", "checks": 1, "judged": 1, "mismatches": 1,
                    "build_s": 0.0, "run_s": 0.0, "log": ""}, rows)
    (bucket,) = corpus.buckets()
    folder = write_report(corpus, bucket["id"], tmp_path / "report", [target])
    run = subprocess.run(["bash", "-ec", _readme_commands((folder / "README.md").read_text())], cwd=folder,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and "fixed on: opencl-c" in run.stdout, run.stdout + run.stderr


def test_a_runtime_error_the_driver_only_printed_is_present_in_repro_py(tmp_path):
    """Oclgrind's fatal error (a built-in's out-parameter under -cl-std=CL2.0: addrspacecast) leaves
    every OpenCL call successful: repro.py of such a runtime_error reads the driver's words and
    exits 1 (it had said the failure was gone)."""
    from fuzz.drivers import BufferArg, Job
    from triage.repro_script import job_data, repro_source

    from .test_worker import MODF_CL2

    target = target_named("oclgrind")
    job = Job("source", MODF_CL2, "-cl-std=CL2.0", "k", (BufferArg("in", b"\0\0\xc0\x3f", 4, False),
                                                        BufferArg("out", None, 8, True)), (1,), None)
    front = {"path": "opencl-c", "label": "OpenCL C", "platform": target.fingerprint["platform_name"],
             "device": target.fingerprint["device_name"], "job": job_data(job), "checks": []}
    (tmp_path / "repro.py").write_text(repro_source({"title": "oclgrind: runtime_error", "bucket": "b",
                                                     "kind": "runtime_error", "timeout_s": 120, "fronts": [front]}))
    icd = tmp_path / "oclgrind-icd"  # as the README of an Oclgrind report says
    icd.mkdir()
    (icd / "oclgrind.icd").write_text("/usr/lib/oclgrind/liboclgrind-rt-icd.so\n")
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OCL_ICD_VENDORS": str(icd)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the driver stopped executing the kernel" in done.stdout and "addrspacecast" in done.stderr


def test_repro_py_compares_the_lanes_of_every_bucket_kind_of_wrong_lanes(tmp_path):
    """A bucket whose wrong lanes show only with several statements (an *interaction*, triage.reduce)
    is a bucket of wrong lanes like the others: its repro.py compares them. (It once only built and
    ran such a kernel and said "fixed" on NVIDIA 580, which computed the lanes wrong.) The real
    Oclgrind bug of the first test, its report's case read as each kind of corpus.buckets.LANE_KINDS:
    repro.py exits 1 and shows the wrong lane every time."""
    import base64
    import json
    import zlib

    from corpus.buckets import LANE_KINDS
    from triage.repro_script import repro_source

    target = target_named("oclgrind")
    corpus = Corpus(tmp_path / "c.db")
    program = _tanpi_of_one()
    corpus.add_program(program, "t")
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    with Worker(target) as worker:
        if not execute(program, target, worker, corpus, campaign="t").verdict.rows:
            pytest.fail("oclgrind computed tanpi(1.0f) right: the bug is fixed; update this test")
    (bucket,) = corpus.buckets()
    folder = write_report(corpus, bucket["id"], tmp_path / "report", [target])
    blob = re.search(r'b64decode\("""(.*?)"""', (folder / "repro.py").read_text(), re.S).group(1)
    case = json.loads(zlib.decompress(base64.b64decode(blob)))
    icd = tmp_path / "oclgrind-icd"
    icd.mkdir()
    (icd / "oclgrind.icd").write_text("/usr/lib/oclgrind/liboclgrind-rt-icd.so\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OCL_ICD_VENDORS": str(icd)}
    for kind in LANE_KINDS:
        (folder / "repro.py").write_text(repro_source({**case, "kind": kind}))
        done = subprocess.run([sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300,
                              env=env)
        assert done.returncode == 1, (kind, done.stdout + done.stderr)
        assert "WRONG out0 lane 0: actual -0x1.1a6264" in done.stdout, (kind, done.stdout)
