"""Named questions about a corpus's buckets that :meth:`corpus.store.Corpus.buckets` does not
answer: which exist, which a campaign opened lately, which wait for triage, which a CI run hit.
"""

from __future__ import annotations

from typing import Any

from corpus import _sql
from corpus.store import Corpus

_WAITING = """b.status = 'new' and json_extract(b.signature, '$.flaky') is null
      and not exists (select 1 from reductions r where r.bucket = b.id)"""
"""A bucket waiting for triage: new (not reported, fixed or ignored), not flaky, not reduced."""
_NOT_FLOW = "d.program_id not in (select id from programs where area = 'flow')"
"""A row not of a flow program (lang.flow)."""


def bucket_ids(corpus: Corpus) -> set[str]:
    """The id of every bucket, with rows or not."""
    return {r["id"] for r in _sql.rows(corpus, "select id from buckets")}


def buckets_created_since(corpus: Corpus, since: float) -> list[dict[str, Any]]:
    """The ``id`` and ``title`` of the buckets created at or after ``since``, newest first."""
    return _sql.rows(corpus, "select id, title from buckets where created >= ? order by created desc", [since])


def triage_candidates(corpus: Corpus, campaign: str, target: str, since: float) -> list[dict[str, Any]]:
    """The buckets of ``campaign`` waiting for triage with rows on ``target`` (``id``, ``example``: its
    first row's id, ``first_seen``, ``reproduced``, ``confirmed``: its confirmed rows): those first seen
    before ``since`` first, oldest first, then the others, newest first (triage.beside). Rows of flow
    programs (area ``flow``: :func:`flow_waiting`) are left out."""
    return _sql.rows(corpus, f"""
    select b.id, min(d.id) as example, min(d.created) as first_seen, b.reproduced,
           sum(d.confirmation = 'confirmed') as confirmed
    from buckets b join disagreements d on d.bucket = b.id
    where d.campaign = ? and d.target = ? and {_WAITING} and {_NOT_FLOW}
    group by b.id
    order by first_seen < ? desc, case when first_seen < ? then first_seen else -first_seen end""",
                     [campaign, target, since, since])


def flow_waiting(corpus: Corpus, campaign: str, target: str | None = None) -> list[dict[str, Any]]:
    """The buckets of ``campaign`` waiting for triage whose rows are all of flow programs (lang.flow:
    triage confirms them and reduces them at the structure level, triage.flow_triage), with rows on
    ``target`` if given: ``id``, ``example`` (its first row's id there), ``first_seen`` and
    ``confirmed`` (its confirmed rows)."""
    on, params = ("and d.target = ?", [campaign, target]) if target else ("", [campaign])
    return _sql.rows(corpus, f"""
    select b.id, min(d.id) as example, min(d.created) as first_seen, sum(d.confirmation = 'confirmed') as confirmed
    from buckets b join disagreements d on d.bucket = b.id
    where d.campaign = ? {on} and {_WAITING} and not exists (select 1 from disagreements e
        where e.bucket = b.id and e.campaign = d.campaign and {_NOT_FLOW.replace('d.', 'e.')})
    group by b.id order by b.id""", params)


def waiting_for_triage(corpus: Corpus, campaign: str) -> int:
    """How many buckets of ``campaign`` wait for triage: new, not flaky, not reduced."""
    return _sql.value(corpus, f"""select count(distinct b.id) as n from buckets b
                                  join disagreements d on d.bucket = b.id where d.campaign = ? and {_WAITING}""",
                      [campaign])


def buckets_hit_since(corpus: Corpus, campaign: str, since: float) -> list[dict[str, Any]]:
    """``target`` and ``bucket`` of every bucket a run of ``campaign`` started at or after ``since``
    hit on a target (a row stored by an earlier run and seen again counts: rows are deduplicated)."""
    return _sql.rows(corpus, "select distinct d.target, d.bucket from disagreements d join runs r "
                             "on r.program_id = d.program_id and r.target = d.target "
                             "where r.campaign = ? and r.created >= ? order by d.target, d.bucket", [campaign, since])


def legacy_bucket_count(corpus: Corpus, campaign: str) -> int:
    """How many buckets the rows of ``campaign`` would make under the signature of schemas 1 to 5
    (area, operation, types, input class, rule, kind, target, fingerprint and a failure's message)."""
    key = ("p.area || '|' || d.operation || '|' || d.src_type || '|' || d.dst_type || '|' || d.input_class || '|' || "
           "d.rule || '|' || d.kind || '|' || d.target || '|' || d.fingerprint_id || '|' || "
           "coalesce(case when d.kind not in ('wrong-result', 'imprecise-result') then d.actual_value end, '')")
    return _sql.value(corpus, f"select count(distinct {key}) as n from disagreements d join programs p "
                              "on p.id = d.program_id where d.campaign = ?", [campaign])
