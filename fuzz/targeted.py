"""Programs from Hypothesis's own search, steered by ``target()`` toward the campaign's coverage gaps.

Most of a campaign's programs are independent draws (:mod:`fuzz.strategies.draws`). A share of
them (``Policy.p_targeted``) comes instead from a running ``@given`` loop per area in which every
program reports, through ``hypothesis.target``, how many coverage cells (construct x type x width:
corpus.coverage) it uses that the campaign has not generated yet. Hypothesis's targeted phase then
mutates the best-scoring programs (hill climbing on the choice sequence) and keeps their Pareto
front in its example database, here the corpus (corpus.hypothesis_db), so a resumed campaign
resumes the search too. The score is taken when the program is generated; it is the gap the
program would close, which is what the scheduler rewards once it has run.

Measured (bench/targeted.py, README "Campaigns"), this score does not help: Hypothesis's loop
mutates its best programs, and the variants share their structure, so 300 programs reach fewer
cells than independent draws (0.46x to 0.96x with the whole share, 0.98x with a quarter). The
policy's share is therefore 0; the search stays for scores that reward a hill climb (a
numerical error growing toward a maximum) and for users who want to try a share.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, settings, target
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from fuzz.ir import Program

ROUND = 2000
"""Examples per ``@given`` round (Hypothesis interleaves optimisation passes from 1000 on)."""


class _Stop(BaseException):
    """Raised inside the Hypothesis loop to end it (a BaseException: Hypothesis lets it through)."""


class Search:
    """One area's targeted search, on a thread of its own, handing out one program at a time."""

    def __init__(self, strategy: SearchStrategy[Program], database: ExampleDatabase,
                 score: Callable[[Program], float], label: str) -> None:
        self._out: queue.Queue = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._args = (strategy, database, score, label)
        self._thread = threading.Thread(target=self._loop, name=f"search-{label}", daemon=True)
        self._thread.start()

    def _round(self) -> None:
        """One ``@given`` run of ``ROUND`` examples. Not seeded: Hypothesis's ``@seed`` turns the
        example database off, and the database is what carries the search across runs; every
        program is stored in the corpus before it runs, so none is lost for not being redrawable."""
        strategy, database, score, label = self._args

        @settings(database=database, max_examples=ROUND, deadline=None, suppress_health_check=list(HealthCheck),
                  phases=[Phase.reuse, Phase.generate, Phase.target], verbosity=Verbosity.quiet)
        @given(strategy)
        def search(program: Program) -> None:
            target(float(score(program)), label=label)
            while not self._stop.is_set():
                try:
                    self._out.put(program, timeout=0.2)
                    return
                except queue.Full:
                    continue
            raise _Stop

        search()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._round()
        except _Stop:
            pass
        except Exception as e:  # a generator bug: the campaign goes on with independent draws
            self.error = e

    def next(self, timeout_s: float = 5.0) -> Program | None:
        """The next program, or None if the search has none ready in time (or has failed)."""
        try:
            return self._out.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
