"""How much of a generated program each driver builds at once: its batch.

A build costs 5-700 ms while running thousands of work-items costs far less (DESIGN invariant 4),
so a program carries many statements over many work-items; but compile time grows with kernel
size at different rates per driver (rusticl's grows superlinearly). A campaign generates one
program of ``Policy.statements`` statements over ``Policy.global_size`` work-items and hands each
driver parts of it of that driver's batch size, so every driver judges the same lanes.

The table holds the batch that gave the most judged lanes per second on each driver, measured
with ``python3 bench/batch_size.py`` on the 2-core development machine (see README, "Batch size").
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzz.drivers import Target
from lang.ir import Program, restrict


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
    return BATCHES.get(target.family, DEFAULT_BATCH)


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
