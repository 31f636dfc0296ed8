"""How many of a campaign's buckets are reduced by the time it ends, and why the others are not.

Runs a fixed-seed default campaign through the CLI (``clfuzz run --minutes M --seed S``, every
local target, the default triage share unless ``--triage-share`` is given) into a temporary corpus,
then counts its buckets: those with a wrong lane (corpus.buckets.LANE_KINDS) reduced to one
operation on one work-item, to an interaction (the smallest set of statements, each agreeing
alone), reduced to a complete result that needs more (atomics, a work-group, fused operations:
the reason recorded), stopped by their budget (the reason with its numbers), pending (the reason
the campaign stored) and not reproduced. ``--verbose`` lists every bucket that is not reduced
to one operation with its reason.
Also printed: the bugs the buckets are (triage.bugs). ``--corpus PATH`` counts a campaign already run
(a copy is opened: an older corpus is upgraded) instead of running one.
Run: python3 bench/reduced_share.py [--minutes 5] [--seed 7] [--triage-share 0.25] [--keep DIR] [--corpus PATH]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from corpus.buckets import INTERACTION, LANE_KINDS
from corpus.store import Corpus
from triage.beside import pending_reasons
from triage.bugs import listed
from triage.reduce import STOPPED

ROOT = Path(__file__).resolve().parent.parent


def state(bucket: dict, reasons: dict[str, str]) -> tuple[str, str]:
    """What became of one wrong-lane bucket, with its reason."""
    if bucket["confirmation"] == "flaky":
        return "not reproduced", ""
    reduced = bucket["reduced"]
    if reduced is None:
        why = reasons.get(bucket["id"], "")
        return ("pending, with reason" if why else "pending, no reason"), why
    why = reduced["why"] or ""
    if STOPPED in why:
        return "stopped by its budget", why
    if bucket["signature"]["kind"] == INTERACTION:
        return "interaction", why
    if reduced["statements"] == 1 and reduced["work_items"] == 1 and "operations together" not in why:
        return "one operation, one work-item", why  # an image read's note (the texels it filters) aside
    return "complete, needs more", why


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--triage-share", type=float, help="default: the CLI's")
    ap.add_argument("--keep", type=Path, help="folder for the corpus and the campaign's log (default: temporary)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--corpus", type=Path, help="count this campaign's corpus (a copy) instead of running one")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="clfuzz-reduced-"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "campaign.db"
    if args.corpus:
        shutil.copyfile(args.corpus, path)
    else:
        command = [sys.executable, "-m", "app.cli", "run", "--minutes", str(args.minutes), "--seed", str(args.seed),
                   "--corpus", str(path)]
        if args.triage_share is not None:
            command += ["--triage-share", str(args.triage_share)]
        with open(out / "campaign.log", "w") as log:
            subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True)
        print((out / "campaign.log").read_text().splitlines()[-2])  # the triage line
    corpus = Corpus(path)
    name = f"campaign-{args.seed}"
    buckets = corpus.buckets(name)
    reasons = pending_reasons(corpus, name)
    wrong = [b for b in buckets if b["signature"]["kind"] in LANE_KINDS]
    states = {b["id"]: state(b, reasons) for b in wrong}
    counts = collections.Counter(s for s, _ in states.values())
    done = sum(counts[k] for k in ("one operation, one work-item", "interaction", "complete, needs more"))
    print(f"campaign: {args.minutes:g} min, seed {args.seed}, corpus {path}")
    bugs = listed(corpus, name)[0]
    print(f"buckets: {len(buckets)}; with a wrong lane: {len(wrong)}; bugs: {len(bugs)}")
    for key in ("one operation, one work-item", "interaction", "complete, needs more", "stopped by its budget",
                "pending, with reason", "pending, no reason", "not reproduced"):
        print(f"  {key:30} {counts[key]:4}")
    print(f"reduced to a complete result: {done} of {len(wrong)} ({done / max(1, len(wrong)):.0%})")
    if args.verbose:
        for b in wrong:
            what, why = states[b["id"]]
            if what != "one operation, one work-item":
                print(f"  {b['id']} {what:22} {b['title'][:70]:70} {why}")


if __name__ == "__main__":
    main()
