"""The image-read oracle on a GPU's windows: CPU nanoseconds a judged lane, this checkout against another.

A GPU's image extensions are judged in windows of about 2^21 lanes (campaign.widening), each a
program whose expectations one harness worker process computes (oracles.images): on an H100 or
H200 machine that CPU, not NVIDIA, bounded the images area (docs/gpu.md). This draws ``--programs``
images programs of the campaign's stream (seed ``--seed``, the capabilities of the drivers found
here), takes each one's first window after its own work-items, and times the oracle on them (the
expectations of one flush-to-zero class: the process's CPU time), in a process of its own per
checkout, ``--repeat`` times alternating with ``--before PATH``. Reported: medians, and the ratio.
Run: python3 bench/oracle_images.py [--programs 12] [--repeat 3] [--seed 7] [--before /path/to/checkout]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from _common import child_json

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from campaign.caps import capabilities
from campaign.widening import window_items
from fuzz.drivers import discover
from fuzz.strategies import AREAS, Draws
from lang.derive import window
from lang.layout import input_values
from lang.policy import Policy
from oracles import expected
draws = Draws(AREAS["images"](capabilities(discover()), Policy(corner_sweep=False)), {seed!r})
lanes = cpu = 0.0
for i in range({programs!r}):
    part = draws[i]
    w = window(part, part.global_size, window_items(part))
    inputs = input_values(w)
    t0 = time.process_time()
    expected(w, frozenset(), inputs, None)
    cpu += time.process_time() - t0
    lanes += sum(b.type.mem_lanes for b in w.outputs) * w.global_size
print(json.dumps({{"lanes": lanes, "cpu_s": cpu}}))
"""


def measure(root: Path, args: argparse.Namespace) -> dict:
    code = CHILD.format(root=str(root), seed=args.seed, programs=args.programs)
    return child_json(code, root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--before", type=Path, help="a checkout of the code to compare against")
    args = ap.parse_args()
    sides = {"this checkout": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for _ in range(args.repeat):
        for side, root in sides.items():
            runs[side].append(measure(root, args))
    per_lane = {side: statistics.median(r["cpu_s"] / r["lanes"] * 1e9 for r in got) for side, got in runs.items()}
    print("| side | lanes | ns a lane (median) |\n|---|---|---|")
    for side, got in runs.items():
        print(f"| {side} | {got[0]['lanes']:,.0f} | {per_lane[side]:.0f} |")
    if "before" in per_lane:
        print(f"\nbefore / this checkout: {per_lane['before'] / per_lane['this checkout']:.2f}x")


if __name__ == "__main__":
    main()
