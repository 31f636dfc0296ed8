"""The ``alone`` pass, the first of all: the failing statement alone on its failing work-item, as
the scalar statement of its failing lane where it narrows (the ``narrow`` pass's rule), else as it
is. Most buckets are one built-in wrong on one operand, so this one build is most of their
reduction; where it does not show the disagreement, the other passes go step by step (a
disagreement that needs several work-items or statements: an interaction, triage.reduce.engine)."""

from __future__ import annotations

from lang.derive import one_work_item
from lang.ir import Program
from lang.layout import input_values
from triage.reduce.base import Candidates, Reducing, failing_statements
from triage.reduce.passes.narrow import narrow_pass

TRIED = 3
"""Failing (statement, work-item) pairs tried alone at most: the first rows' (a statement that does
not show it alone on one work-item is left to the step-by-step passes)."""


def alone_pass(program: Program, rows: list[dict], reducing: Reducing) -> Candidates:
    if program.shape is not None or program.shared or (len(program.body) == 1 and program.global_size == 1):
        return
    inputs = None
    tried: set[tuple[int, int]] = set()
    for r in rows:
        where = failing_statements(program, [r])
        if not where or (where[0], r["work_item"]) in tried or r["work_item"] < 0:
            continue
        tried.add((where[0], r["work_item"]))
        inputs = input_values(program) if inputs is None else inputs
        one = one_work_item(program, r["work_item"], inputs, where[:1])
        yield from narrow_pass(one, [r], reducing)
        yield one
        if len(tried) == TRIED:
            return
