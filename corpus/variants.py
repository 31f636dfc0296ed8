"""Which programs are equivalence-modulo-inputs variants of which (table ``variants``, schema 14):
the named queries that write and read the link (campaign.flow_variants writes it before a variant
runs; triage.flow_report reads it)."""

from __future__ import annotations

import time
from typing import Any

from corpus import _sql
from corpus.store import Corpus


def add_variant(corpus: Corpus, program_id: str, original_id: str, kind: str) -> None:
    """Record that the stored program ``program_id`` is a variant of kind ``kind`` of
    ``original_id`` (idempotent)."""
    with corpus.lock, corpus.db.conn:
        corpus.db["variants"].insert({"program_id": program_id, "original_id": original_id, "kind": kind,
                                      "created": time.time()}, pk="program_id", ignore=True)


def variant_of(corpus: Corpus, program_id: str) -> dict[str, Any] | None:
    """The link of a variant (``original_id``, ``kind``), None for a program that is no variant."""
    found = _sql.rows(corpus, "select original_id, kind from variants where program_id = ?", [program_id])
    return found[0] if found else None


def variants_of(corpus: Corpus, original_id: str) -> list[dict[str, Any]]:
    """The variants of ``original_id`` (``program_id``, ``kind``) in the order they were stored."""
    return _sql.rows(corpus, "select program_id, kind from variants where original_id = ? order by created, program_id",
                     [original_id])
