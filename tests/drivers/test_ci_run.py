"""``clfuzz ci`` on a real driver (PoCL, both paths), through the command line: the JUnit report
agrees with the exit status, and a tampered regression file is caught as a regression (a known
bug removed from the file: Fail) and as a fixed bug (a known bug added for a driver that agrees:
UnexpectedPass)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from fuzz.drivers.capabilities import supports
from triage.regressions import FOLDER, load

from .conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers


def _ci(*args: str):
    result = CliRunner().invoke(cli, ["ci", "--drivers", "pocl", *args])
    assert "Traceback" not in result.output, result.output
    return result


def _suites(path: Path) -> dict[str, ET.Element]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return {s.get("name"): s for s in root.findall("testsuite")}


@pytest.mark.soak  # 18 s; `clfuzz ci` through the command line, JUnit and exit code: tests/drivers/test_ci_jobs.py
def test_ci_run_on_pocl_writes_a_report_that_agrees_with_the_exit_code(tmp_path):
    target_named("pocl")
    junit = tmp_path / "junit.xml"
    result = _ci("--minutes", "0.2", "--junit", str(junit), "--corpus", str(tmp_path / "ci.db"),
                 "--flake-reruns", "0")  # re-runs: tests/drivers/test_ci_jobs.py
    assert result.exit_code in (0, 1), result.output
    suites = _suites(junit)
    root = ET.parse(junit).getroot()
    files = sorted(FOLDER.glob("*.json"))
    regressions = suites["regressions"].findall("testcase")
    assert len(regressions) == 3 * len(files)  # the oracle, pocl and pocl/spirv per file
    assert {c.get("classname") for c in regressions} == {"oracle", "pocl", "pocl/spirv"}
    smoke = suites["smoke-campaign"].findall("testcase")
    assert {c.get("classname") for c in smoke} == {"pocl", "pocl/spirv"}
    failing = int(root.get("failures")) + int(root.get("errors"))
    assert result.exit_code == (1 if failing else 0), result.output
    # the shipped files are up to date: every regression case passes or is skipped
    assert suites["regressions"].get("failures") == "0" and suites["regressions"].get("errors") == "0", result.output
    known = [c for c in regressions if (c.findtext("system-out") or "").startswith("known bug bucket")]
    assert known, "the regression files list PoCL bugs: their cases pass as expected failures"
    for case in smoke:
        failure = case.find("failure")
        if failure is not None:
            assert "clfuzz report " in failure.text and f"--corpus {tmp_path / 'ci.db'}" in failure.text
    assert result.output.rstrip().endswith(f"junit: {junit}")


def test_ci_catches_a_regression_and_a_fixed_bug_in_tampered_files(tmp_path):
    pocl = target_named("pocl")
    cases = {p: load(p) for p in sorted(FOLDER.glob("*.json"))}
    wrong = next(p for p, c in cases.items() if "pocl" in c["known_wrong"])
    right = next(p for p, c in cases.items() if not {"pocl", "pocl/spirv"} & c["known_wrong"].keys()
                 and supports(pocl, c["program"]))
    folder = tmp_path / "regressions"
    folder.mkdir()
    data = json.loads(wrong.read_text())
    del data["known_wrong"]["pocl"]  # pocl's bug forgotten: it must show as a regression
    (folder / wrong.name).write_text(json.dumps(data))
    data = json.loads(right.read_text())
    data["known_wrong"]["pocl"] = {"bucket": "0123456789ab", "what": "made up"}  # pocl "known wrong": fixed
    (folder / right.name).write_text(json.dumps(data))

    junit = tmp_path / "junit.xml"
    result = _ci("--minutes", "0", "--regressions", str(folder), "--junit", str(junit))
    assert result.exit_code == 1, result.output
    by = {(c.get("classname"), c.get("name").split()[0]): c for c in _suites(junit)["regressions"].iter("testcase")}
    regression = by[("pocl", wrong.stem)].find("failure")
    assert regression is not None and regression.get("type") == "Fail", result.output
    fixed = by[("pocl", right.stem)].find("failure")
    assert fixed is not None and fixed.get("type") == "UnexpectedPass" and "0123456789ab" in fixed.get("message")
    still = by[("pocl/spirv", wrong.stem)]  # untouched entry: still an expected failure
    assert still.find("failure") is None and "known bug bucket" in still.findtext("system-out")
    assert by[("oracle", wrong.stem)].find("failure") is None
    assert f"{'Fail':14} pocl  {wrong.stem}" in result.output
    assert f"{'UnexpectedPass':14} pocl  {right.stem}" in result.output
