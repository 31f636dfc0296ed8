"""The harness's worker processes: a program's expectations and the judging of its runs beside the
campaign's process.

A campaign's process keeps what must be one: scheduling, the corpus's writes and each lane's
runner thread (campaign.pipeline). The harness's CPU work runs in a pool of ``jobs`` worker
processes (:class:`Harness`): drawing a program of an area's stream (fuzz.strategies.draws: program
``i`` of an area is the same whoever draws it), a program's expectations (campaign.expectations:
the oracle's numpy work and its mpmath references; a process's mpmath lock is its own; those of
the drawing target's flush-to-zero class, another class's when a target of it first takes the
program: :meth:`Harness.complete`), and judging
a run against them with its disagreements re-derived (campaign.execute.judged), and a GPU's
extensions of its parts (campaign.widening: their inputs, and each window's expectations and verdict
in one task). campaign.cores.default_jobs
sizes the pool from the machine's cores, less one for each driver worker process; on a
machine where that leaves fewer than campaign.cores.MIN_JOBS, the pool is the campaign's own process
(``jobs`` 0: each task runs on the thread that asks, as a campaign without a pool does), which
``bench/pool.py`` measured faster there (docs/campaigns.md, "The harness's worker processes").

The pool is shared fairly: each target has a queue of tasks (the draws and expectations its feeder
asks for, the judging of its runs), and a worker process that comes free takes the next task of the
queues in turn, so a target with many tasks waiting cannot starve another. What crosses between the
processes is compact: a program as its JSON text, inputs and expectations as numpy arrays with each
lane's rule as a code into a table of the rules used (campaign.expectations.pack: a rule's index is
a process's own), a run's result as its bytes, and back a judged run's outcome and the statements of
the halves that isolate it. Each task's CPU seconds are counted per target and kind
(:attr:`Harness.cpu`), in its worker process or on the thread that ran it: the campaign's summary
shows them in a table of their own.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any, Callable

import numpy as np

from campaign import exchange
from campaign.exchange import Block
from campaign.execute import Outcome, Part, expectations_of, judged
from campaign.expectations import Expectations
from campaign.flow import FlowExpectations
from campaign.record import Run
from campaign.turns import Turns
from campaign.widening import draw_inputs, input_ranges, window_result
from fuzz.drivers import Result, Target
from fuzz.drivers.capabilities import ftz_of
from fuzz.strategies import AREAS, Caps, Draws
from lang.flow import FlowProgram, program_from_json
from lang.ir import Program
from lang.policy import Policy

KINDS = ("draw", "expect", "judge")
"""What the harness's workers do: draw programs, compute their expectations, judge runs."""

SHARE_WINDOW_S = 30.0
"""The recent past over which :meth:`Harness.share` counts what the other targets used of the pool."""

class Harness:
    """The harness's worker processes, or none (``jobs`` 0: the tasks run on the calling thread);
    module docstring. ``draws`` (the capabilities, policy and seed of a campaign) defines the areas'
    streams of draws."""

    def __init__(self, jobs: int, targets: list[Target], draws: tuple[Caps, Policy, int] | None = None) -> None:
        self.jobs = jobs
        self.cpu: dict[str, dict[str, float]] = {}  # owner (a target) -> kind -> CPU seconds
        self.tasks: dict[str, dict[str, int]] = {}  # owner -> kind -> tasks
        self._lock = threading.RLock()
        self._owners = max(1, len(targets))
        self.clock: Callable[[], float] = time.monotonic  # share()'s
        self._started = self.clock()
        self._used: deque[tuple[float, str, float]] = deque()  # (when, owner, CPU seconds) of the last tasks
        self._waiting = Turns()
        self._running = 0
        self._draws = draws
        self._own: dict[str, Draws] = {}  # jobs 0: the areas' streams, drawn here
        self._classes: dict[tuple[int, frozenset], Future] = {}  # complete(): the classes being computed
        self._pool = None
        if jobs:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["campaign.pool"])
            self._pids = context.SimpleQueue()  # each worker process's, as it starts (close() stops them)
            self._pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_setup,
                                             initargs=(targets, draws, self._pids))

    # -- the tasks -----------------------------------------------------------------------------

    def draw(self, area: str, index: int, owner: str) -> Future:
        """Program ``index`` of ``area``'s stream (a Future of the Program), drawn for ``owner``."""
        if self._pool is None:
            return self._inline(owner, "draw", self._stream(area).__getitem__, index)
        return self._submit(owner, "draw", _draw_task, (area, index), program_from_json)

    def expect(self, program: Program, ftz_classes: tuple[frozenset, ...], owner: str) -> Future:
        """``program``'s expectations for each flush-to-zero class (a Future of Expectations; a flow
        program's, campaign.flow.FlowExpectations, are computed when its first run is judged)."""
        if self._pool is None or isinstance(program, FlowProgram):
            return self._inline(owner, "expect", expectations, program, ftz_classes)
        return self._expected_there(program, ftz_classes, owner)

    def _expected_there(self, program: Program, ftz_classes: tuple[frozenset, ...], owner: str,
                        finish: Callable[[Expectations], Any] = lambda e: e) -> Future:
        """``program``'s expectations computed in a worker process, handed to ``finish``."""
        block = Block(0)  # the expectations' arrays come back in it (campaign.exchange)
        future = self._submit(owner, "expect", _expect_task, (program.to_json(), ftz_classes, block.path),
                              lambda value: finish(Expectations.unpacked(program, *exchange.take(value[0], block.path),
                                                                         lane_cpu_s=value[1])))
        future.add_done_callback(lambda _: block.close())
        return future

    def complete(self, expectations: Expectations | FlowExpectations | Future, ftz: frozenset,
                 owner: str) -> Expectations | FlowExpectations | Future:
        """``expectations`` (or a Future of them) with the flush-to-zero class ``ftz`` computed, for
        ``owner``, which is about to run their program: they themselves where the class is there, else
        a Future of them once it is (computed in the pool, or on this thread without one; one
        computation of a class however many targets of it ask at once)."""
        if isinstance(expectations, Future):
            out: Future = Future()
            expectations.add_done_callback(partial(self._completed, out, ftz, owner))
            return out
        if not isinstance(expectations, Expectations) or expectations.has(ftz):
            return expectations
        if self._pool is None:
            return self._inline(owner, "expect", _with_class, expectations, ftz)
        key = (id(expectations), ftz)
        with self._lock:
            future = self._classes.get(key)
            if future is None:
                future = self._classes[key] = self._expected_there(expectations.program, (ftz,), owner,
                                                                   expectations.adopt)
                future.add_done_callback(lambda _: self._classes.pop(key, None))  # at once if done already
            return future

    def _completed(self, out: Future, ftz: frozenset, owner: str, computed: Future) -> None:
        try:
            got = self.complete(computed.result(), ftz, owner)
        except BaseException as e:  # noqa: BLE001 - the caller's, through the future
            out.set_exception(e)
            return
        if isinstance(got, Future):
            got.add_done_callback(partial(_chain, out))
        else:
            out.set_result(got)

    def judge(self, part: Part, target: Target, result: Result) -> Future:
        """A run of ``part`` judged (campaign.execute.judged): a Future of its outcome, the statements of
        each half that isolates it, and the run to record."""
        if self._pool is None:
            return self._inline(target.name, "judge", judged, part.program, part.expectations, target, result)
        flow = isinstance(part.program, FlowProgram)  # its interpreter runs in the worker process
        inputs, by_ftz = ({}, {}) if flow else part.expectations.packed(ftz_of(target))
        block = Block(0)  # the bulk of the task goes in it (campaign.exchange)
        outputs = {name: np.frombuffer(data, np.uint8) for name, data in result.outputs.items()}
        task = (part.program.to_json(), exchange.put((inputs, by_ftz, outputs), block.path), block.path, target.name,
                replace(result, outputs={}))
        future = self._submit(target.name, "judge", _judge_task, task, partial(_restored, part.program, target, result))
        future.add_done_callback(lambda _: block.close())
        return future

    def inputs(self, program: Program, owner: str, block: Block) -> Future:
        """``program``'s packed ``in`` argument (lang.layout.input_bytes) written into ``block``, drawn
        for ``owner`` (an extension's launch, campaign.widening: 0.1-0.25 s of CPU per 16,384
        work-items; a task per range of campaign.widening.input_ranges): a Future of its images'
        values (lang.layout.input_values), which are not per work-item and are few."""
        if self._pool is None:
            return self._inline(owner, "draw", draw_inputs, program, block.path, 0, program.global_size)
        text = program.to_json()  # its ranges of work-items drawn by as many worker processes at once
        return _joined([self._submit(owner, "draw", _inputs_task, (text, block.path, start, items), lambda v: v)
                        for start, items in input_ranges(program)])

    def window(self, program: Program, target: Target, result: Result, share: float, block: Block | None,
               ranges: dict[str, tuple[int, int]]) -> Future:
        """A window of an extension (campaign.widening) judged where its expectations are computed:
        a Future of its outcome, no halves, its run and the CPU seconds both took. Its output
        buffers' bytes are the ``ranges`` (offset, size) of ``block`` (the extension's ``out``
        argument: campaign.widening.ranges; None for a run that failed); ``result`` holds the
        extension's status and times, ``share`` of which are the window's."""
        path = "" if block is None else block.path
        if self._pool is None:
            return self._inline(target.name, "judge", window_judged, program, target, result, share, path, ranges)
        return self._submit(target.name, "judge", _window_task, (program.to_json(), target.name, result, share,
                                                                  path, ranges),
                            partial(_window_restored, program, target))

    def share(self, owner: str) -> float:
        """The worker processes ``owner``'s target can count on now (campaign.widening sizes its
        extensions by it): its fair share, the pool over the targets, or what the other targets'
        tasks left of the pool in the last :data:`SHARE_WINDOW_S` seconds (their CPU seconds over
        that time) where that is more (an H200 machine, images, NVIDIA beside PoCL 5.0: PoCL's tasks
        took 2 s of CPU in 30 s of its 7 processes' share); the pool's turns (:class:`Turns`) still
        give every target's next task the next free process."""
        now = self.clock()
        fair = self.jobs / self._owners
        with self._lock:
            self._forget(now)
            others = sum(cpu_s for _, who, cpu_s in self._used if who != owner)
        span = min(SHARE_WINDOW_S, now - self._started)
        if span < SHARE_WINDOW_S / 6:  # too early to tell what the others use
            return fair
        return max(fair, self.jobs - others / span)

    def close(self) -> None:
        """Stop the worker processes now (a task running is not waited for: its caller is closing)."""
        if self._pool is None:
            return
        with self._lock:
            while self._waiting:
                self._waiting.next()[-1].cancel()  # its caller's result() raises CancelledError
        self._pool.shutdown(wait=False, cancel_futures=True)
        ours = set()
        while not self._pids.empty():
            ours.add(self._pids.get())
        for child in multiprocessing.active_children():
            if child.pid in ours:
                child.terminate()

    # -- the queues ----------------------------------------------------------------------------

    def _stream(self, area: str) -> Draws:
        if area not in self._own:
            caps, policy, seed = self._draws
            self._own[area] = Draws(AREAS[area](caps, policy), seed)
        return self._own[area]

    def _inline(self, owner: str, kind: str, fn: Callable, *args: Any) -> Future:
        future: Future = Future()
        t0 = time.thread_time()
        try:
            future.set_result(fn(*args))
        except Exception as e:  # noqa: BLE001 - the caller's, through the future
            future.set_exception(e)
        self._count(owner, kind, time.thread_time() - t0)
        return future

    def _submit(self, owner: str, kind: str, fn: Callable, args: tuple, finish: Callable) -> Future:
        future: Future = Future()
        with self._lock:
            self._waiting.put(owner, (owner, kind, fn, args, finish, future), first=kind != "judge")
            self._pump()
        return future

    def _pump(self) -> None:
        """Hand the next tasks, the owners in turn, to free worker processes (under the lock)."""
        while self._running < self.jobs and self._waiting:
            owner, kind, fn, args, finish, future = self._waiting.next()
            try:
                running = self._pool.submit(_timed, fn, *args)
            except RuntimeError as e:  # shut down: the campaign is closing
                future.set_exception(e)
                continue
            self._running += 1
            running.add_done_callback(partial(self._done, owner, kind, finish, future))

    def _done(self, owner: str, kind: str, finish: Callable, future: Future, running: Future) -> None:
        with self._lock:
            self._running -= 1
            self._pump()
        try:
            value, cpu_s = running.result()
            self._count(owner, kind, cpu_s)
            future.set_result(finish(value))
        except BaseException as e:  # noqa: BLE001 - the caller's, through the future (cancelled: closing)
            future.set_exception(e)

    def _count(self, owner: str, kind: str, cpu_s: float) -> None:
        with self._lock:
            self.cpu.setdefault(owner, dict.fromkeys(KINDS, 0.0))[kind] += cpu_s
            self.tasks.setdefault(owner, dict.fromkeys(KINDS, 0))[kind] += 1
            self._used.append((self.clock(), owner, cpu_s))
            self._forget(self._used[-1][0])

    def _forget(self, now: float) -> None:
        """Drop the tasks older than :data:`SHARE_WINDOW_S` from :meth:`share`'s count (under the lock)."""
        while self._used and self._used[0][0] < now - SHARE_WINDOW_S:
            self._used.popleft()


def expectations(program: Program | FlowProgram, ftz_classes: tuple[frozenset, ...]) -> Expectations | FlowExpectations:
    """``program``'s expectations, computed for each flush-to-zero class in ``ftz_classes`` (a flow
    program's when first judged)."""
    out = expectations_of(program)
    for ftz in ftz_classes if isinstance(out, Expectations) else ():
        out.get(ftz)
    return out


def _chain(out: Future, source: Future) -> None:
    try:
        out.set_result(source.result())
    except BaseException as e:  # noqa: BLE001 - the caller's, through the future
        out.set_exception(e)


def _with_class(expectations: Expectations, ftz: frozenset) -> Expectations:
    expectations.get(ftz)
    return expectations


def _joined(futures: list[Future]) -> Future:
    """A Future of the first of ``futures``' values, once every one is done (the first error, if any)."""
    out: Future = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def one(_: Future) -> None:
        with lock:
            left[0] -= 1
            if left[0]:
                return
        error = next((f.exception() for f in futures if f.exception() is not None), None)
        if error is None:
            out.set_result(futures[0].result())
        else:
            out.set_exception(error)
    for f in futures:
        f.add_done_callback(one)
    return out


def window_judged(program: Program, target: Target, result: Result, share: float, path: str,
                  ranges: dict[str, tuple[int, int]]) -> tuple[Outcome, list[list[int]], Run, float]:
    """:meth:`Harness.window`'s task: the window's output bytes read from the shared block at
    ``path`` (campaign.exchange), its expectations, then its run judged; a window that must be
    isolated is not (its statements are its part's, which ran and was judged whole)."""
    t0 = time.process_time()
    if result.ok:
        result = replace(result, outputs=exchange.read(path, ranges))
    own = window_result(program, result, share)
    outcome, cuts, run = judged(program, Expectations(program), target, own)
    if cuts:
        run.log += " (a window of an extension: its part isolates)"
    run.result = Result(own.status, build_s=own.build_s, run_s=own.run_s)  # the bytes stay here
    return outcome, [], run, time.process_time() - t0


def _window_restored(program: Program, target: Target, value: tuple) -> tuple[Outcome, list[list[int]], Run, float]:
    outcome, result, (status, log, verdict, rows, errors, defects), cpu_s = value
    return outcome, [], Run(program, target, result, status, log, verdict, rows, errors, defects), cpu_s


def _restored(program: Program, target: Target, result: Result,
              value: tuple[Outcome, list[list[int]], tuple]) -> tuple[Outcome, list[list[int]], Run]:
    """A judged run as a worker process sent it back, with its program, target and result again."""
    outcome, cuts, (status, log, verdict, rows, errors, defects) = value
    return outcome, cuts, Run(program, target, result, status, log, verdict, rows, errors, defects)


# -- in the worker processes --------------------------------------------------------------------

_TARGETS: dict[str, Target] = {}
_DRAWS: dict[str, Draws] = {}
_SETUP: list = []


def _setup(targets: list[Target], draws: tuple | None, pids) -> None:
    _TARGETS.update({t.name: t for t in targets})
    _SETUP.append(draws)
    pids.put(os.getpid())


def _timed(fn: Callable, *args: Any) -> tuple[Any, float]:
    t0 = time.process_time()
    value = fn(*args)
    return value, time.process_time() - t0


def _draw_task(area: str, index: int) -> str:
    if area not in _DRAWS:
        caps, policy, seed = _SETUP[0]
        _DRAWS[area] = Draws(AREAS[area](caps, policy), seed)
    return _DRAWS[area][index].to_json()


def _expect_task(program_json: str, ftz_classes: tuple[frozenset, ...], path: str) -> tuple:
    out = expectations(Program.from_json(program_json), ftz_classes)
    return exchange.put(out.packed(), path), out.lane_cpu_s


def _window_task(program_json: str, target: str, result: Result, share: float, path: str,
                 ranges: dict[str, tuple[int, int]]) -> tuple:
    outcome, _, run, cpu_s = window_judged(Program.from_json(program_json), _TARGETS[target], result, share,
                                           path, ranges)
    return outcome, run.result, (run.status, run.log, run.verdict, run.rows, run.errors, run.defects), cpu_s


def _inputs_task(program_json: str, path: str, start: int, items: int) -> dict:
    return draw_inputs(Program.from_json(program_json), path, start, items)


def _judge_task(program_json: str, packed: exchange.Packed, path: str, target: str, result: Result) -> tuple:
    inputs, by_ftz, outputs = exchange.take(packed, path)
    result = replace(result, outputs={name: data.tobytes() for name, data in outputs.items()})
    program = program_from_json(program_json)
    expected = (FlowExpectations(program) if isinstance(program, FlowProgram)
                else Expectations.unpacked(program, inputs, by_ftz))
    outcome, cuts, run = judged(program, expected, _TARGETS[target], result)
    # one pickle: the run's rows stay the outcome's (campaign.record adds the run's keys to both)
    return outcome, cuts, (run.status, run.log, run.verdict, run.rows, run.errors, run.defects)
