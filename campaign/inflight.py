"""What a lane (campaign.pipeline) keeps around its worker: the programs in flight (:class:`Ticket`),
the harness's results its host thread awaits (:class:`Awaited`), a spare worker starting in the
background (:class:`Spare`) and the worker as work beside the campaign sees it (:class:`Guarded`),
which raises :class:`LaneClosed` once the lane stops."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Callable, TypeVar

from campaign.execute import Outcome, Part
from fuzz.drivers import Job, Result, Worker

T = TypeVar("T")


class LaneClosed(RuntimeError):
    """The lane stopped (the campaign's deadline, Ctrl-C) before a call beside the campaign ran or
    while it ran: what the call did then is void (its worker may have been killed under it, a
    worker starting then fails to start)."""


class Guarded:
    """A lane's worker as work beside the campaign uses it (campaign.pipeline.Lane.beside): its
    ``run`` (of ``worker()``, the lane's worker now), and ``restart`` (``renew``: the lane's), each
    raising LaneClosed instead once ``closing`` is set (before, or after a call the stop cut short:
    a killed run, a restart that failed)."""

    def __init__(self, worker: Callable[[], Worker], renew: Callable[[], None], closing: threading.Event,
                 name: str) -> None:
        self._worker, self._renew, self._closing, self._name = worker, renew, closing, name
        self.timeout_s = worker().timeout_s

    def run(self, job: Job, timeout_s: float | None = None) -> Result:
        return self._guard(lambda: self._worker().run(job, timeout_s))

    def restart(self) -> None:
        self._guard(self._renew)

    def _guard(self, step: Callable[[], T]) -> T:
        if self._closing.is_set():
            raise LaneClosed(self._name)
        try:
            out = step()
        except Exception:
            if self._closing.is_set():
                raise LaneClosed(self._name) from None
            raise
        if self._closing.is_set():
            raise LaneClosed(self._name)
        return out


class Spare:
    """A fresh worker of a lane's target started in the background for triage's next restart
    (campaign.pipeline.Lane.renew: a process start, a second or more on a loaded machine, is not
    waited for)."""

    def __init__(self) -> None:
        self._next: Future | None = None

    def renew(self, worker: Worker) -> Worker:
        """A fresh worker in place of ``worker`` (nothing it built or ran is left): the spare started
        since the last renewal (``worker`` closed in the background), else ``worker`` restarted;
        then the next spare starts."""
        fresh = None
        if self._next is not None:
            try:
                fresh = self._next.result()
            except Exception:  # noqa: BLE001 - the spare did not start: a restart instead
                pass
        if fresh is None:
            worker.restart()
            fresh = worker
        else:
            threading.Thread(target=worker.close, daemon=True).start()
        self._next = Future()
        threading.Thread(target=self._start, args=(Worker(worker.target, timeout_s=worker.timeout_s), self._next),
                         daemon=True).start()
        return fresh

    def close(self) -> None:
        """Close the spare, once started (one that failed to start is closed already)."""
        if self._next is not None:
            try:
                self._next.result().close()
            except Exception:  # noqa: BLE001 - it did not start: nothing to close
                pass

    @staticmethod
    def _start(worker: Worker, started: Future) -> None:
        try:
            worker.start()
        except Exception as e:  # noqa: BLE001 - handed over: the lane restarts its own worker instead
            worker.close()
            started.set_exception(e)
            return
        started.set_result(worker)


class Ticket:
    """A submitted program's parts still to be concluded on this lane, and the outcomes so far."""

    def __init__(self, parts: int, done: Callable[[list[Outcome]], None]) -> None:
        self.left, self.done = parts, done
        self.outcomes: list[Outcome] = []
        self.open: dict[int, Part] = {}  # parts dispatched and not yet concluded, by id()

    def replace(self, part: Part, pieces: int) -> bool:
        """``part``, dispatched and not run, is run as ``pieces`` parts instead (campaign.pipeline:
        cut again), each dispatched in its place; True once none is left (as :meth:`settle`: a
        part whose statements the target now skips, campaign.learned, may leave none)."""
        self.open.pop(id(part), None)
        self.left += pieces - 1
        if self.left == 0:
            self.done(self.outcomes)
            return True
        return False

    def settle(self, outcome: Outcome, added: int) -> bool:
        """One part concluded with ``outcome``, ``added`` halves queued in its place; True once
        none is left (``done`` is then called with every outcome of the program)."""
        self.outcomes.append(outcome)
        self.left += added - 1
        if self.left == 0:
            self.done(self.outcomes)
            return True
        return False


class Awaited:
    """A lane's results computed in the harness's pool (expectations, judgments, an extension's
    inputs), each handled as an event of its host thread once done, counted by kind until then
    (what the lane waits for: campaign.progress.Clock)."""

    def __init__(self, kinds: int, inbox: queue.Queue, handle: Callable[[tuple], None], host: Callable[[], bool],
                 settle: Callable[[], None]) -> None:
        self.counts = [0] * kinds
        self._inbox, self._handle, self._host, self._settle = inbox, handle, host, settle
        self._lock = threading.Lock()

    def later(self, future: Future, event: Callable[[Future], tuple], kind: int) -> None:
        """Handle ``event(future)`` (an event of ``kind``) once ``future`` is done: now, if it is
        and this is the host thread (no pool); else on the host thread, once the pool's callback
        queues it in ``inbox``."""
        if future.done() and self._host():
            self._handle(event(future))
            return
        with self._lock:
            self.counts[kind] += 1
        self._settle()  # what the runner waits for may have changed

        def arrived(f: Future) -> None:
            self._inbox.put(event(f))
            with self._lock:
                self.counts[kind] -= 1
            self._settle()

        future.add_done_callback(arrived)
