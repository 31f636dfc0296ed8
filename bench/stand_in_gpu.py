"""What a GPU's extensions cost the campaign's own process, measured without a GPU.

A GPU builds slowly and runs fast, so its extensions (campaign.widening) put the harness's work,
and the campaign's one process that moves their bytes, on its critical path; GPU time is scarce,
so this measures that process on this machine: a local target (default ``pocl``) is counted as a
GPU (its parts get extensions, as campaign.widening.extensible gives a device that is not a CPU),
with a pool of ``--jobs`` worker processes, ``--areas`` (default conversions) and no corner sweep.
In one run, ``--repeat`` times, alternating: the campaign of this checkout and, with ``--before
PATH``, of the checkout at PATH; each in a process of its own, into a fresh corpus. Reported per
side, medians: judged lanes, the campaign process's CPU seconds (campaign.progress.PoolStats), its
nanoseconds per judged lane (the figure to compare: the target's own speed is the local CPU's), and
the target's wait for the harness as a share of its wall time.
Run: python3 bench/stand_in_gpu.py [--minutes 0.5] [--repeat 3] [--target pocl] [--areas conversions]
     [--jobs 2] [--seed 7] [--before /path/to/checkout]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
import campaign.pipeline as pipeline
from campaign.campaign import run_campaign
from corpus.store import Corpus
from fuzz.drivers import discover
from lang.derive import independent
from lang.ir import Program
from lang.policy import Policy
pipeline.extensible = lambda target, p: (isinstance(p, Program) and independent(p)
                                         and any(b.fill.values == () for b in p.inputs))  # a GPU's
if __name__ == "__main__":
    targets = [t for t in discover() if t.name == {target!r}]
    result = run_campaign(Corpus({path!r}), targets, minutes={minutes!r}, seed={seed!r}, areas={areas!r},
                          policy=Policy(corner_sweep=False), jobs={jobs!r}, name="stand-in")
    s = result.targets[{target!r}]
    print(json.dumps({{"lanes": s.judged, "cpu_s": result.pool.process_cpu_s, "harness": s.harness_s / s.wall_s}}))
"""


def campaign(root: Path, args: argparse.Namespace, path: Path) -> dict:
    """One campaign in a process of its own on the checkout at ``root``."""
    code = CHILD.format(root=str(root), target=args.target, path=str(path), minutes=args.minutes, seed=args.seed,
                        areas=tuple(args.areas.split(",")), jobs=args.jobs)
    script = path.with_suffix(".py")
    script.write_text(code)  # a file: the pool's worker processes import the main module again
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target", default="pocl")
    ap.add_argument("--areas", default="conversions")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--before", type=Path, help="a checkout of the code to compare against")
    args = ap.parse_args()
    sides = {"this checkout": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-stand-in-"))
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for i in range(args.repeat):
        for side, root in sides.items():
            runs[side].append(campaign(root, args, folder / f"{side.replace(' ', '-')}-{i}.db"))
    print("| side | judged lanes | campaign process CPU s | ns a judged lane | harness share |\n|---|---|---|---|---|")
    for side, got in runs.items():
        def median(key: str) -> float:
            return statistics.median(r[key] for r in got)
        per_lane = statistics.median(r["cpu_s"] / max(r["lanes"], 1) * 1e9 for r in got)
        print(f"| {side} | {median('lanes'):,.0f} | {median('cpu_s'):.1f} | {per_lane:.1f} | {median('harness'):.1%} |")


if __name__ == "__main__":
    main()
