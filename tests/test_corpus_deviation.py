"""Schema 5: disagreements carry their deviation (oracles.deviation) and its detail; an older
corpus is upgraded in place (its rows unclassified), and merging an old corpus into a new one
keeps every row."""

from __future__ import annotations

import sqlite3

from corpus.merge import merge
from corpus.store import (
    DEVIATION_COLUMNS,
    SCHEMA_VERSION,
    UNCLASSIFIED,
    Corpus,
    deviation_of,
)

ROW = {"program_id": "p", "target": "pocl", "fingerprint_id": "f", "path": "opencl-c", "buffer": "out0",
       "lane": 3, "work_item": 0, "kind": "wrong-result", "operation": "read_imagef", "src_type": "float4",
       "dst_type": "float4", "input_class": "normal", "rule": "image.layer", "actual_value": "1"}


def _run(corpus: Corpus, **changes) -> None:
    row = {**ROW, **changes}
    corpus.add_run({"program_id": row["program_id"], "target": row["target"], "fingerprint_id": "f",
                    "path": row["path"], "status": "ok", "checks": 1, "judged": 1, "mismatches": 1}, [row])


def _schema_4(path) -> None:
    """A corpus as clfuzz wrote it before schema 5: no deviation columns, version 4."""
    c = Corpus(path)
    _run(c, lane=1)
    c.db["disagreements"].transform(drop=set(DEVIATION_COLUMNS))
    c.db.execute("update meta set value = '4' where key = 'schema_version'")
    c.db.conn.commit()
    c.close()
    with sqlite3.connect(path) as conn:
        columns = {r[1] for r in conn.execute("pragma table_info(disagreements)")}
    assert not columns & set(DEVIATION_COLUMNS)


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
    path = tmp_path / "old.db"
    _schema_4(path)
    upgraded = Corpus(path)
    assert upgraded.query("select value from meta where key = 'schema_version'")[0]["value"] == str(SCHEMA_VERSION)
    old = upgraded.disagreements()
    assert len(old) == 1 and old[0]["deviation"] is None and deviation_of(old[0]) == UNCLASSIFIED
    _run(upgraded, lane=2, deviation="flushed-coordinate", deviation_detail="u = -1e-45 read as 0")
    assert {r["lane"]: r["deviation"] for r in upgraded.disagreements()} == {1: None, 2: "flushed-coordinate"}
    assert [b["rows"] for b in upgraded.buckets()] == [1, 1]  # the deviation is part of the key (unclassified apart)
    upgraded.close()
    again = Corpus(path)  # opening an upgraded corpus again changes nothing
    assert len(again.disagreements()) == 2
    again.close()


def test_merging_a_schema_4_corpus_into_a_schema_5_one(tmp_path):
    old = tmp_path / "old.db"
    _schema_4(old)
    into = Corpus(tmp_path / "new.db")
    _run(into, program_id="q", deviation="other-texel", deviation_detail="texel (2, 0)")
    counts = merge(into, old)
    assert counts.disagreements == 1
    assert sorted((r["program_id"], r["deviation"]) for r in into.disagreements()) == [("p", None), ("q", "other-texel")]
    into.close()
