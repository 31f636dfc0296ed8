"""Confirm a disagreement before it counts as wrong code: run it again on a fresh worker.

A fresh worker is a new process with an empty kernel cache of its own (PoCL's and Mesa's caches
live in a folder per worker, fuzz.drivers.pool), so nothing the first run built is reused. The
disagreement *reproduces* when the same lane disagrees again in the same way (a wrong or imprecise
result; the wrong bits themselves may differ: Oclgrind returns whatever its registers held for
some undefined conversions), or the run fails again with the same message (a build error, crash
or timeout).
One that does not is recorded as flaky (corpus.store.Corpus.confirm) and kept in a bucket of its
own. Where showing once proves little, the program is re-run several times and the bucket records
its *reproduction rate*, k of n (:func:`reruns`): atomics, whose interleavings differ from run to
run, and timeouts, which a loaded machine can cause.
"""

from __future__ import annotations

from typing import Any

from corpus.buckets import RESULT_KINDS, WRONG_CODE, failure_message
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from lang.ir import Program
from triage.observe import observe

RERUNS = {"atomics": 5, "timeout": 3}
"""Runs that measure a reproduction rate, by what the disagreement is (:func:`reruns`)."""


def reruns(program: Program, row: dict[str, Any]) -> int:
    """How many runs confirm ``row``: one, or a reproduction rate's worth (:data:`RERUNS`) for a
    program with atomic locations or a timeout."""
    if row["kind"] == "timeout":
        return RERUNS["timeout"]
    return RERUNS["atomics"] if program.shared else 1


def shows_again(row: dict[str, Any], rows: list[dict[str, Any]]) -> bool:
    """Whether the rows of a re-run show the disagreement ``row`` again: the same lane wrong in
    the same way, or the same failure (its first real error line, corpus.buckets.failure_message)."""
    if row["kind"] in RESULT_KINDS + (WRONG_CODE,):  # a flow program's wrong lane (campaign.flow)
        return any(r["buffer"] == row["buffer"] and r["lane"] == row["lane"] and r["kind"] == row["kind"]
                   for r in rows)
    return any(r["kind"] == row["kind"] and failure_message(r["actual_value"]) == failure_message(row["actual_value"])
               for r in rows)


def reproduction(program: Program, row: dict[str, Any], target: Target, worker, runs: int) -> int:
    """In how many of ``runs`` runs of ``program`` on ``worker`` (fresh: restarted by the caller)
    the disagreement ``row`` shows again."""
    return sum(shows_again(row, observe(program, target, worker) or []) for _ in range(runs))


def reproduces(corpus: Corpus, row: dict[str, Any], target: Target, timeout_s: float = 60.0) -> bool:
    """Whether the disagreement ``row`` shows again on a fresh worker of ``target``."""
    with Worker(target, timeout_s=timeout_s) as worker:
        return reproduction(corpus.program(row["program_id"]), row, target, worker, 1) > 0


def confirm(corpus: Corpus, row: dict[str, Any], target: Target) -> bool:
    """Re-run ``row``'s program on a fresh worker and record the answer for the rows of its bucket
    in that program (confirmed, or flaky); returns whether it reproduced."""
    ok = reproduces(corpus, row, target)
    corpus.confirm(row["program_id"], row["target"], row["bucket"], ok)
    return ok
