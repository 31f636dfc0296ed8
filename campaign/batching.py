"""How much of a generated program each driver builds at once: its batch.

A build costs 5-700 ms while running thousands of work-items costs far less (docs/benchmarks.md),
so a program carries many statements over many work-items; but compile time grows with kernel
size at different rates per driver (rusticl's grows superlinearly). A campaign generates one
program of ``Policy.statements`` statements over ``Policy.global_size`` work-items and hands each
driver parts of it of that driver's batch size, so every driver judges the same lanes.

The table holds the batch that gave the most judged lanes per second on each driver, measured
with ``python3 bench/batch_size.py`` on the 2-core development machine (see README, "Batch size"),
on conversions. Other areas cost a driver differently (rusticl compiles a 16-statement math part
in 5-14 s), so during a campaign each target's statements per part adapt per area
(:class:`Batches`): a part slower than :data:`PART_S` is cut in half next time, a quicker one
doubled, within [:data:`MIN_STATEMENTS`, :data:`MAX_STATEMENTS`]; after a part that timed out, the
batch is at most half that part, and a part queued before the batch shrank is cut again before it
runs.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from fuzz.drivers import Target
from lang.derive import restrict
from lang.ir import Program


@dataclass(frozen=True)
class Batch:
    statements: int
    global_size: int


BATCHES: dict[str, Batch] = {
    "pocl": Batch(64, 16384),
    "rusticl": Batch(16, 16384),
    "oclgrind": Batch(32, 16384),
}
DEFAULT_BATCH = Batch(32, 16384)


def batch_for(target: Target) -> Batch:
    """The batch of the target's driver (its lineage: ``pocl-6.0`` batches as ``pocl``)."""
    return BATCHES.get(target.lineage, DEFAULT_BATCH)  # a release batches as its driver does


PART_S = (0.5, 4.0)
"""The wall time a part should take on its target, in seconds: long enough that a build is worth
it, short enough that a deadline, a timeout or a failure's isolation costs little."""
MIN_STATEMENTS, MAX_STATEMENTS = 4, 256


class Batches:
    """One target's batch per area, adapted from its measured parts (module docstring). Its lane's
    runner thread learns of a part that timed out before it takes the next (campaign.pipeline: a
    part queued before the batch shrank is cut again), its host thread of the others."""

    def __init__(self, target: Target) -> None:
        self.base = batch_for(target)
        self._statements: dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, area: str) -> Batch:
        return Batch(self._statements.get(area, self.base.statements), self.base.global_size)

    def observe(self, area: str, statements: int, wall_s: float) -> None:
        """A whole part of ``statements`` statements of ``area`` ran in ``wall_s`` seconds."""
        with self._lock:
            now = self._statements.get(area, self.base.statements)
            if statements < now:  # a program smaller than the batch says nothing about the batch
                return
            if wall_s > PART_S[1]:
                self._statements[area] = max(MIN_STATEMENTS, now // 2)
            elif wall_s < PART_S[0]:
                self._statements[area] = min(MAX_STATEMENTS, now * 2)

    def timed_out(self, area: str, statements: int) -> None:
        """A whole part of ``statements`` statements of ``area`` timed out: next time at most half
        of it (a batch grown on quick parts met slower statements: rusticl's 64-statement parts of
        the expressions sweep's shapes after its quick operand classes)."""
        with self._lock:
            now = self._statements.get(area, self.base.statements)
            self._statements[area] = max(MIN_STATEMENTS, min(now, statements // 2))


def parts(program: Program, batch: Batch) -> list[Program]:
    """``program`` cut into consecutive runs of ``batch.statements`` statements over the first
    ``batch.global_size`` work-items (the program itself when it already fits)."""
    n = len(program.body)
    if n <= batch.statements and program.global_size <= batch.global_size:
        return [program]
    return [
        restrict(program, list(range(i, min(i + batch.statements, n))), batch.global_size)
        for i in range(0, n, batch.statements)
    ]
