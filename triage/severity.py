"""The severity of a bucket: that of the rule its disagreements break (oracles.rules.SEVERITIES,
declared with each rule), what the bug list, the report, the dashboard and ``clfuzz ci`` read."""

from __future__ import annotations

from typing import Iterable

from oracles.references import severity_of
from oracles.rules import SEVERITIES


def bucket_severity(bucket: dict) -> str:
    """The severity of a bucket row of corpus.store.Corpus.buckets (its signature's rule)."""
    return severity_of(bucket["signature"].get("rule", ""))


def with_severity(buckets: Iterable[dict]) -> list[dict]:
    """The buckets, each with its ``severity``, most severe first (otherwise in the order given)."""
    out = [{**b, "severity": bucket_severity(b)} for b in buckets]
    order = list(SEVERITIES)
    return sorted(out, key=lambda b: order.index(b["severity"]))
