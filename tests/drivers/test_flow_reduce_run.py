"""A flow program's failure on a real driver reduced at the structure level (triage.reduce.flow):
rusticl 22.3 (Debian 12's Mesa) is killed by SIGSEGV building or running the drawn flow program
of seed 0; the reducer keeps that crash down to a kernel that stores one constant beside an unused
private array, which PoCL runs (a crash of rusticl's, fixed by 25.0: docs/flow.md)."""

from __future__ import annotations

import random

import pytest

from campaign.flow import flow_job
from fuzz.drivers import Worker
from fuzz.strategies.flow import generate
from triage.observe import size
from triage.flow_report import observe_flow
from triage.reduce.flow import fails_on, reduce_flow

from .conftest import skip_without_icd, target_named

skip_without_icd()


@pytest.mark.soak  # 10 s; the zero product's reduction below runs on a real driver in the default suite
def test_rusticls_crash_reduces_to_a_few_lines():
    rusticl = target_named("rusticl")
    if not rusticl.fingerprint.get("driver_version", "").startswith("22."):
        pytest.skip("the crash is rusticl 22.x's")
    original = generate(random.Random(0))
    with Worker(rusticl, timeout_s=60) as worker:
        assert worker.run(flow_job(original)).status == "crash", "rusticl 22.3 runs seed 0: the premise is gone"
        r = reduce_flow(original, fails_on(rusticl, worker, observe_flow(original, rusticl, worker)[0]), budget_s=120)
        assert worker.run(flow_job(r.reduced)).status == "crash"
    assert not r.stopped and size(r.reduced)["statements"] <= 1 and r.reduced.work_items == 1
    assert len(r.reduced.arrays) + len(r.reduced.variables) <= 3
    with Worker(target_named("pocl"), timeout_s=60) as worker:
        assert worker.run(flow_job(r.reduced)).status == "ok"


def test_rusticls_zero_product_reduces_to_one_statement():
    """rusticl 22.3 (and 25.0; 26.1 is right) folds ``0.0f * x`` to +0: for x = -0.5 the product is
    -0 (OpenCL C 3.0.19 §7.4 Table 65: correctly rounded, IEEE 754 signs). The drawn flow program
    of seed 133 gets 24 lanes wrong so; reduced keeping a signed-zero lane, it is one statement on
    one work-item, a product with the constant zero."""
    from lang.flow import Bin, Const
    from lang.flow_tree import statements

    rusticl = target_named("rusticl")
    if not rusticl.fingerprint.get("driver_version", "").startswith("22."):
        pytest.skip("checked on rusticl 22.x")
    original = generate(random.Random(133))
    with Worker(rusticl, timeout_s=60) as worker:
        rows = observe_flow(original, rusticl, worker)
        assert rows and rows[0]["kind"] == "wrong-code" and rows[0]["deviation"] == "signed-zero"
        r = reduce_flow(original, fails_on(rusticl, worker, rows[0]), budget_s=120)
    [stmt] = list(statements(r.reduced.body))
    assert r.reduced.work_items == 1 and isinstance(stmt.value, Bin) and stmt.value.op == "mul"
    assert stmt.value.a == Const("float", 0)
