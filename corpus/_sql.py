"""SQL over a corpus's connection, for the named queries of this package (corpus.reads,
corpus.bucket_queries, corpus.dashboard_queries, corpus.stats, ...): each statement under the
corpus's lock (campaign threads share the connection). Nothing outside corpus/ passes SQL."""

from __future__ import annotations

from typing import Any, Iterable

from corpus.store import Corpus


def rows(corpus: Corpus, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
    """The rows ``sql`` selects, as dicts."""
    with corpus.lock:
        return list(corpus.db.query(sql, list(params)))


def value(corpus: Corpus, sql: str, params: Iterable[Any] = ()) -> Any:
    """The first column of the first row ``sql`` selects (None for no row)."""
    with corpus.lock:
        found = corpus.db.execute(sql, list(params)).fetchone()
    return found[0] if found else None


def campaign_filter(campaign: str | None, word: str = "where", column: str = "campaign") -> tuple[str, list]:
    """The clause (``where campaign = ?``; ``and ...`` after another condition) and parameters
    that keep the rows of ``campaign``; nothing for None (every campaign)."""
    return (f"{word} {column} = ?", [campaign]) if campaign else ("", [])
