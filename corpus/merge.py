"""Merging corpora from several machines into one: a union without duplicates.

Programs, disagreements and reductions are content-addressed (their ids are hashes), targets are
keyed by fingerprint and Hypothesis examples by (key, value), so the same row from two machines
is one row. Runs have local integer ids: a run is the same run when program, fingerprint, path,
target and timestamp agree; its disagreements and oracle defects follow it under the new run id.
Bucket status is a person's decision: when two corpora disagree about a bucket, the later change
wins (``changed``), so "reported" on one machine and "new" on another merge to "reported"; a
timeout's hang verdict decided on one machine is kept. A campaign present in both keeps its
settings, the earliest start, the latest update and, per area, the scheduler state that has drawn
furthest (campaign.scheduler: the later state of the same stream); its program and check counts
are recounted from the merged rows.

Merging is idempotent: merging a corpus into one that already holds it adds nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from corpus.store import Corpus, read_only_uri

_RUN_KEY = ("program_id", "fingerprint_id", "path", "target", "created")


@dataclass
class Merged:
    """Rows added by a merge, per table."""

    programs: int = 0
    targets: int = 0
    runs: int = 0
    disagreements: int = 0
    buckets: int = 0
    reductions: int = 0
    campaigns: int = 0

    def add(self, other: "Merged") -> None:
        for k, v in vars(other).items():
            setattr(self, k, getattr(self, k) + v)


def merge(into: Corpus, source: str | Path) -> Merged:
    """Add every row of the corpus at ``source`` to ``into`` (module docstring); returns the counts.
    The source is only read (attached read-only; an old schema is upgraded where it is writable)."""
    Corpus(source, read_only=True).close()  # one-line error for a bad file
    db = into.db
    counts = Merged()
    with into.lock, db.conn:
        db.execute("attach database ? as src", [read_only_uri(Path(source))])
        try:
            for table in ("programs", "targets", "reductions", "hypothesis"):
                counts_before = db[table].count
                columns = ", ".join(f"[{c}]" for c in db[table].columns_dict)
                db.execute(f"insert or ignore into main.[{table}] ({columns}) select {columns} from src.[{table}]")
                if hasattr(counts, table):
                    setattr(counts, table, db[table].count - counts_before)
            counts.runs, counts.disagreements = _runs(into)
            counts.buckets = _buckets(into)
            counts.campaigns = _campaigns(into)
        finally:
            db.conn.commit()
            db.execute("detach database src")
    return counts


def _runs(into: Corpus) -> tuple[int, int]:
    """Runs not yet present (by _RUN_KEY), then their disagreements and oracle defects under the new
    run ids."""
    db = into.db
    same = " and ".join(f"r.[{c}] is s.[{c}]" for c in _RUN_KEY)
    columns = [c for c in db["runs"].columns_dict if c != "id"]
    names = ", ".join(f"[{c}]" for c in columns)
    before = db["runs"].count
    db.execute(f"""insert into main.runs ({names}) select {', '.join(f's.[{c}]' for c in columns)} from src.runs s
                   where not exists (select 1 from main.runs r where {same})""")
    runs = db["runs"].count - before
    before = db["disagreements"].count
    for table in ("disagreements", "oracle_defects"):  # under the new run ids
        columns = [c for c in db[table].columns_dict if c != "run_id"]
        db.execute(f"""insert or ignore into main.{table} ({', '.join(f'[{c}]' for c in columns)}, run_id)
                       select {', '.join(f'd.[{c}]' for c in columns)},
                              (select r.id from main.runs r join src.runs s on {same} where s.id = d.run_id)
                       from src.{table} d""")
    disagreements = db["disagreements"].count - before
    # a hang verdict (schema 10, triage.slow) decided in the source follows a row undecided here
    decided = ("select s.slow from src.disagreements s where s.id = main.disagreements.id "
               "and json_extract(s.slow, '$.hang') is not null")
    db.execute(f"""update main.disagreements set slow = ({decided})
                   where json_extract(slow, '$.hang') is null and exists ({decided})""")
    # the largest errors (schema 4) follow their runs too, once per run and buffer
    columns = [c for c in db["errors"].columns_dict if c not in ("id", "run_id")]
    mapped = f"(select r.id from main.runs r join src.runs s on {same} where s.id = e.run_id)"
    db.execute(f"""insert into main.errors ({', '.join(f'[{c}]' for c in columns)}, run_id)
                   select {', '.join(f'e.[{c}]' for c in columns)}, {mapped} from src.errors e
                   where not exists (select 1 from main.errors m where m.run_id = {mapped} and m.buffer is e.buffer)""")
    return runs, disagreements


def _buckets(into: Corpus) -> int:
    """New buckets are added; for a bucket in both, the row changed last wins (status and note)."""
    db = into.db
    before = db["buckets"].count
    columns = ", ".join(f"[{c}]" for c in db["buckets"].columns_dict)
    db.execute(f"insert or ignore into main.buckets ({columns}) select {columns} from src.buckets")
    db.execute("""update main.buckets set
                    status = (select s.status from src.buckets s where s.id = main.buckets.id),
                    note = (select s.note from src.buckets s where s.id = main.buckets.id),
                    changed = (select s.changed from src.buckets s where s.id = main.buckets.id)
                  where exists (select 1 from src.buckets s where s.id = main.buckets.id and s.changed > main.buckets.changed)""")
    return db["buckets"].count - before


def _campaigns(into: Corpus) -> int:
    db = into.db
    mine = {r["name"]: r for r in db.query("select * from main.campaigns")}
    added = 0
    for row in db.query("select * from src.campaigns"):
        have = mine.get(row["name"])
        if have is None:
            db["campaigns"].insert(row)
            added += 1
            continue
        state = json.loads(have.get("state") or "{}")
        areas = state.setdefault("areas", {})
        for area, theirs in json.loads(row.get("state") or "{}").get("areas", {}).items():
            if theirs.get("next", 0) > areas.get(area, {}).get("next", -1):
                areas[area] = theirs
        db["campaigns"].update(row["name"], {"started": min(have["started"], row["started"]),
                                             "updated": max(have["updated"], row["updated"]),
                                             "state": json.dumps(state, sort_keys=True)})
    db.execute("""update main.campaigns set
                    programs = (select count(*) from main.programs p where p.campaign = main.campaigns.name),
                    checks = coalesce((select sum(judged) from main.runs r where r.campaign = main.campaigns.name), 0)""")
    return added
