"""``clfuzz ci`` with deqp-runner's expectation files, flake re-runs, shards and their merge
(app.ci_expectations, app.ci_cases, app.ci_report), on a stand-in driver: ``run_on`` is a test
double that gives, per regression file, the results a test scripts (so a flake is deterministic).
Hand-worked expectation files, their bad lines (one line naming file and line, exit 2), the
statuses, results.csv, the update of the files from a run, and shards that judge every case once
and merge to the union."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import app.ci
import fuzz.drivers
import fuzz.drivers.capabilities
import triage.regressions
from app.ci_cases import (CRASH, EXPECTED_FAIL, FAIL, FLAKE, KNOWN_FLAKE, PASS, REGRESSIONS, SKIP, SMOKE,
                          UNEXPECTED_PASS, Case, CiError, CiResult, shard, shard_seed)
from app.ci_expectations import Entry, for_target, read_folder, rewrite_fails, settle
from app.ci_releases import Counterpart
from app.ci_report import merge, read_junit, write_junit
from app.cli import cli
from fuzz.drivers import Target
from triage.regressions import FOLDER

IDS = sorted(p.stem for p in FOLDER.glob("*.json"))
A, B, C = IDS[0], IDS[1], IDS[2]
POCL = Target("pocl", {"platform_name": "Portable Computing Language", "driver_version": "3.1+debian"}, "fp-pocl",
              "/icd", 0, 0)
WRONG = {"kind": "wrong-result", "expression": "e", "actual_value": "7", "expected_value": "0"}
CRASHED = {"kind": "crash", "actual_value": "Segmentation fault"}


@pytest.fixture
def driver(monkeypatch):
    """The stand-in PoCL: ``script[ID]`` is the list of results its runs of regression file ID give
    in turn (the last one repeats; a file not scripted passes); ``calls`` counts them."""
    script: dict[str, list[list[dict]]] = {}
    calls: Counter = Counter()

    def run_on(program, target, workers, timeout_s=60):
        stem = next(i for i, p in PROGRAMS.items() if p == program.id)
        results = script.get(stem, [[]])
        calls[stem] += 1
        return results[min(calls[stem], len(results)) - 1]

    monkeypatch.setattr(app.ci, "local_targets", lambda names: [POCL])
    monkeypatch.setattr(fuzz.drivers, "discover", lambda *a, **k: [POCL])
    monkeypatch.setattr(fuzz.drivers.capabilities, "supports", lambda target, program: True)
    monkeypatch.setattr(triage.regressions, "run_on", run_on)
    monkeypatch.setattr(triage.regressions, "current_verdict", lambda case: case["verdict"])  # the oracle holds
    return script, calls


PROGRAMS = {stem: triage.regressions.load(FOLDER / f"{stem}.json")["program"].id for stem in IDS}


def _ci(*args: str):
    result = CliRunner().invoke(cli, ["ci", "--minutes", "0", "--regressions", str(FOLDER), *args])
    assert "Traceback" not in result.output, result.output
    return result


def _rows(path: Path) -> list[tuple[str, str, str]]:
    with path.open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "driver", "status", "seconds"] and all(float(r[3]) >= 0 for r in rows[1:])
    return [tuple(r[:3]) for r in rows[1:]]


# ---- reading the files -------------------------------------------------------------------------

def test_hand_written_files_are_read_per_driver_and_a_release_borrows_its_counterparts(tmp_path):
    (tmp_path / "pocl-fails.txt").write_text(f"# known to pocl\n\n{A},Fail\n  {B} , Crash  \n0123456789ab,Timeout\n")
    (tmp_path / "pocl-flakes.txt").write_text(f"# flaky\n^{C}$\n")
    (tmp_path / "pocl-spirv-skips.txt").write_text("^dead\n")
    (tmp_path / "rusticl-fails.txt").write_text("")
    parsed = read_folder(tmp_path, set(IDS))
    pocl = for_target(parsed, "pocl", None)
    assert {i: e.status for i, e in pocl.fails.items()} == {A: FAIL, B: CRASH, "0123456789ab": "Timeout"}
    assert pocl.fails[B].where == f"{tmp_path / 'pocl-fails.txt'}:4" and pocl.beside is None
    assert pocl.flaky(C) == f"{tmp_path / 'pocl-flakes.txt'}:2" and pocl.flaky(A) is None and not pocl.skips
    spirv = for_target(parsed, "pocl/spirv", None)
    assert spirv.skipped("deadbeef0000") and not spirv.skipped(A) and not spirv.fails
    beside = Counterpart("pocl", "pocl 6.0", "pocl 3.1")
    release = for_target(parsed, "pocl-6.0", beside)
    assert release.fails == pocl.fails and release.beside == beside and release.flaky(C)
    (tmp_path / "pocl-6.0-fails.txt").write_text(f"{A},Fail\n")
    own = for_target(read_folder(tmp_path, set(IDS)), "pocl-6.0", beside)
    assert list(own.fails) == [A] and own.beside is None and own.flaky(C)  # its flakes are still pocl's


@pytest.mark.parametrize("name,text,needle", [
    ("pocl-fails.txt", f"# ok\n{A},Fail\n{A}\n", "pocl-fails.txt:3: malformed line"),
    ("pocl-fails.txt", f"{A},Pass\n", "pocl-fails.txt:1: malformed line"),
    ("pocl-fails.txt", "abc,Fail\n", "pocl-fails.txt:1: unknown id 'abc'"),
    ("pocl-fails.txt", "0123456789abcdef,Crash\n", "pocl-fails.txt:1: unknown id '0123456789abcdef'"),
    ("rusticl-spirv-fails.txt", f"{A},Fail\n\n{A},Crash\n", "rusticl-spirv-fails.txt:3: " + A + " is listed twice"),
    ("pocl-flakes.txt", "# x\n(unclosed\n", "pocl-flakes.txt:2: not a regular expression"),
    ("pocl-skips.txt", "[a-\n", "pocl-skips.txt:1: not a regular expression"),
])
def test_a_bad_expectation_line_stops_the_run_in_one_line_naming_file_and_line(tmp_path, name, text, needle):
    """Checked before any driver is looked for: no stand-in needed."""
    (tmp_path / name).write_text(text)
    with pytest.raises(CiError, match=needle.replace("(", r"\(")):
        read_folder(tmp_path, set(IDS), str(FOLDER))
    result = _ci("--expectations", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ") and needle in result.stderr


@pytest.mark.parametrize("args,needle", [
    (["--fraction", "2", "--fraction-start", "3"], "--fraction-start 3 is out of range for --fraction 2"),
    (["--fraction", "3", "--fraction-start", "0"], "--fraction-start 0 is out of range for --fraction 3"),
    (["--fraction", "0"], "--fraction 0 is out of range"),
    (["--update-expectations"], "--update-expectations rewrites the files of --expectations DIR"),
    (["--expectations", "/nonexistent/exp"], "no expectations folder /nonexistent/exp"),
])
def test_bad_options_exit_2_in_one_line(args, needle):
    result = _ci(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and needle in result.stderr


# ---- statuses and flakes -----------------------------------------------------------------------

@pytest.mark.parametrize("result,expected,flaky,reruns,status,ran", [
    (PASS, None, None, [], PASS, 0),
    (FAIL, FAIL, None, [], EXPECTED_FAIL, 0),
    (FAIL, None, None, [FAIL, FAIL], FAIL, 2),
    (FAIL, None, None, [PASS, FAIL], FLAKE, 1),  # the first re-run differs: no second one
    (FAIL, None, None, [FAIL, CRASH], FLAKE, 2),
    (PASS, FAIL, None, [PASS, PASS], UNEXPECTED_PASS, 2),
    (PASS, FAIL, None, [FAIL], FLAKE, 1),
    (CRASH, FAIL, None, [CRASH, CRASH], CRASH, 2),
    (FAIL, None, "f.txt:1", [], KNOWN_FLAKE, 0),
    (FAIL, None, None, None, FAIL, 0),  # --flake-reruns 0
])
def test_settle(result, expected, flaky, reruns, status, ran):
    given = list(reruns or [])
    got, why = settle(result, Entry(expected, "f:1") if expected else None, flaky, lambda: given.pop(0),
                      len(reruns) if reruns is not None else 0)
    assert got == status and len(reruns or []) - len(given) == ran
    if status == FLAKE:
        assert why.startswith(", then ".join([result] + (reruns or [])[:ran]))


def test_a_regression_whose_result_alternates_is_a_flake_not_a_regression(driver, tmp_path):
    script, calls = driver
    script[A] = [[WRONG], [], [WRONG]]  # Fail, then Pass on the re-run
    script[B] = [[CRASHED]]  # a crash every time
    result = _ci("--output", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    rows = {(i, d): s for i, d, s in _rows(tmp_path / "out" / "results.csv")}
    assert rows[A, "pocl"] == FLAKE and rows[B, "pocl"] == CRASH and rows[C, "pocl"] == PASS
    assert rows[A, "oracle"] == PASS and len(rows) == 2 * len(IDS)
    assert calls[A] == 2 and calls[B] == 3 and calls[C] == 1  # a flake stops re-running; a pass is not re-run
    assert f"{FLAKE:14} pocl  {A}" in result.output and "Fail, then Pass: the result changed on re-run 1" \
        in result.output
    script[A] = [[WRONG], []]
    calls.clear()
    result = _ci("--flake-reruns", "0")
    assert result.exit_code == 1 and f"{FAIL:14} pocl  {A}" in result.output and calls[A] == 1


# ---- --update-expectations ---------------------------------------------------------------------

def test_rewrite_fails_keeps_other_lines_and_rewrites_the_judged_ones():
    text = (f"# header\n# {A} title\n{A},Fail\n# hand note\n{B},Fail\n"
            "0123456789ab,Crash\n")
    judged = {A: Case(REGRESSIONS, "pocl", A, f"{A} title", PASS, PASS),  # passes now: its line and title go
              B: Case(REGRESSIONS, "pocl", B, "b", CRASH, CRASH),  # crashes now: its line says so
              C: Case(REGRESSIONS, "pocl", C, "c title", FAIL, FAIL),  # new: at the end, under its title
              "ffffffffffff": Case(SMOKE, "pocl", "ffffffffffff", "flaky", FLAKE, FAIL)}  # a flake: no fails line
    assert rewrite_fails(text, judged) == (f"# header\n# hand note\n{B},Crash\n0123456789ab,Crash\n"
                                           f"# c title\n{C},Fail\n")


def test_update_writes_the_files_of_a_run_and_the_next_run_passes(driver, tmp_path):
    script, _ = driver
    exp = tmp_path / "exp"
    script[A], script[B], script[C] = [[WRONG]], [[CRASHED]], [[WRONG], []]
    first = _ci("--expectations", str(exp), "--update-expectations")
    assert first.exit_code == 1, first.output  # judged against nothing: A and B fail, C is a flake
    fails = (exp / "pocl-fails.txt").read_text().splitlines()
    assert fails[0].startswith("# clfuzz ci expectations of pocl")
    assert [x for x in fails if not x.startswith("#")] == [f"{A},Fail", f"{B},Crash"]
    assert (exp / "pocl-flakes.txt").read_text().splitlines()[1] == f"^{C}$"
    assert f"wrote {exp / 'pocl-fails.txt'}: 2 added, 0 removed, 0 changed (2 lines)" in first.output
    assert not (exp / "oracle-fails.txt").exists()
    script[C] = [[WRONG]]  # now failing every time: a known flake, not re-run
    again = _ci("--expectations", str(exp), "--output", str(tmp_path / "out"))
    assert again.exit_code == 0, again.output
    rows = {(i, d): s for i, d, s in _rows(tmp_path / "out" / "results.csv")}
    assert (rows[A, "pocl"], rows[B, "pocl"], rows[C, "pocl"]) == (EXPECTED_FAIL, EXPECTED_FAIL, KNOWN_FLAKE)
    script[A] = [[]]  # fixed: an unexpected pass until the line goes
    fixed = _ci("--expectations", str(exp), "--update-expectations")
    assert fixed.exit_code == 1 and f"{UNEXPECTED_PASS:14} pocl  {A}" in fixed.output
    assert f"remove the line {exp / 'pocl-fails.txt'}:3" in fixed.output
    assert [x for x in (exp / "pocl-fails.txt").read_text().splitlines() if not x.startswith("#")] == [f"{B},Crash"]
    assert _ci("--expectations", str(exp)).exit_code == 0


# ---- shards and their merge --------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 5, 30])
def test_shards_take_every_item_once(n):
    items = list(range(23))
    shards = [shard(items, n, k) for k in range(1, n + 1)]
    assert sorted(x for s in shards for x in s) == items
    assert shards[0] == items[::n] and shard_seed(7, 1) == 7 and shard_seed(7, n) == 6 + n


def test_shards_judge_every_case_once_and_merge_to_the_union(driver, tmp_path):
    script, _ = driver
    script[A], script[B] = [[WRONG]], [[CRASHED]]
    whole = _ci("--output", str(tmp_path / "whole"))
    assert whole.exit_code == 1
    expected = sorted(_rows(tmp_path / "whole" / "results.csv"))
    assert len(expected) == 2 * len(IDS)
    shards = [str(tmp_path / f"shard{k}") for k in (1, 2, 3)]
    for k, folder in enumerate(shards, 1):
        assert _ci("--fraction", "3", "--fraction-start", str(k), "--output", folder).exit_code in (0, 1)
    parts = [_rows(Path(f) / "results.csv") for f in shards]
    assert sorted(r for p in parts for r in p) == expected  # every case once
    assert all(p for p in parts) and [len(p) for p in parts] == [2 * len(IDS[k::3]) for k in range(3)]
    merged = CliRunner().invoke(cli, ["ci-merge", *shards, "-o", str(tmp_path / "merged")])
    assert merged.exit_code == 1, merged.output
    assert sorted(_rows(tmp_path / "merged" / "results.csv")) == expected
    assert read_junit(tmp_path / "merged" / "junit.xml").counts() == read_junit(tmp_path / "whole" / "junit.xml").counts()
    assert f"{FAIL:14} pocl  {A}" in merged.output and merged.output.splitlines()[-3] == "FAILED"
    bad = CliRunner().invoke(cli, ["ci-merge", str(tmp_path), "-o", str(tmp_path / "m2")])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "junit.xml" in bad.stderr


def test_the_junit_report_reads_back_as_the_run_it_was_written_from(tmp_path):
    run = CiResult(cases=[Case(REGRESSIONS, "oracle", A, "t", PASS, time_s=0.25),
                          Case(REGRESSIONS, "pocl", A, "t", EXPECTED_FAIL, FAIL, out="as expected", time_s=1.5),
                          Case(REGRESSIONS, "pocl", B, "u v", FAIL, FAIL, "why", "details", time_s=2.0),
                          Case(REGRESSIONS, "pocl-6.0", B, "u v", PASS, PASS, gone="FIXED in pocl 6.0"),
                          Case(REGRESSIONS, "pocl", C, "w", SKIP, message="skipped"),
                          Case(SMOKE, "pocl", "ci-3", "smoke campaign on pocl", out="9 programs"),
                          Case(SMOKE, "pocl", "0123456789ab", "x", FLAKE, FAIL, out="Fail, then Pass", url="https://b/1")],
                   suite_s={REGRESSIONS: 4.0, SMOKE: 60.0}, campaigns=["ci-3"], programs=9)
    back = read_junit(write_junit(run, tmp_path / "j.xml"))
    assert back.cases == run.cases
    assert (back.campaigns, back.programs, back.suite_s, back.targets) == (["ci-3"], 9, run.suite_s,
                                                                         ["pocl", "pocl-6.0"])


def test_a_bucket_two_shards_hit_is_one_case_the_failing_status_first():
    one = CiResult(cases=[Case(SMOKE, "pocl", "0123456789ab", "x", FLAKE, FAIL, time_s=1.0)], campaigns=["ci-0"],
                   programs=5)
    two = CiResult(cases=[Case(SMOKE, "pocl", "0123456789ab", "x", FAIL, FAIL, "m", time_s=2.0),
                          Case(SMOKE, "pocl", "ffffffffffff", "y", EXPECTED_FAIL, FAIL)], campaigns=["ci-1"], programs=7)
    merged = merge([one, two])
    assert [(c.id, c.status, c.time_s) for c in merged.cases] == [("0123456789ab", FAIL, 3.0),
                                                                  ("ffffffffffff", EXPECTED_FAIL, 0.0)]
    assert (merged.campaigns, merged.programs, merged.exit_code) == (["ci-0", "ci-1"], 12, 1)
