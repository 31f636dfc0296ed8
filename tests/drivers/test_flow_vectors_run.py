"""Flow programs with vector values (lang.flow_vectors) on PoCL and Oclgrind, on the OpenCL C path
and the SPIR-V path (both control flow forms), the paths the flow driver tests use: the hand-worked
kernel of tests/test_flow_vectors.py and drawn programs with vectors run, and every lane agrees
with the exact interpreter; a lane that differs fails the test with its program, to be checked by
hand (a driver's wrong code or a bug of ours). rusticl 22.3 folds ``add_sat``/``sub_sat`` of
constant vectors as wrapping operations (its known bug of scalars, docs/flow.md), on both paths."""

from __future__ import annotations

from dataclasses import replace

import pytest

from campaign.flow import flow_job, judge_flow
from fuzz.drivers import Worker, discover
from fuzz.drivers.capabilities import ftz_of
from lang.flow import Assign, Const, Decl, FlowProgram, Output, Var
from lang.flow_rules import check
from lang.flow_tree import expressions, statements, walk
from lang.flow_vectors import Swizzle, VCall, Vec
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


def saturates_vectors(p: FlowProgram) -> bool:
    """Whether ``p`` has a component-wise ``add_sat`` or ``sub_sat`` (which rusticl 22.3 folds
    wrongly where its operands become constants, :func:`test_saturation_of_constant_vectors`)."""
    roots = [x for s in statements(p.body) for x in expressions(s)]
    return any(isinstance(n, VCall) and n.fn in ("add_sat", "sub_sat") for r in roots for n in walk(r))


@pytest.mark.parametrize("name", ("pocl", "oclgrind", "rusticl", "pocl/spirv", "oclgrind/spirv", "rusticl/spirv"))
def test_saturation_of_constant_vectors(name):
    """``add_sat((ushort2)(1, 65535), (ushort2)(65535, 2))`` is (65535, 65535) (§6.15.3: saturated);
    rusticl 22.3 folds it as the wrapping sums (0, 1) on both its paths, every other local driver
    saturates."""
    target = target_named(name)
    parts = lambda *xs: Vec("ushort2", tuple(Const("ushort", x) for x in xs))  # noqa: E731
    reads = tuple(Assign(f"c{k}", Swizzle(Var("v", "ushort2"), (k,), "s", "ushort")) for k in range(2))
    p = FlowProgram((), tuple(Output(f"o{k}", f"c{k}", "ushort") for k in range(2)),
                    (Decl("v", "ushort2"), Decl("c0", "ushort"), Decl("c1", "ushort")), (), (),
                    (Assign("v", VCall("add_sat", (parts(1, 65535), parts(65535, 2)), "ushort2")), *reads), (4,), (4,))
    check(p)
    with Worker(target, timeout_s=60) as w:
        result = w.run(flow_job(p, target.path, target.lineage, target.fingerprint))
    assert result.ok, result.log[-400:]
    judged, wrong = judge_flow(p, result.outputs["out"], True)
    assert judged == 8
    if target.lineage == "rusticl":
        assert sorted((m.output, m.expected, m.actual) for m in wrong) == [("o0", 0xFFFF, 0)] * 4 + [("o1", 0xFFFF, 1)] * 4
    else:
        assert wrong == []


@pytest.mark.parametrize("vector, wrong", [("int16", True), ("long8", True), ("int8", False), ("long16", False)])
def test_pocl_7_1_at_opt_disable_gets_min_of_512_bit_vectors_wrong(vector, wrong):
    """PoCL 7.1 built with -cl-opt-disable (on this AVX-512 host) computes ``min`` of two 512-bit
    vectors (int16, long8) wrong in some components, and of 256- and 1024-bit vectors (int8,
    long16) right; its default build is right (docs/flow.md: one bug behind nine PoCL 7.1 buckets
    of the 30-minute campaign). Runs where the release is installed (``clfuzz releases``)."""
    found = {t.name: t for t in discover(releases=True)}
    if "pocl-7.1" not in found:
        pytest.skip("pocl-7.1 is not installed (clfuzz releases)")
    target = found["pocl-7.1"]
    element, n = vector.rstrip("0123456789"), int(vector[len(vector.rstrip("0123456789")):])
    values = tuple(((i * 37) % 11) - 3 for i in range(n))
    literal = Vec(vector, tuple(Const(element, v) for v in values))
    reads = tuple(Assign(f"c{k}", Swizzle(Var("v", vector), (k,), "s", element)) for k in range(n))
    p = FlowProgram((), tuple(Output(f"o{k}", f"c{k}", element) for k in range(n)),
                    (Decl("v", vector), *(Decl(f"c{k}", element) for k in range(n))), (), (),
                    (Assign("v", VCall("min", (literal, Vec(vector, (Const(element, 2),) * n)), vector)), *reads),
                    (1,), (1,), requires=frozenset({"int64"} if element == "long" else ()))
    check(p)
    with Worker(target, timeout_s=60) as w:
        for options, expect_wrong in (("-cl-opt-disable", wrong), ("", False)):
            q = replace(p, options=options)
            result = w.run(flow_job(q, target.path, target.lineage, target.fingerprint))
            assert result.ok, result.log[-400:]
            judged, mismatches = judge_flow(q, result.outputs["out"], True)
            assert judged == n and bool(mismatches) == expect_wrong, (options, mismatches[:3])
