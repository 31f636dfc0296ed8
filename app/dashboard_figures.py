"""The plotly figures of the dashboard (app.dashboard), each drawn from the data of
app.dashboard_data: disagreements over time, throughput per driver, the coverage and corner
heat maps and the largest errors in ulps."""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative, sequential
from plotly.subplots import make_subplots

from fuzz.drivers.discovery import family_of

TITLES = {
    "timeline": "Disagreements and buckets over time",
    "throughput": "Throughput per driver",
    "coverage": "Construct coverage",
    "corners": "Corner coverage",
    "errors": "Largest error in ulps per function and driver",
}
"""The titles of the five figures (tests look for them in the rendered page)."""


def target_styles(targets: list[str]) -> dict[str, dict[str, Any]]:
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
    return _per_target(fig, targets, title, len(matrix["rows"]))


def _per_target(fig: go.Figure, targets: list[str], title: str, rows: int) -> go.Figure:
    """Lay out a figure of one heat map per target (in ``targets`` order, the first shown) with a
    dropdown that picks the target; ``title`` has a ``%s`` for the target's name."""
    buttons = [{"label": target, "method": "update",
                "args": [{"visible": [j == k for j in range(len(targets))]}, {"title.text": title % target}]}
               for k, target in enumerate(targets)]
    height = max(420, 230 + 15 * rows)
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


def corners_figure(matrix: dict[str, Any]) -> go.Figure:
    """A heat map per target (a dropdown picks it): operation × type, the colour the share of
    that cell's corners (lang.corners) reached, blank where the table has none; the hover gives
    the counts by kind and the first corners missing."""
    if not matrix["share"]:
        return _empty(TITLES["corners"], "no program ran to completion")
    targets = list(matrix["share"])
    fig = go.Figure()
    for k, target in enumerate(targets):
        fig.add_trace(go.Heatmap(
            z=matrix["share"][target].astype(np.float32), x=matrix["columns"], y=matrix["rows"],
            text=matrix["text"][target], customdata=matrix["counts"][target], visible=k == 0, colorscale="RdYlGn",
            zmin=0, zmax=1, xgap=1, ygap=1, hoverongaps=False, name=target,
            hovertemplate=f"<b>%{{y}}</b> on %{{x}}: %{{customdata}} corners reached%{{text}}"
                          f"<extra>{html.escape(target)}</extra>",
            colorbar={"title": {"text": "reached"}, "tickformat": ".0%"}))
    title = f"{TITLES['corners']}: share reached per operation × type on %s (blank: no corner)"
    return _per_target(fig, targets, title, len(matrix["rows"]))


CAP_ULPS = 1e4
"""Where the ulp colour scale ends: a larger finite error takes its top colour (the hover gives
its value). The largest bound the specification gives is 8192 ulp (the ``half_`` functions,
OpenCL C 3.0 §7.4 Table 65): an error beyond the cap is beyond every bound, a wrong value."""
INFINITE = "rgb(37,52,148)"
"""The colour of an infinite error (an infinite or NaN result where the reference is finite)."""


def ulp_scale(top: float, infinite: bool) -> dict[str, Any]:
    """The colour scale of errors in ulps up to the largest finite one, ``top``: ``z`` of an error
    is log10(1 + min(ulps, :data:`CAP_ULPS`)) (0 ulps at 0), ticks at 1, 10, 100, 1e3 ... up to
    the decade above ``top`` (``≥1e4`` where it is capped), and, where ``infinite``, a band of its
    own above them, coloured :data:`INFINITE` and labelled ``inf``: ``{"zmax", "z_inf",
    "colorscale", "tickvals", "ticktext"}``."""
    decades = max(1, math.ceil(math.log10(min(max(top, 1.0), CAP_ULPS))))
    values = [10.0 ** e for e in range(decades + 1)]
    zmax = math.log10(1.0 + values[-1])
    text = [f"{v:g}" if v < 1e3 else f"1e{e}" for e, v in enumerate(values)]
    if top > CAP_ULPS:
        text[-1] = f"≥{text[-1]}"
    z_inf = zmax * 1.12 if infinite else None
    end = zmax / z_inf if z_inf else 1.0
    steps = sequential.YlOrRd
    colorscale = [[end * k / (len(steps) - 1), c] for k, c in enumerate(steps)]
    if z_inf:
        colorscale += [[min(end + 1e-6, 1.0), INFINITE], [1.0, INFINITE]]
    return {"zmax": zmax, "z_inf": z_inf, "colorscale": colorscale,
            "tickvals": [math.log10(1.0 + v) for v in values] + ([(zmax + z_inf) / 2] if z_inf else []),
            "ticktext": text + (["inf"] if z_inf else [])}


def errors_figure(matrix: dict[str, Any]) -> go.Figure:
    """A heat map function × driver, the colour the largest error in ulps over the function's
    types on a log scale (:func:`ulp_scale`: capped, an infinite error in a colour of its own and
    marked ∞); ✗ marks a largest error beyond the spec's bound (OpenCL C 3.0 §7.4)."""
    if not matrix["rows"]:
        return _empty(TITLES["errors"], "no error in ulps measured (math area)")
    ulps, accepted = matrix["ulps"], matrix["accepted"]
    infinite = np.isinf(ulps)
    finite = ulps[np.isfinite(ulps)]
    scale = ulp_scale(float(finite.max(initial=0.0)), bool(infinite.any()))
    hover = [[f"{ulps[i, j]:,.3g} ulps on {matrix['type'][i][j]}, "
              f"{'within' if accepted[i, j] else 'beyond'} the bound" if matrix["type"][i][j] else ""
              for j in range(len(matrix["columns"]))] for i in range(len(matrix["rows"]))]
    marks = [["∞" if infinite[i, j] else "✗" if t and not accepted[i, j] else "" for j, t in enumerate(row)]
             for i, row in enumerate(matrix["type"])]
    with np.errstate(invalid="ignore"):
        z = np.log10(1.0 + np.minimum(ulps, CAP_ULPS))
    if scale["z_inf"]:
        z[infinite] = (scale["zmax"] + scale["z_inf"]) / 2
    fig = go.Figure(go.Heatmap(
        z=z.astype(np.float32), x=matrix["columns"], y=matrix["rows"], customdata=hover, text=marks,
        texttemplate="%{text}", colorscale=scale["colorscale"], zmin=0, zmax=scale["z_inf"] or scale["zmax"],
        xgap=1, ygap=1, hoverongaps=False, hovertemplate="<b>%{y}</b> on %{x}: %{customdata}<extra></extra>",
        colorbar={"title": {"text": "ulps"}, "tickvals": scale["tickvals"], "ticktext": scale["ticktext"]}))
    fig.update_layout(title=f"{TITLES['errors']} (the largest over the types; ✗: beyond the bound, ∞: infinite)",
                      template="plotly_white", height=max(360, 200 + 18 * len(matrix["rows"])),
                      plot_bgcolor="white", margin={"t": 120},
                      xaxis={"side": "top", "showgrid": False},
                      yaxis={"autorange": "reversed", "showgrid": False, "automargin": True, "dtick": 1})
    return fig
