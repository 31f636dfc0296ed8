"""Named reads for the bug level above buckets (triage.bugs): the distinct cases of each bucket's
wrong lanes, and the evidence stored by re-runs (table bug_evidence, schema 13)."""

from __future__ import annotations

from typing import Any

from corpus import _sql
from corpus.buckets import RESULT_KINDS
from corpus.store import Corpus

CASE_COLUMNS = ("bucket", "target", "path", "program_id", "buffer", "work_item", "lane", "expression", "inputs",
                "expected_value", "actual_value", "deviation", "out_type", "out_call")
"""What :func:`lane_cases` gives of a wrong lane: enough to show a driver engineer the case,
``out_type``, the type of the output buffer it is a lane of (its component is the lane's place in
the vector), and ``out_call``, whether its program calls a built-in with an out-parameter (an
operation with attribute ``out``, lang.ir)."""


def lane_cases(corpus: Corpus, per_bucket: int = 400) -> list[dict[str, Any]]:
    """The distinct wrong lanes of every bucket (one per operands and actual value, at most
    ``per_bucket`` of a bucket, oldest first): :data:`CASE_COLUMNS`."""
    kinds = ",".join("?" * len(RESULT_KINDS))
    columns = ", ".join(f"d.{c}" for c in CASE_COLUMNS if c not in ("out_type", "out_call"))
    cases = _sql.rows(corpus, f"""
    select * from (
      select {columns}, row_number() over (partition by d.bucket order by min(d.created)) as n
      from disagreements d where d.kind in ({kinds})
      group by d.bucket, d.inputs, d.actual_value)
    where n <= ? order by bucket, n""", [*RESULT_KINDS, per_bucket])
    outputs = {(r["program_id"], r["buffer"]): r["out_type"] for r in _sql.rows(corpus, f"""
    select p.id as program_id, json_extract(b.value, '$.name') as buffer, json_extract(b.value, '$.type') as out_type
    from programs p join (select distinct program_id from disagreements where kind in ({kinds})) k
      on k.program_id = p.id, json_each(p.json, '$.buffers') b""", RESULT_KINDS)}
    calling = {r["id"] for r in _sql.rows(corpus, f"""
    select distinct p.id from programs p, json_tree(p.json, '$.body') t
    where t.key = 'out' and p.id in (select program_id from disagreements where kind in ({kinds}))""", RESULT_KINDS)}
    own = [k for k in CASE_COLUMNS if k not in ("out_type", "out_call")]
    return [{**{k: c[k] for k in own}, "out_type": outputs.get((c["program_id"], c["buffer"])),
             "out_call": c["program_id"] in calling} for c in cases]


def stored_evidence(corpus: Corpus) -> list[dict[str, Any]]:
    """Every row of table bug_evidence (``bucket``, ``same_as``, ``kind``, ``program_id``,
    ``detail`` as JSON text, ``created``), oldest first."""
    return _sql.rows(corpus, "select * from bug_evidence order by created, id")


def pending_reasons(corpus: Corpus) -> dict[str, str]:
    """Why each bucket a campaign left waiting for triage was not reduced (``triage_left`` in the
    campaigns' state, triage.beside), by bucket id; the latest campaign's reason where several
    recorded one."""
    found = _sql.rows(corpus, """
    select t.key as bucket, t.value as why from campaigns c, json_each(c.state, '$.triage_left') t
    where json_valid(c.state) order by c.updated""")
    return {r["bucket"]: r["why"] for r in found}
