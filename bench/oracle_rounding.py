"""Rounding to nearest even into a floating type: numpy's casts (oracles.rounding.nearest_even)
against the integer rounding (oracles.rounding.round_exactly, mode "rte"), per pair of types, on
1,000,000 edge-biased values (tests.oracles.test_conversions.sample), best of three; the ratio is
measured in the same run.

    python3 bench/oracle_rounding.py [--n 1000000]
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import best  # (and the repository on sys.path)

from lang.types import scalar
from oracles.rounding import nearest_even, round_exactly
from tests.exact import FLOATS
from tests.oracles.test_conversions import sample

SOURCES = ("short", "int", "uint", "long", "ulong", "half", "float", "double")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    n = ap.parse_args().n
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, {n:,} values a pair, best of 3 (millions a second)")
    print("| pair | round_exactly | nearest_even | ratio |\n|---|---:|---:|---:|")
    for src in SOURCES:
        for dst in FLOATS:
            if src == dst:
                continue
            s, d, v = scalar(src), scalar(dst), sample(src, n, rng)
            slow, fast = best(lambda: round_exactly(v, s, d, "rte")), best(lambda: nearest_even(v, s, d))
            print(f"| {src} -> {dst} | {n / slow / 1e6:.1f} | {n / fast / 1e6:.1f} | {slow / fast:.1f} |")


if __name__ == "__main__":
    main()
