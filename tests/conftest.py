"""Shared fixtures: an in-memory corpus, the corpora of past schemas, small policies, and the local
drivers (skipped if absent)."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from corpus.store import Corpus
from lang.policy import Policy

SMALL = Policy(statements=6, global_size=32)

OLD_CORPORA = Path(__file__).parent / "data" / "corpora"
"""A small corpus written by the clfuzz of each past schema: ``schema-N.sqlite`` (make_old_corpus.py there)."""


def old_corpus(schema: int, folder: Path) -> Path:
    """A copy in ``folder`` of the corpus of ``schema`` (opening one upgrades it in place)."""
    return Path(shutil.copy(OLD_CORPORA / f"schema-{schema}.sqlite", folder / f"schema-{schema}.sqlite"))


def meta(path: Path, key: str = "schema_version") -> str | None:
    """A value of a corpus file's ``meta`` table, read beside the corpus (what other tools read)."""
    with closing(sqlite3.connect(path)) as conn:
        found = conn.execute("select value from meta where key = ?", [key]).fetchone()
    return found[0] if found else None


@pytest.fixture
def memory_corpus():
    c = Corpus(":memory:")
    yield c
    c.close()


@pytest.fixture(scope="session")
def targets():
    from fuzz.drivers import discover

    found = discover()
    if not found:
        pytest.skip("no OpenCL driver installed (run `bash setup.sh test`)")
    return found
