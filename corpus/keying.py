"""Keying a corpus's disagreements into buckets (corpus.buckets.signature), on its database.

A row's bucket is created on first use as ``new`` (:func:`bucket_of`); rows are keyed anew when
their signature's inputs change (:func:`rebucket`: a confirmation, a culprit, a schema upgrade)
and every row when the signature itself changed (:func:`rekey`: corpus.buckets.SIGNATURE_VERSION),
a new bucket taking the status and note someone gave the buckets its rows came from
(:func:`inherit`). The callers hold the corpus's lock and transaction (corpus.store, corpus.schema).
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlite_utils import Database

from corpus.buckets import RESULT_KINDS, bucket_id, first_error, signature, title


def _now() -> float:
    return time.time()


def bucket_of(db: Database, row: dict[str, Any]) -> str:
    """The bucket of a disagreement row (corpus.buckets), created on first use as ``new``."""
    sig = signature(row)
    bid = bucket_id(sig)
    db["buckets"].insert(
        {"id": bid, "title": title(sig), "signature": json.dumps(sig, sort_keys=True), "target": row["target"],
         "status": "new", "note": "", "created": _now(), "changed": _now()},
        ignore=True,
    )
    return bid


def rebucket(db: Database, where: str, params: list | None = None) -> None:
    """Recompute the bucket of the rows ``where`` selects (schema upgrade, confirmation, culprit)."""
    for row in list(db["disagreements"].rows_where(where, params or [])):
        db["disagreements"].update(row["id"], {"bucket": bucket_of(db, row)})


def blame_rows(db: Database, bucket: dict[str, Any], culprit: str) -> str:
    """Key the rows of ``bucket`` (its buckets-table row) on ``culprit`` (JSON of
    corpus.buckets.CULPRIT_FIELDS) and return the bucket they went to: the one of its own first row
    (another driver's rows may share the culprit, never its bucket); where it has no rows left (an
    earlier reduction or join moved them), the bucket a row of its driver with that culprit keys to."""
    (first,) = db.execute("select min(id) from disagreements where bucket = ?", [bucket["id"]]).fetchone()
    db.execute("update disagreements set culprit = ? where bucket = ?", [culprit, bucket["id"]])
    rebucket(db, "culprit = ? and bucket = ?", [culprit, bucket["id"]])
    if first is not None:
        return db.execute("select bucket from disagreements where id = ?", [first]).fetchone()[0]
    kind = json.loads(bucket["signature"])["kind"]
    return bucket_of(db, {"target": bucket["target"], "kind": kind, "culprit": culprit})


def rekey(db: Database) -> None:
    """Every row into the bucket of the current signature (corpus.buckets.SIGNATURE_VERSION):
    a failure's message is taken anew from its run's log; a new bucket takes the status and
    note of the old buckets its rows came from (the one changed last, if they differ), and a
    reduction follows its bucket where all of the old bucket's rows went to one new one."""
    logs = {r["id"]: r["log"] for r in db.query(
        "select id, log from runs where id in (select run_id from disagreements where kind not in (?, ?))",
        list(RESULT_KINDS))}
    moved: dict[str, set[str]] = {}
    for row in list(db["disagreements"].rows):
        if row["kind"] not in RESULT_KINDS and logs.get(row["run_id"]):
            row["actual_value"] = first_error(logs[row["run_id"]]) or row["actual_value"]
        new = bucket_of(db, row)
        moved.setdefault(row["bucket"] or "", set()).add(new)
        db["disagreements"].update(row["id"], {"bucket": new, "actual_value": row["actual_value"]})
    old = {b["id"]: b for b in db["buckets"].rows}
    heirs: dict[str, list[dict]] = {}
    for before, after in moved.items():
        for new in after - {before}:
            if before in old:
                heirs.setdefault(new, []).append(old[before])
        if len(after) == 1 and before not in after:
            db.execute("update reductions set bucket = ? where bucket = ?", [next(iter(after)), before])
    for new, ancestors in heirs.items():
        inherit(db, new, ancestors)


def inherit(db: Database, bucket: str, ancestors: list[dict[str, Any]]) -> None:
    """A bucket that is still ``new`` takes the status and note of the ancestor buckets its
    rows came from that someone marked (the one changed last)."""
    marked = [b for b in ancestors if b["status"] != "new"]
    row = db["buckets"].get(bucket)
    if marked and row["status"] == "new":
        last = max(marked, key=lambda b: b["changed"] or 0)
        db["buckets"].update(bucket, {"status": last["status"], "note": last["note"], "changed": last["changed"]})
