"""Every target at its own pace: a joint campaign of two targets against each one's solo campaign.

For each pair of targets and an area (``--pairs pocl,rusticl:math;pocl,oclgrind:expressions``), in
one run: a solo campaign of ``--minutes`` on each target, then a joint campaign of the same length
on both (campaign.campaign.run_campaign, the same seed, no triage, fresh corpora). Reported per
target: programs run and judged lanes, joint against solo (the ratio: 1.0 means the other target
cost it nothing), and its busy fraction (its builds, runs, harness, timeouts and isolation over the
wall time: campaign.progress.TargetStats). The fast target's busy fraction in the joint campaign
is what independent queues are for: in lockstep it waited for the slow one. ``--after S``: also each
target's judged lanes per second of wall time from S seconds into the joint campaign to its end
(after the area's corner sweep: campaign.widening's extensions are for the programs drawn after it),
and its wait for the harness as a share of the wall time (with the part of it in the worker's
calls beyond build and run: campaign.progress.TargetStats.calls_s), and below the table what limited its
extensions' sizes (campaign.widening.Widths.bound), the harness's CPU seconds and what the target's
waits for the harness were waits for (campaign.progress.TargetStats.waits); ``--joint``: the joint campaigns only;
``--no-sweep``: no corner sweep first (Policy.corner_sweep: what the targets run once it is done).
Run: python3 bench/pace.py [--minutes 1] [--pairs ...] [--seed 11] [--after 60] [--joint] [--no-sweep]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.campaign import run_campaign
from campaign.progress import Progress, TargetStats
from corpus.store import Corpus
from fuzz.drivers import discover, select
from lang.policy import Policy


def campaign(targets, area: str, minutes: float, seed: int, folder: Path, after: float = 0.0,
             policy: Policy = Policy(), pools: list | None = None) -> tuple[dict[str, TargetStats], dict[str, float]]:
    """The campaign's targets' stats, and each one's judged lanes per second from ``after`` seconds
    on; its harness's CPU seconds (campaign.progress.PoolStats) appended to ``pools``."""
    corpus = Corpus(folder / f"{'+'.join(t.name.replace('/', '_') for t in targets)}-{area}.db")
    marks: dict[str, int] = {}

    def seen(progress: Progress) -> None:
        if progress.elapsed < after:
            marks.update({t: s.judged for t, s in progress.targets.items()})
    try:
        result = run_campaign(corpus, targets, minutes=minutes, seed=seed, areas=(area,), name="pace",
                              policy=policy, on_progress=seen)
        stats = result.targets
        if pools is not None:
            pools.append(result.pool)
    finally:
        corpus.close()
    rate = {t: (s.judged - marks.get(t, 0)) / max(s.wall_s - after, 1e-9) for t, s in stats.items()}
    return stats, rate


def busy(s: TargetStats) -> float:
    return (s.busy_s - s.triage_s) / s.worker_s if s.worker_s else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--pairs", default="pocl,rusticl:math;pocl,oclgrind:expressions")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--after", type=float, default=0.0, help="lanes per second from this many seconds on")
    ap.add_argument("--joint", action="store_true", help="the joint campaigns only")
    ap.add_argument("--no-sweep", dest="sweep", action="store_false", help="no corner sweep first")
    args = ap.parse_args()
    policy = Policy(corner_sweep=args.sweep)
    found = discover()
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-pace-"))
    print("| pair, area | target | solo programs | joint programs | joint/solo | solo lanes/s | joint lanes/s "
          f"| solo busy | joint busy | joint lanes/s after {args.after:g} s | joint harness (in calls) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    limits = []  # what decided the size of each target's extensions (campaign.widening)
    for spec in filter(None, args.pairs.split(";")):
        names, area = spec.split(":")
        pair = [t for t in select(found, names.split(",")) if t.name in names.split(",")]  # the paths named
        solo = {} if args.joint else {t.name: campaign([t], area, args.minutes, args.seed, folder, 0.0, policy)[0][t.name]
                                      for t in pair}
        pools: list = []
        joint, after = campaign(pair, area, args.minutes, args.seed, folder, args.after, policy, pools)
        cpu = ", ".join(f"{owner} {kind} {s:.1f}" for owner, kinds in pools[0].cpu.items() for kind, s in kinds.items())
        limits.append(f"{names} {area}, CPU seconds: the campaign's process {pools[0].process_cpu_s:.1f}; "
                      f"{pools[0].jobs} worker processes: {cpu}")
        for t in pair:
            s, j = solo.get(t.name, TargetStats()), joint[t.name]
            print(f"| {names} {area} | {t.name} | {s.programs} | {j.programs} | {f'{j.programs / s.programs:.2f}' if s.programs else '-'} "
                  f"| {s.checks_per_s:,.0f} | {j.checks_per_s:,.0f} | {busy(s):.0%} | {busy(j):.0%} "
                  f"| {after[t.name]:,.0f} | {j.harness_s / j.worker_s if j.worker_s else 0:.1%} "
                  f"({j.calls_s / j.worker_s if j.worker_s else 0:.1%} in calls) |", flush=True)
            if j.waits:
                limits.append(f"{names} {area}, {t.name} waited (host thread {j.host_s:.1f} s): " + ", ".join(
                    f"{why} {s:.1f} s" for why, s in j.waits.most_common()))
            if j.widened:
                limits.append(f"{names} {area}, {t.name}: " + ", ".join(f"{limit} {n}" for (_, limit), n in sorted(j.widened.items())))
    if limits:
        print("\nthe harness's CPU, and the limit that sized each extension:\n" + "\n".join(limits))


if __name__ == "__main__":
    main()
