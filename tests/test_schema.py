"""The corpus schema (corpus.schema): a corpus written by the clfuzz of each past schema
(tests/data/corpora/schema-N.sqlite) opens with today's, upgraded by the named migrations, its
rows all there and bucketed as today's signature keys them; a newer corpus is refused."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest
from conftest import OLD_CORPORA, meta, old_corpus
from sqlite_utils import Database

from corpus.buckets import SIGNATURE_VERSION, bucket_id, signature
from corpus import schema
from corpus.schema import MIGRATIONS, NAMES, SCHEMA_VERSION, CorpusError
from corpus.stats import largest_errors
from corpus.store import Corpus

SCHEMAS = range(1, SCHEMA_VERSION)
"""The schemas a corpus of tests/data/corpora was written at (by the code of its time)."""


def _layout(path) -> dict[str, tuple[set[str], set[tuple[str, ...]]]]:
    """Each table's columns and indexes (the migrations' own table aside)."""
    db = Database(path)
    out = {t.name: (set(t.columns_dict), {tuple(i.columns) for i in t.indexes}) for t in db.tables
           if t.name != MIGRATIONS.migrations_table}
    db.close()
    return out


def _applied(path) -> list[str]:
    """The names of the migrations recorded in the corpus file (sqlite_utils.migrations' table)."""
    db = Database(path)
    names = [m.name for m in MIGRATIONS.applied(db)]
    db.close()
    return names


def _counts(path) -> dict[str, int]:
    """Rows per table, read beside the corpus (without opening, so without upgrading, it)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return {t: conn.execute(f"select count(*) from {t}").fetchone()[0]
                for t in ("programs", "runs", "disagreements")}


def test_the_migrations_are_the_schema_history():
    assert NAMES == ["m001_tables", "m002_buckets", "m003_campaign_state", "m004_errors", "m005_deviation",
                     "m006_culprit", "m007_reproduction", "m008_release_checks", "m009_build_options", "m010_slow",
                     "m011_oracle_defects", "m012_reduction_defined", "m013_bugs", "m014_variants",
                     "m015_reduction_buckets"]
    assert SCHEMA_VERSION == len(NAMES) == 15
    assert {p.name for p in OLD_CORPORA.glob("*.sqlite")} == {f"schema-{n}.sqlite" for n in SCHEMAS}


@pytest.mark.parametrize("schema", SCHEMAS)
def test_a_corpus_of_each_past_schema_is_upgraded(schema, tmp_path):
    path = old_corpus(schema, tmp_path)
    assert meta(path) == str(schema)
    # corpora up to schema 8 were written before migrations were recorded; later ones record theirs
    assert (_applied(path) == NAMES[:schema] if schema > 8
            else MIGRATIONS.migrations_table not in Database(path).table_names())
    before = _counts(path)
    assert before == {"programs": 3, "runs": 4 + (schema >= 10), "disagreements": 4 + (schema >= 10)}
    fresh = tmp_path / "fresh.db"
    Corpus(fresh).close()

    corpus = Corpus(path)
    assert meta(path) == str(SCHEMA_VERSION) and meta(path, "signature_version") == str(SIGNATURE_VERSION)
    assert _applied(path) == NAMES
    assert _layout(path) == _layout(fresh)  # every table, column and index of today's schema
    assert _counts(path) == before
    rows = corpus.disagreements()
    assert all(r["bucket"] == bucket_id(signature(r)) for r in rows)
    buckets = corpus.buckets()
    assert sum(b["rows"] for b in buckets) == before["disagreements"]
    assert {b["id"] for b in buckets} == {r["bucket"] for r in rows}
    assert {r["kind"] for r in rows} == {"wrong-result", "build_error"} | ({"timeout"} if schema >= 10 else set())
    assert all(corpus.program(r["program_id"]).area == "conversions" for r in rows)
    assert corpus.campaign("nightly")["seed"] == 7
    if schema >= 2:  # a bucket someone marked keeps its status, its reduction follows it
        wrong = corpus.bucket(next(r["bucket"] for r in rows if r["kind"] == "wrong-result"))
        assert (wrong["status"], wrong["note"], wrong["confirmation"]) == ("reported", "PoCL issue 1", "confirmed")
        assert [r["bucket"] for r in corpus.reductions()] == [wrong["id"]]
        assert corpus.reductions()[0]["undefined"] is None and wrong["reduced"]["undefined"] is None  # not recorded
    if schema >= 3:
        assert corpus.campaign("nightly")["state"]["areas"] == {"conversions": {"next": 3}}
        assert corpus.example_values(b"nightly/conversions/key") == [b"example"]
    assert len(largest_errors(corpus)) == (schema >= 4)
    assert {r["deviation"] for r in rows} == ({"type-limit", "other", None} if schema >= 5 else {None})
    assert any(r["culprit"] for r in rows) == (schema >= 6)
    assert [b["reproduced"] for b in buckets if b["reproduced"]] == (["3/4"] if schema >= 7 else [])
    assert [v for b in buckets for v in b["versions"].values()] == (["absent"] if schema >= 8 else [])
    # runs of older corpora have no build options recorded (NULL): their buckets claim none
    assert {r["options"] for r in corpus.db["runs"].rows} == ({""} if schema >= 9 else {None})
    assert all((b["build_options"], b["options_unrecorded"]) == (([""], False) if schema >= 9 else ([], True))
               for b in buckets)
    assert [(b["signature"]["kind"], b["hang"]) for b in buckets if b["hang"] is not None] == (
        [("timeout", True)] if schema >= 10 else [])
    assert corpus.oracle_defects() == []  # m011: the table, empty
    corpus.close()

    again = Corpus(path)  # opening an upgraded corpus again changes nothing
    assert _applied(path) == NAMES and again.disagreements() == rows
    again.close()


def test_a_reduction_linked_to_another_drivers_bucket_is_linked_to_its_own(tmp_path):
    """m015: before it, Corpus.blame could link a reduction to another driver's bucket whose rows
    shared the culprit; the migration links it to the bucket of its reduced program's rows on its
    own target, and leaves a reduction that names its own driver's bucket as it is."""
    corpus = Corpus(tmp_path / "c.db")
    rows = {}
    for target in ("pocl-7.1", "rusticl"):
        corpus.add_target(target, "opencl-c", f"fp-{target}", {"device_name": target})
        row = {"program_id": "p", "target": target, "fingerprint_id": f"fp-{target}", "path": "opencl-c",
               "kind": "wrong-result", "buffer": "out0", "work_item": 0, "lane": 0, "operation": "add_sat",
               "src_type": "int", "dst_type": "int", "rule": "exact", "deviation": "wrong-value"}
        corpus.add_run({"program_id": "p", "target": target, "fingerprint_id": f"fp-{target}", "path": "opencl-c",
                        "status": "ok", "campaign": "c", "checks": 1, "judged": 1, "mismatches": 1}, [row])
        rows[target] = corpus.disagreements()[-1]["bucket"]
    assert len(set(rows.values())) == 2
    for i, (target, bucket) in enumerate([("pocl-7.1", rows["rusticl"]), ("rusticl", rows["rusticl"])]):
        corpus.add_reduction({"id": f"r{i}", "original_id": "p", "reduced_id": "p", "bucket": bucket,
                              "target": target, "seconds": 1.0, "candidates": 1, "size_before": "{}",
                              "size_after": "{}"})
    schema.m015_reduction_buckets(corpus.db)
    assert {r["target"]: r["bucket"] for r in corpus.reductions()} == rows
    corpus.close()


def test_a_new_corpus_runs_every_migration(tmp_path):
    Corpus(tmp_path / "new.db").close()
    assert _applied(tmp_path / "new.db") == NAMES and meta(tmp_path / "new.db") == str(SCHEMA_VERSION)


def test_a_corpus_of_a_newer_clfuzz_is_refused_with_one_line(tmp_path):
    newer = tmp_path / "newer.db"
    Corpus(newer).close()
    db = Database(newer)
    db["meta"].upsert({"key": "schema_version", "value": str(SCHEMA_VERSION + 1)}, pk="key")
    db.close()
    with pytest.raises(CorpusError, match=f"newer clfuzz \\(schema {SCHEMA_VERSION + 1}\\)") as e:
        Corpus(newer)
    assert "\n" not in str(e.value)

    unknown = tmp_path / "unknown.db"
    Corpus(unknown).close()
    db = Database(unknown)
    db[MIGRATIONS.migrations_table].insert({"migration_set": MIGRATIONS.name, "name": "m099_later",
                                             "applied_at": "2027-01-01"})
    db.close()
    with pytest.raises(CorpusError, match="newer clfuzz \\(migration m099_later\\)") as e:
        Corpus(unknown)
    assert "\n" not in str(e.value)
