"""Reducer passes of shaped programs (lang.shapes) and the wrong-code verdict.

* ``twin``: the straight-line twin (lang.derive.twin) in place of the shaped program. Kept when it
  shows the disagreement: the built-in is wrong whatever the structure, and the bug is keyed on it.
* ``shape_parts``: the SPIR-V's control flow structured (lang.shapes.CFGS); one step or wrap fewer;
  a loop that runs the statements on every iteration runs them once; a loop's trip count shortened
  to one iteration (the wrap's, ``carried``'s and ``rounds``'s: the constants the program checks
  follow from the words, lang.shapes.expected); the smallest shape that still differs is what a
  wrong-code bucket keys on.
* ``work_group``: a shape with local memory keeps the failing work-item's work-group only (its
  inputs as explicit values), where the ``work_items`` pass cannot go below a work-group.

When the reduction ends on a shaped program, its twin (run on the same driver) does not show the
disagreement: the lanes are *wrong code* (:func:`blame`): the compiler mis-handles the structure.
"""

from __future__ import annotations

from dataclasses import replace

from corpus.buckets import WRONG_CODE
from lang.derive import twin
from lang.ir import Fill, Program
from lang.layout import input_values
from lang.shapes import Shape, repeats
from oracles import WRONG_CODE as RULE
from oracles import rule
from triage.reduce.base import Candidates, Reducing


def twin_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if program.shape is not None:
        yield twin(program)


def _without(shape: Shape, steps: tuple, wraps: tuple) -> Shape:
    return replace(shape, steps=steps, wraps=wraps)


def shape_parts_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    shape = program.shape
    if shape is None:
        return
    if shape.cfg != "structured":
        yield replace(program, shape=replace(shape, cfg="structured"))
    yield from _shorter(program)
    if len(shape.parts) < 2:  # one part fewer than one is the twin
        return
    for i in range(len(shape.steps)):
        smaller = _without(shape, shape.steps[:i] + shape.steps[i + 1:], shape.wraps)
        yield replace(program, shape=smaller, local_size=program.local_size if smaller.local or program.shared else 0)
    for i in range(len(shape.wraps)):
        yield replace(program, shape=_without(shape, shape.steps, shape.wraps[:i] + shape.wraps[i + 1:]))
    for i, w in enumerate(shape.wraps):
        if repeats(w):
            once = replace(w, form=w.form.replace("every", "once"))
            yield replace(program, shape=_without(shape, shape.steps, shape.wraps[:i] + (once,) + shape.wraps[i + 1:]))


SHORT = {"loop": (1, 0), "carried": (1,), "rounds": (1,)}
"""The words of a loop shortened to one iteration (a prefix of the part's words)."""


def _shorter(program: Program) -> Candidates:
    """Each loop of the shape with one iteration (its other words kept)."""
    shape = program.shape
    steps, wraps = list(shape.steps), list(shape.wraps)
    for parts in (steps, wraps):
        for i, p in enumerate(parts):
            short = SHORT.get(p.kind)
            if short is None or p.words[:len(short)] == short:
                continue
            old, parts[i] = p, replace(p, words=short + p.words[len(short):])
            yield replace(program, shape=_without(shape, tuple(steps), tuple(wraps)))
            parts[i] = old


def work_group_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if program.shape is None or not program.shape.local or program.global_size <= program.local_size:
        return
    n = program.local_size
    first = min(r["work_item"] for r in rows) // n * n
    values = input_values(program)
    buffers = tuple(replace(b, fill=_group_fill(values[b.name], b.type.mem_lanes, first, n)) if b.role == "in" else b
                    for b in program.buffers)
    yield replace(program, buffers=buffers, global_size=n)


def _group_fill(values, mem_lanes: int, first: int, n: int) -> Fill:
    lanes = values[first * mem_lanes:(first + n) * mem_lanes]
    bits = lanes.view(f"u{lanes.dtype.itemsize}")
    return Fill(0, values=tuple(int(v) for v in bits))


def blame(program: Program) -> dict[str, str]:
    """The culprit of a wrong-code disagreement (corpus.buckets.CULPRIT_FIELDS): keyed on the
    reduced program's shape, kind ``wrong-code``, rule ``shape.twin``; no operation or types of
    its own (two statements a loop bug breaks are one bug)."""
    r = rule(RULE)
    sig = program.shape.signature
    return {"operation": f"shape {sig}", "src_type": "", "dst_type": "", "rule": r.id, "deviation": WRONG_CODE,
            "shape": sig, "kind": WRONG_CODE}

