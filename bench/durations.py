"""Campaigns end when they are told: `clfuzz run --minutes M` as a user runs it, requested against
real duration (the process's wall time, measured from outside it).

Each campaign in ``--minutes`` (a comma-separated list) runs on every local driver into one fresh
corpus; campaigns alternate between a new name and resuming the previous one, so resumed runs
(pending programs and buckets first) are measured too. Reported per campaign: requested and real
seconds, the overrun, and what the summary line says (programs, pending).
Run: python3 bench/durations.py [--minutes 1,1,1,2,2,2,3,3,4,5] [--areas ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", default="1,1,1,2,2,2,3,3,4,5")
    ap.add_argument("--areas", default="", help="areas (default: all)")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="clfuzz-durations-"))
    print("| # | campaign | requested s | real s | overrun s | grace s | summary |")
    print("|---|---|---|---|---|---|---|")
    for i, minutes in enumerate(float(m) for m in args.minutes.split(",")):
        name = f"c{i // 2}"  # every second run resumes the one before
        cmd = [sys.executable, "-m", "app.cli", "run", "--minutes", f"{minutes:g}", "--corpus", str(folder / "c.db"),
               "--name", name]
        if i % 2 == 0:  # a new campaign; a resumed one takes its stored settings
            cmd += ["--seed", str(i // 2)] + (["--areas", args.areas] if args.areas else [])
        t0 = time.monotonic()
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        real = time.monotonic() - t0
        last = (out.stdout.strip().splitlines() or [out.stderr.strip()])[-1]
        budget = 60 * minutes
        print(f"| {i + 1} | {name}{' (resumed)' if i % 2 else ''} | {budget:.0f} | {real:.1f} | {real - budget:+.1f} "
              f"| {max(15.0, 0.1 * budget):.0f} | {last[:110]} |", flush=True)


if __name__ == "__main__":
    main()
