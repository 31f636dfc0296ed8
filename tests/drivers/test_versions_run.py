"""A built-in of OpenCL C 2.0 (``ctz``) on the local drivers: built with -cl-std where the device
builds OpenCL C 2.0 or newer (PoCL, rusticl: OpenCL 3.0 devices listing OpenCL C 3.0) and judged
with no disagreement on either front end; left out on an OpenCL 1.2 device (Oclgrind), whose part
of the program is the rest."""

from __future__ import annotations

from campaign.execute import execute
from fuzz.drivers import Worker, discover
from fuzz.drivers.capabilities import runnable
from lang.constructs import requirements
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from tests.drivers.conftest import skip_without_icd

skip_without_icd()


def _program() -> Program:
    """clz and ctz of edge patterns (0, 1, the top bit, all ones, ...) and random bits, of four
    types and widths."""
    stores, buffers = [], []
    for k, t in enumerate((Type("int"), Type("uint", 4), Type("ulong", 2), Type("char", 8))):
        n = t.elem.bits
        edges = (0, 1, 2, 3, 1 << (n - 1), (1 << n) - 1, 1 << (n // 2), (1 << (n - 1)) + 1)
        buffers += [Buffer(f"in{k}", t, "in", Fill(11 + k, edges, 2)), Buffer(f"c{k}", t, "out"),
                    Buffer(f"z{k}", t, "out")]
        stores += [Store(f"c{k}", Op("clz", (Load(f"in{k}", t),), t)), Store(f"z{k}", Op("ctz", (Load(f"in{k}", t),), t))]
    skeleton = Program(tuple(buffers), tuple(stores), 256)
    return Program(tuple(buffers), tuple(stores), 256, requires=requirements(skeleton))


def test_ctz_where_the_device_builds_opencl_c_2_0():
    program = _program()
    assert program.requires == {"cl2.0"}
    checked = []
    for target in discover():
        part = runnable(target, program)
        if not target.fingerprint.get("cl2.0"):  # an OpenCL 1.2 device: the clz statements only
            assert part is not None and {s.value.op for s in part.body} == {"clz"}
        with Worker(target, timeout_s=120) as w:
            outcome = execute(program, target, w, None)
        assert outcome.status == "ok", (target.name, outcome.failures[:1])
        assert outcome.verdict.mismatches == 0, (target.name, outcome.verdict.rows[:1])
        assert outcome.verdict.judged == 256 * (1 + 4 + 2 + 8) * (2 if target.fingerprint.get("cl2.0") else 1)
        checked.append(target.name)
    assert checked
