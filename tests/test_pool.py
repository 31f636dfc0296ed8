"""The harness's worker processes (campaign.pool) and each target's timeline (campaign.progress):
a program's expectations and its judgment are the same computed in a worker process as here (rules
cross by id, not by this process's index); the pool is shared in turn; the
time table's columns add up to the wall time."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SMALL, same_expectations

from campaign.execute import Part, conclude
from campaign.expectations import Expectations, pack, unpack
from campaign.pool import Harness, expectations
from campaign.turns import Turns
from campaign.progress import Clock, Occupancy, TargetStats
from fuzz.drivers import Result, Target
from fuzz.strategies import AREAS, Caps, Draws
from lang.layout import layout
from oracles import adopt_rules, portable_rules, rule
from oracles.rules import register

TARGET = Target("fake", {}, "fp-fake", "", 0, 0)
FTZ = (frozenset(),)


def test_a_target_may_count_on_what_the_others_leave_of_the_pool():
    harness = Harness(8, [TARGET, Target("slow", {}, "fp-slow", "", 0, 0)])  # no task: no process starts
    clock = [harness.clock()]
    harness.clock = lambda: clock[0]
    try:
        assert harness.share("fake") == 4.0  # the fair share before anything is known
        clock[0] += 20.0
        harness._count("slow", "expect", 10.0)  # the other target's tasks: 10 CPU seconds in 20 s
        harness._count("fake", "judge", 100.0)  # its own do not count against it
        assert harness.share("fake") == pytest.approx(8 - 10 / 20, abs=1e-3)
        assert harness.share("slow") == 4.0  # 8 - 100 / 20 is less than the fair share
        clock[0] += 40.0  # past SHARE_WINDOW_S (30 s): those tasks are forgotten
        assert harness.share("fake") == 8.0
    finally:
        harness.close()


def test_rule_indices_cross_as_codes_into_a_table_of_rule_ids():
    a = register("test.pool.a", "a", "§1")
    b = register("test.pool.b", "b", "§2")
    codes, table = portable_rules(np.array([b, a, b, 0], dtype=np.int16))
    assert [fields[0] for fields in table] == ["unspecified", "test.pool.a", "test.pool.b"]  # by index
    assert codes.tolist() == [2, 1, 2, 0]
    assert adopt_rules(codes, table).tolist() == [b, a, b, 0]
    # another process numbers its rules apart: a table naming a rule not registered here registers it
    foreign = (("test.pool.c", "c", "§3", "violation", "", ""),)
    index = adopt_rules(np.array([0, 0], dtype=np.int16), foreign)
    assert rule(int(index[0])).id == "test.pool.c" and rule(int(index[0])).section == "§3"


def _math_program():
    return Draws(AREAS["math"](Caps(), SMALL), 3)[0]


def test_packed_expectations_keep_every_lane():
    program = _math_program()
    here = expectations(program, FTZ)
    again = Expectations.unpacked(program, *here.packed())
    for name, e in here.get(FTZ[0]).items():
        e2 = again.get(FTZ[0])[name]
        assert [rule(int(i)).id for i in e2.rule] == [rule(int(i)).id for i in e.rule]
        assert all(np.array_equal(x, y) for x, y in zip(e.allowed, e2.allowed))
        assert np.array_equal(e.judged, e2.judged) and np.array_equal(e.any_nan, e2.any_nan)
        assert (e.error is None) == (e2.error is None)
        assert unpack(pack(e)).scalar == e.scalar


@pytest.fixture(scope="module")
def pool():
    harness = Harness(1, [TARGET], (Caps(), SMALL, 3))
    yield harness
    harness.close()


def _wrong_outputs(program, exp) -> Result:
    """The reference of every output, with lane 0 of each statement's buffer off by one bit."""
    out = bytearray(layout(program).out_bytes)
    for name, region in layout(program).outputs.items():
        bits = exp[name].allowed[0].copy()
        bits[0] ^= 1
        out[region.offset:region.offset + bits.nbytes] = bits.tobytes()
    return Result("ok", outputs={"out": bytes(out)}, build_s=0.25, run_s=0.5)


def test_a_worker_process_draws_expects_and_judges_as_this_process_does(pool):
    program = pool.draw("math", 0, "fake").result(60)
    assert program.id == _math_program().id  # program i of the area's stream, whoever draws it
    there = pool.expect(program, FTZ, "fake").result(60)
    here = expectations(program, FTZ)
    for name, e in here.get(FTZ[0]).items():
        assert [rule(int(i)).id for i in there.get(FTZ[0])[name].rule] == [rule(int(i)).id for i in e.rule]
    result = _wrong_outputs(program, here.get(FTZ[0]))
    outcome, cuts, run = pool.judge(Part(program, there), TARGET, result).result(60)
    local, halves, local_run = conclude(Part(program, here), TARGET, result)
    assert outcome.verdict.judged == local.verdict.judged > 0
    assert outcome.verdict.mismatches == local.verdict.mismatches
    key = ("buffer", "lane", "rule", "actual", "allowed", "deviation")
    assert [[r[k] for k in key] for r in outcome.verdict.rows] == [[r[k] for k in key] for r in local.verdict.rows]
    assert cuts == halves == []  # a wrong lane per statement: no statement wrong on every lane, no isolation
    assert run.program is program and run.result is result and run.status == local_run.status
    assert run.rows is outcome.verdict.rows or not run.rows  # one list: the record adds the run's keys to both
    assert pool.tasks["fake"] == {"draw": 1, "expect": 1, "judge": 1} and pool.cpu["fake"]["expect"] > 0


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_class_is_computed_once_when_a_target_of_it_first_takes_the_program(pool, jobs):
    """The drawing target's class first; another class's expectations, the same as computed here,
    join the same object when a target of that class takes the program, once for many such targets."""
    harness = pool if jobs else Harness(0, [TARGET])
    program = _math_program()
    flush = frozenset({"float"})
    drawn = harness.expect(program, FTZ, "fake")  # a Future (a done one without a pool)
    first = harness.complete(drawn, flush, "a")
    second = harness.complete(drawn.result(60), flush, "b")
    got = first.result(60)
    assert got is drawn.result(60) and got.has(FTZ[0]) and got.has(flush)
    assert second is first or second is got or second.result(60) is got  # one computation (or done already)
    assert harness.complete(got, flush, "c") is got  # there: nothing to compute
    here = expectations(program, (flush,))
    assert same_expectations(got.get(flush), here.get(flush))
    assert not same_expectations(got.get(FTZ[0]), here.get(flush))  # the classes differ in this program
    asked = [harness.tasks.get(owner, {}).get("expect", 0) for owner in "abc"]
    assert sum(asked) == 1 and asked[2] == 0  # a's or b's, whichever asked first


def test_the_pool_hands_out_the_owners_tasks_in_turn():
    """A worker process that comes free takes the next owner's task, not the first come."""
    turns = Turns()
    for owner, task in (("a", 1), ("a", 2), ("a", 3), ("b", 4)):
        turns.put(owner, task)
    got = [turns.next()]
    turns.put("c", 5)
    while turns:
        got.append(turns.next())
    assert got == [1, 4, 2, 5, 3]


def test_an_owners_first_tasks_go_before_its_others_but_not_before_other_owners():
    turns = Turns()
    for owner, task, first in (("a", "judge 1", False), ("a", "judge 2", False), ("b", "judge 3", False),
                               ("a", "expect 4", True)):
        turns.put(owner, task, first)
    got = []
    while turns:
        got.append(turns.next())
    assert got == ["expect 4", "judge 3", "judge 1", "judge 2"]


def test_the_timeline_of_a_hand_made_target_adds_up(monkeypatch):
    """A hand-worked timeline: set-up until 1 s (harness), its feeder drawing until 3 s (harness), a run
    of 4 s (1 s build, 2 s run, 1 s moving buffers: harness), a judged program, a timeout, then the draws
    over (idle) and the stop at 12 s; the columns add up to the 13 s of wall time, and the harness's
    waits are split by what the lane was waiting for as each began (the lane's ``why``)."""
    now = [0.0]
    monkeypatch.setattr("campaign.progress.time.monotonic", lambda: now[0])
    stats = TargetStats()
    clock = Clock(stats, started=0.0, why=lambda in_flight: f"{in_flight} in flight: judging")

    def at(t, *steps):
        now[0] = t
        for step in steps:
            step()

    at(1.0, lambda: clock.waiting(True))  # the worker started: it waits for its first job
    at(3.0, lambda: clock.work(+1), lambda: clock.waiting(False))  # a program submitted, its part runs
    at(7.0, lambda: stats.spent(4.0, 1.0, 2.0, "run"), lambda: clock.waiting(True))
    at(8.0, lambda: clock.waiting(False))  # the harness judged and prepared the next part in 1 s
    at(10.0, lambda: stats.spent(2.0, 0.0, 0.0, "timeouts"), lambda: clock.waiting(True),
       lambda: clock.work(-1), lambda: clock.feeding(False))  # the last program done, the draws over
    at(12.0, clock.stop)
    at(13.0, clock.settle)
    stats.wall_s = 13.0
    assert (stats.build_s, stats.run_s, stats.timeouts_s) == (1.0, 2.0, 2.0)
    assert stats.harness_s == 1.0 + 2.0 + 1.0 + 1.0  # set-up, drawing, buffers, judging
    assert stats.calls_s == 1.0  # of it, in the worker's call: the buffers moved
    assert stats.waits == {"starting": 1.0, "draw": 2.0, "1 in flight: judging": 1.0}  # the rest of it
    assert stats.idle_s == 3.0  # after the draws: 10 to 13 s
    assert stats.accounted_s == stats.wall_s
    assert stats.busy_s == 5.0  # build, run, the timeout


def test_two_workers_as_one_target_are_working_while_either_is(monkeypatch):
    """A hand-worked pair of timelines of one target's two workers (campaign.progress.Occupancy):
    both start (harness) until 1 s; worker 0 runs from 1 to 5 s, worker 1 from 3 to 9 s; between 9
    and 10 s worker 1 waits for its next program's expectations (harness) and worker 0, its draws
    over, is idle; both idle from 10 to 12 s. The target: working 1-9 s (8 s), harness 0-1 and 9-10
    s (2 s), idle 10-12 s (2 s): the 12 s of the campaign."""
    now = [0.0]
    monkeypatch.setattr("campaign.progress.time.monotonic", lambda: now[0])
    together = Occupancy(2, started=0.0)
    clocks = [Clock(TargetStats(), started=0.0, together=(together, i)) for i in (0, 1)]

    def at(t, *steps):
        now[0] = t
        for step in steps:
            step()

    at(0.5, lambda: clocks[1].waiting(True))  # its worker started: it waits for a first program (the harness's)
    at(1.0, lambda: clocks[0].waiting(False))
    at(3.0, lambda: clocks[1].work(+1), lambda: clocks[1].waiting(False))
    at(5.0, lambda: clocks[0].waiting(True), lambda: clocks[0].feeding(False))  # its draws over: idle
    at(9.0, lambda: clocks[1].waiting(True))  # a program in flight: the wait is the harness's
    at(10.0, lambda: clocks[1].work(-1), lambda: clocks[1].feeding(False))
    at(12.0)
    assert together.settle() == {"working": 8.0, "harness": 2.0, "idle": 2.0}
