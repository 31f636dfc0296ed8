"""Equivalence-modulo-inputs variants of flow programs (fuzz.strategies.flow_emi): each is valid,
differs from its original in the kernel text, and the exact interpreter gives every output the
same bits as the original's; the host-C evaluation (tests/flow_host.py) agrees on a sample."""

from __future__ import annotations

import random

import numpy as np
import pytest

from fuzz.emit.opencl_flow import emit
from fuzz.strategies.flow import generate
from fuzz.strategies.flow_emi import CONDITIONED, variant
from lang.flow import If
from lang.flow_tree import statements
from lang.flow_rules import check
from oracles import flow_outcomes


@pytest.mark.parametrize("kind", CONDITIONED)
def test_a_variant_computes_what_its_original_does(kind):
    made = 0
    for seed in range(40):
        p = generate(random.Random(seed))
        v = variant(p, kind, random.Random(seed))
        if v is None:
            continue
        made += 1
        check(v)
        assert emit(v) != emit(p)
        assert sum(isinstance(s, If) for s in statements(v.body)) > sum(isinstance(s, If) for s in statements(p.body))
        want, got = flow_outcomes(p), flow_outcomes(v)
        for name, o in want.items():
            assert np.array_equal(o.bits, got[name].bits), (seed, kind, name)
    assert made >= 30


def test_a_dead_branch_is_never_taken_and_a_live_one_always():
    """The conditions read one input element the inputs fix: in[k] != v (v its value) is false, ==
    is true, for every work-item; a program with no integer input has no variant."""
    from dataclasses import replace

    p = generate(random.Random(3))
    dead = variant(p, "dead", random.Random(1), edits=1)
    assert dead is not None
    [branch] = [s for s in statements(dead.body) if isinstance(s, If) and s not in set(statements(p.body))][:1]
    assert branch.cond.op == "ne" and branch.cond.a.index.type == "uint"
    assert variant(replace(p, inputs=()), "dead", random.Random(1)) is None


@pytest.mark.parametrize("kind", CONDITIONED)
def test_the_host_c_build_of_a_variant_agrees_with_the_original(kind, tmp_path):
    """An evaluation independent of the interpreter: gcc builds the variant for the host
    (-fsanitize=undefined, tests/flow_host.py) and gets the original's outputs."""
    from tests.flow_host import run_host

    for seed in (5, 6):
        p = generate(random.Random(seed))
        v = variant(p, kind, random.Random(seed))
        assert v is not None
        want, host = flow_outcomes(p), run_host(v, tmp_path)
        for o in p.outputs:
            e, h = want[o.name], host[o.name]
            nan = e.nan & np.isnan(h.view(np.float32)) if o.type == "float" else np.zeros(len(h), bool)
            assert ((e.bits == h) | nan).all(), (seed, kind, o.name)
