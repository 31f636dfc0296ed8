"""Another checkout's default campaign, then this checkout's, one after the other on one machine
(the GPU machine: docs/gpu.md), each into a corpus of its own; then both corpora read by this
code: per target its programs, judged lanes and corners (`clfuzz stats --json`), the bug list's
count (`clfuzz buckets`) and the minutes in which a target judged no lane
(corpus.stats.stall_line), with each campaign's own summary (its time table) printed as it ended;
each side's `clfuzz stats --json` is kept beside its corpus (FOLDER/SIDE.stats.json).

Each side runs its own `deploy/gpu.sh` (its wheels, carried in this checkout's .whl/, installed into
a folder of its own), with the same seed and every area. The two campaigns take longer than one
call of the device tool: start it detached and read its output when it is over, e.g.
    setsid -w nohup python3 bench/gpu_pair.py --before out/base --minutes 9 --after-minutes 10 \\
        --folder /tmp/pair > /tmp/pair.log 2>&1 < /dev/null & echo $! > /tmp/pair.pid
and in the next calls (each within the lent machine's idle release of the one before), wait for
its end by its pid (`pgrep -f gpu_pair.py` would match the waiting call's own shell, whose command
line names it, and never end) and copy what it wrote off the machine in the same call:
    while kill -0 "$(cat /tmp/pair.pid)" 2>/dev/null; do sleep 5; done; cp -r /tmp/pair.log /tmp/pair/*.md /tmp/pair/*.json "$OUT"
Give that call a timeout that leaves a few seconds of device time, and copy /tmp/pair.log to $OUT
in every waiting call too: what a call did not copy is lost with the machine.
One checkout against itself with other options on one side: --before . --before-options '--workers 1'.
Run: python3 bench/gpu_pair.py --before CHECKOUT [--before-options '...'] [--minutes 9] [--after-minutes 10]
     [--seed 0] [--folder /tmp/pair]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def campaign(root: Path, minutes: float, seed: int, corpus: Path, site: Path, options: list[str]) -> None:
    """The default campaign of the checkout at ``root`` through its own deploy/gpu.sh (with ``options``
    of its ``clfuzz run`` besides)."""
    if not (root / ".whl").exists():
        shutil.copytree(ROOT / ".whl", root / ".whl")
    env = {**os.environ, "CLFUZZ_SITE": str(site)}
    subprocess.run(["bash", "deploy/gpu.sh", "--minutes", str(minutes), "--seed", str(seed), "--corpus", str(corpus),
                    *options], cwd=root, env=env, check=False)


def read(corpus: Path, site: Path, campaign: str) -> tuple[dict, str, str]:
    """``clfuzz stats --json --campaign`` of ``corpus`` (one pass: it classifies the corners), the
    count of its bug list, and the targets that judged no lane in a minute of ``campaign``
    (corpus.stats.stall_line, imported from this checkout with ``site``'s packages; else "none"),
    by this code."""
    env = {**os.environ, "PYTHONPATH": f"{site}:{ROOT}"}

    def cli(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "app.cli", *args, "--corpus", str(corpus)], cwd=ROOT, env=env,
                              capture_output=True, text=True, check=True).stdout

    sys.path[:0] = [p for p in (str(site), str(ROOT)) if p not in sys.path]
    from corpus.stats import stall_line

    bugs = [line for line in cli("buckets").splitlines() if line.startswith("bug-")]
    stats = json.loads(cli("stats", "--json", "--campaign", campaign))
    return stats, f"{len(bugs)} bugs", (stall_line(stats) or ": none").split(": ", 1)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the other checkout (run first; . for this one)")
    ap.add_argument("--before-options", default="", help="options of its `clfuzz run` besides, e.g. '--workers 1'")
    ap.add_argument("--minutes", type=float, default=9.0, help="its campaign's minutes")
    ap.add_argument("--after-minutes", type=float, help="this checkout's (default: --minutes)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--folder", default="/tmp/pair", help="the corpora and the wheels' folders")
    args = ap.parse_args()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    sides = [("before", Path(args.before).resolve(), args.minutes, args.before_options.split()),
             ("after", ROOT, args.after_minutes or args.minutes, [])]
    for side, root, minutes, options in sides:
        print(f"== {side}: {root}, {minutes:g} minutes {' '.join(options)}", flush=True)
        campaign(root, minutes, args.seed, folder / f"{side}.db", folder / f"site-{side}", options)
        if not (folder / f"{side}.db").exists():
            sys.exit(f"gpu_pair: the {side} campaign wrote no corpus (its output above says why)")
    print("\n| side | target | programs (stats) | judged lanes | corners reached | 90% at (s) | bug list (buckets) "
          "| minutes without a judged lane |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for side, *_ in sides:
        stats, bugs, stalls = read(folder / f"{side}.db", folder / "site-after", f"campaign-{args.seed}")
        (folder / f"{side}.stats.json").write_text(json.dumps(stats, indent=1))  # judged_by_minute and all
        for name, target in stats["targets"].items():
            corners = stats["corners"].get(name, {})
            print(f"| {side} | {name} | {target.get('programs', '-')} | {target.get('judged', 0):,} "
                  f"| {corners.get('reached', '-')} of {corners.get('total', '-')} "
                  f"| {corners.get('seconds_to', {}).get('90')} | {bugs} | {stalls} |")


if __name__ == "__main__":
    main()
