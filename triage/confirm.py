"""Confirm a disagreement before it counts as wrong code: run it again on a fresh worker.

A fresh worker is a new process with an empty kernel cache of its own (PoCL's and Mesa's caches
live in a folder per worker, fuzz.drivers.pool), so nothing the first run built is reused. The
disagreement *reproduces* when the same lane disagrees again in the same way (a wrong or imprecise
result; the wrong bits themselves may differ: Oclgrind returns whatever its registers held for
some undefined conversions), or the run fails again with the same message (a build error, crash
or timeout).
One that does not is recorded as flaky (corpus.store.Corpus.confirm) and kept in a bucket of its
own.
"""

from __future__ import annotations

from typing import Any

from corpus.buckets import RESULT_KINDS, failure_message
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from triage.observe import observe


def reproduces(corpus: Corpus, row: dict[str, Any], target: Target, timeout_s: float = 60.0) -> bool:
    """Whether the disagreement ``row`` shows again on a fresh worker of ``target``."""
    with Worker(target, timeout_s=timeout_s) as worker:
        rows = observe(corpus.program(row["program_id"]), target, worker) or []
    if row["kind"] in RESULT_KINDS:
        return any(r["buffer"] == row["buffer"] and r["lane"] == row["lane"] and r["kind"] == row["kind"]
                   for r in rows)
    return any(r["kind"] == row["kind"] and failure_message(r["actual_value"]) == failure_message(row["actual_value"])
               for r in rows)


def confirm(corpus: Corpus, row: dict[str, Any], target: Target) -> bool:
    """Re-run ``row``'s program on a fresh worker and record the answer for the rows of its bucket
    in that program (confirmed, or flaky); returns whether it reproduced."""
    ok = reproduces(corpus, row, target)
    corpus.confirm(row["program_id"], row["target"], row["bucket"], ok)
    return ok
