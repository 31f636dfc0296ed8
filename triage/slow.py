"""Runs cut at the time ceiling: slow until a re-run at ten times the ceiling decides them.

No rule of the OpenCL specifications sets a time limit, so a run clfuzz cut at its ``--timeout``
ceiling is a *slow* finding: kind ``timeout``, rule oracles.SLOW, severity ``performance``, with
the seconds it was given and the other drivers' times for the same program. Triage re-runs its
program once at :data:`FACTOR` times the time it was given (:func:`decide`), where the time left
allows it (beside a campaign, triage.beside: within the target's triage share and before the
deadline; after it, triage.session: before the deadline; ``clfuzz reduce``: always). A re-run that does not finish either is a *hang*: the failure rule of
its path (oracles.failure_rule), severity violation, ``"hang": true`` in ``clfuzz buckets --json``.
One that finishes is judged and recorded like any other run (campaign.record: its disagreements, if any,
go to their own buckets) and the bucket stays slow. Until then the bucket is *undecided*.

The verdict is derived when read, from the bucket's kind and its rows' re-runs
(corpus.run_facts: ``hang``), so no bucket's key changes.
"""

from __future__ import annotations

import json
from typing import Any

from campaign import record
from campaign.execute import Part, conclude, prepare
from campaign.expectations import Expectations
from corpus.run_facts import TIMEOUT
from corpus.store import Corpus
from fuzz.drivers import Result, Target
from fuzz.drivers.protocol import time_given

FACTOR = 10.0
"""A run cut at the ceiling is re-run once at this many times the time it was given."""


def given_s(row: dict[str, Any]) -> float | None:
    """The seconds a timeout row's run was given: recorded with it (``slow``: ``given_s``), or in an
    older corpus read from its message (fuzz.drivers.protocol.time_given)."""
    return row.get("given_s") or time_given(row.get("actual_value", ""))


def undecided(row: dict[str, Any]) -> bool:
    """Whether ``row`` is a timeout whose re-run at ten times its ceiling has not run yet."""
    return row["kind"] == TIMEOUT and "hang" not in _slow(row)


def decide(corpus: Corpus, row: dict[str, Any], target: Target, worker, left_s: float | None,
           ceiling: float) -> dict[str, Any] | None:
    """Re-run the program of the timeout row ``row`` on ``worker`` (a Worker, or a campaign lane:
    its ``run(job, timeout_s)``) at :data:`FACTOR` times the time it was given (``ceiling`` where
    the row does not say), record the run in the row's campaign and the verdict on the program's
    timeout rows (corpus.store.Corpus.decide_hang): ``hang``, ``limit_s``, and for a run that
    finished its ``seconds`` (build + run) and ``status``. None, and nothing recorded, when
    ``left_s`` (the seconds the deadline leaves; None: no deadline) is less than that limit, or
    when the program does not reach the driver (the SPIR-V route's translator failed or timed out
    on it: campaign.execute.prepare), so no limit of the driver's is tested."""
    limit = FACTOR * (given_s({**row, **_slow(row)}) or ceiling)
    if left_s is not None and left_s < limit:
        return None
    program = corpus.program(row["program_id"])
    part = Part(program, Expectations(program))
    job = prepare(part, target)
    if isinstance(job, Result):
        return None
    result = worker.run(job, limit)
    record.record_run(corpus, conclude(part, target, result)[2], row.get("campaign") or "")
    verdict: dict[str, Any] = {"hang": result.status == TIMEOUT, "limit_s": limit}
    if not verdict["hang"]:
        verdict.update(seconds=round(result.build_s + result.run_s, 3), status=result.status)
    corpus.decide_hang(row["program_id"], row["target"], verdict)
    return verdict


def summary(bucket: dict[str, Any]) -> dict[str, Any] | None:
    """What the bug list says of a timeout bucket (None for another kind): ``given_s`` (the times
    its runs were given), ``decision`` (``hang``, ``finished`` or ``undecided``), the ``limit_s``
    of the re-runs, the ``seconds`` the finished ones took, and ``others``: the other drivers'
    times for the same programs (``target``, ``path``, ``seconds``)."""
    if bucket["signature"]["kind"] != TIMEOUT:
        return None
    runs = bucket.get("slow_runs") or []
    decided = [r for r in runs if "hang" in r]
    others = {(o["target"], o["path"]): o for r in runs for o in r["others"]}
    return {"given_s": sorted({g for g in map(given_s, runs) if g is not None}),
            "decision": "undecided" if bucket.get("hang") is None else "hang" if bucket["hang"] else "finished",
            "limit_s": sorted({r["limit_s"] for r in decided}),
            "seconds": sorted(r["seconds"] for r in decided if not r["hang"]),
            "others": [others[k] for k in sorted(others)]}


def text(bucket: dict[str, Any]) -> str:
    """A timeout bucket's :func:`summary` in one line (the bug list, the report); "" for another kind."""
    s = summary(bucket)
    if s is None:
        return ""
    given = "cut at " + (" / ".join(f"{g:g} s" for g in s["given_s"]) or "the ceiling (not recorded)")
    limit = " / ".join(f"{x:g} s" for x in s["limit_s"])
    decision = {"hang": f"a hang: no result at {limit} either",
                "finished": f"finished at {limit} in " + ", ".join(f"{x:g} s" for x in s["seconds"])
                + " (judged like any other run)",
                "undecided": f"hang undecided (`clfuzz reduce {bucket['id']}` re-runs it at {FACTOR:g} times the "
                             "ceiling)"}[s["decision"]]
    others = ", ".join(f"{o['target']} {o['seconds']:g} s" for o in s["others"]) or "none recorded"
    return f"{given}; {decision}; other drivers on the same program: {others}"


def _slow(row: dict[str, Any]) -> dict[str, Any]:
    """What a disagreement row's ``slow`` column holds (corpus.schema.m010_slow), decoded."""
    return json.loads(row.get("slow") or "{}")
