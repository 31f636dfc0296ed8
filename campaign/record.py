"""The running side's one writer: programs, runs and disagreements into the corpus.

Everything that runs programs (campaign.execute, campaign.pipeline, campaign.campaign) decides
and judges without writing; what it produced comes here to become corpus rows. A program is
stored before it runs (a driver that crashes the machine leaves it in the corpus); a run and its
disagreements (and oracle defects, campaign.rederive: each also one line on stderr) are one
transaction.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Iterable

from campaign.flow_variants import detail
from campaign.jobs import build_options
from campaign.rederive import line
from corpus.store import Corpus
from corpus.variants import add_variant, variant_of
from fuzz.drivers import Result, Target
from fuzz.judge import Verdict
from lang.ir import Program


@dataclass
class Run:
    """One run of a part as the corpus records it (:func:`record_run`): the
    driver's result, the status recorded (``split`` when it is isolated by halving), why, and
    the disagreement rows, largest errors and oracle defects (campaign.rederive) of its verdict or
    failure."""

    program: Program
    target: Target
    result: Result
    status: str
    log: str
    verdict: Verdict | None = None
    rows: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    defects: list[dict] = field(default_factory=list)


def store_parts(corpus: Corpus | None, program: Program, parts: Iterable[Program], campaign: str) -> None:
    """Store the parts of ``program`` about to run (batches, halves) that are not the program
    itself, before they run."""
    if corpus is None:
        return
    for part in parts:
        if part is not program:
            corpus.add_program(part, campaign)


def link_variants(corpus: Corpus | None, variants: Iterable[tuple[Program, str, str]]) -> None:
    """Record each stored variant's link (the variant, its original's id, its kind:
    campaign.flow_variants) before it runs."""
    if corpus is None:
        return
    for program, original_id, kind in variants:
        add_variant(corpus, program.id, original_id, kind)


def store_program(corpus: Corpus, program: Program, campaign: str) -> None:
    """Store a drawn program before any target runs it."""
    corpus.add_program(program, campaign)


def record_run(corpus: Corpus | None, run: Run, campaign: str) -> None:
    """One run of a program and its disagreement rows (or failure row) and oracle defects, in one
    transaction; the run records the options it was built with (campaign.jobs.build_options, what
    its job passed); each oracle defect is also one line on stderr, corpus or not."""
    target, result, verdict = run.target, run.result, run.verdict
    for d in run.defects:
        print(line(d, target.name), file=sys.stderr)
    if corpus is None:
        return
    keys = {"program_id": run.program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
            "path": target.path}
    options = build_options(run.program, target.path, target.lineage, target.fingerprint)
    row = {**keys, "status": run.status, "options": options, "build_s": result.build_s, "run_s": result.run_s,
           "log": run.log, "campaign": campaign, "checks": verdict.checks if verdict else 0,
           "judged": verdict.judged if verdict else 0, "mismatches": verdict.mismatches if verdict else 0}
    link = variant_of(corpus, run.program.id) if run.rows else None
    for r in (*run.rows, *run.defects):
        r.update(keys)
        if link and r.get("kind") == "wrong-code":
            r["deviation_detail"] = r.get("deviation_detail", "") + detail(link["kind"], link["original_id"])
    corpus.add_run(row, run.rows, run.errors, run.defects)


def register_targets(corpus: Corpus, targets: Iterable[Target]) -> None:
    """The targets of a campaign with their fingerprints."""
    for t in targets:
        corpus.add_target(t.name, t.path, t.fingerprint_id, t.fingerprint)


def save_campaign(corpus: Corpus, name: str, seed: int, settings: dict, programs: int, checks: int,
                  state: dict) -> None:
    """A campaign's settings, counts and scheduler state (resumable)."""
    corpus.update_campaign(name, seed, settings, programs, checks, state)
