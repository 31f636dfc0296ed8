"""The ``work_items`` pass: keep only the failing work-item, its inputs written as explicit values
(:func:`lang.derive.one_work_item`); not for programs with shared (atomic) locations, whose
histories need their own passes (:mod:`triage.reduce.passes.atomics`)."""

from __future__ import annotations

from lang.derive import one_work_item
from lang.ir import Program
from lang.layout import input_values
from triage.reduce.base import Candidate, Candidates, Reducing


def work_items_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if program.global_size == 1 or program.shared:  # shared locations: passes.atomics' work_groups
        return
    item = max(0, min(r["work_item"] for r in rows))
    yield Candidate(one_work_item(program, item, input_values(program)), item=item)
