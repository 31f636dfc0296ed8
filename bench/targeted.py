"""Does Hypothesis's target() help? Coverage cells reached by N programs, with and without it.

For each area, in one run of this script: N programs drawn the way a campaign draws them with
``Policy.p_targeted`` = 0 (independent draws only) and with a share ``--share`` from the targeted
search (campaign.targeted: Hypothesis's ``@given`` loop whose ``target()`` score is the number of
cells a program adds), both scored by the same measure: distinct coverage cells (construct x type
x width, corpus.coverage) among the programs generated. No driver runs: the score is the
generator-side gap a program would close. Each side is repeated with ``--repeat`` seeds; medians.
Run: python3 bench/targeted.py [--programs 300] [--repeat 3] [--areas conversions,expressions]
"""

from __future__ import annotations

import argparse
import statistics
import time

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.targeted import Search
from corpus.coverage import program_cells
from corpus.hypothesis_db import CorpusDatabase
from corpus.store import Corpus
from fuzz.strategies import AREAS, Caps, Draws
from lang.policy import Policy

CAPS = Caps(fp64=True, fp16=False, int64=True)


def cells_reached(area: str, n: int, seed: int, share: float) -> tuple[int, float]:
    """Distinct cells among ``n`` programs of ``area`` (a ``share`` of them from the targeted
    search), and the seconds it took to generate them."""
    import random

    policy = Policy()
    draws = Draws(AREAS[area](CAPS, policy), seed)
    seen: set = set()
    search = Search(AREAS[area](CAPS, policy), CorpusDatabase(Corpus(":memory:"), area),
                    lambda p: len(program_cells(p).keys() - seen), area) if share else None
    rng = random.Random(seed)
    t0 = time.perf_counter()
    index = 0
    try:
        for _ in range(n):
            program = search.next() if search and rng.random() < share else None
            if program is None:
                program = draws[index]
                index += 1
            seen |= program_cells(program).keys()
    finally:
        if search:
            search.close()
    return len(seen), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--areas", default="conversions,expressions,atomics,images")
    ap.add_argument("--share", type=float, default=0.25, help="share of programs from the targeted search")
    args = ap.parse_args()
    share = args.share
    print(f"{args.programs} programs per area; targeted share {share:.0%}; medians of {args.repeat} seeds")
    print(f"{'area':12} {'cells, draws only':>18} {'cells, with target()':>21} {'ratio':>6} {'s draws':>8} {'s with':>7}")
    for area in args.areas.split(","):
        plain = [cells_reached(area, args.programs, s, 0.0) for s in range(args.repeat)]
        aimed = [cells_reached(area, args.programs, s, share) for s in range(args.repeat)]
        a, b = statistics.median(c for c, _ in plain), statistics.median(c for c, _ in aimed)
        print(f"{area:12} {a:18.0f} {b:21.0f} {b / a:6.2f} {statistics.median(t for _, t in plain):8.1f} "
              f"{statistics.median(t for _, t in aimed):7.1f}", flush=True)


if __name__ == "__main__":
    main()
