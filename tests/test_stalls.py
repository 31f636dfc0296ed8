"""A target that judged no lane in a minute of its campaign (corpus.stats.judged_by_minute and
stall_line): the lanes of each run counted in the minute it ended, shown in `clfuzz stats --json`
and on the campaign's summary. The corpus is built by hand with its clock set run by run."""

from __future__ import annotations

import pytest

import corpus.store as store
from corpus.stats import judged_by_minute, markdown, stall_line, summarize
from corpus.store import Corpus

T0 = 1_800_000_000.0


@pytest.fixture
def clock(monkeypatch):
    now = [T0]
    monkeypatch.setattr(store, "_now", lambda: now[0])
    return now


def _run(corpus: Corpus, clock: list[float], at: float, target: str, judged: int, status: str = "ok") -> None:
    clock[0] = T0 + at
    corpus.add_run({"program_id": "p", "target": target, "fingerprint_id": f"fp-{target}", "path": "opencl-c",
                    "status": status, "checks": judged, "judged": judged, "mismatches": 0, "build_s": 0.1,
                    "run_s": 0.1, "log": "", "campaign": "c"}, [])


@pytest.fixture
def corpus(clock, memory_corpus):
    """Campaign c from T0: pocl judges 100 lanes at 10 s, nothing in minute 2 (a timeout at 70 s),
    30 at 130 s; rusticl 50, 7 (at 61 s), 20; the campaign's last record at 175 s (3 minutes)."""
    memory_corpus.update_campaign("c", 0, {}, 0, 0)
    for at, target, judged, status in ((10, "pocl", 100, "ok"), (12, "rusticl", 50, "ok"), (61, "rusticl", 7, "ok"),
                                       (70, "pocl", 0, "timeout"), (130, "pocl", 30, "ok"),
                                       (131, "rusticl", 20, "ok")):
        _run(memory_corpus, clock, at, target, judged, status)
    clock[0] = T0 + 175
    memory_corpus.update_campaign("c", 0, {}, 3, 207)
    return memory_corpus


def test_lanes_are_counted_in_the_minute_their_run_ended(corpus):
    lanes, running = judged_by_minute(corpus, "c")
    assert lanes == {"pocl": [100, 0, 30], "rusticl": [50, 7, 20]}
    assert running == {0, 1, 2}


def test_the_summary_names_the_minute_a_target_judged_nothing(corpus):
    summary = summarize(corpus, "c")
    assert summary["minutes"] == 3
    assert summary["targets"]["pocl"]["judged_by_minute"] == [100, 0, 30]
    assert stall_line(summary) == "judged no lane in a minute of 3: pocl (minute 2)"
    assert "Judged no lane in a minute of 3: pocl (minute 2)" in markdown(summary)


def test_a_pause_between_two_sessions_of_a_resumed_campaign_is_no_stall(corpus, clock):
    """Minutes 4 to 6 no target ran anything (the campaign was stopped, then resumed): not a stall;
    minute 7 rusticl ran and pocl did not: a stall."""
    _run(corpus, clock, 400, "rusticl", 5)
    clock[0] = T0 + 455
    corpus.update_campaign("c", 0, {}, 4, 212)
    summary = summarize(corpus, "c")
    assert summary["minutes"] == 8
    assert stall_line(summary) == "judged no lane in a minute of 8: pocl (minutes 2, 7)"


def test_no_line_when_every_target_judged_lanes_every_minute(corpus, clock):
    _run(corpus, clock, 80, "pocl", 1)
    assert stall_line(summarize(corpus, "c")) is None
    assert stall_line(summarize(corpus)) is None  # the whole corpus: no campaign's minutes


def test_clfuzz_stats_names_the_stall(clock, tmp_path):
    from click.testing import CliRunner

    from app.cli import cli

    path = tmp_path / "c.db"
    corpus = Corpus(path)
    corpus.update_campaign("c", 0, {}, 0, 0)
    _run(corpus, clock, 10, "pocl", 100)
    _run(corpus, clock, 70, "rusticl", 5)
    clock[0] = T0 + 119
    corpus.update_campaign("c", 0, {}, 2, 105)
    corpus.close()
    out = CliRunner().invoke(cli, ["stats", "--corpus", str(path), "--campaign", "c"], terminal_width=200).output
    assert "judged no lane in a minute of 2: pocl (minute 2); rusticl (minute 1)" in out
