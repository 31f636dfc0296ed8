"""The bug list: each bucket as a driver engineer reads it, what needs a person first.

Beyond its corpus row (corpus.store.Corpus.buckets: rows, paths, driver versions, status,
reduced size), a bucket gets the severity of the rule its disagreements break
(oracles.rules.SEVERITIES, declared with each rule), the rule's section, and the routes its paths
took (fuzz.drivers.routes). ``clfuzz buckets`` (and its ``--json``), the report, the dashboard
and ``clfuzz ci`` read it.
"""

from __future__ import annotations

from typing import Iterable

from fuzz.drivers.routes import chain_of
from oracles.references import severity_of
from oracles.rules import RULES, SEVERITIES


def bucket_severity(bucket: dict) -> str:
    """The severity of a bucket row of corpus.store.Corpus.buckets (its signature's rule)."""
    return severity_of(bucket["signature"].get("rule", ""))


def _section(rule_id: str) -> str:
    return next((r.section for r in RULES if r.id == rule_id), "")


def bug_list(buckets: Iterable[dict]) -> list[dict]:
    """The buckets as bugs: each with ``driver``, ``operation`` (the failure's first error line
    for a build error, crash or timeout), ``kind``, ``deviation``, ``rule`` and its ``section``,
    ``severity`` and the ``routes`` of its ``paths``; new ones first, then most severe, then most
    rows."""
    out = []
    for b in buckets:
        sig = b["signature"]
        rule = sig.get("rule", "valid-program" if "failure" in sig else "")
        out.append({**b, "driver": sig["driver"], "operation": sig.get("operation") or sig.get("failure", ""),
                    "kind": sig["kind"], "deviation": sig.get("deviation", ""), "rule": rule,
                    "section": _section(rule), "severity": bucket_severity(b),
                    "routes": [chain_of(sig["driver"], p) for p in b["paths"]]})
    order = list(SEVERITIES)
    return sorted(out, key=lambda b: (b["status"] != "new", order.index(b["severity"]), -b["rows"]))
