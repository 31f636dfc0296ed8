"""What the bug list shows of a bucket beyond its corpus row: the severity of the rule its
disagreements break (oracles.rules.SEVERITIES, declared with each rule) and the route its programs
took (fuzz.drivers.routes). The bug list (``clfuzz buckets``), the report, the dashboard and
``clfuzz ci`` read it."""

from __future__ import annotations

from typing import Iterable

from fuzz.drivers.routes import chain_of
from oracles.references import severity_of
from oracles.rules import SEVERITIES


def bucket_severity(bucket: dict) -> str:
    """The severity of a bucket row of corpus.store.Corpus.buckets (its signature's rule)."""
    return severity_of(bucket["signature"].get("rule", ""))


def with_severity(buckets: Iterable[dict]) -> list[dict]:
    """The buckets, each with its ``severity`` and the ``routes`` of its paths, most severe first
    (otherwise in the order given)."""
    out = [{**b, "severity": bucket_severity(b), "routes": [chain_of(b["signature"]["driver"], p) for p in b["paths"]]}
           for b in buckets]
    order = list(SEVERITIES)
    return sorted(out, key=lambda b: order.index(b["severity"]))
