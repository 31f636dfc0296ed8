"""The campaign scheduler (campaign.scheduler): budgets, the bandit's preferences, its state, and
merging corpora (corpus.merge) with bucket status and campaign state kept."""

from __future__ import annotations

from collections import Counter

import pytest

from campaign.scheduler import WARMUP, Budget, BudgetError, Scheduler, parse_budgets
from corpus.merge import merge
from corpus.reads import rows_on_target
from corpus.store import Corpus
from lang.ir import Buffer, Fill, Load, Program, Store
from lang.types import Type

AREAS = ("conversions", "images", "atomics")


def test_budgets_parse_time_units_and_programs():
    b = parse_budgets("images=2m, atomics=300p,images=40p,conversions=1.5h", AREAS)
    assert b == {"images": Budget(120.0, 40), "atomics": Budget(None, 300), "conversions": Budget(5400.0, None)}
    assert parse_budgets("", AREAS) == {}
    for bad, says in (("images=2", "AREA=NUMBER"), ("images=-1m", "AREA=NUMBER"), ("nope=1m", "unknown area")):
        with pytest.raises(BudgetError, match=says):
            parse_budgets(bad, AREAS)


def _run(s: Scheduler, n: int, finds: dict[str, float], cost: dict[str, float]) -> Counter:
    """``n`` picks; a program of area a finds something with probability finds[a]."""
    import random

    rng = random.Random(1)
    picks = Counter()
    for _ in range(n):
        area = s.pick()
        if area is None:
            break
        s.take(area)
        picks[area] += 1
        s.observe(area, rng.random() < finds[area], cost[area])
    return picks


def test_every_sweep_is_handed_out_before_any_random_draw():
    """Corners first: every target picks the area whose next sweep program is of the earliest pass
    (special values, other classes, shapes), of those the one with the fewest handed out, while any
    is left (an area whose budget is spent, or that a target does not take, aside), then the
    warm-up begins; a resumed campaign does not sweep again, a new sweep key sweeps anew."""
    sweeps = {"conversions": ("c1", (0, 1, 2)), "images": ("i1", (2,))}
    s = Scheduler(AREAS, seed=3, targets=("a", "b"), sweeps=sweeps)
    first = []
    for target in "abab":
        area = s.pick(target)
        assert s.sweeping(area, sweeps[area][0], len(sweeps[area][1])) is not None
        first.append(area)
    # passes 0 and 1 of conversions, then the shapes: images (none handed out) before conversions'
    assert first == ["conversions", "conversions", "images", "conversions"]
    assert all(s._swept(a) is None for a in AREAS) and s.pick("a") in AREAS  # then the warm-up and the bandit
    again = Scheduler(AREAS, state=s.to_state(), seed=3, sweeps=sweeps)
    assert again._swept("conversions") is None and again._swept("images") is None
    renewed = Scheduler(AREAS, state=s.to_state(), seed=3, sweeps={**sweeps, "images": ("i2", (2,))})
    assert renewed.pick("a") == "images"
    spent = Scheduler(AREAS, {"conversions": Budget(programs=1)}, seed=3, sweeps=sweeps)
    spent.sweeping("conversions", "c1", 3)
    assert spent.pick() == "images"


def test_the_math_built_ins_shapes_are_handed_out_after_every_other_sweep():
    """The math sweep's shapes (its vector widths: pass BUILT_IN_SHAPES, the slowest corners to
    build) wait for the other areas' shapes and sparse sweeps, and the undefined-lane reads that
    crash compilers (UNDEFINED_LANES) for them; the math special values and classes do not wait.
    The sweeps' programs and keys are what they were: only the order across areas moves."""
    from fuzz.strategies import sweep_plan
    from fuzz.strategies.conversions import Caps
    from fuzz.strategies.sweeps.base import BUILT_IN_SHAPES, CLASSES, SHAPES, SPARSE, SPECIALS, UNDEFINED_LANES

    passes = [p for p, _ in sweep_plan("math", Caps())]
    assert passes == sorted(passes) and set(passes) == {SPECIALS, CLASSES, BUILT_IN_SHAPES}
    last = [(p, len(program.body)) for p, program in sweep_plan("expressions", Caps()) if p == UNDEFINED_LANES]
    assert last and all(n <= 4 for _, n in last)  # a program per type of the reads that crash compilers
    areas = ("math", "expressions", "atomics")
    sweeps = {"math": ("m", (SPECIALS, BUILT_IN_SHAPES, BUILT_IN_SHAPES)),
              "expressions": ("e", (CLASSES, SHAPES, UNDEFINED_LANES)), "atomics": ("a", (SPARSE,))}
    s = Scheduler(areas, seed=3, targets=("a",), sweeps=sweeps)
    order = []
    while (area := s.pick("a")) is not None and s._swept(area) is not None:
        s.sweeping(area, sweeps[area][0], len(sweeps[area][1]))
        order.append(area)
    assert order == ["math", "expressions", "expressions", "atomics", "math", "math", "expressions"]


def test_every_area_is_warmed_up_in_turn_first():
    s = Scheduler(AREAS, seed=3)
    first = []
    for _ in range(WARMUP * len(AREAS)):
        a = s.pick()
        s.take(a)
        first.append(a)
    assert Counter(first) == {a: WARMUP for a in AREAS}


def test_budget_goes_where_new_things_turn_up():
    picks = _run(Scheduler(AREAS, seed=0), 600, {"conversions": 0.6, "images": 0.05, "atomics": 0.05},
                 {a: 1.0 for a in AREAS})
    assert picks["conversions"] > 0.7 * 600
    assert min(picks["images"], picks["atomics"]) >= WARMUP  # never starved of its warm-up


def test_a_costly_area_needs_more_finds_per_program():
    picks = _run(Scheduler(AREAS, seed=0), 600, {a: 0.3 for a in AREAS},
                 {"conversions": 0.1, "images": 2.0, "atomics": 2.0})
    assert picks["conversions"] > 0.7 * 600


def test_areas_without_finds_tie_whatever_their_cost():
    """Where no area finds anything, every area gets about the same driver time, a cheap area
    more programs: each holds ~100 decayed misses, so the draws Beta(1, 1 + misses) are alike and
    their division by the cost makes an area's chance of a pick go as one over its cost (here the
    0.1-s area about twenty times the programs of a 2-s one, a third of the time)."""
    cost = {"conversions": 0.1, "images": 2.0, "atomics": 2.0}
    picks = _run(Scheduler(AREAS, seed=0), 3000, {a: 0.0 for a in AREAS}, cost)
    seconds = {a: picks[a] * cost[a] for a in AREAS}
    total = sum(seconds.values())
    assert all(0.2 < seconds[a] / total < 0.47 for a in AREAS), seconds


def test_budgets_stop_areas_and_then_the_campaign():
    s = Scheduler(AREAS, {"images": Budget(programs=5), "atomics": Budget(seconds=3.0),
                          "conversions": Budget(programs=20)}, seed=0)
    picks = _run(s, 1000, {a: 0.5 for a in AREAS}, {a: 1.0 for a in AREAS})
    assert picks["images"] == 5 and picks["conversions"] == 20
    assert picks["atomics"] == 3  # 1 s each: the 4th would start past the 3 s budget
    assert s.pick() is None


def test_an_area_no_target_takes_is_dropped_for_the_run():
    s = Scheduler(AREAS, seed=0)
    for _ in range(WARMUP):
        s.untaken("images")
    assert not s.open("images") and s.open("atomics")
    assert Scheduler(AREAS, state=s.to_state()).open("images")  # a later run may have such a target


def test_state_round_trips_and_resumes_the_draw_indexes():
    s = Scheduler(AREAS, {"images": Budget(programs=4)}, seed=0)
    _run(s, 10, {a: 0.5 for a in AREAS}, {a: 1.0 for a in AREAS})
    again = Scheduler(AREAS, {"images": Budget(programs=4)}, state=s.to_state(), seed=0)
    assert again.to_state() == s.to_state()
    assert [again.take(a) for a in AREAS] == [s.state[a].next for a in AREAS]


def _stored(c: Corpus, seed: int, target: str) -> str:
    """Program ``seed`` of campaign ``k`` run on ``target`` with one wrong lane; returns its bucket."""
    int_ = Type("int")
    pid = c.add_program(Program((Buffer("x", int_, "in", Fill(seed)), Buffer("o", int_, "out")),
                                (Store("o", Load("x", int_)),), 4), "k")
    row = {"program_id": pid, "target": target, "fingerprint_id": "f", "path": "opencl-c", "buffer": "out0",
           "lane": 0, "work_item": 0, "kind": "wrong-result", "operation": "convert_int", "src_type": "float",
           "dst_type": "int", "input_class": "nan", "rule": "r", "actual_value": "1", "campaign": "k"}
    c.add_run({"program_id": pid, "target": target, "fingerprint_id": "f", "path": "opencl-c", "status": "ok",
               "checks": 1, "judged": 5, "mismatches": 1, "campaign": "k"}, [row])
    return rows_on_target(c, pid, target)[0]["bucket"]


def test_merge_unions_without_duplicates_and_keeps_the_latest_bucket_status(tmp_path):
    a, b = Corpus(tmp_path / "a.db"), Corpus(tmp_path / "b.db")
    bucket = _stored(a, 1, "pocl")
    _stored(b, 1, "pocl")  # the same program and bucket seen on the second machine
    _stored(b, 2, "rusticl")
    a.update_campaign("k", 1, {"areas": ["conversions"]}, 1, 5, {"areas": {"conversions": {"next": 7}}})
    b.update_campaign("k", 1, {"areas": ["conversions"]}, 2, 10, {"areas": {"conversions": {"next": 9}}})
    b.mark(bucket, "reported", "vendor bug 1234")  # decided later on b
    a.close(), b.close()
    c = Corpus(tmp_path / "c.db")
    first = merge(c, tmp_path / "a.db")
    second = merge(c, tmp_path / "b.db")
    assert (first.programs, second.programs) == (1, 1)
    assert (first.runs, second.runs) == (1, 2)  # b's run of p1 is its own run
    assert len(c.disagreements()) == 3 - 1  # program 1's row on pocl is one disagreement
    assert c.bucket(bucket)["status"] == "reported" and c.bucket(bucket)["note"] == "vendor bug 1234"
    campaign = c.campaign("k")
    assert campaign["state"]["areas"]["conversions"]["next"] == 9
    assert campaign["programs"] == 2 and campaign["checks"] == 15
    again = merge(c, tmp_path / "b.db")
    assert (again.programs, again.runs, again.disagreements, again.buckets) == (0, 0, 0, 0)
    assert all(r["run_id"] is not None for r in c.disagreements())
    c.mark(bucket, "fixed")  # a later decision here is not undone by merging an older copy
    merge(c, tmp_path / "b.db")
    assert c.bucket(bucket)["status"] == "fixed"
