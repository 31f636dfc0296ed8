"""Corners packed into few builds (fuzz.strategies.sweeps.base): an operation's operand tuples in
the lanes of its statements, the sweep a pass at a time (special values, other classes, shapes),
no more work-items than the operands need. Hand-worked placements and layouts, and the sweeps'
order read back with lang.corners.reached."""

from __future__ import annotations

import math

import pytest

from fuzz.strategies import sweep_programs
from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import SHAPES, SPECIALS, Sweep, lanes, place, value_order
from lang.corners import math_types, reached, table
from lang.corners.classes import corner_rank, value_rank
from lang.maths import FUNCTIONS
from lang.policy import Policy
from lang.types import Type

ALL_CAPS = Caps(fp64=True, fp16=True, versions=frozenset({"cl2.0"}))


def test_an_operations_tuples_go_to_its_two_narrowest_statements_and_its_shapes_share_them():
    # 361 pairs, 81 of special values, widths 1 2 3 4 8 16 (all with every operand as wide)
    got = place(361, 81, [1, 2, 3, 4, 8, 16], 6)
    assert got[:2] == [(SPECIALS, (0, 81), 0, 81), (1, (81, 361), 0, 140)]  # a lane per tuple: 81, then 280 / 2
    work_items = math.ceil(361 / (3 + 4 + 8 + 16))  # 12
    assert got[2:] == [(SHAPES, (0, 361), first, work_items) for first in (0, 36, 84, 180)]
    # a scalar-argument form after the vector forms shares the tuples but carries none
    assert place(10, 10, [1, 2, 4], 2) == [(SPECIALS, (0, 10), 0, 10), (SHAPES, (0, 10), 0, 5), (SHAPES, (0, 10), 10, 5)]


def test_a_load_lays_its_values_out_lane_by_lane_and_a_scalar_beside_takes_its_work_items_first():
    s = Sweep()
    load = s.load(Type("int", 3), (1, 2, 3, 4, 5, 6, 7))
    buffer = next(b for b in s.buffers if b.name == load.buffer)
    assert buffer.fill.values == (1, 2, 3, 1, 4, 5, 6, 4, 7, 1, 2, 7)  # 3 work-items; the fourth lane repeats the first
    assert s.work_items == 3
    column = tuple(range(10))
    assert lanes(column, 8, 4, 2) == (8, 9, 0, 1, 2, 3, 4, 5)
    assert lanes(column, 8, 4, 2, scalar=True) == (8, 2)


def test_tuples_of_special_values_come_first():
    rank = {0: value_rank("nan"), 1: value_rank("+real"), 2: value_rank("-sub")}
    ordered, special = value_order([(1, 0), (0, 2), (2, 1), (0, 0)], (rank, rank))
    assert ordered == [(0, 0), (0, 2), (1, 0), (2, 1)] and special == 2
    assert corner_rank("x=+0,y=-real") == value_rank("real") > corner_rank("x=nan,y=-sub") == value_rank("sub")


@pytest.fixture(scope="module")
def math_sweep():
    return sweep_programs("math", ALL_CAPS, Policy())


def test_the_math_sweep_reaches_every_class_in_its_first_passes_special_values_first(math_sweep):
    math_corners = {c for c in table() if c.area == "math"}
    classes = {c for c in math_corners if "=" in c.key}
    special = {c for c in classes if corner_rank(c.key) <= 1}
    ordinary = classes - special
    seen: set = set()
    first_ordinary = None
    for i, p in enumerate(math_sweep):
        got = reached(p)
        if first_ordinary is None and got & ordinary:
            first_ordinary = i
            assert special <= seen  # every prescribed special value before any ordinary class
        seen |= got
        if classes <= seen:
            break
    groups = sum(len(math_types(name)) for name in FUNCTIONS)  # (function, type) pairs, two carriers each
    assert i + 1 <= 2 * math.ceil(groups / Policy().math_statements) + 1 < len(math_sweep) / 2
    assert first_ordinary is not None and first_ordinary > 0


def test_a_sweep_runs_no_more_lanes_than_its_operands_need(math_sweep):
    """Each statement's lanes hold its tuples once (up to a work-item's rounding): the math sweep's
    lanes are within a few per corner (it ran 78 a corner when every statement repeated every
    class on hundreds of work-items)."""
    lanes_run = sum(p.global_size * sum(s.value.type.width for s in p.body) for p in math_sweep)
    corners = sum(c.area == "math" for c in table())
    assert lanes_run < 6 * corners
    assert max(p.global_size for p in math_sweep) <= 256
