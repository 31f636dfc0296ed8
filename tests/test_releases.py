"""Other Debian releases' drivers as targets (fuzz.drivers.releases, rootfs) and the release range
of a bucket (triage.versions), without any driver: names, selection, the command line that enters
a release root, the installed-release listing, verdicts and the stored map."""

from __future__ import annotations

import json
import os
import sys

import pytest

from corpus.store import Corpus
from fuzz.drivers import Target, select
from fuzz.drivers import releases as rel
from fuzz.drivers.icd import PROJECT_ROOT
from fuzz.drivers.rootfs import env_in, python_argv, usable
from triage import versions

POCL_FP = {"platform_name": "Portable Computing Language", "driver_version": "3.1+debian"}


def _target(name: str, fp: dict, release: str = "", root: str = "", path: str = "opencl-c") -> Target:
    name = name if path == "opencl-c" else f"{name}/{path}"
    return Target(name, fp, name.replace("/", "_"), "/icd", 0, 0, path, root=root, release=release)


@pytest.mark.parametrize("fp, expected", [
    ({"driver_version": "6.0+debian"}, "6.0"),
    ({"driver_version": "25.0.7"}, "25.0"),
    ({"driver_version": "", "platform_version": "OpenCL 3.0 PoCL 7.1+debian Linux"}, "3.0"),
    ({}, "unknown"),
])
def test_version_of(fp, expected):
    assert rel.version_of(fp) == expected


def test_release_names_by_version_and_suite_on_a_clash():
    taken = {"pocl", "rusticl"}
    first = rel.release_name("pocl", {"driver_version": "6.0+debian"}, "trixie", taken)
    assert first == "pocl-6.0"
    taken.add(first)
    assert rel.release_name("pocl", {"driver_version": "6.0+debian"}, "testing", taken) == "pocl-6.0-testing"
    assert rel.release_name("rusticl", {"driver_version": "25.0.7"}, "trixie", taken) == "rusticl-25.0"


def test_spirv_routes_come_from_what_the_release_reports():
    assert rel.spirv_routes({"il_version": "SPIR-V_1.0 SPIR-V_1.2"}) == ["direct SPIR-V (SPIR-V_1.0, SPIR-V_1.2)"]
    assert rel.spirv_routes({"il_version": ""}) == ["none"]


def test_select_keeps_the_system_names_and_takes_releases_only_when_named():
    targets = [_target("pocl", POCL_FP), _target("pocl", POCL_FP, path="spirv"),
               _target("pocl-6.0", {**POCL_FP, "driver_version": "6.0"}, "trixie", "/r/trixie"),
               _target("rusticl-25.0", {"platform_name": "rusticl"}, "trixie", "/r/trixie")]
    names = lambda chosen: [t.name for t in chosen]
    assert names(select(targets, None)) == ["pocl", "pocl/spirv"]
    assert names(select(targets, ["pocl"])) == ["pocl", "pocl/spirv"]
    assert names(select(targets, ["opencl-c"])) == ["pocl"]
    assert names(select(targets, ["pocl-6.0"])) == ["pocl-6.0"]
    assert names(select(targets, ["trixie", "-rusticl-25.0"])) == ["pocl-6.0"]
    assert names(select(targets, ["-spirv"])) == ["pocl"]
    assert {t.lineage for t in targets} == {"pocl", "rusticl"}
    assert targets[2].family == "pocl-6.0"  # not "pocl": the system's family stays its own


def test_command_line_here_and_inside_a_release_root():
    assert python_argv("", "fuzz.drivers.worker") == [sys.executable, "-m", "fuzz.drivers.worker"]
    argv = python_argv("/r/testing", "fuzz.drivers.worker")
    assert argv[:2] == ["unshare", "--mount"] and "/r/testing" in argv
    after = argv[argv.index("--", argv.index("/r/testing")) + 1:]
    assert after == ["env", "-C", PROJECT_ROOT, "python3", "-m", "fuzz.drivers.worker"]
    assert PROJECT_ROOT in argv[argv.index("/r/testing"):argv.index("--", argv.index("/r/testing"))]


def test_environment_inside_a_root_has_the_project_only(tmp_path, monkeypatch):
    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path))
    monkeypatch.setenv("VIRTUAL_ENV", "/work/main/.venv")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = env_in(tmp_path / "icd" / "testing-pocl", "/r/testing")
    assert env["PYTHONPATH"] == PROJECT_ROOT and "VIRTUAL_ENV" not in env
    assert env["OCL_ICD_VENDORS"] == str(tmp_path / "icd" / "testing-pocl")
    assert env_in(tmp_path / "icd" / "pocl", "")["PYTHONPATH"].endswith("/elsewhere")


def _fake_root(base, suite: str, icds: dict[str, str]):
    root = base / suite
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/python3").write_text("")
    (root / "usr/lib/python3/dist-packages/pyopencl").mkdir(parents=True)
    (root / "etc/OpenCL/vendors").mkdir(parents=True)
    for name, library in icds.items():
        (root / f"etc/OpenCL/vendors/{name}.icd").write_text(library + "\n")
    (base / f"{suite}.json").write_text(json.dumps({"suite": suite, "seconds": 30, "bytes": 10**9}))
    return root


def test_installed_releases_and_their_icd_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("CLFUZZ_RELEASES", str(tmp_path / "rel"))
    root = _fake_root(tmp_path / "rel", "testing", {"pocl": "libpocl.so.2", "rusticl": "libRusticlOpenCL.so.1"})
    (tmp_path / "rel" / "unstable").mkdir()  # no manifest: an unfinished build, not listed
    [release] = rel.installed()
    assert release.suite == "testing" and release.root == root and release.manifest["seconds"] == 30
    assert release.problem is None
    assert [lib.short for lib in release.libraries()] == ["testing-pocl", "testing-rusticl"]
    folders = release.folders()
    assert (tmp_path / "state/icd/testing-pocl/testing-pocl.icd").read_text() == "libpocl.so.2\n"
    assert folders[0].endswith("testing-pocl")


def test_a_root_without_pyopencl_or_drivers_is_unavailable_with_its_reason(tmp_path):
    assert "python3" in usable(tmp_path)
    root = _fake_root(tmp_path, "sid", {})
    assert "OpenCL driver" in usable(root)


def test_the_install_command_line():
    argv = rel.mmdebstrap_argv("testing", rel.releases_dir() / "testing.tmp")
    assert argv[0] == "mmdebstrap" and "testing" in argv and argv[-1] == rel.MIRROR
    assert any("Check-Valid-Until" in a for a in argv)
    assert any(a.startswith("--include=") and "python3-pyopencl" in a and "pocl-opencl-icd" in a for a in argv)


ROW = {"buffer": "out0", "lane": 3, "kind": "wrong-result", "actual_value": "1.0"}


@pytest.mark.parametrize("rows, expected", [
    (None, "not-run"),
    ([], "absent"),
    ([dict(ROW)], "present"),
    ([{**ROW, "lane": 4}], "different"),
    ([{"kind": "build_error", "actual_value": "error: no such built-in", "buffer": "", "lane": 0}], "cannot-build"),
    ([{"kind": "crash", "actual_value": "killed by SIGSEGV", "buffer": "", "lane": 0}], "failed"),
])
def test_verdicts(rows, expected):
    assert versions.verdict(ROW, rows)[0] == expected


def test_family_targets_take_every_release_of_the_bucket_driver():
    pocl, pocl_spirv = _target("pocl", POCL_FP), _target("pocl", POCL_FP, path="spirv")
    new = _target("pocl-7.1", {**POCL_FP, "driver_version": "7.1"}, "testing", "/r")
    other = _target("rusticl", {"platform_name": "rusticl"})
    targets = [pocl, pocl_spirv, other, new]
    assert versions.family_targets(pocl, targets) == [pocl, new]
    assert versions.family_targets(pocl_spirv, targets) == [pocl_spirv, new]  # new: recorded not-run


def test_the_stored_map():
    corpus = Corpus(":memory:")
    assert versions.release_range(corpus, "b1") == {}
    corpus.add_release_checks([
        {"id": "b1:pocl-7.1", "bucket": "b1", "target": "pocl-7.1", "lineage": "pocl", "version": "7.1+debian",
         "release": "testing", "verdict": "absent", "detail": "", "checked": 1.0},
        {"id": "b1:pocl", "bucket": "b1", "target": "pocl", "lineage": "pocl", "version": "3.1+debian",
         "release": "system", "verdict": "present", "detail": "", "checked": 1.0}])
    checks = versions.release_range(corpus, "b1")
    assert list(checks) == ["pocl", "pocl-7.1"]
    assert versions.summary(checks) == "pocl 3.1+debian present, pocl-7.1 7.1+debian absent"


def test_the_bug_list_has_the_release_range_as_versions(memory_corpus):
    """`clfuzz buckets --json`'s ``versions``: driver and version of each release checked -> verdict."""
    row = {"program_id": "p", "target": "pocl", "fingerprint_id": "fp", "path": "opencl-c", "buffer": "out0", "lane": 0,
           "work_item": 0, "kind": "wrong-result", "operation": "sinpi", "src_type": "float", "dst_type": "float",
           "rule": "math.sinpi.special", "actual_value": "1"}
    memory_corpus.add_run({"program_id": "p", "target": "pocl", "fingerprint_id": "fp", "path": "opencl-c",
                           "status": "ok", "checks": 1, "judged": 1, "mismatches": 1}, [row])
    bucket = memory_corpus.buckets()[0]
    assert bucket["versions"] == {}  # never checked
    memory_corpus.add_release_checks([
        {"id": f"{bucket['id']}:pocl-7.1", "bucket": bucket["id"], "target": "pocl-7.1", "lineage": "pocl",
         "version": "7.1+debian", "release": "testing", "verdict": "absent", "detail": "", "checked": 1.0}])
    assert memory_corpus.buckets()[0]["versions"] == {"pocl 7.1+debian": "absent"}


def test_both_install_entry_points_build_once_and_drivers_lists_what_cannot_run(tmp_path, monkeypatch):
    """``clfuzz drivers --install-versions`` and ``clfuzz releases install`` run the one install
    (fuzz.drivers.releases.install, which reuses built roots); ``clfuzz drivers`` then lists a
    release that cannot run here as unavailable with its reason."""
    from click.testing import CliRunner

    from app.cli import cli
    from app.json_forms import SCHEMAS
    from fuzz.drivers import discovery

    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("CLFUZZ_RELEASES", str(tmp_path / "rel"))
    _fake_root(tmp_path / "rel", "trixie", {})  # built, but without an OpenCL driver
    calls = []
    monkeypatch.setattr(rel, "install", lambda suites, mirror, refresh, log: calls.append((tuple(suites), refresh)))
    monkeypatch.setattr(discovery, "icd_folders", lambda: [])  # no system driver either
    discovery.discover.cache_clear()
    try:
        listed = CliRunner().invoke(cli, ["drivers", "--install-versions", "--json"])
        table = CliRunner().invoke(cli, ["drivers", "--releases"])
        again = CliRunner().invoke(cli, ["releases", "install", "testing", "--refresh"])
    finally:
        discovery.discover.cache_clear()
    assert listed.exit_code == 0 and table.exit_code == 0 and again.exit_code == 0, listed.output + again.output
    assert calls == [(rel.SUITES, False), (("testing",), True)]
    listed = json.loads(listed.stdout)
    assert (listed["schema"], listed["drivers"]) == (SCHEMAS["drivers"], [])
    assert list(listed["unavailable"]) == ["trixie"] and "no OpenCL driver in the root" in listed["unavailable"]["trixie"]
    assert "unavailable: trixie: " in table.stdout and "no OpenCL driver in the root" in table.stdout


FAKE_MMDEBSTRAP = """#!/bin/sh
# mmdebstrap [options] SUITE TARGET MIRROR: writes part of a root, then fails for the suite "broken"
for a; do suite=$target; target=$mirror; mirror=$a; done
mkdir -p "$target/usr/bin" && : > "$target/usr/bin/python3"
if [ "$suite" = broken ]; then
  echo "I: running apt-get update..." >&2
  echo "W: Failed to fetch http://deb.example/debian/dists/broken/InRelease  Could not resolve 'deb.example'" >&2
  echo "E: apt-get update -oAPT::Status-Fd=<\\$fd> failed" >&2
  exit 1
fi
mkdir -p "$target/etc/OpenCL/vendors" && echo libpocl.so.2 > "$target/etc/OpenCL/vendors/pocl.icd"
"""


def _fake_mmdebstrap(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mmdebstrap").write_text(FAKE_MMDEBSTRAP)
    (bin_dir / "mmdebstrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("CLFUZZ_RELEASES", str(tmp_path / "rel"))
    monkeypatch.setattr(rel.os, "geteuid", lambda: 0)  # mmdebstrap's root mode, faked with it


def test_a_failed_download_names_its_suite_and_why_and_leaves_nothing_installed(tmp_path, monkeypatch):
    """A suite whose mmdebstrap fails (here: a fake one on PATH that writes part of the root, then
    fails as APT does when the mirror cannot be reached) is one line naming the suite and APT's
    reason, exit 2; its half-written root is gone, so it does not count as installed; the other
    suite of the same command is built and listed."""
    from click.testing import CliRunner

    from app.cli import cli

    _fake_mmdebstrap(tmp_path, monkeypatch)
    done = CliRunner().invoke(cli, ["releases", "install", "broken", "trixie"])
    assert done.exit_code == 2, done.output
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: not installed: broken: mmdebstrap failed (exit 1)")
    assert "Could not resolve 'deb.example'" in line and "trixie" not in line
    assert [r.suite for r in rel.installed()] == ["trixie"]
    assert sorted(p.name for p in (tmp_path / "rel").iterdir()) == ["trixie", "trixie.json"]
    assert json.loads((tmp_path / "rel/trixie.json").read_text())["suite"] == "trixie"
    again = CliRunner().invoke(cli, ["releases", "install", "trixie"])
    assert again.exit_code == 0 and "trixie: already installed" in again.stdout


def test_an_interrupted_build_leaves_nothing_that_counts_as_installed(tmp_path, monkeypatch):
    """Ctrl-C during mmdebstrap removes the partial root; a root left without its manifest (a
    build killed between the rename and the manifest) is not installed and is rebuilt."""
    _fake_mmdebstrap(tmp_path, monkeypatch)
    real_run = rel.subprocess.run

    def interrupted(argv, **kw):
        real_run(argv, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(rel.subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rel.install(["testing"], log=lambda _: None)
    assert list((tmp_path / "rel").iterdir()) == [] and rel.installed() == []
    monkeypatch.setattr(rel.subprocess, "run", real_run)
    (tmp_path / "rel/testing/stale").mkdir(parents=True)  # the root of a build killed before its manifest
    assert rel.installed() == []
    [release] = rel.install(["testing"], log=lambda _: None)
    assert release.suite == "testing" and not (release.root / "stale").exists()
    assert (release.root / "etc/OpenCL/vendors/pocl.icd").exists() and release.manifest["suite"] == "testing"


@pytest.mark.parametrize("stderr, reason", [
    ("I: x\nW: Failed to fetch http://m/dists/sid/InRelease  Temporary failure resolving 'm'\nE: apt failed\n",
     "W: Failed to fetch http://m/dists/sid/InRelease Temporary failure resolving 'm'"),
    ("I: x\nE: Unable to locate package pocl-opencl-icd\n", "E: Unable to locate package pocl-opencl-icd"),
    ("I: x\nE: mmdebstrap: cannot write\nE: more\n", "E: mmdebstrap: cannot write"),
    ("just this\n\n", "just this"),
    ("", "no message"),
])
def test_failure_reason_picks_apts_download_error(stderr, reason):
    assert rel.failure_reason(stderr) == reason


def test_the_spirv_route_comes_from_what_the_device_reports():
    """A device whose IL version names SPIR-V takes the module as it is (``il``: job kind ``il``,
    the module's own bytes); one that reports none keeps its lineage's translated or container
    route; a release target's SPIR-V path uses its own route."""
    from campaign.jobs import job_for
    from fuzz.drivers import routes
    from fuzz.drivers.capabilities import runnable
    from fuzz.drivers.discovery import spirv_target
    from fuzz.emit import spirv
    from lang.ir import Buffer, Fill, Load, Op, Program, Store
    from lang.types import Type

    il = {**POCL_FP, "il_version": "SPIR-V_1.0 SPIR-V_1.2"}
    assert routes.route_of("pocl", il).kind == "il" and routes.route_of("pocl", POCL_FP) is routes.ROUTES["pocl"]
    assert routes.route_of("rusticl", {}).kind == "container" and routes.route_of("nvidia", {}) is None
    assert "extended" in routes.route_of("pocl", il).unsupported  # route data: PoCL's kernel library
    assert routes.route_of("rusticl", il).unsupported == routes.NO_FP16
    release = spirv_target(_target("pocl-6.0", il, "trixie", "/r/trixie"))
    assert release.name == "pocl-6.0/spirv" and release.route.kind == "il"
    assert release.fingerprint["route_kind"] == "il" and "straight to the driver" in release.fingerprint["route_chain"]
    t = Type("int")
    program = Program((Buffer("x", t, "in", Fill(1, (0, 1, 2**31 - 1), 2)), Buffer("y", t, "out")),
                      (Store("y", Op("add_sat", (Load("x", t), Load("x", t)), t)),), 64)
    job = job_for(program, None, "spirv", release.lineage, release.fingerprint)
    assert job.kind == "il" and job.program == spirv.emit(program) and job.options == ""
    assert runnable(release, program) is program
    assert job_for(program, None, "spirv", "rusticl", {}).kind == "binary"


def test_a_bucket_whose_reproducer_is_a_variants_is_checked_from_a_row_on_a_target_here(memory_corpus, monkeypatch):
    """A bucket may hold rows of several targets; when its reproducer's row is on a target the
    check cannot use (a variant such as pocl+wg-loops: fuzz.drivers.variants, or another
    machine's), the release check runs a row of the bucket on a target here."""
    from lang.ir import Buffer, Fill, Load, Program, Store
    from lang.types import Type

    t = Type("int")
    programs = [Program((Buffer("in0", t, "in", Fill(seed)), Buffer("out0", t, "out")), (Store("out0", Load("in0", t)),),
                        4, area="conversions") for seed in (1, 2)]
    row = {"fingerprint_id": "fp", "path": "opencl-c", "buffer": "out0", "lane": 0, "work_item": 0,
           "kind": "wrong-result", "operation": "sinpi", "src_type": "float", "dst_type": "float",
           "rule": "math.sinpi.special", "actual_value": "1"}
    for program in programs:
        memory_corpus.add_program(program, "c")
    memory_corpus.add_run({"program_id": programs[0].id, "target": "pocl", "fingerprint_id": "fp",
                           "path": "opencl-c", "status": "ok", "checks": 1, "judged": 1, "mismatches": 1},
                          [{**row, "program_id": programs[0].id, "target": "pocl"}])
    (bucket,) = memory_corpus.buckets()
    # the reproducer (the latest reduction's program) ran on the variant
    monkeypatch.setattr(versions, "reproducer", lambda corpus, b: (programs[1].id, {**row, "target": "pocl+wg-loops"}))
    ran = []
    monkeypatch.setattr(versions, "run_check", lambda program, r, target, timeout_s: ran.append(
        (program.id, r["target"], target.name)) or ("present", ""))
    pocl, new = _target("pocl", POCL_FP), _target("pocl-7.1", {**POCL_FP, "driver_version": "7.1"}, "testing", "/r")
    versions.check_bucket(memory_corpus, bucket["id"], [pocl, new])
    assert ran == [(programs[0].id, "pocl", "pocl"), (programs[0].id, "pocl", "pocl-7.1")]
    with pytest.raises(ValueError, match="not installed here"):
        versions.check_bucket(memory_corpus, bucket["id"], [_target("rusticl", {"platform_name": "rusticl"})])


def test_a_variant_the_driver_does_not_honour_is_refused_with_its_reason(monkeypatch):
    """fuzz.drivers.variants: a PoCL work-group method the driver does not know is not offered, and
    naming it says why in one line (a release discovered afterwards keeps that reason)."""
    from fuzz.drivers import discovery

    monkeypatch.setattr(discovery, "variants", lambda timeout_s=30: [])
    monkeypatch.setattr(discovery, "installed", lambda: [])
    monkeypatch.setitem(discovery.UNAVAILABLE, "pocl+wg-cbs", "POCL_WORK_GROUP_METHOD=cbs: the driver does not know "
                                                             "this value (it uses 'auto')")
    with pytest.raises(discovery.UnknownDriver, match="cannot run here: POCL_WORK_GROUP_METHOD=cbs"):
        select([_target("pocl", POCL_FP)], ["pocl+wg-cbs"])
    assert [t.name for t in select([_target("pocl", POCL_FP)], ["pocl"])] == ["pocl"]


def test_versions_takes_a_bug_id_of_the_bug_list_as_its_lead_bucket(tmp_path):
    """``clfuzz versions bug-...`` (the id the bug list shows) reads and runs the bug's lead bucket,
    the one its report is about; an unknown bug is one line."""
    from click.testing import CliRunner

    from app.cli import cli
    from triage.bugs import listed

    corpus = Corpus(tmp_path / "c.db")
    row = {"program_id": "p", "target": "pocl", "fingerprint_id": "fp", "path": "opencl-c", "buffer": "out0", "lane": 0,
           "work_item": 0, "kind": "wrong-result", "operation": "sinpi", "src_type": "float", "dst_type": "float",
           "rule": "math.sinpi.special", "actual_value": "1"}
    corpus.add_run({"program_id": "p", "target": "pocl", "fingerprint_id": "fp", "path": "opencl-c", "status": "ok",
                    "checks": 1, "judged": 1, "mismatches": 1}, [row])
    (bug,) = listed(corpus)[0]
    bucket = bug.lead["id"]
    corpus.add_release_checks([
        {"id": f"{bucket}:pocl-7.1", "bucket": bucket, "target": "pocl-7.1", "lineage": "pocl", "version": "7.1+debian",
         "release": "testing", "verdict": "absent", "detail": "", "checked": 1.0}])
    run = CliRunner().invoke(cli, ["versions", bug.id, "--stored", "--json", "--corpus", str(tmp_path / "c.db")])
    assert run.exit_code == 0, run.output
    shown = json.loads(run.output)
    assert shown["bucket"] == bucket and shown["releases"]["pocl-7.1"]["verdict"] == "absent"
    missing = CliRunner().invoke(cli, ["versions", "bug-0000", "--stored", "--corpus", str(tmp_path / "c.db")])
    assert missing.exit_code == 2 and "no bug 'bug-0000'" in missing.output
