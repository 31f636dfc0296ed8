"""The ``statements`` pass: keep the statement the disagreement is in alone, else halve the body
(delta debugging), then drop the others one at a time."""

from __future__ import annotations

from lang.derive import restrict
from lang.ir import Program
from triage.reduce.base import Candidates, Reducing


def statements_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    n = len(program.body)
    if n == 1:
        return
    where = [i for i, s in enumerate(program.body) if s.buffer in {r["buffer"] for r in rows}]
    if where and len(where) < n:
        yield restrict(program, where[:1])
        yield restrict(program, where)
    for chunk in (n // 2, max(1, n // 4)):
        for start in range(0, n, chunk):
            keep = [i for i in range(n) if not start <= i < start + chunk]
            if keep:
                yield restrict(program, keep)
    for i in range(n):
        yield restrict(program, [j for j in range(n) if j != i])
