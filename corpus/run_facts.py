"""What a bucket's runs say about it beyond its rows: the options they were built with, and for a
timeout bucket the time each run was given, its hang verdict and the other drivers' times for the
same program (corpus.store.Corpus.buckets adds them to every bucket).

The callers hold the corpus's lock; ``where`` is the buckets query's clause on ``disagreements d``.
"""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

TIMEOUT = "timeout"
"""The kind of a run cut at the ceiling (fuzz.drivers.protocol.STATUSES)."""

SLOW_PROGRAMS = 5
"""Programs of a timeout bucket whose runs are listed (the first ones seen)."""


def no_facts() -> dict[str, Any]:
    """The facts of a bucket without rows (:func:`bucket_facts`)."""
    return {"build_options": [], "build_options_by_path": {}, "options_unrecorded": False, "hang": None,
            "slow_runs": []}


def bucket_facts(db: Database, where: str, params: list) -> dict[str, dict[str, Any]]:
    """Per bucket (its rows ``where`` selects): ``build_options`` (the distinct options strings of
    the runs its rows came from, as recorded: campaign.jobs.build_options; [] when none was),
    ``build_options_by_path`` (front end -> those strings), ``options_unrecorded`` (whether a run
    of its rows has none recorded: written before schema 9), ``hang`` (a timeout bucket's verdict:
    True when a row's re-run at ten times its ceiling did not finish, False when every decided
    one finished, None while undecided or for another kind) and ``slow_runs``
    (a timeout bucket's first :data:`SLOW_PROGRAMS` rows: ``program_id``, ``target``,
    ``actual_value`` (the line stating the time it was given), what its ``slow`` column holds
    (schema 10: ``given_s``, and once decided ``hang``, ``limit_s``, ``seconds``, ``status``) and
    ``others``: the runs of the same program on other targets that finished, each ``target``,
    ``path`` and ``seconds`` (build + run))."""
    facts: dict[str, dict[str, Any]] = {}

    def fact(bucket: str) -> dict[str, Any]:
        return facts.setdefault(bucket, no_facts())

    for r in db.query(f"""select d.bucket, r.path, r.options from disagreements d left join runs r on r.id = d.run_id
                          {where} group by d.bucket, r.path, r.options order by r.options""", params):
        f = fact(r["bucket"])
        if r["options"] is None:
            f["options_unrecorded"] = True
            continue
        if r["options"] not in f["build_options"]:
            f["build_options"].append(r["options"])
        f["build_options_by_path"].setdefault(r["path"], []).append(r["options"])
    clause = f"{where} and d.kind = ?" if where else "where d.kind = ?"
    slow = list(db.query(f"""select d.bucket, d.program_id, d.target, d.actual_value, d.slow from disagreements d
                             {clause} order by d.created""", [*params, TIMEOUT]))
    others = _finished_runs(db, {r["program_id"] for r in slow})
    for r in slow:
        f, known = fact(r["bucket"]), json.loads(r["slow"] or "{}")
        if len(f["slow_runs"]) < SLOW_PROGRAMS:
            f["slow_runs"].append({"program_id": r["program_id"], "target": r["target"],
                                   "actual_value": r["actual_value"], **known,
                                   "others": [o for o in others.get(r["program_id"], [])
                                              if o["target"] != r["target"]]})
        f["hang"] = _hang_of(f["hang"], known.get("hang"))
    return facts


def _hang_of(so_far: bool | None, row: bool | None) -> bool | None:
    """A bucket's hang verdict with one more row's: a hang anywhere is a hang; a finished re-run
    is not one until a hang is seen; an undecided row changes nothing."""
    return so_far if row is None else bool(so_far) or row


def _finished_runs(db: Database, programs: set[str]) -> dict[str, list[dict[str, Any]]]:
    """The runs of ``programs`` that finished (status ok), by program: target, path, seconds."""
    if not programs:
        return {}
    marks = ",".join("?" * len(programs))
    out: dict[str, list[dict[str, Any]]] = {}
    for r in db.query(f"""select program_id, target, path, min(build_s + run_s) as seconds from runs
                          where program_id in ({marks}) and status = 'ok' group by program_id, target, path
                          order by target, path""", sorted(programs)):
        out.setdefault(r["program_id"], []).append({"target": r["target"], "path": r["path"],
                                                    "seconds": round(r["seconds"] or 0.0, 3)})
    return out
