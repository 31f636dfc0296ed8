"""A report for every bucket and every bug: ``clfuzz report`` of each of a corpus, counted.

The corpus is copied first (a report may store the reduction it runs; the copy takes it). Each
bucket's report is written into a folder of its own under a temporary folder, in this process,
through the command a user runs (``clfuzz report ID --corpus COPY -o DIR``, click's test runner).
``--no-reduce`` skips the buckets the command would reduce first (new, not flaky, not reduced,
with a target on this machine) and counts them apart. Printed: the buckets, the reports written,
the buckets skipped, the failures (their error lines grouped, most frequent first), and the
corpus's buckets and disagreements before and after (a report adds neither). The bugs
(triage.bugs, ``bug-`` ids) are reported after the buckets, a bug's report being its lead
bucket's with the others as variants.
Run: python3 bench/reports.py CORPUS [--no-reduce] [--limit N] [--out DIR]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)
from click.testing import CliRunner

from app.cli import cli
from corpus.store import Corpus
from fuzz.drivers import discover
from triage.bugs import find, listed


def _counts(path: Path) -> tuple[int, int]:
    """The buckets and disagreement rows of the corpus at ``path`` (read without the corpus code,
    which would upgrade it)."""
    with sqlite3.connect(path) as db:
        return (db.execute("select count(*) from buckets").fetchone()[0],
                db.execute("select count(*) from disagreements").fetchone()[0])


def _would_reduce(bucket: dict, local: set[str]) -> bool:
    """Whether ``clfuzz report`` reduces ``bucket`` before writing its report."""
    return bucket["reduced"] is None and bucket["confirmation"] != "flaky" and bucket["target"] in local


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--no-reduce", action="store_true", help="skip the buckets that need a reduction first")
    ap.add_argument("--limit", type=int, default=0, help="only the first N buckets (0: all)")
    ap.add_argument("--out", type=Path, default=None, help="folder of the reports (default: a temporary one)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="clfuzz-reports-"))
    copy = out / "corpus.db"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.corpus, copy)
    corpus = Corpus(copy, create=False)  # upgraded here, before the counts
    ids = [b["id"] for b in corpus.buckets()]
    bugs = [g.id for g in listed(corpus)[0]]
    if args.limit:
        ids, bugs = ids[:args.limit], bugs[:args.limit]
    corpus.close()
    before = _counts(copy)
    local = {t.name for t in discover()}
    written, skipped, failures = 0, 0, collections.Counter()
    failed: dict[str, list[str]] = collections.defaultdict(list)
    t0 = time.monotonic()
    for bid in ids + bugs:
        corpus = Corpus(copy, create=False)
        bucket = corpus.bucket(bid) if bid in ids else find(corpus, bid).lead
        corpus.close()
        if args.no_reduce and _would_reduce(bucket, local):
            skipped += 1
            continue
        result = CliRunner().invoke(cli, ["report", bid, "--corpus", str(copy), "-o", str(out / bid)])
        if result.exit_code == 0:
            written += 1
            continue
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            line = f"traceback: {type(result.exception).__name__}: {result.exception}"
        else:
            line = (result.output.strip().splitlines() or ["(no output)"])[-1]
        key = " ".join(w if not all(c in "0123456789abcdef" for c in w.strip("'.,:")) or len(w) < 8 else "ID"
                       for w in line.split())
        failures[key] += 1
        failed[key].append(bid)
    after = _counts(copy)
    print(f"corpus: {args.corpus} (copied to {copy}); reports in {out}; {time.monotonic() - t0:.0f} s")
    print(f"buckets: {len(ids)}; bugs: {len(bugs)}")
    print(f"reports written: {written} (of {len(ids) + len(bugs)}: buckets and bugs)")
    print(f"skipped (would need a reduction first, --no-reduce): {skipped}")
    print(f"failures: {sum(failures.values())}")
    for line, n in failures.most_common():
        print(f"  {n:4}  {line}   e.g. {failed[line][0]}")
    print(f"corpus buckets: {before[0]} -> {after[0]}; disagreements: {before[1]} -> {after[1]}")


if __name__ == "__main__":
    main()
