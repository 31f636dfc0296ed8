"""OpenCL C 2.0 launches of flow programs (lang.flow_launch): non-uniform work-groups and the
OpenCL C 2.0 work-item functions, worked out by hand (OpenCL C 3.0.19 §6.15.1), the host C build
agreeing with the interpreter on drawn launches, the rules, the text and the capability."""

from __future__ import annotations

import random
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from campaign.caps import capabilities
from campaign.flow import flow_job
from fuzz.drivers.capabilities import runnable
from fuzz.drivers.discovery import Target
from fuzz.drivers.probe import describe_device
from fuzz.drivers.routes import PATH_OPENCL_C, PATH_SPIRV
from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as spirv_module
from fuzz.strategies.flow import generate
from fuzz.strategies.flow_launch import LAUNCHES
from lang.flow import ITEMS, Array, Assign, Bin, Const, Decl, Exchange, FlowProgram, Item, Output
from lang.flow_launch import CL2, NON_UNIFORM, is_non_uniform
from lang.flow_rules import check
from lang.nodes import InvalidProgram
from oracles.flow import interpret
from tests.flow_host import run_host

FNS = (*ITEMS, "enqueued_local_size")


def items_program(global_size, local_size, offset=(), requires=LAUNCHES) -> FlowProgram:
    """Every work-item function of every dimension as an output: ``o_<fn>_<dim>``."""
    names = [(f"{fn}_{d}", fn, d) for fn in FNS for d in range(3)]
    return FlowProgram(inputs=(), outputs=tuple(Output(f"o_{n}", n, "uint") for n, _, _ in names),
                       variables=tuple(Decl(n, "uint") for n, _, _ in names), arrays=(), functions=(),
                       body=tuple(Assign(n, Item(fn, d)) for n, fn, d in names), global_size=global_size,
                       local_size=local_size, requires=requires, global_offset=offset)


# global 10, local 4, offset 3: work-groups of 4, 4 and 2 work-items (§6.15.1: the last is partial)
BY_HAND = {
    "global_id_0": [3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    "local_id_0": [0, 1, 2, 3, 0, 1, 2, 3, 0, 1],
    "group_id_0": [0, 0, 0, 0, 1, 1, 1, 1, 2, 2],
    "global_size_0": [10] * 10,
    "local_size_0": [4, 4, 4, 4, 4, 4, 4, 4, 2, 2],  # the actual work-group's size
    "enqueued_local_size_0": [4] * 10,  # the launch's local size
    "num_groups_0": [3] * 10,  # the partial work-group counts
    "global_offset_0": [3] * 10,
    "work_dim_0": [1] * 10,
    "global_linear_id_0": list(range(10)),  # (gid0 - off0): 3-3 .. 12-3
    "local_linear_id_0": [0, 1, 2, 3, 0, 1, 2, 3, 0, 1],
    # the dimensions the launch leaves out: size 1, id 0 (§6.15.1)
    "global_id_1": [0] * 10, "local_size_1": [1] * 10, "enqueued_local_size_2": [1] * 10, "num_groups_2": [1] * 10,
    "global_size_2": [1] * 10, "global_offset_1": [0] * 10,
}


def test_every_work_item_function_of_a_non_uniform_launch_by_hand():
    p = items_program((10,), (4,), (3,))
    check(p)
    assert is_non_uniform(p) and FlowProgram.from_json(p.to_json()) == p  # the JSON form keeps the launch
    out, host = interpret(p), run_host(p)
    for name, values in BY_HAND.items():
        assert out[f"o_{name}"].bits.tolist() == values, name
        assert host[f"o_{name}"].tolist() == values, name
    for name in (n for fn in FNS for n in (f"{fn}_0", f"{fn}_1", f"{fn}_2")):
        assert np.array_equal(out[f"o_{name}"].bits, host[f"o_{name}"]), name
    text = emit(p)
    assert "get_enqueued_local_size(0)" in text and "get_global_linear_id()" in text and "get_local_linear_id()" in text


def test_a_two_dimensional_partial_group_by_hand():
    # global (5, 3), local (2, 2): x groups of 2, 2, 1; y groups of 2, 1. The work-item (4, 2) is alone
    # in its group: local size (1, 1), local linear id 0; (3, 2) has local size (2, 1), linear id 1.
    p = items_program((5, 3), (2, 2))
    out = interpret(p)
    at = {(4, 2): 14, (3, 2): 13, (1, 1): 6}  # global linear id x + 5 y
    assert [int(out["o_local_size_0"].bits[i]) for i in at.values()] == [1, 2, 2]
    assert [int(out["o_local_size_1"].bits[i]) for i in at.values()] == [1, 1, 2]
    assert [int(out["o_local_linear_id_0"].bits[i]) for i in at.values()] == [0, 1, 3]
    assert [int(out["o_group_id_0"].bits[i]) for i in at.values()] == [2, 1, 0]
    assert set(out["o_num_groups_0"].bits.tolist()) == {3} and set(out["o_num_groups_1"].bits.tolist()) == {2}


def _neighbours(g: tuple[int, int], l: tuple[int, int]) -> list[int]:
    """By loops over the launch: each work-item reads the global linear id of the work-item after
    it in its work-group (local linear ids modulo the actual group's size)."""
    out = [0] * (g[0] * g[1])
    for y in range(g[1]):
        for x in range(g[0]):
            gx, gy = x // l[0], y // l[1]
            ax, ay = min(l[0], g[0] - gx * l[0]), min(l[1], g[1] - gy * l[1])
            k = ((x % l[0]) + ax * (y % l[1]) + 1) % (ax * ay)
            out[x + g[0] * y] = (gx * l[0] + k % ax) + g[0] * (gy * l[1] + k // ax)
    return out


def exchange_program() -> FlowProgram:
    """Each work-item of a (5, 3) / (2, 2) launch exchanges its global linear id with the next one
    of its work-group."""
    lin, lid = Item("global_linear_id"), Item("local_linear_id")
    return FlowProgram(inputs=(), outputs=(Output("o", "s", "uint"),), variables=(Decl("s", "uint"),),
                       arrays=(Array("la", "uint", 4, "local"),), functions=(),
                       body=(Exchange("la", lin, Bin("add", lid, Const("uint", 1), "uint"), "s"),),
                       global_size=(5, 3), local_size=(2, 2), requires=LAUNCHES)


def test_an_exchange_in_partial_groups_reads_only_what_its_group_wrote():
    p = exchange_program()
    check(p)
    want = _neighbours((5, 3), (2, 2))
    assert want[14] == 14 and want[4] == 9  # (4, 2) is alone in its group; (4, 0) reads (4, 1), its group's other
    assert interpret(p)["o"].bits.tolist() == want
    assert run_host(p)["o"].tolist() == want
    sizes = " * ".join(f"((uint)get_local_size({d}))" for d in range(3))
    assert f"const uint la_n = ({sizes});" in emit(p)  # the actual group's work-items


@pytest.mark.parametrize("requires, reason", [
    (frozenset(), "dividing"), (frozenset({CL2}), NON_UNIFORM), (frozenset({NON_UNIFORM}), "cl2.0")])
def test_a_non_uniform_launch_needs_both_requirements(requires, reason):
    with pytest.raises(InvalidProgram, match=reason):
        check(items_program((10,), (4,), requires=requires))


def test_opencl_c_2_functions_need_cl2():
    p = items_program((8,), (4,), requires=frozenset())
    with pytest.raises(InvalidProgram, match="enqueued_local_size"):
        check(p)


def test_drawn_non_uniform_launches_agree_with_the_host_c_build():
    drawn = (generate(random.Random(seed), launches=LAUNCHES) for seed in range(200))
    programs = [p for p in drawn if is_non_uniform(p)][:6]
    assert len(programs) == 6 and any(a.space == "local" for p in programs for a in p.arrays)
    for p in programs:
        check(p)
        want, host = interpret(p), run_host(p)
        for o in p.outputs:
            assert np.array_equal(want[o.name].bits, host[o.name]), (o.name, emit(p))


def test_the_launch_is_drawn_last_and_only_where_asked():
    """Without launch requirements a seed's program is as it always was; with them, a program that
    is an OpenCL C 2.0 launch differs from it in its work-item functions and its launch only."""
    seen = {True: 0, False: 0}
    for seed in range(40):
        p, q = generate(random.Random(seed)), generate(random.Random(seed), launches=LAUNCHES)
        assert not p.requires & LAUNCHES
        seen[CL2 in q.requires] += 1
        assert (NON_UNIFORM in q.requires) == is_non_uniform(q)
        if CL2 not in q.requires:
            assert q == p
        else:
            assert replace(q, body=p.body, functions=p.functions, global_size=p.global_size, requires=p.requires) == p
            assert all(g0 <= g1 < g0 + n for g0, g1, n in zip(p.global_size, q.global_size, p.local_size))
    assert seen[True] and seen[False]
    assert not generate(random.Random(6), launches=frozenset({CL2})).requires & {NON_UNIFORM}


def _target(path: str, **fp) -> Target:
    return Target("t", {"int64": True, "fp64": True, **fp}, "fp", "", 0, 0, path)


def test_the_campaign_takes_non_uniform_launches_on_the_opencl_c_path_of_devices_that_support_them():
    p = next(q for q in (generate(random.Random(s), launches=LAUNCHES) for s in range(50)) if is_non_uniform(q))
    both = {CL2: True, NON_UNIFORM: True}
    assert runnable(_target(PATH_OPENCL_C, **both), p) is p
    assert runnable(_target(PATH_SPIRV, **both), p) is None  # lang.flow_rules: OpenCL C path only
    assert runnable(_target(PATH_OPENCL_C, **{CL2: True}), p) is None
    drawn = (generate(random.Random(s), launches=LAUNCHES) for s in range(50))
    uniform = next(q for q in drawn if CL2 in q.requires and not is_non_uniform(q))
    assert runnable(_target(PATH_SPIRV, **{CL2: True}), uniform) is uniform
    spirv_module(uniform)  # the linear ids as BuiltIns GlobalLinearId / LocalInvocationIndex


def test_the_job_passes_the_global_size_as_is_and_builds_with_cl_std():
    p = items_program((10,), (4,), (3,))
    job = flow_job(p, fingerprint={"cl3.0": True})
    assert job.global_size == (10,) and job.local_size == (4,) and job.global_offset == (3,)
    assert job.options == "-cl-std=CL3.0"
    assert flow_job(p, fingerprint={"cl3.0": False}).options == "-cl-std=CL2.0"  # an OpenCL 2.x device


class _Names:
    """A pyopencl info namespace: each parameter is its own name."""

    def __getattr__(self, name: str) -> str:
        return name


class _Cl:
    device_info = _Names()
    platform_info = _Names()


class _Object:
    def __init__(self, **info) -> None:
        self.info = info

    def get_info(self, param: str):
        return self.info[param]  # a query the device does not know raises, as a driver's would


@pytest.mark.parametrize("version, c_version, reported, supported", [
    ("OpenCL 3.0 X", 3, True, True), ("OpenCL 3.0 X", 3, False, False),
    ("OpenCL 2.1 X", 2, None, True),  # an OpenCL 2.x device always takes them (no query before 3.0)
    ("OpenCL 1.2 (Oclgrind 21.10)", 1, True, False)])  # Oclgrind answers the query on a 1.2 device
def test_the_probe_reports_non_uniform_work_groups_as_the_api_defines_them(version, c_version, reported, supported):
    info = {"VERSION": version, "OPENCL_C_VERSION": f"OpenCL C {c_version}.0",
            "OPENCL_C_ALL_VERSIONS": [SimpleNamespace(version=c_version << 22)]}
    if reported is not None:
        info["NON_UNIFORM_WORK_GROUP_SUPPORT"] = reported
    fp = describe_device(_Cl(), _Object(), _Object(**info))
    assert fp[NON_UNIFORM] is supported and fp[CL2] is (c_version >= 2)


def test_the_campaign_draws_launches_its_targets_take():
    def caps(*fps):
        return capabilities([Target(f"t{i}", fp, f"fp{i}", "", 0, 0) for i, fp in enumerate(fps)]).launches
    assert caps({CL2: True, NON_UNIFORM: True}, {}) == LAUNCHES
    assert caps({CL2: True}, {NON_UNIFORM: True}) == {CL2}  # non-uniform needs a device that has both
    assert caps({"int64": True}) == frozenset()
