"""A program's expectations on the SPIR-V path and on the OpenCL C path (oracles.path_neutral): the
same, lane for lane, where none of its operations reads the path, so a campaign computes them once
for both (campaign.expectations.Expectations.has); different where one does (the SPIR-V
environment's exp10(±0) = 1, OpenCL SPIR-V Environment §6.7.1)."""

from __future__ import annotations

import struct

from conftest import same_expectations

from campaign.expectations import Expectations
from fuzz.strategies.conversions import Caps
from fuzz.strategies.draws import sample
from fuzz.strategies.maths import math_programs
from lang.ir import Op, walk
from lang.maths import FUNCTIONS
from lang.policy import Policy
from oracles import expected, path_neutral
from oracles.math.lanewise import lanewise_at

SPIRV = frozenset({"spirv"})


def test_path_neutral_programs_expect_the_same_on_both_paths():
    programs = sample(math_programs(Caps(fp64=True, fp16=True, cr_divide_sqrt=True), Policy(math_global_size=16)),
                      30, seed=11)
    neutral = [p for p in programs if path_neutral(p)]
    assert 5 <= len(neutral) < len(programs)  # not vacuous either way
    for p in neutral:
        for ftz in (frozenset(), frozenset({"float"})):
            assert same_expectations(expected(p, ftz), expected(p, ftz | SPIRV)), p.id


def test_exp10_reads_the_path():
    """exp10(±0) is 1 on the SPIR-V path, within 3 ulp of 1 on the OpenCL C path (§7.5.1 lists no
    value there): a program with exp10 is not neutral, and exp10's lane at zero differs."""
    programs = sample(math_programs(Caps(), Policy(math_global_size=16)), 20, seed=11)
    with_exp10 = [p for p in programs if any(isinstance(n, Op) and n.op == "exp10" for s in p.body for n in walk(s.value))]
    assert with_exp10 and not any(path_neutral(p) for p in with_exp10)
    zero = (struct.pack("<d", 0.0),)
    opencl_c, spirv = (lanewise_at.__wrapped__(FUNCTIONS["exp10"], "float", env, zero)[0] for env in (frozenset(), SPIRV))
    assert spirv.values == [1.0] and not spirv.ranges and opencl_c.ranges  # exact 1, or 1 within 3 ulp


def test_a_campaign_computes_a_neutral_programs_expectations_once_for_both_paths():
    program = next(p for p in sample(math_programs(Caps(), Policy(math_global_size=16)), 20, seed=11)
                   if path_neutral(p))
    e = Expectations(program)
    here = e.get(frozenset())
    assert e.has(SPIRV) and e.get(SPIRV) is here  # shared, not computed again
    assert e.lane_cpu_s is not None and e.packed(SPIRV)[1].keys() == {SPIRV}
