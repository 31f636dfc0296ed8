"""Construct coverage: which cells of the construct x type x width matrix each target ran.

A cell is (construct, type, width) as :func:`lang.constructs.coverage_key` names it: the operation with its
variant (``swizzle:hi``, ``min:scalar``), the scalar type of its result (of its first operand for
predicates, whose result type is fixed) and the lane count. A target covers a cell when a program it
ran to completion (status ``ok``) uses it; the programs stored with a run are what that target
actually took (statements its path or route cannot take are dropped before the run).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from corpus import _sql
from corpus.store import Corpus
from lang.constructs import coverage_key
from lang.flow import FlowProgram
from lang.ir import Op, Program, walk

Cell = tuple[str, str, int]


def program_cells(program: Program | FlowProgram) -> Counter[Cell]:
    """Uses of each cell in one program (a flow program, lang.flow, has none yet)."""
    if isinstance(program, FlowProgram):
        return Counter()
    return Counter(coverage_key(n) for s in program.body for n in walk(s.value) if isinstance(n, Op))


def coverage(corpus: Corpus, campaign: str | None = None) -> dict[str, dict[str, Any]]:
    """Per target: its path and the uses of every cell covered, ``[construct, type, width, uses]``
    (flow programs, lang.flow, have no cells yet)."""
    where, params = ("and r.campaign = ?", [campaign]) if campaign else ("", [])
    cells: dict[str, Counter[Cell]] = {}
    paths: dict[str, str] = {}
    parsed: dict[str, Counter[Cell]] = {}
    for row in _sql.rows(
        corpus, f"""select r.target, r.path, r.program_id, p.json from runs r join programs p on p.id = r.program_id
            where r.status = 'ok' and p.area != 'flow' {where}""", params):
        if row["program_id"] not in parsed:
            parsed[row["program_id"]] = program_cells(Program.from_json(row["json"]))
        cells.setdefault(row["target"], Counter()).update(parsed[row["program_id"]])
        paths[row["target"]] = row["path"]
    return {t: {"path": paths[t], "cells": [[c, ty, w, n] for (c, ty, w), n in sorted(counts.items())]}
            for t, counts in sorted(cells.items())}
