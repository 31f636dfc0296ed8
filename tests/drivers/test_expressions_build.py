"""Every expression construct's OpenCL C builds on a real compiler (its type rules are subtle:
C's promotions and the overloads of the built-ins decide whether a program compiles at all).

One program per construct, drawn with that operation alone (the others only where it cannot
produce a type), is built and run on PoCL, whose clang front end is the strictest here."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from campaign.caps import capabilities
from campaign.jobs import job_for
from fuzz.drivers import Worker, discover
from fuzz.drivers.routes import PATH_OPENCL_C
from fuzz.strategies.expressions import expression_programs
from fuzz.strategies.trees import EXPRESSIONS
from lang.ir import Buffer, Load, Op, Program, Store
from lang.policy import Policy

from .conftest import skip_without_icd

skip_without_icd()
POCL = [t for t in discover() if t.name == "pocl"]
pytestmark = pytest.mark.skipif(not POCL, reason="PoCL is not installed")


def _renamed(expr, prefix: str):
    if isinstance(expr, Load):
        return Load(prefix + expr.buffer, expr.type)
    if isinstance(expr, Op):
        return Op(expr.op, tuple(_renamed(a, prefix) for a in expr.args), expr.type, expr.attrs)
    return expr


def merged(programs: list[Program]) -> Program:
    """One program holding every statement of ``programs`` (buffers renamed apart)."""
    buffers, body = [], []
    for i, p in enumerate(programs):
        prefix = f"p{i}_"
        buffers += [Buffer(prefix + b.name, b.type, b.role, b.fill) for b in p.buffers]
        body += [Store(prefix + s.buffer, _renamed(s.value, prefix)) for s in p.body]
    return Program(tuple(buffers), tuple(body), 1, requires=frozenset().union(*(p.requires for p in programs)),
                   area="expressions")


@pytest.fixture(scope="module")
def pocl():
    with Worker(POCL[0], timeout_s=120) as w:
        yield w


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
def test_every_construct_builds_and_runs_on_pocl(name, pocl):
    policy = replace(Policy(), statements=4, global_size=1, expr_depth=2, expression_weights={name: 1.0})
    drawn: list[Program] = []

    @seed(11)
    @settings(max_examples=8, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(expression_programs(capabilities(POCL), policy))
    def draw(program):
        drawn.append(program)

    draw()
    result = pocl.run(job_for(merged(drawn), path=PATH_OPENCL_C))
    assert result.status == "ok", f"{result.status}: {result.log[-2000:]}"
