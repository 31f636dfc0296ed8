"""``clfuzz ci`` without drivers (app.ci, app.ci_smoke): each regression case's status in
deqp-runner's words against its expectations, the known-bucket rule of the smoke campaign, the exit
status, and the JUnit XML as Jenkins and GitLab read it."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.ci import classify, load_regressions, oracle_case
from app.ci_cases import (CRASH, EXPECTED_FAIL, FAIL, MISSING, PASS, REGRESSIONS, SKIP, SMOKE, UNEXPECTED_PASS, WARN,
                          Case, CiError, CiResult)
from app.ci_expectations import Entry, Expectations, from_regressions
from app.ci_report import summary, write_junit
from app.ci_smoke import Rules, hit_buckets, is_known, known_buckets, smoke_cases
from app.cli import cli
from corpus.store import Corpus
from triage.buglist import bucket_severity
from triage.regressions import FOLDER

FILE = sorted(FOLDER.glob("*.json"))[0]
KNOWN = {"bucket": "abc123abc123", "what": "wrong-result: convert_int(in0[gid]) = 7, expected 0"}


def _case(known: dict | None = None) -> dict:
    return {"title": "pocl: convert_int float -> int (nan): wrong-result",
            "known_wrong": {"pocl": known} if known else {}}


def _expect(known: dict | None = None) -> Expectations:
    """What ``_case(known)`` expects of pocl, as ``clfuzz ci`` reads it without --expectations."""
    return from_regressions([(Path("r/f.json"), _case(known))], "pocl", None)


def _row(kind: str = "wrong-result", actual: str = "7") -> dict:
    return {"kind": kind, "expression": "convert_int(in0[gid])", "actual_value": actual, "expected_value": "0",
            "rule_text": "NaN converts to 0", "section": "§6.4.3.3"}


# ---- one regression file on one target --------------------------------------------------------

def test_a_driver_that_agrees_passes():
    c = classify(Path("r/f.json"), _case(), "pocl", [], _expect())
    assert (c.status, c.result, c.suite, c.driver, c.id) == (PASS, PASS, REGRESSIONS, "pocl", "f")
    assert c.name == "f " + _case()["title"] and not c.failing


def test_a_known_wrong_driver_still_wrong_is_an_expected_failure():
    c = classify(Path("r/f.json"), _case(KNOWN), "pocl", [_row()], _expect(KNOWN))
    assert (c.status, c.result) == (EXPECTED_FAIL, FAIL) and not c.failing
    assert "known bug bucket abc123abc123" in c.out and "known_wrong['pocl'] in r/f.json" in c.out
    moved = classify(Path("r/f.json"), _case(KNOWN), "pocl", [_row(actual="9")], _expect(KNOWN))
    assert moved.status == EXPECTED_FAIL and "now: wrong-result: convert_int(in0[gid]) = 9" in moved.out


def test_a_driver_that_agreed_and_now_disagrees_is_a_regression_once_every_rerun_agrees():
    reruns = []
    c = classify(Path("r/f.json"), _case(KNOWN), "rusticl", [_row(), _row()], Expectations(),
                 lambda: reruns.append(1) or FAIL, 2)
    assert c.status == FAIL and c.failing and len(reruns) == 2
    assert "regression: Fail where Pass was expected (the same on 2 re-runs)" in c.message and "§6.4.3.3" in c.details


def test_a_known_wrong_driver_that_agrees_is_an_unexpected_pass_that_fails_the_run():
    c = classify(Path("r/f.json"), _case(KNOWN), "pocl", [], _expect(KNOWN), lambda: PASS, 2)
    assert c.status == UNEXPECTED_PASS and c.failing
    assert "abc123abc123" in c.message and "remove 'pocl' from known_wrong in r/f.json" in c.message


def test_an_expected_fail_that_crashes_now_is_an_unexpected_crash():
    """deqp-runner's rule: the expectation names one result; another failing one is unexpected."""
    c = classify(Path("r/f.json"), _case(KNOWN), "pocl", [_row("crash", "Segmentation fault")], _expect(KNOWN),
                 lambda: CRASH, 1)
    assert c.status == CRASH and c.failing and "Crash where Fail was expected" in c.message


def test_a_case_that_cannot_be_judged_is_missing_and_not_rerun():
    def never():
        raise AssertionError("a missing result is not re-run")

    assert classify(Path("r/f.json"), _case(), "pocl", None, _expect(), never, 2).status == MISSING
    c = classify(Path("r/f.json"), _case(KNOWN), "pocl", [_row("worker_error", "could not start")], _expect(KNOWN),
                 never, 2)
    assert c.status == MISSING and c.failing and "could not start" in c.message


def test_a_crash_of_a_driver_that_agreed_is_a_crash():
    c = classify(Path("r/f.json"), _case(), "pocl", [_row("crash", "Segmentation fault")], _expect(), lambda: CRASH, 2)
    assert (c.status, c.result) == (CRASH, CRASH) and "crash: Segmentation fault" in c.message


def test_the_oracle_case_holds_and_catches_a_changed_verdict(tmp_path):
    path, case = load_regressions(FOLDER)[0]
    assert oracle_case(path, case).status == PASS
    data = json.loads(path.read_text())
    data["verdict"][0]["allowed"] = [12345]
    (tmp_path / path.name).write_text(json.dumps(data))
    [(tampered, tcase)] = load_regressions(tmp_path)
    c = oracle_case(tampered, tcase)
    assert c.status == FAIL and c.driver == "oracle" and c.id == path.stem and "verdict changed" in c.message
    assert "12345" in c.details


# ---- the regression folder ---------------------------------------------------------------------

def test_the_shipped_regression_folder_loads():
    files = load_regressions(FOLDER)
    assert len(files) >= 5 and all(p.suffix == ".json" for p, _ in files)


@pytest.mark.parametrize("damage,needle", [
    (None, "no regression folder"),
    ("empty", "no regression files"),
    ("{not json", "malformed regression file"),
    ('{"buffers": 3}', "malformed regression file"),
    ("no-title", "no 'title'"),
    ("bad-known", "known_wrong['pocl'] needs"),
])
def test_a_missing_or_malformed_regression_folder_is_an_infrastructure_error(tmp_path, damage, needle):
    folder = tmp_path / "regressions"
    if damage is not None:
        folder.mkdir()
    if damage in ("no-title", "bad-known"):
        data = json.loads(FILE.read_text())
        if damage == "no-title":
            del data["title"]
        else:
            data["known_wrong"]["pocl"] = "wrong"
        (folder / FILE.name).write_text(json.dumps(data))
    elif damage not in (None, "empty"):
        (folder / "x.json").write_text(damage)
    with pytest.raises(CiError, match=needle.replace("[", r"\[").replace("(", r"\(")):
        load_regressions(folder)


@pytest.mark.parametrize("damage", ["missing", "malformed"])
def test_the_command_exits_2_with_one_line_when_the_folder_cannot_be_used(tmp_path, damage):
    folder = tmp_path / "regressions"
    if damage == "malformed":
        folder.mkdir()
        (folder / "x.json").write_text("{")
    junit = tmp_path / "j.xml"
    result = CliRunner().invoke(cli, ["ci", "--regressions", str(folder), "--junit", str(junit), "--minutes", "0"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ") and str(folder) in result.stderr
    assert not junit.exists()


# ---- the smoke campaign's buckets --------------------------------------------------------------

def _disagreement(program_id: str, target: str, lane: int, operation: str) -> dict:
    return {"program_id": program_id, "target": target, "fingerprint_id": f"fp-{target}", "path": "opencl-c",
            "kind": "wrong-result", "buffer": "out0", "work_item": lane, "lane": lane, "operation": operation,
            "src_type": "float", "dst_type": "int", "expression": "e", "inputs": "{}", "expected": "0",
            "allowed": "[0]", "actual": "7", "expected_value": "0", "actual_value": "7", "rule": "r",
            "rule_text": "r", "section": "s", "input_class": "nan"}


def _run(corpus: Corpus, program_id: str, target: str, campaign: str, rows: list[dict]) -> None:
    corpus.add_run({"program_id": program_id, "target": target, "fingerprint_id": f"fp-{target}",
                    "path": "opencl-c", "status": "ok", "campaign": campaign, "checks": 1, "judged": 1,
                    "mismatches": len(rows), "build_s": 0.0, "run_s": 0.0, "log": ""}, rows)


def _by(cases: list[Case]) -> dict[tuple[str, str], Case]:
    return {(c.driver, c.id): c for c in cases}


def test_only_expected_ignored_reported_or_regression_tracked_buckets_are_known(memory_corpus):
    corpus = memory_corpus
    program = load_regressions(FOLDER)[0][1]["program"]
    pid = corpus.add_program(program, "older")
    for t in ("pocl", "rusticl"):
        corpus.add_target(t, "opencl-c", f"fp-{t}", {"device_name": t})
    ops = ("convert_int", "convert_int_sat", "convert_int_rte", "convert_int_rtz", "convert_int_rtp")
    _run(corpus, pid, "pocl", "older", [_disagreement(pid, "pocl", i, op) for i, op in enumerate(ops)])
    ids = {b["signature"]["operation"].replace("_T", "_int"): b["id"] for b in corpus.buckets()}
    corpus.mark(ids["convert_int"], "ignored")
    corpus.mark(ids["convert_int_sat"], "reported")
    corpus.mark(ids["convert_int_rte"], "fixed")
    since = 0.0  # the smoke campaign sees all of them again, and one more on rusticl
    _run(corpus, pid, "pocl", "ci-0", [_disagreement(pid, "pocl", i, op) for i, op in enumerate(ops)])
    _run(corpus, pid, "rusticl", "ci-0", [_disagreement(pid, "rusticl", 9, "convert_int")])
    hits = hit_buckets(corpus, "ci-0", since)
    assert [t for t, _ in hits].count("pocl") == 5 and [t for t, _ in hits].count("rusticl") == 1
    status = {b["id"]: b["status"] for _, b in hits}
    assert status[ids["convert_int_rte"]] == "new"  # a fixed bucket seen again is news
    tracked = {ids["convert_int_rtz"]}  # as if a regression file was exported from it
    known = {b["id"] for _, b in hits if is_known(b, tracked)}
    assert known == {ids["convert_int"], ids["convert_int_sat"], ids["convert_int_rtz"]}
    expect = {"pocl": Expectations({ids["convert_int_rtp"]: Entry(FAIL, "ci/pocl-fails.txt:2")})}
    cases = smoke_cases(["pocl", "rusticl", "oclgrind"], hits, "c.db", Rules(expect, tracked, folder="ci"),
                        rerun=lambda target, bucket: FAIL)
    by = _by(cases)
    assert {by["pocl", ids[op]].status for op in ("convert_int", "convert_int_sat", "convert_int_rtz",
                                                  "convert_int_rtp")} == {EXPECTED_FAIL}
    assert "ci/pocl-fails.txt:2" in by["pocl", ids["convert_int_rtp"]].out
    new = by["pocl", ids["convert_int_rte"]]
    assert new.status == FAIL and new.failing and new.result == FAIL
    assert f"clfuzz report {ids['convert_int_rte']} --corpus c.db -o reports/" in new.details
    assert f"add the line {ids['convert_int_rte']},Fail to ci/pocl-fails.txt" in new.details
    assert f"clfuzz mark {ids['convert_int_rte']} reported --corpus c.db" in new.details
    rusticl = [c for c in cases if c.driver == "rusticl" and c.id != "ci-0"]
    assert [c.status for c in rusticl] == [FAIL]  # same operation, other driver: another bucket, not ignored
    # one campaign case per target, passing: the campaign ran
    assert [(c.driver, c.status) for c in cases if c.id == "ci-0"] == [("pocl", PASS), ("rusticl", PASS),
                                                                      ("oclgrind", PASS)]
    # runs before ``since`` are another campaign run's business
    assert hit_buckets(corpus, "ci-0", since=2**40) == []


def test_known_buckets_are_the_regression_files_buckets():
    files = load_regressions(FOLDER)
    known = known_buckets(files)
    for _, case in files:
        assert set(case["found_in"]) <= known
        assert {w["bucket"] for w in case["known_wrong"].values()} <= known


# ---- exit status and JUnit XML -----------------------------------------------------------------

def _result(*statuses: str) -> CiResult:
    cases = [Case(REGRESSIONS, "oracle", "f0", "title", time_s=0.5)]
    for i, s in enumerate(statuses):
        suite = SMOKE if s == "smoke-Fail" else REGRESSIONS
        status = FAIL if s == "smoke-Fail" else s
        cases.append(Case(suite, f"t{i}", f"f{i}", "a <title> & \x1b[31m", status, message=f"why {i}\x00",
                          details=f"details {i}", out="known bug bucket b" if s == EXPECTED_FAIL else "",
                          time_s=1.25))
    cases.append(Case(SMOKE, "pocl", "ci-0", "smoke campaign on pocl", out="3 programs", time_s=10.0))
    return CiResult(cases=cases, suite_s={REGRESSIONS: 3.0, SMOKE: 12.0}, targets=["pocl"], campaigns=["ci-0"])


@pytest.mark.parametrize("statuses,code", [
    ((), 0),
    ((PASS, SKIP, SKIP, EXPECTED_FAIL, "Flake", "KnownFlake", WARN), 0),
    ((PASS, FAIL), 1),
    ((UNEXPECTED_PASS,), 1),
    ((CRASH,), 1),
    (("Timeout",), 1),
    ((SKIP, MISSING), 1),
    (("smoke-Fail",), 1),
])
def test_exit_code(statuses, code):
    assert _result(*statuses).exit_code == code
    assert summary(_result(*statuses))[-1] == ("FAILED" if code else "OK")


def _parse(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    return root


def test_junit_counts_and_structure_as_ci_servers_read_them(tmp_path):
    result = _result(EXPECTED_FAIL, FAIL, UNEXPECTED_PASS, SKIP, MISSING, "smoke-Fail")
    root = _parse(write_junit(result, tmp_path / "sub" / "junit.xml"))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["regressions", "smoke-campaign"]
    for s in suites:
        cases = s.findall("testcase")
        assert int(s.get("tests")) == len(cases)
        assert int(s.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(s.get("errors")) == sum(c.find("error") is not None for c in cases)
        assert int(s.get("skipped")) == sum(c.find("skipped") is not None for c in cases)
        assert float(s.get("time")) >= 0 and s.get("timestamp") and s.get("hostname")
        for c in cases:
            assert c.get("classname") and c.get("name") and float(c.get("time")) >= 0
            assert len([e for e in c if e.tag in ("failure", "error", "skipped")]) <= 1
    for key in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(key)) == sum(int(s.get(key)) for s in suites)
    assert float(root.get("time")) == pytest.approx(15.0)
    reg, smoke = suites
    assert (reg.get("tests"), reg.get("failures"), reg.get("errors"), reg.get("skipped")) == ("6", "2", "1", "1")
    assert (smoke.get("tests"), smoke.get("failures")) == ("2", "1")
    failures = {c.get("name"): c.find("failure") for c in reg.findall("testcase") if c.find("failure") is not None}
    assert {f.get("type") for f in failures.values()} == {FAIL, UNEXPECTED_PASS}
    assert all(f.get("message").startswith("why ") and f.text.startswith("details") for f in failures.values())
    assert smoke.find("testcase/failure").get("type") == FAIL
    assert reg.find("testcase/error").get("type") == MISSING
    known = [c for c in reg.findall("testcase") if c.find("system-out") is not None]
    assert len(known) == 1 and known[0].find("system-out").text == "known bug bucket b"
    assert reg.find("testcase/skipped").get("message") == "why 3?"  # no control characters in XML
    assert reg.findall("testcase")[1].get("name") == "f0 a <title> & ?[31m"
    status = {c.get("name").split()[0]: {p.get("name"): p.get("value") for p in c.iter("property")}
              for c in reg.findall("testcase")}
    assert status["f0"]["status"] == EXPECTED_FAIL and status["f4"]["status"] == MISSING


def test_junit_of_a_run_without_smoke_campaign_has_an_empty_suite(tmp_path):
    result = CiResult(cases=[Case(REGRESSIONS, "oracle", "f0", "t")], suite_s={REGRESSIONS: 1.0})
    root = _parse(write_junit(result, tmp_path / "j.xml"))
    smoke = root.find("testsuite[@name='smoke-campaign']")
    assert smoke is not None and smoke.get("tests") == "0" and root.get("tests") == "1"
    assert "smoke-campaign: not run (--minutes 0)" in summary(result)


def test_a_copy_of_the_regression_folder_is_what_ci_reads(tmp_path):
    shutil.copy(FILE, tmp_path / FILE.name)
    assert [p.name for p, _ in load_regressions(tmp_path)] == [FILE.name]


@pytest.mark.parametrize("floor,fails", [("recommendation", {"violation", "recommendation"}),
                                         ("violation", {"violation"}),
                                         ("letter", {"violation", "recommendation", "tolerance"})])
def test_new_buckets_fail_from_the_severity_floor_up(memory_corpus, floor, fails):
    """The severity of a bucket is its rule's (oracles.rules): convert.sat.nan is a 'should' of
    OpenCL C (recommendation), image.nearest.tolerance a bound clfuzz reads loosely (tolerance),
    convert.sat.clamp a 'shall' (violation)."""
    corpus = memory_corpus
    program = load_regressions(FOLDER)[0][1]["program"]
    pid = corpus.add_program(program, "ci-0")
    corpus.add_target("pocl", "opencl-c", "fp-pocl", {"device_name": "pocl"})
    rules = {"convert.sat.clamp": "violation", "convert.sat.nan": "recommendation",
             "image.nearest.tolerance": "tolerance"}
    rows = [{**_disagreement(pid, "pocl", i, f"op{i}"), "rule": r} for i, r in enumerate(rules)]
    _run(corpus, pid, "pocl", "ci-0", rows)
    hits = hit_buckets(corpus, "ci-0", 0.0)
    assert {bucket_severity(b) for _, b in hits} == set(rules.values())
    cases = smoke_cases(["pocl"], hits, "c.db", Rules(floor=floor), rerun=lambda target, bucket: FAIL)[1:]
    assert {bucket_severity(b) for (_, b), c in zip(hits, cases) if c.status == FAIL} == fails
    below = [c for c in cases if c.status == WARN]
    assert len(below) == len(set(rules.values()) - fails)
    assert all(f"below --severity {floor}" in c.out for c in below)


def test_a_timeout_fails_severity_violation_only_once_it_is_a_hang(memory_corpus):
    """`clfuzz ci --severity violation`: a run cut at the ceiling is slow (performance) and listed;
    once its re-run at ten times the ceiling did not finish either (triage.slow) it is a hang, a
    violation, and fails the run."""
    from fuzz.drivers.protocol import no_result
    from fuzz.judge import failure_row
    from lang.derive import restrict

    corpus = memory_corpus
    program = load_regressions(FOLDER)[0][1]["program"]
    program = restrict(program, [0])
    pid = corpus.add_program(program, "ci-0")
    corpus.add_target("pocl", "opencl-c", "fp-pocl", {"device_name": "pocl"})
    row = {**failure_row(program, "timeout", no_result(60)), "program_id": pid, "target": "pocl",
           "fingerprint_id": "fp-pocl", "path": "opencl-c"}
    _run(corpus, pid, "pocl", "ci-0", [row])
    hits = hit_buckets(corpus, "ci-0", 0.0)
    assert [bucket_severity(b) for _, b in hits] == ["performance"]
    rules = Rules(floor="violation")
    case = smoke_cases(["pocl"], hits, "c.db", rules, rerun=lambda target, bucket: "Timeout")[1]
    assert case.status == WARN and "below --severity violation (performance)" in case.out
    corpus.decide_hang(pid, "pocl", {"hang": True, "limit_s": 600.0})
    hits = hit_buckets(corpus, "ci-0", 0.0)
    assert [bucket_severity(b) for _, b in hits] == ["violation"]
    case = smoke_cases(["pocl"], hits, "c.db", rules, rerun=lambda target, bucket: "Timeout")[1]
    assert (case.status, case.result) == ("Timeout", "Timeout") and case.failing
