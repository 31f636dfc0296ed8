"""Buckets per bug on a fixed list of programs: the keying of corpus schemas 1-5 against the current one.

In one run: ``--programs`` programs per area are drawn with a fixed seed (the same list every run,
whatever the drivers' pace), run on every local target (campaign.execute) into a fresh corpus,
then triaged (triage.session.triage: confirm on a fresh worker, reduce, blame culprits) with
``--triage-minutes``. Reported: the buckets of the signature of corpus schemas 1-5 (area, the
operation as spelled with its widths, types, input class, rule, kind, target, path, driver
version: counted from the same rows), the buckets of the current signature before and after
triage, the share of current buckets reduced, the median seconds to reduce one, and the bug list
(one line per bucket) to read.
Run: python3 bench/buckets.py [--programs 4] [--triage-minutes 6] [--seed 11] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.caps import capabilities
from campaign.execute import execute
from campaign.expectations import Expectations
from corpus.bucket_queries import legacy_bucket_count
from corpus.store import Corpus
from fuzz.drivers import Worker, discover
from fuzz.drivers.capabilities import supports
from fuzz.strategies import AREAS, sample
from lang.policy import Policy
from triage.buglist import bug_list
from triage.session import triage


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=4, help="programs per area")
    ap.add_argument("--triage-minutes", type=float, default=6.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="clfuzz-buckets-")))
    args = ap.parse_args()
    targets = discover()
    caps = capabilities(targets)
    policy = replace(Policy(), statements=16, global_size=1024)
    programs = [p for area in AREAS for p in sample(AREAS[area](caps, policy), args.programs, args.seed)]
    args.out.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(args.out / "buckets.db")
    for t in targets:
        corpus.add_target(t.name, t.path, t.fingerprint_id, t.fingerprint)
    for p in programs:
        corpus.add_program(p, "bench")  # stored before it runs, as a campaign does
    t0 = time.monotonic()
    for t in targets:
        with Worker(t, timeout_s=60) as w:
            for p in programs:
                if supports(t, p):
                    execute(p, t, w, corpus, campaign="bench", expectations=Expectations(p))
    run_s = time.monotonic() - t0
    old = legacy_bucket_count(corpus, "bench")
    before = len(corpus.buckets("bench"))
    t0 = time.monotonic()
    triaged = triage(corpus, targets, "bench", args.triage_minutes * 60)
    triage_s = time.monotonic() - t0
    bugs = bug_list(corpus.buckets())
    times = [r["seconds"] for r in corpus.reductions()]
    reduced = sum(b["reduced"] is not None for b in bugs)
    print(f"{len(programs)} programs on {len(targets)} targets in {run_s:.0f} s; triage {triage_s:.0f} s")
    print(f"buckets, signature of schemas 1-5: {old}")
    print(f"buckets, current signature: {before} before triage, {len(bugs)} after")
    print(f"reduced: {reduced} of {len(bugs)}; median reduction {statistics.median(times) if times else 0:.2f} s; "
          f"left by the triage budget: {len(triaged.left)}")
    for b in bugs:
        size = f"{b['reduced']['statements']}st/{b['reduced']['work_items']}wi" if b["reduced"] else "unreduced"
        print(f"  {b['id']} {b['severity']:<14} {','.join(b['paths']):<16} {b['rows']:>5} {size:<10} {b['title']}")
    (args.out / "buglist.json").write_text(json.dumps(bugs, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
