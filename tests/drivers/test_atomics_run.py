"""Atomics programs on real drivers: they build and run on every path that takes them, the
histories of a real run are judged consistent, a tampered result is caught, and Oclgrind's
data-race detector finds no race in them (programs are race-free apart from the atomics)."""

from __future__ import annotations

import pytest

from campaign.caps import capabilities
from campaign.expectations import Expectations
from campaign.jobs import job_for
from fuzz.drivers import Worker, discover
from fuzz.drivers.capabilities import supports
from fuzz.strategies.atomics import atomic_programs
from fuzz.strategies.draws import sample
from lang.layout import split_outputs
from oracles import check
from oracles.atomics import RULE_ORDER

from .conftest import run_generated, skip_without_icd, target_named

skip_without_icd()
TARGETS = discover()
PROGRAMS = sample(atomic_programs(capabilities(TARGETS)), 24, seed=5)


@pytest.mark.parametrize("name", ["pocl", "pocl/spirv", "rusticl", "rusticl/spirv", "oclgrind", "oclgrind/spirv"])
def test_generated_programs_run_and_agree(name):
    assert run_generated(target_named(name), PROGRAMS) >= 8


def test_a_tampered_result_is_caught():
    """Run a program on PoCL, then change one returned value of an operation on a contended
    location: no total order explains the history any more."""
    target = target_named("pocl")
    program = next(p for p in PROGRAMS if supports(target, p) and any(
        s.value.op in ("atomic_inc", "atomic_add", "atomic_xchg", "atomic_fetch_add") for s in p.body))
    stmt = next(s for s in program.body if s.value.op in ("atomic_inc", "atomic_add", "atomic_xchg"))
    with Worker(target, timeout_s=120) as w:
        result = w.run(job_for(program))
    assert result.status == "ok"
    actual = {k: v.copy() for k, v in split_outputs(program, result.outputs["out"]).items()}
    h = Expectations(program).histories()
    assert check(h, actual) == []
    got = actual[stmt.buffer]
    got[0] = got[0] ^ got.dtype.type(1 << 20)  # a value no operation wrote
    violations = check(h, actual)
    assert violations and violations[0].rule == RULE_ORDER


def test_oclgrind_finds_no_data_race(monkeypatch):
    """Oclgrind's race detector (OCLGRIND_DATA_RACES=1, drivers.md) over generated programs:
    shared buffers are only touched by atomics between the barriers."""
    target = target_named("oclgrind")
    monkeypatch.setenv("OCLGRIND_DATA_RACES", "1")
    ran = 0
    with Worker(target, timeout_s=300) as w:
        for p in PROGRAMS[:12]:
            if not supports(target, p):
                continue
            result = w.run(job_for(p))
            assert result.status == "ok", result.log[-500:]
            log = w.log_path.read_text(errors="replace")
            assert "data race" not in log.lower(), (p.id, log[-2000:])
            ran += 1
        # the detector is on: a racy kernel is reported
        racy = job_for(PROGRAMS[0])
        from dataclasses import replace
        source = b"__kernel void clfuzz(global const uchar* in, global uchar* out) { out[0] = (uchar)get_global_id(0); }"
        result = w.run(replace(racy, program=source, options=""))
        assert result.status == "ok"
        assert "data race" in w.log_path.read_text(errors="replace").lower()
    assert ran >= 4


@pytest.mark.parametrize("name", ["pocl", "oclgrind"])
def test_the_corner_sweep_runs_and_agrees(name):
    """The atomics sweep (fuzz.strategies.sweeps.atomics) on a target with every C11 feature (PoCL 3.1)
    and on one with the legacy forms only (Oclgrind): every fourth program it takes (all of them: about
    10 s on PoCL) runs and agrees."""
    from campaign.caps import capabilities
    from campaign.execute import execute
    from fuzz.drivers import Worker, discover
    from fuzz.drivers.capabilities import supports
    from fuzz.strategies import sweep_programs

    target = target_named(name)
    programs = [p for p in sweep_programs("atomics", capabilities(discover())) if supports(target, p)][::4]  # a quarter
    with Worker(target, timeout_s=120) as w:
        outcomes = [execute(p, target, w, None) for p in programs]
    assert programs and all(o.status == "ok" and o.verdict.mismatches == 0 for o in outcomes)
