"""Flow programs (lang.flow) on the local drivers' OpenCL C path: hand-made and drawn programs
build and run, and the drivers' outputs are judged lane by lane against the exact interpreter.
Every program builds; rusticl 22.3 crashes on some (docs/flow.md), so a crash is allowed but
most (5 of 8) must run; a lane that differs fails the test with its program, to be checked by hand (a
driver's wrong code or a bug of ours)."""

from __future__ import annotations

import random

from campaign.flow import flow_job, judge_flow
from fuzz.drivers import Worker
from fuzz.drivers.capabilities import ftz_of
from fuzz.emit.opencl_flow import emit
from fuzz.strategies.flow import generate
from lang.flow_rules import check

from .conftest import skip_without_icd

skip_without_icd()


def test_drawn_programs_build_run_and_agree(target):
    keeps = "float" not in ftz_of(target)
    judged = ran = 0
    wrong = {}
    with Worker(target, timeout_s=120) as worker:
        for seed in range(8):
            p = generate(random.Random(seed))
            check(p)
            result = worker.run(flow_job(p))
            assert result.status in ("ok", "crash"), (seed, result.status, result.log[-800:])
            if not result.ok:
                continue
            lanes, mismatches = judge_flow(p, result.outputs["out"], keeps)
            judged += lanes
            ran += 1
            if mismatches:
                wrong[seed] = (mismatches[:3], emit(p))
    assert ran >= 5 and judged > 0
    assert not wrong, wrong
