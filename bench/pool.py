"""The harness's worker processes against the campaign's own process: judged lanes per second per target.

In one run of this script, ``--repeat`` times, alternating: a campaign of ``--minutes`` on the chosen
targets (default: every local target) with ``--jobs 0`` (no pool: the campaign's process draws,
computes expectations and judges, as before the pool) and with each ``--pools`` size (default: this
machine's campaign.pool.default_jobs, at least 1), the same seed and areas, no triage, each into a
fresh corpus. Reported per target and pool size: the median judged lanes per second of wall time
(campaign.progress.TargetStats.checks_per_s) with the pool and without, their ratio, and the median
harness share of the wall time (the target waiting for the harness). The campaign process's CPU
seconds and the pool's are reported per side too.
Run: python3 bench/pool.py [--minutes 1] [--repeat 3] [--seed 7] [--drivers ...] [--areas ...] [--pools 1,2]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.campaign import run_campaign
from campaign.pool import default_jobs
from corpus.store import Corpus
from fuzz.drivers import discover, select
from fuzz.strategies import AREAS


def campaign(targets, areas: tuple[str, ...], minutes: float, seed: int, jobs: int, path: Path):
    corpus = Corpus(path)
    try:
        return run_campaign(corpus, targets, minutes=minutes, seed=seed, areas=areas, name="pool", jobs=jobs)
    finally:
        corpus.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--drivers", help="comma-separated driver names (default: every local target)")
    ap.add_argument("--areas", default=",".join(AREAS))
    ap.add_argument("--pools", help="comma-separated pool sizes to compare with 0 (default: this machine's)")
    args = ap.parse_args()
    found = discover()
    targets = select(found, args.drivers.split(",")) if args.drivers else found
    areas = tuple(a for a in args.areas.split(",") if a)
    pools = [int(p) for p in args.pools.split(",")] if args.pools else [max(1, default_jobs(len(targets)))]
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-pool-"))
    sides = [0, *pools]
    results: dict[int, list] = {jobs: [] for jobs in sides}
    for i in range(args.repeat):
        for jobs in sides:
            result = campaign(targets, areas, args.minutes, args.seed, jobs, folder / f"jobs{jobs}-{i}.db")
            results[jobs].append(result)
            lanes = ", ".join(f"{n} {s.checks_per_s:,.0f}" for n, s in result.targets.items())
            print(f"run {i + 1} jobs {jobs}: lanes/s {lanes}; campaign process CPU {result.pool.process_cpu_s:.1f} s, "
                  f"pool CPU {sum(sum(c.values()) for c in result.pool.cpu.values()):.1f} s", flush=True)

    def median(jobs: int, name: str, value) -> float:
        return statistics.median(value(r.targets[name]) for r in results[jobs])

    print(f"\n{args.repeat} runs of {args.minutes:g} min per side, seed {args.seed}, areas {','.join(areas)}; "
          "medians\n")
    print("| target | pool | lanes/s, no pool | lanes/s, pool | ratio | harness share, no pool | harness share, pool |")
    print("|---|---|---|---|---|---|---|")
    for t in targets:
        before = median(0, t.name, lambda s: s.checks_per_s)
        share0 = median(0, t.name, lambda s: s.harness_s / s.wall_s)
        for jobs in pools:
            after = median(jobs, t.name, lambda s: s.checks_per_s)
            print(f"| {t.name} | {jobs} | {before:,.0f} | {after:,.0f} | {after / before if before else 0:.2f} "
                  f"| {share0:.0%} | {median(jobs, t.name, lambda s: s.harness_s / s.wall_s):.0%} |")


if __name__ == "__main__":
    main()
