"""Checks per second per driver as a function of the batch: statements per program x work-items.

Each cell runs the same seeded sample of programs through a real worker (build + run + read back
+ oracle + judge, i.e. what a campaign pays per program) and reports judged lanes per second.
Run: python3 bench/batch_size.py [--programs 3] [--drivers pocl,rusticl,oclgrind]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from _common import Policy, sample_programs

from campaign.caps import capabilities
from campaign.execute import execute
from fuzz.drivers import Worker, discover, select
from fuzz.drivers.capabilities import supports

STATEMENTS = (8, 24, 48, 96, 192)
GLOBAL_SIZES = (64, 256, 1024)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=3)
    ap.add_argument("--drivers")
    ap.add_argument("--statements", default=",".join(map(str, STATEMENTS)))
    ap.add_argument("--global-sizes", default=",".join(map(str, GLOBAL_SIZES)))
    args = ap.parse_args()
    targets = select(discover(), args.drivers.split(",") if args.drivers else None)
    caps = capabilities(targets)
    print(f"{'driver':10} {'stmts':>6} {'items':>6} {'checks/s':>12} {'s/program':>10} {'driver s':>9}")
    for target in targets:
        best = (0.0, None)
        with Worker(target, timeout_s=120) as worker:
            for stmts in map(int, args.statements.split(",")):
                for size in map(int, args.global_sizes.split(",")):
                    policy = replace(Policy(), statements=stmts, global_size=size)
                    programs = [p for p in sample_programs(args.programs, caps, policy, seed=11) if supports(target, p)]
                    t0 = time.perf_counter()
                    judged = driver_s = 0.0
                    for p in programs:
                        o = execute(p, target, worker, None)
                        judged += o.verdict.judged
                        driver_s += o.driver_s
                    wall = time.perf_counter() - t0
                    rate = judged / wall if wall else 0.0
                    best = max(best, (rate, (stmts, size)))
                    print(f"{target.name:10} {stmts:6} {size:6} {rate:12,.0f} {wall / max(1, len(programs)):10.3f} "
                          f"{driver_s / max(1, len(programs)):9.3f}", flush=True)
        print(f"{target.name}: best {best[0]:,.0f} checks/s at statements={best[1][0]} global_size={best[1][1]}")


if __name__ == "__main__":
    main()
