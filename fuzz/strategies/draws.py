"""Independent draws from a program strategy, the way a fuzzing campaign needs them.

Hypothesis's ``@given`` loop is built for property tests: it starts from the simplest examples and
mutates each new test case up to five times by copying spans of its choices, so in a long run
about five programs in six repeat the structure of an earlier one (measured with Hypothesis
6.170: 39 distinct structures in 250 programs). A campaign wants every program new, so it feeds
the strategy independent random bytes through Hypothesis's fuzzing entry point
(``fuzz_one_input``, the hook external fuzzers use): program ``i`` of seed ``s`` is drawn from
PCG64 bytes seeded with ``(s, i)``, reproducible on its own without drawing the ones before it.
"""

from __future__ import annotations

from itertools import count
from typing import Iterator

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy

from lang.ir import Program

BUFFER_BYTES = 1 << 16  # enough choices for the largest default program; doubled on overrun
MAX_ATTEMPTS = 8


class DrawError(RuntimeError):
    """The strategy rejected every attempt for one index (a generator bug)."""


class Draws:
    """The programs of one strategy and seed, by index (see the module docstring)."""

    def __init__(self, strategy: SearchStrategy[Program], seed: int):
        self.seed = seed
        self._box: list[Program] = []

        @settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
        @given(strategy)
        def take(program: Program) -> None:
            self._box.append(program)

        self._take = take.hypothesis.fuzz_one_input

    def __getitem__(self, index: int) -> Program:
        size = BUFFER_BYTES
        for attempt in range(MAX_ATTEMPTS):
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([self.seed, index, attempt])))
            self._box.clear()
            if self._take(rng.bytes(size)) is not None and self._box:
                return self._box[-1]
            size *= 2
        raise DrawError(f"the strategy rejected {MAX_ATTEMPTS} draws for seed {self.seed} index {index}")

    def stream(self, start: int = 0) -> Iterator[tuple[int, Program]]:
        """``(index, program)`` for ``index = start, start + 1, ...`` forever."""
        for index in count(start):
            yield index, self[index]


def sample(strategy: SearchStrategy[Program], n: int, seed: int = 0) -> list[Program]:
    """The first ``n`` programs of the stream of ``seed``."""
    draws = Draws(strategy, seed)
    return [draws[i] for i in range(n)]
