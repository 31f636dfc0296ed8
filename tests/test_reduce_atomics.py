"""The reducer's atomics passes (triage.reduce.passes.atomics) against a simulated driver that
loses an atomic update under contention: the atomics program is reduced to the fewest work-items,
shared locations and statements that still show the same disagreement, and the reduction says why
it is not one operation on one work-item."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.expectations import Expectations
from fuzz.judge import judge
from fuzz.strategies.atomics import atomic_programs
from fuzz.strategies.draws import sample
from lang.derive import restrict
from lang.ir import Buffer, Fill, Load, Op, Program, Store, validate
from lang.policy import Policy
from lang.types import Type
from oracles.atomics import KINDS, apply
from simulated import SimTarget, SimWorker, expected_by_oracle
from triage import observe as triage_observe
from triage.reduce import Goal
from triage.reduce import engine as reducer
from triage.reduce.passes import atomics as reduce_atomics

INT = Type("int")


def _atomic(kind: str, location: str, index: tuple, args: tuple = ()) -> Op:
    attrs = {"location": location, "index": index, "memory": "global", "form": "atomic"}
    return Op(f"atomic_{kind}", args, INT, tuple(sorted(attrs.items())))


def _program() -> Program:
    """64 work-items in 4 groups; statement 0 adds to A0[gid % 2] (A0[2] and A0[3] are never
    used), statement 1 increments A2[0], statement 2 exchanges A1[0]."""
    buffers = (
        Buffer("A0", INT, "global", Fill(1, (0, 5, 100), 4), 4),
        Buffer("A1", INT, "global", Fill(2, (7,), 4), 1),
        Buffer("A2", INT, "global", Fill(5, (3,), 4), 1),
        Buffer("in0", INT, "in", Fill(3, (1, 2, 3), 4)),
        Buffer("in1", INT, "in", Fill(4, (9, 10), 4)),
        *(Buffer(f"out{i}", INT, "out") for i in range(3)),
    )
    body = (
        Store("out0", _atomic("add", "A0", ("gid", 1, 2, 0), (Load("in0", INT),))),
        Store("out1", _atomic("inc", "A2", ("gid", 1, 1, 0))),
        Store("out2", _atomic("xchg", "A1", ("lid", 1, 1, 0), (Load("in1", INT),))),
    )
    p = Program(buffers, body, 64, area="atomics", local_size=16)
    validate(p)
    return p


def _lossy(program: Program, target=None, worker=None, lanes: set | None = None) -> list[dict] | None:
    """Run ``program`` as a driver that applies each location's operations one after another (work-
    item by work-item), except that the last add on a location that several work-items update is
    lost: it returns the old value but its sum never reaches memory. None for an invalid program."""
    judged = expected_by_oracle(program)
    if judged is None:
        return None
    exp, expectations = judged
    h = exp.histories()
    actual = {b.name: np.zeros(program.lanes(b.name), np.int32) for b in program.buffers if b.role != "in"}
    for loc in h.locations:
        at = np.flatnonzero(h.key == loc["key"])
        at = at[np.lexsort((h.stmt[at], h.item[at]))]
        value = np.array([loc["init"] & 0xFFFFFFFF], np.uint64)
        contended = len(np.unique(h.item[at])) > 1
        adds = [i for i in at if KINDS[h.kind[i]] == "add"]
        signed = loc["type"] == "int"
        for i in at:
            actual[program.body[h.stmt[i]].buffer][h.item[i]] = np.uint32(value[0]).view(np.int32)
            after = apply(KINDS[h.kind[i]], value, h.a[i:i + 1], h.b[i:i + 1], 32, signed)
            value = value if contended and adds and i == adds[-1] else after
        actual[loc["buffer"]][loc["lane"]] = np.uint32(value[0]).view(np.int32)
    rows = judge(program, expectations, actual, exp.inputs, histories=h).rows
    if lanes is not None:
        lanes.update(triage_observe.disagreeing_lanes(program, expectations, actual))
    for r in rows:
        r["target"] = "sim"
    return rows


@pytest.fixture
def lossy(monkeypatch):
    monkeypatch.setattr(reducer, "observe", _lossy)


def test_a_lost_update_is_reduced_to_two_contending_work_items_on_one_location(lossy):
    program = _program()
    rows = _lossy(program)
    assert rows and {r["buffer"] for r in rows} == {"A0"} and rows[0]["operation"] == "atomic_add"
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker(), budget_s=60)
    small = result.reduced
    assert small.global_size == 2 and len(small.body) == 1  # one work-item alone loses nothing
    assert [b.count for b in small.shared] == [1]  # A1 dropped, A0 down to the failing location
    assert small.body[0].value.op == "atomic_add"
    again = [r for r in _lossy(small) if Goal.of(rows[0]).matches(r)]
    assert again and result.passes.get("work_groups") and result.passes.get("locations")
    assert result.why_not_minimal.startswith("atomics: the disagreement needs 2 work-items contending")
    Expectations(small).get(frozenset())  # defined


def test_unused_locations_are_trimmed_and_indices_moved():
    """The locations pass: one location for every operation (the failing one's initial value),
    else the buffer cut to the locations the operations use (A0[2] and A0[3] alone: base 2 becomes
    0), initial values moved with them."""
    program = _program()
    body = (Store("out0", _atomic("add", "A0", ("gid", 1, 2, 2), (Load("in0", INT),))),)
    program = restrict(Program(program.buffers, body, 64, area="atomics", local_size=16), [0])
    one, trimmed = reduce_atomics.locations_pass(program, [{"buffer": "A0", "lane": 3}], SimTarget())
    init = Expectations(program).inputs["A0"]
    validate(one)
    assert one.buffer("A0").count == 1 and one.body[0].value.attr("index") == ("gid", 1, 1, 0)
    assert list(Expectations(one).inputs["A0"]) == [init[3]]
    validate(trimmed)
    assert trimmed.buffer("A0").count == 2 and trimmed.body[0].value.attr("index") == ("gid", 1, 2, 0)
    assert list(Expectations(trimmed).inputs["A0"]) == list(init[2:4])


def test_smaller_work_groups_come_fewest_work_items_first():
    shapes = reduce_atomics._shapes(_program())
    assert shapes[0] == (1, 1) and shapes == sorted(shapes, key=lambda s: (s[0] * s[1], s[0]))
    assert all(g * n < 64 and 16 % n == 0 for g, n in shapes)


@pytest.mark.parametrize("program", sample(atomic_programs(policy=Policy(atomic_global_size=256, atomic_statements=6)),
                                           10, seed=5), ids=lambda p: p.id[:8])
def test_generated_atomics_programs_reduce_to_valid_smaller_programs(lossy, program):
    """Whatever the memories, indices and operations (OpenCL 1.x), every reduction is valid, has no
    more work-items, statements or locations, still shows the goal, and says why when it is not one
    operation on one work-item."""
    rows = _lossy(program)
    if not rows:
        return
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker(), budget_s=30)
    small = result.reduced
    validate(small)
    assert [r for r in _lossy(small) if Goal.of(rows[0]).matches(r)]
    assert small.global_size <= program.global_size and len(small.body) <= len(program.body)
    assert sum(b.count for b in small.shared) <= sum(b.count for b in program.shared)
    assert small.global_size < program.global_size or len(small.body) < len(program.body)
    assert (result.why_not_minimal == "") == (small.global_size == 1 and len(small.body) == 1)
