"""The data of the dashboard (app.dashboard), from a corpus: :func:`overview`, :func:`timeline`,
:func:`throughput`, :func:`coverage_matrix`, :func:`corner_matrix`, :func:`error_matrix`
aggregate the corpus's named queries (corpus.dashboard_queries) with numpy; they return plain
dicts and arrays."""

from __future__ import annotations

import html
import json
import math
from typing import Any

import numpy as np

from corpus.coverage import coverage
from corpus.dashboard_queries import (buckets_first_seen, buckets_first_seen_per_target, campaign_rows,
                                      dashboard_totals, found_by_target, judged_per_bin, last_disagreement,
                                      rows_over_time, run_span, run_statuses, runs_by_fingerprint)
from corpus.reads import target_fingerprints
from corpus.store import Corpus
from lang.corners import Corner, table
from lang.corners.conversions import dst_of
from lang.types import SCALARS

MAX_POINTS = 400
"""Points per line of the time series (a longer series is sampled, keeping its last point)."""
MAX_BINS = 40
BIN_SECONDS = (10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400)


def _fingerprint_fields(text: str | None) -> dict[str, str]:
    try:
        fp = json.loads(text or "{}")
    except ValueError:
        fp = {}
    return {k: str(fp.get(k, "")).strip() for k in ("device_name", "driver_version", "platform_name")}


def overview(corpus: Corpus, campaign: str | None = None, cov: dict[str, Any] | None = None) -> dict[str, Any]:
    """Counts for the header: programs, runs, disagreement rows, buckets, the time span, the
    campaigns, and per target (and fingerprint): path, device, driver version, runs by status,
    judged lanes, driver seconds, judged lanes per driver-second, disagreement rows, buckets and
    the constructs and cells it covered (``cov``, corpus.coverage, computed if not given)."""
    cov = coverage(corpus, campaign) if cov is None else cov
    runs = run_span(corpus, campaign)
    fingerprints = target_fingerprints(corpus)
    statuses = run_statuses(corpus, campaign)
    found = found_by_target(corpus, campaign)
    targets = []
    for r in runs_by_fingerprint(corpus, campaign):
        fp = _fingerprint_fields(fingerprints.get(r["fingerprint_id"]))
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
    totals = dashboard_totals(corpus, campaign)
    return {
        "corpus": corpus.path, "campaign": campaign, "campaigns": campaign_rows(corpus, campaign),
        "programs": totals["programs"],
        "runs": runs["n"], "first_run": runs["t0"], "last_run": runs["t1"],
        "rows": totals["rows"],
        "buckets": totals["buckets"],
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
    span = run_span(corpus, campaign)
    if span["t0"] is None:
        return {"t0": None, "end": 0.0, "rows": {}, "buckets": {}, "all_buckets": (np.zeros(0), np.zeros(0))}
    t0 = span["t0"]
    last = last_disagreement(corpus, campaign)
    end = max(span["t1"], last or span["t1"]) - t0
    out: dict[str, Any] = {"t0": t0, "end": end, "rows": {}, "buckets": {}}
    for key, query in (("rows", rows_over_time), ("buckets", buckets_first_seen_per_target)):
        found = query(corpus, t0, campaign)
        if not found:
            continue
        targets, t, n = _arrays(found, "target", "t", "n")
        for name in sorted(set(targets.tolist())):
            mask = targets == name
            out[key][name] = _cumulative(t[mask].astype(float), n[mask].astype(np.int64), end)
    t = np.array(buckets_first_seen(corpus, t0, campaign), dtype=float)
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
    span = run_span(corpus, campaign)
    if span["t0"] is None:
        return {"width": 0.0, "x": np.zeros(0), "seconds": np.zeros(0), "rate": {}}
    t0, total = span["t0"], span["t1"] - span["t0"]
    width = _bin_width(total)
    nbins = int(total // width) + 1
    starts = np.arange(nbins) * width
    seconds = np.clip(total - starts, width / 2, width)
    found = judged_per_bin(corpus, t0, width, campaign)
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
    OpenCL type that some target used (``int``, ``int4``, in lang.types order), ``uses[target]``
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
    per driver, ``ulps`` the largest over the function's types (NaN: never measured; inf: an
    infinite error), ``type`` the type of the lane that made it (``float4``), ``accepted`` whether
    it was within the bound (OpenCL C 3.0 §7.4, ulp)."""
    functions = sorted({r["operation"] for r in rows})
    targets = sorted({r["target"] for r in rows})
    ulps = np.full((len(functions), len(targets)), np.nan)
    types = [[""] * len(targets) for _ in functions]
    accepted = np.ones(ulps.shape, dtype=bool)
    for r in rows:
        i, j = functions.index(r["operation"]), targets.index(r["target"])
        if not r["ulps"] <= ulps[i, j]:  # NaN compares false: the first fills
            ulps[i, j], types[i][j], accepted[i, j] = r["ulps"], r["example_type"], r["accepted"]
    return {"rows": functions, "columns": targets, "ulps": ulps, "type": types, "accepted": accepted}


MISSING_SHOWN = 8
"""Missing corners named per cell of the corner matrix (the others counted)."""


def corner_kind(c: Corner) -> str:
    """What a corner's key is about (lang.corners): ``shapes`` (widths, scalar-argument
    overloads), ``result halves`` (Table 13's sums and products), a conversion's suffixes
    (``sat:rte``, ``rtz``, ``no suffix``: §6.4.3), an image read's kind (``2d_array``: its
    sampler configurations, lang.corners.images), an atomic's spelling (``explicit``: its
    memories, orders and scopes, lang.corners.atomics), else ``operand classes``."""
    if c.op == "read_image" or c.op.startswith("atomic_"):  # the image kind; the atomic's spelling
        return c.key.split(":")[0]
    if c.op == "convert":
        return c.key.split(":x=")[0].partition(":")[2] or "no suffix"
    if c.key.startswith("w"):
        return "shapes"
    return "result halves" if c.key.startswith(("sum=", "product=")) else "operand classes"


def corner_matrix(per_target: dict[str, tuple[tuple[Corner, ...], set[Corner]]]) -> dict[str, Any]:
    """Corner coverage (corpus.corners.reached_by_target: per target the corners it can run and
    those it reached) as matrices over the same axes for every target: a row per operation (a
    conversion per destination, ``convert_float``; in the table's order), a column per type (the
    first operand's, lang.types order), ``share[target]`` the share of a cell's corners reached
    (NaN: no corner there), ``counts[target]`` per cell ``"reached of total"``, ``text[target]``
    per cell reached/total by :func:`corner_kind` and the first missing keys, and ``summary``: per
    target ``total``, ``reached`` and ``missing`` (rows by corners missed, most first)."""
    def row_of(c: Corner) -> str:
        return f"convert_{dst_of(c.key)}" if c.op == "convert" else c.op

    order = {r: i for i, r in enumerate(dict.fromkeys(row_of(c) for c in table()))}
    per: dict[str, dict[tuple[str, str], dict[str, list]]] = {}
    for target, (can, have) in per_target.items():
        cells = per.setdefault(target, {})
        for c in can:
            kinds = cells.setdefault((row_of(c), c.type), {})
            counts = kinds.setdefault(corner_kind(c), [0, 0, []])
            counts[1] += 1
            if c in have:
                counts[0] += 1
            else:
                counts[2].append(c.key)
    rows = sorted({r for cells in per.values() for r, _ in cells}, key=order.__getitem__)
    columns = sorted({t for cells in per.values() for _, t in cells}, key=lambda t: _type_order((t, 1)))
    out: dict[str, Any] = {"rows": rows, "columns": columns, "share": {}, "counts": {}, "text": {}, "summary": []}
    for target, cells in per.items():
        share = np.full((len(rows), len(columns)), np.nan)
        counts = [[""] * len(columns) for _ in rows]
        text = [[""] * len(columns) for _ in rows]
        missed: dict[str, int] = {}
        for (row, tname), kinds in cells.items():
            i, j = rows.index(row), columns.index(tname)
            got, total = sum(k[0] for k in kinds.values()), sum(k[1] for k in kinds.values())
            missing = [key for k in kinds.values() for key in k[2]]
            share[i, j] = got / total
            counts[i][j] = f"{got:,} of {total:,}"
            by_kind = " · ".join(f"{html.escape(kind)} {k[0]}/{k[1]}" for kind, k in kinds.items())
            named = ", ".join(html.escape(k) for k in missing[:MISSING_SHOWN])
            more = f" and {len(missing) - MISSING_SHOWN:,} more" if len(missing) > MISSING_SHOWN else ""
            text[i][j] = f"<br>{by_kind}" + (f"<br>missing: {named}{more}" if missing else "")
            if missing:
                missed[row] = missed.get(row, 0) + len(missing)
        out["share"][target], out["counts"][target], out["text"][target] = share, counts, text
        can, have = per_target[target]
        out["summary"].append({"target": target, "total": len(can), "reached": len(have),
                               "missing": sorted(missed.items(), key=lambda rn: (-rn[1], order[rn[0]]))})
    return out
