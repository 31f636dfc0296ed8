"""The smoke campaign of ``clfuzz ci`` (app.ci runs it): a bounded campaign, and one case per bucket
each target hit, judged against what is known.

``campaign.campaign.run_campaign`` runs for ``--minutes`` (name ``ci-SEED``; shard K of a
``--fraction`` run uses seed SEED+K-1), without triage. Every disagreement (a crash, timeout or
build error included: they are buckets of their own kinds) falls in a bucket; each (target,
bucket) the run hit is a case whose id is the bucket's and whose result is the bucket's kind
(app.ci_cases.result_of). In order:

- ``Skip``: a ``skips.txt`` regex of the target names the bucket;
- ``ExpectedFail``: the target's ``fails.txt`` expects that result of the bucket, or the bucket is
  known otherwise: its status in the corpus is ``ignored`` or ``reported`` (a ``fixed`` bucket
  seen again is ``new`` again, corpus.store), a regression file tracks it (its ``found_in`` or a
  ``known_wrong`` bucket), or a ``--baseline`` file lists it (triage.baseline);
- ``Warn``: a new bucket less severe than ``--severity`` (oracles.rules.SEVERITIES, most serious
  first; a run cut at the ceiling is ``performance``, the last, until it proves a hang:
  triage.buglist.bucket_severity);
- otherwise the result is unexpected: ``KnownFlake`` when a ``flakes.txt`` regex names the
  bucket, else the program that hit it is re-run on a fresh worker (``--flake-reruns``) and the
  case is a ``Flake`` as soon as the bucket does not show, a ``Fail``, ``Crash`` or ``Timeout``
  (failing the run) when it shows every time. The failing case says how to look at the bucket
  (``clfuzz report``) and how to accept it (its ``fails.txt`` line, or ``clfuzz mark``).

Each target also has one case named by the campaign (``ci-0``): Pass with the campaign's counts,
Missing when the campaign stopped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Callable

from app.ci_cases import EXPECTED_FAIL, MISSING, PASS, SKIP, SMOKE, WARN, Case, CiResult, describe, result_of
from app.ci_expectations import Expectations, file_of, settle
from app.options import DEFAULT_SEVERITY
from corpus.bucket_queries import buckets_hit_since
from corpus.reads import bucket_rows
from corpus.store import Corpus
from fuzz.drivers import Target
from oracles import at_least
from triage.buglist import bucket_severity

KNOWN_STATUSES = ("ignored", "reported")
"""Bucket statuses a smoke campaign accepts (see the module docstring)."""


@dataclass
class Rules:
    """How a run judges what it saw: each target's expectations, the buckets known otherwise (the
    regression files' and the baseline's), the severity floor, the re-runs of an unexpected result
    and the expectations folder (named in the advice of a failing case)."""

    expect: dict[str, Expectations] = field(default_factory=dict)
    known: AbstractSet[str] = frozenset()
    floor: str = DEFAULT_SEVERITY
    reruns: int = 0
    folder: str | None = None

    def of(self, target: str) -> Expectations:
        return self.expect.get(target) or Expectations()


def is_known(bucket: dict[str, Any], known: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``bucket`` is known without an expectation file: its status is one of
    :data:`KNOWN_STATUSES`, or its id is in ``known`` (:func:`known_buckets`, a baseline)."""
    return bucket["status"] in KNOWN_STATUSES or bucket["id"] in known


def known_buckets(regressions: list[tuple[Path, dict[str, Any]]]) -> set[str]:
    """Buckets the regression files track: those they were exported from and the known-wrong ones."""
    out: set[str] = set()
    for _, case in regressions:
        out.update(b for b in case.get("found_in", []) if isinstance(b, str))
        out.update(w["bucket"] for w in case["known_wrong"].values())
    return out


def hit_buckets(corpus: Corpus, campaign: str, since: float) -> list[tuple[str, dict[str, Any]]]:
    """(target, bucket) for every bucket a run of ``campaign`` started at or after ``since`` hit
    (a disagreement stored by an earlier run and seen again counts: rows are deduplicated)."""
    hits = buckets_hit_since(corpus, campaign, since)
    buckets = {b["id"]: b for b in corpus.buckets()} if hits else {}
    return [(h["target"], buckets[h["bucket"]]) for h in hits if h["bucket"] in buckets]


Rerun = Callable[[str, dict[str, Any]], str]
"""Re-runs a bucket on a target (by name): the bucket's result when it shows again, else Pass."""


def bucket_case(target: str, bucket: dict[str, Any], corpus_path: str, rules: Rules,
                rerun: Rerun | None = None) -> Case:
    """The case of ``bucket`` hit on ``target`` (module docstring)."""
    bid = bucket["id"]
    c = Case(SMOKE, target, bid, bucket["title"], result=result_of(bucket["signature"].get("kind")),
             url=bucket.get("url") or "")
    exp, severity = rules.of(target), bucket_severity(bucket)
    entry = exp.fails.get(bid)
    vendor = f", {bucket['url']}" if bucket.get("url") else ""
    if exp.skipped(bid):
        c.status, c.message = SKIP, f"skipped ({exp.skipped(bid)})"
    elif entry and entry.status == c.result:
        c.status, c.out = EXPECTED_FAIL, f"known bucket ({entry.where}{vendor}): {c.result}, as expected"
    elif is_known(bucket, rules.known):
        why = bucket["status"] if bucket["status"] in KNOWN_STATUSES else "in the regression files or the baseline"
        c.status, c.out = EXPECTED_FAIL, f"known bucket ({why}{vendor}): {c.result}, as expected"
    elif not at_least(severity, rules.floor):
        c.status, c.out = WARN, f"new bucket below --severity {rules.floor} ({severity})"
    else:
        c.status, why = settle(c.result, entry, exp.flaky(bid), lambda: rerun(target, bucket) if rerun else MISSING,
                               rules.reruns)
        line = f"{why}; {severity}, status {bucket['status']}, {bucket['rows']} rows, {bucket['programs']} programs"
        if c.failing:
            fails = file_of(Path(rules.folder), target, "fails") if rules.folder else f"{target}'s fails.txt"
            c.message = f"new bucket ({severity}): {why}"
            c.details = (f"{line}\n  look:   clfuzz report {bid} --corpus {corpus_path} -o reports/{bid}\n"
                         f"  accept: add the line {bid},{c.result} to {fails} (or: clfuzz mark {bid} reported "
                         f"--corpus {corpus_path}, and give the next run that corpus)")
        else:
            c.out = line
    return c


def smoke_cases(targets: list[str], hits: list[tuple[str, dict[str, Any]]], corpus_path: str, rules: Rules,
                campaign: str = "ci-0", stats: dict[str, Any] | None = None, wall_s: float = 0.0,
                rerun: Rerun | None = None) -> list[Case]:
    """Per target, the campaign's case (its counts) and one case per bucket it hit (module docstring)."""
    cases = []
    for name in targets:
        s = (stats or {}).get(name)
        c = Case(SMOKE, name, campaign, f"smoke campaign on {name}", time_s=getattr(s, "wall_s", 0.0) or wall_s)
        if s is not None:
            statuses = ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items()))
            c.out = (f"{s.programs} programs, {s.judged:,} judged lanes, {s.mismatches:,} mismatching lanes"
                     + (f" ({statuses})" if statuses else ""))
        cases.append(c)
        cases += [bucket_case(name, b, corpus_path, rules, rerun) for target, b in hits if target == name]
    return cases


def rerun_bucket(corpus: Corpus, target: Target, bucket: dict[str, Any], timeout_s: float = 60) -> str:
    """Run the program that hit ``bucket`` on ``target`` again, on a fresh worker: the bucket's
    result when it shows again (triage.versions.verdict), else Pass."""
    from fuzz.drivers import Worker
    from triage.observe import observe
    from triage.versions import verdict

    row = next((r for r in bucket_rows(corpus, bucket["id"]) if r["target"] == target.name), None)
    if row is None:
        return MISSING
    try:
        with Worker(target, timeout_s=timeout_s) as worker:
            again = observe(corpus.program(row["program_id"]), target, worker)
    except Exception:  # noqa: BLE001 - a re-run that cannot run gives no result; the run goes on
        return MISSING
    return result_of(bucket["signature"].get("kind")) if verdict(row, again)[0] == "present" else PASS


def run_smoke(result: CiResult, corpus: Corpus, targets: list[Target], minutes: float, seed: int, rules: Rules,
              timeout_s: float) -> list[Case]:
    """Run the smoke campaign ``ci-SEED`` and judge what it hit (sets ``result.campaigns`` and
    ``result.programs``); every target's campaign case is Missing when the campaign stopped."""
    from campaign.campaign import run_campaign

    name = f"ci-{seed}"
    result.campaigns.append(name)
    since = time.time()
    try:
        campaign = run_campaign(corpus, targets, minutes=minutes, seed=seed, name=name, timeout_s=timeout_s)
    except Exception as e:  # noqa: BLE001 - a generator bug: every smoke case is Missing, the report is still written
        line = f"the smoke campaign stopped: {describe(e)}"
        return [Case(SMOKE, t.name, name, f"smoke campaign on {t.name}", MISSING, message=line) for t in targets]
    result.programs += campaign.programs
    by_name = {t.name: t for t in targets}
    return smoke_cases([t.name for t in targets], hit_buckets(corpus, name, since), str(corpus.path), rules, name,
                       campaign.targets, campaign.wall_s,
                       lambda target, bucket: rerun_bucket(corpus, by_name[target], bucket, timeout_s))
