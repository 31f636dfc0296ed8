"""Work that fits the target (campaign.timeouts, campaign.batching, campaign.pipeline): a limit
from the area's measured runs on that target, within a floor and the ceiling; a statement that
exceeds a limit below the ceiling is tried once at the ceiling before it is a hang; statements per
part follow the measured part times."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

from conftest import SMALL

from campaign.batching import MIN_STATEMENTS, PART_S, Batches
from campaign.expectations import Expectations
from campaign.pipeline import Lane
from campaign.progress import TargetStats
from campaign.timeouts import FACTOR, FLOOR, SAMPLES, Timeouts
from fuzz.drivers import Result, Target
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws
from lang.derive import restrict


def test_the_limit_follows_the_measured_median_within_floor_and_ceiling():
    t = Timeouts(ceiling=60.0)
    assert t.limit("math") == 60.0  # nothing measured yet
    for wall in (2.0, 3.0, 2.5)[:SAMPLES]:
        t.observe("math", wall)
    assert t.limit("math") == FACTOR * 2.5
    assert t.limit("images") == 60.0  # per area
    for _ in range(40):
        t.observe("conversions", 0.1)
    assert t.limit("conversions") == FLOOR
    for _ in range(40):
        t.observe("math", 30.0)
    assert t.limit("math") == 60.0


class _Worker:
    """A worker whose every run exceeds ``hangs_below`` seconds of limit: a slow build."""

    timeout_s = 60.0
    pid = None

    def __init__(self, hangs_below: float) -> None:
        self.hangs_below, self.limits = hangs_below, []

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def run(self, job, timeout_s):
        self.limits.append(timeout_s)
        if timeout_s < self.hangs_below:
            return Result("timeout", log=f"no result after {timeout_s:g} s; worker killed")
        return Result("build_error", log="error: made up", build_s=0.5)


TARGET = Target("fake", {}, "fp-fake", "", 0, 0)


def _one_statement():
    return restrict(Draws(conversion_programs(Caps(), SMALL), 2)[0], [0])


def _lane(worker, limit: float) -> Lane:
    timeouts = Timeouts(ceiling=60.0)
    for _ in range(SAMPLES):
        timeouts.observe("conversions", limit / FACTOR)
    return Lane(TARGET, worker, None, "c", TargetStats(), timeouts)


def _submit(lane: Lane, program) -> list:
    done = threading.Event()
    got = []
    lane.submit(program, Expectations(program), lambda outcomes: (got.extend(outcomes), done.set()))
    assert done.wait(10)
    lane.close()
    return got


def test_a_slow_statement_is_tried_at_the_ceiling_before_it_is_a_hang():
    worker = _Worker(hangs_below=30.0)  # slower than 8x the median, faster than the ceiling
    lane = _lane(worker, limit=FLOOR)
    outcomes = _submit(lane, _one_statement())
    assert worker.limits == [FLOOR, 60.0]
    assert [o.status for o in outcomes] == ["slow", "build_error"]  # no timeout recorded: not a hang
    assert all(f["kind"] == "build_error" for o in outcomes for f in o.failures)
    assert lane.stats.timeouts_s >= 0 and lane.stats.statuses == {"build_error": 1}


def test_a_hang_times_out_at_the_ceiling_too():
    worker = _Worker(hangs_below=1e9)
    outcomes = _submit(_lane(worker, limit=FLOOR), _one_statement())
    assert worker.limits == [FLOOR, 60.0]
    assert outcomes[-1].failures and outcomes[-1].failures[0]["kind"] == "timeout"
    assert "60 s" in outcomes[-1].failures[0]["actual_value"]  # recorded with the limit that applied


def test_statements_per_part_follow_the_measured_part_times():
    rusticl = Target("rusticl", {}, "fp", "", 0, 0)
    b = Batches(rusticl)
    assert b.get("math").statements == 16  # campaign.batching.BATCHES, measured on conversions
    b.observe("math", 16, PART_S[1] + 5)  # a slow math build: half next time
    assert b.get("math").statements == 8 and b.get("conversions").statements == 16
    for _ in range(5):
        b.observe("math", b.get("math").statements, 30.0)
    assert b.get("math").statements == MIN_STATEMENTS
    b.observe("conversions", 16, PART_S[0] / 2)  # quick: twice as many
    assert b.get("conversions").statements == 32
    b.observe("conversions", 5, PART_S[0] / 2)  # a program smaller than the batch: no evidence
    assert b.get("conversions").statements == 32
    b.timed_out("conversions", 24)  # a part of 24 timed out: at most 12 next time
    assert b.get("conversions").statements == 12
    b.timed_out("conversions", 64)  # a larger one: no larger batch
    assert b.get("conversions").statements == 12


def test_a_whole_part_that_timed_out_halves_the_targets_batch():
    worker = _Worker(hangs_below=1e9)
    lane = _lane(worker, limit=FLOOR)
    program = Draws(conversion_programs(Caps(), replace(SMALL, statements=8)), 4)[0]
    _submit(lane, program)
    assert lane.batches.get("conversions").statements == len(program.body) // 2


def test_a_part_that_times_out_is_split_into_its_statements():
    """A timed-out part of up to TIMEOUT_SPLIT statements runs each statement alone next (halves
    would each time out again while they hold the slow one); a larger one is halved, and a crash
    is halved whatever its size."""
    from campaign.execute import TIMEOUT_SPLIT, Part, conclude

    program = Draws(conversion_programs(Caps(), replace(SMALL, statements=TIMEOUT_SPLIT + 1)), 3)[0]
    for n, status, parts in ((TIMEOUT_SPLIT, "timeout", [1] * TIMEOUT_SPLIT), (TIMEOUT_SPLIT + 1, "timeout", None),
                             (4, "crash", [2, 2])):
        sub = restrict(program, list(range(n)))
        _, halves, run = conclude(Part(sub, Expectations(sub)), TARGET, Result(status, log="no result after 9 s"))
        sizes = [len(h.program.body) for h in halves]
        assert sizes == (parts or [n // 2, n - n // 2]) and run.status == status
        assert [s for h in halves for s in h.program.body] == list(sub.body)


class _Statements:
    """A worker whose first run times out and whose others fail to build, recording the statements
    of each job it is given (its OpenCL C source's stores)."""

    timeout_s = 60.0
    pid = None

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def run(self, job, timeout_s):
        self.sizes.append(len(re.findall(r"out\d+\[gid\] =", job.program.decode())))
        if len(self.sizes) == 1:
            return Result("timeout", log=f"no result after {timeout_s:g} s; worker killed")
        return Result("build_error", log="error: made up", build_s=0.1)


def test_parts_queued_behind_one_that_timed_out_are_cut_again_before_they_run():
    """A program is cut into parts of the target's batch when it is submitted; once a whole part
    times out the batch is half of it, and the parts still queued (cut before) are cut again before
    they run, not run at the old size to time out in turn (rusticl's 32-statement expressions
    parts, one after another at the 10-s floor)."""
    worker = _Statements()
    lane = _lane(worker, limit=FLOOR)
    batch = lane.batches.get("conversions").statements
    program = Draws(conversion_programs(Caps(), replace(SMALL, statements=3 * batch)), 4)[0]
    _submit(lane, program)
    assert worker.sizes[0] == batch and lane.batches.get("conversions").statements == batch // 2
    assert max(worker.sizes[1:]) <= batch // 2  # the two queued parts of `batch`, cut again, and the halves
    assert worker.sizes[1:].count(batch // 2) >= 4 + 2  # those four pieces, the timed-out part's two halves


def test_a_part_cut_again_into_nothing_finishes_its_program():
    """A queued part is cut again as a program is (campaign.pipeline.Lane._cut): a target that now
    skips all its statements (campaign.learned) leaves no piece, and its program is then done."""
    from campaign.execute import Part
    from campaign.inflight import Ticket

    program = _one_statement()
    part = Part(program, Expectations(program))
    done: list = []
    ticket = Ticket(2, done.append)
    assert not ticket.replace(part, 3) and ticket.left == 4 and not done  # three pieces in its place
    alone: list = []
    ticket = Ticket(1, alone.append)
    assert ticket.replace(part, 0) and alone == [[]]  # its only part: the program is done, no outcome
