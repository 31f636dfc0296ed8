"""A flow bucket reduced and stored: the smallest kernel that still fails as its rows say.

A flow program's wrong lane (kind ``wrong-code``, campaign.flow) or failure (a crash, a build
error) is reduced at the structure level (triage.reduce.flow) on the target it was seen on,
keeping the row's kind and, for a wrong lane, its deviation class. The reduced program and its
run's rows are stored (triage.session.store_case) and the bucket's rows move to the bucket of the
reduced case's first failing row (corpus.store.Corpus.blame: a flow bucket keys on the constructs
that write the output, so two programs that reduce to one kernel structure are one bucket), with a
``reductions`` row linking the original and the reduced program. The reduced case must show it
on a fresh worker (a new process, as the report's repro.py runs it); where it does not (PoCL 7.1:
a kernel's lanes depending on what the process built before it), the reduction is made again with
every candidate on a fresh worker, in what is left of the budget. None where the reduced case still
does not show it (nothing is stored then).
"""

from __future__ import annotations

import time
from typing import Any

from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from lang.flow import FlowProgram
from triage.flow_report import observe_flow
from triage.observe import size
from triage.reduce.flow import FlowReduction, fails_on, reduce_flow, same_failure
from triage.session import reduction_row, store_case


def reduce_flow_stored(corpus: Corpus, row: dict[str, Any], target: Target, worker: Worker,
                       budget_s: float = 60.0) -> tuple[str, FlowReduction] | None:
    """Reduce the flow program of stored ``row`` on ``target`` within ``budget_s`` and store the
    result (module docstring): the bucket its rows are in now, and the reduction; None when the
    reduced case does not fail so again."""
    original: FlowProgram = corpus.program(row["program_id"])
    start = time.monotonic()
    for fresh in (False, True):  # the second pass within what the first left of the budget
        left = max(0.0, budget_s - (time.monotonic() - start))
        reduction = reduce_flow(original, fails_on(target, worker, row, fresh), left)
        worker.restart()  # what the report's repro.py does: the reduced case alone in a new process
        rows = observe_flow(reduction.reduced, target, worker) or []
        hits = [r for r in rows if same_failure(r, row)]
        if hits:
            break
    else:
        return None
    store_case(corpus, reduction.reduced, target, rows, "reduce")
    bucket = corpus.blame(row["bucket"], hits[0])
    after = size(reduction.reduced)
    why = "" if after["statements"] <= 1 and after["work_items"] == 1 else (
        f"{after['statements']} statements, {after['work_items']} work-items: no smaller kernel fails so")
    if reduction.stopped:
        why = "; ".join(filter(None, [why, f"the reduction stopped at its budget ({budget_s:.0f} s, "
                                           f"{reduction.candidates} candidates)"]))
    corpus.add_reduction(reduction_row(original, reduction.reduced, bucket, target, reduction.seconds,
                                       reduction.candidates, why, [], key=row["bucket"]))
    return bucket, reduction
