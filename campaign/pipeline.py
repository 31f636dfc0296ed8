"""One target's pipeline in a campaign: the driver never waits for the harness.

A :class:`Lane` owns a target's worker and two threads. Its *runner* thread does nothing but
hand prepared jobs to the worker and pass the results on; its *host* thread prepares the jobs
(OpenCL C source or validated, translated SPIR-V, packed inputs) and judges each result
and hands it to :mod:`campaign.record` (:func:`campaign.execute.prepare` and :func:`campaign.execute.conclude`, the steps
:func:`campaign.execute.execute` runs one after the other). While the driver builds and runs one
part, the host judges the previous one and prepares the next, so the harness's own time is
hidden behind the driver's instead of added to it. A run that must be isolated queues its halves
behind the parts already prepared.

At most ``depth`` programs are in flight per lane: :meth:`Lane.submit` blocks until one
finishes, which keeps memory bounded and the targets of a campaign within a program or two of
each other.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from typing import Callable

from campaign import record
from campaign.batching import batch_for
from campaign.execute import Outcome, Part, conclude, first_parts, prepare
from campaign.expectations import Expectations
from corpus.store import Corpus
from fuzz.drivers import Result, Target, Worker, WorkerStartError
from lang.ir import Program


class _Ticket:
    """A submitted program's parts still to be concluded on this lane, and the outcomes so far."""

    def __init__(self, parts: int, done: Callable[[list[Outcome]], None]) -> None:
        self.left, self.done = parts, done
        self.outcomes: list[Outcome] = []

    def settle(self, outcome: Outcome, added: int) -> bool:
        """One part concluded with ``outcome``, ``added`` halves queued in its place; True once
        none is left (``done`` is then called with every outcome of the program)."""
        self.outcomes.append(outcome)
        self.left += added - 1
        if self.left == 0:
            self.done(self.outcomes)
            return True
        return False


class Lane:
    """A target, its worker, and the threads that keep the worker busy (module docstring)."""

    def __init__(self, target: Target, worker: Worker, corpus: Corpus | None, campaign: str,
                 record: Callable[[Outcome, bool], None], depth: int = 2) -> None:
        self.target, self.worker, self.corpus, self.campaign = target, worker, corpus, campaign
        self._record = record  # (outcome of one run, whether the run was of a whole part)
        self._slots = threading.Semaphore(depth)
        self._jobs: queue.Queue = queue.Queue()  # (part, job, ticket) for the runner; None ends it
        self._inbox: queue.Queue = queue.Queue()  # programs and results for the host; None ends it
        self._closing = threading.Event()
        self.error: BaseException | None = None
        self._runner = threading.Thread(target=self._run_jobs, name=f"{target.name}-runner", daemon=True)
        self._host = threading.Thread(target=self._serve, name=f"{target.name}-host", daemon=True)
        self._runner.start()
        self._host.start()

    # -- the campaign's side ------------------------------------------------------------------

    def submit(self, program: Program, expectations: Expectations, done: Callable[[list[Outcome]], None]) -> None:
        """Queue ``program``; ``done(outcomes)`` is called (on the host thread) once all its parts
        are judged and recorded, with the outcome of each run. Blocks while ``depth`` programs
        are in flight."""
        while not self._slots.acquire(timeout=0.2):
            self._check()
        self._check()
        self._inbox.put((program, expectations, done))

    def drain(self) -> None:
        """Wait until every submitted program is done."""
        while self._inbox.unfinished_tasks or self._jobs.unfinished_tasks:
            self._check()
            time.sleep(0.01)
        self._check()

    def close(self) -> None:
        """Stop now: queued jobs are dropped, a run in progress is killed with its worker (not
        recorded: its program stays in the corpus without a run), the worker is closed."""
        self._closing.set()
        while True:
            try:
                self._jobs.get_nowait()
                self._jobs.task_done()
            except queue.Empty:
                break
        self._jobs.put(None)
        self._runner.join(timeout=0.5)
        if self._runner.is_alive():  # a long build or run: do not wait for it (Ctrl-C must be prompt)
            pid = self.worker.pid
            if pid is not None:
                try:
                    os.killpg(pid, signal.SIGKILL)  # the worker leads its own process group
                except (ProcessLookupError, PermissionError):
                    pass
            self._runner.join()
        self._inbox.put(None)
        self._host.join()
        self.worker.close()

    def _check(self) -> None:
        if self.error is not None:
            raise self.error

    # -- the threads --------------------------------------------------------------------------

    def _run_jobs(self) -> None:
        try:
            self.worker.start()  # open the device while the first program is generated
        except WorkerStartError:
            pass  # the first run tries again and records why it fails
        while True:
            item = self._jobs.get()
            if item is None:
                return
            part, job, ticket = item
            try:
                self._inbox.put((part, self.worker.run(job), ticket))
            finally:
                self._jobs.task_done()

    def _serve(self) -> None:
        while True:
            event = self._inbox.get()
            try:
                if event is None:
                    return
                if self.error is None:
                    self._handle(event)
            except BaseException as e:  # a bug of ours: surfaced on the campaign's thread
                self.error = e
                self._slots.release()
            finally:
                self._inbox.task_done()

    def _handle(self, event: tuple) -> None:
        if isinstance(event[0], Program):  # a submitted program
            program, expectations, done = event
            pieces = first_parts(self.target, program, expectations, batch_for(self.target))
            record.store_parts(self.corpus, program, [p.program for p in pieces], self.campaign)

            def finished(outcomes: list[Outcome]) -> None:
                self._slots.release()
                done(outcomes)

            ticket = _Ticket(len(pieces), finished)
            for piece in pieces:
                self._dispatch(piece, ticket)
            return
        part, result, ticket = event
        if self._closing.is_set() and result.status != "ok":  # killed by close(), not by the driver
            return
        outcome, halves, run = conclude(part, self.target, result)
        record.record_run(self.corpus, run, self.campaign)
        record.store_parts(self.corpus, part.program, [h.program for h in halves], self.campaign)
        self._record(outcome, part.depth == 0)
        if self._closing.is_set():
            return
        for half in halves:
            self._dispatch(half, ticket)
        ticket.settle(outcome, len(halves))

    def _dispatch(self, part: Part, ticket: _Ticket) -> None:
        job = prepare(part, self.target)
        if isinstance(job, Result):  # never reaches the driver: conclude it in turn
            self._inbox.put((part, job, ticket))
        elif not self._closing.is_set():
            self._jobs.put((part, job, ticket))
