"""A real short campaign with and without the harness's worker processes (campaign.pool): the same
programs drawn in the same order, and each target's time table adding up to its wall time, its
builds and runs those `clfuzz stats --json` sums; with two driver workers (campaign.cores) each
program run once, by one of them."""

from __future__ import annotations

import pytest

from campaign import feed, record
from campaign.campaign import run_campaign
from corpus.stats import summarize
from corpus.store import Corpus
from lang.policy import Policy
from tests.drivers.conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers

POLICY = Policy(statements=6, global_size=64, corner_sweep=False, p_targeted_error=0.0)  # all from the stream
STORE = record.store_program


def _campaign(tmp_path, monkeypatch, jobs: int, areas: tuple[str, ...] = ("conversions",), workers: int = 1):
    drawn = []
    monkeypatch.setattr(record, "store_program", lambda corpus, program, name: (drawn.append(program.id),
                                                                                 STORE(corpus, program, name)))
    corpus = Corpus(tmp_path / f"jobs{jobs}-workers{workers}.db")
    result = run_campaign(corpus, [target_named("oclgrind")], minutes=0.5, seed=3, areas=areas,
                          policy=POLICY, max_programs=6 + len(areas) - 1, jobs=jobs, workers=workers)
    return corpus, result, drawn


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_short_campaign_s_time_table_adds_up_and_agrees_with_stats(tmp_path, monkeypatch, jobs):
    """(With an area the target does not take, as NVIDIA takes no SPIR-V: dropped with a notice, the
    programs drawn before the drop no defect.)"""
    takes = feed.supports
    monkeypatch.setattr(feed, "supports", lambda target, program: program.area != "spirv" and takes(target, program))
    corpus, result, _ = _campaign(tmp_path, monkeypatch, jobs, ("conversions", "spirv"))
    assert "area spirv: no target of this run takes its programs; dropped" in result.notices and not result.unrun
    s = result.targets["oclgrind"]
    assert s.judged > 0 and s.wall_s > 0
    assert abs(s.accounted_s - s.wall_s) <= 0.05 * s.wall_s
    stored = summarize(corpus, result.name)["targets"]["oclgrind"]
    assert abs(stored["build_s"] - s.build_s) <= 0.05 * s.build_s
    assert abs(stored["run_s"] - s.run_s) <= 0.05 * max(s.run_s, 0.01)
    assert result.pool.jobs == jobs and result.pool.tasks["oclgrind"]["judge"] == s.runs


def test_the_pool_draws_the_same_programs_in_the_same_order(tmp_path, monkeypatch):
    _, here, drawn_here = _campaign(tmp_path, monkeypatch, 0)
    _, pooled, drawn_pooled = _campaign(tmp_path, monkeypatch, 2)
    assert len(drawn_here) == 6 and drawn_pooled == drawn_here
    assert pooled.pool.tasks["oclgrind"]["draw"] == 6 and pooled.pool.cpu["oclgrind"]["expect"] > 0


def test_two_workers_of_a_target_share_its_programs_and_each_runs_one_once(tmp_path, monkeypatch):
    from campaign.pipeline import Lane
    from fuzz.drivers import Worker
    ran: list[tuple[int, str]] = []  # (worker process, program) of each run
    run = Worker.run
    monkeypatch.setattr(Worker, "run", lambda self, job, *a, **k: (ran.append((self.pid, job.program)),
                                                                     run(self, job, *a, **k))[1])
    _, one, drawn_one = _campaign(tmp_path, monkeypatch, 0)
    ran.clear()
    lanes, lane = [], Lane.__init__
    monkeypatch.setattr(Lane, "__init__", lambda self, *a, **k: (lanes.append(self), lane(self, *a, **k))[1])
    corpus, two, drawn_two = _campaign(tmp_path, monkeypatch, 0, workers=2)
    assert len(lanes) == 2 and lanes[0].learned is lanes[1].learned and lanes[0].timeouts is lanes[1].timeouts
    assert sorted(drawn_two) == sorted(drawn_one) and len(drawn_two) == 6  # the same programs of the stream
    s = two.targets["oclgrind"]
    assert (s.workers, s.programs, one.targets["oclgrind"].workers) == (2, 6, 1)  # each program finished once
    assert len({pid for pid, _ in ran}) == 2  # both workers ran programs
    assert len({source for _, source in ran}) == len(ran)  # no program built twice
    assert abs(s.accounted_s - s.worker_s) <= 0.05 * s.worker_s  # each worker's timeline adds up to the wall
    # as one target: its states add up to the campaign's wall; a call in progress at least as long as
    # either worker's own calls (its build and run), at most as long as both together
    assert abs(sum(s.together.values()) - s.wall_s) <= 0.05 * s.wall_s
    assert max(lane.stats.build_s + lane.stats.run_s for lane in lanes) <= s.together["working"] * 1.05
    assert s.together["working"] <= (s.worker_s - s.harness_s - s.idle_s) * 1.05 + s.calls_s
    stored = summarize(corpus, two.name)["targets"]["oclgrind"]
    assert abs(stored["build_s"] - s.build_s) <= 0.05 * s.build_s


def test_a_set_up_that_fails_stops_the_lanes_and_the_harness_it_started(tmp_path, monkeypatch):
    """The lanes open their devices while the corners are planned (campaign.campaign): a failure
    there leaves no worker running."""
    import campaign.campaign as loop
    from campaign.pipeline import Lane
    from campaign.pool import Harness

    closed, lanes = [], []
    close_lane, close_harness, lane = Lane.close, Harness.close, Lane.__init__
    monkeypatch.setattr(Lane, "__init__", lambda self, *a, **k: (lanes.append(self), lane(self, *a, **k))[1])
    monkeypatch.setattr(Lane, "close", lambda self: (closed.append(self.target.name), close_lane(self))[1])
    monkeypatch.setattr(Harness, "close", lambda self: (closed.append("harness"), close_harness(self))[1])
    monkeypatch.setattr(loop, "sweep_plan", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        run_campaign(Corpus(tmp_path / "c.db"), [target_named("oclgrind")], minutes=0.5, seed=3,
                     areas=("conversions",), policy=Policy(statements=6, global_size=64), jobs=1)
    assert closed == ["oclgrind", "harness"]
    assert len(lanes) == 1 and not lanes[0].worker.alive
