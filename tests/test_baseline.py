"""Baselines under version control (triage.baseline): mark every new bucket in one command, write
the known ones as a reviewable file, and let `clfuzz ci --baseline FILE` pass on them."""

from __future__ import annotations

from click.testing import CliRunner

from app.ci_smoke import Rules, hit_buckets, smoke_cases
from app.cli import cli
from corpus.buckets import SIGNATURE_VERSION
from corpus.store import Corpus
from triage.regressions import FOLDER, load

ROW = {"target": "pocl", "fingerprint_id": "fp-pocl", "path": "opencl-c", "kind": "wrong-result", "buffer": "out0",
       "work_item": 0, "src_type": "float", "dst_type": "int", "expression": "e", "inputs": "{}", "expected": "0",
       "allowed": "[0]", "actual": "7", "expected_value": "0", "actual_value": "7", "rule": "convert.sat.clamp",
       "rule_text": "r", "section": "s", "input_class": "huge"}


def _corpus(path, operations, campaign="c") -> Corpus:
    corpus = Corpus(path)
    pid = corpus.add_program(load(sorted(FOLDER.glob("*.json"))[0])["program"], campaign)
    corpus.add_target("pocl", "opencl-c", "fp-pocl", {"device_name": "cpu"})
    rows = [{**ROW, "program_id": pid, "lane": i, "operation": op} for i, op in enumerate(operations)]
    corpus.add_run({"program_id": pid, "target": "pocl", "fingerprint_id": "fp-pocl", "path": "opencl-c",
                    "status": "ok", "campaign": campaign, "checks": 1, "judged": 1, "mismatches": len(rows),
                    "build_s": 0.0, "run_s": 0.0, "log": ""}, rows)
    return corpus


def test_mark_all_new_then_write_and_read_a_baseline(tmp_path):
    db, out = tmp_path / "c.db", tmp_path / "baseline.txt"
    corpus = _corpus(db, ["convert_int_sat", "convert_int", "add_sat"])
    corpus.mark(corpus.buckets()[0]["id"], "reported", "pocl#1")
    corpus.close()
    runner = CliRunner()
    result = runner.invoke(cli, ["mark", "--all-new", "ignored", "--note", "baseline", "--corpus", str(db)])
    assert result.exit_code == 0 and "2 new buckets marked ignored" in result.output
    result = runner.invoke(cli, ["baseline", "--corpus", str(db), "-o", str(out)])
    assert result.exit_code == 0 and "3 buckets" in result.output
    lines = out.read_text().splitlines()
    assert lines[0].startswith(f"# clfuzz baseline, bucket signature {SIGNATURE_VERSION}")
    assert sorted(line.split()[1] for line in lines[1:]) == ["ignored", "ignored", "reported"]
    assert any(line.endswith("# pocl#1") for line in lines)
    assert runner.invoke(cli, ["mark", "ignored", "--corpus", str(db)]).exit_code == 2  # BUCKET STATUS needed
    reported = next(line.split()[0] for line in lines[1:] if line.split()[1] == "reported")
    one = runner.invoke(cli, ["baseline", reported[:6], "--corpus", str(db), "-o", str(tmp_path / "one.txt")])
    assert one.exit_code == 0 and [line.split()[0] for line in (tmp_path / "one.txt").read_text().splitlines()[1:]] \
        == [reported]
    unknown = runner.invoke(cli, ["baseline", "bug-ffff", "--corpus", str(db), "-o", str(tmp_path / "x.txt")])
    assert unknown.exit_code == 2 and "no bug 'bug-ffff'" in unknown.output


def test_ci_passes_on_buckets_of_the_baseline_and_fails_on_others(tmp_path):
    from triage.baseline import read_baseline, write_baseline

    team = _corpus(tmp_path / "team.db", ["convert_int_sat"])
    team.mark(team.buckets()[0]["id"], "ignored")
    write_baseline(team, tmp_path / "b.txt")
    known = read_baseline(tmp_path / "b.txt")
    fresh = _corpus(tmp_path / "ci.db", ["convert_int_sat", "add_sat"], campaign="ci-0")  # a fresh corpus
    hits = hit_buckets(fresh, "ci-0", 0.0)
    cases = {c.title.split(": ")[1].split()[0]: c
             for c in smoke_cases(["pocl"], hits, "ci.db", Rules(known=known), rerun=lambda t, b: "Fail")[1:]}
    assert cases["add_sat"].status == "Fail" and cases["add_sat"].failing
    assert cases["convert_T_sat"].status == "ExpectedFail"
    assert "in the regression files or the baseline" in cases["convert_T_sat"].out


def test_a_baseline_of_another_signature_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "old.txt"
    bad.write_text("# clfuzz baseline, bucket signature 1: ...\nabc  ignored  t\n")
    result = CliRunner().invoke(cli, ["ci", "--minutes", "0", "--baseline", str(bad)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "rewrite it with `clfuzz baseline" in result.stderr
