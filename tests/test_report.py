"""Vendor reports (triage.report, triage.report_readme, triage.repro_script) on a simulated driver.

The driver stands for one whose saturating conversion of NaN to int gives INT_MAX on both front
ends: OpenCL C 3.0.19 §6.4.3.3 says NaN *should* become 0 (a recommendation, rule
``convert.sat.nan``), the SPIR-V decoration SaturatedConversion defines it (a requirement on the
SPIR-V path, ``convert.sat.nan.spirv``); the bug list keys both as one bucket of severity
recommendation. Its targets ``simgrind`` and ``simgrind/spirv`` report Oclgrind's platform (so the
SPIR-V route is Oclgrind's) and are on no machine, so nothing here reaches a real driver.
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import re
import shutil
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field

import numpy as np
import pytest
from click.testing import CliRunner

from app.ci_smoke import Rules, smoke_cases
from app.ci_cases import SMOKE, Case, CiResult
from app.ci_report import junit
from app.cli import cli
from campaign.expectations import Expectations
from corpus.bucket_queries import bucket_ids
from corpus.reads import bucket_rows, rows_on_target
from corpus.store import Corpus, CorpusError
from fuzz.drivers.capabilities import ftz_for
from fuzz.judge import judge
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from triage import report as report_module
from triage import session
from triage.buglist import bucket_severity, bug_list
from triage.reduce import engine as reducer
from triage.report import ReportError, case_of, output_folder, readme, report_bucket, write_report

F, I = Type("float", 1), Type("int", 1)
NAN, INT_MAX = 0x7FC00000, 0x7FFFFFFF
FLOATS = (NAN, 0x3FC00000, 0xC0200000)  # NaN, 1.5, -2.5


@dataclass(frozen=True)
class SimTarget:
    name: str
    path: str
    fingerprint: dict = field(hash=False)
    fingerprint_id: str = ""
    route = None

    @property
    def lineage(self) -> str:
        return "oclgrind"


def _target(path: str) -> SimTarget:
    name = "simgrind" if path == "opencl-c" else "simgrind/spirv"
    fp = {"platform_name": "Oclgrind", "device_name": "Sim Device", "driver_version": "1.0", "path": path}
    return SimTarget(name, path, fp, f"fp-{path}")


OPENCL_C, SPIRV = _target("opencl-c"), _target("spirv")


def _program() -> Program:
    """``out0 = convert_int_sat(in0)`` beside an unrelated ``out1 = in1 + in1``, over three work-items."""
    buffers = (Buffer("in0", F, "in", Fill(0, values=FLOATS)), Buffer("in1", I, "in", Fill(1, values=(5, 7))),
               Buffer("out0", I, "out"), Buffer("out1", I, "out"))
    body = (Store("out0", Op("convert", (Load("in0", F),), I, (("rounding", "rtz"), ("sat", True)))),
            Store("out1", Op("arith", (Load("in1", I), Load("in1", I)), I, (("operator", "+"),))))
    return Program(buffers, body, 3)


def _driver(wrong_on: tuple[str, ...] = ("opencl-c", "spirv")):
    """A stand-in for triage.observe.observe: the oracle's first allowed bits everywhere, but
    INT_MAX where a saturating conversion's operand is NaN on the front ends ``wrong_on``; judged
    under the target's float environment (its path's rules)."""

    def observe(program: Program, target, worker, lanes: set | None = None, job=None) -> list[dict] | None:
        exp = Expectations(program)
        judged = exp.get(ftz_for(target.fingerprint))
        actual = {}
        for s in program.body:
            bits = judged[s.buffer].allowed[0].copy()
            if target.path in wrong_on and s.value.op == "convert":
                operands = np.asarray(exp.inputs["in0"]).view(np.uint32)[:len(bits)]
                bits[(operands & 0x7FFFFFFF) > 0x7F800000] = INT_MAX
            actual[s.buffer] = bits
        rows = judge(program, judged, actual, exp.inputs).rows
        for r in rows:
            r["target"] = target.name
        return rows

    return observe


def _store_run(corpus: Corpus, program: Program, target: SimTarget, observe) -> None:
    corpus.add_program(program, "c")
    rows = observe(program, target, None)
    for r in rows:
        r.update(program_id=program.id, fingerprint_id=target.fingerprint_id, path=target.path)
    corpus.add_run({"program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
                    "path": target.path, "status": "ok", "campaign": "c", "checks": 1, "judged": 1,
                    "mismatches": len(rows), "build_s": 0.0, "run_s": 0.0, "log": ""}, rows)


def _corpus(tmp_path, observe) -> tuple[Corpus, dict]:
    """The program run on both front ends (OpenCL C first: the bucket's target) and stored; its one bucket."""
    corpus = Corpus(tmp_path / "c.db")
    for t in (OPENCL_C, SPIRV):
        corpus.add_target(t.name, t.path, t.fingerprint_id, t.fingerprint)
        _store_run(corpus, _program(), t, observe)
    (bucket,) = corpus.buckets()
    return corpus, bucket


class NoWorker:
    """In place of fuzz.drivers.Worker: the simulated driver needs no process."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def close(self) -> None:
        pass

    def restart(self) -> None:  # a fresh worker: the simulated driver keeps nothing between runs
        pass


@pytest.fixture
def simulated(monkeypatch):
    """Every run of a report or a reduction goes to the simulated driver (wrong on both paths)."""
    observe = _driver()
    for module in (report_module, reducer):
        monkeypatch.setattr(module, "observe", observe)
    monkeypatch.setattr(report_module, "Worker", NoWorker)
    return observe


def _repro_case(folder) -> dict:
    """The case repro.py embeds."""
    text = (folder / "repro.py").read_text()
    blob = text.split('b64decode("""', 1)[1].split('""")', 1)[0]
    return json.loads(zlib.decompress(base64.b64decode("".join(blob.split()))))


def _reduced_on_spirv(tmp_path, simulated) -> tuple[Corpus, dict]:
    """The bucket reduced in triage on its SPIR-V target, while its own target is the OpenCL C one."""
    corpus, bucket = _corpus(tmp_path, simulated)
    row = next(r for r in bucket_rows(corpus, bucket["id"]) if r["target"] == SPIRV.name)
    reduction = session.reduce_stored(corpus, row, SPIRV, NoWorker())
    assert reduction.reduced.body == _program().body[:1] and reduction.reduced.global_size == 1
    return corpus, corpus.bucket(bucket["id"])


def test_the_case_is_the_reduced_program_on_the_target_the_reduction_ran_on(tmp_path, simulated):
    """(a) The bucket's target is simgrind (OpenCL C); the reduction ran on simgrind/spirv, where
    alone its reduced program has rows: the report reads those, and says how and where it was reduced."""
    corpus, bucket = _reduced_on_spirv(tmp_path, simulated)
    (reduction,) = corpus.reductions(bucket["id"])
    assert bucket["target"] == OPENCL_C.name and rows_on_target(corpus, reduction["reduced_id"], OPENCL_C.name) == []
    case = case_of(corpus, bucket["id"])
    assert (case["target"], case["path"], case["program"].id) == (SPIRV.name, "spirv", reduction["reduced_id"])
    assert [(r["buffer"], r["lane"], r["rule"]) for r in case["rows"]] == [("out0", 0, "convert.sat.nan.spirv")]
    assert [(f["path"], f["shown"]) for f in case["fronts"]] == [("spirv", "stored"), ("opencl-c", None)]
    text = readme(case)
    assert ("to 1 statement(s) over 1 work-item(s) on `simgrind/spirv` (SPIR-V front end) in triage"
            in text.split("## How the program was reduced")[1])


def test_a_report_ships_every_failing_front_end_and_repro_checks_each(tmp_path, simulated):
    """(b) The reduced program is run on the OpenCL C front end (no rows there in the corpus) and
    fails there too: kernel.cl and the SPIR-V module are shipped, repro.py checks both, NaN's lane
    first, against 0 (the allowed result) on each."""
    corpus, bucket = _reduced_on_spirv(tmp_path, simulated)
    folder = write_report(corpus, bucket["id"], tmp_path / "r", [OPENCL_C])
    names = {p.name for p in folder.iterdir()}
    assert {"kernel.cl", "kernel.spv", "kernel.spvasm", "repro.py", "program.json", "README.md"} <= names
    assert "convert_int_sat_rtz(in0[gid])" in (folder / "kernel.cl").read_text()
    fronts = _repro_case(folder)["fronts"]
    translated = [("spirv", "binary")] if shutil.which("llvm-spirv-14") else []  # what Oclgrind's route needs
    assert [(f["path"], f["job"]["kind"]) for f in fronts] == [*translated, ("opencl-c", "source")]
    for f in fronts:
        assert (f["checks"][0]["lane"], f["checks"][0]["allowed"]) == (0, [0])
    text = (folder / "README.md").read_text()
    assert "- **OpenCL C**: this program fails there (run on `simgrind` when this report was written)" in text
    assert "| OpenCL C | out0[0] | 0 |" in text and "| SPIR-V | out0[0] | 0 |" in text


def test_a_front_end_where_the_program_does_not_fail_gets_no_files(tmp_path, simulated, monkeypatch):
    corpus, bucket = _reduced_on_spirv(tmp_path, simulated)
    monkeypatch.setattr(report_module, "observe", _driver(wrong_on=("spirv",)))
    folder = write_report(corpus, bucket["id"], tmp_path / "r", [OPENCL_C])
    assert not (folder / "kernel.cl").exists() and (folder / "kernel.spv").exists()
    assert "this program does not show it there (run on `simgrind`" in (folder / "README.md").read_text()
    assert [f["path"] for f in _repro_case(folder)["fronts"]] == (["spirv"] if shutil.which("llvm-spirv-14") else [])


def test_the_report_gives_the_bug_lists_severity_and_cites_only_the_specification(tmp_path, simulated):
    """(c) The SPIR-V row's rule is a requirement, the OpenCL C one's a recommendation; the bucket's
    severity (the bug list's) is recommendation. A row stored by an older clfuzz citing a file
    outside the specification is quoted as the rule is registered today. No file or module of
    clfuzz is named; the fingerprint and the clfuzz version are."""
    corpus, bucket = _corpus(tmp_path, simulated)
    corpus.db.execute("update disagreements set section = 'quoted by NOTES.md §3 [X], not in ../spec/'")
    text = readme(case_of(corpus, bucket["id"]))
    assert bucket_severity(bucket) == "recommendation"
    assert "Severity: **recommendation**, as clfuzz's bug list gives it" in text
    assert " where OpenCL recommends (a should) 0." in text.split("## Driver")[0]  # the summary, not "requires"
    rule = text.split("## The rule")[1].split("## Expected")[0]
    assert "> — OpenCL C 3.0.19 §6.4.3.3 ('NaN should be converted to 0': a recommendation)" in rule
    assert "The specification recommends this: it says should" in rule
    assert "> — SPIR-V 1.6 §3.20 Decoration SaturatedConversion" in rule
    assert "The specification requires this" in rule
    assert "NOTES.md" not in text and "../spec/" not in text
    assert set(re.findall(r"[\w./-]+\.(?:py|md)\b", text)) <= {"repro.py"}
    assert not re.search(r"\b(?:triage|corpus|oracles|fuzz|campaign|lang|app)\.[a-z_]+", text)
    assert "- fingerprint: `fp-opencl-c`" in text
    assert f"- clfuzz version: {importlib.metadata.version('clfuzz')}" in text


def _counts(corpus: Corpus) -> tuple[int, int]:
    return len(bucket_ids(corpus)), len(corpus.disagreements())


def test_a_report_that_reduces_first_adds_no_bucket_and_no_row(tmp_path, simulated):
    """(d) The bucket is not reduced: the report reduces it (to the one conversion on work-item 0)
    and stores nothing; storing that reduction as triage does would have added rows."""
    corpus, bucket = _corpus(tmp_path, simulated)
    before = _counts(corpus)
    folder = report_bucket(corpus, bucket["id"], tmp_path / "r", [OPENCL_C, SPIRV], say=lambda _: None)
    assert _counts(corpus) == before and corpus.reductions() == []
    text = (folder / "README.md").read_text()
    assert "on `simgrind` (OpenCL C front end) when this report was written (not stored in the corpus)" in text
    assert json.loads((folder / "program.json").read_text())["global_size"] == 1
    row = bucket_rows(corpus, bucket["id"])[0]
    session.reduce_stored(corpus, row, OPENCL_C, NoWorker())  # the triage's way: its rows are stored
    assert _counts(corpus)[1] > before[1]


def test_a_non_empty_output_folder_is_refused_unless_force_empties_it(tmp_path, simulated, monkeypatch):
    """(e) One line and exit status 2; --force removes an earlier report's files; --force never
    empties the current folder or one holding the corpus."""
    corpus, bucket = _reduced_on_spirv(tmp_path, simulated)
    corpus.close()
    out = tmp_path / "r"
    out.mkdir()
    (out / "stale.txt").write_text("an earlier report's file")
    args = ["report", bucket["id"], "--corpus", str(tmp_path / "c.db"), "-o", str(out)]
    refused = CliRunner().invoke(cli, args)
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert [line for line in refused.output.splitlines() if line.startswith("Error")] == \
        [f"Error: {out} is not empty: pass --force to empty it first, or another -o folder"]
    assert (out / "stale.txt").exists()
    forced = CliRunner().invoke(cli, [*args, "--force"])
    assert forced.exit_code == 0, forced.output
    assert not (out / "stale.txt").exists() and (out / "README.md").exists()
    monkeypatch.chdir(out)
    with pytest.raises(ReportError, match="not a report's own folder"):
        output_folder(out, True)
    with pytest.raises(ReportError, match="not a report's own folder"):
        output_folder(tmp_path, True, [tmp_path / "c.db"])
    assert (out / "README.md").exists()


def test_mark_records_the_vendors_url_and_the_report_and_junit_show_it(tmp_path, simulated):
    """(f) ``mark ID reported --url URL``: the bucket rows carry it (``buckets --json`` too), the
    report's README and a CI case of the known bucket show it; a --url that is no web address is
    refused in one line."""
    corpus, bucket = _reduced_on_spirv(tmp_path, simulated)
    corpus.close()
    db, url = str(tmp_path / "c.db"), "https://bugs.example.org/show_bug.cgi?id=42"
    bad = CliRunner().invoke(cli, ["mark", bucket["id"], "reported", "--url", "bug 42", "--corpus", db])
    assert bad.exit_code == 2 and "is not a web address" in bad.output and "Traceback" not in bad.output
    done = CliRunner().invoke(cli, ["mark", bucket["id"][:6], "reported", "--url", url, "--corpus", db])
    assert done.exit_code == 0 and url in done.output
    corpus = Corpus(db)
    marked = corpus.bucket(bucket["id"])
    assert (marked["status"], marked["url"]) == ("reported", url)
    assert [b["url"] for b in corpus.buckets()] == [url] and bug_list(corpus.buckets())[0]["url"] == url
    assert "- the vendor's bug: " + url in readme(case_of(corpus, bucket["id"]))
    corpus.mark(bucket["id"], "fixed")  # a later mark without --url keeps it
    assert corpus.bucket(bucket["id"])["url"] == url
    (_, case) = smoke_cases([OPENCL_C.name], [(OPENCL_C.name, {**marked, "status": "reported"})], db, Rules())
    assert url in case.out and case.url == url
    root = junit(CiResult(cases=[Case(SMOKE, OPENCL_C.name, "bucket", url=url)]))
    (prop,) = (p for p in root.iter("property") if p.get("name") == "vendor_bug")
    assert prop.get("value") == url
    assert ET.tostring(root).count(b"vendor_bug") == 1


def test_a_bucket_without_rows_says_so(tmp_path, simulated):
    corpus, bucket = _corpus(tmp_path, simulated)
    corpus.db.execute("update disagreements set bucket = 'elsewhere'")
    with pytest.raises(CorpusError, match="has no disagreement to report"):
        case_of(corpus, bucket["id"])


def test_repro_py_is_valid_python_whatever_the_title():
    """A failure's message in the title may hold backslashes and quotes (a driver's log)."""
    import ast

    from triage.repro_script import repro_source

    title = 'pocl: build_error: \\N{x} """ \\'
    tree = ast.parse(repro_source({"title": title, "bucket": "b", "kind": "build_error", "fronts": [],
                                    "timeout_s": 600}))
    assert ast.get_docstring(tree).splitlines()[0] == title


def test_a_bugs_report_is_its_lead_buckets_with_every_bucket_as_a_variant(tmp_path, simulated):
    """A bug of two buckets (the saturating conversion of NaN to int and to uint, joined by a
    re-run's evidence, triage.siblings): its report is the lead bucket's, headed by the bug, its
    buckets listed as variants with their values, and the evidence in words."""
    from triage.bug_report import report_bug
    from triage.bugs import find, listed, title

    corpus, first = _corpus(tmp_path, simulated)
    uint = Type("uint", 1)
    other = Program((Buffer("in0", F, "in", Fill(0, values=FLOATS)), Buffer("out0", uint, "out")),
                    (Store("out0", Op("convert", (Load("in0", F),), uint, (("rounding", "rtz"), ("sat", True)))),), 3)
    _store_run(corpus, other, OPENCL_C, simulated)
    second = next(b for b in corpus.buckets() if b["id"] != first["id"])
    corpus.add_evidence({"bucket": second["id"], "same_as": first["id"], "kind": "re-run", "program_id": other.id,
                         "detail": json.dumps({"target": "simgrind", "expression": "convert_uint_sat_rtz(in0[gid])",
                                               "inputs": {}, "expected": "0", "actual": "2147483647",
                                               "deviation": "wrong-value"})})
    [bug] = listed(corpus)[0]
    assert find(corpus, bug.id[:9]).id == bug.id
    folder = report_bug(corpus, bug.id, tmp_path / "r", [], say=lambda _: None)
    text = (folder / "README.md").read_text()
    head, _, rest = text.partition("## Why these are one bug")
    assert head.startswith(f"# {title(bug)}\n") and "2 buckets" in title(bug)
    assert f"clfuzz bug `{bug.id}`: 2 variants" in head
    assert first["id"] in head and second["id"] in head and "convert_uint_sat_rtz(in0[gid])" in head
    assert f"- `{second['id']}` is the same bug as `{first['id']}`: the reduced case of" in rest
    assert (folder / "repro.py").exists() and "## Expected vs actual" in text


def test_an_interactions_report_says_what_is_computed_wrong_and_its_repro_compares_the_lanes(tmp_path, simulated):
    """A bucket triage found to be an interaction (no statement of the smallest set shows the wrong
    lanes alone: corpus.buckets.INTERACTION) is reported like any wrong value: the value, what OpenCL
    wants, and that it shows only beside the kernel's other statements; its repro.py compares those
    lanes (a bucket of wrong lanes: corpus.buckets.LANE_KINDS)."""
    from corpus.buckets import INTERACTION, LANE_KINDS

    corpus, bucket = _corpus(tmp_path, simulated)
    first = case_of(corpus, bucket["id"])["rows"][0]
    corpus.blame(bucket["id"], {"kind": INTERACTION, "operation": "convert_T_sat + operator+",
                                "deviation": first["deviation"]})
    (joint,) = corpus.buckets()
    assert joint["signature"]["kind"] == INTERACTION
    text = readme(case_of(corpus, joint["id"]))
    # an interaction's severity is its rows' most severe: the SPIR-V path's (SaturatedConversion's definition)
    assert (f"computes `{first['expression']}` as 2147483647 where OpenCL requires 0, but only beside this "
            "kernel's other statements (2 in all): none of them shows a wrong value alone.") in text
    case = _repro_case(write_report(corpus, joint["id"], tmp_path / "report", [OPENCL_C]))
    assert case["kind"] == INTERACTION and set(case["lane_kinds"]) == set(LANE_KINDS)
    assert [c["allowed"] for c in case["fronts"][0]["checks"]][:1] == [[0]]
