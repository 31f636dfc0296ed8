"""Floating point of flow programs (lang.flow_fp) on PoCL and Oclgrind, OpenCL C and SPIR-V paths:
the hand-worked program and drawn ones (double + - * / sqrt fma, float / and sqrt under
-cl-fp32-correctly-rounded-divide-sqrt, casts) run in both builds and every lane agrees with the
exact interpreter. A target takes a program only where it has what the program requires: PoCL
reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, Oclgrind does not (it never gets float / or sqrt,
nor does a SPIR-V path), rusticl 22.3 has no fp64."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from campaign.flow import builds, flow_job, judge_flow
from fuzz.drivers import Worker
from fuzz.drivers.capabilities import ftz_of, has, runnable
from fuzz.strategies.flow import generate
from lang.flow_rules import check
from lang.maths import CR_DIVIDE_SQRT

from tests.test_flow_fp import _fp_program
from .conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers


def test_only_targets_with_the_capabilities_take_the_programs():
    p = _fp_program()
    assert runnable(target_named("pocl"), p) is p and has(target_named("pocl").fingerprint, CR_DIVIDE_SQRT)
    assert runnable(target_named("oclgrind"), p) is None  # no CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
    assert runnable(target_named("oclgrind"), replace(p, requires=frozenset({"fp64"}))) is not None
    assert runnable(target_named("rusticl"), replace(p, requires=frozenset({"fp64"}))) is None  # no fp64
    assert runnable(target_named("pocl/spirv"), p) is None  # the option is for OpenCL C source
    assert runnable(target_named("pocl/spirv"), replace(p, requires=frozenset({"fp64"}))) is not None


@pytest.mark.parametrize("name", ("pocl", "oclgrind", "pocl/spirv", "oclgrind/spirv"))
def test_every_lane_agrees_with_the_interpreter(name):
    target = target_named(name)
    fp = target.fingerprint
    keeps, cr = "float" not in ftz_of(target), has(fp, CR_DIVIDE_SQRT) and target.path == "opencl-c"
    drawn = [generate(random.Random(seed), fp64=bool(fp.get("fp64")), cr=cr) for seed in range(12)]
    programs = [_fp_program()] * cr + [p for p in drawn if any(v.name.startswith("dv") for v in p.variables)]
    judged, wrong, failed = 0, {}, {}
    with Worker(target, timeout_s=120) as worker:
        for i, program in enumerate(programs):
            assert runnable(target, program) is program
            for p in builds(program):
                check(p)
                result = worker.run(flow_job(p, target.path, target.lineage, fp))
                if not result.ok:
                    failed[(i, p.options)] = (result.status, result.log[-600:])
                    continue
                lanes, mismatches = judge_flow(p, result.outputs["out"], keeps)
                judged += lanes
                if mismatches:
                    wrong[(i, p.options)] = mismatches[:3]
    assert len(programs) >= 6 and judged > 0
    assert not failed and not wrong, (failed, wrong)
