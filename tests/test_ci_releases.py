"""``clfuzz ci --drivers pocl-6.0`` with simulated drivers (tests/simulated.py): a known bug of the
system's driver that the release no longer shows is reported as FIXED with the release where it
went away and fails nothing; one it still shows passes as an expected failure; a bug of its own is
a regression. The regression files key known bugs by the system's target (``pocl``); the known
buckets of a ``--corpus`` are checked from their reproducer (triage.versions.run_check)."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import app.ci
import fuzz.drivers
import fuzz.drivers.capabilities
import triage.regressions
import triage.versions
from app.ci_releases import counterpart
from app.cli import cli
from corpus.store import Corpus
from fuzz.drivers import Target
from tests.simulated import simulated
from triage.regressions import FOLDER

POCL = {"platform_name": "Portable Computing Language", "driver_version": "3.1+debian"}
SYSTEM = Target("pocl", POCL, "fp-pocl", "/icd", 0, 0)
RELEASE = Target("pocl-6.0", {**POCL, "driver_version": "6.0+debian", "release": "trixie"}, "fp-pocl-6.0", "/icd6",
                 0, 0, root="/r/trixie", release="trixie")
KNOWN = "53ed018103b390ec"  # a conversion PoCL 3.1 gets wrong (known_wrong: pocl, pocl/spirv)


def _agrees(program, s, e, inputs) -> np.ndarray:
    return e.allowed[0]


def _wrong(program, s, e, inputs) -> np.ndarray:
    return np.where(e.judged, e.allowed[0] ^ 1, e.allowed[0])


def _ci(monkeypatch, tmp_path: Path, driver, files: dict[str, dict], *args: str):
    """``clfuzz ci --drivers pocl-6.0 --minutes 0`` over ``files`` (name -> regression file), the
    release simulated by ``driver``; the system's PoCL 3.1 is discovered beside it."""
    folder = tmp_path / "regressions"
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / f"{name}.json").write_text(json.dumps(data))
    observe = simulated(driver)
    monkeypatch.setattr(app.ci, "local_targets", lambda names: [RELEASE])
    monkeypatch.setattr(fuzz.drivers, "discover", lambda *a, **k: [SYSTEM])
    monkeypatch.setattr(fuzz.drivers.capabilities, "supports", lambda target, program: True)
    monkeypatch.setattr(triage.regressions, "run_on", lambda program, target, workers, timeout_s=60:
                        observe(program, target, None))
    monkeypatch.setattr(triage.versions, "Worker", lambda target, timeout_s: nullcontext())
    monkeypatch.setattr(triage.versions, "observe", observe)
    result = CliRunner().invoke(cli, ["ci", "--drivers", "pocl-6.0", "--minutes", "0", "--regressions", str(folder),
                                      *args])
    assert "Traceback" not in result.output, result.output
    return result


def _file(name: str = KNOWN) -> dict:
    return json.loads((FOLDER / f"{name}.json").read_text())


def test_a_known_bug_the_release_no_longer_shows_is_fixed_there_and_fails_nothing(monkeypatch, tmp_path):
    result = _ci(monkeypatch, tmp_path, _agrees, {KNOWN: _file()})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"  FIXED in pocl 6.0 (present in pocl 3.1): pocl-6.0  {KNOWN} {_file()['title']}" in lines
    assert "(1 known bugs fixed in a release)" in result.output and lines[-1] == "OK"


def test_a_known_bug_the_release_still_shows_passes_as_before(monkeypatch, tmp_path):
    junit = tmp_path / "j.xml"
    result = _ci(monkeypatch, tmp_path, _wrong, {KNOWN: _file()}, "--junit", str(junit))
    assert result.exit_code == 0, result.output
    assert "1 ExpectedFail" in result.output and "FIXED in" not in result.output
    assert "known bug bucket c1b22f3d6e1c" in junit.read_text()


def test_a_bug_the_system_driver_does_not_have_is_a_regression_of_the_release(monkeypatch, tmp_path):
    data = _file()
    del data["known_wrong"]["pocl"]
    result = _ci(monkeypatch, tmp_path, _wrong, {KNOWN: data})
    assert result.exit_code == 1, result.output
    assert f"  {'Fail':14} pocl-6.0  {KNOWN}" in result.output and result.output.splitlines()[-1] == "FAILED"


def test_a_known_bucket_of_the_corpus_is_checked_on_the_release(monkeypatch, tmp_path):
    """A ``reported`` bucket of the corpus given with --corpus, not tracked by a regression file: its
    reproducer runs on the release; absent there, it is FIXED in pocl 6.0."""
    program = triage.regressions.load(FOLDER / f"{KNOWN}.json")["program"]
    corpus = Corpus(str(tmp_path / "c.db"), create=True)
    pid = corpus.add_program(program, "older")
    corpus.add_target("pocl", "opencl-c", "fp-pocl", POCL)
    rows = simulated(_wrong)(program, SYSTEM, None)
    for r in rows:
        r.update(program_id=pid, target="pocl", fingerprint_id="fp-pocl", path="opencl-c")
    corpus.add_run({"program_id": pid, "target": "pocl", "fingerprint_id": "fp-pocl", "path": "opencl-c",
                    "status": "ok", "campaign": "older", "checks": 1, "judged": 1, "mismatches": len(rows)}, rows)
    [bucket] = corpus.buckets()
    corpus.mark(bucket["id"], "reported")
    corpus.close()
    other = "6a28d9fe3907839b"  # a regression file of another bucket, so that the folder is not empty
    result = _ci(monkeypatch, tmp_path, _agrees, {other: _file(other)}, "--corpus", str(tmp_path / "c.db"))
    assert result.exit_code == 0, result.output
    assert f"  FIXED in pocl 6.0 (present in pocl 3.1): pocl-6.0  {bucket['id']} {bucket['title']}" \
        in result.output.splitlines()


@pytest.mark.parametrize("own", [False, True])
def test_a_release_reads_its_own_expectation_files_else_its_counterparts(monkeypatch, tmp_path, own):
    """``--expectations DIR``: with only ``pocl-fails.txt``, a known failure pocl-6.0 no longer shows
    is FIXED there; with a ``pocl-6.0-fails.txt`` of its own that expects it, it is an unexpected
    pass naming that file's line."""
    folder = tmp_path / "expectations"
    folder.mkdir()
    (folder / f"{'pocl-6.0' if own else 'pocl'}-fails.txt").write_text(f"# a known bug\n{KNOWN},Fail\n")
    result = _ci(monkeypatch, tmp_path, _agrees, {KNOWN: _file()}, "--expectations", str(folder))
    if own:
        assert result.exit_code == 1, result.output
        assert f"  {'UnexpectedPass':14} pocl-6.0  {KNOWN}" in result.output
        assert f"remove the line {folder / 'pocl-6.0-fails.txt'}:2" in result.output
    else:
        assert result.exit_code == 0, result.output
        assert f"  FIXED in pocl 6.0 (present in pocl 3.1): pocl-6.0  {KNOWN} {_file()['title']}" in result.output


@pytest.mark.parametrize("path, key", [("opencl-c", "pocl"), ("spirv", "pocl/spirv")])
def test_the_counterpart_of_a_release_is_the_system_target_of_its_lineage_and_path(path, key):
    from dataclasses import replace

    release = replace(RELEASE, name=RELEASE.name if path == "opencl-c" else f"{RELEASE.name}/{path}", path=path)
    beside = counterpart(release, [SYSTEM])
    assert beside.key == key and beside.release == "pocl 6.0"
    assert beside.system == ("pocl 3.1" if path == "opencl-c" else "the system's pocl")
    assert counterpart(SYSTEM, [SYSTEM]) is None


def test_the_shipped_file_is_what_the_tests_read():
    assert "pocl" in _file()["known_wrong"]
