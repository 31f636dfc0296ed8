"""Triage beside a campaign (campaign.pipeline.Lane.beside, triage.beside.Beside): a task runs on
the lane's worker ahead of the campaign's queued parts and only its own time counts as triage; a
run the campaign's stop cut short is never taken for the driver's answer; a restart takes a spare
worker started in the background; every bucket gets a first turn before any gets a second, and the
buckets left waiting say why."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from simulated import SimTarget, SimWorker, simulated, store_observed

from campaign import inflight
from campaign.expectations import Expectations
from campaign.pipeline import Lane, LaneClosed
from campaign.progress import CampaignResult, TargetStats
from corpus.store import Corpus
from fuzz.drivers import Result, Target
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from triage import beside as beside_module
from triage import observe as triage_observe
from triage.beside import Beside, pending_reasons
from triage.reduce import STOPPED
from triage.reduce import engine as reducer

TARGET = Target("fake", {}, "fp-fake", "", 0, 0)
F = Type("float")


class _Worker:
    """A worker that records what it runs; its first run waits for ``release``."""

    timeout_s = 60.0
    pid = None
    target = "target"

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.release = threading.Event()
        self.restarts = self.starts = self.closed = 0

    def start(self) -> None:
        self.starts += 1

    def restart(self) -> None:
        self.restarts += 1

    def close(self) -> None:
        self.closed += 1

    def run(self, job, timeout_s=None) -> Result:
        self.ran.append(job if isinstance(job, str) else "campaign")
        if len(self.ran) == 1:
            assert self.release.wait(10)
        return Result("build_error", log="error: made up", build_s=0.01)


def _program(seed: int) -> Program:
    x = Buffer("in0", F, "in", Fill(seed))
    return Program((x, Buffer("out0", F, "out")), (Store("out0", Op("floor", (Load("in0", F),), F)),), 4)


def test_work_beside_the_campaign_goes_before_queued_parts_and_only_its_time_counts():
    worker = _Worker()
    lane = Lane(TARGET, worker, None, "c", TargetStats())
    done = threading.Semaphore(0)
    for seed in (1, 2):  # the first runs (and waits), the second is queued behind it
        p = _program(seed)
        lane.submit(p, Expectations(p), lambda outcomes: done.release())
    time.sleep(0.3)

    def triage(w):
        time.sleep(0.1)
        return w.run("beside")

    releaser = threading.Timer(0.3, worker.release.set)
    releaser.start()
    assert lane.beside(triage).status == "build_error"
    assert done.acquire(timeout=10) and done.acquire(timeout=10)
    lane.close()
    assert worker.ran == ["campaign", "beside", "campaign"]
    assert 0.1 <= lane.stats.triage_s < 0.3  # its own time, not the wait for the campaign's run


def test_a_run_the_stop_cut_short_is_never_taken_for_the_drivers_answer():
    """The campaign's deadline closes the lane while a run beside it is in flight (the worker is
    killed): the run's result, a crash, is not handed to triage, which sees LaneClosed instead."""
    worker = _Worker()
    worker.ran.append("warm")  # no wait on the first run
    lane = Lane(TARGET, worker, None, "c", TargetStats())
    closer = threading.Thread(target=lane.close)
    answers = []

    def killed(job, timeout_s=None) -> Result:
        closer.start()
        time.sleep(0.2)  # the lane is closing
        return Result("crash", log="killed by SIGKILL")

    worker.run = killed
    with pytest.raises(LaneClosed):
        lane.beside(lambda w: answers.append(w.run("beside")))
    closer.join(5)
    assert answers == []


def test_a_restart_beside_the_campaign_takes_a_spare_worker(monkeypatch):
    """The first restart restarts the lane's worker and starts a spare in the background; the next
    takes the spare (already started: no process start to wait for) and closes the old worker."""
    spares: list[_Worker] = []

    def spare(target, timeout_s):
        spares.append(_Worker())
        spares[-1].ran.append("warm")
        return spares[-1]

    monkeypatch.setattr(inflight, "Worker", spare)
    worker = _Worker()
    worker.ran.append("warm")
    lane = Lane(TARGET, worker, None, "c", TargetStats())
    lane.beside(lambda w: w.restart())
    assert worker.restarts == 1 and len(spares) == 1
    lane.beside(lambda w: (w.restart(), w.run("fresh")))
    assert lane.worker is spares[0] and spares[0].starts == 1 and spares[0].ran == ["warm", "fresh"]
    deadline = time.monotonic() + 5
    while not worker.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert worker.closed == 1 and len(spares) == 2
    lane.close()
    assert spares[1].closed == 1  # the spare not taken is closed with the lane


# -- the order of turns and the reasons ----------------------------------------------------------


def _floor_and_ceil_wrong(program: Program, s: Store, expected, inputs) -> np.ndarray:
    """``floor`` and ``ceil`` read 0 (two bugs, two buckets)."""
    if s.value.op in ("floor", "ceil"):
        return np.zeros(len(expected), np.uint32)
    return expected.allowed[0]


POSITIVE = Fill(0, values=tuple(int(v) for v in np.array([1.5, 2.25, 3.75, 5.5], np.float32).view(np.uint32)))
"""Inputs whose floor and ceil are positive: 0 is a wrong value, never a wrong signed zero."""


class _Lane:
    """A campaign lane as a task beside it uses it: its worker, here a simulated one."""

    def __init__(self) -> None:
        self.worker = SimWorker()

    def beside(self, fn):
        return fn(self.worker)


def _stored(tmp_path, monkeypatch, ops: list[str]) -> Corpus:
    observe = simulated(_floor_and_ceil_wrong)
    monkeypatch.setattr(reducer, "observe", observe)
    monkeypatch.setattr(triage_observe, "runnable", lambda target, program: program)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    corpus.update_campaign("c", 0, {}, 0, 0, {})
    for i, op in enumerate(ops):
        x = Buffer(f"in{i}", F, "in", POSITIVE)
        others = [Store(f"o{i}{k}", Op("fabs", (Load(f"in{i}", F),), F)) for k in range(3)]
        program = Program((x, *(Buffer(s.buffer, F, "out") for s in others), Buffer(f"out{i}", F, "out")),
                          (*others, Store(f"out{i}", Op(op, (Load(f"in{i}", F),), F))), 8)
        store_observed(corpus, program, observe)
    return corpus


def test_every_bucket_gets_a_first_turn_before_any_gets_a_second(tmp_path, monkeypatch):
    corpus = _stored(tmp_path, monkeypatch, ["floor", "ceil"])
    beside = Beside(corpus, "c")
    beside.since = 0.0  # both found by this run
    monkeypatch.setattr(beside_module, "FIRST_TURN_S", 0.0)  # no time for any candidate: stopped
    lane = _Lane()
    for _ in range(2):  # the second task is the other bucket's first turn, not this one's second
        beside.task(SimTarget())(lane, 25.0, 100.0)
    turns = [corpus.reductions(b["id"]) for b in corpus.buckets()]
    assert [len(t) for t in turns] == [1, 1] and all(STOPPED in t[0]["why"] for t in turns)
    assert all(b["reduced"]["statements"] == 4 for b in corpus.buckets())
    for _ in range(2):  # the second turns, from what the first kept
        beside.task(SimTarget())(lane, 25.0, 100.0)
    assert beside.task(SimTarget()) is None
    assert sorted(b["signature"]["operation"] for b in corpus.buckets()) == ["ceil", "floor"]
    assert all(b["reduced"] == {"statements": 1, "work_items": 1, "why": "", "undefined": []}
               for b in corpus.buckets())


def test_a_task_with_no_time_left_for_a_reduction_leaves_it_a_second_turn(tmp_path, monkeypatch):
    """A task held to a second of the triage share (campaign.campaign: held to what is left) does
    not reduce its bucket, nor leave it tried and pending: the reduction is its second turn."""
    corpus = _stored(tmp_path, monkeypatch, ["floor"])
    beside = Beside(corpus, "c")
    beside.since = 0.0
    lane = _Lane()
    beside.task(SimTarget())(lane, 0.5, 0.5)
    assert not corpus.reductions(corpus.buckets()[0]["id"])
    beside.task(SimTarget())(lane, 25.0, 100.0)  # no bucket waits: its second turn
    [bucket] = corpus.buckets()
    assert bucket["reduced"]["statements"] == 1 and beside.task(SimTarget()) is None


def test_a_bucket_left_waiting_says_why(tmp_path, monkeypatch):
    corpus = _stored(tmp_path, monkeypatch, ["floor", "ceil"])
    beside = Beside(corpus, "c")
    beside.since = 0.0
    beside.task(SimTarget())(_Lane(), 25.0, 100.0)  # one bucket reduced, the other never started
    stats = TargetStats(wall_s=120.0, triage_s=30.0)
    assert beside.leave(CampaignResult("c", 0, 2, 120.0, {"sim": stats}), 0.25) == 1
    (waiting,) = [b for b in corpus.buckets() if not b["reduced"]]
    why = pending_reasons(corpus, "c")
    assert list(why) == [waiting["id"]]
    assert why[waiting["id"]].startswith("not started: found ")
    assert why[waiting["id"]].endswith("the triage share of sim (25% of 120 s) was spent on 1 other buckets")
    beside.leave(CampaignResult("c", 0, 2, 120.0, {"sim": stats}), 0.25, 12.0)  # a closing stretch: 27 + 12 s
    assert pending_reasons(corpus, "c")[waiting["id"]].endswith(
        "the triage share of sim (25% of 108 s, then all of its last 12 s) was spent on 1 other buckets")


def test_a_lane_with_no_bucket_of_its_own_takes_its_devices_other_front_ends(tmp_path, monkeypatch):
    """The SPIR-V path's lane of a device triages the OpenCL C path's buckets once it has none of its
    own, run as the OpenCL C target (its worker runs either front end); another device's are not its."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Named:
        name: str

    corpus = _stored(tmp_path, monkeypatch, ["floor"])
    spirv, other = Named("sim/spirv"), Named("pocl")
    beside = Beside(corpus, "c", targets=[SimTarget(), spirv, other])
    beside.since = 0.0
    assert [t.name for t in beside.front_ends(spirv)] == ["sim"] and beside.front_ends(other) == []
    assert beside.task(other) is None  # another device
    task = beside.task(spirv)
    assert task is not None
    task(_Lane(), 25.0, 100.0)
    [bucket] = corpus.buckets()
    assert bucket["reduced"]["statements"] == 1 and beside.done == {"sim/spirv": 1}


def test_a_bucket_its_triage_emptied_is_taken_again_when_new_rows_fill_it(tmp_path, monkeypatch):
    """A victim of an interaction (``floor`` reads 0 beside a ``fract``, a call with an out-parameter)
    is reduced to the pair and its rows move to the interaction's bucket; a later program's ``floor``
    beside a ``fract`` fills the emptied bucket again, and the lane takes it again."""
    from triage import covictims

    def beside_fract(program, s, expected, inputs):
        if s.value.op == "floor" and any(t.value.op == "fract" for t in program.body):
            return np.zeros(len(expected), np.uint32)
        return expected.allowed[0]

    observe = simulated(beside_fract)
    for m in (reducer, covictims):
        monkeypatch.setattr(m, "observe", observe)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    corpus.update_campaign("c", 0, {}, 0, 0, {})

    def program(seed: int) -> Program:
        x, y = Buffer("x", F, "in", POSITIVE), Buffer(f"y{seed}", F, "in", POSITIVE)
        return Program((x, y, Buffer("o", F, "out"), Buffer("f", F, "out"), Buffer("p", F, "out")),
                       (Store("o", Op("floor", (Load("x", F),), F)),
                        Store("f", Op("fract", (Load(f"y{seed}", F),), F, (("out", "p"),)))), 4)

    store_observed(corpus, program(1), observe)
    [victim] = corpus.buckets()
    beside = Beside(corpus, "c")
    beside.since = 0.0
    beside.task(SimTarget())(_Lane(), 25.0, 100.0)
    assert beside.task(SimTarget()) is None
    [pair] = corpus.buckets()
    assert pair["signature"]["operation"] == "floor + fract"
    time.sleep(0.01)
    store_observed(corpus, program(2), observe)
    assert {b["id"] for b in corpus.buckets()} == {victim["id"], pair["id"]}
    task = beside.task(SimTarget())
    assert task is not None
    task(_Lane(), 25.0, 100.0)
    [after] = corpus.buckets()
    assert after["id"] == pair["id"] and after["programs"] > pair["programs"]  # the later program's rows too


def test_triage_is_held_to_its_share_but_in_the_closing_stretch():
    """A target starts a task beside the campaign only with at least MIN_TASK_S of its triage share
    left, and the task may take what is left (not more); in the closing stretch
    (campaign.campaign.closing_s: a tenth of the campaign, at most 30 s) it triages a waiting bucket
    first, whatever it spent, with the seconds to the deadline as its budget. Before it, a target
    whose driver answered no run for QUIET_S starts none, and a task is held so that it is not
    twice that long without one (PoCL 5.0 judged no lane in a whole minute while it triaged)."""
    from campaign.campaign import MIN_TASK_S, _feed, closing_s
    from campaign.feed import QUIET_S

    class _Clock:
        def feeding(self, on: bool) -> None:
            pass

    def lane(triage_s: float, quiet: float = 0.0):
        class _FeedLane:
            target, clock = TARGET, _Clock()
            stats = TargetStats(triage_s=triage_s, answered_at=time.monotonic() - quiet)

            def ready(self, wait: float) -> bool:
                return True
        return _FeedLane()

    class _NoDraws:
        def next_for(self, target, stop, feeding):
            return None  # the end of the draws: the feeder returns

    budgets: list[tuple[float, float]] = []
    stop = threading.Event()

    def side(target):
        return lambda lane, seconds, share_s: (budgets.append((seconds, share_s)), stop.set())

    now = time.monotonic()  # 200 s into a campaign with a 25% share: 50 s of triage allowed so far
    for spent in (100.0, 50.0 - MIN_TASK_S + 1):  # over its share, and under it by less than MIN_TASK_S
        _feed(lane(spent), _NoDraws(), stop, side, 0.25, now - 200, now + 30, now + 60, [])
        assert budgets == [] and not stop.is_set()  # programs
    _feed(lane(40.0), _NoDraws(), stop, side, 0.25, now - 200, now + 30, now + 60, [])
    assert stop.is_set() and budgets[0] == (pytest.approx(10, abs=0.5), pytest.approx(10, abs=0.5))
    stop.clear()
    _feed(lane(100.0), _NoDraws(), stop, side, 0.25, now - 200, now - 1, now + 60, [])  # the closing stretch
    assert stop.is_set() and 55 < budgets[1][0] <= 60 and 55 < budgets[1][1] <= 60
    assert closing_s(5) == 30 and closing_s(2) == 12 and closing_s(600) == 30
    # the driver answered no run for QUIET_S (20 s): no task, whatever the share left, but at the close
    stop.clear()
    _feed(lane(0.0, quiet=QUIET_S + 1), _NoDraws(), stop, side, 0.25, now - 200, now + 30, now + 60, [])
    assert len(budgets) == 2 and not stop.is_set()
    _feed(lane(0.0, quiet=QUIET_S + 1), _NoDraws(), stop, side, 0.25, now - 200, now - 1, now + 60, [])
    assert len(budgets) == 3 and stop.is_set()
    stop.clear()
    # 15 s without an answer and 50 s of share left: held to 2 * 20 - 15 = 25 s, not 50
    _feed(lane(0.0, quiet=15.0), _NoDraws(), stop, side, 0.25, now - 200, now + 30, now + 60, [])
    assert stop.is_set() and budgets[3] == (pytest.approx(25, abs=0.5), pytest.approx(50, abs=0.5))
