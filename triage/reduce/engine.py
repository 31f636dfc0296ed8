"""Reduce a disagreeing program inside the IR until no smaller program shows the same disagreement.

The *goal* is one disagreement: its bucket's signature (corpus.buckets.signature of the row's own
fields, a culprit found earlier aside: the driver, the operation without widths, the types'
families, the rule, the deviation class and the kind; for a build error, crash or timeout, the
failure message). A candidate is judged anew from its own program (its own expectations, run on
the target) and kept when some lane of it shows the goal (:meth:`Reducer.accepted`); a
disagreement it shows elsewhere does not disqualify it (Oclgrind's ``max(char2, char)`` is wrong on
62 lanes of its statement alone, lanes that agreed in the 64-statement program it came from). The
passes run in a fixed order until none changes the program, so the result is deterministic for a
given program and driver. The passes and their order are :mod:`triage.reduce.passes` (``PASSES``,
cheaper candidates first); a reduction may start from the rows a campaign stored, without running
the original program again (:func:`reduce_program`).

The reduced case is then run once more on a fresh worker (a new process: nothing an earlier
candidate built or ran is left in it) and must show the goal there; where it does not, the newest
kept candidate that does goes on being reduced, each candidate on a fresh worker, and one none of
whose candidates (the original included) shows it on a fresh worker is not reproduced (None). A reduction that ends on a shaped program is
*wrong code* (:attr:`Reduction.blame`: its twin does not show it); one that ends on several
statements none of which shows the goal alone (:meth:`Reducer.one_shows`: on a fresh worker) is an
*interaction* (:attr:`Reduction.blame`, passes.statements.interaction: the statements together
are blamed, never one of them), unless one of them has a result the specification leaves undefined
or implementation-defined (then the bug shows only beside it: :attr:`Reduction.undefined`). A reduction
that ends above one operation on one work-item says why in :attr:`Reduction.why_not_minimal`
(:func:`why_not_minimal`: what the disagreement needs, or that the budget stopped the reduction,
with its numbers), and one that still holds an operation whose result the specification leaves
undefined or implementation-defined says which in :attr:`Reduction.undefined` (the ``defined`` pass).

Every candidate is a valid program (:func:`lang.ir.validate`) and defined: the oracle raises
:class:`~oracles.interpreter.UndefinedBehaviour` on anything else and the candidate is dropped
before it reaches a driver.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from corpus.buckets import CULPRIT_FIELDS, RESULT_KINDS, operation_family, signature
from fuzz.drivers import Target, Worker
from lang.derive import restrict, twin
from lang.families import NESTED
from lang.ir import Op, Program, walk
from lang.nodes import Expr
from lang.ops import spelling
from triage.confirm import RERUNS
from triage.observe import observe
from triage.reduce.base import Candidate
from triage.reduce.passes import PASSES, atomics, defined, images, shapes
from triage.reduce.passes.statements import interaction

__all__ = ["STOPPED", "Goal", "Reducer", "Reduction", "reduce_program", "why_not_minimal"]

STOPPED = "stopped at its budget"
"""What :attr:`Reduction.why_not_minimal` says of a reduction its time budget ended (with the
seconds and candidates run): it may be smaller with more time."""


def _key(row: dict[str, Any]) -> dict[str, Any]:
    """The signature of a row's own disagreement (a culprit triage found, and its confirmation, aside)."""
    return signature({**row, "culprit": None, "confirmation": None})


@dataclass(frozen=True)
class Goal:
    """The disagreement a reduction keeps: a bucket signature (see the module docstring)."""

    signature: dict[str, Any]

    @classmethod
    def of(cls, row: dict[str, Any]) -> "Goal":
        return cls(_key(row))

    def matches(self, row: dict[str, Any]) -> bool:
        """The same disagreement; for a shared location's row (named after every atomic operation on
        its buffer, fuzz.judge), also one naming fewer of the same operations: the history is the
        same bug with the operations it does not need gone (triage.reduce.passes.atomics)."""
        sig = _key(row)
        if sig == self.signature:
            return True
        if not str(row.get("input_class", "")).startswith("atomics:") or "operation" not in sig:
            return False
        fewer = set(sig["operation"].split(" + ")) < set(self.signature.get("operation", "").split(" + "))
        return fewer and {**sig, "operation": ""} == {**self.signature, "operation": ""}


@dataclass
class Reduction:
    original: Program
    reduced: Program
    rows: list[dict]  # the goal's rows on the reduced program (with their culprit, where blamed)
    candidates: int = 0
    seconds: float = 0.0
    passes: dict[str, int] = field(default_factory=dict)  # candidates kept per pass
    culprit: bool = False  # the goal moved to a sub-expression wrong on its own (the ``culprit`` pass), to
    # fewer of the atomic operations on its location (Goal.matches) or to a defined form, or the reduced
    # case is wrong code or an interaction (blame): the bug is then keyed on ``rows`` or ``blame``
    why_not_minimal: str = ""  # why the result is not one operation on one work-item ("" when it is)
    blame: dict | None = None  # wrong code or an interaction: the culprit fields of the reduced case
    bucket: str = ""  # the bucket the reduced rows are stored in (triage.session.reduce_stored; it may be another)
    undefined: list[dict] = field(default_factory=list)  # what of the reduced program the spec leaves undefined or
    # implementation-defined (passes.defined.summary): the disagreement did not show without it; [] when defined


class Reducer:
    """One reduction on one target's worker (see the module docstring)."""

    def __init__(self, target: Target, worker: Worker, goal: Goal, budget_s: float = 120.0) -> None:
        self.target, self.worker, self.goal = target, worker, goal
        self.budget_s = budget_s
        self.deadline = time.monotonic() + budget_s
        self.candidates = 0
        self.seen: dict[str, list[dict] | None] = {}  # disagreement rows, by program id
        self.restarting = False  # every candidate on a fresh worker (Reducer.run)
        self.fresh_run = ""  # the one program the worker ran since its last restart (Reducer.fresh)

    # -- the interestingness test ---------------------------------------------------------------

    def observed(self, program: Program) -> list[dict] | None:
        """The disagreement rows of ``program`` on the target, judged from its own program (its own
        expectations); None for an invalid or undefined program, which never reaches the driver.
        Once the worker was found to keep something of earlier runs, each on a fresh worker."""
        if program.id not in self.seen:
            if self.restarting:
                self.worker.restart()
            found = observe(program, self.target, self.worker)
            self.candidates += found is not None
            self.seen[program.id] = found
            self.fresh_run = ""
        return self.seen[program.id]

    def known(self, program: Program) -> list[dict]:
        """The rows of ``program`` if it was run, else none (triage.reduce.base.Reducing)."""
        return self.seen.get(program.id) or []

    def rows(self, program: Program) -> list[dict] | None:
        """The goal's rows when ``program`` shows it on the target; None otherwise (also for an
        invalid or undefined candidate, which never reaches the driver)."""
        return [r for r in self.observed(program) or [] if self.goal.matches(r)] or None

    def accepted(self, candidate: Candidate) -> list[dict] | None:
        """The rows ``candidate`` is kept with, or None. A culprit candidate is kept with its wrong
        rows, and the goal moves to them; any other with the goal's rows. A statement put in its
        defined form (:attr:`Candidate.defined`) that disagrees itself takes the goal; so does a
        shared location's row naming fewer atomic operations (:meth:`Goal.matches`)."""
        seen = self.observed(candidate.program) or []
        if candidate.retarget:
            wrong = [r for r in seen if r["kind"] in RESULT_KINDS]
            if wrong:
                self.goal = Goal.of(wrong[0])
            return wrong or None
        hit = [r for r in seen if self.goal.matches(r)]
        if hit and candidate.defined:
            own = [r for r in seen if r.get("buffer") == candidate.defined]
            if own and not self.goal.matches(own[0]):  # the defined form fails too: the bug is filed under it
                self.goal = Goal.of(own[0])
                return [r for r in own if self.goal.matches(r)]
        if hit and _key(hit[0]) != self.goal.signature:  # fewer atomic operations
            self.goal = Goal.of(hit[0])
            hit = [r for r in hit if self.goal.matches(r)]
        return hit or None

    def out_of_time(self) -> bool:
        return time.monotonic() > self.deadline

    def fresh(self, program: Program, goal: Goal) -> list[dict]:
        """The rows of ``goal`` that ``program`` shows on a fresh worker (the worker restarted: nothing
        a candidate before it built or ran is left); a program with shared (atomic) locations, whose
        interleavings differ from run to run, gets as many runs as its confirmation
        (triage.confirm.RERUNS), each on a fresh worker, and shows it if one does."""
        for _ in range(RERUNS["atomics"] if program.shared else 1):
            self.worker.restart()
            found = observe(program, self.target, self.worker)
            self.candidates += 1
            self.fresh_run = program.id  # what the worker ran since its restart
            hit = [r for r in found or [] if goal.matches(r)]
            if hit:
                return hit
        return []

    def one_shows(self, program: Program) -> bool:
        """Whether a statement of ``program`` alone shows the goal on a fresh worker. The statements
        run one after another on one fresh worker; one that shows it there is run again on a fresh
        worker of its own (an earlier run may have left the worker wrong: Oclgrind's vector max), so
        one restart decides the common case, where none shows it. A worker that ran only ``program``
        since its restart (the reduced case's fresh re-run) is fresh enough: a run before the
        statements alone can only make one of them show it, which its own fresh run then checks."""
        if self.fresh_run != program.id:
            self.worker.restart()
        self.fresh_run = ""
        for i in range(len(program.body)):
            alone = restrict(program, [i])
            found = observe(alone, self.target, self.worker)
            self.candidates += 1
            if any(self.goal.matches(r) for r in found or []) and self.fresh(alone, self.goal):
                return True
        return False

    def again(self, chain: list[tuple[Program, Goal]]) -> tuple[int, Program, list[dict]] | None:
        """The newest program of ``chain`` (the kept candidates, each with its goal, the original first)
        that shows its goal on a fresh worker, with how many newer ones did not and its rows there:
        the newest itself, or else the original and then the newest between them that does (by
        bisection: a candidate is smaller than those before it); None when not even the original
        shows it. The goal becomes that program's."""
        lo, hi = 0, len(chain) - 1
        hit = self.fresh(*chain[hi])
        if hit or hi == 0:
            lo = hi
        else:
            hit = self.fresh(*chain[0])
        while hit and hi - lo > 1:
            mid = (lo + hi) // 2
            shown = self.fresh(*chain[mid])
            lo, hi, hit = (mid, hi, shown) if shown else (lo, mid, hit)
        if not hit:
            return None
        self.goal = chain[lo][1]
        return len(chain) - 1 - lo, chain[lo][0], hit

    def fixpoint(self, program: Program, rows: list[dict], chain: list[tuple[Program, Goal]],
                 passes: dict[str, int]) -> tuple[Program, list[dict]]:
        """The passes run in order until none keeps a candidate or the time is up, from ``program``
        (whose goal rows are ``rows``); each kept candidate is appended to ``chain`` with its goal and
        counted in ``passes`` under its pass's name."""
        current, current_rows = program, rows
        visited = {program.id}  # a candidate that undoes an earlier one is not taken again
        changed = True
        while changed and not self.out_of_time():
            changed = False
            for name, make in PASSES:
                for made in make(current, current_rows, self):
                    if self.out_of_time():
                        break
                    candidate = made if isinstance(made, Candidate) else Candidate(made)
                    if candidate.program.id in visited:
                        continue
                    hit = self.accepted(candidate)
                    if hit:
                        current, current_rows = candidate.program, hit
                        visited.add(current.id)
                        chain.append((current, self.goal))
                        passes[name] = passes.get(name, 0) + 1
                        changed = True
                        break  # on to the next pass; the while loop runs them all again on the smaller program
        return current, current_rows

    # -- the passes ----------------------------------------------------------------------------

    def run(self, program: Program, rows: list[dict]) -> Reduction | None:
        """The fixpoint of the passes from ``program`` (whose goal rows are ``rows``), checked on a
        fresh worker; None when not even ``program`` shows the goal there. Where a smaller candidate
        does not (the worker kept something of an earlier run: Oclgrind's vector max with a scalar
        operand, on one work-item, is wrong only after other kernels ran in the worker), the
        reduction goes on from the newest that does, every candidate on a fresh worker, for half its
        budget again. The caller times the whole reduction."""
        chain = [(program, self.goal)]
        passes: dict[str, int] = {}
        self.fixpoint(program, rows, chain, passes)
        stopped = self.out_of_time()
        shown = self.again(chain)
        if shown is None:
            return None
        back, current, current_rows = shown
        if back:
            self.restarting, self.seen = True, {}
            self.deadline = time.monotonic() + self.budget_s / 2
            current, current_rows = self.fixpoint(current, current_rows, [(current, self.goal)], passes)
            stopped = self.out_of_time()
        stopped_at = f"the reduction {STOPPED} ({self.budget_s:.0f} s, {self.candidates} candidates)" if stopped else ""
        blame, twinned = None, program.shape is not None and current.shape is None
        undefined = defined.summary(current, self)
        if current.shape is not None:  # the twin was not kept: it may still show the disagreement
            if self.rows(twin(current)):  # on other lanes too: the built-in's bug, keyed as the built-in's
                twinned = True
            else:  # wrong code (triage.reduce.passes.shapes)
                blame = shapes.blame(current)
        elif len(current.body) > 1 and not current.shared and not stopped and not undefined and not self.one_shows(current):
            blame = interaction(current, current_rows)  # none shows it alone: never blamed on one of them
        if blame is not None:
            culprit = json.dumps({k: blame.get(k, "") for k in CULPRIT_FIELDS}, sort_keys=True)
            current_rows = [{**r, "culprit": culprit} for r in current_rows]
        why = why_not_minimal(current, current_rows, stopped_at)
        if back:
            why = "; ".join(filter(None, [why, f"{back} kept candidate(s) did not show it on a fresh worker: every "
                                               "later candidate ran on a fresh worker"]))
        return Reduction(program, current, current_rows, self.candidates, passes=passes,
                         culprit=self.goal != chain[0][1] or twinned or blame is not None,
                         why_not_minimal=why, blame=blame, undefined=undefined)


COMPOSITE = re.compile(r"\d+ operations together \((.+?)\): none shows it alone")
"""How :func:`why_not_minimal` says a statement reduced to nested operations none of which is wrong
alone (the culprit pass found none: the compiler folded or fused them); group 1 names them."""


def composite(value: Expr) -> str:
    """The operations of an expression as a reader names them, outermost first: ``convert_T of
    convert_T_sat`` (corpus.buckets.operation_family)."""
    return NESTED.join(operation_family(spelling(n.op, n.type, dict(n.attrs))) for n in walk(value) if isinstance(n, Op))


def composite_of(why: str) -> str | None:
    """The nested operations a reduction's ``why`` names together (:data:`COMPOSITE`), or None."""
    found = COMPOSITE.search(why or "")
    return found.group(1) if found else None


def why_not_minimal(program: Program, rows: list[dict], stopped: str = "") -> str:
    """Why a reduced program is not one operation on one work-item ("" when it is): what the
    disagreement needs (an atomic history's contending work-items, an image read's texels: the pass
    modules' ``why``), the statements, work-items or operations no smaller candidate showed it
    without, and ``stopped`` (that the time budget ended the reduction, with its numbers)."""
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
            parts.append(f"{ops} operations together ({composite(program.body[0].value)}): none shows it alone")
    parts = [p for p in parts if p]
    if parts and stopped:
        parts.append(stopped)
    return "; ".join(parts)


def reduce_program(program: Program, row: dict[str, Any], target: Target, worker: Worker,
                   budget_s: float = 120.0, rows: list[dict] | None = None) -> Reduction | None:
    """Reduce ``program`` keeping the disagreement of ``row`` on ``target``, from ``rows`` (every
    disagreement row of ``program`` on the target, as a campaign stored them; None: run ``program``
    first). None when neither the program nor a smaller one shows it when run again on a fresh
    worker (a flaky disagreement is not reduced)."""
    start = time.monotonic()
    reducer = Reducer(target, worker, Goal.of(row), budget_s)
    if rows is not None:
        reducer.seen[program.id] = rows
    shown = reducer.rows(program)
    reduction = reducer.run(program, shown) if shown else None
    if reduction is not None:
        reduction.seconds = time.monotonic() - start
    return reduction
