"""The strategies: policy probabilities honoured, edge classes reached, only defined constructs."""

from collections import Counter
from dataclasses import replace

from conftest import SMALL

from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws, sample
from lang.ir import Op, walk
from lang.layout import input_values
from lang.types import VECTOR_WIDTHS
from oracles import expected
from oracles.classes import input_class


def _draw(n, caps, policy, s=1):
    return sample(conversion_programs(caps, policy), n, s)


def test_campaign_draws_are_new_and_reproducible_one_by_one():
    """Hypothesis's @given loop repeats structures (its mutator); the campaign's draws do not."""
    strategy = conversion_programs(Caps(fp64=True), replace(SMALL, statements=6, global_size=4))
    programs = sample(strategy, 120, 3)
    structures = {tuple((s.value.type, type(s.value).__name__, getattr(s.value, "op", "")) for s in p.body)
                  for p in programs}
    assert len(structures) == len(programs)
    assert Draws(strategy, 3)[57].id == programs[57].id
    assert Draws(strategy, 4)[57].id != programs[57].id


def test_fp64_probability_follows_the_policy():
    # with 25 statements a program allowed double practically always uses it; the bounds are
    # about 4 standard deviations wide (Hypothesis's own integer draws gave 0.62 here)
    programs = _draw(250, Caps(fp64=True), replace(SMALL, statements=25, global_size=1, p_fp64=0.3))
    share = sum("fp64" in p.requires for p in programs) / len(programs)
    assert 0.18 < share < 0.45


def test_every_type_width_rounding_and_sat_is_generated():
    programs = _draw(150, Caps(fp64=True), replace(SMALL, statements=12))
    seen = Counter()
    for p in programs:
        for s in p.body:
            for node in walk(s.value):
                seen[("type", node.type.scalar)] += 1
                seen[("width", node.type.width)] += 1
                if isinstance(node, Op):
                    seen[("op", node.op)] += 1
                    if node.op == "convert":
                        seen[("rounding", node.attr("rounding"))] += 1
                        seen[("sat", bool(node.attr("sat")))] += 1
                seen[("operand", type(node).__name__)] += 1
    for t in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double"):
        assert seen[("type", t)], t
    for w in VECTOR_WIDTHS:
        assert seen[("width", w)], w
    for r in (None, "rte", "rtz", "rtp", "rtn"):
        assert seen[("rounding", r)], r
    for k in ("convert", "cast", "as", "arith"):
        assert seen[("op", k)], k
    assert seen[("sat", True)] and seen[("operand", "Literal")] and seen[("operand", "Load")]


def test_inputs_reach_the_edge_classes():
    programs = _draw(80, Caps(), replace(SMALL, statements=8, global_size=256))
    classes = Counter()
    for p in programs:
        values = input_values(p)
        for b in p.inputs:
            if b.type.elem.is_float:
                classes.update(input_class(values[b.name], b.type.scalar))
    for c in ("nan", "inf", "zero", "subnormal", "tie", "near-tie"):
        assert classes[c], c


def test_generated_programs_never_reach_undefined_behaviour():
    """The oracle raises on undefined behaviour (signed overflow): it never fires."""
    for p in _draw(200, Caps(fp64=True), replace(SMALL, statements=8, w_arith=10)):
        expected(p, frozenset({"float"}))
