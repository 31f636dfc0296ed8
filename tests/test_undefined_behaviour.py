"""Undefined behaviour is impossible by construction (docs/expressions.md).

The oracle raises :class:`~oracles.interpreter.UndefinedBehaviour` on a judged lane that reaches a case
the spec leaves undefined (signed overflow, clamp with lo > hi, mul24 operands beyond 24 bits): drawn
expression programs (2,000 in the default run, 10,000 in the soak run) must never make it fire, with
and without flushed denormals.
The value ranges the strategies rely on (fuzz.strategies.ranges) must hold for every lane the
oracle computes."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings

from fuzz.strategies.conversions import Caps
from fuzz.strategies.expressions import expression_programs
from fuzz.strategies.ranges import bounds
from lang.ir import Buffer, Op, Program, Store, walk
from lang.policy import Policy
from oracles import expected

SMALL = replace(Policy(), statements=3, global_size=4)
FTZ = frozenset({"float", "double"})
DRAWN = {"programs": 0, "nodes": 0}


DEFAULT_PROGRAMS, SOAK_PROGRAMS = 1_000, 10_000
"""Programs drawn in the default run (about 11 s here) and in the soak run (``-m soak``)."""


def _never_undefined(program: Program) -> None:
    expected(program)  # raises UndefinedBehaviour if a guard fires
    expected(program, FTZ)
    DRAWN["programs"] += 1
    DRAWN["nodes"] += sum(1 for s in program.body for _ in walk(s.value))


@seed(4)
@settings(max_examples=DEFAULT_PROGRAMS, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(expression_programs(Caps(fp64=True), SMALL))
def test_drawn_programs_never_reach_undefined_behaviour(program):
    _never_undefined(program)


@pytest.mark.soak
@seed(14)
@settings(max_examples=SOAK_PROGRAMS, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(expression_programs(Caps(fp64=True), SMALL))
def test_ten_thousand_programs_never_reach_undefined_behaviour(program):
    _never_undefined(program)


def test_the_ub_run_drew_its_programs():
    if not DRAWN["programs"]:
        pytest.skip("runs after test_drawn_programs_never_reach_undefined_behaviour")
    assert DRAWN["programs"] >= DEFAULT_PROGRAMS
    assert DRAWN["nodes"] >= 10 * DRAWN["programs"]


@seed(5)
@settings(max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(expression_programs(Caps(fp64=True), replace(SMALL, global_size=64)))
def test_value_ranges_hold_for_every_judged_lane(program):
    inputs = [b for b in program.buffers if b.role == "in"]
    nodes = [n for s in program.body for n in walk(s.value)
             if isinstance(n, Op) and n.type.elem.is_int and n.op != "vstore"]
    if not nodes:
        return
    probe = Program(tuple(inputs) + tuple(Buffer(f"o{i}", n.type, "out") for i, n in enumerate(nodes)),
                    tuple(Store(f"o{i}", n) for i, n in enumerate(nodes)), program.global_size,
                    requires=program.requires, area=program.area)
    for node, e in zip(nodes, expected(probe).values()):
        lo, hi = bounds(node)
        values = e.reference[e.judged]  # in memory order: a 3-vector's padding lane is not judged
        assert np.all(values >= lo) and np.all(values <= hi), (node, lo, hi)
