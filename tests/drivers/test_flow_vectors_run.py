"""Flow programs with vector values (lang.flow_vectors) on PoCL and Oclgrind, on the OpenCL C path
and the SPIR-V path (both control flow forms), the paths the flow driver tests use: the hand-worked
kernel of tests/test_flow_vectors.py and drawn programs with vectors run, and every lane agrees
with the exact interpreter; a lane that differs fails the test with its program, to be checked by
hand (a driver's wrong code or a bug of ours)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from campaign.flow import flow_job, judge_flow
from fuzz.drivers import Worker
from fuzz.drivers.capabilities import ftz_of
from lang.flow_rules import check
from lang.shapes import CFGS

from tests.test_flow_vectors import drawn, hand
from .conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers


@pytest.mark.parametrize("name", ("pocl", "oclgrind", "pocl/spirv", "oclgrind/spirv"))
def test_vector_programs_agree_with_the_interpreter(name):
    target = target_named(name)
    keeps = "float" not in ftz_of(target)
    cfgs = CFGS if target.path == "spirv" else CFGS[:1]
    judged, wrong, failed = 0, {}, {}
    with Worker(target, timeout_s=120) as worker:
        for i, program in enumerate([hand(), *drawn(6)]):
            for cfg in cfgs:
                p = replace(program, cfg=cfg)
                check(p)
                result = worker.run(flow_job(p, target.path, target.lineage, target.fingerprint))
                if not result.ok:
                    failed[(i, cfg)] = (result.status, result.log[-600:])
                    continue
                lanes, mismatches = judge_flow(p, result.outputs["out"], keeps)
                judged += lanes
                if mismatches:
                    wrong[(i, cfg)] = (mismatches[:3], p.to_json())
    assert not failed, failed
    assert not wrong, wrong
    assert judged > 0
