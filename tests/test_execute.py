"""Running, judging and isolating, with a scripted worker standing in for a driver."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import SMALL
from hypothesis import HealthCheck, Phase, given, seed, settings

from campaign.execute import execute, judged
from campaign.expectations import Expectations
from corpus.store import Corpus
from fuzz.drivers import Result
from fuzz.strategies.conversions import Caps, conversion_programs
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.layout import layout
from lang.types import Type
from oracles import rederive
from oracles.math import engine


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
        if self.text not in source or self.mode == "all wrong":
            program = self.current
            exp = Expectations(program).get(frozenset())
            lay = layout(program)
            for name, region in lay.outputs.items():
                raw = exp[name].allowed[0].tobytes()
                if self.mode == "all wrong":  # every byte's low bit flipped: every judged lane wrong
                    raw = bytes(b ^ 1 for b in raw)
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
        outcome, poison, worker = _run(program, "drop")
        # every run answered in 0.002 s: the halves add up, the longest run stays one run's
        assert outcome.runs == worker.jobs and outcome.driver_s == pytest.approx(0.002 * worker.jobs)
        assert outcome.longest_s == pytest.approx(0.002)
        blamed = {r["buffer"] for r in outcome.verdict.rows}
        exp = Expectations(program).get(frozenset())[poison.buffer]
        if not (exp.judged & ~exp.accepts(np.zeros(len(exp), exp.allowed[0].dtype))).any():
            continue  # zeros happen to be right for this statement
        assert blamed == {poison.buffer}


def test_a_part_whose_every_statement_disagrees_runs_each_alone_at_once():
    """Halving would build nearly twice as many parts to blame every statement (campaign.execute._singles)."""
    alone = 0
    for program in _programs():
        exp = Expectations(program).get(frozenset())
        outcome, _, worker = _run(program, "all wrong")
        judged = {s.buffer for s in program.body if exp[s.buffer].judged.any()}
        assert {r["buffer"] for r in outcome.verdict.rows} == judged
        if len(judged) == len(program.body):  # (a statement with no judged lane agrees: halves then)
            assert worker.jobs == 1 + len(program.body)
            alone += 1
    assert alone


def _sincos_wrong(statements: int) -> tuple[Program, dict]:
    """``statements`` sincos statements (a result and an out-parameter each) over two float4
    work-items, and a run whose every lane of both outputs has its significand's top bit flipped."""
    bits = tuple(int(b) for b in np.array(OPERANDS, np.float32).view(np.uint32))
    buffers = [Buffer("in0", F4, "in", Fill(0, values=bits))]
    body = []
    for i in range(statements):
        buffers += [Buffer(f"sin{i}", F4, "out"), Buffer(f"cos{i}", F4, "out")]
        body.append(Store(f"sin{i}", Op("sincos", (Load("in0", F4),), F4, (("out", f"cos{i}"),))))
    program = Program(tuple(buffers), tuple(body), 2, area="math")
    exp = Expectations(program).get(frozenset())
    lay = layout(program)
    out = bytearray(lay.out_bytes)
    for name, region in lay.outputs.items():
        lanes = exp[name].allowed[0] ^ np.uint32(0x400000)
        out[region.offset: region.offset + lanes.nbytes] = lanes.tobytes()
    return program, {"out": bytes(out)}


def test_a_statement_wrong_in_its_result_and_out_parameter_is_one_failing_statement():
    """sincos's two outputs wrong on every lane are one statement wholly wrong, not two: a part of
    one such statement is judged, not split again and again (it looked like two dropped statements)."""
    program, outputs = _sincos_wrong(1)
    outcome, cuts, run = judged(program, Expectations(program), FakeTarget(), Result("ok", outputs, "", 0.0, 0.0))
    assert cuts == [] and run.status == "ok"
    assert outcome.verdict.failing_statements == outcome.verdict.wholly_wrong == 1
    assert {r["buffer"] for r in outcome.verdict.rows} == {"sin0", "cos0"}
    program, outputs = _sincos_wrong(2)  # two statements wholly wrong: isolated, each alone
    outcome, cuts, run = judged(program, Expectations(program), FakeTarget(), Result("ok", outputs, "", 0.0, 0.0))
    assert run.status == "split" and cuts == [[0], [1]]


# ---- every disagreement re-derived before it is recorded (campaign.rederive) --------------------------

F4 = Type.parse("float4")
OPERANDS = (0.1, 0.3, -0.7, 1.3, 2.5, -1.5, 0.01, 3.0)  # two work-items of float4, no special value


def _math_program() -> Program:
    bits = tuple(int(b) for b in np.array(OPERANDS, np.float32).view(np.uint32))
    return Program((Buffer("in0", F4, "in", Fill(0, values=bits)), Buffer("in1", F4, "in", Fill(0, values=bits)),
                    Buffer("out0", F4, "out"), Buffer("out1", F4, "out")),
                   (Store("out0", Op("expm1", (Load("in0", F4),), F4)), Store("out1", Op("exp", (Load("in1", F4),), F4))),
                   2, area="math")


class ReferenceWorker:
    """A driver that returns each lane's correctly rounded result (the exact reference's, never the
    filter's), but 64 ulps off in lane 5 of ``out1``: one true disagreement."""

    def run(self, job):
        program = _math_program()
        exact = rederive(program)
        lay = layout(program)
        out = bytearray(job.args[1].nbytes)
        for name, region in lay.outputs.items():
            lanes = exact[name].allowed[0].copy()
            if name == "out1":
                lanes[5] ^= np.uint32(0x40)
            out[region.offset: region.offset + lanes.nbytes] = lanes.tobytes()
        return Result("ok", {"out": bytes(out)}, "", 0.001, 0.001)


def test_a_corrupted_expectation_is_an_oracle_defect_and_a_true_disagreement_a_row(monkeypatch, capsys, tmp_path):
    """The filter made to expect expm1's decided lanes one bit off, with no interval: each of those
    lanes, right on the driver, is re-derived with mpmath alone, which accepts the driver's value;
    they become oracle defects (stderr, table oracle_defects), no row, no bucket. exp's lane 5, 64
    ulps off (Table 65: 3 ulp), is confirmed and stored as before."""
    program = _math_program()
    real, corrupted = engine.filtered, set()

    def corrupt(f, tname, env, args, spread):
        got = real(f, tname, env, args, spread)
        if f.name == "expm1" and len(got.index):
            e = got.expectations[0]
            got.expectations = [replace(e, allowed=[e.allowed[0] ^ np.uint32(1 << 12)], ranges=[])]
            corrupted.update(int(i) for i in got.index)
        return got

    monkeypatch.setattr(engine, "filtered", corrupt)
    corpus = Corpus(tmp_path / "c.db")
    outcome = execute(program, FakeTarget(), ReferenceWorker(), corpus, campaign="c")
    assert corrupted  # the filter decided (and corrupted) some expm1 lanes
    defects = corpus.oracle_defects()
    assert sorted(d["lane"] for d in defects) == sorted(corrupted) and {d["buffer"] for d in defects} == {"out0"}
    assert all(d["why"] == "the re-derivation accepts the actual value" and d["campaign"] == "c" for d in defects)
    stored = corpus.disagreements()
    assert [(r["buffer"], r["lane"], r["work_item"]) for r in stored] == [("out1", 5, 1)]
    assert [b["rows"] for b in corpus.buckets()] == [1] and outcome.verdict.mismatches == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("oracle defect")]
    assert len(lines) == len(corrupted) and all("expm1" in line for line in lines)


def test_the_same_program_without_corruption_has_no_oracle_defect(tmp_path):
    corpus = Corpus(tmp_path / "c.db")
    execute(_math_program(), FakeTarget(), ReferenceWorker(), corpus, campaign="c")
    assert corpus.oracle_defects() == [] and [r["lane"] for r in corpus.disagreements()] == [5]
