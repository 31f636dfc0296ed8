"""Reduce a disagreeing program inside the IR until no smaller program shows the same disagreement.

The *goal* is one disagreement: the same target (driver and path), the same operation (its
spelling, vector widths aside) and the same kind (wrong or imprecise result; for a build error,
crash or timeout, the same failure message, :func:`corpus.buckets.failure_message`). A candidate
is judged anew from its own program (its own expectations, run on the target) and kept when it
shows the goal again *and* no output lane disagrees whose counterpart in the program it was made
from agreed (:meth:`Reducer.keeps`: each pass says where its candidate's lanes come from,
:class:`Candidate`); a reduction that makes a disagreement appear has changed what the program
means, not found the bug. The passes run in a fixed order until none changes the program, so the
result is deterministic for a given program and driver. The passes and their order are
:mod:`triage.reduce.passes` (``PASSES``); a reduction that ends on a shaped program is *wrong
code* (:attr:`Reduction.blame`: its twin does not show it). A reduction that ends above one
operation on one work-item says why in :attr:`Reduction.why_not_minimal` (:func:`why_not_minimal`),
and one that still holds an operation whose result the specification leaves undefined or
implementation-defined says which in :attr:`Reduction.undefined` (the ``defined`` pass, run first).

Every candidate is a valid program (:func:`lang.ir.validate`) and defined: the oracle raises
:class:`~oracles.interpreter.UndefinedBehaviour` on anything else and the candidate is dropped
before it reaches a driver.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from corpus.buckets import RESULT_KINDS, base_operation, failure_message
from fuzz.drivers import Target, Worker
from lang.derive import twin
from lang.ir import Op, Program, walk
from triage.observe import observe
from triage.reduce.base import Candidate
from triage.reduce.passes import PASSES, atomics, defined, images, shapes

__all__ = ["Goal", "Reducer", "Reduction", "reduce_program", "why_not_minimal"]


@dataclass(frozen=True)
class Goal:
    """The disagreement a reduction keeps (see the module docstring)."""

    target: str
    operation: str
    kind: str
    types: str = ""  # source and destination types, widths aside
    failure: str = ""

    @classmethod
    def of(cls, row: dict[str, Any]) -> "Goal":
        if row["kind"] in RESULT_KINDS:
            return cls(row["target"], base_operation(row["operation"]), row["kind"], _types(row))
        return cls(row["target"], base_operation(row["operation"]), row["kind"],
                   failure=failure_message(row.get("actual_value", "")))

    def matches(self, row: dict[str, Any]) -> bool:
        """The same disagreement; for a shared location's row (named after every atomic operation on
        its buffer, fuzz.judge), also one naming fewer of the same operations: the history is the
        same bug with the operations it does not need gone (triage.reduce.passes.atomics)."""
        if row["kind"] != self.kind:
            return False
        if self.kind in RESULT_KINDS:
            op = base_operation(row["operation"])
            fewer = str(row.get("input_class", "")).startswith("atomics:") and (
                set(op.split(" + ")) < set(self.operation.split(" + ")))
            return (op == self.operation or fewer) and _types(row) == self.types
        # a failure: the same message; the operation once the candidate is down to one statement
        return failure_message(row["actual_value"]) == self.failure and row["operation"] in (self.operation, "program")


def _types(row: dict[str, Any]) -> str:
    return base_operation(f"{row.get('src_type', '')} -> {row.get('dst_type', '')}")


@dataclass
class Reduction:
    original: Program
    reduced: Program
    rows: list[dict]  # the goal's rows on the reduced program
    candidates: int = 0
    seconds: float = 0.0
    passes: dict[str, int] = field(default_factory=dict)  # candidates kept per pass
    discarded: int = 0  # candidates that showed the goal but made another lane disagree
    culprit: bool = False  # the goal moved to a sub-expression wrong on its own (the ``culprit`` pass), or
    # to fewer of the atomic operations on its location (Goal.matches): the bug is then keyed on ``rows``
    why_not_minimal: str = ""  # why the result is not one operation on one work-item ("" when it is)
    blame: dict | None = None  # wrong code: the culprit fields of the reduced shape (passes.shapes.blame)
    bucket: str = ""  # the bucket the reduced rows are stored in (triage.session.reduce_stored; it may be another)
    undefined: list[dict] = field(default_factory=list)  # what of the reduced program the spec leaves undefined or
    # implementation-defined (passes.defined.summary): the disagreement did not show without it; [] when defined


class Reducer:
    """One reduction on one target's worker (see the module docstring)."""

    def __init__(self, target: Target, worker: Worker, goal: Goal, budget_s: float = 120.0) -> None:
        self.target, self.worker, self.goal = target, worker, goal
        self.deadline = time.monotonic() + budget_s
        self.candidates = 0
        self.discarded = 0
        self.narrowed = False  # the goal moved to fewer atomic operations on its location (Goal.matches)
        self.moved = False  # the goal moved to a statement put in its defined form (passes.defined)
        self.seen: dict[str, tuple[list[dict], set[tuple[str, int]]] | None] = {}  # rows and lanes, by program id

    # -- the interestingness test ---------------------------------------------------------------

    def observed(self, program: Program) -> tuple[list[dict], set[tuple[str, int]]] | None:
        """The disagreement rows of ``program`` on the target and every output lane that disagrees,
        judged from its own program (its own expectations); None for an invalid or undefined
        program, which never reaches the driver."""
        if program.id not in self.seen:
            lanes: set[tuple[str, int]] = set()
            found = observe(program, self.target, self.worker, lanes)
            self.candidates += found is not None
            self.seen[program.id] = None if found is None else (found, lanes)
        return self.seen[program.id]

    def rows(self, program: Program) -> list[dict] | None:
        """The goal's rows when ``program`` shows it on the target; None otherwise (also for an
        invalid or undefined candidate, which never reaches the driver)."""
        seen = self.observed(program)
        return ([r for r in seen[0] if self.goal.matches(r)] or None) if seen else None

    def keeps(self, candidate: Candidate, source: Program) -> bool:
        """Whether every output lane that disagrees on ``candidate`` is a lane that disagreed on
        ``source``, the program it was made from (:meth:`Candidate.origin`). By induction from the
        first program, a kept reduction never shows a disagreement where the original agreed."""
        before, after = self.observed(source), self.observed(candidate.program)
        names = {b.name for b in source.outputs}
        return before is not None and after is not None and all(
            buffer == candidate.defined or (buffer in names and candidate.origin(buffer, lane, source) in before[1])
            for buffer, lane in after[1])

    def accepted(self, candidate: Candidate, source: Program) -> list[dict] | None:
        """The rows ``candidate`` is kept with, or None. A culprit candidate is kept with its
        wrong rows, and the goal moves to them; any other with the goal's rows, unless it makes a
        lane disagree that agreed on ``source`` (:meth:`keeps`: counted as discarded). A statement put
        in its defined form (:attr:`Candidate.defined`) that disagrees itself takes the goal."""
        if candidate.retarget:
            seen = self.observed(candidate.program)
            wrong = [r for r in seen[0] if r["kind"] in RESULT_KINDS] if seen else []
            if wrong:
                self.goal = Goal.of(wrong[0])
            return wrong or None
        hit = self.rows(candidate.program)
        if hit and not self.keeps(candidate, source):
            self.discarded += 1  # the goal, but also a disagreement the program did not have
            return None
        if hit and candidate.defined:
            seen = self.observed(candidate.program)
            own = [r for r in seen[0] if r.get("buffer") == candidate.defined] if seen else []
            if own and not self.goal.matches(own[0]):  # the defined form fails too: the bug is filed under it
                self.goal, self.moved = Goal.of(own[0]), True
                return [r for r in own if self.goal.matches(r)]
        if hit and base_operation(hit[0]["operation"]) != self.goal.operation:  # fewer atomic operations
            self.goal = replace(self.goal, operation=base_operation(hit[0]["operation"]))
            self.narrowed = True
            hit = [r for r in hit if self.goal.matches(r)]
        return hit

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    # -- the passes ----------------------------------------------------------------------------

    def run(self, program: Program, rows: list[dict]) -> Reduction:
        """The fixpoint of the passes from ``program`` (whose goal rows are ``rows``); the
        caller times the whole reduction."""
        current, current_rows = program, rows
        visited = {program.id}  # a candidate that undoes an earlier one is not taken again
        passes: dict[str, int] = {}
        changed, culprit = True, False
        while changed and not self.out_of_time():
            changed = False
            for name, make in PASSES:
                for made in make(current, current_rows, self):
                    if self.out_of_time():
                        break
                    candidate = made if isinstance(made, Candidate) else Candidate(made)
                    if candidate.program.id in visited:
                        continue
                    hit = self.accepted(candidate, current)
                    if hit:
                        current, current_rows = candidate.program, hit
                        visited.add(current.id)
                        culprit |= candidate.retarget
                        passes[name] = passes.get(name, 0) + 1
                        changed = True
                        break  # on to the next pass; the while loop runs them all again on the smaller program
        why = why_not_minimal(current, current_rows, self.out_of_time())
        blame, twinned = None, program.shape is not None and current.shape is None
        if current.shape is not None:  # the twin was not kept: it may still show the disagreement
            if self.rows(twin(current)):  # on other lanes too: the built-in's bug, keyed as the built-in's
                twinned = True
            else:  # wrong code (triage.reduce.passes.shapes)
                blame = shapes.blame(current)
                current_rows = [{**r, "culprit": shapes.culprit_json(current)} for r in current_rows]
        return Reduction(program, current, current_rows, self.candidates, passes=passes, discarded=self.discarded,
                         culprit=culprit or self.narrowed or self.moved or twinned or blame is not None,
                         why_not_minimal=why, blame=blame, undefined=defined.summary(current, self))


def why_not_minimal(program: Program, rows: list[dict], stopped: bool = False) -> str:
    """Why a reduced program is not one operation on one work-item ("" when it is): what the
    disagreement needs (an atomic history's contending work-items, an image read's texels: the pass
    modules' ``why``), the statements, work-items or operations no smaller candidate showed it
    without, and whether the time budget ended the reduction."""
    ops = sum(isinstance(n, Op) for s in program.body for n in walk(s.value))
    if program.shared:
        parts = [atomics.why(program, rows)]
    else:
        parts = [images.why(program, rows) if program.images else ""]
        if len(program.body) > 1:
            parts.append(f"{len(program.body)} statements: none shows it alone")
        if program.global_size > 1:
            parts.append(f"{program.global_size} work-items: no single one shows it")
        if len(program.body) == 1 and ops > 1:
            parts.append(f"{ops} operations together: none shows it alone")
    parts = [p for p in parts if p]
    if parts and stopped:
        parts.append("the time budget ended the reduction")
    return "; ".join(parts)


def reduce_program(program: Program, row: dict[str, Any], target: Target, worker: Worker,
                   budget_s: float = 120.0) -> Reduction | None:
    """Reduce ``program`` keeping the disagreement of ``row`` on ``target``; None when the program
    does not show it when run again (a flaky disagreement is not reduced)."""
    start = time.monotonic()
    reducer = Reducer(target, worker, Goal.of(row), budget_s)
    rows = reducer.rows(program)
    if not rows:
        return None
    reduction = reducer.run(program, rows)
    reduction.seconds = time.monotonic() - start
    return reduction
