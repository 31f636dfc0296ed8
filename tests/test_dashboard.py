"""The dashboard (app.dashboard, ``clfuzz dashboard``): a corpus built without drivers (the
simulated driver of test_triage), its data, and the page opened in a real headless browser
(Debian's chromium), which must draw every plot without network."""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_cli import _one_line_error
from test_triage import BUG_OP, _program_with_bug, _simulator

from app import dashboard
from app.cli import cli
from app.dashboard import write_dashboard
from app.dashboard_data import corner_matrix, coverage_matrix, error_matrix, throughput, timeline
from app.dashboard_figures import CAP_ULPS, INFINITE, TITLES, errors_figure, ulp_scale
from corpus import keying, store
from corpus.corners import corners, reached_by_target
from corpus.coverage import coverage
from corpus.dashboard_queries import runs_by_fingerprint
from corpus.stats import LARGEST_TITLE, largest_errors
from corpus.store import Corpus
from fuzz.judge import failure_row
from triage.bugs import listed as listed_bugs

CHROMIUM = Path("/usr/bin/chromium")
T0 = 1_700_000_000.0
TARGETS = {  # target: path, device, driver version
    "pocl": ("opencl-c", "Simulated PoCL CPU", "3.1-sim"),
    "pocl/spirv": ("spirv", "Simulated PoCL CPU", "3.1-sim"),
    "rusticl": ("opencl-c", "Simulated llvmpipe", "22.3-sim"),
}
WRONG = {"pocl": frozenset({BUG_OP}), "pocl/spirv": frozenset({BUG_OP}), "rusticl": frozenset({"min", BUG_OP})}
"""The operations each simulated driver gets wrong."""
ULPS = {"pocl": 1.25, "pocl/spirv": 3.5, "rusticl": 4096.0}
"""The largest error in ulps each target made on sin (float4) in the first program (table errors);
in the second, rusticl's sin on float2 is 8 ulps off and its tan infinitely (an infinite result)."""


def _error(ulps: float) -> dict:
    return {"buffer": "o", "operation": "sin", "type": "float4", "ulps": ulps, "accepted": int(ulps <= 4),
            "rule": "math.sin.float.ulp", "bound": "sin on float is within 4 ulp of the infinitely precise result",
            "work_item": 1, "lane": 5, "expression": "sin(x[gid])",
            "inputs": '{"x": {"type": "float4", "values": ["1", "0x1.8p+3", "3", "4"]}}', "reference": "0x1p-1",
            "actual_value": "0.6"}


def _errors(target: str, size: int) -> list[dict]:
    if size == 32:
        return [_error(ULPS[target])]
    if size == 48 and target == "rusticl":
        return [{**_error(8.0), "type": "float2"}, {**_error(math.inf), "operation": "tan"}]
    return []


def _build(path: Path) -> Corpus:
    """Six programs run on three targets over ten minutes of (fake) time, their disagreements
    from the simulated drivers, and a crash of a one-statement program on rusticl."""
    clock = iter(T0 + np.arange(1000) * 7.0)
    with pytest.MonkeyPatch.context() as mp:
        for module in (store, keying):  # the rows' and the buckets' times, in the order they were taken
            mp.setattr(module, "_now", lambda: float(next(clock)))
        corpus = Corpus(path)
        for target, (route, device, version) in TARGETS.items():
            corpus.add_target(target, route, f"fp-{target}", {"device_name": device, "driver_version": version,
                                                              "platform_name": "Simulation"})
        base = _program_with_bug()
        for size in (32, 48, 64, 96, 128, 160):
            program = dataclasses.replace(base, global_size=size)
            pid = corpus.add_program(program, "sim-1")
            for target, (route, _, _) in TARGETS.items():
                rows = _simulator(WRONG[target])(program, None, None)
                keys = {"program_id": pid, "target": target, "fingerprint_id": f"fp-{target}", "path": route}
                corpus.add_run({**keys, "status": "ok", "checks": size * 4, "judged": size * 4,
                                "mismatches": len(rows), "build_s": 0.2, "run_s": 0.05, "campaign": "sim-1"},
                               [{**r, **keys} for r in rows], _errors(target, size))
        one = dataclasses.replace(base, body=base.body[1:2], global_size=8)
        pid = corpus.add_program(one, "sim-1")
        keys = {"program_id": pid, "target": "rusticl", "fingerprint_id": "fp-rusticl", "path": "opencl-c"}
        corpus.add_run({**keys, "status": "crash", "checks": 0, "judged": 0, "mismatches": 0, "build_s": 0.1,
                        "run_s": 0.0, "log": "SIGSEGV in llvmpipe", "campaign": "sim-1"},
                       [{**failure_row(one, "crash", "SIGSEGV in llvmpipe"), **keys}])
        corpus.update_campaign("sim-1", 7, {"areas": ["expressions"]}, 7, 2000)
    return corpus


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Corpus]:
    path = tmp_path_factory.mktemp("dashboard") / "c.db"
    corpus = _build(path)
    yield path, corpus
    corpus.close()


def test_the_data_add_up(built):
    _, corpus = built
    rows = Counter(r["target"] for r in corpus.disagreements())
    tl = timeline(corpus)
    assert dict(rows) == {t: int(y[-1]) for t, (x, y) in tl["rows"].items()}
    assert int(tl["all_buckets"][1][-1]) == len(corpus.buckets())
    assert all(np.all(np.diff(y) >= 0) and np.all(np.diff(x) >= 0) for x, y in tl["rows"].values())
    tp = throughput(corpus)
    judged = Counter()
    for r in runs_by_fingerprint(corpus):
        judged[r["target"]] += r["judged"]
    assert tp["width"] >= 10 and {t: round(float((r * tp["seconds"]).sum())) for t, r in tp["rate"].items()} == judged
    cov = coverage(corpus)
    m = coverage_matrix(cov)
    for target, data in cov.items():
        assert m["uses"][target].sum() == sum(c[3] for c in data["cells"])
    assert set(m["uses"]) == set(TARGETS) and m["rows"] == ["add_sat", "arith", "max", "min"]
    assert m["columns"] == ["int4"]


def test_the_coverage_matrix_merges_variants_and_orders_types():
    cells = [["swizzle:hi", "float", 2, 3], ["swizzle:lo", "float", 2, 1], ["abs", "int", 4, 5], ["abs", "char", 1, 1]]
    m = coverage_matrix({"pocl": {"path": "opencl-c", "cells": cells}})
    assert m["rows"] == ["abs", "swizzle"] and m["columns"] == ["char", "int4", "float2"]  # lang.types order
    assert m["uses"]["pocl"].tolist() == [[1, 5, 0], [0, 0, 4]]
    assert "variants: hi 3, lo 1" in m["text"]["pocl"][1][2] and m["text"]["pocl"][0][2] == ""


def test_the_corner_view_shows_the_share_reached_and_what_is_missing(built, tmp_path):
    _, corpus = built
    per = reached_by_target(corpus)
    m = corner_matrix(per)
    summary = corners(corpus)
    assert [t["target"] for t in m["summary"]] == sorted(TARGETS)
    for t in m["summary"]:
        assert (t["reached"], t["total"]) == (summary[t["target"]]["reached"], summary[t["target"]]["total"])
        assert sum(n for _, n in t["missing"]) == t["total"] - t["reached"]
    assert summary["pocl"]["reached"] > 0
    # a row per operation (conversions per destination), a column per type; not one per corner
    assert {"max", "min", "add_sat", "sinpi", "convert_float", "convert_int"} <= set(m["rows"])
    assert "convert" not in m["rows"] and len(m["rows"]) < 200 and m["columns"][:2] == ["char", "uchar"]
    i, j = m["rows"].index("max"), m["columns"].index("int")
    can, have = per["pocl"]
    cell = [c for c in can if c.op == "max" and c.type == "int"]
    got = sum(c in have for c in cell)
    assert 0 < got < len(cell) and m["share"]["pocl"][i, j] == got / len(cell)
    assert m["counts"]["pocl"][i][j] == f"{got} of {len(cell)}"
    text = m["text"]["pocl"][i][j]
    assert "shapes 1/" in text and "operand classes" in text and "missing: w1, " in text and "more" in text
    assert np.isnan(m["share"]["pocl"][m["rows"].index("sinpi"), m["columns"].index("int")])  # no corner there
    page = write_dashboard(corpus, tmp_path / "c.html").read_text()
    assert 'href="#corners"' in page and 'id="plot-corners"' in page and TITLES["corners"] in page
    row = page[page.index("<table class=corners>"):].split("</table>")[0]
    share = summary["rusticl"]["reached"] / summary["rusticl"]["total"]
    assert f"<tr><td><b>rusticl</b></td><td class=n>{summary['rusticl']['reached']:,}</td>" in row
    assert f"{share:.1%}" in row and "more operations" in row


class _Refs(HTMLParser):
    """Every src/href of the page, and how many script elements have a src."""

    def __init__(self):
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.refs += [v or "" for k, v in attrs if k in ("src", "href", "srcset", "data", "action")]


def test_the_page_is_self_contained(built, tmp_path):
    _, corpus = built
    out = write_dashboard(corpus, tmp_path / "d" / "report.html")
    page = out.read_text()
    refs = _Refs()
    refs.feed(page)
    assert refs.refs and all(r.startswith("#") for r in refs.refs), [r for r in refs.refs if not r.startswith("#")]
    assert not re.search(r"""<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?(https?:)?//""", page, re.I)
    from plotly.offline import get_plotlyjs

    assert page.count(get_plotlyjs()[:300]) == 1  # plotly.js inline, once


def test_reports_are_capped_and_said_so(built, tmp_path, monkeypatch):
    _, corpus = built
    monkeypatch.setattr(dashboard, "MAX_TABLE", 2)
    page = write_dashboard(corpus, tmp_path / "r.html", max_reports=1).read_text()
    bugs = listed_bugs(corpus)[0]
    n, buckets = len(bugs), sum(len(g.buckets) for g in bugs)
    assert page.count('<section class=report id="bucket-') == 1
    assert "The reports of the first 1 buckets (bucket id links)" in page
    assert f"The first 2 of {n:,} bugs in {buckets:,} buckets" in page


def test_the_largest_errors_section(built, tmp_path):
    """One row per function, element type and driver: rusticl's sin on float4 (4096 ulps) and on
    float2 (8) is one row, the worst kept; its infinite tan is a row that says inf."""
    _, corpus = built
    page = write_dashboard(corpus, tmp_path / "e.html").read_text()
    assert LARGEST_TITLE in page and 'href="#errors"' in page
    table = page[page.index("<table class=errors>"):].split("</table>")[0]
    assert table.count("<tr><td><code>sin</code></td><td>float</td><td>rusticl</td>") == 1
    assert table.count("<tr><td><code>") == len(TARGETS) + 1  # sin on each target, rusticl's tan
    row = table[table.index("<tr><td><code>sin</code></td><td>float</td><td>rusticl</td>"):].split("</tr>")[0]
    assert "4,096.000" in row and "class=status-new>no<" in row and "x=0x1.8p+3" in row and "0x1p-1" in row
    assert '<td title="float2, float4">float4</td>' in row
    tan = table[table.index("<tr><td><code>tan</code></td><td>float</td><td>rusticl</td>"):].split("</tr>")[0]
    assert "<td class=n>inf</td>" in tan


def test_the_ulp_colour_scale_is_readable_and_infinite_errors_stand_apart(built):
    """A log scale of ulps with ticks a person reads (1, 10, 100, 1e3, 1e4), capped, and an
    infinite error in a colour and tick of its own, marked ∞ in its cell."""
    _, corpus = built
    matrix = error_matrix(largest_errors(corpus))
    heat = errors_figure(matrix).data[0]
    ticks = list(heat.colorbar.ticktext)
    assert ticks == ["1", "10", "100", "1e3", "1e4", "inf"]
    z = np.array(heat.z, dtype=float)
    i, j = matrix["rows"].index("sin"), matrix["columns"].index("rusticl")
    assert z[i, j] == pytest.approx(math.log10(4097)) and heat.colorbar.tickvals[4] == pytest.approx(math.log10(10001))
    k = matrix["rows"].index("tan")
    assert np.isinf(matrix["ulps"][k, j]) and heat.text[k][j] == "∞" and heat.text[i][j] == "✗"
    finite = z[np.isfinite(matrix["ulps"])]
    assert z[k, j] > finite.max() and z[k, j] == pytest.approx(heat.colorbar.tickvals[-1]) and z[k, j] < heat.zmax
    top = heat.colorbar.tickvals[-2] / heat.zmax  # the finite scale's end (1e4) on the colour scale
    assert all(c != INFINITE for at, c in heat.colorscale if at <= top)
    assert [c for at, c in heat.colorscale if at > top] == [INFINITE, INFINITE]  # the infinite band
    capped = ulp_scale(1e33, False)
    assert capped["ticktext"][-1] == "≥1e4" and capped["zmax"] == pytest.approx(math.log10(1 + CAP_ULPS))
    assert not any("e+" in t or t.endswith(("k", "M", "G")) for t in capped["ticktext"] + ticks)


def test_the_page_opens_with_the_bug_list(built, tmp_path):
    _, corpus = built
    page = write_dashboard(corpus, tmp_path / "b.html").read_text()
    main = page[page.index("<main"):]
    order = [main.index(anchor) for anchor in ('id="bugs"', "<table class=buckets>", 'id="statistics"',
                                                'id="plot-timeline"', 'id="largest-errors"', 'id="reports"')]
    assert order == sorted(order)
    assert re.search(r'<nav><a href="#bugs">bug list</a>', page)
    first = [b["id"] for g in listed_bugs(corpus)[0] for b in g.buckets]
    listed = re.findall(r'<a href="#bucket-([0-9a-f]+)">', main[:main.index('id="statistics"')])
    assert listed == first  # the bug list's order: what needs a person first


def test_an_empty_corpus_gives_a_page(tmp_path):
    page = write_dashboard(Corpus(tmp_path / "e.db"), tmp_path / "e.html").read_text()
    assert "no runs in this corpus" in page and "No disagreements, no buckets." in page


def test_the_command_writes_the_page_and_fails_in_one_line(built, tmp_path):
    path, corpus = built
    out = tmp_path / "cli.html"
    result = CliRunner().invoke(cli, ["dashboard", "--corpus", str(path), "--campaign", "sim-1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert str(out) in result.output and out.stat().st_size > 1_000_000
    reports = tmp_path / "reports"
    bucket = corpus.buckets()[0]["id"]
    (reports / bucket).mkdir(parents=True)
    (reports / bucket / "README.md").write_text("# x\n")
    CliRunner().invoke(cli, ["dashboard", "--corpus", str(path), "-o", str(out), "--reports", str(reports)])
    assert f'href="reports/{bucket}/README.md"' in out.read_text()
    _one_line_error(CliRunner().invoke(cli, ["dashboard", "--corpus", str(tmp_path / "none.db"), "-o", str(out)]),
                    "run a campaign first")


def _chromium(url: str, profile: Path, *args: str) -> str:
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--hide-scrollbars", *args, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed; `bash setup.sh test` installs it")
def test_a_headless_browser_draws_every_plot_and_links_every_bucket(built, tmp_path):
    _, corpus = built
    out = write_dashboard(corpus, tmp_path / "report.html")
    url = out.resolve().as_uri()
    dom = _chromium(url, tmp_path / "profile", "--dump-dom")
    assert "</html>" in dom
    # plotly drew each figure: its SVG is inside the figure's div
    starts = {name: dom.index(f'id="plot-{name}"') for name in TITLES}
    bounds = sorted(starts.values()) + [len(dom)]
    for name, start in starts.items():
        drawn = dom[start:bounds[bounds.index(start) + 1]]
        assert 'class="main-svg"' in drawn, name
    coverage_part = dom[starts["coverage"]:]
    assert 'class="hm"' in coverage_part and "updatemenu" in coverage_part  # the heat map and its dropdown
    assert 'class="hm"' in dom[starts["errors"]:]  # the largest errors' heat map
    errors_part = dom[starts["errors"]:bounds[bounds.index(starts["errors"]) + 1]]
    colour_bar = re.findall(r'data-unformatted="([^"]*)"', errors_part[errors_part.index("cbaxis"):])
    assert colour_bar[:6] == ["1", "10", "100", "1e3", "1e4", "inf"]  # drawn: a scale a person reads
    shown = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)  # what is drawn, not the figures' data
    titles = re.findall(r'class="gtitle"[^>]*>([^<]*)<', shown)
    for title in TITLES.values():
        assert any(t.startswith(title) for t in titles), (title, titles)
    legend = set(re.findall(r'class="legendtext"[^>]*>([^<]*)<', shown))
    assert set(TARGETS) <= legend
    for target, (_, device, version) in TARGETS.items():
        assert f"<b>{target}</b>" in shown and device in shown and version in shown
    anchors = set(re.findall(r'<section class="report" id="bucket-([0-9a-f]+)"', shown))
    links = re.findall(r'<a href="#bucket-([0-9a-f]+)"><code>([0-9a-f]+)</code></a>', shown)
    buckets = corpus.buckets()
    assert len(buckets) >= 4 and {b["id"] for b in buckets} == anchors == {bid for bid, _ in links}
    for b in buckets:
        assert b["title"].replace(">", "&gt;") in shown
    assert "SIGSEGV in llvmpipe" in shown  # the crash's report
    png = tmp_path / "shot.png"
    _chromium(url, tmp_path / "profile2", f"--screenshot={png}", "--window-size=1400,2400")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
