"""The release range of a bucket: on which releases of its driver its reproducer still shows.

After a bucket is reduced, its reproducer (the latest reduced program, else the program of its
first row) runs on every available release of the bucket's driver on the same front end: the
system's (``pocl``) and the installed releases' (``pocl-7.1``, fuzz.drivers.releases). Each run is
judged by the oracle like any other (triage.observe): a difference between releases is a signal,
only the oracle decides. Per release the verdict is

- ``present``: the oracle finds the bucket's disagreement again (same lane and kind, or the same
  failure);
- ``absent``: the oracle accepts every lane;
- ``different``: the oracle finds disagreements, but not this one;
- ``cannot-build``: the release rejects the program (build error);
- ``failed``: another failure (crash, timeout, worker error) where the bucket's was not;
- ``not-run``: the release does not take the program (capabilities, no SPIR-V path there).

The map lives in the corpus's table ``release_checks`` (corpus.store, schema 8): one row per
(bucket, target), replaced at each check.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from corpus.buckets import LANE_KINDS
from corpus.reads import bucket_rows, rows_in_bucket
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from lang.ir import Program
from triage.confirm import shows_again
from triage.observe import observe

VERDICTS = ("present", "absent", "different", "cannot-build", "failed", "not-run")


def family_targets(bucket_target: Target, targets: list[Target]) -> list[Target]:
    """Every release of the bucket's driver: the targets of the same lineage (``pocl``, ``pocl-2``,
    ``pocl-7.1``) on the same front end, the system's first; a release with no such path is
    represented by its OpenCL C target (recorded ``not-run``)."""
    same = [t for t in targets if t.lineage == bucket_target.lineage]
    chosen = {t.driver: t for t in same if t.path == bucket_target.path}
    for t in same:
        chosen.setdefault(t.driver, t)
    return sorted(chosen.values(), key=lambda t: (bool(t.release), t.name))


def reproducer(corpus: Corpus, bucket: str) -> tuple[str, dict[str, Any]]:
    """The program id a check runs and the bucket's row it looks for: the latest reduction's (its
    reduced program's row in the bucket) when there is one, else the bucket's first row."""
    for red in reversed(corpus.reductions(bucket)):
        rows = rows_in_bucket(corpus, red["reduced_id"], bucket)
        if rows:
            return red["reduced_id"], rows[0]
    rows = bucket_rows(corpus, bucket)
    if not rows:
        raise ValueError(f"bucket {bucket} has no rows")
    return rows[0]["program_id"], rows[0]


def verdict(row: dict[str, Any], rows: list[dict[str, Any]] | None) -> tuple[str, str]:
    """The verdict (:data:`VERDICTS`) of one release's judged run, and a line of detail."""
    if rows is None:
        return "not-run", "the release does not take the program"
    if shows_again(row, rows):
        return "present", f"{len(rows)} disagreeing rows"
    if not rows:
        return "absent", "the oracle accepts every lane"
    failures = [r for r in rows if r["kind"] not in LANE_KINDS]
    if failures:
        kind = failures[0]["kind"]
        text = str(failures[0].get("actual_value", "")).strip().splitlines()
        return ("cannot-build" if kind == "build_error" else "failed"), f"{kind}: {text[0] if text else ''}"[:300]
    return "different", f"{len(rows)} other disagreeing rows ({rows[0]['kind']})"


def run_check(program: Program, row: dict[str, Any], target: Target, timeout_s: float = 120.0) -> tuple[str, str]:
    """Run a bucket's reproducer ``program`` on one release ``target`` (a fresh worker) and judge
    it: the :func:`verdict` for the bucket's ``row`` and its line of detail (``not-run`` when the
    target is not on the row's front end)."""
    if target.path != row["path"]:
        return "not-run", f"no {row['path']} path on this release"
    with Worker(target, timeout_s=timeout_s) as worker:
        return verdict(row, observe(program, target, worker))


def ranged_on(corpus: Corpus, bucket: dict[str, Any], targets: list[Target]) -> tuple[Target, str, dict] | None:
    """The target among ``targets`` whose releases a bucket's range runs over, with the program and
    row it runs: the reproducer's (:func:`reproducer`), else a row of the bucket on one of
    ``targets``; None where no row is (a bucket seen only on a variant, PoCL's work-group method, or
    on another machine's target)."""
    by_name = {t.name: t for t in targets}
    program_id, row = reproducer(corpus, bucket["id"])
    if row["target"] not in by_name:  # the reproducer's row is a variant's or another machine's
        here = next((r for r in bucket_rows(corpus, bucket["id"]) if r["target"] in by_name), None)
        if here is not None:  # a row of the bucket on a target here, with its program
            program_id, row = here["program_id"], here
    own = by_name.get(row["target"]) or by_name.get(bucket["target"])
    return None if own is None else (own, program_id, row)


def check_bucket(corpus: Corpus, ref: str, targets: list[Target], timeout_s: float = 120.0,
                 on_result: Callable[[dict], None] | None = None) -> list[dict[str, Any]]:
    """Run ``ref``'s reproducer on every release of its driver, judge each run, store and return
    the rows of ``release_checks``."""
    bucket = corpus.bucket(ref)
    found = ranged_on(corpus, bucket, targets)
    if found is None:
        raise ValueError(f"the bucket is on {bucket['target']!r}, which is not installed here")
    own, program_id, row = found
    program = corpus.program(program_id)
    out = []
    for t in family_targets(own, targets):
        t0 = time.monotonic()
        v, detail = run_check(program, row, t, timeout_s)
        record = {"id": f"{bucket['id']}:{t.driver}", "bucket": bucket["id"], "target": t.name,
                  "lineage": t.lineage, "version": t.fingerprint.get("driver_version", ""),
                  "release": t.release or "system", "fingerprint_id": t.fingerprint_id,
                  "program_id": program_id, "verdict": v, "detail": detail,
                  "seconds": round(time.monotonic() - t0, 3), "checked": time.time()}
        out.append(record)
        if on_result is not None:
            on_result(record)
    corpus.add_release_checks(out)
    return out


def release_range(corpus: Corpus, bucket: str) -> dict[str, dict[str, Any]]:
    """The stored map of a bucket, per target: version, release, verdict, detail, checked (empty
    when never checked; ``clfuzz buckets --json`` has it as ``versions``, version -> verdict)."""
    rows = corpus.release_checks(bucket)
    return {r["target"]: {k: r[k] for k in ("version", "release", "verdict", "detail", "checked")} for r in rows}


def summary(checks: dict[str, dict[str, Any]]) -> str:
    """One line: ``pocl 3.1+debian present, pocl-7.1 7.1+debian absent``."""
    return ", ".join(f"{name} {c['version']} {c['verdict']}" for name, c in checks.items())


def as_json(checks: dict[str, dict[str, Any]]) -> str:
    return json.dumps(checks, indent=2, sort_keys=True)
