"""A corpus as one self-contained HTML page (``clfuzz dashboard --corpus PATH -o report.html``).

The page needs no network: plotly.js is embedded once, inline, and every figure is drawn from
data embedded beside it. It shows

- a header: the corpus, its campaigns, programs, runs, and each target with its fingerprint
  (device, driver version), runs, judged lanes, throughput and construct coverage;
- disagreement rows and distinct buckets, cumulative, per target, against time since the first run;
- throughput per target: judged lanes per second over time (binned) and per driver-second;
- the coverage matrix (corpus.coverage) as a heat map per target, a dropdown picking the target:
  a row per operation, a column per OpenCL type (``int4``), colour the uses (log scale); the
  hover lists the operation's variants (``swizzle:hi``) in the cell;
- the largest error in ulps (OpenCL C 3.0 §7.4, ulp) observed per function, type and driver
  (corpus.stats.largest_errors, math area): a heat map function × driver (the largest over the
  types, a ✗ where it was beyond the bound) and a table with the input that produced each;
- the bucket table, each bucket linking to a section of the page with its report's README
  (triage.report.readme) for the buckets with most rows (:data:`MAX_REPORTS`).

The data functions (:func:`overview`, :func:`timeline`, :func:`throughput`,
:func:`coverage_matrix`, :func:`error_matrix`) aggregate in SQL and numpy; they return plain dicts and arrays.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from corpus.coverage import coverage
from corpus.stats import LARGEST_TITLE, largest_errors
from corpus.store import Corpus
from fuzz.drivers.discovery import family_of
from fuzz.types import SCALARS

MAX_REPORTS = 200
"""Buckets whose report README is embedded (most rows first); the others are listed only."""
MAX_TABLE = 2000
"""Rows of the bucket table."""
MAX_POINTS = 400
"""Points per line of the time series (a longer series is sampled, keeping its last point)."""
MAX_BINS = 40
BIN_SECONDS = (10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400)
TITLES = {
    "timeline": "Disagreements and buckets over time",
    "throughput": "Throughput per driver",
    "coverage": "Construct coverage",
    "errors": "Largest error in ulps per function and driver",
}
"""The titles of the four figures (tests look for them in the rendered page)."""
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


def _where(campaign: str | None, column: str = "campaign") -> tuple[str, list]:
    return (f"where {column} = ?", [campaign]) if campaign else ("", [])


def _fingerprint_fields(text: str | None) -> dict[str, str]:
    try:
        fp = json.loads(text or "{}")
    except ValueError:
        fp = {}
    return {k: str(fp.get(k, "")).strip() for k in ("device_name", "driver_version", "platform_name")}


# ---- data ---------------------------------------------------------------------------------


def overview(corpus: Corpus, campaign: str | None = None, cov: dict[str, Any] | None = None) -> dict[str, Any]:
    """Counts for the header: programs, runs, disagreement rows, buckets, the time span, the
    campaigns, and per target (and fingerprint): path, device, driver version, runs by status,
    judged lanes, driver seconds, judged lanes per driver-second, disagreement rows, buckets and
    the constructs and cells it covered (``cov``, corpus.coverage, computed if not given)."""
    where, params = _where(campaign)
    cov = coverage(corpus, campaign) if cov is None else cov
    runs = corpus.query(f"select count(*) as n, min(created) as t0, max(created) as t1 from runs {where}", params)[0]
    fingerprints = {r["fingerprint_id"]: r for r in corpus.query("select fingerprint_id, fingerprint from targets")}
    statuses: dict[str, dict[str, int]] = {}
    for r in corpus.query(f"select target, status, count(*) as n from runs {where} group by target, status", params):
        statuses.setdefault(r["target"], {})[r["status"]] = r["n"]
    found = {r["target"]: r for r in corpus.query(
        f"select target, count(*) as rows, count(distinct bucket) as buckets from disagreements {where} group by target",
        params)}
    targets = []
    for r in corpus.query(
        f"""select target, path, fingerprint_id, count(*) as runs, sum(judged) as judged, sum(mismatches) as mismatches,
                   sum(build_s + run_s) as driver_s
            from runs {where} group by target, fingerprint_id order by target, min(created)""", params):
        fp = _fingerprint_fields(fingerprints.get(r["fingerprint_id"], {}).get("fingerprint"))
        cells = cov.get(r["target"], {}).get("cells", [])
        driver_s = r["driver_s"] or 0.0
        targets.append({
            "target": r["target"], "path": r["path"], "fingerprint_id": r["fingerprint_id"], **fp,
            "runs": r["runs"], "statuses": statuses.get(r["target"], {}), "judged": r["judged"] or 0,
            "mismatches": r["mismatches"] or 0, "driver_s": driver_s,
            "judged_per_driver_s": (r["judged"] or 0) / driver_s if driver_s else 0.0,
            "rows": found.get(r["target"], {}).get("rows", 0), "buckets": found.get(r["target"], {}).get("buckets", 0),
            "constructs": len({c[0] for c in cells}), "cells": len(cells),
        })
    campaigns = corpus.query(
        f"select name, seed, started, updated, programs, checks from campaigns {_where(campaign, 'name')[0]} "
        "order by started", _where(campaign, "name")[1])
    return {
        "corpus": corpus.path, "campaign": campaign, "campaigns": campaigns,
        "programs": corpus.query(f"select count(*) as n from programs {where}", params)[0]["n"],
        "runs": runs["n"], "first_run": runs["t0"], "last_run": runs["t1"],
        "rows": corpus.query(f"select count(*) as n from disagreements {where}", params)[0]["n"],
        "buckets": corpus.query(f"select count(distinct bucket) as n from disagreements {where}", params)[0]["n"],
        "targets": targets,
    }


def _cumulative(times: np.ndarray, counts: np.ndarray, end: float) -> tuple[np.ndarray, np.ndarray]:
    """A step series from (time, count) pairs: (0, 0), the running total after each time, and
    the total held until ``end``; sampled down to :data:`MAX_POINTS` points."""
    order = np.argsort(times, kind="stable")
    x = np.concatenate([[0.0], times[order], [max(end, float(times.max(initial=0.0)))]])
    total = np.cumsum(counts[order])
    y = np.concatenate([[0], total, [total[-1] if len(total) else 0]])
    if len(x) > MAX_POINTS:
        keep = np.unique(np.linspace(0, len(x) - 1, MAX_POINTS).round().astype(int))
        x, y = x[keep], y[keep]
    return x, y


def _arrays(rows: list[dict], *columns: str) -> list[np.ndarray]:
    return [np.array([r[c] for r in rows]) for c in columns]


def timeline(corpus: Corpus, campaign: str | None = None) -> dict[str, Any]:
    """Cumulative disagreement rows and distinct buckets, per target and in all, against seconds
    since the first run: ``{"t0", "end", "rows": {target: (x, y)}, "buckets": {target: (x, y)},
    "all_buckets": (x, y)}`` (``t0`` is None for a corpus without runs). A bucket counts for a
    target from its first row on that target."""
    where, params = _where(campaign)
    span = corpus.query(f"select min(created) as t0, max(created) as t1 from runs {where}", params)[0]
    if span["t0"] is None:
        return {"t0": None, "end": 0.0, "rows": {}, "buckets": {}, "all_buckets": (np.zeros(0), np.zeros(0))}
    t0 = span["t0"]
    last = corpus.query(f"select max(created) as t from disagreements {where}", params)[0]["t"]
    end = max(span["t1"], last or span["t1"]) - t0
    out: dict[str, Any] = {"t0": t0, "end": end, "rows": {}, "buckets": {}}
    for key, sql in (
        ("rows", f"select target, created - ? as t, count(*) as n from disagreements {where} group by target, created"),
        ("buckets", f"select target, min(created) - ? as t, 1 as n from disagreements {where} group by bucket, target"),
    ):
        found = corpus.query(sql, [t0, *params])
        if not found:
            continue
        targets, t, n = _arrays(found, "target", "t", "n")
        for name in sorted(set(targets.tolist())):
            mask = targets == name
            out[key][name] = _cumulative(t[mask].astype(float), n[mask].astype(np.int64), end)
    first = corpus.query(f"select min(created) - ? as t from disagreements {where} group by bucket", [t0, *params])
    t = np.array([r["t"] for r in first], dtype=float)
    out["all_buckets"] = _cumulative(t, np.ones(len(t), dtype=np.int64), end)
    return out


def _bin_width(span: float) -> float:
    for w in BIN_SECONDS:
        if span / w <= MAX_BINS:
            return float(w)
    return float(math.ceil(span / MAX_BINS / 86400) * 86400)


def throughput(corpus: Corpus, campaign: str | None = None) -> dict[str, Any]:
    """Judged lanes per second of each target over time, in bins of ``width`` seconds (about
    :data:`MAX_BINS` over the span of the runs; a run counts in the bin where it ended):
    ``{"width", "x": bin starts (s since the first run), "seconds": each bin's duration,
    "rate": {target: lanes/s per bin}}``. The last bin, usually partial, lasts its elapsed part
    (at least half a bin)."""
    where, params = _where(campaign)
    span = corpus.query(f"select min(created) as t0, max(created) as t1 from runs {where}", params)[0]
    if span["t0"] is None:
        return {"width": 0.0, "x": np.zeros(0), "seconds": np.zeros(0), "rate": {}}
    t0, total = span["t0"], span["t1"] - span["t0"]
    width = _bin_width(total)
    nbins = int(total // width) + 1
    starts = np.arange(nbins) * width
    seconds = np.clip(total - starts, width / 2, width)
    found = corpus.query(
        f"""select target, cast((created - ?) / ? as integer) as bin, sum(judged) as judged
            from runs {where} group by target, bin""", [t0, width, *params])
    rate: dict[str, np.ndarray] = {}
    if found:
        targets, bins, judged = _arrays(found, "target", "bin", "judged")
        judged = np.array([j or 0 for j in judged], dtype=float)
        for name in sorted(set(targets.tolist())):
            mask = targets == name
            lanes = np.zeros(nbins)
            np.add.at(lanes, np.clip(bins[mask].astype(int), 0, nbins - 1), judged[mask])
            rate[name] = lanes / seconds
    return {"width": width, "x": starts, "seconds": seconds, "rate": rate}


def _type_order(column: tuple[str, int]) -> tuple[int, int]:
    names = list(SCALARS)
    return (names.index(column[0]) if column[0] in names else len(names), column[1])


def coverage_matrix(cov: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The coverage of corpus.coverage as matrices over the same axes for every target: a row per
    operation (the construct without its variant: ``swizzle`` for ``swizzle:hi``), a column per
    OpenCL type that some target used (``int``, ``int4``, in fuzz.types order), ``uses[target]``
    the uses per cell (0: not covered) and ``text[target]`` per cell the variants used and their
    uses (``<br>variants: hi 3, lo 1``; empty for an operation without variants)."""
    per: dict[str, dict[tuple[str, tuple[str, int]], dict[str, int]]] = {}
    for target, data in cov.items():
        cells = per.setdefault(target, {})
        for construct, type_name, width, uses in data["cells"]:
            key = (construct.split(":")[0], (type_name, int(width)))
            variant = construct.split(":", 1)[1] if ":" in construct else ""
            cells.setdefault(key, {})
            cells[key][variant] = cells[key].get(variant, 0) + int(uses)
    rows = sorted({r for cells in per.values() for r, _ in cells})
    columns = sorted({c for cells in per.values() for _, c in cells}, key=_type_order)
    r_index = {r: i for i, r in enumerate(rows)}
    c_index = {c: i for i, c in enumerate(columns)}
    uses: dict[str, np.ndarray] = {}
    text: dict[str, list[list[str]]] = {}
    for target, cells in per.items():
        z = np.zeros((len(rows), len(columns)), dtype=np.int64)
        t = [[""] * len(columns) for _ in rows]
        for (row, column), variants in cells.items():
            i, j = r_index[row], c_index[column]
            z[i, j] = sum(variants.values())
            named = sorted(((v, n) for v, n in variants.items() if v), key=lambda vn: -vn[1])
            if named:
                listed = ", ".join(f"{html.escape(v)} {n:,}" for v, n in named[:8])
                t[i][j] = f"<br>variants: {listed}" + (f" and {len(named) - 8} more" if len(named) > 8 else "")
        uses[target], text[target] = z, t
    return {"rows": rows, "columns": [f"{c}{w if w > 1 else ''}" for c, w in columns], "uses": uses, "text": text}


def error_matrix(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The largest errors (corpus.stats.largest_errors) as a matrix: a row per function, a column
    per driver, ``ulps`` the largest over the function's types (NaN: never measured), ``type`` the
    type it was on, ``accepted`` whether it was within the bound (OpenCL C 3.0 §7.4, ulp)."""
    functions = sorted({r["operation"] for r in rows})
    targets = sorted({r["target"] for r in rows})
    ulps = np.full((len(functions), len(targets)), np.nan)
    types = [[""] * len(targets) for _ in functions]
    accepted = np.ones(ulps.shape, dtype=bool)
    for r in rows:
        i, j = functions.index(r["operation"]), targets.index(r["target"])
        if not r["ulps"] <= ulps[i, j]:  # NaN compares false: the first fills
            ulps[i, j], types[i][j], accepted[i, j] = r["ulps"], r["type"], r["accepted"]
    return {"rows": functions, "columns": targets, "ulps": ulps, "type": types, "accepted": accepted}


# ---- figures ------------------------------------------------------------------------------


def _styles(targets: list[str]) -> dict[str, dict[str, Any]]:
    """A colour per driver family, solid for the OpenCL C path and dotted for the SPIR-V path."""
    families = sorted({family_of(t) for t in targets})
    palette = qualitative.D3
    return {t: {"color": palette[families.index(family_of(t)) % len(palette)],
                "dash": "dot" if t.endswith("/spirv") else "solid"} for t in targets}


def _ticks(top: int) -> list[int]:
    """Colour-bar ticks up to ``top`` uses: 1, 2, 5, 10, 20, 50 ... (1, 10, 100 ... past 1000)."""
    steps = (1, 2, 5) if top < 1000 else (1,)
    out = [m * 10 ** e for e in range(0, len(str(max(top, 1))) + 1) for m in steps]
    return [v for v in out if v <= max(top, 10)]


def _si(value: float) -> str:
    """``1.23M``, ``456k``, ``789``."""
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{suffix}"
    return f"{value:.3g}"


def _unit(span: float) -> tuple[str, float]:
    """The time unit of an axis over ``span`` seconds."""
    if span <= 180:
        return "s", 1.0
    if span <= 3 * 3600:
        return "min", 60.0
    return "h", 3600.0


def _empty(title: str, message: str, height: int = 260) -> go.Figure:
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, font={"size": 15}, xref="paper", yref="paper", x=0.5, y=0.5)
    fig.update_layout(title=title, height=height, xaxis={"visible": False}, yaxis={"visible": False},
                      template="plotly_white")
    return fig


def timeline_figure(data: dict[str, Any], styles: dict[str, dict[str, Any]]) -> go.Figure:
    """Two stacked step plots over a shared time axis: disagreement rows and distinct buckets."""
    if data["t0"] is None:
        return _empty(TITLES["timeline"], "no runs in this corpus")
    unit, scale = _unit(data["end"])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=("disagreement rows (cumulative)", "distinct buckets (cumulative)"))
    shown: set[str] = set()
    for row, key in ((1, "rows"), (2, "buckets")):
        for target, (x, y) in data[key].items():
            s = styles.get(target, {"color": "gray", "dash": "solid"})
            fig.add_trace(go.Scatter(
                x=x / scale, y=y, mode="lines", line={"shape": "hv", "width": 2, **s}, name=target,
                legendgroup=target, showlegend=target not in shown,
                hovertemplate=f"{html.escape(target)}: %{{y:,}} at %{{x:.1f}} {unit}<extra></extra>"), row=row, col=1)
            shown.add(target)
    x, y = data["all_buckets"]
    if len(data["buckets"]) > 1:
        fig.add_trace(go.Scatter(x=x / scale, y=y, mode="lines", name="all targets",
                                 line={"shape": "hv", "width": 2, "color": "black", "dash": "dash"},
                                 hovertemplate=f"all targets: %{{y:,}} buckets at %{{x:.1f}} {unit}<extra></extra>"),
                      row=2, col=1)
    if not data["rows"]:
        fig.add_annotation(text="no disagreements", showarrow=False, xref="paper", yref="paper", x=0.5, y=0.8)
    fig.update_xaxes(title_text=f"time since the first run ({unit})", row=2, col=1)
    fig.update_yaxes(rangemode="tozero", tickformat="~s")
    fig.update_layout(title=TITLES["timeline"], height=620, template="plotly_white", hovermode="closest",
                      legend={"title": {"text": "target"}}, margin={"t": 90})
    return fig


def throughput_figure(data: dict[str, Any], targets: list[dict[str, Any]],
                      styles: dict[str, dict[str, Any]]) -> go.Figure:
    """Judged lanes per second over time (lines, one per target) beside judged lanes per
    driver-second (build and run time) over the whole corpus (bars)."""
    if not data["rate"]:
        return _empty(TITLES["throughput"], "no runs in this corpus")
    span = float(data["x"][-1] + data["width"]) if len(data["x"]) else 0.0
    unit, scale = _unit(span)
    width = data["width"]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.66, 0.34], horizontal_spacing=0.14, subplot_titles=(
        f"judged lanes per second ({width:g}-s bins)", "judged lanes per driver-second"))
    centers = (data["x"] + width / 2) / scale
    for target, rate in data["rate"].items():
        s = styles.get(target, {"color": "gray", "dash": "solid"})
        fig.add_trace(go.Scatter(x=centers, y=rate, mode="lines+markers", name=target, legendgroup=target,
                                 line={"width": 2, **s}, marker={"size": 5, "color": s["color"]},
                                 hovertemplate=f"{html.escape(target)}: %{{y:,.0f}} lanes/s at %{{x:.1f}} {unit}"
                                               "<extra></extra>"), row=1, col=1)
    per: dict[str, list[float]] = {}
    for t in targets:  # a target with several fingerprints: add up its runs
        judged, seconds = per.get(t["target"], [0.0, 0.0])
        per[t["target"]] = [judged + t["judged"], seconds + t["driver_s"]]
    names = sorted(per, reverse=True)
    values = [per[n][0] / per[n][1] if per[n][1] else 0.0 for n in names]
    fig.add_trace(go.Bar(
        x=values, y=names, orientation="h", showlegend=False, text=[_si(v) for v in values],
        textposition="auto", marker={"color": [styles.get(n, {"color": "gray"})["color"] for n in names],
                                     "opacity": [0.55 if n.endswith("/spirv") else 1.0 for n in names]},
        hovertemplate="%{y}: %{x:,.0f} judged lanes per driver-second<extra></extra>"), row=1, col=2)
    fig.update_xaxes(title_text=f"time since the first run ({unit})", row=1, col=1)
    fig.update_yaxes(title_text="lanes / s", rangemode="tozero", tickformat="~s", row=1, col=1)
    fig.update_xaxes(tickformat="~s", row=1, col=2)
    fig.update_yaxes(automargin=True, row=1, col=2)
    fig.update_layout(title=TITLES["throughput"], height=460, template="plotly_white", hovermode="closest",
                      legend={"title": {"text": "target"}, "orientation": "h", "y": -0.25}, margin={"t": 90})
    return fig


def coverage_figure(matrix: dict[str, Any]) -> go.Figure:
    """A heat map per target (one shown at a time, a dropdown picks it): operation × type, the
    colour log10 of the uses, an uncovered cell left blank."""
    if not matrix["uses"]:
        return _empty(TITLES["coverage"], "no program ran to completion")
    targets = list(matrix["uses"])
    top = max(int(z.max(initial=0)) for z in matrix["uses"].values())
    zmax = max(math.log10(max(top, 1)), 1.0)
    ticks = [math.log10(v) for v in _ticks(top)]
    fig = go.Figure()
    for k, target in enumerate(targets):
        z = matrix["uses"][target].astype(float)
        with np.errstate(divide="ignore"):
            logz = np.where(z > 0, np.log10(np.maximum(z, 1)), np.nan)
        fig.add_trace(go.Heatmap(
            z=logz.astype(np.float32), x=matrix["columns"], y=matrix["rows"], text=matrix["text"][target],
            customdata=matrix["uses"][target].astype(np.int32), visible=k == 0, colorscale="Viridis",
            hovertemplate=f"<b>%{{y}}</b> on %{{x}}: %{{customdata:,}} uses%{{text}}<extra>{html.escape(target)}</extra>",
            zmin=0, zmax=zmax, xgap=1, ygap=1, hoverongaps=False, name=target,
            colorbar={"title": {"text": "uses"}, "tickvals": ticks,
                      "ticktext": [_si(round(10 ** t)) for t in ticks]}))
    title = f"{TITLES['coverage']}: operation × type on %s ({len(matrix['rows'])} operations, blank: never used)"
    buttons = [{"label": target, "method": "update",
                "args": [{"visible": [j == k for j in range(len(targets))]}, {"title.text": title % target}]}
               for k, target in enumerate(targets)]
    height = max(420, 230 + 15 * len(matrix["rows"]))
    top, bottom = 170, 20  # room for the title, the dropdown and the type labels above the map
    fig.update_layout(
        title={"text": title % targets[0], "x": 0.2, "xanchor": "left", "yref": "container", "y": 1 - 14 / height,
               "yanchor": "top"},
        template="plotly_white", height=height, plot_bgcolor="white", margin={"t": top, "b": bottom, "l": 10},
        updatemenus=[{"buttons": buttons, "direction": "down", "showactive": True, "x": 0.0, "xanchor": "left",
                      "y": 1 + 118 / (height - top - bottom), "yanchor": "top"}],
        xaxis={"side": "top", "tickangle": -60, "tickfont": {"size": 10}, "showgrid": False, "dtick": 1},
        yaxis={"autorange": "reversed", "tickfont": {"size": 11}, "showgrid": False, "automargin": True,
               "dtick": 1})
    return fig


def errors_figure(matrix: dict[str, Any]) -> go.Figure:
    """A heat map function × driver, the colour log10(1 + the largest error in ulps) over the
    function's types; ✗ marks a largest error beyond the spec's bound (OpenCL C 3.0 §7.4)."""
    if not matrix["rows"]:
        return _empty(TITLES["errors"], "no error in ulps measured (math area)")
    ulps, accepted = matrix["ulps"], matrix["accepted"]
    top = float(np.nanmax(ulps))
    ticks = [0.0] + [10.0 ** e for e in range(0, int(math.log10(max(top, 10.0))) + 1)]  # 0, 1, 10, 100 ...
    hover = [[f"{ulps[i, j]:,.3g} ulps on {matrix['type'][i][j]}, "
              f"{'within' if accepted[i, j] else 'beyond'} the bound" if matrix["type"][i][j] else ""
              for j in range(len(matrix["columns"]))] for i in range(len(matrix["rows"]))]
    marks = [["✗" if t and not accepted[i, j] else "" for j, t in enumerate(row)]
             for i, row in enumerate(matrix["type"])]
    with np.errstate(invalid="ignore"):
        z = np.log10(1.0 + ulps)
    fig = go.Figure(go.Heatmap(
        z=z.astype(np.float32), x=matrix["columns"], y=matrix["rows"], customdata=hover, text=marks,
        texttemplate="%{text}", colorscale="Reds", zmin=0, zmax=max(math.log10(1.0 + top), 1.0), xgap=1, ygap=1,
        hoverongaps=False, hovertemplate="<b>%{y}</b> on %{x}: %{customdata}<extra></extra>",
        colorbar={"title": {"text": "ulps"}, "tickvals": [math.log10(1.0 + v) for v in ticks],
                  "ticktext": [_si(v) for v in ticks]}))
    fig.update_layout(title=f"{TITLES['errors']} (the largest over the types; ✗: beyond the bound)",
                      template="plotly_white", height=max(360, 200 + 18 * len(matrix["rows"])),
                      plot_bgcolor="white", margin={"t": 120},
                      xaxis={"side": "top", "showgrid": False},
                      yaxis={"autorange": "reversed", "showgrid": False, "automargin": True, "dtick": 1})
    return fig


# ---- the page -----------------------------------------------------------------------------


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


def _header_html(ov: dict[str, Any]) -> str:
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
<h1>clfuzz dashboard</h1>
<p class=muted>corpus <code>{_e(ov['corpus'])}</code> · {'campaign <b>' + _e(ov['campaign']) + '</b>' if ov['campaign']
    else 'all campaigns'} · generated {_utc(time.time())}</p>
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


def _buckets_html(buckets: list[dict[str, Any]], reports: dict[str, str], out: Path,
                  reports_dir: Path | None) -> str:
    rows = []
    for b in buckets[:MAX_TABLE]:
        bid = b["id"]
        ident = f"<code>{_e(bid[:12])}</code>"
        cell = f'<a href="#bucket-{_e(bid)}">{ident}</a>' if bid in reports else ident
        extra = ""
        if reports_dir is not None:
            readme = reports_dir / bid / "README.md"
            extra = (f'<td><a href="{_e(Path(os.path.relpath(readme, out.parent)).as_posix())}">README</a></td>'
                     if readme.exists() else "<td></td>")
        rows.append(
            f"<tr><td>{cell}</td><td>{_e(b['title'])}</td><td>{_e(b['target'])}</td>"
            f"<td class=status-{_e(b['status'])}>{_e(b['status'])}</td><td>{_e(b['confirmation'])}</td>"
            f"<td>{'yes' if b['reduced'] else ''}</td><td class=n>{b['rows']:,}</td><td class=n>{b['programs']:,}</td>"
            f"<td class=t>{_short(b['first_seen'])}</td><td class=t>{_short(b['last_seen'])}</td>{extra}</tr>")
    shown = (f"{len(buckets):,} buckets, most rows first." if len(buckets) <= MAX_TABLE else
             f"The {MAX_TABLE:,} buckets with most rows of {len(buckets):,}; `clfuzz buckets` lists them all.")
    embedded = (f" The reports of all {len(reports):,} are on this page (bucket id links)." if len(reports) == len(buckets)
                else f" The reports of the first {len(reports):,} (bucket id links) are on this page, to keep it small; "
                     "<code>clfuzz report BUCKET -o DIR</code> writes any bucket's report.")
    head = ("<tr><th>bucket</th><th>what</th><th>target</th><th>status</th><th>confirmation</th><th>reduced</th>"
            "<th>rows</th><th>programs</th><th>first seen (UTC)</th><th>last seen (UTC)</th>"
            + ("<th>report</th>" if reports_dir is not None else "") + "</tr>")
    if not buckets:
        return "<p class=muted>No disagreements, no buckets.</p>"
    return f"<p>{shown}{embedded}</p>\n<table class=buckets>{head}\n" + "\n".join(rows) + "</table>"


def _errors_html(rows: list[dict[str, Any]]) -> str:
    """The table of the largest errors in ulps (corpus.stats.largest_errors), the expression in
    the input cell's tooltip."""
    if not rows:
        return "<p class=muted>No error in ulps measured (the math area records them).</p>"
    cells = "\n".join(
        f"<tr><td><code>{_e(r['operation'])}</code></td><td>{_e(r['type'])}</td><td>{_e(r['target'])}</td>"
        f"<td class=n>{r['ulps']:,.3f}</td><td>{_e(r['bound'])}</td>"
        f"<td{'' if r['accepted'] else ' class=status-new'}>{'yes' if r['accepted'] else 'no'}</td>"
        f"<td title=\"{_e(r['expression'])}\"><code>{_e(r['input'])}</code></td><td><code>{_e(r['reference'])}</code></td>"
        f"<td><code>{_e(r['actual_value'])}</code></td><td class=n>{r['measured']:,}</td></tr>"
        for r in rows[:MAX_TABLE])
    shown = "" if len(rows) <= MAX_TABLE else f" The first {MAX_TABLE:,} of {len(rows):,}; `clfuzz stats` lists them all."
    return (f"<p>The largest error in ulps (OpenCL C 3.0 §7.4) each driver made on each function and type, within the "
            f"bound or not, and the operands of the lane that made it (hover: the expression).{shown}</p>\n"
            "<table class=errors><tr><th>function</th><th>type</th><th>driver</th><th>ulps</th><th>bound</th>"
            "<th>within bound</th><th>input</th><th>reference</th><th>actual</th><th>measured</th></tr>\n"
            f"{cells}</table>")


def _reports_html(buckets: list[dict[str, Any]], reports: dict[str, str]) -> str:
    sections = []
    for b in buckets:
        if b["id"] not in reports:
            continue
        sections.append(
            f'<section class=report id="bucket-{_e(b["id"])}"><p class=muted>bucket <code>{_e(b["id"])}</code> · '
            f'{_e(b["target"])} · {_e(b["status"])} · <a href="#buckets">back to the table</a></p>'
            f"{_markdown_html(reports[b['id']])}</section>")
    return "\n".join(sections)


def dashboard_html(corpus: Corpus, out: Path, campaign: str | None = None, *, reports_dir: Path | None = None,
                   max_reports: int = MAX_REPORTS) -> str:
    """The page of :func:`write_dashboard`, as text (``out`` is where it will be written, for
    relative links)."""
    cov = coverage(corpus, campaign)
    ov = overview(corpus, campaign, cov)
    styles = _styles(sorted({t["target"] for t in ov["targets"]} | set(cov)))
    buckets = corpus.buckets(campaign)
    reports = bucket_reports(corpus, buckets, max_reports)
    errors = largest_errors(corpus, campaign)
    figures = [
        ("timeline", timeline_figure(timeline(corpus, campaign), styles)),
        ("throughput", throughput_figure(throughput(corpus, campaign), ov["targets"], styles)),
        ("coverage", coverage_figure(coverage_matrix(cov))),
        ("errors", errors_figure(error_matrix(errors))),
    ]
    plots = "\n".join(
        f'<h2 id="{name}">{heading}</h2>\n{_figure_html(fig, f"plot-{name}")}'
        for (name, fig), heading in zip(figures, ("Over time", "Throughput", "Coverage", "Largest errors")))
    title = f"clfuzz dashboard: {Path(corpus.path).name}" + (f" ({campaign})" if campaign else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<style>{_CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head><body>
<nav><a href="#top">overview</a><a href="#timeline">over time</a><a href="#throughput">throughput</a>\
<a href="#coverage">coverage</a><a href="#errors">largest errors</a><a href="#buckets">buckets</a><a href="#reports">reports</a></nav>
<main id="top">
{_header_html(ov)}
{plots}
<h3 id="largest-errors">{_e(LARGEST_TITLE)}</h3>
{_errors_html(errors)}
<h2 id="buckets">Buckets</h2>
{_buckets_html(buckets, reports, out, reports_dir)}
<h2 id="reports">Reports</h2>
<p>Each section is the <code>README.md</code> that <code>clfuzz report BUCKET -o DIR</code> writes beside the kernel,
<code>repro.py</code> and <code>program.json</code> it names.</p>
{_reports_html(buckets, reports) or '<p class=muted>No reports.</p>'}
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
