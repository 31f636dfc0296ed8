"""The reducer's atomics passes (triage.reduce.passes PASSES): fewer statements, work-items and
shared locations for a program whose disagreement is about atomic operations on shared locations.

An atomics disagreement is a location's history (OpenCL C 3.0 §6.15.12.7-9, §3.3.4: the atomic
operations on one location are totally ordered, each reading what the one before wrote):
the row names the shared buffer and location, not a work-item's output. Every candidate is a
valid program (lang.ir.validate: a location inside its buffer, a local buffer of at most
``local_size`` elements) and race-free as the original was (only atomics touch the locations, and
the scopes and memory orders are kept: §6.15.12.3, §6.15.12.7); fewer operations per location keep
the legacy signed functions away from overflow (fuzz.strategies.atomics' bounds only shrink). A
candidate changes which work-items contend for a location, so it is judged anew from its own
program (its own histories) and kept only if it still shows the goal.

1. ``atomic_statements``: only the statements on the failing rows' shared buffers (the other
   statements, one at a time, are the ``statements`` pass).
2. ``work_groups``: fewer work-items, fewest first: one work-group of 1, 2, 4 ... work-items, then
   two groups of them (for a location the NDRange shares), then whole work-groups halved. The
   NDRange is ``groups * local_size`` work-items (OpenCL API 3.0 §5.9.4, clEnqueueNDRangeKernel:
   the local size divides the global size); input lanes and each group's initial values are a
   prefix of the original's (lang.ir.Fill).
3. ``locations``: a shared buffer of one location every operation on it updates (its initial value
   the failing location's), else the buffer trimmed to the locations its operations use (indices
   ``base + (id / div) % mod`` moved down by the least base).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from lang.derive import restrict
from lang.ir import Buffer, Expr, Op, Program, Store, walk
from lang.layout import input_values
from oracles import histories
from triage.reduce.base import Candidates, Reducing, explicit


def _atomic_rows(program: Program, rows: list[dict]) -> list[dict]:
    shared = {b.name for b in program.shared}
    return [r for r in rows if r["buffer"] in shared]


def atomic_statements_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    buffers = {r["buffer"] for r in _atomic_rows(program, rows)}
    keep = [i for i, s in enumerate(program.body) if isinstance(s.value, Op) and s.value.attr("location") in buffers]
    if keep and len(keep) < len(program.body):
        yield restrict(program, keep)


def _shapes(program: Program) -> list[tuple[int, int]]:
    """(groups, local_size) smaller than the program's, fewest work-items first."""
    local, groups = program.local_size, program.groups
    sizes = sorted({1 << k for k in range(local.bit_length()) if 1 << k < local} | {local})
    shapes = {(g, n) for g in {1, 2, groups // 2, groups} if 1 <= g <= groups for n in sizes}
    total = program.global_size
    return sorted((s for s in shapes if s[0] * s[1] < total), key=lambda s: (s[0] * s[1], s[0]))


def work_groups_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if not program.shared:
        return
    for groups, local in _shapes(program):
        yield replace(program, global_size=groups * local, local_size=local)


def _indexed(program: Program, name: str, index: Callable[[tuple], tuple]) -> tuple[Store, ...]:
    """The body with the ``index`` attribute of every atomic operation on ``name`` rewritten."""

    def change(e: Expr) -> Expr:
        if not isinstance(e, Op):
            return e
        e = replace(e, args=tuple(change(a) for a in e.args))
        if e.attr("location") != name:
            return e
        attrs = dict(e.attrs)
        attrs["index"] = index(attrs["index"])
        return replace(e, attrs=tuple(sorted(attrs.items())))

    return tuple(Store(s.buffer, change(s.value)) for s in program.body)


def locations_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    failing = {r["buffer"]: int(r["lane"]) for r in reversed(_atomic_rows(program, rows))}
    inputs = input_values(program)
    for b in program.shared:
        if b.count == 1:
            continue
        ops = [n for s in program.body for n in walk(s.value) if isinstance(n, Op) and n.attr("location") == b.name]
        one = replace(b, count=1)
        if b.fill is not None:
            lane = failing.get(b.name, 0)
            one = replace(one, fill=explicit(inputs[b.name][lane:lane + 1]))
        body = _indexed(program, b.name, lambda i: (i[0], i[1], 1, 0))
        yield _with_buffer(program, one, body)
        lo = min(op.attr("index")[3] for op in ops) if ops else 0
        hi = max(op.attr("index")[3] + op.attr("index")[2] for op in ops) if ops else 1
        if hi - lo < b.count:
            trimmed = replace(b, count=hi - lo)
            if b.fill is not None:
                parts = inputs[b.name].reshape(-1, b.count)[:, lo:hi]
                trimmed = replace(trimmed, fill=explicit(parts.ravel()))
            yield _with_buffer(program, trimmed, _indexed(program, b.name, lambda i, lo=lo: (*i[:3], i[3] - lo)))


def _with_buffer(program: Program, new: Buffer, body: tuple[Store, ...]) -> Program:
    return replace(program, buffers=tuple(new if b.name == new.name else b for b in program.buffers), body=body)


def why(program: Program, rows: list[dict]) -> str:
    """How many work-items and operations the failing location's history needs, when more than one
    operation of one work-item (a history is judged as a whole: §6.15.12.7-9)."""
    atomic = _atomic_rows(program, rows)
    if not atomic or (program.global_size == 1 and len(program.body) == 1):
        return ""
    r = atomic[0]
    h = histories(program, input_values(program))
    key = ([b.name for b in program.buffers].index(r["buffer"]) << 40) + int(r["lane"])
    on = h.key == key
    items, ops = len(np.unique(h.item[on])), int(on.sum())
    where = f"{r['buffer']}[{r['lane']}]"
    if items > 1:
        head = (f"atomics: the disagreement needs {items} work-items contending for one location "
                f"({ops} operations on {where})")
    else:
        head = f"atomics: the disagreement needs {ops} operations of one work-item on {where}"
    extra = []
    if len(program.body) > 1:
        extra.append(f"{len(program.body)} statements")
    if program.global_size > items:
        extra.append(f"{program.global_size} work-items in {program.groups} work-group(s)")
    return head + (f"; the program keeps {', '.join(extra)}" if extra else "")
