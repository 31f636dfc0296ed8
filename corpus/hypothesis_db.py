"""Hypothesis's example database inside the corpus, so a campaign's search state travels with it.

Hypothesis keeps, per test, the examples worth starting from next time: with ``target()``
observations, the Pareto front of the best-scoring examples (hypothesis.internal.conjecture.pareto).
:class:`CorpusDatabase` stores them in the corpus's ``hypothesis`` table under a prefix (the
campaign and area), so resuming a campaign, or merging corpora (corpus.merge), carries the search
on where it was rather than starting from scratch.
"""

from __future__ import annotations

from typing import Iterable

from hypothesis.database import ExampleDatabase

from corpus.store import Corpus


class CorpusDatabase(ExampleDatabase):
    """Hypothesis's ``ExampleDatabase`` interface over a corpus, keys under ``prefix``."""

    def __init__(self, corpus: Corpus, prefix: str) -> None:
        super().__init__()
        self.corpus, self.prefix = corpus, prefix.encode() + b"/"

    def save(self, key: bytes, value: bytes) -> None:
        self.corpus.save_example(self.prefix + key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        yield from self.corpus.example_values(self.prefix + key)

    def delete(self, key: bytes, value: bytes) -> None:
        self.corpus.delete_example(self.prefix + key, value)


def examples_under(corpus: Corpus, prefix: bytes) -> tuple[tuple[bytes, bytes], ...]:
    """Every stored example (key, value) whose key starts with ``prefix`` (a campaign's searches:
    ``NAME@NODE/``, app.distributed)."""
    with corpus.lock:
        found = corpus.db.execute("select key, value from hypothesis where substr(key, 1, ?) = ?",
                                  [len(prefix), prefix])
        return tuple((bytes(k), bytes(v)) for k, v in found)
