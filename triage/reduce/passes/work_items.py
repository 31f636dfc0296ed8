"""The ``work_items`` pass: keep only the failing work-item, its inputs written as explicit values
(:func:`lang.derive.one_work_item`); else the first work-items up to the first failing one, then
twice as many, and so on (inputs unchanged: a disagreement that needs other work-items beside it,
such as a write that lands in another work-item's output). Not for programs with shared (atomic)
locations, whose histories need their own passes (:mod:`triage.reduce.passes.atomics`)."""

from __future__ import annotations

from lang.derive import one_work_item, restrict
from lang.ir import Program
from lang.layout import input_values
from triage.reduce.base import Candidates, Reducing


def work_items_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if program.global_size == 1 or program.shared:  # shared locations: passes.atomics' work_groups
        return
    item = max(0, min(r["work_item"] for r in rows))
    yield one_work_item(program, item, input_values(program))
    n = item + 1
    while n < program.global_size:
        yield restrict(program, list(range(len(program.body))), n)
        n *= 2
