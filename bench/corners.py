"""How much of the corner table (lang.corners) do N drawn programs reach, with and without the sweep?

For each area with corners (math; expressions: the integer built-ins; conversions; atomics; images; spirv) and each
capability set,
the share of the corners a target with those capabilities can run that the programs exercise
(lang.corners.reached: no driver runs; what the programs would test): N programs drawn the way a
campaign draws them (fuzz.strategies.draws, seed ``--seed``), then the same N preceded by the
area's sweep (fuzz.strategies.sweep_programs), with the number of sweep programs and the
seconds each side took to generate and read.
Run: python3 bench/corners.py [--programs 200] [--seed 0] [--areas math,expressions,conversions,atomics,images,spirv]
"""

from __future__ import annotations

import argparse
import time

import _common  # noqa: F401  (puts the repository on sys.path)

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--areas", default="math,expressions,conversions")
    args = ap.parse_args()
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
