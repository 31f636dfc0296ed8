"""A program's statements with no floating-point value (oracles.ftz_neutral) expect the same
whichever floating types a device flushes (OpenCL C 3.0.19 §7.2), so a campaign that computes a
program's expectations for a second flush-to-zero class takes those statements' outputs from the
first (campaign.expectations.Expectations.get) and computes the others: the result is the same,
bit for bit, as computing the class from scratch."""

from __future__ import annotations

import numpy as np
from conftest import same_expectations

from campaign.expectations import Expectations
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import sample
from fuzz.strategies.expressions import expression_programs
from fuzz.strategies.images import image_programs
from lang.policy import Policy
from oracles import expected, ftz_neutral

NONE, FLOAT, BOTH = frozenset(), frozenset({"float"}), frozenset({"float", "double"})


def _programs() -> list:
    caps, policy = Caps(fp64=True), Policy(global_size=64, image_global_size=16)
    return [p for strategy in (expression_programs, conversion_programs, image_programs)
            for p in sample(strategy(caps, policy), 12, seed=5)]


def test_a_second_class_takes_the_int_statements_and_computes_the_rest():
    programs = _programs()
    neutral = differ = 0
    for p in programs:
        for first, second in ((NONE, FLOAT), (FLOAT, NONE), (FLOAT, BOTH), (frozenset({"spirv"}), FLOAT | {"spirv"})):
            e = Expectations(p)
            before = e.get(first)
            got = e.get(second)
            assert same_expectations(got, expected(p, second, e.inputs, e.histories())), (p.id, first, second)
            for s in p.body:
                if ftz_neutral(p, s):
                    neutral += 1
                    assert got[s.buffer] is before[s.buffer]  # taken, not computed again
                elif not same_expectations({0: got[s.buffer]}, {0: before[s.buffer]}):
                    differ += 1  # a float statement the class changes: sharing it would have been wrong
    assert neutral > 50 and differ > 5  # neither side vacuous


def test_what_is_neutral():
    """An integer statement is; one with a floating value anywhere in its tree (an operand of a
    comparison, a conversion's source), one storing to a floating buffer, and an image read are not."""
    programs = _programs()
    statements = [(p, s) for p in programs for s in p.body]
    kinds = {"int": 0, "float": 0, "image": 0}
    for p, s in statements:
        types = {n.type.elem for n in _walk(s.value)} | {p.buffer(s.buffer).type.elem}
        image = any(getattr(n, "op", "").startswith("read_image") for n in _walk(s.value))
        if image:
            kinds["image"] += 1
            assert not ftz_neutral(p, s)
        elif any(t.is_float for t in types):
            kinds["float"] += 1
            assert not ftz_neutral(p, s)
        else:
            kinds["int"] += 1
            assert ftz_neutral(p, s)
    assert all(kinds.values()), kinds


def _walk(e):
    from lang.ir import walk

    return list(walk(e))


def test_the_shared_expectations_are_the_first_class_objects_unchanged():
    p = next(p for p in _programs() if any(ftz_neutral(p, s) for s in p.body))
    e = Expectations(p)
    first = e.get(NONE)
    snapshot = {k: [a.copy() for a in v.allowed] for k, v in first.items()}
    e.get(FLOAT)
    assert all(np.array_equal(a, b) for k, v in first.items() for a, b in zip(v.allowed, snapshot[k]))
