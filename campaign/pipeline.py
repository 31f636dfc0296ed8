"""One target's pipeline in a campaign: the driver never waits for the harness.

A :class:`Lane` owns a target's worker and two threads. Its *runner* thread does nothing but
hand prepared jobs to the worker and pass the results on; its *host* thread prepares the jobs
(OpenCL C source or validated, translated SPIR-V, packed inputs), has each result judged (the
harness, :mod:`campaign.pool`: in a worker process, or on the host thread without a pool) and
hands it to :mod:`campaign.record` (campaign.execute's ``prepare`` and ``conclude``, the steps
its ``execute`` runs one after the other). While the driver builds and runs one part, the
harness judges the previous one and prepares the next: its time is hidden behind the driver's. A
run that must be isolated queues its halves behind the parts already prepared.

At most ``depth`` programs are in flight per lane: :meth:`Lane.submit` blocks until one
finishes, which keeps memory bounded; each lane is fed at its own pace (campaign.feed). Each run
gets the target's measured limit for its area (campaign.timeouts); a single statement that
exceeds a limit below the ceiling is tried once more at the ceiling before it counts as a hang,
and its class is learned (campaign.learned): in later programs the statements of that class run
alone, after the campaign's other parts (:data:`LOW`), at the measured limit.
Work beside the campaign (triage) runs on the same worker through :meth:`Lane.beside`, ahead of
the campaign's queued parts and with none of them between its runs, so a driver's time is never
doubly booked. Every worker call's wall time is accounted in the lane's TargetStats (triage: the
whole time of a task beside the campaign), the runner's waits between calls by its Clock and, of
a target's workers together, their Occupancy (:mod:`campaign.progress`).
"""

from __future__ import annotations

import itertools
import os
import queue
import signal
import threading
import time
from concurrent.futures import Future
from dataclasses import replace
from typing import Callable, TypeVar

from campaign import record
from campaign.batching import Batches
from campaign.exchange import Blocks
from campaign.execute import Outcome, Part, first_parts, prepare
from campaign.expectations import Expectations
from campaign.learned import FAILURES, Learned
from campaign.pool import Harness
from campaign.progress import Clock, Occupancy, TargetStats
from campaign.record import Run
from campaign.inflight import Awaited, Guarded, LaneClosed, Spare, Ticket
from campaign.timeouts import Timeouts
from campaign.widening import Widths, extensible, extension, ranges, windows
from corpus.store import Corpus
from fuzz.drivers import Result, Target, Worker, WorkerStartError
from lang.flow import FlowProgram
from lang.ir import Program
from lang.layout import layout

T = TypeVar("T")


END, CALL, EXTEND, PART, LOW = 0, 1, 2, 3, 4
"""The runner's order: the end of the lane, then calls beside the campaign, then extensions of parts
that ran (campaign.widening), then the campaign's parts,
then statements of classes that timed out on the target (campaign.learned)."""

PROGRAM, RESULT, JUDGED, INPUTS, RECUT = 0, 1, 2, 3, 4
"""The host's events: a program submitted, a run's result, a run judged, an extension's inputs drawn, a
queued part larger than its target's batch now (cut again: :meth:`Lane._recut`)."""


class Lane:
    """A target, its worker, and the threads that keep the worker busy (module docstring)."""

    def __init__(self, target: Target, worker: Worker, corpus: Corpus | None, campaign: str, stats: TargetStats,
                 timeouts: Timeouts | None = None, depth: int = 2, harness: Harness | None = None,
                 started: float | None = None, widths: Widths | None = None, learned: Learned | None = None,
                 together: tuple[Occupancy, int] | None = None) -> None:
        self.target, self.worker, self.corpus, self.campaign = target, worker, corpus, campaign
        self.widths = widths  # the sizes of its parts' extensions (campaign.widening; None: none)
        self.stats = stats
        self.harness = harness or Harness(0, [target])  # judges the runs (campaign.pool)
        self.clock = Clock(stats, started, self.why, together)  # the target's timeline between the worker's calls
        self._handling = False  # the host thread is handling an event
        self.depth = depth
        self._unjudged: dict[int, tuple] = {}  # by id() of a part run and not yet judged: its time
        self.timeouts = timeouts or Timeouts(worker.timeout_s)
        self.learned, self.batches = (Learned() if learned is None else learned), Batches(target)  # shared by its lanes
        self._slots = threading.Semaphore(depth)
        self._jobs: queue.PriorityQueue = queue.PriorityQueue()  # (rank, order, item) for the runner: calls
        # beside the campaign (fn, done) first, then parts (part, job, ticket) in order; None ends it
        self._order = itertools.count()
        self._spare = Spare()  # a fresh worker starting for triage's next restart (renew)
        self._blocks = Blocks()  # its extensions' input and output blocks, used again (campaign.exchange)
        self._inbox: queue.Queue = queue.Queue()  # programs and results for the host; None ends it
        self.closing = threading.Event()
        self._tickets: set[Ticket] = set()  # programs in flight
        self.error: BaseException | None = None
        self._runner = threading.Thread(target=self._run_jobs, name=f"{target.name}-runner", daemon=True)
        self._host = threading.Thread(target=self._serve, name=f"{target.name}-host", daemon=True)
        self._awaited = Awaited(len((PROGRAM, RESULT, JUDGED, INPUTS)), self._inbox, self._handle,
                                lambda: threading.current_thread() is self._host, self.clock.settle)
        self._runner.start()
        self._host.start()

    # -- the campaign's side ------------------------------------------------------------------

    def submit(self, program: Program, expectations: Expectations | Future,
               done: Callable[[list[Outcome]], None]) -> None:
        """Queue ``program`` with its ``expectations`` (or a Future of them: campaign.pool);
        ``done(outcomes)`` is called (on the host thread) once all its parts are judged and
        recorded, with the outcome of each run. Blocks while ``depth`` programs are in flight."""
        while not self._slots.acquire(timeout=0.2):
            self._check()
            if self.closing.is_set():
                raise LaneClosed(self.target.name)
        self._check()
        self.clock.work(+1)
        if isinstance(expectations, Future):
            self._awaited.later(expectations, lambda f: (PROGRAM, program, f, done), PROGRAM)
        else:
            self._inbox.put((PROGRAM, program, expectations, done))

    def ready(self, timeout_s: float) -> bool:
        """Whether :meth:`submit` would take a program without waiting, waiting up to ``timeout_s``
        for a program in flight to finish (only the lane's feeder submits); the stop ends the wait."""
        until = time.monotonic() + timeout_s
        while not (ready := self._slots.acquire(timeout=min(0.2, timeout_s))) and not self.closing.is_set():
            timeout_s = until - time.monotonic()
            if timeout_s <= 0:
                break
        if ready:
            self._slots.release()
        self._check()
        if self.closing.is_set():
            raise LaneClosed(self.target.name)
        return ready

    def call(self, fn: Callable[[Worker], T]) -> T:
        """Run ``fn`` with the lane's worker on its runner thread, between the campaign's runs, and
        return what it returns (triage beside the campaign: campaign.campaign's side work); raises
        LaneClosed if the lane stops before ``fn`` returns, whatever ``fn`` returned or raised."""
        done: Future = Future()
        if self.closing.is_set():
            raise LaneClosed(self.target.name)
        self._put(CALL, (fn, done))
        while True:
            try:
                return done.result(timeout=0.2)
            except TimeoutError:
                self._check()

    def beside(self, fn: Callable[[Worker], T]) -> T:
        """Run ``fn`` (work beside the campaign: triage) with the lane's worker on its runner thread
        (:meth:`call`), ahead of the campaign's queued parts and with none of them between its runs;
        its whole time counts as triage. The worker ``fn`` gets raises LaneClosed once the lane stops
        (the campaign's deadline): a run the stop killed is never taken for the driver's answer."""
        def timed(worker: Worker) -> T:
            t0 = time.perf_counter()
            try:
                return fn(Guarded(lambda: self.worker, self.renew, self.closing, self.target.name))
            finally:
                self.clock.spent(time.perf_counter() - t0, 0.0, 0.0, "triage")
        return self.call(timed)

    def renew(self) -> None:
        """A fresh worker process for the lane (triage's restart: campaign.inflight.Spare.renew). On
        the runner thread only (:meth:`beside`)."""
        self.worker = self._spare.renew(self.worker)

    def unfinished(self) -> list[str]:
        """The parts (stored programs: whole programs, batches or halves) dispatched and not
        concluded: after :meth:`close`, what a resumed campaign must still run on this target."""
        return sorted({p.program.id for t in list(self._tickets) for p in t.open.values()})

    def idle(self) -> bool:
        """Whether nothing submitted is left to run or judge."""
        return not (self._inbox.unfinished_tasks or self._jobs.unfinished_tasks or any(self._awaited.counts))

    def close(self) -> None:
        """Stop now: queued jobs are dropped, a run in progress is killed with its worker (not
        recorded: its program stays in the corpus without a run), the worker is closed."""
        self.closing.set()
        while True:
            try:
                item = self._jobs.get_nowait()[-1]
                if isinstance(item, tuple) and isinstance(item[-1], Future):
                    item[-1].set_exception(LaneClosed(self.target.name))
                elif item is not None:
                    item[0].free()
                self._jobs.task_done()
            except queue.Empty:
                break
        self._put(END, None)
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
        for wall_s, *_ in self._unjudged.values():  # run, but the stop came before its judgment: void
            self.clock.spent(wall_s, 0.0, 0.0, "timeouts")
        self.worker.close()
        self._spare.close()
        self._blocks.close()

    def why(self, in_flight: int) -> str:
        """What the runner waits for with ``in_flight`` programs submitted (campaign.progress.Clock):
        whether the lane takes another program ("full", "open"), then the first of: its host thread
        ("host": busy, or events queued), the pool's expectations, an extension's inputs, judgments."""
        awaited = self._awaited.counts
        what = ("host" if self._handling or self._inbox.qsize() else "expectations" if awaited[PROGRAM] else
                "inputs" if awaited[INPUTS] else "judging" if awaited[JUDGED] else "draw")
        return f"{'full' if in_flight >= self.depth else 'open'}: {what}"

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
            self.clock.waiting(True)
            item = self._jobs.get()[-1]
            self.clock.waiting(False)
            if item is None:
                self.clock.stop()
                return
            try:
                if isinstance(item[-1], Future):  # a call beside the campaign
                    fn, done = item
                    if self.closing.is_set():
                        done.set_exception(LaneClosed(self.target.name))
                        continue
                    try:
                        value, error = fn(self.worker), None
                    except BaseException as e:  # noqa: BLE001 - the caller's to handle
                        value, error = None, e
                    if self.closing.is_set():  # close() may have killed the worker under the call
                        error = LaneClosed(self.target.name)
                    if error is None:
                        done.set_result(value)
                    else:
                        done.set_exception(error)
                    continue
                part, job, ticket = item
                whole = part.depth == 0 and not (part.low or part.extends or isinstance(part.program, FlowProgram))
                if whole and len(part.program.body) > self.batches.get(part.program.area).statements:
                    self._inbox.put((RECUT, part, ticket))  # cut before its batch shrank: cut again
                    continue
                limit = part.timeout_s or self.timeouts.limit(part.program.area)
                t0 = time.perf_counter()
                result = self.worker.run(job, limit)
                if whole and result.status == "timeout":  # learned before the next part is taken
                    self.batches.timed_out(part.program.area, len(part.program.body))
                self._inbox.put((RESULT, part, result, ticket, time.perf_counter() - t0, limit))
            finally:
                self._jobs.task_done()

    def _serve(self) -> None:
        while True:
            event = self._inbox.get()
            t0, self._handling = time.perf_counter(), True
            try:
                if event is None:
                    return
                if self.error is None:
                    self._handle(event)
                    self.stats.host_s += time.perf_counter() - t0
            except BaseException as e:  # a bug of ours: surfaced on the campaign's thread
                self.error = e
                self._slots.release()
            finally:
                self._handling = False
                self._inbox.task_done()

    def _handle(self, event: tuple) -> None:
        kind, *rest = event
        if kind == PROGRAM:
            self._program(*rest)
        elif kind == RESULT:
            self._result(*rest)
        elif kind == RECUT:
            self._recut(*rest)
        elif kind == INPUTS:  # an extension's launch (campaign.widening), its inputs drawn by the harness
            ext, images, ticket, own, block = rest
            try:
                expectations = Expectations.unpacked(ext, images.result(), {}, own)
            except BaseException:
                block.close()
                raise
            out = self._blocks.take(layout(ext).out_bytes)  # the driver's worker maps both (campaign.exchange)
            self._dispatch(Part(ext, expectations, extends=True, blocks=(block, out)), ticket)
        else:
            self._concluded(*rest)

    def _program(self, program: Program, expectations: Expectations | Future,
                 done: Callable[[list[Outcome]], None]) -> None:
        """A submitted program: stored, cut into parts (not those an interrupted run judged), dispatched."""
        if isinstance(expectations, Future):
            expectations = expectations.result()  # computed in the harness's pool (raises its error)
        pieces = self._cut(program, expectations)
        if self.corpus is not None:
            pieces = [p for p in pieces if not self.corpus.judged(p.program.id, self.target.name)]
        record.store_parts(self.corpus, program, [p.program for p in pieces], self.campaign)
        record.link_variants(self.corpus, [(p.program, *p.variant) for p in pieces if p.variant])

        def finished(outcomes: list[Outcome]) -> None:
            self._tickets.discard(ticket)
            self._slots.release()
            self.clock.work(-1)
            done(outcomes)

        ticket = Ticket(len(pieces), finished)
        self._tickets.add(ticket)
        for piece in pieces:
            self._dispatch(piece, ticket)
        if not pieces:
            finished([])

    def _cut(self, program: Program, expectations: Expectations) -> list[Part]:
        """Its parts now (campaign.execute.first_parts), a slow class that finished at the ceiling at it."""
        return [replace(p, timeout_s=self.timeouts.ceiling) if p.low and self.learned.finishes(p.program) else p
                for p in first_parts(self.target, program, expectations, self.batches.get(program.area), self.learned)]

    def _recut(self, part: Part, ticket: Ticket) -> None:
        """A whole part queued before its batch shrank (a part timed out, or was slower than
        campaign.batching.PART_S), cut again as a program is (rusticl's queued parts each timed out)."""
        pieces = self._cut(part.program, part.expectations)
        record.store_parts(self.corpus, part.program, [p.program for p in pieces], self.campaign)
        ticket.replace(part, len(pieces))
        for piece in pieces:
            self._dispatch(piece, ticket)

    def _result(self, part: Part, result: Result, ticket: Ticket, wall_s: float, limit: float) -> None:
        """A run's result: its time accounted, then judged (by the harness: campaign.pool)."""
        if self.closing.is_set() and result.status != "ok":  # killed by close(), not by the driver
            self.clock.spent(wall_s, 0.0, 0.0, "timeouts")  # cut short: void, but the worker's time
            part.free()
            return
        if part.extends:
            self._windows(part, result, ticket, wall_s)
            return
        timed_out = result.status == "timeout"
        how = "timeouts" if timed_out else "isolating" if part.depth else "run"
        spent = (wall_s, result.build_s, result.run_s, how)
        if result.status == "ok" and part.depth == 0:
            self.timeouts.observe(part.program.area, wall_s)
            self.batches.observe(part.program.area, len(part.program.body), wall_s)
            if not part.low:
                self._extend(part, result, ticket)
        single = not (flow := isinstance(part.program, FlowProgram)) and len(part.program.body) == 1  # flow: whole
        if single and timed_out and (part.low or part.timeout_s is None):  # a first try, or a statement of
            self.learned.timed_out(part.program)  # a slow class: its class is slow (campaign.learned)
        elif single and not timed_out and part.timeout_s is not None and not part.low:
            self.learned.finished(part.program)  # its try at the ceiling finished: slow, not a hang
        if single and result.status in FAILURES:
            self.learned.failed(part.program)  # its later statements run alone
        if timed_out and limit < self.timeouts.ceiling and (single or flow):
            # slower than its area's runs here, not yet a hang: again at the ceiling, unless its class timed out before
            again = "its class timed out before: not tried" if part.low else "trying"
            ticket.open.pop(id(part), None)
            self.clock.spent(*spent)
            record.record_run(self.corpus, Run(part.program, self.target, result, "slow",
                                               f"no result after {limit:g} s (measured limit); {again} at {self.timeouts.ceiling:g} s"), self.campaign)
            if not part.low:
                self._dispatch(replace(part, timeout_s=self.timeouts.ceiling), ticket)
            ticket.settle(Outcome("slow", runs=1), 0 if part.low else 1)
            return
        self._unjudged[id(part)] = spent  # accounted with its record (a run the stop leaves unjudged: void)
        self._awaited.later(self.harness.judge(part, self.target, result), lambda f: (JUDGED, part, ticket, f), JUDGED)

    def _concluded(self, part: Part, ticket: Ticket, judged: Future) -> None:
        """A judged run: recorded, its halves (if it must be isolated) dispatched."""
        ticket.open.pop(id(part), None)  # (until judged, a resumed run runs the part again)
        outcome, cuts, run, *cpu = judged.result()  # a window's: the CPU seconds of its harness task too
        self.clock.spent(*self._unjudged.pop(id(part)))
        if cpu:
            self.widths.judged(part.program.area, cpu[0], outcome.verdict.checks, part.expectations.lane_cpu_s)
        halves = [part.half(statements) for statements in cuts]
        record.record_run(self.corpus, run, self.campaign)
        record.store_parts(self.corpus, part.program, [h.program for h in halves], self.campaign)
        self.stats.add(outcome, part.depth == 0 and not part.extends)
        if self.closing.is_set():
            return
        for half in halves:
            self._dispatch(half, ticket)
        ticket.settle(outcome, len(halves))

    def _extend(self, part: Part, result: Result, ticket: Ticket) -> None:
        """After a whole part ran, its extension (campaign.widening), ahead of the parts queued."""
        if self.widths is None or not extensible(self.target, part.program):
            return
        self.widths.built(part.program.area, result.build_s, result.run_s, part.program.global_size)
        own = part.expectations.lane_cpu_s  # what the part's statements cost the harness a lane
        launches = extension(part.program, self.widths.items(part.program.area, part.program, own))
        record.store_parts(self.corpus, part.program, launches, self.campaign)
        ticket.left += len(launches)
        for ext in launches:  # its inputs drawn in the harness's pool, off this thread, into shared memory
            block = self._blocks.take(layout(ext).in_bytes)
            self._awaited.later(self.harness.inputs(ext, self.target.name, block),
                        lambda f, ext=ext, block=block: (INPUTS, ext, f, ticket, own, block), INPUTS)

    def _windows(self, part: Part, result: Result, ticket: Ticket, wall_s: float) -> None:
        """An extension's run: each window judged where its expectations are computed (a failed run
        as one, whole), its time shared among them by work-items (campaign.widening)."""
        ext = part.program
        ticket.open.pop(id(part), None)
        block = None
        if result.ok:
            self.widths.extended(ext.area, result.run_s, ext.global_size)
            cut = windows(ext)
            record.store_parts(self.corpus, ext, [w for _, w in cut], self.campaign)
            part.blocks[0].close()
            block = part.blocks[1]  # the run's output, read by the windows' tasks (campaign.exchange)
            todo = list(zip([w for _, w in cut], ranges(ext, cut)))
            block.hold(len(todo))
            result = replace(result, outputs={})
        else:
            part.free()
            todo = [(ext, {})]
        ticket.left += len(todo) - 1
        how = "timeouts" if result.status == "timeout" else "run"
        for program, where in todo:
            share = program.global_size / ext.global_size
            piece = Part(program, part.expectations, extends=True)
            self._unjudged[id(piece)] = (wall_s * share, result.build_s * share, result.run_s * share, how)
            judging = self.harness.window(program, self.target, result, share, block, where)
            if block is not None:
                judging.add_done_callback(block.release)
            self._awaited.later(judging, lambda f, p=piece: (JUDGED, p, ticket, f), JUDGED)

    def _dispatch(self, part: Part, ticket: Ticket) -> None:
        ticket.open[id(part)] = part
        job = prepare(part, self.target)
        if isinstance(job, Result):  # never reaches the driver: conclude it in turn
            self._inbox.put((RESULT, part, job, ticket, 0.0, 0.0))  # no wall time on the driver, no limit
        elif self.closing.is_set():
            part.free()
        else:
            self._put(LOW if part.low else EXTEND if part.extends else PART, (part, job, ticket))

    def _put(self, rank: int, item: tuple | None) -> None:
        self._jobs.put((rank, next(self._order), item))
