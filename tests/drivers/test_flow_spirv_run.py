"""Flow programs (lang.flow) on the local drivers' SPIR-V paths (fuzz.emit.spirv.flow_kernel,
through each driver's route): drawn programs in both control flow forms and a hand-made one run
and agree with the exact interpreter lane for lane, and the two driver bugs these programs found
on the SPIR-V paths behave as docs/flow.md describes:

* PoCL 3.1 (and 6.0) cannot load a kernel whose DontInline helper calls a work-item function
  ("undefined symbol: _group_id_x"); its OpenCL C path runs the same program right;
* rusticl 22.3 (and 25.0) folds ``sub_sat`` of constants as a wrapping subtraction, on both paths.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from campaign.flow import flow_job, judge_flow
from fuzz.drivers import Worker
from fuzz.drivers.capabilities import ftz_of
from fuzz.strategies.flow import generate
from lang.flow import Assign, Call, Const, Decl, FlowProgram, Function, Invoke, Item, Output, Var
from lang.flow_tree import expressions, statements, walk
from lang.flow_rules import check
from lang.shapes import CFGS

from tests.drivers.test_flow_vectors_run import saturates_vectors
from tests.test_flow_spirv import hand_program
from .conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers

SPIRV = ("pocl/spirv", "rusticl/spirv", "oclgrind/spirv")
UNDEFINED = "undefined symbol: _"


def noinline_reads_item(p: FlowProgram) -> bool:
    """Whether a noinline helper of ``p`` calls a work-item function (PoCL's SPIR path cannot load it)."""
    def reads(f: Function) -> bool:
        roots = [f.result, *(x for s in statements(f.body) for x in expressions(s))]
        return any(isinstance(n, Item) for r in roots for n in walk(r))
    return any(f.noinline and reads(f) for f in p.functions)


@pytest.mark.parametrize("name", SPIRV)
def test_drawn_programs_agree_with_the_interpreter_on_the_spirv_path(name):
    target = target_named(name)
    keeps = "float" not in ftz_of(target)
    programs = [hand_program()] + [generate(random.Random(seed)) for seed in range(12)]
    judged, wrong, failed = 0, {}, {}
    with Worker(target, timeout_s=120) as worker:
        for i, program in enumerate(programs):
            for cfg in CFGS:
                p = replace(program, cfg=cfg)
                check(p)
                result = worker.run(flow_job(p, target.path, target.lineage, target.fingerprint))
                if not result.ok:
                    known = target.lineage == "pocl" and noinline_reads_item(p) and UNDEFINED in result.log
                    if not known:
                        failed[(i, cfg)] = (result.status, result.log[-600:])
                    continue
                lanes, mismatches = judge_flow(p, result.outputs["out"], keeps)
                judged += lanes
                if mismatches and not (target.lineage == "rusticl" and saturates_vectors(p)):  # its known folding
                    wrong[(i, cfg)] = mismatches[:3]
    assert not failed, failed
    assert not wrong, wrong
    assert judged > 1000


def _noinline_item() -> FlowProgram:
    helper = Function("h", (Decl("a", "uint"),), (), (), (), Call("add_sat", (Var("a", "uint"), Item("group_id", 0)),
                                                                  "uint"), noinline=True)
    return FlowProgram((), (Output("o", "x", "uint"),), (Decl("x", "uint"),), (), (helper,),
                       (Invoke("h", (Const("uint", 10),), (), "x"),), (8,), (2,))


def test_pocl_spirv_cannot_load_a_noinline_helper_that_calls_a_work_item_function():
    """PoCL 3.1's SPIR path leaves PoCL's work-group variable ``_group_id_x`` undefined where a
    DontInline function calls get_group_id: the kernel fails to load. PoCL's OpenCL C path runs
    the same program (its helper noinline too) right; PoCL 7.1's IL path does too (docs/flow.md)."""
    p = _noinline_item()
    check(p)
    spirv, source = target_named("pocl/spirv"), target_named("pocl")
    with Worker(spirv, timeout_s=60) as w:
        result = w.run(flow_job(p, spirv.path, spirv.lineage, spirv.fingerprint))
    assert not result.ok and "undefined symbol: _group_id_x" in result.log, (result.status, result.log[-400:])
    with Worker(source, timeout_s=60) as w:
        result = w.run(flow_job(p))
    assert result.ok and judge_flow(p, result.outputs["out"], True) == (8, [])


@pytest.mark.parametrize("name", ("pocl", "oclgrind", "rusticl", *SPIRV))
def test_sub_sat_of_constants(name):
    """``sub_sat((short)32767, (short)-1)`` is 32767 (§6.15.3: saturated); rusticl 22.3 folds it as
    the wrapping difference -32768 on both its paths (Mesa's NIR constant folding of isub_sat;
    right in rusticl 26.1 and 26.2), every other local driver saturates."""
    target = target_named(name)
    p = FlowProgram((), (Output("o", "v", "short"),), (Decl("v", "short"),), (), (),
                    (Assign("v", Call("sub_sat", (Const("short", 32767), Const("short", -1)), "short")),),
                    (4,), (4,))
    check(p)
    with Worker(target, timeout_s=60) as w:
        result = w.run(flow_job(p, target.path, target.lineage, target.fingerprint))
    assert result.ok, result.log[-400:]
    judged, wrong = judge_flow(p, result.outputs["out"], True)
    assert judged == 4
    if target.lineage == "rusticl":
        assert [(m.expected, m.actual) for m in wrong] == [(0x7FFF, 0x8000)] * 4
    else:
        assert wrong == []

