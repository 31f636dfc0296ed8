"""Named aggregates of a corpus for the dashboard (app.dashboard_data): totals, runs per target,
and the times series of disagreements, buckets and judged lanes. ``campaign`` keeps one
campaign's rows (None: every campaign); times are seconds since ``t0`` where one is given.
"""

from __future__ import annotations

from typing import Any

from corpus import _sql
from corpus.store import Corpus


def run_span(corpus: Corpus, campaign: str | None = None) -> dict[str, Any]:
    """``n``: the number of runs, ``t0`` and ``t1``: when the first and the last was stored (None: no run)."""
    where, params = _sql.campaign_filter(campaign)
    return _sql.rows(corpus, f"select count(*) as n, min(created) as t0, max(created) as t1 from runs {where}",
                     params)[0]


def dashboard_totals(corpus: Corpus, campaign: str | None = None) -> dict[str, int]:
    """``programs`` stored, disagreement ``rows`` and distinct ``buckets``."""
    where, params = _sql.campaign_filter(campaign)
    return {"programs": _sql.value(corpus, f"select count(*) as n from programs {where}", params),
            "rows": _sql.value(corpus, f"select count(*) as n from disagreements {where}", params),
            "buckets": _sql.value(corpus, f"select count(distinct bucket) as n from disagreements {where}", params)}


def run_statuses(corpus: Corpus, campaign: str | None = None) -> dict[str, dict[str, int]]:
    """Per target, its runs by status (``ok``, ``build_error``, ...)."""
    where, params = _sql.campaign_filter(campaign)
    out: dict[str, dict[str, int]] = {}
    for r in _sql.rows(corpus, f"select target, status, count(*) as n from runs {where} group by target, status",
                       params):
        out.setdefault(r["target"], {})[r["status"]] = r["n"]
    return out


def found_by_target(corpus: Corpus, campaign: str | None = None) -> dict[str, dict[str, Any]]:
    """Per target with disagreements: its ``rows`` and distinct ``buckets``."""
    where, params = _sql.campaign_filter(campaign)
    return {r["target"]: r for r in _sql.rows(
        corpus, f"select target, count(*) as rows, count(distinct bucket) as buckets from disagreements {where} "
                "group by target", params)}


def runs_by_fingerprint(corpus: Corpus, campaign: str | None = None) -> list[dict[str, Any]]:
    """Per target and fingerprint (by target, then first run): ``target``, ``path``,
    ``fingerprint_id``, ``runs``, ``judged`` lanes, ``mismatches`` and ``driver_s`` (build and run
    seconds; sums are None where nothing was recorded)."""
    where, params = _sql.campaign_filter(campaign)
    return _sql.rows(corpus, f"""select target, path, fingerprint_id, count(*) as runs, sum(judged) as judged,
                                        sum(mismatches) as mismatches, sum(build_s + run_s) as driver_s
                                 from runs {where} group by target, fingerprint_id order by target, min(created)""",
                     params)


def campaign_rows(corpus: Corpus, campaign: str | None = None) -> list[dict[str, Any]]:
    """The campaigns (only ``campaign`` where given): ``name``, ``seed``, ``started``, ``updated``,
    ``programs`` and ``checks``, by start."""
    where, params = _sql.campaign_filter(campaign, column="name")
    return _sql.rows(corpus, f"select name, seed, started, updated, programs, checks from campaigns {where} "
                             "order by started", params)


def last_disagreement(corpus: Corpus, campaign: str | None = None) -> float | None:
    """When the last disagreement was stored (None: none)."""
    where, params = _sql.campaign_filter(campaign)
    return _sql.value(corpus, f"select max(created) as t from disagreements {where}", params)


def rows_over_time(corpus: Corpus, t0: float, campaign: str | None = None) -> list[dict[str, Any]]:
    """Disagreement rows per target and time stored: ``target``, ``t``, ``n``."""
    where, params = _sql.campaign_filter(campaign)
    return _sql.rows(corpus, f"select target, created - ? as t, count(*) as n from disagreements {where} "
                        "group by target, created", [t0, *params])


def buckets_first_seen_per_target(corpus: Corpus, t0: float, campaign: str | None = None) -> list[dict[str, Any]]:
    """When each bucket was first seen on each target: ``target``, ``t``, ``n`` (1)."""
    where, params = _sql.campaign_filter(campaign)
    return _sql.rows(corpus, f"select target, min(created) - ? as t, 1 as n from disagreements {where} "
                        "group by bucket, target", [t0, *params])


def buckets_first_seen(corpus: Corpus, t0: float, campaign: str | None = None) -> list[float]:
    """When each bucket was first seen, on any target."""
    where, params = _sql.campaign_filter(campaign)
    found = _sql.rows(corpus, f"select min(created) - ? as t from disagreements {where} group by bucket",
                      [t0, *params])
    return [r["t"] for r in found]


def judged_per_bin(corpus: Corpus, t0: float, width: float, campaign: str | None = None) -> list[dict[str, Any]]:
    """Judged lanes per target and bin of ``width`` seconds (a run counts in the bin where it was
    stored): ``target``, ``bin`` (its index), ``judged``."""
    where, params = _sql.campaign_filter(campaign)
    return _sql.rows(corpus, f"""select target, cast((created - ?) / ? as integer) as bin, sum(judged) as judged
                            from runs {where} group by target, bin""", [t0, width, *params])
