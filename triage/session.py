"""Triage of stored disagreements: confirm each new bucket, then reduce it; the results go back
into the corpus.

``clfuzz reduce ID`` reduces one stored disagreement (:func:`reduce_stored`); a campaign ends with
:func:`triage`, which takes the buckets it found that are ``new`` (not reported, fixed or ignored:
the corpus's known list, corpus.buckets.STATUSES), most rows first, confirms each on a fresh worker
(triage.confirm), re-runs a confirmed timeout once at ten times its ceiling where the budget leaves
that long (triage.slow: a hang, or a slow run judged like any other) and reduces the confirmed ones
(triage.reduce), within a time budget.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from campaign.jobs import build_options
from corpus.buckets import RESULT_KINDS
from corpus.reads import PREFIX_FIELDS, bucket_rows, rows_by_prefix, rows_on_target
from corpus.store import Corpus, CorpusError
from fuzz.drivers import Target, Worker
from lang.ir import Program
from triage.confirm import confirm
from triage.observe import size
from triage.reduce import Reduction, reduce_program
from triage.slow import decide, undecided


def find_row(corpus: Corpus, ref: str) -> dict[str, Any]:
    """The disagreement ``ref`` names: a bucket (its first row), a disagreement or a program (its
    first disagreement), by id or unique id prefix."""
    for column in PREFIX_FIELDS:
        rows = rows_by_prefix(corpus, column, ref)
        if len({r[column] for r in rows}) > 1:
            raise CorpusError(f"{ref!r} matches several {column.replace('_', ' ')}s; give more characters")
        if rows:
            return rows[0]
    raise CorpusError(f"no bucket, disagreement or disagreeing program {ref!r} in {corpus.path}; "
                      f"`clfuzz buckets --corpus {corpus.path}` lists the buckets")


def target_of(row: dict[str, Any], targets: list[Target]) -> Target:
    for t in targets:
        if t.name == row["target"]:
            return t
    raise CorpusError(f"the disagreement is on {row['target']!r}, which is not installed here: "
                      f"`clfuzz drivers` lists what is")


def reduce_stored(corpus: Corpus, row: dict[str, Any], target: Target, worker: Worker,
                  budget_s: float = 120.0) -> Reduction | None:
    """Reduce the program of a stored disagreement, from the rows its run stored (the program is not
    run again first), and store the result beside it: the reduced program, its run's rows (bucketed
    like any other: a culprit's, wrong code's or an interaction's rows move their bucket,
    corpus.store.Corpus.blame) and a ``reductions`` row linking the two, with why it is not smaller
    and what of it the spec leaves undefined or implementation-defined
    (triage.reduce.Reduction.undefined). The reduced case showed the disagreement on a fresh worker
    (triage.reduce), so the bucket's rows of the program are confirmed. None when the disagreement
    did not show again on a fresh worker."""
    original = corpus.program(row["program_id"])
    stored = rows_on_target(corpus, row["program_id"], row["target"])
    reduction = reduce_program(original, row, target, worker, budget_s, stored or None)
    if reduction is None:
        return None
    corpus.confirm(row["program_id"], row["target"], row["bucket"], True)
    return store_reduction(corpus, row, target, reduction)


def store_reduction(corpus: Corpus, row: dict[str, Any], target: Target, reduction: Reduction) -> Reduction:
    """Store ``reduction`` of the bucket of ``row`` on ``target`` (:func:`reduce_stored`): the
    reduced program and its run's rows (:func:`store_case`; moved to the culprit's, wrong code's or
    interaction's bucket where it blames one) and the ``reductions`` row; returns it with its
    ``bucket``."""
    original, reduced = reduction.original, reduction.reduced
    store_case(corpus, reduced, target, reduction.rows, "reduce")
    bucket = corpus.blame(row["bucket"], reduction.blame or reduction.rows[0]) if reduction.culprit else row["bucket"]
    corpus.add_reduction(reduction_row(original, reduced, bucket, target, reduction.seconds, reduction.candidates,
                                       reduction.why_not_minimal, reduction.undefined, key=row["bucket"]))
    reduction.bucket = bucket
    return reduction


def reduction_row(original: Program, reduced: Program, bucket: str, target: Target, seconds: float = 0.0,
                  candidates: int = 0, why: str = "", undefined: list[dict] | None = None,
                  key: str | None = None) -> dict[str, Any]:
    """The ``reductions`` row of ``original`` reduced to ``reduced`` for ``bucket`` on ``target``
    (its id keyed on the bucket the reduction was asked for, ``key``, which a blame may have
    moved the rows from): the sizes, the time and candidates, why it is not smaller, what of it the
    specification leaves undefined."""
    return {"id": f"{original.id}:{key or bucket}", "original_id": original.id, "reduced_id": reduced.id,
            "bucket": bucket, "target": target.name, "seconds": round(seconds, 3), "candidates": candidates,
            "size_before": json.dumps(size(original)), "size_after": json.dumps(size(reduced)), "why": why,
            "undefined": json.dumps(undefined or [])}


def store_case(corpus: Corpus, program: Program, target: Target, rows: list[dict], campaign: str) -> None:
    """A program triage ran on ``target`` (a reduced case, a sibling's variant) and its rows,
    confirmed (triage ran it on a fresh worker, or on the worker of a run that did) and bucketed
    like any other, under ``campaign`` (``reduce``, ``siblings``)."""
    corpus.add_program(program, campaign)
    run = {"program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
           "path": target.path, "status": "ok" if rows[0]["kind"] in RESULT_KINDS else rows[0]["kind"],
           "options": build_options(program, target.path, target.lineage, target.fingerprint), "build_s": 0.0,
           "run_s": 0.0, "log": "", "campaign": campaign, "checks": 0, "judged": 0, "mismatches": len(rows)}
    for r in rows:
        r.update(program_id=program.id, fingerprint_id=target.fingerprint_id, path=target.path,
                 confirmation="confirmed")
    corpus.add_run(run, rows)


@dataclass
class TriageResult:
    confirmed: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    reduced: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # buckets the budget did not reach
    hang: list[str] = field(default_factory=list)  # timeouts that did not finish at ten times the ceiling
    finished: list[str] = field(default_factory=list)  # timeouts that did (slow)
    undecided: list[str] = field(default_factory=list)  # timeouts the budget left too little time to re-run


def triage(corpus: Corpus, targets: list[Target], campaign: str | None, budget_s: float, *,
           reduce: bool = True, reduce_budget_s: float = 60.0,
           on_event: Callable[[str, dict], None] | None = None) -> TriageResult:
    """Confirm, then reduce, the ``new`` unconfirmed buckets of ``campaign`` (see the module
    docstring) until ``budget_s`` is spent."""
    deadline = time.monotonic() + budget_s
    by_name = {t.name: t for t in targets}
    out = TriageResult()
    workers: dict[str, Worker] = {}
    try:
        for b in corpus.buckets(campaign):
            if b["status"] != "new" or b["confirmation"] == "flaky" or b["target"] not in by_name:
                continue
            if time.monotonic() > deadline:
                out.left.append(b["id"])
                continue
            rows = bucket_rows(corpus, b["id"])  # now: confirming may have moved rows
            if not rows:
                continue
            row = rows[0]
            target = by_name[b["target"]]
            if b["confirmation"] != "confirmed":
                if not confirm(corpus, row, target):
                    out.flaky.append(b["id"])
                    _tell(on_event, "flaky", b)
                    continue
                out.confirmed.append(b["id"])
                _tell(on_event, "confirmed", b)
            worker = workers.get(target.name) or workers.setdefault(target.name, Worker(target))
            if undecided(row):
                verdict = decide(corpus, row, target, worker, deadline - time.monotonic(), worker.timeout_s)
                what = "undecided" if verdict is None else "hang" if verdict["hang"] else "finished"
                getattr(out, what).append(b["id"])
                _tell(on_event, what, b)
            if reduce and not b["reduced"]:
                left = deadline - time.monotonic()
                if reduce_stored(corpus, row, target, worker, min(reduce_budget_s, max(left, 1.0))) is not None:
                    out.reduced.append(b["id"])
                    _tell(on_event, "reduced", b)
    finally:
        for w in workers.values():
            w.close()
    return out


def _tell(on_event, what: str, bucket: dict) -> None:
    if on_event is not None:
        on_event(what, bucket)
