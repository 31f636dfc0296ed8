"""How much of the corner table (lang.corners) do N drawn programs reach, with and without the sweep?

For each area with corners (math; expressions: the integer built-ins; conversions; atomics; images; spirv) and each
capability set,
the share of the corners a target with those capabilities can run that the programs exercise
(lang.corners.reached: no driver runs; what the programs would test): N programs drawn the way a
campaign draws them (fuzz.strategies.draws, seed ``--seed``), then the same N preceded by the
area's sweep (fuzz.strategies.sweep_programs), with the number of sweep programs and the
seconds each side took to generate and read.
Run: python3 bench/corners.py [--programs 200] [--seed 0] [--areas math,expressions,conversions,atomics,images,spirv]

With ``--campaigns MINUTES`` it runs default campaigns instead (``clfuzz run``, every area, triage
beside, one driver at a time, ``--drivers rusticl,pocl``; ``rusticl+oclgrind``: both in one campaign),
once with the checkout ``--before``
(another working tree of clfuzz, run from its own folder) and once with this one, one after the
other, fresh corpora, the same seed; reported per target, read by this checkout's corner table
(corpus.corners): the share of its table reached, the ratio after/before, and the seconds to 50%
and 90% of the table (``clfuzz stats --json``, ``seconds_to``); ``--rounds 2`` runs before, after,
after, before and gives the means.
Run: python3 bench/corners.py --campaigns 2 --drivers rusticl,pocl --before ../main [--seed 7] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from corpus.corners import corners
from corpus.store import Corpus
from fuzz.strategies import AREAS, Caps, Draws, sweep_programs
from lang.corners import reached, runnable
from lang.corners.images import capabilities as image_capabilities
from lang.images import CHANNEL_TYPES, DIMS, ORDERS, format_key, modelled
from lang.ops import ATOMIC_FEATURES
from lang.policy import Policy

CAPABILITY_SETS = {
    "float only (1.2)": (Caps(fp64=False, fp16=False), frozenset({"int64"})),
    "fp64 (1.2)": (Caps(fp64=True), frozenset({"int64", "fp64"})),
    "fp64 fp16 cl2.0": (Caps(fp64=True, fp16=True, versions=frozenset({"cl2.0"})),
                        frozenset({"int64", "fp64", "fp16", "cl2.0"})),
}
_FORMATS = frozenset((d, format_key(o, c)) for d in DIMS for o in ORDERS for c in CHANNEL_TYPES if modelled(o, c))
_IMAGES_FP = {"image_support": True, "image_formats": {d: sorted(f for e, f in _FORMATS if e == d) for d in DIMS}}
AREA_SETS = {
    "atomics": {"legacy atomics only": (Caps(), frozenset({"int64"})),
                "every atomic feature": (Caps(atomics=frozenset(ATOMIC_FEATURES)),
                                         frozenset({"int64", *ATOMIC_FEATURES}))},
    "images": {"every modelled format, fp16": (Caps(fp16=True, images=(_FORMATS,)),
                                              frozenset({"int64", "fp16"}) | image_capabilities(_IMAGES_FP))},
    "spirv": {"a SPIR-V path, fp64": (Caps(fp64=True), frozenset({"int64", "fp64", "spirv"}))},
}
"""The capability sets of the areas whose corners need more than types (the others: CAPABILITY_SETS)."""


HERE = Path(__file__).resolve().parent.parent


def campaign(tree: Path, driver: str, minutes: float, seed: int, path: Path) -> dict:
    """A default campaign of ``minutes`` on ``driver`` run by the checkout ``tree``; the corners of
    each of its targets (this checkout's table)."""
    subprocess.run([sys.executable, "-m", "app.cli", "run", "--minutes", str(minutes), "--drivers", driver.replace("+", ","),
                    "--seed", str(seed), "--corpus", str(path)], cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
                   check=True, stdout=subprocess.DEVNULL)
    corpus = Corpus(path)
    try:
        return corners(corpus)
    finally:
        corpus.close()


def campaigns(minutes: float, drivers: list[str], before: Path, seed: int, rounds: int) -> None:
    """Per driver, ``rounds`` pairs of campaigns, before then after, the next pair the other way
    round (ABBA: a machine that slows down during the run favours neither side); per target the
    mean share reached and the mean seconds (``-`` where some campaign never got there)."""
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-corners-"))
    print("| target | before: reached | after: reached | after/before | before: s to 50% | after: s to 50% "
          "| before: s to 90% | after: s to 90% |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for driver in drivers:
        got: dict[str, list[dict]] = {"before": [], "after": []}
        for r in range(rounds):
            for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
                tree = before if side == "before" else HERE
                got[side].append(campaign(tree, driver, minutes, seed, folder / f"{side}-{r}-{driver.replace('/', '_')}.db"))
        for target in sorted(got["after"][0]):
            side = {k: [c.get(target, {"reached": 0, "total": 1, "seconds_to": {}}) for c in v] for k, v in got.items()}
            share = {k: statistics.mean(c["reached"] / c["total"] for c in v) for k, v in side.items()}

            def when(k: str, p: str) -> str:
                times = [c["seconds_to"].get(p) for c in side[k]]
                return "-" if None in times else f"{statistics.mean(times):.0f}"
            print(f"| {target} | {share['before']:.1%} | {share['after']:.1%} | {share['after'] / max(share['before'], 1e-9):.2f} "
                  f"| {when('before', '50')} | {when('after', '50')} | {when('before', '90')} | {when('after', '90')} |",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--areas", default="math,expressions,conversions")
    ap.add_argument("--campaigns", type=float, help="minutes of each default campaign (before/after mode)")
    ap.add_argument("--drivers", default="rusticl,pocl")
    ap.add_argument("--before", type=Path, help="another checkout of clfuzz: the code before")
    ap.add_argument("--rounds", type=int, default=1, help="pairs of campaigns per driver (ABBA order)")
    args = ap.parse_args()
    if args.campaigns:
        if args.before is None:
            ap.error("--campaigns needs --before (another checkout of clfuzz)")
        campaigns(args.campaigns, args.drivers.split(","), args.before.resolve(), args.seed, args.rounds)
        return
    policy = Policy()
    print(f"| area | capabilities | corners | {args.programs} drawn | sweep programs | sweep + {args.programs} drawn |")
    print("|---|---|---|---|---|---|")
    for area in args.areas.split(","):
        for label, (caps, capabilities) in AREA_SETS.get(area, CAPABILITY_SETS).items():
            table = {c for c in runnable(capabilities) if c.area == area}
            t = time.perf_counter()
            draws = Draws(AREAS[area](caps, policy), args.seed)
            drawn: set = set()
            for i in range(args.programs):
                drawn |= reached(draws[i])
            t_drawn = time.perf_counter() - t
            t = time.perf_counter()
            sweep = sweep_programs(area, caps, policy)
            swept: set = set()
            for p in sweep:
                swept |= reached(p)
            t_sweep = time.perf_counter() - t
            share = len(drawn & table) / len(table)
            both = len((drawn | swept) & table) / len(table)
            print(f"| {area} | {label} | {len(table):,} | {share:.1%} ({t_drawn:.0f} s) | {len(sweep)} "
                  f"({t_sweep:.1f} s) | {both:.1%} |", flush=True)


if __name__ == "__main__":
    main()
