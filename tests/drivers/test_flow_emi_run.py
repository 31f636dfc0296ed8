"""EMI variants of flow programs on the local drivers (campaign.flow_variants): a short campaign of
the area on PoCL and Oclgrind stores each drawn program's variants linked to it before they run,
runs each on both targets and judges every lane by the interpreter; the drivers agree on every
lane of every variant (a lane that differs fails the test with its program, to be checked by hand)."""

from __future__ import annotations

from campaign.campaign import run_campaign
from campaign.flow_variants import variants
from corpus.store import Corpus
from corpus.variants import variant_of

from .conftest import skip_without_icd, target_named

skip_without_icd()


def test_a_campaign_runs_and_judges_each_programs_variants(tmp_path):
    corpus = Corpus(tmp_path / "emi.db")
    targets = [target_named("pocl"), target_named("oclgrind")]
    result = run_campaign(corpus, targets, minutes=0.5, seed=4, areas=("flow",), max_programs=3, jobs=0)
    links = {r["program_id"]: r for r in corpus.db["variants"].rows}
    originals = {r["original_id"] for r in links.values()}
    assert result.programs > 0 and len(originals) == result.programs
    for original in originals:  # the campaign ran the variants the policy gives each program
        expected = {v.id: kind for kind, v in variants(corpus.program(original))}
        assert {pid: r["kind"] for pid, r in links.items() if r["original_id"] == original} == expected
    runs = [r for r in corpus.db["runs"].rows if r["program_id"] in links]
    assert len(runs) == 2 * len(links) and all(r["status"] == "ok" and r["judged"] > 0 for r in runs)
    assert {variant_of(corpus, r["program_id"])["kind"] for r in runs} <= {"dead", "live", "split"}
    wrong = [(d["target"], d["program_id"], d["deviation_detail"]) for d in corpus.disagreements()]
    assert not wrong, wrong
