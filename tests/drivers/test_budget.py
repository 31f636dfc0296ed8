"""Campaigns end when they are told (campaign.campaign): whatever the drivers do, a campaign
returns within its budget plus the stated grace (10% or 15 s, whichever is larger), what was in
flight stays pending, and nothing judged is lost."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from campaign.campaign import run_campaign
from corpus.dashboard_queries import run_statuses
from corpus.reads import stored_programs
from corpus.store import Corpus
from fuzz.drivers import BufferArg, Job, Worker
from lang.policy import Policy
from tests.drivers.conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers

HANG = Job("source", b"kernel void hang(global int* p) { volatile int x = 0; while (1) { x++; } p[0] = x; }", "",
           "hang", (BufferArg("p", None, 64, True),), (1,), None)


def grace(budget_s: float) -> float:
    return max(15.0, 0.1 * budget_s)


@pytest.fixture
def hanging(monkeypatch):
    """Every program hangs on the device: each run is the endless kernel, until the worker is killed."""
    real = Worker.run
    monkeypatch.setattr(Worker, "run", lambda self, job, timeout_s=None: real(self, HANG, timeout_s))


def test_a_target_that_hangs_on_every_program_ends_within_budget_and_grace(tmp_path, hanging):
    """Every run times out (a 3 s ceiling), is isolated by halving, and the campaign still ends on
    time; the run in flight at the deadline is killed and what it left stays pending."""
    corpus = Corpus(tmp_path / "c.db")
    budget, ceiling = 10.0, 3.0
    t0 = time.monotonic()
    result = run_campaign(corpus, [target_named("pocl")], minutes=budget / 60, seed=1, areas=("conversions",),
                          policy=Policy(statements=8, global_size=64), timeout_s=ceiling, started=t0)
    wall = time.monotonic() - t0
    assert budget - 1 <= wall <= budget + grace(budget)
    assert result.pending >= 1  # in flight at the stop: run first on resume
    state = corpus.campaign(result.name)["state"]
    assert set(state["pending"]) <= {r["id"] for r in stored_programs(corpus)}
    statuses = {s for per_target in run_statuses(corpus).values() for s in per_target}
    assert "timeout" in statuses and result.targets["pocl"].timeouts_s > 0


def test_a_short_campaign_on_the_local_drivers_returns_within_its_budget(tmp_path):
    """What a user runs: `clfuzz run --minutes 0.15` on every local driver, measured as the process's
    wall time (start-up, discovery, campaign, triage beside it and the summary)."""
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "app.cli", "run", "--minutes", "0.15", "--corpus", str(tmp_path / "c.db")],
                         capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                         timeout=300)
    wall = time.monotonic() - t0
    assert out.returncode == 0, out.stderr[-2000:]
    assert wall <= 9 + grace(9), out.stdout[-3000:]
    assert "where the time went" in out.stdout and "pending" in out.stdout
