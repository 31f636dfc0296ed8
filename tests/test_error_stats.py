"""The largest error in ulps per function, type and driver (OpenCL C 3.0 §7.4, ulp): the corpus's
``errors`` table summarized by corpus.stats.largest_errors, shown by ``clfuzz stats`` and the
dashboard. The corpus is built by hand: one math program, runs with their errors rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from app.dashboard import write_dashboard
from app.dashboard_data import error_matrix
from corpus.stats import LARGEST_TITLE, largest_errors, markdown, operand_text, summarize
from corpus.store import Corpus
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type

F4 = Type("float", 4)
PROGRAM = Program((Buffer("in0", F4, "in", Fill(1)), Buffer("out0", F4, "out")),
                  (Store("out0", Op("sin", (Load("in0", F4),), F4)),), 4, area="math")
TARGETS = {"pocl": "opencl-c", "rusticl/spirv": "spirv"}
SIN_FLOAT = "sin on float is within 4 ulp of the infinitely precise result"


def _inputs(*values: str) -> str:
    return json.dumps({"in0": {"type": "float4", "bits": ["0x0"] * len(values), "values": list(values)}})


def _error(ulps: float, accepted: bool, *, operation: str = "sin", type_name: str = "float4", lane: int = 6,
           values: tuple[str, ...] = ("0.5", "1", "0x1.8p+1", "1e+10")) -> dict:
    return {"buffer": "out0", "operation": operation, "type": type_name, "ulps": ulps, "accepted": int(accepted),
            "rule": f"math.{operation}.float.ulp", "bound": SIN_FLOAT, "work_item": lane // 4, "lane": lane,
            "expression": "sin(in0[gid])", "inputs": _inputs(*values), "reference": "0x1.2p-1",
            "actual_value": f"actual-{ulps}"}


def _run(corpus: Corpus, pid: str, target: str, campaign: str, errors: list[dict]) -> None:
    corpus.add_run({"program_id": pid, "target": target, "fingerprint_id": f"fp-{target}", "path": TARGETS[target],
                    "status": "ok", "checks": 16, "judged": 16, "mismatches": 0, "build_s": 0.1, "run_s": 0.01,
                    "log": "", "campaign": campaign}, [], errors)


@pytest.fixture
def seeded(tmp_path) -> tuple[Path, Corpus]:
    """Campaign a: pocl sin float4 at 1.5 then 3.25 ulps, sin double 0.5; rusticl/spirv sin float4
    812.5 ulps (beyond the bound), sin float2 at 40 and operator/ float. Campaign b: pocl sin
    float4 at 9.75."""
    path = tmp_path / "c.db"
    corpus = Corpus(path)
    for target, route in TARGETS.items():
        corpus.add_target(target, route, f"fp-{target}", {"device_name": target, "driver_version": "1"})
    pid = corpus.add_program(PROGRAM, "a")
    _run(corpus, pid, "pocl", "a", [_error(1.5, True), _error(0.5, True, type_name="double", lane=1, values=("1",))])
    _run(corpus, pid, "pocl", "a", [_error(3.25, True, lane=2)])
    _run(corpus, pid, "rusticl/spirv", "a", [_error(812.5, False), _error(2.0, True, operation="operator/",
                                                                            type_name="float", lane=0)])
    _run(corpus, pid, "rusticl/spirv", "a", [_error(812.5, True, lane=1)])  # a tie: the first stored wins
    _run(corpus, pid, "rusticl/spirv", "a", [_error(40.0, True, type_name="float2", lane=3)])  # a width of its own
    _run(corpus, pid, "pocl", "b", [_error(9.75, True, lane=5)])
    yield path, corpus
    corpus.close()


def _groups(rows: list[dict]) -> dict[tuple[str, str, str], dict]:
    return {(r["operation"], r["type"], r["target"]): r for r in rows}


def test_the_largest_row_of_each_group(seeded):
    _, corpus = seeded
    rows = summarize(corpus)["largest_errors"]
    # one row per function, element type and driver: the widths of one element type are one row
    assert [(r["operation"], r["type"], r["target"]) for r in rows] == [
        ("operator/", "float", "rusticl/spirv"), ("sin", "double", "pocl"), ("sin", "float", "pocl"),
        ("sin", "float", "rusticl/spirv")]
    g = _groups(rows)
    assert g["sin", "float", "pocl"]["ulps"] == 9.75 and g["sin", "float", "pocl"]["measured"] == 3
    worst = g["sin", "float", "rusticl/spirv"]
    assert (worst["example_type"], worst["types"], worst["measured"]) == ("float4", ["float2", "float4"], 3)
    assert worst["ulps"] == 812.5 and worst["accepted"] is False and worst["lane"] == 6  # the first of the tie
    assert worst["path"] == "spirv" and worst["bound"] == SIN_FLOAT and worst["rule"] == "math.sin.float.ulp"
    assert worst["inputs"]["in0"]["values"][2] == "0x1.8p+1" and worst["input"] == "in0=0x1.8p+1"  # lane 6 % 4
    assert worst["reference"] == "0x1.2p-1" and worst["actual_value"] == "actual-812.5"
    assert worst["expression"] == "sin(in0[gid])" and worst["program_id"] == PROGRAM.id
    assert g["sin", "double", "pocl"]["measured"] == 1 and g["sin", "double", "pocl"]["input"] == "in0=1"
    json.dumps(rows)  # JSON-able


def test_the_campaign_filter(seeded):
    _, corpus = seeded
    g = _groups(largest_errors(corpus, "a"))
    assert g["sin", "float", "pocl"]["ulps"] == 3.25 and g["sin", "float", "pocl"]["measured"] == 2
    assert len(g) == 4
    only_b = largest_errors(corpus, "b")
    assert [(r["target"], r["ulps"], r["measured"]) for r in only_b] == [("pocl", 9.75, 1)]
    assert largest_errors(corpus, "none") == []


def test_an_empty_errors_table(memory_corpus):
    assert summarize(memory_corpus)["largest_errors"] == []
    assert LARGEST_TITLE not in markdown(summarize(memory_corpus))
    m = error_matrix([])
    assert m["rows"] == [] and m["ulps"].shape == (0, 0)


def test_the_short_input():
    vec = {"a": {"values": ["1", "2", "3"]}, "b": {"values": ["7"]}, "literals": [{"type": "float", "values": ["0.5"]}]}
    assert operand_text(vec, "pow", "float3", 5) == "a=2, b=7, literal=0.5"  # a 3-vector takes 4 lanes
    assert operand_text(vec, "dot", "float", 1) == "a=(1, 2, 3), b=7, literal=0.5"  # geometric: every lane
    assert operand_text(vec, "fract (out-parameter)", "float3", 2) == "a=3, b=7, literal=0.5"
    assert operand_text({}, None, None, None) == ""


def test_the_error_matrix_keeps_the_largest_over_types(seeded):
    _, corpus = seeded
    m = error_matrix(largest_errors(corpus))
    assert m["rows"] == ["operator/", "sin"] and m["columns"] == ["pocl", "rusticl/spirv"]
    assert m["ulps"][1].tolist() == [9.75, 812.5] and m["type"][1] == ["float4", "float4"]
    assert m["accepted"][1].tolist() == [True, False]
    assert m["ulps"][0, 0] != m["ulps"][0, 0] and m["ulps"][0, 1] == 2.0  # NaN: never measured


def test_clfuzz_stats_shows_the_largest_errors(seeded):
    path, _ = seeded
    runner = CliRunner()
    result = runner.invoke(cli, ["stats", "--corpus", str(path)])
    assert result.exit_code == 0, result.output
    assert LARGEST_TITLE in result.output
    section = result.output[result.output.index(LARGEST_TITLE):]
    line = next(ln for ln in section.splitlines() if "rusticl/spirv" in ln and "sin" in ln)
    assert "812.5" in line and "no" in line and "in0=0x1.8p+1" in line
    assert "operator/" in section and "9.75" in section
    result = runner.invoke(cli, ["stats", "--corpus", str(path), "--campaign", "a", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["largest_errors"]
    assert _groups(rows)["sin", "float", "pocl"]["ulps"] == 3.25


def test_the_markdown_summary_lists_them(seeded):
    _, corpus = seeded
    text = markdown(summarize(corpus))
    assert f"## {LARGEST_TITLE}" in text and "| sin | float | rusticl/spirv | 812.5 | **no** | float4 | `in0=0x1.8p+1` |" in text


def test_the_dashboard_has_the_section(seeded, tmp_path):
    _, corpus = seeded
    page = write_dashboard(corpus, tmp_path / "d.html").read_text()
    assert LARGEST_TITLE in page and 'id="plot-errors"' in page
    assert ("<tr><td><code>sin</code></td><td>float</td><td>rusticl/spirv</td><td class=n>812.500</td>"
            f"<td>{SIN_FLOAT}</td><td class=status-new>no</td><td title=\"float2, float4\">float4</td>") in page
    assert page.count("<tr><td><code>sin</code></td><td>float</td><td>rusticl/spirv</td>") == 1
    assert "<code>0x1.2p-1</code>" in page and "<code>actual-812.5</code>" in page
    empty = write_dashboard(Corpus(tmp_path / "e.db"), tmp_path / "e.html").read_text()
    assert "No error in ulps measured" in empty
