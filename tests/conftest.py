"""Shared fixtures: an in-memory corpus, the corpora of past schemas, small policies, the local
drivers (skipped if absent), and a comparison of two computations of a program's expectations."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from corpus.store import Corpus
from lang.policy import Policy
from oracles import rule

SMALL = Policy(statements=6, global_size=32)

def same_expectations(a: dict, b: dict) -> bool:
    """Two computations of a program's expectations (buffer -> Expectation) accept the same bits in
    every lane, under the same rules (by id: each process numbers its rules apart)."""
    return a.keys() == b.keys() and all(
        len(a[k].allowed) == len(b[k].allowed) and all(np.array_equal(x, y) for x, y in zip(a[k].allowed, b[k].allowed))
        and np.array_equal(a[k].judged, b[k].judged) and np.array_equal(a[k].any_nan, b[k].any_nan)
        and [rule(int(i)).id for i in a[k].rule] == [rule(int(i)).id for i in b[k].rule]
        and len(a[k].ranges) == len(b[k].ranges)  # bounds by their bits: an unbounded lane's may be NaN
        and all(np.array_equal(_bits(x), _bits(y)) and np.array_equal(_bits(p), _bits(q))
                for (x, p), (y, q) in zip(a[k].ranges, b[k].ranges))
        for k in a)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint8)


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
