"""Shaped programs (area ``shapes``) on the real drivers, OpenCL C and SPIR-V paths: every part
of lang.shapes builds and runs, and no lane differs from the straight-line twin's on the same
driver (a shape never changes what a correct driver computes: no false wrong-code)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from corpus.buckets import RESULT_KINDS
from fuzz.drivers import Worker, discover
from lang.derive import twin
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.shapes import Part, Shape
from lang.types import Type
from triage.observe import observe

from .conftest import skip_without_icd, target_named

skip_without_icd()
NAMES = ["pocl", "pocl/spirv", "rusticl", "rusticl/spirv", "oclgrind", "oclgrind/spirv"]
T = Type("int", 4)


def _base() -> Program:
    """An expressions program whose statement needs a temporary (``t0``: the insert), beside which
    every step's own variables must not clash."""
    a = Buffer("in0", T, "in", Fill(3, (1, 0xFFFFFFFF, 7), 3))
    b = Buffer("in1", Type("int", 2), "in", Fill(4, (5, 9), 3))
    insert = Op("insert", (Load("in0", T), Load("in1", Type("int", 2))), T, (("components", (1, 3)), ("form", "xyzw")))
    return Program((a, b, Buffer("out0", T, "out")), (Store("out0", Op("add_sat", (insert, Load("in0", T)), T)),),
                   256, area="expressions")


STEPS = (Part("carried", "do", (7, 3, 5, 2)), Part("exchange", "local", (5, 3)), Part("rounds", "local", (3, 7, 1)),
         Part("tree", "local", (9, 2)), Part("call", "add", (4, 5)), Part("call", "noinline", (4, 5)),
         Part("call", "global", (4, 5)), Part("call", "struct", (9, 4)), Part("call", "swap", (9, 4)),
         Part("call", "local", (7, 6)),
         Part("array", "private", (6, 13)), Part("select", "ternary", (1, 2)))
WRAPS = (Part("loop", "while-break", (9, 4)), Part("if-divergent", "lid", (5,)), Part("switch", "case", (8,)),
         Part("dead", "return", (1, 2)), Part("if-uniform", "else", (3, 3)), Part("loop", "do-every", (2, 0)))


def _shaped(steps, wraps) -> Program:
    return replace(_base(), area="shapes", local_size=32, shape=Shape("expressions", tuple(steps), tuple(wraps)))


@pytest.mark.parametrize("name", NAMES)
def test_every_part_agrees_with_its_twin(name):
    target = target_named(name)
    programs = [_shaped(STEPS, WRAPS[:2]), _shaped(STEPS[::-1], WRAPS[2:4]), _shaped((), WRAPS[4:]),
                _shaped(STEPS[4:9], ()),
                # built as OpenCL C 2.0 (-cl-std), where an unqualified pointer parameter would be generic:
                # Oclgrind 21.10 (OpenCL C 1.2 device) lost the store through one; the helpers say private
                replace(_shaped(STEPS[4:9], ()), requires=frozenset({"cl2.0"}))]
    with Worker(target) as worker:
        for p in programs:
            shaped, alone = set(), set()
            for q, lanes in ((p, shaped), (twin(p), alone)):
                rows = observe(q, target, worker, lanes)
                assert rows is not None and all(r["kind"] in RESULT_KINDS for r in rows), (q.shape, rows[:1])
            assert shaped == alone, (p.shape.signature, sorted(shaped - alone)[:4], sorted(alone - shaped)[:4])


@pytest.mark.parametrize("name", ["pocl-7.1", "pocl-7.1/spirv"])
def test_the_generic_call_agrees_with_its_twin_where_the_device_has_generic_pointers(name):
    """``call:generic`` (§6.7.1: a generic pointer to private memory, built as OpenCL C 3.0) runs only
    on devices whose fingerprint has the generic address space: the local drivers (PoCL 3.1, rusticl,
    Oclgrind: OpenCL C 1.2) do not take it (runnable: None); PoCL 7.1 (a release, `clfuzz releases
    install`) does, and computes what the twin does."""
    from fuzz.drivers.capabilities import runnable

    p = replace(_shaped((Part("call", "generic", (4, 5)), Part("carried", "for", (3, 1, 9, 0))), WRAPS[:1]),
                requires=frozenset({"generic_address_space"}))
    assert runnable(target_named("pocl"), p) is None
    found = {t.name: t for t in discover(releases=True)}
    if name not in found:
        pytest.skip(f"{name} is not installed")
    target = found[name]
    assert target.fingerprint.get("generic_address_space"), "PoCL 7.1 reports __opencl_c_generic_address_space"
    with Worker(target) as worker:
        shaped, alone = set(), set()
        for q, lanes in ((p, shaped), (twin(p), alone)):
            rows = observe(q, target, worker, lanes)
            assert rows is not None and all(r["kind"] in RESULT_KINDS for r in rows), (q.shape, rows[:1])
        assert shaped == alone


@pytest.mark.parametrize("name", ["pocl", "rusticl", "oclgrind", "rusticl-25.0"])
def test_loops_run_every_iteration_past_65535_except_on_rusticl_22(name):
    """Why lang.shapes.TRIP_CAP is 1,024: rusticl 22.3 (llvmpipe) silently ends every loop after
    65,535 iterations (the carried sum stops there; measured, route data in the README); rusticl
    25.0 and 26.x, PoCL and Oclgrind run them all. A shape's loop never comes near it."""
    import subprocess

    from fuzz.drivers.rootfs import python_argv

    found = {t.name: t for t in discover(releases=name != "rusticl" and "-" in name)}
    if name not in found:
        pytest.skip(f"{name} is not installed")
    target = found[name]
    run = subprocess.run(python_argv(target.root, "tests.drivers.loop_limit"), env=target.env(), capture_output=True,
                         text=True, timeout=120, cwd=str(Path(__file__).resolve().parents[2]))
    assert run.returncode == 0, run.stderr[-500:]
    done = dict(tuple(map(int, line.split())) for line in run.stdout.split("\n") if line.strip())
    version = target.fingerprint.get("driver_version", "")
    if target.lineage == "rusticl" and version.startswith("22."):
        assert done == {1024: 1024, 65535: 65535, 65536: 65535, 70000: 65535}
    else:
        assert all(n == d for n, d in done.items()), done
