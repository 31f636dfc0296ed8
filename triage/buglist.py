"""The bug list: each bucket as a driver engineer reads it, what needs a person first.

Beyond its corpus row (corpus.store.Corpus.buckets: rows, paths, driver versions, status,
reduced size), a bucket gets the severity of the rule its disagreements break
(oracles.rules.SEVERITIES, declared with each rule; ``letter`` where its reduced program is not a
defined one: triage.reduce's ``defined`` pass), the rule's section, and the routes its rows
took (fuzz.drivers.routes): per target its rows were seen on, from the target's stored fingerprint,
so a bucket seen on a release's ``il`` path says ``clCreateProgramWithIL``, not the system
driver's translated route. ``clfuzz buckets`` (and its ``--json``), the report, the dashboard
and ``clfuzz ci`` read it.
"""

from __future__ import annotations

import json
from typing import Iterable

from fuzz.drivers.routes import PATH_OPENCL_C, chain_of
from lang.maths import FUNCTIONS
from oracles import FAILURE, SEVERITIES, by_id, severity_of


def bucket_severity(bucket: dict) -> str:
    """The severity of a bucket row of corpus.store.Corpus.buckets: ``letter`` where its reduced
    program shows the disagreement only with an operation whose result the spec leaves undefined or
    implementation-defined (:func:`undefined_of`), else its signature's rule's."""
    if undefined_of(bucket):
        return "letter"
    return severity_of(bucket["signature"].get("rule", ""))


def undefined_of(bucket: dict) -> list[dict]:
    """What of a bucket's latest reduced program the spec leaves undefined or implementation-defined
    (triage.reduce.Reduction.undefined; triage.reduce.sentence says it): the disagreement did not
    show without it. Empty for a defined program, an unreduced bucket or an older reduction."""
    return (bucket.get("reduced") or {}).get("undefined") or []


def route_seen(lineage: str, path: str, fingerprint: dict) -> str:
    """How a program reached the target a row was seen on: its OpenCL C compiler, or the SPIR-V
    route its stored ``fingerprint`` states (``route_chain``, fuzz.drivers.discovery.spirv_target),
    else the route the device's reports give (fuzz.drivers.routes.route_of: a corpus written before
    fingerprints named their route)."""
    if path != PATH_OPENCL_C and fingerprint.get("route_chain"):
        return fingerprint["route_chain"]
    return chain_of(lineage, path, fingerprint.get("translator", ""), fingerprint)


def _targets(lineage: str, bucket: dict) -> list[dict]:
    """The bucket's ``targets`` (corpus.store.Corpus.buckets) without their fingerprints, each with
    its ``route``; a row without them (an older caller) gets one per path, from the lineage."""
    seen = bucket.get("targets") or [{"target": "", "path": p, "fingerprint": {}} for p in bucket["paths"]]
    return [{"target": t["target"], "path": t["path"], "route": route_seen(lineage, t["path"], t["fingerprint"])}
            for t in seen]


def section_of(rule: str) -> str:
    """Where the spec states a bucket's rule: the registered rule's section (a build error's,
    crash's or hang's: oracles.rules.FAILURE, which is not registered), and for a math
    function's rules keyed as one (corpus.buckets.rule_family: ``math.tanpi``) the function's
    declared section (lang.maths), which covers its bound and its special values."""
    found = FAILURE if rule == FAILURE.id else by_id(rule)
    if found:
        return found.section
    fn = rule.split(".")[1] if rule.startswith("math.") and rule.count(".") == 1 else ""
    return FUNCTIONS[fn].section if fn in FUNCTIONS else ""


def types_of(sig: dict) -> str:
    """A wrong value's element types as its signature keeps them (``float``, ``float -> signed
    integer``); nothing for a failure."""
    if "failure" in sig:
        return ""
    src, dst = sig.get("src_type", ""), sig.get("dst_type", "")
    return f"{src} -> {dst}" if src and src != dst else dst


def _without_driver(sig: dict) -> str:
    return json.dumps({k: v for k, v in sig.items() if k != "driver"}, sort_keys=True)


def bug_list(buckets: Iterable[dict]) -> list[dict]:
    """The buckets as bugs: each with ``driver``, ``operation`` (the failure's first error line
    for a build error, crash or timeout), its element ``types``, ``kind``, ``deviation``, ``rule``
    and its ``section`` (:func:`section_of`),
    ``severity``, the ``targets`` its rows were seen on (``{"target", "path", "route"}``) and their
    distinct ``routes`` (:func:`route_seen`), and the ``related`` buckets: those of other
    drivers that fail the same way (same signature but the driver; the local drivers share LLVM
    and, on their SPIR-V paths, the translator, so one upstream report may cover them); new ones
    first, then most severe, then most rows."""
    buckets = list(buckets)
    alike: dict[str, list[str]] = {}  # the signature without its driver -> bucket ids
    for b in buckets:
        alike.setdefault(_without_driver(b["signature"]), []).append(b["id"])
    out = []
    for b in buckets:
        sig = b["signature"]
        rule = sig.get("rule", "valid-program" if "failure" in sig else "")
        targets = _targets(sig["driver"], b)
        out.append({**b, "driver": sig["driver"], "operation": sig.get("operation") or sig.get("failure", ""),
                    "types": types_of(sig), "kind": sig["kind"], "deviation": sig.get("deviation", ""), "rule": rule,
                    "section": section_of(rule), "severity": bucket_severity(b),
                    "targets": targets, "routes": list(dict.fromkeys(t["route"] for t in targets)),
                    "related": [i for i in alike[_without_driver(sig)] if i != b["id"]]})
    order = list(SEVERITIES)
    return sorted(out, key=lambda b: (b["status"] != "new", order.index(b["severity"]), -b["rows"]))


def markdown(bugs: list[dict], limit: int = 60) -> str:
    """The bug list as a Markdown table (the campaign summary's first section): what needs a person
    first, one line per bucket, at most ``limit`` lines."""
    lines = [f"## Bug list: {len(bugs)} buckets (`clfuzz buckets`)", "",
             "| bucket | status | severity | driver | paths | faulty operation | deviation | rule | rows | reduced |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for b in bugs[:limit]:
        reduced = (f"{b['reduced']['statements']} st / {b['reduced']['work_items']} wi" if b["reduced"] else "pending")
        lines.append(f"| {b['id']} | {b['status']} | {b['severity']} | {b['driver']} | {', '.join(b['paths'])} "
                     f"| {(b['operation'] + (' ' + b['types'] if b['types'] else '')).replace('|', '/')} "
                     f"| {b['deviation'] or b['kind']} | {b['rule']} "
                     f"({b['section']}) | {b['rows']} | {reduced} |")
    if len(bugs) > limit:
        lines.append(f"| ... | {len(bugs) - limit} more | | | | | | | | |")
    return "\n".join(lines) + "\n"
