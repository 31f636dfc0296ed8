"""The corpus schema: its tables as data, its history as named migrations (sqlite_utils.migrations).

Each table is declared once (:class:`Table`: its columns as the migration that creates it makes
them); each later step of the schema is a named migration (``m005_deviation``) whose docstring says
what it adds. A new corpus runs every migration; a corpus is upgraded by running the ones it has not
had, each in a savepoint of one transaction with the record of it in ``_sqlite_migrations``.

Corpora written before the migrations were recorded carry only ``meta.schema_version`` = N: opening
one records migrations 1..N as applied, then runs the pending ones. ``meta.schema_version`` is
kept at :data:`SCHEMA_VERSION` (other tools read it), and a corpus whose buckets were keyed by
another signature (corpus.buckets.SIGNATURE_VERSION) is re-keyed (corpus.keying.rekey). A corpus
of a newer clfuzz (a higher schema version, or a migration this one does not know) and an SQLite
file that is not a corpus are refused with one line (:class:`CorpusError`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Callable

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from corpus.buckets import SIGNATURE_VERSION, driver_family
from corpus.keying import rebucket, rekey


class CorpusError(Exception):
    """The corpus file cannot be used; the message says what is wrong and what to do."""


@dataclass(frozen=True)
class Table:
    """A table as the migration that creates it makes it: its columns in order (name -> Python
    type, as sqlite-utils maps them), primary key, foreign keys and indexes."""

    name: str
    columns: dict[str, type]
    pk: str | tuple[str, ...]
    foreign_keys: tuple[tuple[str, str, str], ...] = ()
    indexes: tuple[tuple[str, ...], ...] = ()

    def create(self, db: Database) -> None:
        """Create the table and its indexes in ``db``."""
        db[self.name].create(self.columns, pk=self.pk, foreign_keys=list(self.foreign_keys) or None)
        for index in self.indexes:
            db[self.name].create_index(list(index))


META = Table("meta", {"key": str, "value": str}, pk="key")
PROGRAMS = Table("programs", {"id": str, "json": str, "area": str, "campaign": str, "created": float,
                              "statements": int}, pk="id")
TARGETS = Table("targets", {"fingerprint_id": str, "name": str, "path": str, "fingerprint": str, "first_seen": float},
                pk="fingerprint_id")
RUNS = Table("runs", {"id": int, "program_id": str, "target": str, "fingerprint_id": str, "path": str, "status": str,
                      "checks": int, "judged": int, "mismatches": int, "build_s": float, "run_s": float, "log": str,
                      "campaign": str, "created": float},
             pk="id", foreign_keys=(("program_id", "programs", "id"),), indexes=(("program_id",),))
DISAGREEMENTS = Table("disagreements", {
    "id": str, "program_id": str, "run_id": int, "target": str, "fingerprint_id": str, "path": str, "kind": str,
    "buffer": str, "work_item": int, "lane": int, "operation": str, "src_type": str, "dst_type": str,
    "expression": str, "inputs": str, "expected": str, "allowed": str, "actual": str, "expected_value": str,
    "actual_value": str, "rule": str, "rule_text": str, "section": str, "input_class": str, "campaign": str,
    "created": float,
}, pk="id", foreign_keys=(("program_id", "programs", "id"),), indexes=(("target", "operation"),))
CAMPAIGNS = Table("campaigns", {"name": str, "seed": int, "settings": str, "started": float, "updated": float,
                                "programs": int, "checks": int}, pk="name")
BUCKETS = Table("buckets", {"id": str, "title": str, "signature": str, "target": str, "status": str, "note": str,
                            "created": float, "changed": float}, pk="id")
REDUCTIONS = Table("reductions", {"id": str, "original_id": str, "reduced_id": str, "bucket": str, "target": str,
                                  "seconds": float, "candidates": int, "size_before": str, "size_after": str,
                                  "created": float}, pk="id")
HYPOTHESIS = Table("hypothesis", {"key": bytes, "value": bytes}, pk=("key", "value"))
ERRORS = Table("errors", {
    "id": int, "run_id": int, "program_id": str, "target": str, "path": str, "campaign": str, "buffer": str,
    "operation": str, "type": str, "ulps": float, "limit": float, "accepted": int, "rule": str, "bound": str,
    "work_item": int, "lane": int, "expression": str, "inputs": str, "reference": str, "actual_value": str,
    "created": float,
}, pk="id", foreign_keys=(("run_id", "runs", "id"),), indexes=(("target", "operation", "type"),))
RELEASE_CHECKS = Table("release_checks", {
    "id": str, "bucket": str, "target": str, "lineage": str, "version": str, "release": str,
    "fingerprint_id": str, "program_id": str, "verdict": str, "detail": str, "seconds": float, "checked": float,
}, pk="id", indexes=(("bucket",),))
ORACLE_DEFECTS = Table("oracle_defects", {
    "id": str, "program_id": str, "run_id": int, "target": str, "fingerprint_id": str, "path": str, "campaign": str,
    "buffer": str, "work_item": int, "lane": int, "operation": str, "expression": str, "inputs": str, "actual": str,
    "actual_value": str, "rule": str, "expected": str, "rederived": str, "why": str, "created": float,
}, pk="id", foreign_keys=(("program_id", "programs", "id"),))
BUG_EVIDENCE = Table("bug_evidence", {
    "id": str, "bucket": str, "same_as": str, "kind": str, "program_id": str, "detail": str, "created": float,
}, pk="id", indexes=(("bucket",), ("same_as",)))
VARIANTS = Table("variants", {"program_id": str, "original_id": str, "kind": str, "created": float},
                 pk="program_id", indexes=(("original_id",),))

BUCKETED = {"bucket": str, "confirmation": str}
"""Schema 2: the columns a disagreement gained."""
CAMPAIGN_STATE = {"state": str}
"""Schema 3: the column a campaign gained."""
DEVIATION = {"deviation": str, "deviation_detail": str}
"""Schema 5: what a wrong value is (a class of oracles.deviation.CLASSES) and a sentence about it."""
DEVIATION_COLUMNS = tuple(DEVIATION)
CULPRIT = {"culprit": str}
"""Schema 6: the column a disagreement gained."""
REPRODUCED, WHY = {"reproduced": str}, {"why": str}
"""Schema 7: the columns a bucket and a reduction gained."""
BUILD_OPTIONS = {"options": str}
"""Schema 9: the column a run gained."""
SLOW = {"slow": str}
"""Schema 10: the column a disagreement gained."""
UNDEFINED = {"undefined": str}
"""Schema 12: the column a reduction gained."""
URL = {"url": str}
"""Schema 13: the column a bucket gained."""

MIGRATIONS = Migrations("clfuzz")
NAMES: list[str] = []
"""The migrations' names in order: schema N is the first N of them."""


def migration(step: Callable[[Database], None]) -> Callable[[Database], None]:
    """Register ``step`` as the next migration, under its function name (``mNNN_what``)."""
    NAMES.append(step.__name__)
    return MIGRATIONS()(step)


def _add(db: Database, table: str, columns: dict[str, type]) -> None:
    for name, kind in columns.items():
        db[table].add_column(name, kind)


@migration
def m001_tables(db: Database) -> None:
    """Tables programs, targets, runs, disagreements and campaigns, and meta (the schema version)."""
    for table in (META, PROGRAMS, TARGETS, RUNS, DISAGREEMENTS, CAMPAIGNS):
        table.create(db)


@migration
def m002_buckets(db: Database) -> None:
    """Disagreements carry their bucket and confirmation; tables buckets (status per bucket) and
    reductions (a reduced program beside its original). The rows already there are bucketed."""
    _add(db, "disagreements", BUCKETED)
    BUCKETS.create(db)
    REDUCTIONS.create(db)
    db["disagreements"].create_index(["bucket"], if_not_exists=True)
    rebucket(db, "bucket is null or bucket = ''")


@migration
def m003_campaign_state(db: Database) -> None:
    """Campaigns carry their state (where each area's draws stand, the scheduler's counts:
    campaign.scheduler); table hypothesis (the campaigns' Hypothesis example database:
    corpus.hypothesis_db)."""
    _add(db, "campaigns", CAMPAIGN_STATE)
    HYPOTHESIS.create(db)


@migration
def m004_errors(db: Database) -> None:
    """Table errors (the largest error in ulps per statement and run); the index of disagreements
    by bucket, which corpora created at schemas 2 and 3 lack (only an upgrade from 1 made it)."""
    ERRORS.create(db)
    db["disagreements"].create_index(["bucket"], if_not_exists=True)


@migration
def m005_deviation(db: Database) -> None:
    """Disagreements carry their deviation (oracles.deviation: the class of the wrong value) and
    its detail; rows of older corpora, failures and atomics' history rows have NULL (unclassified)."""
    _add(db, "disagreements", DEVIATION)


@migration
def m006_culprit(db: Database) -> None:
    """Disagreements carry their ``culprit``: the faulty sub-expression triage found for them (JSON
    of its operation, types, rule and deviation; NULL: none found, the operation is its own)."""
    _add(db, "disagreements", CULPRIT)


@migration
def m007_reproduction(db: Database) -> None:
    """Buckets carry their reproduction rate (``reproduced``, "k/n": triage.confirm); reductions say
    why the reduced program is not one statement on one work-item (``why``; "" when it is)."""
    _add(db, "buckets", REPRODUCED)
    _add(db, "reductions", WHY)


@migration
def m008_release_checks(db: Database) -> None:
    """Table release_checks (a bucket's reproducer judged on each release of its driver: triage.versions)."""
    RELEASE_CHECKS.create(db)


@migration
def m009_build_options(db: Database) -> None:
    """Runs carry the exact options string their program was built with (``options``: what
    ``clBuildProgram`` got, campaign.jobs.build_options); runs of older corpora have NULL (not
    recorded)."""
    _add(db, "runs", BUILD_OPTIONS)


@migration
def m010_slow(db: Database) -> None:
    """Disagreements of a run cut at its ceiling (kind ``timeout``) carry what is known of it
    (``slow``, JSON): the seconds it was given (``given_s``, fuzz.judge.failure_row) and, once
    triage re-ran it at ten times that (triage.slow), its hang verdict: ``hang`` (it did not
    finish), ``limit_s``, ``seconds`` and ``status`` of the re-run. NULL for every other row and
    for the timeout rows of older corpora (their time given is read from their message)."""
    _add(db, "disagreements", SLOW)


@migration
def m011_oracle_defects(db: Database) -> None:
    """Table oracle_defects: lanes that disagreed with an expectation the uncached exact reference
    did not confirm when it re-derived them (campaign.rederive): the oracle's defects, kept out of
    the disagreements and never bucketed; ``expected`` is the campaign's accepted set, ``rederived``
    the reference's, ``why`` how they differ."""
    ORACLE_DEFECTS.create(db)


@migration
def m012_reduction_defined(db: Database) -> None:
    """Reductions say what of the reduced program the specification leaves undefined or
    implementation-defined (``undefined``: JSON, a list of triage.reduce.passes.defined.summary's
    entries; "[]" for a defined program, NULL for a reduction made before this migration): the
    disagreement did not show without it, and the bucket's severity is ``letter``."""
    _add(db, "reductions", UNDEFINED)


@migration
def m013_bugs(db: Database) -> None:
    """Buckets record where the vendor's bug is (``url``, ``clfuzz mark ID reported --url URL``);
    table bug_evidence: why a bucket is the same bug as another of its driver (triage.bugs): the
    ``kind`` of evidence, the program of the re-run that showed it (``program_id``, or empty) and
    its ``detail`` (JSON: operand, values, deviation)."""
    _add(db, "buckets", URL)
    BUG_EVIDENCE.create(db)


@migration
def m014_variants(db: Database) -> None:
    """Table variants: a program made from another as an equivalence-modulo-inputs variant
    (fuzz.strategies.flow_emi: ``kind`` dead, live, split) names its original (``original_id``,
    the program as drawn); programs that are no variant have no row."""
    VARIANTS.create(db)


@migration
def m015_reduction_buckets(db: Database) -> None:
    """A reduction names the bucket its reduced case's rows went to. Before this, Corpus.blame
    could name another driver's bucket whose rows shared the culprit; such a reduction now names
    the bucket of its reduced program's first row on its own target (where it has one)."""
    for r in list(db["reductions"].rows):
        families = {driver_family(t) for (t,) in db.execute(
            "select distinct target from disagreements where bucket = ?", [r["bucket"]])}
        if not families or driver_family(r["target"] or "") in families:
            continue
        own = db.execute("select bucket from disagreements where program_id = ? and target = ? order by id limit 1",
                         [r["reduced_id"], r["target"]]).fetchone()
        if own:
            db["reductions"].update(r["id"], {"bucket": own[0]})


SCHEMA_VERSION = len(NAMES)
"""The schema this clfuzz writes: the number of its migrations (``meta.schema_version``)."""


def _meta(db: Database, key: str) -> str | None:
    found = db.execute("select value from meta where key = ?", [key]).fetchone()
    return found[0] if found else None


def outdated(db: Database, path: str) -> str | None:
    """What :func:`upgrade` would change in the corpus ``db`` (the file at ``path``, named in
    errors), read without writing: ``"schema N"`` (migrations to run), ``"bucket signature N"``
    (buckets to re-key), ``"an empty file"``, or None when it is up to date; raises
    :class:`CorpusError` for a file that is not a clfuzz corpus or was written by a newer clfuzz."""
    tables = set(db.table_names())
    if not tables:
        return "an empty file"
    if "meta" not in tables:
        raise CorpusError(f"{path} is an SQLite database but not a clfuzz corpus; pass another --corpus path")
    version = int(_meta(db, "schema_version") or 0)
    if version > SCHEMA_VERSION:
        raise CorpusError(f"{path} was written by a newer clfuzz (schema {version}); upgrade clfuzz")
    recorded = MIGRATIONS.migrations_table in tables
    applied = [m.name for m in MIGRATIONS.applied(db)] if recorded else []
    unknown = [name for name in applied if name not in NAMES]
    if unknown:
        raise CorpusError(f"{path} was written by a newer clfuzz (migration {unknown[0]}); upgrade clfuzz")
    if version != SCHEMA_VERSION or not recorded or len(applied) != len(NAMES):
        return f"schema {version}"
    signature = _meta(db, "signature_version") or "1"
    return None if signature == str(SIGNATURE_VERSION) else f"bucket signature {signature}"


def upgrade(db: Database, path: str) -> None:
    """Bring the corpus ``db`` (the file at ``path``, named in errors) to :data:`SCHEMA_VERSION` and
    the current signature (module docstring), in one transaction; raises :class:`CorpusError` for a
    file that is not a clfuzz corpus or was written by a newer clfuzz (:func:`outdated`)."""
    if outdated(db, path) is None:
        return
    tables = set(db.table_names())
    recorded = MIGRATIONS.migrations_table in tables
    version = int(_meta(db, "schema_version") or 0) if tables else 0
    with db.atomic():
        if tables and not recorded:  # written before migrations were recorded: its schema version says
            MIGRATIONS.ensure_migrations_table(db)
            applied = str(datetime.datetime.now(datetime.timezone.utc))
            db[MIGRATIONS.migrations_table].insert_all(
                {"migration_set": MIGRATIONS.name, "name": name, "applied_at": applied} for name in NAMES[:version])
        MIGRATIONS.apply(db)
        if version != SCHEMA_VERSION:
            db["meta"].upsert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key")
        if (_meta(db, "signature_version") or "1") != str(SIGNATURE_VERSION):
            rekey(db)
            db["meta"].upsert({"key": "signature_version", "value": str(SIGNATURE_VERSION)}, pk="key")
