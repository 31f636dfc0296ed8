"""OpenCL C 2.0 launches of flow programs (lang.flow_launch) on the local drivers.

No local device takes non-uniform work-groups by the specification: PoCL 3.1 and rusticl 22.3
(OpenCL 3.0) report CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT false and refuse such a launch
(CL_INVALID_WORK_GROUP_SIZE), so the campaign does not send them one; Oclgrind 21.10 reports the
support but is an OpenCL 1.2 device (the query and -cl-std=CL2.0 launches are OpenCL 2.0's), so
its fingerprint has no ``non_uniform_work_groups`` either. It builds -cl-std=CL2.0 all the same
and runs the launch, its SPIR-V path too: every lane agrees with the interpreter, a check of the
interpreter's non-uniform work-groups (and of both emitters' exchanges in partial work-groups) by
an implementation, not a judgement of Oclgrind. Uniform launches that
call the OpenCL C 2.0 work-item functions run on PoCL and rusticl, on both paths."""

from __future__ import annotations

import random

import pytest

from campaign.flow import flow_job, judge_flow
from fuzz.drivers import Worker
from fuzz.drivers.capabilities import supports
from fuzz.emit.opencl_flow import emit
from fuzz.strategies.flow import generate
from fuzz.strategies.flow_launch import LAUNCHES
from lang.flow_launch import CL2, NON_UNIFORM, is_non_uniform
from lang.flow_rules import check
from tests.test_flow_launch import exchange_program, items_program

from .conftest import skip_without_icd, target_named

skip_without_icd()


def _drawn(non_uniform: bool, count: int) -> list:
    drawn = (generate(random.Random(seed), launches=LAUNCHES) for seed in range(400))
    return [p for p in drawn if CL2 in p.requires and is_non_uniform(p) == non_uniform][:count]


def _run(target, programs, fingerprint: dict) -> tuple[int, int, dict, dict]:
    """(programs run, lanes judged, wrong lanes, failures) of ``programs`` on ``target``."""
    ran = judged = 0
    wrong, failed = {}, {}
    with Worker(target, timeout_s=120) as w:
        for i, p in enumerate(programs):
            check(p)
            result = w.run(flow_job(p, target.path, target.lineage, fingerprint))
            if not result.ok:
                failed[i] = (result.status, result.log[-300:])
                continue
            lanes, mismatches = judge_flow(p, result.outputs["out"], True)
            ran, judged = ran + 1, judged + lanes
            if mismatches:
                wrong[i] = mismatches[:3]
    return ran, judged, wrong, failed


@pytest.mark.parametrize("name", ("oclgrind", "oclgrind/spirv"))
def test_oclgrind_runs_non_uniform_launches_as_the_interpreter_computes_them(name):
    target = target_named(name)
    programs = [items_program((10,), (4,), (3,)), items_program((5, 3), (2, 2)), exchange_program()] + _drawn(True, 8)
    assert not supports(target, programs[0])  # an OpenCL 1.2 device: not in a campaign
    ran, judged, wrong, failed = _run(target, programs, {**target.fingerprint, "cl3.0": False})  # -cl-std=CL2.0
    assert not failed and not wrong, (failed, wrong)
    assert ran == len(programs) and judged > 300


@pytest.mark.parametrize("name", ("pocl", "rusticl"))
def test_devices_without_the_support_report_it_and_refuse_the_launch(name):
    target = target_named(name)
    assert target.fingerprint[CL2] and not target.fingerprint[NON_UNIFORM]
    p = items_program((10,), (4,), (3,))
    assert not supports(target, p)
    ran, _, _, failed = _run(target, [p], target.fingerprint)
    assert ran == 0 and "INVALID_WORK_GROUP_SIZE" in failed[0][1]


@pytest.mark.parametrize("name", ("pocl", "pocl/spirv", "rusticl", "rusticl/spirv"))
def test_uniform_launches_with_opencl_c_2_functions_agree(name):
    """rusticl 22.3 crashes on some drawn programs (docs/flow.md, "Findings"): most must run; PoCL
    3.1's SPIR-V loader misses work-item symbols of some kernels (``undefined symbol: _group_id_x``,
    docs/flow.md); rusticl's known fold of ``sub_sat`` (test_flow_spirv_run.test_sub_sat_of_constants) is left out of its
    programs."""
    target = target_named(name)
    drawn = [p for p in _drawn(False, 40) if target.lineage != "rusticl" or "sub_sat(" not in emit(p)]
    drawn = [p for p in drawn if name != "rusticl" or not p.struct_functions][:7]  # by value: test_flow_structs_run
    programs = [items_program((8, 4), (4, 2), (3, 1), frozenset({CL2}))] + drawn
    assert all(supports(target, p) for p in programs)
    ran, judged, wrong, failed = _run(target, programs, target.fingerprint)
    assert not wrong, wrong
    known = [i for i, (_, text) in failed.items() if "undefined symbol: _" in text]  # PoCL 3.1's SPIR-V loader
    assert not known or name == "pocl/spirv", failed
    assert ran + len(known) >= (5 if target.lineage == "rusticl" else len(programs)) and judged > 0, failed
    assert all(status == "crash" for status, _ in failed.values()), failed
