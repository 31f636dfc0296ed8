"""Generated math programs: every operation of lang.maths is drawn on float and double, with and
without build options, and every scalar-argument overload (``ldexp(float4, int)``, ``step(float,
float4)`` ...); every program is valid (lang.ir.validate) and its module passes spirv-val."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.conversions import Caps
from fuzz.strategies import sweep_programs
from fuzz.strategies.draws import sample
from fuzz.strategies.maths import math_programs
from lang.ir import Op, Program, walk
from lang.ir import validate as validate_ir
from lang.maths import CR_DIVIDE_SQRT, FUNCTIONS, OPTIONS
from lang.ops import OPS
from lang.policy import Policy
from lang.types import VECTOR_WIDTHS

CAPS = Caps(fp64=True, cr_divide_sqrt=True)


@pytest.fixture(scope="module")
def programs() -> list[Program]:
    return sample(math_programs(CAPS, Policy(math_global_size=8)), 200, seed=5)


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


def _scalar_form(n) -> bool:
    return isinstance(n, Op) and OPS[n.op].variant is not None and OPS[n.op].variant(n) == "scalar"


def test_every_scalar_argument_overload_is_drawn_on_vector_statements_only(programs):
    calls = [n for p in programs for s in p.body for n in walk(s.value) if _scalar_form(n)]
    assert {n.op for n in calls} == {name for name, f in FUNCTIONS.items() if f.scalar_form}
    assert all(n.type.is_vector and min(a.type.width for a in n.args) == 1 for n in calls)
    vector = [n for p in programs for s in p.body for n in walk(s.value)
              if isinstance(n, Op) and n.op in {c.op for c in calls} and n.type.is_vector]
    assert 0.3 < len(calls) / len(vector) < 0.7  # half of the vector statements of those functions


def test_scalar_argument_overloads_emit_in_both_front_ends():
    """Every overload at every vector width on float and double (the corner sweep writes them
    all): valid programs, a call in the OpenCL C text, and SPIR-V modules that pass spirv-val
    (the scalar replicated: OpenCL.std takes operands of the result's component count)."""
    seen = set()
    for p in sweep_programs("math", Caps(fp64=True), Policy()):
        calls = [s.value for s in p.body if _scalar_form(s.value)]
        if not calls:
            continue
        validate_ir(p)
        source = emit(p)
        for op in calls:
            seen.add((op.op, op.type.scalar, op.type.width))
            assert f"{FUNCTIONS[op.op].c_name}(" in source
        assert validate(spirv.emit(p), target_env(p)) is None, p.id
    assert seen == {(name, t, w) for name, f in FUNCTIONS.items() if f.scalar_form for t in ("float", "double")
                    for w in VECTOR_WIDTHS[1:]}


def test_programs_without_a_vector_call_of_those_functions_are_unchanged(monkeypatch, programs):
    """The overload is drawn only where there is a choice: with no scalar forms declared, the same
    seed gives the same programs wherever no vector statement of such a function was drawn."""
    names = {name for name, f in FUNCTIONS.items() if f.scalar_form}
    plain = {n: replace(f, scalar_form="") for n, f in FUNCTIONS.items()}
    monkeypatch.setattr("fuzz.strategies.maths.FUNCTIONS", plain)
    before = sample(math_programs(CAPS, Policy(math_global_size=8)), 120, seed=5)
    candidates = [any(s.value.op in names and s.value.type.is_vector for s in p.body) for p in before]
    assert 0 < sum(candidates) < len(before)
    for old, new, candidate in zip(before, programs, candidates):
        assert (old == new) or candidate
    assert sum(old != new for old, new in zip(before, programs)) > 0
