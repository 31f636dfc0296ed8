"""Slow statements learned (campaign.learned, campaign.pipeline), with hand-made timings: a class
that timed out on a target is cut out of that target's later parts and runs alone after them at
the measured limit, never again at the ceiling; after GIVE_UP timeouts it is not run at all."""

from __future__ import annotations

import threading

from campaign.execute import first_parts
from campaign.expectations import Expectations
from campaign.learned import GIVE_UP, Learned, class_of
from campaign.pipeline import Lane
from campaign.progress import TargetStats
from campaign.timeouts import FACTOR, FLOOR, SAMPLES, Timeouts
from fuzz.drivers import Result, Target
from fuzz.strategies.sweeps.base import sweep_program
from lang.ir import Op, Store
from lang.types import Type

TARGET = Target("fake", {}, "fp-fake", "", 0, 0)
CEILING = 60.0


def _statement(name: str, width: int, values: tuple[int, ...] = (0x3F800000, 0x40000000)):
    t = Type("float", width)
    return lambda s: Store(s.output(t), Op(name, (s.load(t, values),), t))


def _program(*statements):
    return sweep_program(list(statements), 64, "math")


class _Worker:
    """exp never finishes (a hang at any limit); every other part ends at once (``invalid_module``:
    concluded without a verdict or an isolation). Records each run's limit and whether it held exp."""

    timeout_s = CEILING
    pid = None

    def __init__(self) -> None:
        self.runs: list[tuple[bool, float]] = []

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def run(self, job, timeout_s):
        slow = b"exp(" in job.program
        self.runs.append((slow, timeout_s))
        if slow:
            return Result("timeout", log=f"no result after {timeout_s:g} s; worker killed")
        return Result("invalid_module", log="made up")


def _lane(worker) -> Lane:
    timeouts = Timeouts(ceiling=CEILING)
    for _ in range(SAMPLES):
        timeouts.observe("math", FLOOR / FACTOR)  # the measured limit is the floor
    return Lane(TARGET, worker, None, "c", TargetStats(), timeouts)


def _submit(lane: Lane, program) -> list:
    done = threading.Event()
    got = []
    lane.submit(program, Expectations(program), lambda outcomes: (got.extend(outcomes), done.set()))
    assert done.wait(10)
    return got


def test_a_class_is_the_statement_without_its_width_and_with_its_operands_kind():
    a = _program(_statement("exp", 4), _statement("exp", 16), _statement("sqrt", 4))
    assert class_of(a, a.body[0]) == class_of(a, a.body[1]) != class_of(a, a.body[2])
    assert class_of(a, a.body[0]) == ((("exp", "", False, ("float",), "float"),), "listed")


def test_a_statement_that_timed_out_is_not_run_at_the_ceiling_in_later_programs():
    worker = _Worker()
    lane = _lane(worker)
    try:
        first = _submit(lane, _program(_statement("sqrt", 4), _statement("exp", 4), _statement("sqrt", 2)))
        # the part times out at the measured limit, its statements run alone, exp again at the ceiling
        assert worker.runs == [(True, FLOOR), (False, FLOOR), (True, FLOOR), (False, FLOOR), (True, CEILING)]
        assert [f["kind"] for o in first for f in o.failures] == ["timeout"]
        worker.runs.clear()
        later = _submit(lane, _program(_statement("exp", 8), _statement("sqrt", 8), _statement("sqrt", 16)))
        # exp:float alone, after the part of the others, at the measured limit only: "slow", no hang
        assert worker.runs == [(False, FLOOR), (True, FLOOR)]
        assert sorted(o.status for o in later) == ["invalid_module", "slow"]
        assert not any(o.failures for o in later)
        for _ in range(GIVE_UP - 2):
            _submit(lane, _program(_statement("exp", 2)))
        worker.runs.clear()
        _submit(lane, _program(_statement("exp", 16), _statement("sqrt", 3)))
        assert worker.runs == [(False, FLOOR)]  # given up on: not run
        assert lane.learned.skipped == 1
        one = _program(_statement("exp", 1))
        assert lane.learned.classes() == {class_of(one, one.body[0]): GIVE_UP}
    finally:
        lane.close()


def test_slow_classes_wait_behind_every_part_queued():
    """Statements of slow classes are dispatched last in a program's parts and rank below every
    part of the campaign in the runner's queue (campaign.pipeline.LOW)."""
    from campaign.pipeline import LOW, PART

    learned = Learned()
    slow = _program(_statement("exp", 1))
    learned.timed_out(slow)
    program = _program(_statement("exp", 4), _statement("sqrt", 4), _statement("exp", 2), _statement("sqrt", 1))
    parts = first_parts(TARGET, program, Expectations(program), None, learned)
    assert [(len(p.program.body), p.low) for p in parts] == [(2, False), (1, True), (1, True)]
    assert [s.value.op for p in parts for s in p.program.body] == ["sqrt", "sqrt", "exp", "exp"]
    assert LOW > PART
    assert [len(p.program.body) for p in first_parts(TARGET, program, Expectations(program))] == [4]  # nothing learned


class _Failing(_Worker):
    """exp fails to build (whatever else the part holds); every other part ends at once."""

    def run(self, job, timeout_s):
        failing = b"exp(" in job.program
        self.runs.append((failing, timeout_s))
        return Result("build_error" if failing else "invalid_module", log="error: made up")


def test_a_class_that_failed_alone_runs_alone_in_later_programs():
    worker = _Failing()
    lane = _lane(worker)
    try:
        _submit(lane, _program(_statement("sqrt", 4), _statement("exp", 4), _statement("sqrt", 2), _statement("sqrt", 1)))
        assert len(worker.runs) == 5  # the part, its halves, the half with exp halved: exp alone
        worker.runs.clear()
        later = _submit(lane, _program(_statement("sqrt", 8), _statement("exp", 8), _statement("sqrt", 16)))
        assert [failing for failing, _ in worker.runs] == [False, True]  # the others as one part, exp alone: no halving
        assert [f["kind"] for o in later for f in o.failures] == ["build_error"]
    finally:
        lane.close()
