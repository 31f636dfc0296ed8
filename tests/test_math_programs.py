"""Generated math programs: every operation of lang.maths is drawn on float and double, with and
without build options; every program is valid (lang.ir.validate) and its module passes spirv-val."""

from __future__ import annotations

import pytest

from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.conversions import Caps
from fuzz.strategies.draws import sample
from fuzz.strategies.maths import math_programs
from lang.ir import Op, Program, walk
from lang.maths import CR_DIVIDE_SQRT, FUNCTIONS, OPTIONS
from lang.policy import Policy

CAPS = Caps(fp64=True, cr_divide_sqrt=True)


@pytest.fixture(scope="module")
def programs() -> list[Program]:
    return sample(math_programs(CAPS, Policy(math_global_size=8)), 120, seed=5)


def test_every_operation_type_and_option_is_drawn(programs):
    ops = {(n.op, n.args[0].type.scalar if n.args else n.type.scalar) for p in programs for s in p.body
           for n in walk(s.value) if isinstance(n, Op)}
    assert {name for name, _ in ops} == set(FUNCTIONS) | {"arith"}
    assert {t for _, t in ops} >= {"float", "double"}
    options = {o for p in programs for o in p.options.split()}
    assert options == set(OPTIONS)
    assert all(CR_DIVIDE_SQRT in p.requires for p in programs if "-cl-fp32-correctly-rounded-divide-sqrt" in p.options)


def test_programs_round_trip_and_emit(programs):
    for p in programs:
        assert Program.from_json(p.to_json()) == p
        source = emit(p)
        for s in p.body:
            if isinstance(s.value, Op) and s.value.attr("out"):
                assert f"&{s.value.attr('out')}[gid]" in source


def test_modules_validate(programs):
    for p in programs[:60]:
        assert validate(spirv.emit(p), target_env(p)) is None, p.id
