"""The ``work_items`` pass: keep only the failing work-item, its inputs written as explicit values
(:class:`lang.ir.Fill` ``values``); not for programs with shared (atomic) locations, whose
histories need their own passes (:mod:`triage.reduce.passes.atomics`)."""

from __future__ import annotations

from dataclasses import replace

from lang.ir import Fill, Program
from lang.layout import input_values
from triage.reduce.base import Candidate, Candidates, Reducing, work_item_lanes


def work_items_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if program.global_size == 1 or program.shared:  # shared locations: passes.atomics' work_groups
        return
    item = max(0, min(r["work_item"] for r in rows))
    values = input_values(program)
    buffers = tuple(
        replace(b, fill=Fill(0, values=tuple(int(v) for v in work_item_lanes(values[b.name], b, item))))
        if b.role == "in" else b for b in program.buffers)
    yield Candidate(replace(program, buffers=buffers, global_size=1, local_size=0), item=item)
