"""What re-deriving every disagreement costs (campaign.rederive): per row, against the campaign.

A campaign stores about 17 disagreement rows a second on the 2-core development machine (449 at its
peak). Before it stores one, campaign.rederive computes the row's statement again on its one
work-item with the uncached exact reference (oracles.rederive: no filter in front of mpmath, no
operand-set cache). This script draws programs of each area of ``--areas`` as a campaign does
(fuzz.strategies.AREAS, the default policy but ``--work-items`` work-items), computes their
expectations as a campaign does (the fast path, timed: the oracle's cost per lane), makes rows as
the judge makes them (fuzz.judge.judge, with up to 8 rows per statement: ``--rows`` lanes of each
statement given a wrong value, a bit of the reference flipped) and times campaign.rederive.confirm
on them. Every row of this sample is a true disagreement, so every one must be confirmed: an
oracle defect here is printed and the script exits 1.

It prints, per area: rows, re-derivations (one per statement and work-item with rows), the
re-derivation's CPU time per row and per lane of the rows' work-items, the fast path's time per
lane for comparison, and what the re-derivation adds to a campaign at 17 and at 449 rows a second
(the share of one core). Times are the process's CPU time (``time.process_time``).

``--corpus PATH`` re-derives instead every wrong or imprecise row a corpus holds (of programs
without shared locations) and compares it with the accepted set stored with the row: it prints
how many are confirmed, the CPU time per row, and each one that is not (exit 1). Opening a corpus
upgrades its schema: pass a copy of one an older clfuzz wrote.

    python3 bench/rederive.py [--programs 6] [--areas math,conversions,expressions,images]
        [--work-items 256] [--rows 8] [--seed 0]
    python3 bench/rederive.py --corpus COPY.db
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

import numpy as np

import _common  # noqa: F401  (the repository on sys.path)
from campaign.expectations import Expectations
from campaign.rederive import accepted_set, confirm, line, rederived
from corpus.buckets import RESULT_KINDS
from corpus.reads import fingerprint_of
from corpus.store import Corpus
from fuzz.drivers.capabilities import ftz_for
from fuzz.judge import judge
from fuzz.strategies import AREAS, Caps, sample
from lang.ir import Program
from lang.layout import input_values
from lang.policy import Policy
from lang.types import scalar

CAMPAIGN_ROWS_PER_S = (17, 449)
"""Disagreement rows a campaign stores per second on the development machine: typical, peak."""


def wrong_outputs(program: Program, expectations: dict, rows: int, rng: np.random.Generator) -> dict:
    """Every output at its reference value, but ``rows`` judged lanes of each statement's result
    off by a flipped bit of their reference (a rejected value)."""
    out = {}
    for name, exp in expectations.items():
        bits = exp.allowed[0].copy()
        judged = np.flatnonzero(exp.judged)
        for pos in rng.choice(judged, min(rows, len(judged)), replace=False) if len(judged) else ():
            lane = exp.select(np.array([pos]))
            width = scalar(exp.scalar).bits
            for flip in (width - 2, width - 3, 0, 1):  # an exponent bit first, then the lowest
                bits[pos] = exp.allowed[0][pos] ^ bits.dtype.type(1 << flip)
                if not lane.accepts(bits[pos: pos + 1])[0]:
                    break
            else:
                bits[pos] = exp.allowed[0][pos]
        out[name] = bits.view(scalar(exp.scalar).dtype)
    return out


def stored_rows(path: str) -> int:
    """Every stored wrong or imprecise row of the corpus at ``path`` re-derived against its stored
    accepted set (module docstring); the number not confirmed."""
    corpus = Corpus(path, create=False)
    rows = [r for r in corpus.disagreements() if r["kind"] in RESULT_KINDS and r["work_item"] >= 0]
    programs: dict[str, tuple[Program, dict]] = {}
    fresh: dict[tuple, dict] = {}
    confirmed, checked, cpu = 0, 0, 0.0
    for row in rows:
        if row["program_id"] not in programs:
            program = corpus.program(row["program_id"])
            programs[row["program_id"]] = program, ({} if program.shared else input_values(program))
        program, inputs = programs[row["program_id"]]
        if program.shared:
            continue
        ftz = ftz_for(fingerprint_of(corpus, row["fingerprint_id"]))
        t0 = time.process_time()
        again, lane = rederived(program, row, ftz, inputs, fresh.setdefault((row["program_id"], ftz), {}))
        derived = accepted_set(again, lane)
        cpu += time.process_time() - t0
        checked += 1
        if derived == frozenset(json.loads(row["allowed"])):
            confirmed += 1
        else:
            print(f"not confirmed: {row['target']} {row['expression']} work-item {row['work_item']} lane "
                  f"{row['lane']}: stored {row['allowed']}, re-derived {sorted(derived)}, actual {row['actual_value']}")
    print(f"{path}: {checked} rows re-derived ({len(rows) - checked} of programs with shared locations skipped), "
          f"{confirmed} confirmed, {checked - confirmed} not; {1e3 * cpu / max(checked, 1):.3f} ms CPU per row")
    return checked - confirmed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=6)
    ap.add_argument("--areas", default="math,conversions,expressions,images")
    ap.add_argument("--work-items", type=int, default=256)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus", help="re-derive the rows this corpus holds instead (pass a copy: it is upgraded)")
    args = ap.parse_args()
    if args.corpus:
        return 1 if stored_rows(args.corpus) else 0
    rng = np.random.default_rng(args.seed)
    n = args.work_items
    policy = replace(Policy(), global_size=n, math_global_size=n, image_global_size=n)
    caps = Caps(fp64=True, fp16=True)
    ftz = frozenset()
    print(f"{'area':12} {'rows':>5} {'rederived':>9} {'ms/row':>8} {'ms/lane':>8} {'fast ms/lane':>12} "
          f"{'+core@17/s':>10} {'+core@449/s':>11}")
    failed = 0
    for area in args.areas.split(","):
        programs = [p for p in sample(AREAS[area](caps, policy), args.programs, args.seed) if not p.shared]
        rows = rederived = lanes = fast_lanes = 0
        fast_s = slow_s = 0.0
        for program in programs:
            t0 = time.process_time()
            whole = Expectations(program)
            exp = whole.get(ftz)
            fast_s += time.process_time() - t0
            fast_lanes += sum(len(e) for e in exp.values())
            verdict = judge(program, exp, wrong_outputs(program, exp, args.rows, rng), whole.inputs)
            t0 = time.process_time()
            kept, defects = confirm(program, verdict.rows, exp, ftz, whole.inputs)
            slow_s += time.process_time() - t0
            for d in defects:
                print(line(d, f"{area} program {program.id}"), file=sys.stderr)
            failed += len(defects)
            rows += len(verdict.rows)
            items = {(r["buffer"], r["work_item"]) for r in verdict.rows}
            rederived += len(items)
            lanes += sum(program.buffer(b).type.mem_lanes for b, _ in items)
        if not rows:
            print(f"{area:12} no rows")
            continue
        per_row = 1e3 * slow_s / rows
        print(f"{area:12} {rows:5d} {rederived:9d} {per_row:8.3f} {1e3 * slow_s / lanes:8.3f} "
              f"{1e3 * fast_s / fast_lanes:12.4f} "
              + " ".join(f"{rate * per_row / 1e3:{w}.1%}" for rate, w in zip(CAMPAIGN_ROWS_PER_S, (10, 11))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
