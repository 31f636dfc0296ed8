"""Named reads of a corpus's rows: the disagreements of a bucket, a program or a prefix, the
programs of a campaign, the fingerprints of its targets, the node campaigns of a distributed one.

Disagreement rows come whole (every column, as :meth:`corpus.store.Corpus.disagreements` gives
them) and oldest first.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from corpus import _sql
from corpus.buckets import RESULT_KINDS
from corpus.schema import CorpusError
from corpus.store import Corpus

PREFIX_FIELDS = ("bucket", "id", "program_id")
"""The fields :func:`rows_by_prefix` looks a reference up in."""


def _disagreements(corpus: Corpus, where: str, params: list) -> list[dict[str, Any]]:
    with corpus.lock:
        return list(corpus.db["disagreements"].rows_where(where, params, order_by="created"))


def bucket_rows(corpus: Corpus, bucket: str) -> list[dict[str, Any]]:
    """The disagreement rows of ``bucket``."""
    return _disagreements(corpus, "bucket = ?", [bucket])


def disagreement(corpus: Corpus, row_id: str) -> dict[str, Any]:
    """The disagreement row ``row_id``; raises :class:`CorpusError` when there is none."""
    found = _disagreements(corpus, "id = ?", [row_id])
    if not found:
        raise CorpusError(f"no disagreement {row_id!r} in {corpus.path}")
    return found[0]


def rows_on_target(corpus: Corpus, program_id: str, target: str) -> list[dict[str, Any]]:
    """The disagreement rows of a program on a target."""
    return _disagreements(corpus, "program_id = ? and target = ?", [program_id, target])


def rows_in_bucket(corpus: Corpus, program_id: str, bucket: str) -> list[dict[str, Any]]:
    """The disagreement rows of a program in a bucket."""
    return _disagreements(corpus, "program_id = ? and bucket = ?", [program_id, bucket])


def rows_by_prefix(corpus: Corpus, field: str, ref: str) -> list[dict[str, Any]]:
    """The disagreement rows whose ``field`` (one of :data:`PREFIX_FIELDS`) is ``ref`` or starts with it."""
    if field not in PREFIX_FIELDS:
        raise ValueError(f"rows are looked up by {', '.join(PREFIX_FIELDS)}, not {field!r}")
    return _disagreements(corpus, f"{field} = ? or {field} like ?", [ref, f"{ref}%"])


def first_result_row(corpus: Corpus, bucket: str, kinds_of: tuple[str, ...] = RESULT_KINDS) -> dict[str, Any] | None:
    """The wrong or imprecise lane (a row of one of ``kinds_of``) of ``bucket`` with the smallest id
    (None: its rows are failures), with ``build_options``: the options its run was built with
    (runs.options; None where the run recorded none)."""
    kinds = ",".join("?" * len(kinds_of))
    found = _sql.rows(corpus, f"select d.*, r.options as build_options from disagreements d left join runs r "
                              f"on r.id = d.run_id where d.bucket = ? and d.kind in ({kinds}) order by d.id limit 1",
                      [bucket, *kinds_of])
    return found[0] if found else None


def target_fingerprints(corpus: Corpus) -> dict[str, str | None]:
    """Each target's fingerprint id -> its fingerprint as stored (JSON text)."""
    found = _sql.rows(corpus, "select fingerprint_id, fingerprint from targets")
    return {r["fingerprint_id"]: r["fingerprint"] for r in found}


def fingerprint_of(corpus: Corpus, fingerprint_id: str) -> dict[str, Any]:
    """The fingerprint of a target (decoded; {} for an unknown id)."""
    text = _sql.value(corpus, "select fingerprint from targets where fingerprint_id = ?", [fingerprint_id])
    return json.loads(text) if text is not None else {}


def programs_by_id(corpus: Corpus, ids: Iterable[str]) -> list[dict[str, Any]]:
    """The stored programs among ``ids`` (``id``, ``area``, ``json``), in the order they were stored."""
    ids = list(ids)
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return _sql.rows(corpus, f"select id, area, json from programs where id in ({marks}) order by created", ids)


def campaign_programs(corpus: Corpus, campaign: str) -> list[dict[str, Any]]:
    """The programs of ``campaign`` (``id``, ``json``), in the order they were stored."""
    return _sql.rows(corpus, "select id, json from programs where campaign = ? order by rowid", [campaign])


def stored_programs(corpus: Corpus) -> list[dict[str, Any]]:
    """Every program's ``id``, ``area``, ``campaign``, ``statements`` and ``created``, oldest first."""
    return _sql.rows(corpus, "select id, area, campaign, statements, created from programs order by created")


def programs_run(corpus: Corpus, status: str | None = None, campaign: str | None = None) -> set[str]:
    """The ids of the programs with a run (of ``status``, of ``campaign``, where given)."""
    clauses = [(c, v) for c, v in (("status = ?", status), ("campaign = ?", campaign)) if v is not None]
    where = ("where " + " and ".join(c for c, _ in clauses)) if clauses else ""
    return {r["program_id"] for r in _sql.rows(corpus, f"select distinct program_id from runs {where}",
                                               [v for _, v in clauses])}


def node_campaigns(corpus: Corpus, name: str) -> list[str]:
    """The node campaigns of the distributed campaign ``name`` (``NAME@NODE``), by name."""
    found = _sql.rows(corpus, "select name from campaigns where substr(name, 1, ?) = ? order by name",
                      [len(name) + 1, f"{name}@"])
    return [r["name"] for r in found]


def node_totals(corpus: Corpus, name: str) -> tuple[int, int]:
    """The programs and checks of the node campaigns of the distributed campaign ``name``, summed."""
    found = _sql.rows(corpus, "select coalesce(sum(programs), 0) as p, coalesce(sum(checks), 0) as c from campaigns "
                              "where substr(name, 1, ?) = ?", [len(name) + 1, f"{name}@"])[0]
    return found["p"], found["c"]


def check_campaign(corpus: Corpus, campaign: str | None) -> None:
    """Raise :class:`CorpusError` where ``campaign`` is given and names no campaign of the corpus
    (none stored under that name, no run recorded under it), naming the campaigns there are."""
    if campaign is None or _sql.value(corpus, "select 1 as found from campaigns where name = ? union "
                                              "select 1 from runs where campaign = ? limit 1", [campaign, campaign]):
        return
    names = [r["name"] for r in _sql.rows(corpus, "select name from campaigns order by started")]
    raise CorpusError(f"no campaign {campaign!r} in {corpus.path}; its campaigns: {', '.join(names) or 'none'}")
