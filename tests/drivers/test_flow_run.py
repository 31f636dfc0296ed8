"""Flow programs (lang.flow) on the local drivers' OpenCL C path: hand-made and drawn programs
build and run, and the drivers' outputs are judged lane by lane against the exact interpreter.
Every program builds; rusticl 22.3 crashes on some (docs/flow.md, "Findings": a private char
array with an initializer, a guarded INT_MIN / -1 it folds), so a crash is allowed but most (5 of
8) must run; a lane that differs fails the test with its program, to be checked by hand (a
driver's wrong code or a bug of ours). A short campaign of the area runs both builds of every
program it draws on Oclgrind, and its SPIR-V path skips the area with a notice."""

from __future__ import annotations

import random

from campaign.campaign import run_campaign
from campaign.flow import flow_job, judge_flow
from corpus.store import Corpus
from fuzz.drivers import Worker
from fuzz.drivers.capabilities import ftz_of
from fuzz.emit.opencl_flow import emit
from fuzz.strategies.flow import generate
from lang.flow_rules import check

from .conftest import skip_without_icd, target_named

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
            if mismatches and not (target.name == "rusticl" and p.struct_functions):  # test_flow_structs_run
                wrong[seed] = (mismatches[:3], emit(p))
    assert ran >= 5 and judged > 0
    assert not wrong, wrong


def test_a_campaign_of_the_area_runs_both_builds_of_each_program(tmp_path):
    corpus = Corpus(tmp_path / "flow.db")
    targets = [target_named("oclgrind"), target_named("oclgrind/spirv")]
    result = run_campaign(corpus, targets, minutes=0.5, seed=2, areas=("flow",), max_programs=3, jobs=0)
    programs = {r["id"]: r["area"] for r in corpus.db["programs"].rows}
    runs = list(corpus.db["runs"].rows)
    made = len(list(corpus.db["variants"].rows))  # and its EMI variants (tests/drivers/test_flow_emi_run.py)
    assert set(programs.values()) == {"flow"} and len(programs) == 2 * result.programs + made > 0  # two builds each
    assert {r["target"] for r in runs} == {"oclgrind", "oclgrind/spirv"} and all(r["status"] == "ok" for r in runs)
    assert sorted(r["options"] for r in runs if r["target"] == "oclgrind") == sorted(
        ["", "-cl-opt-disable"] * result.programs + [""] * made)
    assert not corpus.disagreements() and result.notices == []
