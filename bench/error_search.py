"""Does the feedback search (campaign.targeted, ``score=None``) climb toward larger observed errors?

A stand-in for a driver's error surface: programs are integers in [0, 10^6] and the "observed
error" peaks at one needle (score = -|x - needle|), reported after each program the way the
campaign reports the judge's largest error. For ``--programs`` programs per run and ``--runs``
runs, it prints the closest distance to the needle the search reached with the feedback and with
a constant score (no feedback: Hypothesis's plain generation), and the median of each.

    .venv/bin/python bench/error_search.py --runs 7 --programs 300
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from campaign.targeted import Search

NEEDLE = 777_777


@dataclass(frozen=True)
class _Program:
    value: int

    @property
    def id(self) -> str:
        return str(self.value)


def closest(feedback: bool, programs: int) -> int:
    search = Search(st.integers(0, 10**6).map(_Program), InMemoryExampleDatabase(), None, "bench")
    best = 10**9
    try:
        for _ in range(programs):
            p = search.next(10)
            best = min(best, abs(p.value - NEEDLE))
            search.observed(p.id, -abs(p.value - NEEDLE) if feedback else 0.0)
    finally:
        search.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--programs", type=int, default=300)
    args = parser.parse_args()
    with_feedback = [closest(True, args.programs) for _ in range(args.runs)]
    without = [closest(False, args.programs) for _ in range(args.runs)]
    print(f"closest to the needle after {args.programs} programs, {args.runs} runs")
    print(f"  with feedback:    {with_feedback} median {statistics.median(with_feedback):g}")
    print(f"  without feedback: {without} median {statistics.median(without):g}")


if __name__ == "__main__":
    main()
