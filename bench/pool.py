"""The harness's worker processes against the campaign's own process: judged lanes per second per target.

In one run of this script, ``--repeat`` times, alternating: a campaign of ``--minutes`` on the chosen
targets (default: every local target) with ``--jobs 0`` (no pool: the campaign's process draws,
computes expectations and judges) and with each ``--pools`` size (default: this machine's
campaign.cores.default_jobs, at least 1), and with ``--before PATH`` (repeatable) also the campaign
of each checkout at PATH (the code before the pool, or any other checkout: run as it runs by
default; its side is named "before" with one, else "before PATH"); the same seed and areas,
no triage, each in a process of its own and into a fresh corpus. Reported per target and side: the
median judged lanes per second of wall time (campaign.progress.TargetStats.checks_per_s), its ratio
to ``--jobs 0``'s, and the median share of the wall time the target waited for the harness (the
code before the pool does not measure it: "-").
Run: python3 bench/pool.py [--minutes 1] [--repeat 3] [--seed 7] [--drivers ...] [--areas ...] [--pools 1,2]
     [--before /path/to/checkout] [--no-sweep]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from _common import child_json  # and the repository on sys.path

from campaign.cores import default_jobs
from fuzz.drivers import discover, select
from fuzz.strategies import AREAS

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from campaign.campaign import run_campaign
from corpus.store import Corpus
from fuzz.drivers import discover
from lang.policy import Policy
targets = [t for t in discover() if t.name in {names!r}]
jobs = {jobs!r}
result = run_campaign(Corpus({path!r}), targets, minutes={minutes!r}, seed={seed!r}, areas={areas!r}, name="pool",
                      policy=Policy(corner_sweep={sweep!r}), **({{}} if jobs is None else {{"jobs": jobs}}))
timeline = hasattr(result, "pool")  # the code before the pool counted no wait for the harness
print(json.dumps({{"targets": {{n: {{"lanes_s": s.checks_per_s,
                                   "harness": s.harness_s / getattr(s, "worker_s", s.wall_s) if timeline else None}}
                               for n, s in result.targets.items()}},
                  "cpu_s": result.pool.process_cpu_s if timeline else None}}))
"""


def campaign(root: Path, names: list[str], areas: tuple[str, ...], minutes: float, seed: int, jobs: int | None,
             path: Path, sweep: bool = True) -> dict:
    """One campaign in a process of its own on the checkout at ``root`` (``jobs`` None: its default;
    ``sweep`` False: no corner sweep, every program from the areas' streams)."""
    code = CHILD.format(root=str(root), names=names, jobs=jobs, path=str(path), minutes=minutes, seed=seed,
                        areas=areas, sweep=sweep)
    return child_json(code, root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--drivers", help="comma-separated driver names (default: every local target)")
    ap.add_argument("--areas", default=",".join(AREAS))
    ap.add_argument("--pools", help="comma-separated pool sizes to compare with 0 (default: this machine's)")
    ap.add_argument("--before", action="append", default=[],
                    help="a checkout of other code (the code before the pool), run beside as it runs by default "
                         "(repeatable)")
    ap.add_argument("--no-sweep", action="store_true",
                    help="no corner sweep on either side: every program from the areas' streams (a sweep's "
                         "programs, packed differently by each checkout, judge different numbers of lanes)")
    args = ap.parse_args()
    found = discover()
    names = [t.name for t in (select(found, args.drivers.split(",")) if args.drivers else found)]
    areas = tuple(a for a in args.areas.split(",") if a)
    pools = ([int(p) for p in args.pools.split(",") if p] if args.pools is not None
             else [max(1, default_jobs(len(names)))])  # --pools '': jobs 0 against --before only
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-pool-"))
    sides: list[tuple[str, Path, int | None]] = [("before" if len(args.before) == 1 else f"before {path}",
                                                  Path(path).resolve(), None) for path in dict.fromkeys(args.before)]
    sides += [(f"jobs {jobs}", ROOT, jobs) for jobs in (0, *pools)]
    results: dict[str, list[dict]] = {side: [] for side, _, _ in sides}
    for i in range(args.repeat):
        for side, root, jobs in sides:
            path = folder / f"{side.replace(' ', '')}-{i}.db"
            got = campaign(root, names, areas, args.minutes, args.seed, jobs, path, not args.no_sweep)
            results[side].append(got)
            lanes = ", ".join(f"{n} {t['lanes_s']:,.0f}" for n, t in got["targets"].items())
            cpu = f"; campaign process CPU {got['cpu_s']:.1f} s" if got["cpu_s"] else ""
            print(f"run {i + 1} {side}: lanes/s {lanes}{cpu}", flush=True)

    def median(side: str, name: str, key: str) -> float | None:
        values = [r["targets"][name][key] for r in results[side]]
        return None if None in values else statistics.median(values)

    print(f"\n{args.repeat} runs of {args.minutes:g} min per side, seed {args.seed}, areas {','.join(areas)}"
          f"{', no corner sweep' if args.no_sweep else ''}; medians; ratio: to jobs 0\n")
    print("| target | side | lanes/s | ratio | harness share |")
    print("|---|---|---|---|---|")
    for name in names:
        base = median("jobs 0", name, "lanes_s")
        for side, _, _ in sides:
            lanes, share = median(side, name, "lanes_s"), median(side, name, "harness")
            print(f"| {name} | {side} | {lanes:,.0f} | {lanes / base if base else 0:.2f} "
                  f"| {'-' if share is None else f'{share:.0%}'} |")


if __name__ == "__main__":
    main()
