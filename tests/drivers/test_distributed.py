"""A campaign over a Dask cluster (app.distributed): three local worker processes, each seeing other
drivers through its CLFUZZ_DRIVERS, fuzz into one corpus; slices merge without duplicates, node
campaigns draw disjoint programs and resume, and `clfuzz run --cluster` fails in one line."""

from __future__ import annotations

import logging
import sys
import zlib

import pytest
from click.testing import CliRunner

from app.cli import cli
from app.distributed import (
    _examples,
    _parent,
    _replace_examples,
    node_campaign,
    node_seed,
    run_distributed,
    summary_markdown,
)
from campaign.settings import CampaignError, Settings
from corpus import merge as merge_module
from corpus.merge import Merged
from corpus.dashboard_queries import run_statuses
from corpus.reads import programs_run, stored_programs
from corpus.store import Corpus
from lang.policy import Policy
from tests.drivers.conftest import repeated_runs, skip_without_icd, target_named

SMALL = Policy(statements=4, global_size=64, p_targeted=0.0, p_targeted_error=0.0, corner_sweep=False)  # draws only: disjoint by seed
NODES = {"pocl-node": "pocl", "rusticl-node": "rusticl", "oclgrind-node": "oclgrind"}  # each with its SPIR-V path


def test_node_seeds_are_stable_and_differ_per_node():
    assert node_seed(7, "gpu-a") == zlib.crc32(b"7@gpu-a") == node_seed(7, "gpu-a")
    assert len({node_seed(7, n) for n in NODES} | {node_seed(8, n) for n in NODES}) == 6
    assert node_campaign("nightly", "gpu-a") == "nightly@gpu-a"


def test_a_slice_brings_its_searches_examples_back(tmp_path):
    one, piece = Corpus(tmp_path / "one.db"), Corpus(tmp_path / "slice.db")
    for key, value in ((b"n@a/conversions/k", b"old"), (b"n@a/conversions/k", b"kept"), (b"n@b/conversions/k", b"b")):
        one.save_example(key, value)
    assert set(_examples(one, "n@a")) == {(b"n@a/conversions/k", b"kept"), (b"n@a/conversions/k", b"old")}
    piece.save_example(b"n@a/conversions/k", b"kept")  # Hypothesis deleted "old" and saved "new"
    piece.save_example(b"n@a/expressions/k", b"new")
    piece.close()
    merge_module.merge(one, tmp_path / "slice.db")
    _replace_examples(one, "n@a", tmp_path / "slice.db")
    assert set(_examples(one, "n@a")) == {(b"n@a/conversions/k", b"kept"), (b"n@a/expressions/k", b"new")}
    assert _examples(one, "n@b") == ((b"n@b/conversions/k", b"b"),)  # another node's search is left alone


def test_a_distributed_name_is_not_a_local_campaign(memory_corpus):
    settings = Settings(1, ("conversions",), SMALL)
    memory_corpus.update_campaign("local", 1, settings.to_row(), 0, 0, {})
    with pytest.raises(CampaignError, match="local campaign"):
        _parent(memory_corpus, "local", settings)
    _parent(memory_corpus, "spread", settings)
    assert _parent(memory_corpus, "spread", settings)["distributed"]  # the same settings: resumed
    with pytest.raises(CampaignError, match="other settings"):
        _parent(memory_corpus, "spread", Settings(2, ("conversions",), SMALL))


def _one_line_error(result, needle):
    assert result.exit_code == 2, result.output
    assert needle in result.output and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_cluster_errors_are_one_line(tmp_path, monkeypatch):
    import dask

    db = str(tmp_path / "c.db")
    runner = CliRunner()
    _one_line_error(runner.invoke(cli, ["run", "--cluster", "nonsense", "--corpus", db]),
                    "cannot reach a Dask scheduler at 'nonsense'")
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        _one_line_error(runner.invoke(cli, ["run", "--cluster", "tcp://127.0.0.1:9", "--corpus", db]),
                        "cannot reach a Dask scheduler at 'tcp://127.0.0.1:9'")
    _one_line_error(runner.invoke(cli, ["run", "--cluster", "tcp://127.0.0.1:9", "--drivers", "pocl", "--corpus", db]),
                    "--drivers does not apply with --cluster")
    monkeypatch.setitem(sys.modules, "distributed", None)  # not installed
    _one_line_error(runner.invoke(cli, ["run", "--cluster", "tcp://127.0.0.1:9", "--corpus", db]),
                    "pip install 'clfuzz[cluster]'")


@pytest.mark.drivers
@pytest.mark.soak  # 42 s of a real Dask cluster: kept out of the default run for the suite's 10 minutes
@pytest.mark.timeout(300)
def test_three_nodes_fuzz_into_one_corpus_and_resume(tmp_path, monkeypatch):
    skip_without_icd()
    targets = {n: {t.name for t in (target_named(d), target_named(f"{d}/spirv"))} for n, d in NODES.items()}
    from distributed import Client, Nanny, Scheduler, SpecCluster

    again: list[Merged] = []

    def merge_twice(into, path):  # every slice merged a second time adds nothing
        first = merge_module.merge(into, path)
        again.append(merge_module.merge(into, path))
        return first

    monkeypatch.setattr("app.distributed.merge", merge_twice)
    workers = {node: {"cls": Nanny, "options": {"nthreads": 1, "memory_limit": 0, "env": {"CLFUZZ_DRIVERS": drivers}}}
               for node, drivers in NODES.items()}
    db = tmp_path / "all.db"
    corpus = Corpus(db)
    events = []
    with SpecCluster(scheduler={"cls": Scheduler, "options": {"dashboard_address": ":0"}}, workers=workers,
                     silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.wait_for_workers(len(NODES))
        result = run_distributed(corpus, client, minutes=0.45, seed=5, areas=("conversions", "expressions"),
                                 policy=SMALL, name="spread", slice_minutes=0.2, on_slice=events.append)
        assert set(result.nodes) == set(NODES)
        for node, n in result.nodes.items():
            assert n.slices >= 2 and n.programs > 0 and n.judged > 0 and not n.errors, (node, n)
            assert set(n.targets) == targets[node]
        assert not [e for e in events if e.error]
        assert again and all(vars(m) == vars(Merged()) for m in again)

        ran = {node: programs_run(corpus, campaign=node_campaign("spread", node)) for node in NODES}
        for node, drivers in targets.items():  # each node ran its own drivers, no other
            assert set(run_statuses(corpus, node_campaign("spread", node))) == drivers
        nodes = list(NODES)
        assert all(ran[a] and not ran[a] & ran[b] for a in nodes for b in nodes if a < b)  # disjoint draws
        assert not repeated_runs(db)
        drawn = {}
        for node in NODES:
            row = corpus.campaign(node_campaign("spread", node))
            assert row["seed"] == node_seed(5, node)
            drawn[node] = sum(a["next"] for a in row["state"]["areas"].values())
            assert drawn[node] > 0
        parent = corpus.campaign("spread")
        assert parent["settings"]["distributed"]
        assert parent["programs"] == sum(corpus.campaign(node_campaign("spread", n))["programs"] for n in NODES)

        # the CLI resumes it with the stored settings (no triage, a summary per node)
        before = {r["id"] for r in stored_programs(corpus)}
        out = CliRunner().invoke(cli, ["run", "--cluster", cluster.scheduler_address, "--minutes", "0.2",
                                       "--corpus", str(db), "--name", "spread"])
        assert out.exit_code == 0, out.output
        assert "resuming campaign spread" in out.output and "triage" not in out.output
        for node in NODES:
            assert f"{node}: slice 1," in out.output
            state = corpus.campaign(node_campaign("spread", node))["state"]["areas"]
            assert sum(a["next"] for a in state.values()) > drawn[node]  # the streams went on
        after = {r["id"] for r in stored_programs(corpus)}
        assert after - before  # new programs, not the first ones again
        assert not repeated_runs(db)
        summary = (tmp_path / "all.db.summary.md").read_text()
        assert all(f"## node {node} (campaign spread@{node})" in summary for node in NODES)
        assert summary == summary_markdown(corpus, "spread")
