"""The ``culprit`` pass: an operation below the root of the one failing statement that the driver
gets wrong on its own becomes the statement, and the goal moves to it (the faulty operation, not
the outer one: a nested ``convert_long_sat`` of NaN under ``as_double(hadd(...))``), deepest
first; the bug is then keyed on it (triage.session)."""

from __future__ import annotations

from dataclasses import replace

from lang.derive import restrict
from lang.ir import Buffer, Op, Program, Store
from triage.reduce.base import Candidate, Candidates, Reducing, paths


def culprit_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    """The faulty operation, not the outer one: an operation below the root of the one failing
    statement becomes the statement itself, over the same inputs; if the driver gets it wrong on
    its own, it is the culprit and the goal moves to it (:attr:`Candidate.retarget`; the bug is
    then keyed on it, triage.session). Deepest first, so the smallest sub-expression that is
    itself wrong is kept; where none is wrong alone (the compiler folded or fused them), the
    smallest failing composite stays."""
    if program.global_size != 1 or program.shared or len(program.body) != 1 or program.body[0].pointee:
        return
    stmt = program.body[0]
    found = [(path, node) for path, node in paths(stmt.value) if path and isinstance(node, Op)]
    for _, node in sorted(found, key=lambda pn: -len(pn[0])):
        buffers = tuple(Buffer(b.name, node.type, "out") if b.name == stmt.buffer else b for b in program.buffers)
        yield Candidate(restrict(replace(program, buffers=buffers, body=(Store(stmt.buffer, node),)), [0]),
                        retarget=True)
