"""Running flow programs (lang.flow): the worker job and the exact judgement of every lane.

Pure like campaign.jobs: :func:`flow_job` builds what a worker runs (the OpenCL C kernel over the
packed ``in``/``out`` arguments of :func:`lang.flow.regions`, the launch's global and local
sizes), :func:`judge_flow` compares a run's ``out`` bytes with the interpreter's outcome
(oracles.flow): an integer lane by its bits (OpenCL C 3.0.19 §6.3, §6.5.1: the arithmetic the
rules of lang.flow_rules leave defined is exact), a float lane by its bits, any NaN for a NaN
(§7.4 Table 65: ``+ - *`` and ``fma`` correctly rounded; contraction off, §6.15.2.1), and a lane
that saw a subnormal value only on a device that keeps denormals (§7.2: without CL_FP_DENORM a
device may flush them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from campaign.jobs import build_options, routed
from fuzz.drivers import BufferArg, Job
from fuzz.drivers.routes import PATH_OPENCL_C
from fuzz.emit.opencl_c import KERNEL_NAME
from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as spirv_module
from lang.flow import FlowProgram, regions
from lang.types import scalar
from oracles import flow_outcomes, flow_inputs

RULES = {"int": "flow.integer", "float": "flow.float"}
"""The rule a wrong lane breaks: §6.3/§6.5.1 for an integer output, §7.4 Table 65 and §6.15.2.1 for a float."""


@dataclass(frozen=True)
class Mismatch:
    """One output lane a target got wrong: the work-item (global linear id), expected and actual bits."""

    output: str
    item: int
    expected: int
    actual: int
    rule: str


def flow_job(p: FlowProgram, path: str = PATH_OPENCL_C, lineage: str = "", fingerprint: dict | None = None) -> Job:
    """The worker job of ``p``: its kernel, its packed input, its launch. On the SPIR-V path
    (``path="spirv"``) the kernel is its module (fuzz.emit.spirv.flow_kernel), validated and
    taken as the route of the ``lineage``'s device takes it (campaign.jobs.routed: raises
    RouteFailure when the module is invalid or the route fails on it)."""
    ins, in_bytes, _, out_bytes = regions(p)
    buf = bytearray(in_bytes)
    for name, values in flow_inputs(p).items():
        raw = values.tobytes()
        buf[ins[name]:ins[name] + len(raw)] = raw
    if path == PATH_OPENCL_C:
        kind, code, options = "source", emit(p).encode(), "-cl-std=CL1.2"
    else:
        kind, code = routed(spirv_module(p), "opencl1.2", lineage, fingerprint)
        options = build_options(p, path, lineage, fingerprint)
    return Job(kind, code, options, KERNEL_NAME,
               (BufferArg("in", bytes(buf), in_bytes, False), BufferArg("out", None, out_bytes, True)),
               p.global_size, p.local_size, p.global_offset or None)


def judge_flow(p: FlowProgram, out: bytes, keeps_denormals: bool, expected: dict | None = None) -> tuple[int, list[Mismatch]]:
    """(lanes judged, the lanes that differ) of a run's ``out`` bytes."""
    _, _, offsets, _ = regions(p)
    expected = flow_outcomes(p) if expected is None else expected
    judged, wrong = 0, []
    for o in p.outputs:
        e = expected[o.name]
        s = scalar(o.type)
        actual = np.frombuffer(out, s.bits_dtype, p.work_items, offsets[o.name])
        lanes = np.ones(p.work_items, bool) if keeps_denormals else ~e.flushable
        ok = actual == e.bits
        if s.is_float:
            ok |= e.nan & np.isnan(actual.view(s.dtype))
        judged += int(lanes.sum())
        rule = RULES["float" if s.is_float else "int"]
        wrong += [Mismatch(o.name, int(i), int(e.bits[i]), int(actual[i]), rule) for i in np.nonzero(lanes & ~ok)[0]]
    return judged, wrong
