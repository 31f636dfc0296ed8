"""What judging a flow program costs: the exact interpreter against a driver's build and run.

For ``--programs`` drawn flow programs (fuzz.strategies.flow, seeds from ``--seed``): the time of
the interpreter (oracles.flow: every output of every work-item) and, on ``--driver``, the build
and run times the worker measures (a fresh worker; PoCL may serve a build from its kernel cache)
and the lanes that differ from the interpreter's.
Run: python3 bench/flow.py [--programs 30] [--seed 0] [--driver pocl]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.flow import flow_job, judge_flow
from fuzz.drivers import Worker, discover
from fuzz.drivers.capabilities import ftz_of
from fuzz.strategies.flow import generate
from oracles import flow_outcomes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--driver", default="pocl")
    args = ap.parse_args()
    target = next(t for t in discover() if t.name == args.driver)
    interp, build, run, items, wrong, failed = [], [], [], [], 0, 0
    with Worker(target, timeout_s=120) as worker:
        for seed in range(args.seed, args.seed + args.programs):
            p = generate(random.Random(seed))
            t0 = time.perf_counter()
            expected = flow_outcomes(p)
            interp.append(time.perf_counter() - t0)
            result = worker.run(flow_job(p))
            items.append(p.work_items)
            if not result.ok:
                failed += 1
                continue
            build.append(result.build_s)
            run.append(result.run_s)
            wrong += len(judge_flow(p, result.outputs["out"], "float" not in ftz_of(target), expected)[1])
    med = statistics.median
    print(f"{args.programs} programs, median {med(items)} work-items; {failed} did not run, {wrong} lanes differ")
    print(f"interpreter: median {med(interp) * 1e3:.1f} ms, max {max(interp) * 1e3:.1f} ms")
    if build:
        print(f"{args.driver}: build median {med(build) * 1e3:.1f} ms, run median {med(run) * 1e3:.1f} ms, "
              f"build+run median {med([b + r for b, r in zip(build, run)]) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
