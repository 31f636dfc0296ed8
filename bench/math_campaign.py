"""A math campaign with the oracle's vectorized filter against one without it (mpmath for every
lane), in one run: the same seed, areas=math, every local target, fresh corpora, no triage.
Reported: programs, judged lanes and buckets (distinct bugs) of each.
Run: python3 bench/math_campaign.py [--minutes 2] [--seed 5]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.campaign import run_campaign
from corpus.store import Corpus
from fuzz.drivers import discover
from oracles.math import engine


def campaign(minutes: float, seed: int, path: Path) -> tuple[int, int, int]:
    corpus = Corpus(path)
    try:
        result = run_campaign(corpus, discover(), minutes=minutes, seed=seed, areas=("math",), name="math")
        return result.programs, sum(s.judged for s in result.targets.values()), len(corpus.buckets("math"))
    finally:
        corpus.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-math-"))
    fast = campaign(args.minutes, args.seed, folder / "fast.db")
    filtered = engine.filtered
    engine.filtered = lambda *a, **k: None  # every lane to mpmath, as before the filter
    try:
        slow = campaign(args.minutes, args.seed, folder / "mpmath.db")
    finally:
        engine.filtered = filtered
    print("| oracle | programs | judged lanes | buckets |\n|---|---|---|---|")
    for name, (programs, judged, buckets) in (("filter + mpmath", fast), ("mpmath only", slow)):
        print(f"| {name} | {programs} | {judged:,} | {buckets} |")


if __name__ == "__main__":
    main()
