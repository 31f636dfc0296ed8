"""A corpus as one self-contained HTML page (``clfuzz dashboard --corpus PATH -o report.html``).

The page needs no network: plotly.js is embedded once, inline, and every figure is drawn from
data embedded beside it. It opens with the bug list (triage.bugs: one row per bug, what needs a person
first; :func:`bug_list_html`), each of its buckets linking to a section of the page with its report's
README (triage.report.readme) for the buckets with most rows (:data:`MAX_REPORTS`). Then it shows

- the statistics: the corpus, its campaigns, programs, runs, and each target with its fingerprint
  (device, driver version), runs, judged lanes, throughput and construct coverage;
- disagreement rows and distinct buckets, cumulative, per target, against time since the first run;
- throughput per target: judged lanes per second over time (binned) and per driver-second;
- the coverage matrix (corpus.coverage) as a heat map per target, a dropdown picking the target:
  a row per operation, a column per OpenCL type (``int4``), colour the uses (log scale); the
  hover lists the operation's variants (``swizzle:hi``) in the cell;
- corner coverage (lang.corners, corpus.corners): per target the share of the corner table it
  can run that its completed runs reached, the operations with most corners missed, and a heat
  map per target (operation × type, colour the share reached; the hover counts them by kind and
  names the first missing);
- the largest error in ulps (OpenCL C 3.0 §7.4, ulp) observed per function, element type and
  driver (corpus.stats.largest_errors, math area): a heat map function × driver (the largest over
  the types on a capped log scale, a ✗ where it was beyond the bound, ∞ and a colour of its own
  where it was infinite) and a table with the input that produced each;
- the reports.

The page is assembled here from the data of app.dashboard_data and the figures of
app.dashboard_figures.
"""

from __future__ import annotations

import html
import os
import re
import time
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from app.dashboard_data import (
    corner_matrix,
    coverage_matrix,
    error_matrix,
    overview,
    throughput,
    timeline,
)
from app.dashboard_figures import (
    corners_figure,
    coverage_figure,
    errors_figure,
    target_styles,
    throughput_figure,
    timeline_figure,
)
from corpus.corners import reached_by_target
from corpus.coverage import coverage
from corpus.stats import LARGEST_TITLE, largest_errors
from corpus.store import Corpus
from triage import bugs as bug_level
from triage.bugs import Bug
from triage.buglist import size_text

MAX_REPORTS = 200
"""Buckets whose report README is embedded (most rows first); the others are listed only."""
MAX_TABLE = 2000
"""Rows of the bucket table."""
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
MISSING_ROWS = 6
"""Operations listed per target in the corner table, most corners missed first."""


def _utc(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp)) if stamp else ""


def _short(stamp: float | None) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(stamp)) if stamp else ""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _markdown_html(text: str) -> str:
    """README Markdown as HTML (raw HTML in it is escaped; headings moved two levels down)."""
    try:
        from markdown_it import MarkdownIt  # a dependency of rich
    except ImportError:  # pragma: no cover - rich always brings it
        return f"<pre>{_e(text)}</pre>"
    rendered = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return re.sub(r"<(/?)h([1-4])>", lambda m: f"<{m[1]}h{int(m[2]) + 2}>", rendered)


def bucket_reports(corpus: Corpus, buckets: list[dict[str, Any]], limit: int = MAX_REPORTS) -> dict[str, str]:
    """The report README (triage.report.readme, without the lanes its repro.py would check) of the
    first ``limit`` buckets, by bucket id; a bucket whose report cannot be made gets the reason."""
    from triage.report import case_of, readme

    out = {}
    for b in buckets[:limit]:
        try:
            out[b["id"]] = readme(case_of(corpus, b["id"]))
        except Exception as e:  # noqa: BLE001 - one bad bucket must not lose the page
            out[b["id"]] = f"# {b['title']}\n\nNo report: {type(e).__name__}: {e}\n"
    return out


_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 0; color: #222; }
main { max-width: 1400px; margin: 0 auto; padding: 12px 24px 60px; }
nav { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd; padding: 6px 24px; z-index: 10; }
nav a { margin-right: 18px; }
h1 { margin: 10px 0 2px; } h2 { margin-top: 34px; border-bottom: 2px solid #eee; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; position: sticky; top: 34px; }
table.targets td, td.t { white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.buckets td:nth-child(2) { max-width: 560px; }
code { font-size: 12.5px; } .muted { color: #777; }
section.report { border: 1px solid #ddd; border-radius: 6px; padding: 2px 16px 10px; margin: 14px 0; }
section.report:target { border-color: #1f77b4; box-shadow: 0 0 0 3px #1f77b433; }
section.report pre { background: #f6f6f6; padding: 6px; overflow-x: auto; }
section.report table { font-size: 12.5px; }
.status-new { color: #b00; font-weight: 600; }
"""


def _figure_html(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(include_plotlyjs=False, full_html=False, div_id=div_id, config=PLOT_CONFIG)


def _title_html(ov: dict[str, Any]) -> str:
    return f"""
<h1>clfuzz dashboard</h1>
<p class=muted>corpus <code>{_e(ov['corpus'])}</code> · {'campaign <b>' + _e(ov['campaign']) + '</b>' if ov['campaign']
    else 'all campaigns'} · generated {_utc(time.time())}</p>"""


def _statistics_html(ov: dict[str, Any]) -> str:
    span = (ov["last_run"] - ov["first_run"]) if ov["first_run"] else 0.0
    campaigns = "".join(
        f"<tr><td>{_e(c['name'])}</td><td class=n>{_e(c['seed'])}</td><td>{_utc(c['started'])}</td>"
        f"<td class=n>{(c['updated'] or 0) - (c['started'] or 0):,.0f} s</td><td class=n>{c['programs'] or 0:,}</td>"
        f"<td class=n>{c['checks'] or 0:,}</td></tr>" for c in ov["campaigns"])
    targets = "".join(
        f"<tr><td><b>{_e(t['target'])}</b></td><td>{_e(t['path'])}</td><td>{_e(t['device_name'])}</td>"
        f"<td>{_e(t['driver_version'])}</td><td class=n>{t['runs']:,}</td>"
        f"<td>{_e(', '.join(f'{k} {v}' for k, v in sorted(t['statuses'].items())))}</td>"
        f"<td class=n>{t['judged']:,}</td><td class=n>{t['driver_s']:,.1f}</td>"
        f"<td class=n>{t['judged_per_driver_s']:,.0f}</td><td class=n>{t['rows']:,}</td>"
        f"<td class=n>{t['buckets']:,}</td><td class=n>{t['constructs']} / {t['cells']}</td></tr>"
        for t in ov["targets"])
    return f"""
<h2 id="statistics">Statistics</h2>
<table>
<tr><th>programs</th><td class=n>{ov['programs']:,}</td><th>runs</th><td class=n>{ov['runs']:,}</td>
<th>disagreement rows</th><td class=n>{ov['rows']:,}</td><th>buckets</th><td class=n>{ov['buckets']:,}</td>
<th>runs from</th><td>{_utc(ov['first_run'])}</td><th>span</th><td class=n>{span:,.0f} s</td></tr>
</table>
<h3>Campaigns</h3>
<table><tr><th>campaign</th><th>seed</th><th>started</th><th>ran</th><th>programs</th><th>checks</th></tr>
{campaigns or '<tr><td colspan=6 class=muted>none recorded</td></tr>'}</table>
<h3 id=targets>Targets</h3>
<table class=targets><tr><th>target</th><th>path</th><th>device</th><th>driver version</th><th>runs</th><th>statuses</th>
<th>judged lanes</th><th>driver s</th><th>lanes per driver-s</th><th>disagreement rows</th><th>buckets</th>
<th>constructs / cells</th></tr>
{targets or '<tr><td colspan=12 class=muted>no runs</td></tr>'}</table>"""


def bug_list_html(bugs: list[Bug], reports: dict[str, str], out: Path, reports_dir: Path | None) -> str:
    """The page's first section: the bug list as ``clfuzz buckets`` gives it (triage.bugs: one row
    per bug, what most needs a person first), each bucket of a bug linking to its report on the
    page where ``reports`` has one, and to ``reports_dir/ID/README.md`` where that exists."""
    rows = []
    for g in bugs[:MAX_TABLE]:
        links = []
        for b in g.buckets:
            ident = f"<code>{_e(b['id'])}</code>"
            links.append(f'<a href="#bucket-{_e(b["id"])}">{ident}</a>' if b["id"] in reports else ident)
            readme = reports_dir / b["id"] / "README.md" if reports_dir is not None else None
            if readme is not None and readme.exists():
                links[-1] += f' (<a href="{_e(Path(os.path.relpath(readme, out.parent)).as_posix())}">README</a>)'
        members = g.buckets
        rows.append(
            f"<tr><td><code>{_e(g.id)}</code></td><td>{_e(bug_level.title(g))}</td><td>{_e(g.driver)}</td>"
            f"<td>{_e(bug_level.severity(g))}</td><td class=status-{_e(bug_level.status(g))}>{_e(bug_level.status(g))}</td>"
            f"<td>{'<br>'.join(links)}</td>"
            f"<td>{_e(size_text(g.lead['reduced']))}</td>"
            f"<td class=n>{bug_level.rows(g):,}</td>"
            f"<td class=t>{_short(min(b['first_seen'] for b in members))}</td>"
            f"<td class=t>{_short(max(b['last_seen'] for b in members))}</td></tr>")
    count = f"{len(bugs):,} bugs in {sum(len(g.buckets) for g in bugs):,} buckets"
    shown = (f"{count}, the most severe first, then new, then most rows." if len(bugs) <= MAX_TABLE
             else f"The first {MAX_TABLE:,} of {count}; `clfuzz buckets` lists them all.")
    buckets = sum(len(g.buckets) for g in bugs)
    embedded = (f" The reports of all {len(reports):,} buckets are on this page (bucket id links)." if len(reports) == buckets
                else f" The reports of the first {len(reports):,} buckets (bucket id links) are on this page, to keep it "
                     "small; <code>clfuzz report BUG_OR_BUCKET -o DIR</code> writes any.")
    head = ("<tr><th>bug</th><th>what</th><th>driver</th><th>severity</th><th>status</th><th>buckets</th>"
            "<th>reduced</th><th>rows</th><th>first seen (UTC)</th><th>last seen (UTC)</th></tr>")
    if not bugs:
        return '<h2 id="bugs">Bug list</h2>\n<p class=muted>No disagreements, no buckets.</p>'
    return (f'<h2 id="bugs">Bug list</h2>\n<p>{shown}{embedded}</p>\n<table class=buckets>{head}\n'
            + "\n".join(rows) + "</table>")


def _errors_html(rows: list[dict[str, Any]]) -> str:
    """The table of the largest errors in ulps (corpus.stats.largest_errors), the expression in
    the input cell's tooltip."""
    if not rows:
        return "<p class=muted>No error in ulps measured (the math area records them).</p>"
    cells = "\n".join(
        f"<tr><td><code>{_e(r['operation'])}</code></td><td>{_e(r['type'])}</td><td>{_e(r['target'])}</td>"
        f"<td class=n>{r['ulps']:,.3f}</td><td>{_e(r['bound'])}</td>"
        f"<td{'' if r['accepted'] else ' class=status-new'}>{'yes' if r['accepted'] else 'no'}</td>"
        f"<td title=\"{_e(', '.join(r['types']))}\">{_e(r['example_type'])}</td>"
        f"<td title=\"{_e(r['expression'])}\"><code>{_e(r['input'])}</code></td><td><code>{_e(r['reference'])}</code></td>"
        f"<td><code>{_e(r['actual_value'])}</code></td><td class=n>{r['measured']:,}</td></tr>"
        for r in rows[:MAX_TABLE])
    shown = "" if len(rows) <= MAX_TABLE else f" The first {MAX_TABLE:,} of {len(rows):,}; `clfuzz stats` lists them all."
    return (f"<p>The largest error in ulps (OpenCL C 3.0 §7.4) each driver made on each function and element type, "
            f"over the vector widths, within the bound or not, the type of the lane that made it (hover: the types "
            f"measured) and its operands (hover: the expression).{shown}</p>\n"
            "<table class=errors><tr><th>function</th><th>type</th><th>driver</th><th>ulps</th><th>bound</th>"
            "<th>within bound</th><th>worst on</th><th>input</th><th>reference</th><th>actual</th><th>measured</th>"
            "</tr>\n"
            f"{cells}</table>")


def _corners_html(summary: list[dict[str, Any]]) -> str:
    """Per target the corners reached of those it can run and the operations with most missed."""
    if not summary:
        return "<p class=muted>No run, no corner reached.</p>"
    rows = []
    for t in summary:
        missed = ", ".join(f"{op} {n:,}" for op, n in t["missing"][:MISSING_ROWS])
        if len(t["missing"]) > MISSING_ROWS:
            missed += f" and {len(t['missing']) - MISSING_ROWS:,} more operations"
        share = t["reached"] / t["total"] if t["total"] else 0.0
        rows.append(f"<tr><td><b>{_e(t['target'])}</b></td><td class=n>{t['reached']:,}</td>"
                    f"<td class=n>{t['total']:,}</td><td class=n>{share:.1%}</td><td>{_e(missed)}</td></tr>")
    return ("<p>The corners of the corner table (README, \"Corners first\") each target can run, and those its "
            "completed runs reached; <code>clfuzz stats --coverage</code> lists every corner missed.</p>\n"
            "<table class=corners><tr><th>target</th><th>reached</th><th>corners</th><th>share</th>"
            "<th>most missed (operation, corners)</th></tr>\n" + "\n".join(rows) + "</table>")


def _reports_html(buckets: list[dict[str, Any]], reports: dict[str, str]) -> str:
    sections = []
    for b in buckets:
        if b["id"] not in reports:
            continue
        sections.append(
            f'<section class=report id="bucket-{_e(b["id"])}"><p class=muted>bucket <code>{_e(b["id"])}</code> · '
            f'{_e(b["target"])} · {_e(b["status"])} · <a href="#bugs">back to the bug list</a></p>'
            f"{_markdown_html(reports[b['id']])}</section>")
    return "\n".join(sections)


def dashboard_html(corpus: Corpus, out: Path, campaign: str | None = None, *, reports_dir: Path | None = None,
                   max_reports: int = MAX_REPORTS) -> str:
    """The page of :func:`write_dashboard`, as text (``out`` is where it will be written, for
    relative links)."""
    cov = coverage(corpus, campaign)
    ov = overview(corpus, campaign, cov)
    styles = target_styles(sorted({t["target"] for t in ov["targets"]} | set(cov)))
    bugs = bug_level.listed(corpus, campaign)[0]
    reports = bucket_reports(corpus, [b for g in bugs for b in g.buckets], max_reports)
    errors = largest_errors(corpus, campaign)
    corners = corner_matrix(reached_by_target(corpus, campaign))
    figures = [
        ("timeline", timeline_figure(timeline(corpus, campaign), styles)),
        ("throughput", throughput_figure(throughput(corpus, campaign), ov["targets"], styles)),
        ("coverage", coverage_figure(coverage_matrix(cov))),
        ("corners", corners_figure(corners)),
        ("errors", errors_figure(error_matrix(errors))),
    ]
    plots = "\n".join(
        f'<h2 id="{name}">{heading}</h2>\n{_figure_html(fig, f"plot-{name}")}'
        for (name, fig), heading in zip(figures, ("Over time", "Throughput", "Coverage", "Corners", "Largest errors")))
    title = f"clfuzz dashboard: {Path(corpus.path).name}" + (f" ({campaign})" if campaign else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<style>{_CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head><body>
<nav><a href="#bugs">bug list</a><a href="#statistics">statistics</a><a href="#timeline">over time</a>\
<a href="#throughput">throughput</a><a href="#coverage">coverage</a><a href="#corners">corners</a>\
<a href="#errors">largest errors</a><a href="#reports">reports</a></nav>
<main id="top">
{_title_html(ov)}
{bug_list_html(bugs, reports, out, reports_dir)}
{_statistics_html(ov)}
{plots}
<h3 id="corner-table">Corners reached</h3>
{_corners_html(corners["summary"])}
<h3 id="largest-errors">{_e(LARGEST_TITLE)}</h3>
{_errors_html(errors)}
<h2 id="reports">Reports</h2>
<p>Each section is the <code>README.md</code> that <code>clfuzz report BUCKET -o DIR</code> writes beside the kernel,
<code>repro.py</code> and <code>program.json</code> it names.</p>
{_reports_html([b for g in bugs for b in g.buckets], reports) or '<p class=muted>No reports.</p>'}
</main></body></html>
"""


def write_dashboard(corpus: Corpus, out: Path, campaign: str | None = None, *, reports_dir: Path | None = None,
                    max_reports: int = MAX_REPORTS) -> Path:
    """Write the dashboard of ``corpus`` (or of one ``campaign`` in it) to ``out``: one HTML file
    that opens without network. ``reports_dir``: link each bucket also to
    ``reports_dir/<bucket>/README.md`` where that exists (``clfuzz report BUCKET -o DIR/BUCKET``).
    Returns ``out``."""
    out = Path(out)
    page = dashboard_html(corpus, out, campaign, reports_dir=Path(reports_dir) if reports_dir else None,
                          max_reports=max_reports)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
