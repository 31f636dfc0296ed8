"""Schema 5: disagreements carry their deviation (oracles.deviation) and its detail; an older
corpus is upgraded in place (its rows unclassified), and merging an old corpus into a new one
keeps every row."""

from __future__ import annotations

import sqlite3

from conftest import meta, old_corpus

from corpus.merge import merge
from corpus.schema import DEVIATION_COLUMNS, SCHEMA_VERSION
from corpus.store import UNCLASSIFIED, Corpus, deviation_of

ROW = {"program_id": "p", "target": "pocl", "fingerprint_id": "f", "path": "opencl-c", "buffer": "out0",
       "lane": 3, "work_item": 0, "kind": "wrong-result", "operation": "read_imagef", "src_type": "float4",
       "dst_type": "float4", "input_class": "normal", "rule": "image.layer", "actual_value": "1"}


def _run(corpus: Corpus, **changes) -> None:
    row = {**ROW, **changes}
    corpus.add_run({"program_id": row["program_id"], "target": row["target"], "fingerprint_id": "f",
                    "path": row["path"], "status": "ok", "checks": 1, "judged": 1, "mismatches": 1}, [row])


def _schema_4(folder) -> str:
    """A corpus clfuzz wrote at schema 4 (tests/data/corpora): no deviation columns."""
    path = old_corpus(4, folder)
    with sqlite3.connect(path) as conn:
        columns = {r[1] for r in conn.execute("pragma table_info(disagreements)")}
    assert not columns & set(DEVIATION_COLUMNS)
    return path


def test_schema_version_is_5():
    assert SCHEMA_VERSION >= 5


def test_rows_store_their_deviation_and_rows_without_one_are_unclassified(memory_corpus):
    _run(memory_corpus, deviation="other-layer", deviation_detail="the texel of layer 2 at the same coordinates")
    _run(memory_corpus, lane=4)  # a failure's or an atomic history's row: no deviation
    rows = {r["lane"]: r for r in memory_corpus.disagreements()}
    assert rows[3]["deviation"] == "other-layer" and "layer 2" in rows[3]["deviation_detail"]
    assert rows[4]["deviation"] is None and rows[4]["deviation_detail"] is None
    assert [deviation_of(rows[k]) for k in (3, 4)] == ["other-layer", UNCLASSIFIED]


def test_a_schema_4_corpus_is_upgraded_with_null_deviations(tmp_path):
    path = _schema_4(tmp_path)
    upgraded = Corpus(path)
    assert meta(path) == str(SCHEMA_VERSION)
    old = upgraded.disagreements()
    assert len(old) == 4 and all(r["deviation"] is None and deviation_of(r) == UNCLASSIFIED for r in old)
    buckets = len(upgraded.buckets())
    _run(upgraded, lane=2, deviation="flushed-coordinate", deviation_detail="u = -1e-45 read as 0")
    assert sorted(str(r["deviation"]) for r in upgraded.disagreements()) == ["None"] * 4 + ["flushed-coordinate"]
    assert len(upgraded.buckets()) == buckets + 1  # the deviation is part of the key (unclassified apart)
    upgraded.close()
    again = Corpus(path)  # opening an upgraded corpus again changes nothing
    assert len(again.disagreements()) == 5
    again.close()


def test_merging_a_schema_4_corpus_into_a_schema_5_one(tmp_path):
    old = _schema_4(tmp_path)
    into = Corpus(tmp_path / "new.db")
    _run(into, program_id="q", deviation="other-texel", deviation_detail="texel (2, 0)")
    counts = merge(into, old)
    assert counts.disagreements == 4
    assert sorted(str(r["deviation"]) for r in into.disagreements()) == ["None"] * 4 + ["other-texel"]
    into.close()
