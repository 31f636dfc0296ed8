"""The corpus: programs, drivers, runs and disagreements in SQLite, through sqlite-utils.

Rows are content-addressed (a program's id is the hash of its canonical JSON; a disagreement's
id is the hash of program, target, buffer and lane), so writing the same thing twice is a no-op
and merging corpora is a union. The database runs in WAL mode and every run is written with its
disagreements in one transaction: a campaign killed at any instant leaves a consistent corpus.
A program row is written *before* the program is handed to any driver.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable

import sqlite_utils

from corpus.buckets import CULPRIT_FIELDS, STATUSES, driver_version
from corpus.keying import blame_rows, bucket_of, inherit, rebucket
from corpus.run_facts import bucket_facts, no_facts
from corpus.schema import DEVIATION_COLUMNS, CorpusError, outdated, upgrade
from lang.flow import FlowProgram, program_from_json
from lang.ir import InvalidProgram, Program

UNCLASSIFIED = "unclassified"
"""How a disagreement without a deviation (NULL: written before schema 5, a failure) is shown."""


def deviation_of(row: dict[str, Any]) -> str:
    """A disagreement row's deviation class, ``unclassified`` where it has none."""
    return row.get("deviation") or UNCLASSIFIED


REDUCED = ("statements", "work_items", "why", "undefined")
"""What a bucket row's ``reduced`` says of its latest reduction (:meth:`Corpus.buckets`)."""


def _now() -> float:
    return time.time()


def _writable(path: Path) -> bool:
    """Whether this process may write the corpus file and create its journal beside it."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _connect(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
    try:
        conn.execute("select count(*) from sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def read_only_uri(path: Path) -> str:
    """The SQLite URI that opens the corpus file at ``path`` so that nothing can write it
    (``mode=ro``). A corpus in WAL mode needs its shared-memory file beside it; where nothing may
    be created there (a read-only folder, an immutable file) and its log holds no write, the URI
    reads it as ``immutable``."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        _connect(uri).close()
    except sqlite3.OperationalError:
        log = Path(f"{path}-wal")
        if _writable(path) or (log.exists() and log.stat().st_size):
            raise
        uri += "&immutable=1"
    return uri


def _read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write the corpus at ``path`` (:func:`read_only_uri`), its schema
    current: a corpus of an older schema is first upgraded where this process may write it
    (corpus.schema.upgrade), else refused in one line."""
    conn = _connect(read_only_uri(path))
    stale = outdated(sqlite_utils.Database(conn), str(path))
    if stale is None:
        return conn
    conn.close()
    if stale == "an empty file":
        raise CorpusError(f"{path} is an empty file, not a corpus: run a campaign first (clfuzz run --corpus {path})")
    if not _writable(path):
        raise CorpusError(f"{path} is a corpus of {stale} and read-only here, so this clfuzz cannot upgrade it: "
                          f"run a writing command (clfuzz mark, clfuzz run) where it is writable, or copy it "
                          f"(cp {path} mine.db) and pass --corpus mine.db")
    Corpus(path, create=False).close()  # upgraded
    return _read_only(path)


def _locked(method):
    """Serialize a method on the corpus's lock: campaign threads share one connection."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper


class Corpus:
    """A clfuzz corpus at ``path`` (``":memory:"`` for tests), its schema brought up to date
    (corpus.schema). ``db`` is its sqlite-utils database, for the modules of this package only:
    every other module asks a named function (corpus.reads, corpus.bucket_queries,
    corpus.dashboard_queries), none takes SQL. ``lock`` is held by every read and write:
    campaign threads share the one connection."""

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False):
        self.path = str(path)
        self.lock = threading.RLock()
        self.read_only = read_only and self.path != ":memory:"
        if self.path != ":memory:":
            p = Path(self.path)
            if not p.exists() and (read_only or not create):
                raise CorpusError(f"no corpus at {self.path}: run a campaign first (clfuzz run --corpus {self.path}), "
                                  "or name another with --corpus")
            if p.exists() and p.is_dir():
                raise CorpusError(f"{self.path} is a directory, not a corpus file")
            if not self.read_only:
                self._writable_here(p)
        try:
            if self.read_only:
                self.db = sqlite_utils.Database(_read_only(Path(self.path)))
                return
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, uri=True)  # merge attaches URIs
            self.db = sqlite_utils.Database(conn)
            if self.path != ":memory:":
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
            upgrade(self.db, self.path)
        except sqlite3.DatabaseError as e:
            raise CorpusError(
                f"{self.path} is not a usable clfuzz corpus ({e}); move it aside or pass another --corpus path"
            ) from None

    @staticmethod
    def _writable_here(p: Path) -> None:
        """Raise :class:`CorpusError` where this process cannot write the corpus ``p`` (or create
        it, with its folder): a command that writes a corpus needs both the file and its folder."""
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CorpusError(f"cannot create the folder of the corpus {p}: {e.strerror}; pass another --corpus path") \
                from None
        if not _writable(p) if p.exists() else not os.access(p.parent, os.W_OK | os.X_OK):
            raise CorpusError(f"{p} cannot be {'written' if p.exists() else 'created'} by this user (a command that "
                              "records something needs the corpus file and its folder writable; the reading commands "
                              "only read): pass another --corpus path, or copy the corpus")

    # ---- writing ---------------------------------------------------------------------------

    @_locked
    def add_program(self, program: Program | FlowProgram, campaign: str = "") -> str:
        """Store a program of any area (a lang.flow.FlowProgram too), idempotent; return its id."""
        pid = program.id
        with self.db.conn:
            self.db["programs"].insert(
                {"id": pid, "json": program.to_json(), "area": program.area, "campaign": campaign,
                 "created": _now(), "statements": len(program.body)}, ignore=True)
        return pid

    @_locked
    def add_target(self, name: str, path: str, fingerprint_id: str, fingerprint: dict) -> None:
        with self.db.conn:
            self.db["targets"].insert(
                {"fingerprint_id": fingerprint_id, "name": name, "path": path,
                 "fingerprint": json.dumps(fingerprint, sort_keys=True), "first_seen": _now()},
                ignore=True,
            )

    @_locked
    def add_run(self, run: dict[str, Any], disagreements: Iterable[dict[str, Any]],
                errors: Iterable[dict[str, Any]] = (), defects: Iterable[dict[str, Any]] = ()) -> int:
        """One run, its disagreements, its statements' largest errors in ulps (math area) and its
        oracle defects (lanes whose re-derived expectation differs: campaign.rederive; no bucket),
        atomically. Returns the run's id."""
        with self.db.conn:
            run = {**run, "created": _now()}
            run_id = self.db["runs"].insert(run).last_pk
            stamp = {"run_id": run_id, "created": run["created"], "campaign": run.get("campaign", "")}
            rows = []
            for d in disagreements:
                key = f"{d['program_id']}|{d['fingerprint_id']}|{d['path']}|{d['buffer']}|{d['lane']}|{d['kind']}"
                row = {**dict.fromkeys(DEVIATION_COLUMNS), **d, "id": hashlib.sha256(key.encode()).hexdigest()[:20],
                       **stamp}
                row["bucket"] = bucket_of(self.db, row)
                rows.append(row)
            kept = [{**d, "id": hashlib.sha256(f"{d['program_id']}|{d['fingerprint_id']}|{d['path']}|{d['buffer']}|"
                                               f"{d['lane']}".encode()).hexdigest()[:20], **stamp} for d in defects]
            if kept:
                self.db["oracle_defects"].insert_all(kept, ignore=True)
            measured = [{**e, "run_id": run_id, "program_id": run["program_id"], "target": run["target"],
                         "path": run["path"], "campaign": run.get("campaign", ""), "created": run["created"]}
                        for e in errors]
            if measured:
                self.db["errors"].insert_all(measured, batch_size=500)
            if rows:
                self.db["disagreements"].insert_all(rows, ignore=True, batch_size=500)
                seen = sorted({r["bucket"] for r in rows})
                self.db.execute(  # a fixed bug seen again is news (corpus.buckets.STATUSES)
                    f"update buckets set status = 'new', note = 'seen again after it was marked fixed', changed = ? "
                    f"where status = 'fixed' and id in ({','.join('?' * len(seen))})", [run["created"], *seen])
        return int(run_id)

    @_locked
    def blame(self, bucket: str, culprit: dict[str, Any]) -> str:
        """Record that the rows of ``bucket`` are the fault of ``culprit`` (a row of the faulty
        sub-expression triage isolated: triage.reduce's ``culprit`` pass) and move them to the
        bucket keyed on it (corpus.buckets.signature); returns that bucket, which takes the old
        one's status and note where it is new (corpus.keying.inherit)."""
        keep = json.dumps({k: culprit.get(k, "") for k in CULPRIT_FIELDS}, sort_keys=True)
        old = self.db["buckets"].get(bucket)
        with self.db.conn:
            new = blame_rows(self.db, old, keep)
            if new != bucket:
                inherit(self.db, new, [old])
            self.db.execute("update reductions set bucket = ? where bucket = ?", [new, bucket])
        return new

    # ---- buckets ---------------------------------------------------------------------------

    @_locked
    def buckets(self, campaign: str | None = None, bucket: str | None = None) -> list[dict[str, Any]]:
        """Every bucket with rows (of ``campaign``, or only ``bucket``, if given): id, title,
        signature, status, note, ``url`` (where the vendor's bug is, or None), rows, programs, first
        and last seen, the ``paths`` (front ends),
        driver versions (``seen_on``) and ``targets`` (``{"target", "path", "fingerprint"}``, as
        stored) its rows were seen on, its release range (``versions``: the driver and version of
        each release checked -> present, absent, cannot-build, ...: triage.versions), confirmation
        (confirmed, flaky or unconfirmed), ``reduced``: None, or the size (statements,
        work_items) of its latest reduced program, with ``why`` it is not smaller and what of it the
        spec leaves ``undefined`` or implementation-defined (a list, None for a reduction older than
        that record), and what its runs say (corpus.run_facts: ``build_options``,
        ``build_options_by_path``, ``options_unrecorded``, ``hang``, ``slow_runs``); most rows first."""
        clauses = [(c, v) for c, v in (("d.campaign = ?", campaign), ("d.bucket = ?", bucket)) if v is not None]
        where = ("where " + " and ".join(c for c, _ in clauses)) if clauses else ""
        fingerprints = {t["fingerprint_id"]: json.loads(t["fingerprint"]) for t in self.db["targets"].rows}
        versions = {f: driver_version(fp) for f, fp in fingerprints.items()}
        ranges: dict[str, dict[str, str]] = {}  # bucket -> "pocl 6.0+debian" -> present, absent, ...
        for c in self.db["release_checks"].rows_where(order_by="release != 'system', target"):
            ranges.setdefault(c["bucket"], {})[f"{c['lineage']} {c['version']}".strip()] = c["verdict"]
        facts = bucket_facts(self.db, where, [v for _, v in clauses])
        out = []
        for r in self.db.query(
            f"""select d.bucket as id, count(*) as rows, count(distinct d.program_id) as programs,
                       min(d.created) as first_seen, max(d.created) as last_seen,
                       sum(d.confirmation = 'confirmed') as confirmed, min(d.id) as example,
                       b.title, b.signature, b.target, b.status, b.note, b.url, b.reproduced,
                       group_concat(distinct d.path) as paths, group_concat(distinct d.rule) as rules,
                       group_concat(distinct d.target || char(9) || d.path || char(9) || d.fingerprint_id) as seen,
                       (select json_set(r.size_after, '$.why', coalesce(r.why, ''), '$.undefined', json(r.undefined))
                        from reductions r
                        where r.bucket = d.bucket order by r.created desc limit 1) as reduced
                from disagreements d join buckets b on b.id = d.bucket {where}
                group by d.bucket order by rows desc, d.bucket""", [v for _, v in clauses]):
            sig = json.loads(r["signature"])
            seen = sorted(tuple(s.split("\t")) for s in r.pop("seen").split(","))
            reduced = json.loads(r["reduced"]) if r["reduced"] else None
            out.append({**r, "signature": sig, "paths": sorted(r["paths"].split(",")),
                        "rules": sorted(set((r["rules"] or "").split(",")) - {""}),
                        "reduced": reduced and {k: reduced.get(k) for k in REDUCED},
                        "seen_on": sorted({versions.get(f, "") for _, _, f in seen} - {""}),
                        "targets": [{"target": t, "path": p, "fingerprint": fingerprints.get(f, {})} for t, p, f in seen],
                        "versions": ranges.get(r["id"], {}), **facts[r["id"]],
                        "confirmation": "flaky" if sig.get("flaky") else "confirmed" if r["confirmed"] else "unconfirmed"})
        return out

    @_locked
    def bucket(self, ref: str) -> dict[str, Any]:
        """The bucket whose id is ``ref`` or starts with it (as listed by :meth:`buckets`)."""
        rows = list(self.db["buckets"].rows_where("id = ? or id like ?", [ref, f"{ref}%"], limit=2))
        if not rows:
            raise CorpusError(f"no bucket {ref!r} in {self.path}; `clfuzz buckets --corpus {self.path}` lists them")
        if len(rows) > 1:
            raise CorpusError(f"bucket id prefix {ref!r} is ambiguous; give more characters")
        found = self.buckets(bucket=rows[0]["id"])
        if not found:
            return {**rows[0], "signature": json.loads(rows[0]["signature"]), "rows": 0, "programs": 0,
                    "first_seen": None, "last_seen": None, "confirmation": "unconfirmed", "reduced": None,
                    "paths": [], "seen_on": [], "targets": [], "versions": {}, **no_facts()}
        return found[0]

    @_locked
    def mark(self, ref: str, status: str, note: str = "", url: str | None = None) -> dict[str, Any]:
        """Set a bucket's status (corpus.buckets.STATUSES) and note, and where ``url`` is given where
        the vendor's bug is (kept otherwise); returns the bucket."""
        if status not in STATUSES:
            raise CorpusError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
        bid = self.bucket(ref)["id"]
        with self.db.conn:
            self.db["buckets"].update(bid, {"status": status, "note": note, "changed": _now(),
                                            **({"url": url} if url is not None else {})})
        return self.bucket(bid)

    @_locked
    def confirm(self, program_id: str, target: str, bucket: str, reproduced: bool) -> None:
        """Record whether the rows of ``bucket`` in one run of a program reproduced on a fresh
        worker (triage.confirm): ``confirmed``, or ``flaky`` (moved to a flaky bucket of their own)."""
        where, params = "program_id = ? and target = ? and bucket = ?", [program_id, target, bucket]
        with self.db.conn:
            self.db.execute(f"update disagreements set confirmation = ? where {where}",
                            ["confirmed" if reproduced else "flaky", *params])
            if not reproduced:
                rebucket(self.db, where, params)

    @_locked
    def decide_hang(self, program_id: str, target: str, verdict: dict[str, Any]) -> None:
        """Record on the timeout rows of a program on a target whether its re-run at ten times the
        ceiling finished (triage.slow: ``hang``, ``limit_s``, ``seconds``, ``status``), beside what
        their ``slow`` column held (``given_s``)."""
        where = "program_id = ? and target = ? and kind = 'timeout'"
        with self.db.conn:
            for row in list(self.db["disagreements"].rows_where(where, [program_id, target])):
                known = json.loads(row["slow"] or "{}")
                self.db["disagreements"].update(row["id"], {"slow": json.dumps({**known, **verdict}, sort_keys=True)})

    @_locked
    def reproduced(self, bucket: str, shown: int, runs: int) -> None:
        """Record that ``bucket``'s disagreement showed again in ``shown`` of ``runs`` re-runs."""
        with self.db.conn:
            self.db["buckets"].update(bucket, {"reproduced": f"{shown}/{runs}"})

    @_locked
    def add_release_checks(self, rows: list[dict[str, Any]]) -> None:
        """A bucket's release range (triage.versions): one row per release checked, replacing the last."""
        with self.db.conn:
            self.db["release_checks"].upsert_all(rows, pk="id")

    @_locked
    def add_evidence(self, row: dict[str, Any]) -> None:
        """Why bucket ``row["bucket"]`` is ``row["same_as"]``'s bug (triage.siblings), once per pair and kind."""
        key = f"{row['bucket']}:{row['same_as']}:{row['kind']}"
        with self.db.conn:
            self.db["bug_evidence"].upsert({"id": key, "created": _now(), **row}, pk="id")

    @_locked
    def release_checks(self, bucket: str) -> list[dict[str, Any]]:
        """The release range rows of ``bucket``, the system's driver first."""
        return list(self.db["release_checks"].rows_where("bucket = ?", [bucket], order_by="release != 'system', target"))

    @_locked
    def add_reduction(self, row: dict[str, Any]) -> None:
        """A reduced program beside its original (triage.reduce); the reduced program is stored."""
        with self.db.conn:
            self.db["reductions"].upsert({**row, "created": _now()}, pk="id")

    @_locked
    def reductions(self, bucket: str | None = None) -> list[dict[str, Any]]:
        where, params = ("bucket = ?", [bucket]) if bucket else (None, [])
        return list(self.db["reductions"].rows_where(where, params, order_by="created"))

    @_locked
    def update_campaign(self, name: str, seed: int, settings: dict, programs: int, checks: int,
                        state: dict | None = None) -> None:
        """Create the campaign row or record its progress (``state``: campaign.scheduler's, to resume)."""
        progress = {"updated": _now(), "programs": programs, "checks": checks,
                    **({"state": json.dumps(state, sort_keys=True)} if state is not None else {})}
        with self.db.conn:
            if self.db["campaigns"].count_where("name = ?", [name]):
                self.db["campaigns"].update(name, progress)
            else:
                self.db["campaigns"].insert({"name": name, "seed": seed, "settings": json.dumps(settings, sort_keys=True),
                                             "started": _now(), **progress})

    @_locked
    def campaign(self, name: str) -> dict[str, Any] | None:
        """A stored campaign (settings and state decoded), or None."""
        rows = list(self.db["campaigns"].rows_where("name = ?", [name]))
        if not rows:
            return None
        row = rows[0]
        return {**row, "settings": json.loads(row["settings"] or "{}"), "state": json.loads(row.get("state") or "{}")}

    @_locked
    def left_pending(self, name: str, reasons: dict[str, str]) -> None:
        """Record in campaign ``name``'s state why each of its buckets still waiting for triage was
        not reduced (``triage_left``: bucket id -> one line, triage.beside); a resumed run's state
        replaces it."""
        row = self.db["campaigns"].get(name)
        state = {**json.loads(row["state"] or "{}"), "triage_left": reasons}
        with self.db.conn:
            self.db["campaigns"].update(name, {"state": json.dumps(state, sort_keys=True)})

    # ---- the Hypothesis example database (corpus.hypothesis_db) --------------------------------

    @_locked
    def example_values(self, key: bytes) -> list[bytes]:
        return [r["value"] for r in self.db.query("select value from hypothesis where key = ?", [key])]

    @_locked
    def save_example(self, key: bytes, value: bytes) -> None:
        with self.db.conn:
            self.db["hypothesis"].insert({"key": key, "value": value}, ignore=True)

    @_locked
    def delete_example(self, key: bytes, value: bytes) -> None:
        with self.db.conn:
            self.db.execute("delete from hypothesis where key = ? and value = ?", [key, value])

    # ---- reading ---------------------------------------------------------------------------

    @_locked
    def judged(self, program_id: str, target: str) -> bool:
        """Whether a run of ``program_id`` on ``target`` was judged (status ok): a resumed
        campaign does not run such a part again."""
        return bool(self.db.execute("select 1 from runs where program_id = ? and target = ? and status = 'ok' limit 1",
                                    [program_id, target]).fetchone())

    @_locked
    def program(self, pid: str) -> Program | FlowProgram:  # of any area: lang.flow.program_from_json
        rows = list(self.db["programs"].rows_where("id = ? or id like ?", [pid, f"{pid}%"], limit=2))
        if not rows:
            raise CorpusError(f"no program {pid!r} in {self.path}; `clfuzz stats --corpus {self.path}` lists what is there")
        if len(rows) > 1:
            raise CorpusError(f"program id prefix {pid!r} is ambiguous; give more characters")
        try:
            return program_from_json(rows[0]["json"])
        except InvalidProgram as e:
            raise CorpusError(f"program {pid} in {self.path} is corrupt: {e}") from None

    @_locked
    def disagreements(self) -> list[dict]:
        """Every disagreement row, oldest first (the rows of one bucket, program or target: corpus.reads)."""
        return list(self.db["disagreements"].rows_where(order_by="created"))

    @_locked
    def oracle_defects(self, campaign: str | None = None) -> list[dict]:
        """The oracle defects (of ``campaign``, if given), oldest first: lanes whose disagreement
        the re-derivation did not confirm (campaign.rederive), which are no bucket's rows."""
        where, params = ("campaign = ?", [campaign]) if campaign else (None, [])
        return list(self.db["oracle_defects"].rows_where(where, params, order_by="created"))

    @_locked
    def checkpoint(self) -> None:
        """Write the write-ahead log into the corpus file and empty it (a file copied whole)."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.db.conn.close()
