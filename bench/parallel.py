"""Speed-up of the campaign's pipeline over a serial loop, on the same programs and drivers.

In one run of this script, for the chosen targets (default: every local target):
1. the campaign (campaign.campaign.run_campaign: a producer thread generating programs and computing
   the oracle's expectations, one lane per target whose worker runs while its host thread judges
   and records: every device at once) runs ``--programs`` programs with a fixed seed; its wall time
   is P;
2. a serial loop runs the same programs (each area's stream redrawn by index, in the order the
   campaign ran them) into a fresh corpus: draw, store, oracle, then on each target in turn
   prepare, run, judge and record (campaign.execute.execute), nothing overlapped; its wall time is S.
Both sides start their workers (and pay for opening the devices) inside the timed region, each
with an empty compiler cache. The speed-up is S / P; judged lanes per second are reported for
both. Each side runs ``--repeat`` times, alternating; the medians are reported.
Run: python3 bench/parallel.py [--programs 24] [--repeat 3] [--drivers pocl,rusticl] [--areas ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.batching import batch_for
from campaign.campaign import run_campaign
from campaign.caps import capabilities
from campaign.execute import execute
from campaign.expectations import Expectations
from corpus.reads import programs_run, stored_programs
from corpus.store import Corpus
from fuzz.drivers import Worker, discover, select
from fuzz.drivers.capabilities import supports
from fuzz.strategies import AREAS, Draws
from lang.policy import Policy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=24)
    ap.add_argument("--drivers")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; medians are reported")
    ap.add_argument("--areas", default="conversions,expressions,atomics,images")
    args = ap.parse_args()
    targets = select(discover(), args.drivers.split(",") if args.drivers else None)
    areas = tuple(args.areas.split(","))
    print(f"targets: {', '.join(t.name for t in targets)}; {args.programs} programs of {', '.join(areas)}; "
          f"{os.cpu_count()} cores", flush=True)
    walls: dict[str, list[float]] = {"pipeline": [], "serial": []}
    judged: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            folder = Path(tmp) / str(r)
            folder.mkdir()
            os.environ["CLFUZZ_STATE"] = str(folder / "state")  # empty compiler caches for both sides
            corpus = Corpus(folder / "pipeline.db")
            t0 = time.perf_counter()
            result = run_campaign(corpus, targets, minutes=60, seed=args.seed, areas=areas,
                                  max_programs=args.programs, name="bench")
            walls["pipeline"].append(time.perf_counter() - t0)
            judged["pipeline"] = sum(s.judged for s in result.targets.values())
            order = _programs_run(corpus, targets, areas, args.seed)
            corpus.close()
            os.environ["CLFUZZ_STATE"] = str(folder / "state-serial")
            t0 = time.perf_counter()
            judged["serial"] = _serial(order, targets, Corpus(folder / "serial.db"), args.seed)
            walls["serial"].append(time.perf_counter() - t0)
            print(f"run {r}: {len(order)} programs; pipeline {walls['pipeline'][-1]:.1f} s, "
                  f"serial {walls['serial'][-1]:.1f} s", flush=True)
    p, s = statistics.median(walls["pipeline"]), statistics.median(walls["serial"])
    print(f"{'loop':10} {'wall s':>8} {'judged lanes':>14} {'lanes/s':>12}")
    for name, wall in (("serial", s), ("pipeline", p)):
        print(f"{name:10} {wall:8.1f} {judged[name]:14,} {judged[name] / wall:12,.0f}")
    print(f"speed-up (serial / pipeline wall time, same programs): {s / p:.2f}x")


def _draws(targets, areas, seed: int) -> dict[str, Draws]:
    """Each area's stream as run_campaign draws it (the policy capped at the largest batch)."""
    policy = replace(Policy(), global_size=min(Policy().global_size, max(batch_for(t).global_size for t in targets)))
    return {a: Draws(AREAS[a](capabilities(targets), policy), seed) for a in areas}


def _programs_run(corpus: Corpus, targets, areas: tuple[str, ...], seed: int) -> list[tuple[str, int]]:
    """The campaign's programs that ran, as (area, draw index), in the order they were stored."""
    streams = _draws(targets, areas, seed)
    state = corpus.campaign("bench")["state"]["areas"]
    ran = programs_run(corpus)
    created = {r["id"]: r["created"] for r in stored_programs(corpus)}
    found = []
    for area in areas:
        for i in range(state[area]["next"]):
            pid = streams[area][i].id
            if pid in ran:
                found.append((created[pid], area, i))
    return [(area, i) for _, area, i in sorted(found)]


def _serial(order: list[tuple[str, int]], targets, corpus: Corpus, seed: int) -> int:
    """The plain loop: every step of every program one after the other; judged lanes."""
    draws = _draws(targets, tuple({a for a, _ in order}), seed)
    workers = {t.name: Worker(t) for t in targets}
    judged = 0
    try:
        for area, index in order:
            program = draws[area][index]
            corpus.add_program(program, "serial")
            expectations = Expectations(program)
            for t in targets:
                if supports(t, program):
                    judged += execute(program, t, workers[t.name], corpus, campaign="serial",
                                      expectations=expectations).verdict.judged
    finally:
        for w in workers.values():
            w.close()
    return judged


if __name__ == "__main__":
    main()
