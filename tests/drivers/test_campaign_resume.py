"""A named campaign resumes on a real driver: its settings and state come from the corpus, each
area's draws continue where they stopped, and programs an interruption left unrun run first."""

from __future__ import annotations

import pytest

from campaign.campaign import run_campaign
from campaign.scheduler import Budget
from campaign.settings import CampaignError, stored_settings
from corpus.hypothesis_db import examples_under
from corpus.reads import campaign_programs, programs_run
from corpus.store import Corpus
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws
from lang.policy import Policy
from tests.drivers.conftest import repeated_runs, skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers

SMALL = Policy(statements=4, global_size=64)


def test_a_campaign_resumes_where_it_stopped(tmp_path):
    pocl = target_named("pocl")
    corpus = Corpus(tmp_path / "c.db")
    kw = dict(seed=3, areas=("conversions", "expressions"), policy=SMALL, name="nightly",
              budgets={"expressions": Budget(programs=5)})
    first = run_campaign(corpus, [pocl], minutes=5, max_programs=8, **kw)
    assert first.programs == 8 and first.pending == 0
    row = corpus.campaign("nightly")
    state = row["state"]["areas"]
    drawn = sum(a["next"] + a["swept"] for a in state.values())  # corner sweeps first, then the streams
    assert stored_settings(corpus, "nightly").budgets == {"expressions": Budget(programs=5)}
    # as if the run had been stopped with a program drawn and stored but not run everywhere
    left = Draws(conversion_programs(Caps(), SMALL), 99)[0]
    corpus.add_program(left, "nightly")
    corpus.update_campaign("nightly", row["seed"], row["settings"], row["programs"], row["checks"],
                           {**row["state"], "pending": [left.id]})
    stored = {r["id"] for r in campaign_programs(corpus, "nightly")}

    second = run_campaign(corpus, [pocl], minutes=5, max_programs=6, **kw)
    assert second.programs == 6
    assert left.id in programs_run(corpus)  # what the interrupted run left pending ran first
    after = corpus.campaign("nightly")["state"]["areas"]
    assert sum(a["next"] + a["swept"] for a in after.values()) > drawn  # continued, not restarted
    assert not repeated_runs(tmp_path / "c.db")  # no sweep twice
    assert after["expressions"]["next"] <= 5  # the budget holds across runs
    new = {r["id"] for r in campaign_programs(corpus, "nightly")} - stored
    assert new and not new & stored
    assert corpus.campaign("nightly")["programs"] == 14

    with pytest.raises(CampaignError, match="other settings"):
        run_campaign(corpus, [pocl], minutes=1, max_programs=1, **{**kw, "seed": 4})


def test_a_targeted_share_comes_from_hypothesis_search_whose_state_is_in_the_corpus(tmp_path):
    from dataclasses import replace

    pocl = target_named("pocl")
    corpus = Corpus(tmp_path / "c.db")
    result = run_campaign(corpus, [pocl], minutes=5, max_programs=8, seed=1, areas=("conversions",),
                          policy=replace(SMALL, p_targeted=1.0, corner_sweep=False), name="aimed")
    assert result.programs == 8
    state = corpus.campaign("aimed")["state"]["areas"]["conversions"]
    assert state["searched"] >= 6 and state["next"] <= 2  # (a draw only when the search is not ready)
    keys = {k for k, _ in examples_under(corpus, b"")}
    assert keys and all(k.startswith(b"aimed/conversions/") for k in keys)  # the Pareto front, per campaign and area
