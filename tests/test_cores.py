"""How a campaign spends the machine's cores (campaign.cores): driver workers per target, the pool
from what they leave; and a target's counts from its workers' (campaign.progress.TargetStats.merged)."""

from __future__ import annotations

from collections import Counter

from campaign.cores import default_jobs, default_workers, offloads
from campaign.progress import TargetStats
from fuzz.drivers import Target


def target(name: str, device_type: str) -> Target:
    return Target(name, {"device_type": device_type}, f"fp-{name}", "", 0, 0)


GPU, CPU, SIMULATOR = target("nvidia", "GPU"), target("pocl", "CPU"), target("oclgrind", "DEFAULT|CPU|GPU|ACCELERATOR")


def test_only_a_device_that_is_not_the_cpu_offloads():
    assert offloads(GPU)
    assert not offloads(CPU)
    assert not offloads(SIMULATOR)  # Oclgrind names every type: it runs on the host's cores


def test_a_gpu_gets_more_workers_where_cores_are_spare_and_a_cpu_device_one():
    assert default_workers([GPU, CPU], cores=16) == {"nvidia": 3, "pocl": 1}  # 14 spare: two more, at most
    assert default_workers([GPU, CPU], cores=8) == {"nvidia": 2, "pocl": 1}  # 6 spare: one more
    assert default_workers([GPU, CPU], cores=4) == {"nvidia": 1, "pocl": 1}
    assert default_workers([GPU, target("amd", "GPU"), CPU], cores=16) == {"nvidia": 2, "amd": 2, "pocl": 1}
    assert default_workers([CPU, SIMULATOR], cores=64) == {"pocl": 1, "oclgrind": 1}
    assert default_workers([GPU], cores=2) == {"nvidia": 1}


def test_the_pool_takes_the_cores_left_after_the_driver_workers():
    assert default_jobs(1, cores=16) == 15
    assert default_jobs(4, cores=16) == 12  # NVIDIA's three workers and PoCL's one
    assert default_jobs(2, cores=4) == 2
    assert default_jobs(1, cores=2) == 0  # one core left: the campaign's own process
    assert default_jobs(3, cores=2) == 0


def test_a_targets_counts_are_its_workers_added_up():
    a = TargetStats(programs=3, judged=100, build_s=5.0, run_s=1.0, harness_s=3.0, idle_s=1.0,
                    statuses={"ok": 2, "crash": 1}, kinds={("wrong-value", "abs", "int", "int")},
                    waits=Counter(draw=2.0), widened=Counter({("math", "pace"): 1}))
    b = TargetStats(programs=4, judged=50, build_s=6.0, run_s=2.0, harness_s=1.0, triage_s=1.0,
                    statuses={"ok": 4}, kinds={("nan", "sqrt", "float", "float")},
                    waits=Counter(draw=0.5, judging=0.5), widened=Counter({("math", "pace"): 2}))
    m = TargetStats.merged([a, b], 10.0)
    assert (m.programs, m.judged, m.workers, m.wall_s, m.worker_s) == (7, 150, 2, 10.0, 20.0)
    assert m.accounted_s == m.worker_s == 20.0  # each worker's timeline adds up to the wall time
    assert m.busy_s == 5.0 + 1.0 + 6.0 + 2.0 + 1.0
    assert m.checks_per_s == 15.0  # judged lanes per second of wall time, not of worker time
    assert m.statuses == {"ok": 6, "crash": 1} and len(m.kinds) == 2
    assert m.waits == {"draw": 2.5, "judging": 0.5} and m.widened == {("math", "pace"): 3}


def test_a_daemon_process_keeps_one_worker_a_target_and_no_pool(monkeypatch):
    import multiprocessing
    from types import SimpleNamespace
    monkeypatch.setattr(multiprocessing, "current_process", lambda: SimpleNamespace(daemon=True))
    assert default_workers([GPU, CPU], cores=16) == {"nvidia": 1, "pocl": 1}
    assert default_jobs(2, cores=16) == 0


def test_the_time_table_row_of_several_workers_adds_their_timelines():
    from rich.console import Console

    from app.display import time_table

    one = TargetStats(build_s=40.0, run_s=10.0, harness_s=6.0, triage_s=4.0)  # 60 s each
    two = TargetStats(build_s=30.0, run_s=14.0, harness_s=12.0, idle_s=4.0)
    console = Console(width=200, record=True)
    console.print(time_table({"nvidia": TargetStats.merged([one, two], 60.0), "pocl": TargetStats(wall_s=60.0,
                                                                                                  run_s=60.0)}))
    rows = {r[0]: r[1:] for r in ([c for c in line.split() if c not in "│┃|"] for line in console.export_text().splitlines())
            if r and r[0] in ("nvidia", "pocl")}
    # wall: the two workers' 60 s together; busy: build, run and triage over it (98 of 120 s)
    assert rows["nvidia"] == ["(2", "workers)", "120", "70.0", "24.0", "18.0", "0.0", "0.0", "4.0", "4.0", "82%", "0"]
    assert rows["pocl"] == ["60", "0.0", "60.0", "0.0", "0.0", "0.0", "0.0", "0.0", "100%", "0"]


def test_below_the_time_table_a_target_of_several_workers_as_one():
    from rich.console import Console

    from app.display import time_table

    nvidia = TargetStats.merged([TargetStats(), TargetStats(), TargetStats()], 600.0)
    nvidia.together.update({"working": 588.0, "harness": 9.0, "idle": 3.0})
    console = Console(width=200, record=True)
    console.print(time_table({"nvidia": nvidia, "pocl": TargetStats(wall_s=600.0, run_s=600.0)}))
    text = " ".join(console.export_text().split())
    assert ("nvidia's 3 workers as one target: a call in progress 98.0% of the 600 s, waiting for the harness "
            "with none in progress 1.5%, idle 0.5%") in text
    assert "pocl's" not in text  # one worker: its row says it all
