"""An interaction found once, tried at once on the other statements of its program.

A driver that mishandles the statements beside a call with an out-parameter (Oclgrind's OpenCL C
path reads 0 for them) makes one bucket per statement of the program and deviation: a 16-statement
math program beside a ``sincos`` opens a dozen buckets, each reduced on its own to the same
interaction, two statements on one work-item. Once one of them is (triage.reduce: each statement
agrees alone), each other new, unreduced bucket with a row of the same program on the same target
gets the candidate its reduction would end on: its statement beside the same call, on its row's
work-item. Where that shows the bucket's disagreement and, on one fresh worker, neither statement
does alone, it is the bucket's reduced case (an interaction, stored as triage.session stores any
reduction), found in a few runs instead of a reduction each.
"""

from __future__ import annotations

import json
import time

from corpus.buckets import CULPRIT_FIELDS, INTERACTION
from corpus.reads import rows_on_target
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from fuzz.judge import describe_statement
from lang.derive import one_work_item, restrict
from lang.families import trigger
from lang.ir import Program
from lang.layout import input_values
from triage.observe import observe
from triage.reduce import Goal, Reduction, why_not_minimal
from triage.reduce.base import failing_statements
from triage.reduce.passes.statements import interaction
from triage.session import store_reduction


def partner_of(reduction: Reduction) -> int | None:
    """The index, in the original program, of the statement an interaction's victim needs beside it:
    the reduced program's one statement that the wrong lanes are not in, a call with an
    out-parameter (lang.families.trigger); None for another reduction."""
    if not reduction.blame or reduction.blame.get("kind") != INTERACTION:
        return None
    victims = set(failing_statements(reduction.reduced, reduction.rows))
    others = [s for i, s in enumerate(reduction.reduced.body) if i not in victims]
    if len(others) != 1 or trigger(describe_statement(others[0], reduction.reduced)[0]) != "out-parameter":
        return None
    found = [i for i, s in enumerate(reduction.original.body) if s.buffer == others[0].buffer]
    return found[0] if len(found) == 1 else None


def covictims(corpus: Corpus, reduction: Reduction, target: Target, worker: Worker,
              deadline: float | None = None) -> list[str]:
    """Reduce the other new, unreduced buckets of ``reduction``'s program on ``target`` to their
    statement beside the same call (module docstring), until ``deadline`` (a ``time.monotonic()``
    reading); returns the buckets whose rows moved, each to its interaction's bucket."""
    partner = partner_of(reduction)
    if partner is None:
        return []
    return beside_partner(corpus, reduction.original, partner, reduction.bucket, target, worker, deadline)


def beside_partner(corpus: Corpus, program: Program, partner: int, done: str, target: Target, worker: Worker,
                   deadline: float | None = None) -> list[str]:
    """Each new, unreduced bucket but ``done`` with a row of ``program`` on ``target`` reduced to its
    statement beside statement ``partner`` (a call with an out-parameter), where that pair shows it
    and neither statement does alone on one fresh worker for all; returns the buckets whose rows
    moved, each to its interaction's bucket."""
    inputs = input_values(program)
    tried: list[tuple[dict, Program, list[dict]]] = []
    seen: set[str] = set()
    for row in rows_on_target(corpus, program.id, target.name):
        if deadline is not None and time.monotonic() > deadline:
            break
        if row["bucket"] in seen or row["bucket"] == done or row["work_item"] < 0:
            continue
        seen.add(row["bucket"])
        bucket = corpus.bucket(row["bucket"])
        where = failing_statements(program, [row])
        if bucket["status"] != "new" or bucket["reduced"] is not None or not where or where[0] == partner:
            continue
        shown = beside(program, row, where[0], partner, target, worker, inputs)
        if shown:
            tried.append((row, *shown))
    if not tried:
        return []
    worker.restart()  # each statement alone, one after another on one fresh worker
    return [moved for row, pair, hits in tried
            if (moved := interaction_case(corpus, row, program, pair, hits, target, worker)) is not None]


def beside(program: Program, row: dict, victim: int, partner: int, target: Target, worker: Worker,
           inputs: dict | None = None) -> tuple[Program, list[dict]] | None:
    """``program``'s statement ``victim`` beside statement ``partner`` on ``row``'s work-item, and the
    lanes of its run that show ``row``'s disagreement (triage.reduce.Goal), or None where none does."""
    pair = one_work_item(program, row["work_item"], inputs or input_values(program), sorted((victim, partner)))
    goal = Goal.of(row)
    hits = [r for r in observe(pair, target, worker) or [] if goal.matches(r)]
    return (pair, hits) if hits else None


def interaction_case(corpus: Corpus, row: dict, program: Program, pair: Program, hits: list[dict],
                     target: Target, worker: Worker) -> str | None:
    """Store ``pair`` (two statements of ``program`` whose run ``hits`` show ``row``'s disagreement) as
    the reduced case of ``row``'s bucket, an interaction, where neither statement shows it alone on
    ``worker`` (the caller restarts it first: a fresh worker); returns the bucket its rows moved
    to, or None where a statement shows it alone (its own reduction will say what)."""
    goal = Goal.of(row)
    if any(goal.matches(r) for i in range(len(pair.body)) for r in observe(restrict(pair, [i]), target, worker) or []):
        return None
    blame = interaction(pair, hits)
    culprit = json.dumps({k: blame.get(k, "") for k in CULPRIT_FIELDS}, sort_keys=True)
    found = Reduction(program, pair, [{**r, "culprit": culprit} for r in hits], candidates=2 + len(pair.body),
                      culprit=True, why_not_minimal=why_not_minimal(pair, hits), blame=blame, undefined=[])
    corpus.confirm(row["program_id"], row["target"], row["bucket"], True)
    return store_reduction(corpus, row, target, found).bucket
