"""Run a program on a target and judge it, as triage needs it: the disagreement rows (or a
failure row), every output lane that disagrees, and the size a reduction is measured by."""

from __future__ import annotations

import numpy as np

from campaign.execute import Part, prepare
from campaign.expectations import Expectations
from fuzz.drivers import Job, Result, Target, Worker
from fuzz.drivers.capabilities import ftz_of, runnable
from fuzz.drivers.routes import PATH_OPENCL_C
from fuzz.emit.opencl_c import emit
from fuzz.emit.opencl_flow import emit as emit_flow
from fuzz.judge import failure_row, judge
from lang import flow, flow_tree
from lang.constructs import paths_of
from lang.flow import FlowProgram
from lang.ir import InvalidProgram, Program, validate, walk
from lang.layout import split_outputs
from lang.types import scalar
from oracles import UndefinedBehaviour
from triage.flow_report import observe_flow


def size(program: Program | FlowProgram) -> dict[str, int]:
    """What the README's before/after sizes count: statements, expression nodes, work-items and
    the bytes of the OpenCL C kernel; of a flow program, its statements (nested ones and helpers'
    included), expression nodes, loops, helpers, work-items and kernel bytes."""
    if isinstance(program, FlowProgram):
        stmts = [s for b in (program.body, *(f.body for f in program.functions)) for s in flow_tree.statements(b)]
        return {"statements": len(stmts), "nodes": sum(1 for s in stmts for x in flow_tree.expressions(s) for _ in flow_tree.walk(x)),
                "loops": sum(isinstance(s, flow.Loop) for s in stmts), "functions": len(program.functions),
                "work_items": program.work_items, "source_bytes": len(emit_flow(program).encode())}
    nodes = sum(1 for s in program.body for _ in walk(s.value))
    source = len(emit(program).encode()) if PATH_OPENCL_C in paths_of(program) else 0  # 0: SPIR-V only
    return {"statements": len(program.body), "nodes": nodes, "work_items": program.global_size,
            "source_bytes": source}


def observe(program: Program | FlowProgram, target: Target, worker: Worker,
            lanes: set[tuple[str, int]] | None = None, job: Job | None = None) -> list[dict] | None:
    """Run ``program`` on ``target`` and judge it: its disagreement rows (a failure row for a
    build error, crash or timeout); None when the program is invalid or undefined, or the
    target does not take all of it (it never reaches the driver then). Given a set ``lanes``, every
    output lane that disagrees is added to it as (buffer, position in memory): the rows stop at
    :data:`fuzz.judge.MAX_ROWS_PER_STATEMENT` per statement. ``job`` runs instead of the target's
    own build of the program (triage.route_check: clang's bitcode in place of the route's). A flow
    program is run and judged by triage.flow_report.observe_flow."""
    if isinstance(program, FlowProgram):
        return observe_flow(program, target, worker)
    try:
        validate(program)
        if runnable(target, program) is not program:
            return None
        expectations = Expectations(program)
        judged = expectations.get(ftz_of(target))
    except (InvalidProgram, UndefinedBehaviour, ValueError, KeyError):
        return None
    run = job or prepare(Part(program, expectations), target)
    result = run if isinstance(run, Result) else worker.run(run)
    if result.status == "ok":
        actual = split_outputs(program, result.outputs["out"])
        found = judge(program, judged, actual, expectations.inputs, histories=expectations.histories()).rows
        if lanes is not None:
            lanes.update(disagreeing_lanes(program, judged, actual))
    else:
        found = [failure_row(program, result.status, result.log, target.path)]
    for r in found:
        r["target"] = target.name
    return found


def disagreeing_lanes(program: Program, judged: dict, actual: dict[str, np.ndarray]) -> set[tuple[str, int]]:
    """Every output lane (buffer, position in memory) whose bits its expectation does not accept
    (shared locations aside: atomics are judged as histories)."""
    out = set()
    for b in program.outputs:
        if b.name in judged and b.name in actual:
            exp = judged[b.name]
            bits = np.ascontiguousarray(actual[b.name]).view(scalar(exp.scalar).bits_dtype)
            out.update((b.name, int(pos)) for pos in np.flatnonzero(~exp.accepts(bits)))
    return out
