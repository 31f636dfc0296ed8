"""Summaries of a corpus: per target, the runs, checks and the kinds of disagreement found.

A *kind* is (target, path, kind, operation spelling, source type, destination type): the unit a
person reads in a summary (``convert_int_sat_rte`` from ``float`` to ``int`` on rusticl). Each
kind comes with its count and one example (inputs, expected and actual, rule and section).

The math area also records, per statement and run, the largest error in ulps (OpenCL C 3.0 §7.4,
ulp) whether within the bound or not (table ``errors``); :func:`largest_errors` keeps the largest
per function, element type and driver (over the vector widths), with the input that produced it.
"""

from __future__ import annotations

import json
from typing import Any

from corpus import _sql
from corpus.coverage import coverage
from corpus.store import Corpus
from lang.maths import FUNCTIONS

LARGEST_TITLE = "Largest observed error (ulps) per function, element type and driver"


def summarize(corpus: Corpus, campaign: str | None = None) -> dict[str, Any]:
    """A JSON-able summary of the corpus (or of one campaign in it); ``oracle_defects`` counts the
    lanes whose disagreement the re-derivation did not confirm (campaign.rederive)."""
    where, params = ("where campaign = ?", [campaign]) if campaign else ("", [])
    targets: dict[str, Any] = {}
    for row in _sql.rows(
        corpus, f"""select target, path, count(distinct program_id) as programs, count(*) as runs,
                   sum(checks) as checks, sum(judged) as judged, sum(mismatches) as mismatches,
                   sum(build_s + run_s) as driver_s, sum(build_s) as build_s, sum(run_s) as run_s
            from runs {where} group by target, path order by target, path""",
        params,
    ):
        key = row["target"]
        targets[key] = {k: row[k] for k in ("path", "programs", "runs", "checks", "judged", "mismatches")}
        for k in ("driver_s", "build_s", "run_s"):
            targets[key][k] = round(row[k] or 0.0, 3)
        targets[key]["checks_per_driver_s"] = round((row["judged"] or 0) / row["driver_s"], 1) if row["driver_s"] else 0.0
        targets[key]["statuses"] = {}
        targets[key]["kinds"] = []
    by_minute, running = judged_by_minute(corpus, campaign)
    for key, minutes in by_minute.items():
        targets.setdefault(key, {"statuses": {}, "kinds": []})["judged_by_minute"] = minutes
    for row in _sql.rows(corpus, f"select target, status, count(*) as n from runs {where} group by target, status",
                         params):
        targets.setdefault(row["target"], {"statuses": {}, "kinds": []})["statuses"][row["status"]] = row["n"]
    for row in _sql.rows(
        corpus, f"""select target, path, kind, operation, src_type, dst_type, count(*) as rows,
                   count(distinct program_id) as programs, min(created) as first_seen, max(created) as last_seen,
                   min(id) as example_id
            from disagreements {where}
            group by target, path, kind, operation, src_type, dst_type
            order by target, rows desc""",
        params,
    ):
        ex = _sql.rows(corpus, "select * from disagreements where id = ?", [row["example_id"]])[0]
        targets.setdefault(row["target"], {"statuses": {}, "kinds": []})["kinds"].append({
            "kind": row["kind"], "operation": row["operation"], "src_type": row["src_type"],
            "dst_type": row["dst_type"], "path": row["path"], "count": row["rows"], "programs": row["programs"],
            "first_seen": row["first_seen"], "last_seen": row["last_seen"],
            "example": {
                "program_id": ex["program_id"], "expression": ex["expression"],
                "inputs": json.loads(ex["inputs"] or "{}"), "expected": ex["expected_value"],
                "expected_bits": ex["expected"], "allowed": json.loads(ex["allowed"] or "[]"),
                "actual": ex["actual_value"], "actual_bits": ex["actual"], "rule": ex["rule"],
                "rule_text": ex["rule_text"], "section": ex["section"], "input_class": ex["input_class"],
                "work_item": ex["work_item"],
            },
        })
    programs = _sql.rows(corpus, f"select count(*) as n from programs {where}", params)[0]["n"]
    buckets = corpus.buckets(campaign)
    stored = corpus.campaign(campaign) if campaign else None
    minutes = round((stored["updated"] - stored["started"]) / 60) if stored else None  # the minutes it ran
    return {"corpus": corpus.path, "campaign": campaign, "minutes": minutes, "running_minutes": sorted(running),
            "programs": programs, "targets": targets,
            "paths": compare_paths(corpus, campaign), "coverage": coverage(corpus, campaign),
            "largest_errors": largest_errors(corpus, campaign),
            "oracle_defects": len(corpus.oracle_defects(campaign)),
            "buckets": {"total": len(buckets),
                        **{k: sum(b["confirmation"] == k for b in buckets) for k in ("confirmed", "flaky")},
                        "reduced": sum(b["reduced"] is not None for b in buckets),
                        "new": sum(b["status"] == "new" for b in buckets)}}


def judged_by_minute(corpus: Corpus, campaign: str | None = None) -> tuple[dict[str, list[int]], set[int]]:
    """Per target, the lanes judged in each minute of its campaign (a run's lanes count in the minute
    it ended; minute 0 is the campaign's first), from minute 0 to the last in which it ended a run;
    and the minutes in which any target ended a run of any status (the campaign was running: a
    resumed campaign's pause is not a stall). Over several campaigns, minute k of each is summed."""
    where, params = ("where r.campaign = ?", [campaign]) if campaign else ("", [])
    out: dict[str, list[int]] = {}
    active: set[int] = set()
    for row in _sql.rows(
        corpus, f"""select r.target, cast((r.created - c.started) / 60 as integer) as minute, sum(r.judged) as judged
            from runs r join campaigns c on c.name = r.campaign {where}
            group by r.target, minute order by r.target, minute""", params):
        if row["minute"] is None or row["minute"] < 0:
            continue
        active.add(row["minute"])
        minutes = out.setdefault(row["target"], [])
        minutes.extend([0] * (row["minute"] + 1 - len(minutes)))
        minutes[row["minute"]] += row["judged"] or 0
    return out, active


def stall_line(summary: dict[str, Any]) -> str | None:
    """One line naming each target that judged no lane in a minute of the summary's campaign in
    which some target ended a run (``running_minutes``: :func:`judged_by_minute`), minutes numbered
    from 1; None without a campaign, or when every target judged lanes in every such minute."""
    whole = summary.get("minutes")
    if not whole:
        return None
    running = [m for m in summary.get("running_minutes", []) if m < whole]
    named = []
    for name, t in summary["targets"].items():
        lanes = t.get("judged_by_minute", [])
        if stalled := [m + 1 for m in running if m >= len(lanes) or not lanes[m]]:
            named.append(f"{name} (minute{'s' if len(stalled) > 1 else ''} {', '.join(map(str, stalled))})")
    return f"judged no lane in a minute of {whole}: {'; '.join(named)}" if named else None


def largest_errors(corpus: Corpus, campaign: str | None = None) -> list[dict[str, Any]]:
    """The largest error in ulps (OpenCL C 3.0 §7.4, ulp) observed per (driver, function, element
    type), over the vector widths, within the bound or not: the row of the group's largest
    ``ulps`` (the first stored on a tie; ``inf`` where a result was infinite or NaN for a finite
    reference) with its bound, rule, expression, operands (``inputs`` decoded, ``input`` in short:
    :func:`operand_text`), reference and actual value; ``type`` is the element type (``float``),
    ``example_type`` the type of the worst lane (``float4``), ``types`` every type measured (by
    width) and ``measured`` the group's rows (one per run and statement output). Sorted by
    operation, element type, target."""
    where, params = ("and campaign = ?", [campaign]) if campaign else ("", [])
    group = "target, operation, rtrim(type, '0123456789')"
    types = {(r["target"], r["operation"], r["element"]): sorted(r["types"].split(","), key=_width)
             for r in _sql.rows(corpus, f"""select target, operation, rtrim(type, '0123456789') as element,
                                           group_concat(distinct type) as types
                                           from errors where ulps is not null {where} group by {group}""", params)}
    out = []
    for r in _sql.rows(
        corpus, f"""select * from (
                select e.*, rtrim(type, '0123456789') as element,
                       row_number() over (partition by {group} order by ulps desc, id) as rank,
                       count(*) over (partition by {group}) as measured
                from errors e where ulps is not null {where})
            where rank = 1 order by operation, element, target""",
        params,
    ):
        inputs = json.loads(r["inputs"] or "{}")
        out.append({
            **{k: r[k] for k in ("target", "path", "operation", "bound", "rule", "expression", "reference",
                                 "actual_value", "program_id", "work_item", "lane", "measured")},
            "type": r["element"], "example_type": r["type"], "types": types[r["target"], r["operation"], r["element"]],
            "ulps": round(r["ulps"], 3), "accepted": bool(r["accepted"]),
            "inputs": inputs, "input": operand_text(inputs, r["operation"], r["type"], r["lane"]),
        })
    return out


def _width(type_name: str) -> int:
    """The vector width of an OpenCL type's name (``float4``: 4, ``float``: 1)."""
    return int(type_name[len(type_name.rstrip("0123456789")):] or 1)


def operand_text(inputs: dict[str, Any], operation: str | None, type_name: str | None, lane: int | None) -> str:
    """The operands behind one result lane, short: ``in0=1.5, in1=-0x1p-149`` (names as the
    judge stores them, ``literal`` for a constant). A vector operand gives its value in that lane,
    except for the geometric functions (OpenCL C 3.0 §6.15.5), whose every result lane depends on
    every operand lane: there it gives all its lanes, ``(1, 2, 3)``."""
    type_name, operation = type_name or "", operation or ""
    width = _width(type_name)
    j = (lane or 0) % (4 if width == 3 else width)  # a 3-vector takes 4 lanes in memory (§6.3.5)
    whole = getattr(FUNCTIONS.get(operation.split(" ")[0]), "group", "") == "geometric"
    named = [(name, v) for name, v in inputs.items() if name != "literals"]
    named += [("literal", v) for v in inputs.get("literals", [])]
    parts = []
    for name, v in named:
        values = v.get("values", []) if isinstance(v, dict) else [str(v)]
        if len(values) > 1:
            shown = f"({', '.join(values)})" if whole else values[min(j, len(values) - 1)]
        else:
            shown = values[0] if values else "?"
        parts.append(f"{name}={shown}")
    return ", ".join(parts)


def compare_paths(corpus: Corpus, campaign: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Which front end deviates, per driver and kind: over the programs a driver ran through both
    its OpenCL C and its SPIR-V path, each disagreeing lane (program, buffer, work-item, lane) is
    wrong on the OpenCL C path only, on the SPIR-V path only, or on both (then the fault lies
    past the front ends, in the driver's shared back end). Counts are over stored rows, which a
    run caps per statement alike on both paths."""
    where, params = ("and campaign = ?", [campaign]) if campaign else ("", [])
    both = {(r["driver"], r["program_id"]) for r in _sql.rows(
        corpus, f"""select replace(target, '/spirv', '') as driver, program_id from runs
            where status = 'ok' {where} group by driver, program_id having count(distinct path) = 2""", params)}
    lanes: dict[tuple, set[str]] = {}
    kinds: dict[tuple, tuple] = {}
    for r in _sql.rows(
        corpus, f"""select replace(target, '/spirv', '') as driver, path, program_id, buffer, work_item, lane,
                   operation, src_type, dst_type from disagreements where 1 {where}""", params):
        if (r["driver"], r["program_id"]) not in both:
            continue
        key = (r["driver"], r["program_id"], r["buffer"], r["work_item"], r["lane"])
        lanes.setdefault(key, set()).add(r["path"])
        kinds[key] = (r["operation"], r["src_type"], r["dst_type"])
    table: dict[tuple, dict[str, int]] = {}
    for key, paths in lanes.items():
        which = "both" if len(paths) == 2 else f"{next(iter(paths))} only"
        counts = table.setdefault((key[0], *kinds[key]), {"opencl-c only": 0, "spirv only": 0, "both": 0})
        counts[which] += 1
    out: dict[str, list[dict[str, Any]]] = {}
    for (driver, operation, src, dst), counts in sorted(table.items()):
        out.setdefault(driver, []).append({"operation": operation, "src_type": src, "dst_type": dst, **counts})
    return out


def markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown, for the file a campaign leaves beside its corpus."""
    b = summary.get("buckets", {})
    lines = [f"# clfuzz summary: {summary['corpus']}", "", f"Programs stored: {summary['programs']}", "",
             f"Buckets (distinct disagreements, `clfuzz buckets`): {b.get('total', 0)}, {b.get('new', 0)} new; "
             f"{b.get('confirmed', 0)} confirmed on a fresh worker, {b.get('flaky', 0)} flaky, "
             f"{b.get('reduced', 0)} reduced", ""]
    lines.append("| target | runs | judged lanes | mismatching lanes | checks per driver-second | statuses | kinds "
                 "| constructs / cells covered |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for name, t in summary["targets"].items():
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(t.get("statuses", {}).items()))
        cells = summary.get("coverage", {}).get(name, {}).get("cells", [])
        lines.append(f"| {name} | {t.get('runs', 0)} | {t.get('judged', 0)} | {t.get('mismatches', 0)} | "
                     f"{t.get('checks_per_driver_s', 0)} | {statuses} | {len(t.get('kinds', []))} "
                     f"| {len({c[0] for c in cells})} / {len(cells)} |")
    if stalled := stall_line(summary):
        lines += ["", stalled[0].upper() + stalled[1:]]
    if summary.get("paths"):
        lines += ["", "## Which front end deviates (lanes of programs run through both paths)", "",
                  "| driver | operation | types | OpenCL C only | SPIR-V only | both |", "|---|---|---|---|---|---|"]
        for driver, rows in summary["paths"].items():
            for r in rows:
                lines.append(f"| {driver} | {r['operation']} | {r['src_type']} → {r['dst_type']} | "
                             f"{r['opencl-c only']} | {r['spirv only']} | {r['both']} |")
    if summary.get("largest_errors"):
        lines += ["", f"## {LARGEST_TITLE}", "",
                  "| function | type | driver | ulps | within bound | worst on | input | bound |",
                  "|---|---|---|---|---|---|---|---|"]
        for e in summary["largest_errors"]:
            lines.append(f"| {e['operation']} | {e['type']} | {e['target']} | {e['ulps']:g} | "
                         f"{'yes' if e['accepted'] else '**no**'} | {e['example_type']} | `{e['input']}` | {e['bound']} |")
    for name, t in summary["targets"].items():
        if not t.get("kinds"):
            continue
        lines += ["", f"## {name}: {len(t['kinds'])} kinds of disagreement", ""]
        for k in t["kinds"]:
            ex = k["example"]
            lines.append(f"- **{k['operation']}** {k['src_type']} → {k['dst_type']} ({k['kind']}, {k['count']} rows "
                         f"in {k['programs']} programs): `{ex['expression']}` expected {ex['expected']} "
                         f"got {ex['actual']}; inputs {json.dumps(ex['inputs'])}; rule: {ex['rule_text']} "
                         f"({ex['section']})")
    return "\n".join(lines) + "\n"
