"""Slow statements, learned: a class that timed out on a target is not run at the ceiling again.

A statement's *class* is what makes it slow on a driver (:func:`class_of`): its operations, each
with its operand and result element types and its operator or rounding (no width: a function slow
on float8 is slow on float16), and the kind of its operands, ``listed`` (every lane written out:
a corner sweep's values) or ``drawn`` (a random program's pools). Once one statement of a class
times out alone on a target (at its measured limit, or at the ceiling: campaign.pipeline), the
class is *slow* there (:class:`Learned`), and in every later program that target runs:

* its statements of a slow class are cut out of the parts it builds (:meth:`Learned.split`), so a
  slow statement no longer times a whole part out (one timeout, then a build per statement to
  isolate it, campaign.execute.TIMEOUT_SPLIT);
* each runs alone in the lane's low-priority queue (campaign.pipeline), after every part of the
  campaign waiting at that moment, at the target's measured limit only: a timeout there is
  recorded as ``slow`` and not tried at the ceiling again (the class's first timeout was);
* once :data:`GIVE_UP` statements of a class have timed out on the target, its later statements are
  not run there at all (counted as skipped): each would cost the measured limit and teach nothing.

A class whose statement failed alone (a build error, a crash: PoCL 3.1's SPIR-V path cannot link
some math built-ins) is learned the same way, without the low priority: its later statements
each run alone at once (one build each), instead of failing a whole part that is then halved
down to them (campaign.execute).
"""

from __future__ import annotations

import threading

from lang.ir import Literal, Load, Op, Program, Store, walk

GIVE_UP = 3
"""Timeouts of one class on a target after which its statements are skipped there."""

Class = tuple


def class_of(program: Program, statement: Store) -> Class:
    """The class of one statement of ``program`` (module docstring)."""
    ops = set()
    kinds = set()
    for node in walk(statement.value):
        if isinstance(node, Op):
            attrs = dict(node.attrs)
            ops.add((node.op, str(attrs.get("operator", attrs.get("rounding", ""))), bool(attrs.get("sat")),
                     tuple(a.type.scalar for a in node.args), node.type.scalar))
        elif isinstance(node, Load):
            kinds.add("listed" if program.buffer(node.buffer).fill.values else "drawn")
        elif isinstance(node, Literal):
            kinds.add("listed")
    return tuple(sorted(ops)), "drawn" if "drawn" in kinds else "listed"


FAILURES = frozenset({"build_error", "crash"})
"""Statuses of a statement alone that make its class one to run alone (module docstring)."""


class Learned:
    """One target's slow and failing classes (module docstring). Thread-safe."""

    def __init__(self) -> None:
        self._timeouts: dict[Class, int] = {}  # class -> statements of it that timed out
        self._finishes: set[Class] = set()  # classes a statement of which finished at the ceiling
        self._fails: set[Class] = set()  # classes a statement of which failed alone (FAILURES)
        self._lock = threading.Lock()
        self.skipped = 0  # statements of classes given up on, not run

    def timed_out(self, program: Program) -> None:
        """A part of one statement timed out (a first try, or a statement of a slow class): its
        class is slow from now on."""
        key = class_of(program, program.body[0])
        with self._lock:
            self._timeouts[key] = self._timeouts.get(key, 0) + 1

    def finished(self, program: Program) -> None:
        """A part of one statement that timed out below the ceiling finished at the ceiling: its
        class is slow, not a hang (its later statements run alone at the ceiling)."""
        with self._lock:
            self._finishes.add(class_of(program, program.body[0]))

    def failed(self, program: Program) -> None:
        """A part of one statement failed (:data:`FAILURES`): its class runs alone from now on."""
        with self._lock:
            self._fails.add(class_of(program, program.body[0]))

    def finishes(self, program: Program) -> bool:
        """Whether the class of ``program``'s one statement finished at the ceiling before."""
        with self._lock:
            return class_of(program, program.body[0]) in self._finishes

    def split(self, program: Program) -> tuple[list[int], list[int], list[int]]:
        """``program``'s statements to run as usual, those of slow classes (each to run alone at
        low priority) and those of failing classes (each alone); those of classes timed out
        :data:`GIVE_UP` times are in none (skipped)."""
        everything = list(range(len(program.body)))
        with self._lock:
            if not self._timeouts and not self._fails:
                return everything, [], []
            classes = [class_of(program, s) for s in program.body]
            counts = [self._timeouts.get(c, 0) for c in classes]
            fails = [c in self._fails for c in classes]
            self.skipped += sum(n >= GIVE_UP for n in counts)
        return ([i for i in everything if not counts[i] and not fails[i]],
                [i for i in everything if 0 < counts[i] < GIVE_UP],
                [i for i in everything if fails[i] and not counts[i]])

    def classes(self) -> dict[Class, int]:
        """The slow classes and how many of their statements timed out."""
        with self._lock:
            return dict(self._timeouts)
