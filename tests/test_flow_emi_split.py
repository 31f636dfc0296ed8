"""The ``split`` variant of flow programs (fuzz.strategies.flow_emi.split): a loop cut by hand into
two loops over the two parts of its iteration range computes what the loop computes, its ``break``
included (the second loop does not run after a break in the first), by the interpreter, by a
hand-worked value and by the host-C evaluation (triage.flow_host: gcc, -fsanitize=undefined)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fuzz.strategies.flow import generate
from fuzz.strategies.flow_emi import split, variant
from lang.flow import Assign, Bin, Call, Cast, Const, Decl, Exit, FlowProgram, If, Input, Load, Loop, Output, Var
from lang.flow_rules import check
from lang.flow_tree import statements
from lang.nodes import Fill
from oracles import flow_outcomes
from triage.flow_host import run_host


def U(v: int) -> Const:
    return Const("uint", v)


def _loop_program(form: str, reverse: bool, trips: int) -> FlowProgram:
    """``v = v * 3 + i`` over ``i = 10, 12, ..., 10 + 2 * (n - 1)`` (reverse: last first), n =
    min(in[0], 8), leaving the loop where ``i == 16``, ``continue`` where ``i == 12``."""
    i = Var("i", "int")
    body = (Exit("break", Bin("eq", i, Const("int", 16), "int")),
            Exit("continue", Bin("eq", i, Const("int", 12), "int")),
            Assign("v", Bin("add", Bin("mul", Var("v", "uint"), U(3), "uint"), Cast("uint", i), "uint")))
    loop = Loop(form, "i", U(10), Load("in0", "uint", U(0)), 8, 2, reverse, body)
    return FlowProgram((Input("in0", "uint", 1, Fill(0, values=(trips,))),), (Output("o_v", "v", "uint"),),
                       (Decl("v", "uint"),), (), (), (loop,), (2,), (1,))


def _expected(form: str, reverse: bool, trips: int) -> int:
    """The hand-worked value: the counter values in order, to the break."""
    n = min(trips, 8) if form != "do" else max(min(trips, 8), 1)
    values = [10 + 2 * k for k in range(n)]
    v = 0
    for i in reversed(values) if reverse else values:
        if i == 16:
            break
        if i != 12:
            v = v * 3 + i
    return v


@pytest.mark.parametrize("form", ["for", "while", "do"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("trips", [0, 2, 5, 8])
def test_a_split_loop_computes_the_loop_at_every_cut(form, reverse, trips, tmp_path):
    p = _loop_program(form, reverse, trips)
    want = _expected(form, reverse, trips)
    assert flow_outcomes(p)["o_v"].bits.tolist() == [want] * 2
    cuts = set()
    for seed in range(12):
        v = split(p, random.Random(seed))
        check(v)
        loops = [s for s in statements(v.body) if isinstance(s, Loop)]
        assert len(loops) == 2 and all(s.form in (form, "while") for s in loops)
        # the first loop's break raises the flag and the second runs only while it is down
        assert any(isinstance(s, If) and s.cond.op == "eq" and s.then[0] in loops for s in v.body)
        cuts.add(next(c.args[1].value for s in loops for c in [s.trips] if isinstance(c, Call) and c.fn == "min"))
        assert flow_outcomes(v)["o_v"].bits.tolist() == [want] * 2, (seed, cuts)
    assert len(cuts) >= 3  # cuts before, at and after the break and the continue
    assert run_host(v, tmp_path)["o_v"].tolist() == [want] * 2


def test_a_loop_without_a_constant_base_is_not_split():
    p = _loop_program("for", False, 5)
    loop = p.body[0]
    moved = FlowProgram(p.inputs, p.outputs, p.variables, (), (), (Loop(
        "for", "i", Load("in0", "uint", U(0)), loop.trips, 8, 2, False, loop.body),), (2,), (1,))
    assert split(moved, random.Random(0)) is None
    # a base too high for the second part's base to stay a base (<= 255) is not cut either
    assert split(FlowProgram(p.inputs, p.outputs, p.variables, (), (), (Loop(
        "for", "i", U(254), loop.trips, 8, 2, False, loop.body),), (2,), (1,)), random.Random(0)) is None


def test_split_variants_of_drawn_programs_compute_their_originals(tmp_path):
    made = broke = 0
    for seed in range(64):  # 26 splits, 3 of them with a break
        p = generate(random.Random(seed))
        v = variant(p, "split", random.Random(seed))
        if v is None:
            continue
        made += 1
        broke += any(d.name.endswith("_broke") for d in v.variables)
        check(v)
        want, got = flow_outcomes(p), flow_outcomes(v)
        for name, o in want.items():
            assert np.array_equal(o.bits, got[name].bits), (seed, name)
        if made <= 3 or (broke == 1 and made < 60):
            host = run_host(v, tmp_path)
            for o in p.outputs:
                e, h = want[o.name], host[o.name]
                nan = e.nan & np.isnan(h.view(np.float32)) if o.type == "float" else np.zeros(len(h), bool)
                assert ((e.bits == h) | nan).all(), (seed, o.name)
    assert made >= 20 and broke >= 3
