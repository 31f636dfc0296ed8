"""Every target at its own pace (campaign.feed): a program is drawn once, run at once by the
target that asked and queued for the others; a slow target runs what another found interesting
first; backlogs are bounded; what no target takes is counted; pending is what a resume runs."""

from __future__ import annotations

import threading
import time

from conftest import SMALL

from campaign.execute import Outcome
from campaign.expectations import Expectations
from campaign.feed import BACKLOG, QUIET_S, SLOW_SWEEP, SLOW_SWEEP_SAMPLES, Feed
from campaign.scheduler import WARMUP, Scheduler
from fuzz.drivers import Target
from fuzz.judge import Verdict
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws

FP = {"fp64": False, "fp16": False, "int64": True, "image_formats": {}}


def _target(name: str, **fp) -> Target:
    return Target(name, {**FP, **fp}, f"fp-{name}", "/nowhere", 0, 0)


def _feed(targets, max_programs=None, area="conversions"):
    draws = Draws(conversion_programs(Caps(), SMALL), 5)
    scheduler = Scheduler((area,), targets=tuple(t.name for t in targets))
    return Feed(targets, scheduler, lambda a, target, sweep: draws[scheduler.take(a)], lambda p, target: Expectations(p),
                set(), max_programs=max_programs)


def _bug(target: Target) -> list[Outcome]:
    row = {"kind": "wrong-result", "operation": "add_sat", "src_type": "int", "dst_type": "int", "rule": "r",
           "target": target.name, "actual_value": "1"}
    return [Outcome("ok", Verdict(rows=[row]), driver_s=0.1)]


GO = threading.Event()


def test_a_fast_target_draws_while_a_slow_one_works_through_its_backlog():
    fast, slow = _target("fast"), _target("slow")
    feed = _feed([fast, slow])
    ran = [feed.next_for(fast, GO) for _ in range(5)]
    for e in ran:
        feed.finished(fast, e, [Outcome("ok", driver_s=0.1)])
    assert len({e.program.id for e in ran}) == 5 and feed.drawn == 5  # the fast one never waited
    assert [e.program.id for e in feed.backlog["slow"]] == [e.program.id for e in ran]
    assert feed.pending() == {}  # run by the fast target, only queued on the slow one: not pending
    running = feed.next_for(fast, GO)
    assert feed.pending() == {running.program.id: ["fast", "slow"]}  # in flight, finished nowhere: both
    # after the stop: the parts the lane left unfinished on the fast target instead of the whole program
    assert feed.pending({"fast": ["part-a"], "slow": []}) == {"part-a": ["fast"], running.program.id: ["slow"]}
    first = feed.next_for(slow, GO)
    assert first is ran[0] and feed.drawn == 6  # its backlog first, oldest first, no new draw
    feed.finished(slow, first, [Outcome("ok")])
    feed.finished(fast, running, [Outcome("ok")])
    assert feed.pending() == {} and feed.programs == 6


def test_what_another_target_found_interesting_runs_first_on_a_slow_target():
    fast, slow = _target("fast"), _target("slow")
    feed = _feed([fast, slow])
    ran = [feed.next_for(fast, GO) for _ in range(4)]
    feed.finished(fast, ran[2], _bug(fast))  # a new bucket
    assert feed.scheduler.state["conversions"].finds > 0
    assert feed.next_for(slow, GO) is ran[2]


def test_a_backlog_is_bounded_and_skips_what_nobody_found_interesting():
    fast, slow = _target("fast"), _target("slow")
    feed = _feed([fast, slow])
    first = feed.next_for(fast, GO)
    feed.finished(fast, first, _bug(fast))
    for _ in range(BACKLOG + 5):
        feed.finished(fast, feed.next_for(fast, GO), [Outcome("ok")])
    assert len(feed.backlog["slow"]) == BACKLOG and feed.skipped["slow"] == 6
    assert first in feed.backlog["slow"]  # the interesting one is kept


def test_a_slow_target_runs_the_sweep_in_its_order_and_skips_none_of_it():
    """Corner-sweep programs (every target runs them) wait on a slow target oldest first, ahead of
    what another found interesting, and beyond the backlog's bound: a fast target hands out the
    whole sweep, its densest programs first, before the slow one has run them."""
    fast, slow = _target("fast"), _target("slow")
    draws = Draws(conversion_programs(Caps(), SMALL), 5)
    scheduler = Scheduler(("conversions",), targets=("fast", "slow"))
    feed = Feed([fast, slow], scheduler, lambda a, target, sweep: draws[scheduler.take(a)], lambda p, target: Expectations(p), set(),
                everywhere=lambda program: True)
    ran = [feed.next_for(fast, GO) for _ in range(BACKLOG + 6)]
    feed.finished(fast, ran[-1], _bug(fast))  # found interesting: still after the older sweep programs
    for e in ran[:-1]:
        feed.finished(fast, e, [Outcome("ok")])
    assert len(feed.backlog["slow"]) == BACKLOG + 6 and feed.skipped["slow"] == 0
    assert [feed.next_for(slow, GO) for _ in range(3)] == ran[:3]


def test_a_slow_sweep_program_makes_the_sweep_trickle_between_other_programs():
    """PoCL 5.0 ran the math sweep's double fmod programs, 192 lanes in about 30 s each, for six
    minutes: once a sweep program takes SLOW_SWEEP times the median of the target's sweep programs
    so far and QUIET_S, the target holds one sweep program in flight at most and takes another
    program between two of them; a fast target's sweep (every program near its median), or one
    whose slowest programs answer within QUIET_S (rusticl's: 9.8 s at most), never trickles (a
    4-times rule alone made rusticl's trickle and left it at 89% of its corners in 10 minutes)."""
    fast, slow = _target("fast"), _target("slow")
    draws = Draws(conversion_programs(Caps(), SMALL), 5)
    scheduler = Scheduler(("conversions",), targets=("fast", "slow"))
    sweep = set()

    def draw(area, target, sweeping):
        program = draws[scheduler.take(area)]
        if sweeping and len(sweep) < 20:
            sweep.add(program.id)
        return program

    feed = Feed([fast, slow], scheduler, draw, lambda p, target: Expectations(p), set(),
                everywhere=lambda program: program.id in sweep)
    handed = [feed.next_for(fast, GO) for _ in range(20)]
    for e in handed:
        feed.finished(fast, e, [Outcome("ok", longest_s=1.0 + (e is handed[-1]))])  # no slow one: never trickles
    assert all(e.first for e in handed) and "fast" not in feed.trickle
    quick = [feed.next_for(slow, GO) for _ in range(SLOW_SWEEP_SAMPLES)]
    assert quick == handed[:SLOW_SWEEP_SAMPLES]  # the sweep first, in its order
    for e in quick:  # the last ten times the median, but under QUIET_S: rusticl's 9.8-s sweep programs
        feed.finished(slow, e, [Outcome("ok", longest_s=10.0 if e is quick[-1] else 1.0)])
    isolated = feed.next_for(slow, GO)  # 40 s in 20 runs that isolate a failure: none longer than 2 s
    feed.finished(slow, isolated, [Outcome("ok", longest_s=1.0), Outcome("ok", driver_s=40.0, runs=20, longest_s=2.0)])
    assert isolated.first and "slow" not in feed.trickle
    slow_one = feed.next_for(slow, GO)
    ahead = feed.next_for(slow, GO)  # taken before the slow one finished: still the sweep's
    assert ahead.first and "slow" not in feed.trickle
    before = time.monotonic()
    feed.finished(slow, slow_one, [Outcome("ok", longest_s=max(QUIET_S, SLOW_SWEEP * 1.0))])
    since, why = feed.trickle["slow"]  # since then (the campaign's notice says when)
    assert before <= since <= time.monotonic() and list(feed.trickle) == ["slow"]
    assert why == f"a run of a sweep program took {QUIET_S:.1f} s, the median of its 6 before 1.00 s"
    assert not feed.next_for(slow, GO).first  # a sweep program in flight (ahead): another program
    feed.finished(slow, ahead, [Outcome("ok", longest_s=30.0)])
    taken = [feed.next_for(slow, GO) for _ in range(4)]
    assert [e.first for e in taken] == [True, False, False, False]  # one in flight at most
    feed.finished(slow, taken[0], [Outcome("ok", longest_s=30.0)])
    again = feed.next_for(slow, GO)
    assert again.first  # none in flight, another program last: the sweep's turn
    feed.finished(slow, again, [Outcome("ok", longest_s=30.0)])
    assert not feed.next_for(slow, GO).first  # none in flight, but a sweep program last: never two in a row


def test_the_campaigns_drawer_marks_each_sweep_program_it_hands_out(monkeypatch):
    """The wiring the test above stands in for: the campaign's drawer (campaign.campaign._Drawer)
    hands out the sweep first and says of each program it handed out that every target runs it
    first, of no other. (It once answered with the set of ids' ``__contains__`` asked about a
    Program: never true, so a slow target's backlog dropped the sweep beyond its bound and PoCL
    3.1 ran 66 of the 289 sweep programs of a 5-minute campaign.)"""
    from campaign.campaign import _Drawer
    from fuzz.strategies import sweep_key_of, sweep_plan

    plan = sweep_plan("conversions", Caps(), SMALL)
    sweep = [p for _, p in plan]
    key = sweep_key_of("conversions", sweep)
    scheduler = Scheduler(("conversions",), targets=("fast", "slow"), sweeps={"conversions": (key, tuple(k for k, _ in plan))})
    draws = Draws(conversion_programs(Caps(), SMALL), 5)
    drawer = _Drawer(None, {}, scheduler, {"conversions": 0.0}, 5, set(), {"conversions": (key, sweep)})
    monkeypatch.setattr(drawer, "harness", type("H", (), {"draw": lambda self, a, i, owner: draws[i]})())
    fast, slow = _target("fast"), _target("slow")
    feed = Feed([fast, slow], scheduler, drawer.draw, lambda p, target: Expectations(p), set(), everywhere=drawer.everywhere)
    ran = [feed.next_for(fast, GO) for _ in range(len(sweep) + BACKLOG + 6)]
    for e in ran:
        feed.finished(fast, e, [Outcome("ok")])
    assert [e.program.id for e in ran[:len(sweep)]] == [p.id for p in sweep]
    assert [e.first for e in ran] == [True] * len(sweep) + [False] * (BACKLOG + 6)
    taken = [feed.next_for(slow, GO).program.id for _ in range(len(sweep))]
    assert taken == [p.id for p in sweep] and feed.skipped["slow"] == 6


def test_the_campaigns_drawer_hands_out_no_sweep_program_where_the_feed_says_so(monkeypatch):
    """A target whose sweep trickles draws between two sweep programs: the drawer then gives the
    area's stream, and the sweep's next program stays next."""
    from campaign.campaign import _Drawer
    from fuzz.strategies import sweep_key_of, sweep_plan

    plan = sweep_plan("conversions", Caps(), SMALL)
    sweep = [p for _, p in plan]
    key = sweep_key_of("conversions", sweep)
    scheduler = Scheduler(("conversions",), targets=("slow",), sweeps={"conversions": (key, tuple(k for k, _ in plan))})
    draws = Draws(conversion_programs(Caps(), SMALL), 5)
    drawer = _Drawer(None, {}, scheduler, {"conversions": 0.0}, 5, set(), {"conversions": (key, sweep)})
    monkeypatch.setattr(drawer, "harness", type("H", (), {"draw": lambda self, a, i, owner: draws[i]})())
    assert drawer.draw("conversions", "slow") is sweep[0]
    other = drawer.draw("conversions", "slow", sweeping=False)
    assert other.id == draws[0].id and not drawer.everywhere(other)
    assert drawer.draw("conversions", "slow") is sweep[1]


def test_a_program_no_target_takes_is_unrun_and_its_area_dropped():
    """Programs that need a capability no target has: counted as unrun, and after WARMUP of them
    the area is dropped (nothing left to draw: the target stops asking)."""
    from dataclasses import replace

    plain = _target("plain")
    draws = Draws(conversion_programs(Caps(), SMALL), 5)
    scheduler = Scheduler(("conversions",), targets=("plain",))
    feed = Feed([plain], scheduler, lambda a, target, sweep: replace(draws[scheduler.take(a)], requires=frozenset({"images"})),
                lambda p, target: Expectations(p), set())
    assert feed.next_for(plain, GO) is None
    assert feed.unrun == {"conversions": WARMUP} and feed.drawn == WARMUP and scheduler.dropped("conversions")


def test_the_draws_end_at_the_program_limit_then_backlogs_drain():
    fast, slow = _target("fast"), _target("slow")
    feed = _feed([fast, slow], max_programs=3)
    for _ in range(3):
        feed.finished(fast, feed.next_for(fast, GO), [Outcome("ok")])
    assert feed.next_for(fast, GO) is None and feed.over
    drained = [feed.next_for(slow, GO) for _ in range(3)]
    assert all(drained) and feed.next_for(slow, GO) is None


def test_warm_up_then_floors_keep_a_costly_area_in_each_targets_time():
    s = Scheduler(("cheap", "costly"), targets=("t",), floor=0.4, seed=0)
    for _ in range(200):
        a = s.pick("t")
        s.take(a)
        s.observe(a, a == "cheap", 0.05 if a == "cheap" else 5.0, "t")
    pace = s.pace["t"]
    share = pace["costly"].seconds / (pace["cheap"].seconds + pace["costly"].seconds)
    assert pace["costly"].programs >= WARMUP and share >= 0.2 - 0.05  # its floor: 0.4 / 2 areas
