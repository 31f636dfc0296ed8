"""Running, judging and isolating, with a scripted worker standing in for a driver."""

import numpy as np
from conftest import SMALL
from hypothesis import HealthCheck, Phase, given, seed, settings

from campaign.execute import execute
from campaign.expectations import Expectations
from fuzz.drivers import Result
from fuzz.strategies.conversions import Caps, conversion_programs
from lang.layout import layout


class FakeTarget:
    name = "fake"
    family = lineage = "fake"
    path = "opencl-c"
    fingerprint_id = "f00"
    fingerprint = {"fp64": True, "single_fp_config": {"denorm": True}, "double_fp_config": {"denorm": True}}


class ScriptedWorker:
    """Answers with the oracle's own reference results, unless the program holds the poison
    statement: then it crashes, or returns all zeros (a driver that drops the whole kernel)."""

    def __init__(self, program, poison, mode):
        self.poison, self.mode, self.jobs = poison, mode, 0
        self.text = f"{poison.buffer}[gid] ="  # buffer names are unique, expressions need not be

    def run(self, job):
        self.jobs += 1
        source = job.program.decode()
        if self.text in source and self.mode == "crash":
            return Result("crash", {}, "killed by SIGSEGV", 0.0, 0.0)
        out = bytearray(job.args[1].nbytes)
        if self.text not in source:
            program = self.current
            exp = Expectations(program).get(frozenset())
            lay = layout(program)
            for name, region in lay.outputs.items():
                raw = exp[name].allowed[0].tobytes()
                out[region.offset: region.offset + len(raw)] = raw
        return Result("ok", {"out": bytes(out)}, "", 0.001, 0.001)


def _programs(n=6):
    out = []

    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @seed(4)
    @given(conversion_programs(Caps(fp64=True), SMALL))
    def draw(p):
        out.append(p)

    draw()
    return out


def _run(program, mode):
    poison = program.body[len(program.body) // 2 + 1]
    worker = ScriptedWorker(program, poison, mode)
    import campaign.execute as fe

    real_job_for = fe.job_for

    def job_for(p, inputs=None, *rest):  # let the fake see which program it is asked to run
        worker.current = p
        return real_job_for(p, inputs, *rest)

    fe.job_for = job_for
    try:
        return execute(program, FakeTarget(), worker, None), poison, worker
    finally:
        fe.job_for = real_job_for


def test_a_crashing_statement_is_isolated_and_the_rest_judged():
    for program in _programs():
        outcome, poison, worker = _run(program, "crash")
        assert outcome.status == "crash"
        assert [f["buffer"] for f in outcome.failures] == [poison.buffer]
        assert outcome.verdict.mismatches == 0
        others = Expectations(program).get(frozenset())
        judged_elsewhere = sum(int(others[s.buffer].judged.sum()) for s in program.body if s is not poison)
        assert outcome.verdict.judged == judged_elsewhere
        assert worker.jobs <= 2 * len(program.body)


def test_a_kernel_dropped_by_one_statement_is_blamed_on_that_statement():
    for program in _programs():
        outcome, poison, _ = _run(program, "drop")
        blamed = {r["buffer"] for r in outcome.verdict.rows}
        exp = Expectations(program).get(frozenset())[poison.buffer]
        if not (exp.judged & ~exp.accepts(np.zeros(len(exp), exp.allowed[0].dtype))).any():
            continue  # zeros happen to be right for this statement
        assert blamed == {poison.buffer}
