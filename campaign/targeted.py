"""Programs from Hypothesis's own search, steered by ``target()`` toward the campaign's coverage gaps.

Most of a campaign's programs are independent draws (:mod:`fuzz.strategies.draws`). A share of
them (``Policy.p_targeted``) comes instead from a running ``@given`` loop per area in which every
program reports, through ``hypothesis.target``, how many coverage cells (construct x type x width:
corpus.coverage) it uses that the campaign has not generated yet. Hypothesis's targeted phase then
mutates the best-scoring programs (hill climbing on the choice sequence) and keeps their Pareto
front in its example database, here the corpus (corpus.hypothesis_db), so a resumed campaign
resumes the search too. The score is taken when the program is generated; it is the gap the
program would close, which is what the scheduler rewards once it has run.

Measured (bench/targeted.py, docs/campaigns.md), this score does not help: Hypothesis's loop
mutates its best programs, and the variants share their structure, so 300 programs reach fewer
cells than independent draws (0.46x to 0.96x with the whole share, 0.98x with a quarter). The
policy's share is therefore 0; the search stays for scores that reward a hill climb and for users
who want to try a share.

The math area's search is such a hill climb (``feedback=True``): its score is the largest
numerical error the drivers made on the program, in units of the bound the spec allows (the
judge measures every statement's largest error in ulps, OpenCL C 3.0 §7.4), so it is known only
after the program ran. The ``@given`` body hands the program out and waits until the campaign
reports that score (:meth:`Search.observed`), then passes it to ``target()``: Hypothesis's
targeted phase mutates the operands of the programs with the largest errors toward larger ones.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, settings, target
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from lang.ir import Program

ROUND = 2000
"""Examples per ``@given`` round (Hypothesis interleaves optimisation passes from 1000 on)."""

FEEDBACK_ROUND = 60
"""Examples per round of a search scored after the run: a campaign runs a few hundred math
programs in minutes, so the optimisation (from half the round on) must start early."""


class _Stop(BaseException):
    """Raised inside the Hypothesis loop to end it (a BaseException: Hypothesis lets it through)."""


class Search:
    """One area's targeted search, on a thread of its own, handing out one program at a time."""

    def __init__(self, strategy: SearchStrategy[Program], database: ExampleDatabase,
                 score: Callable[[Program], float] | None, label: str, *, wait_s: float = 600.0,
                 examples: int | None = None) -> None:
        """``score`` rates a program when it is generated; None: the campaign reports each
        program's score after it ran (:meth:`observed`), waited for at most ``wait_s``.
        ``examples`` per ``@given`` round (ROUND, or FEEDBACK_ROUND for a feedback search):
        Hypothesis starts optimising at half of them."""
        self._out: queue.Queue = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._args = (strategy, database, score, label)
        self._wait_s = wait_s
        self._examples = examples or (FEEDBACK_ROUND if score is None else ROUND)
        self._scores: dict[str, float] = {}
        self._scored = threading.Condition()
        self.feedback = score is None
        self._thread = threading.Thread(target=self._loop, name=f"search-{label}", daemon=True)
        self._thread.start()

    def _round(self) -> None:
        """One ``@given`` run of ``ROUND`` examples. Not seeded: Hypothesis's ``@seed`` turns the
        example database off, and the database is what carries the search across runs; every
        program is stored in the corpus before it runs, so none is lost for not being redrawable."""
        strategy, database, score, label = self._args

        @settings(database=database, max_examples=self._examples, deadline=None, suppress_health_check=list(HealthCheck),
                  phases=[Phase.reuse, Phase.generate, Phase.target], verbosity=Verbosity.quiet)
        @given(strategy)
        def search(program: Program) -> None:
            if score is not None:
                target(float(score(program)), label=label)
            while not self._stop.is_set():
                try:
                    self._out.put(program, timeout=0.2)
                    break
                except queue.Full:
                    continue
            else:
                raise _Stop
            if score is None:
                target(self._await(program.id), label=label)

        search()

    def _await(self, program_id: str) -> float:
        """The score the campaign reports for a program it ran (0 if none comes in time)."""
        with self._scored:
            self._scored.wait_for(lambda: program_id in self._scores or self._stop.is_set(), timeout=self._wait_s)
            if self._stop.is_set() and program_id not in self._scores:
                raise _Stop
            return float(self._scores.pop(program_id, 0.0))

    def observed(self, program_id: str, value: float) -> None:
        """A program of this search ran: its score (feedback searches)."""
        with self._scored:
            self._scores[program_id] = value
            self._scored.notify_all()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._round()
        except _Stop:
            pass
        except Exception as e:  # a generator bug: the campaign goes on with independent draws
            self.error = e

    def next(self, timeout_s: float | None = None) -> Program | None:
        """The next program, or None if the search has none ready in time (or has failed). A
        feedback search is waited for only briefly (its program comes once the last one ran)."""
        try:
            return self._out.get(timeout=timeout_s if timeout_s is not None else 0.05 if self.feedback else 5.0)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._stop.set()
        with self._scored:
            self._scored.notify_all()
        self._thread.join(timeout=5)
