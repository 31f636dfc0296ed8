"""A new bucket joined to a known bug at the cost of a run or three, before its reduction.

A reduction takes tens of candidates (seconds on Oclgrind, up to a minute on PoCL's image reads);
a bucket found late in a campaign is often a bug already reduced under a sibling's key, and its
reduction would only show that. Before a bucket's first reduction, triage (triage.beside) runs the
one program that would show it:

- a shaped program's bucket (area ``shapes``, keyed ``shape: unreduced``, corpus.buckets): its
  straight-line twin (lang.derive.twin: the reducer's first candidate, triage.reduce.passes.shapes)
  runs once; where a wrong lane of the twin has the shaped bucket's signature without its shape
  (the built-in's bug, not the structure's) and that bucket exists, the shaped rows move there as
  the reducer's twin pass would move them (corpus.store.Corpus.blame), and the twin is stored;
- a bucket of a wrong value: the reduced case (one statement on one work-item) of each sibling
  bucket already reduced, at most :data:`TRIES` (the same driver, an operation of one family, the same deviation class:
  triage.siblings.alike) runs as this bucket's variant (triage.siblings.shows, as a reduced
  case's re-run as its siblings does); where a wrong lane of it lands in this bucket, the re-run
  is stored as evidence that they are one bug and the variant becomes this bucket's reduced case;
- a bucket of a wrong value on a driver with a reduced interaction (a statement wrong beside a call
  with an out-parameter, triage.covictims) whose program holds such a call: its statement beside
  each such call (at most :data:`TRIES`) on its row's work-item runs once; where one shows the
  disagreement and, on a fresh worker, neither statement does alone, the pair is the bucket's
  reduced case, as triage.covictims finds it for the interaction's own program. A campaign keeps
  drawing programs with such calls: without this, each new victim (and each bucket the
  interaction emptied earlier that new rows fill again) needs a reduction of its own. Once one
  is, the program's other victims beside the same call are tried at once (triage.covictims, as
  after a reduction: one math program opens a dozen victims' buckets).

- a bucket of a wrong value on a target where a vector type is known to fail whatever function it
  carries (triage.width): where its statement alone on its row's work-item is of that type, shows
  the disagreement, and is right as scalars, that is its reduced case and its evidence, at the cost
  of two runs.

Where none shows it, the bucket is reduced as any other.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

from corpus.buckets import INTERACTION, RESULT_KINDS, bucket_id, signature
from corpus.bug_queries import stored_evidence
from corpus.reads import bucket_rows
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from fuzz.judge import describe_statement
from lang.derive import one_work_item, twin
from lang.families import trigger
from lang.ir import Program
from lang.layout import input_values
from triage.covictims import beside, beside_partner, interaction_case
from triage.observe import observe
from triage.reduce.base import failing_statements
from triage.reduce import Goal
from triage.session import reduction_row, store_case
from triage.width import KIND as WIDTH
from triage.width import only_at_width, vector_type
from triage.siblings import alike, shows

TRIES = 3
"""Reduced siblings whose variant a bucket runs at most before its reduction (the most seen first):
a join costs a run each, a reduction tens."""


def reduced_siblings(corpus: Corpus, bucket: dict[str, Any]) -> list[dict[str, Any]]:
    """The buckets triage.siblings.alike ``bucket`` reduced to one statement on one work-item (not a
    shaped program's), most rows first."""
    return [b for b in corpus.buckets() if alike(bucket, b) and not b["signature"].get("shape")
            and ((b["reduced"] or {}).get("statements"), (b["reduced"] or {}).get("work_items")) == (1, 1)]


def join_known(corpus: Corpus, bucket: str, row: dict[str, Any], target: Target, worker: Worker,
               deadline: float | None = None, on_moved: Callable[[str], None] | None = None) -> str | None:
    """Show new bucket ``bucket`` (whose disagreement ``row`` ran on ``target``) to be a known bug
    with one run (module docstring), until ``deadline`` (a ``time.monotonic()`` reading); returns the
    bucket it joined, or None. ``on_moved`` hears of each other bucket of its program whose rows the
    join moved to an interaction's bucket (triage.covictims.beside_partner)."""
    b = corpus.bucket(bucket)
    program = corpus.program(row["program_id"])
    if b["signature"].get("shape"):
        return _twin(corpus, b, program, target, worker) if program.shape is not None else None
    if row["kind"] in RESULT_KINDS and row["work_item"] >= 0:  # a wrong lane: a known interaction, a known width
        moved = _beside_trigger(corpus, row, program, target, worker, on_moved) if _interacting(corpus, b) else None
        if moved is not None:
            return moved
        widths = known_widths(corpus, target)
        if widths and _at_width(corpus, b, row, program, widths, target, worker):
            return b["id"]
    tries = 0
    for a in reduced_siblings(corpus, b):
        if tries == TRIES or deadline is not None and time.monotonic() > deadline:
            break
        reductions = corpus.reductions(a["id"])
        shown = shows(corpus, a, corpus.program(reductions[-1]["reduced_id"]), b, target, worker) if reductions else None
        tries += shown is not None
        if shown:
            return a["id"]
    return None


def _interacting(corpus: Corpus, b: dict[str, Any]) -> bool:
    """Whether ``b``'s driver has a reduced interaction bucket (a driver that mishandles statements
    beside a call with an out-parameter)."""
    return any(a["signature"]["kind"] == INTERACTION and a["reduced"] is not None
               and a["signature"]["driver"] == b["signature"]["driver"] for a in corpus.buckets())


def _beside_trigger(corpus: Corpus, row: dict[str, Any], program: Program, target: Target,
                    worker: Worker, on_moved: Callable[[str], None] | None = None) -> str | None:
    """``row``'s bucket reduced to its statement beside one of ``program``'s calls with an
    out-parameter (lang.families.trigger) where that pair shows it and neither statement alone does
    (triage.covictims); returns the bucket its rows moved to, or None; the program's other victims
    beside the same call go with it (each told to ``on_moved``)."""
    where = failing_statements(program, [row])
    if len(where) != 1:
        return None
    partners = [i for i, s in enumerate(program.body)
                if i != where[0] and trigger(describe_statement(s, program)[0]) == "out-parameter"]
    for partner in partners[:TRIES]:
        shown = beside(program, row, where[0], partner, target, worker)
        if shown:
            worker.restart()  # each statement alone on a fresh worker
            moved = interaction_case(corpus, row, program, *shown, target, worker)
            if moved is not None:  # the program's other victims beside the same call, as after a reduction
                for other in beside_partner(corpus, program, partner, moved, target, worker):
                    if on_moved is not None:
                        on_moved(other)
            return moved
    return None


def at_width(row: dict[str, Any], widths: set[str]) -> bool:
    """Whether wrong lane ``row`` is of a type of ``widths`` (:func:`known_widths`): a bucket its
    triage may join in two runs, before a reduction of tens."""
    types = set(f"{row.get('src_type') or ''}+{row.get('dst_type') or ''}".split("+"))
    return row["kind"] in RESULT_KINDS and bool(types & widths)


def known_widths(corpus: Corpus, target: Target) -> set[str]:
    """The vector types some bucket failed at only (triage.width) on ``target``."""
    details = [json.loads(r["detail"] or "{}") for r in stored_evidence(corpus) if r["kind"] == WIDTH]
    return {d.get("type") for d in details if d.get("target") == target.name}


def _at_width(corpus: Corpus, b: dict[str, Any], row: dict[str, Any], program: Program, widths: set[str],
              target: Target, worker: Worker) -> bool:
    """``b`` reduced to its statement alone on ``row``'s work-item where that is of a type of ``widths``,
    shows ``row``'s disagreement, and is right as scalars (triage.width: the evidence is stored)."""
    where = failing_statements(program, [row])
    if len(where) != 1:
        return False
    case = one_work_item(program, row["work_item"], input_values(program), where)
    if vector_type(case) not in widths:
        return False
    rows = observe(case, target, worker) or []
    goal = Goal.of(row)
    if not any(goal.matches(r) for r in rows) or not only_at_width(corpus, b["id"], case, target, worker):
        return False
    store_case(corpus, case, target, rows, "reduce")
    corpus.add_reduction(reduction_row(program, case, b["id"], target, candidates=2))
    return True


def _twin(corpus: Corpus, b: dict[str, Any], program, target: Target, worker: Worker) -> str | None:
    """Shaped bucket ``b`` moved to its built-in's bucket where ``program``'s twin shows it there."""
    want = {k: v for k, v in b["signature"].items() if k != "shape"}
    case = twin(program)
    rows = observe(case, target, worker) or []
    for r in rows:  # observe names each row's target
        if r["kind"] in RESULT_KINDS and signature(r) == want:
            known = bucket_id(want)
            if not bucket_rows(corpus, known):
                return None
            store_case(corpus, case, target, rows, "reduce")
            return corpus.blame(b["id"], r)
    return None
