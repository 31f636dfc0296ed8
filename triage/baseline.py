"""A team's baseline under version control: the buckets it has already dealt with.

``clfuzz mark --all-new ignored|reported`` records a baseline in the corpus in one command;
``clfuzz baseline`` writes the buckets that are not ``new`` as a small text file, one line each
(bucket id, status, title, note), with the signature version its ids belong to
(corpus.buckets.SIGNATURE_VERSION); ``clfuzz ci --baseline FILE`` counts those buckets as known,
so a CI job on a fresh corpus passes until something outside the baseline appears.
"""

from __future__ import annotations

import re
from pathlib import Path

from corpus.buckets import SIGNATURE_VERSION
from corpus.store import Corpus

HEADER = "# clfuzz baseline, bucket signature {version}: BUCKET  STATUS  TITLE  [# NOTE]"
_HEAD = re.compile(r"^# clfuzz baseline, bucket signature (\d+)")


class BaselineError(ValueError):
    """A baseline file that cannot be used: one line saying what to do."""


def mark_all_new(corpus: Corpus, status: str, note: str = "") -> int:
    """Give every ``new`` bucket ``status`` (and ``note``); returns how many."""
    new = [b["id"] for b in corpus.buckets() if b["status"] == "new"]
    for bid in new:
        corpus.mark(bid, status, note)
    return len(new)


def write_baseline(corpus: Corpus, out: Path, only: list[str] | None = None) -> int:
    """Write the buckets that are not ``new`` (of the bucket ids ``only``, if given) to ``out``
    (sorted by id; its folder created if missing); returns how many."""
    known = sorted((b for b in corpus.buckets() if b["status"] != "new" and (only is None or b["id"] in only)),
                   key=lambda b: b["id"])
    lines = [HEADER.format(version=SIGNATURE_VERSION)]
    lines += [f"{b['id']}  {b['status']}  {b['title']}" + (f"  # {b['note']}" if b["note"] else "") for b in known]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return len(known)


def read_baseline(path: Path) -> set[str]:
    """The bucket ids of a baseline file (raises BaselineError for a file of another signature
    version, or one that is not a baseline)."""
    try:
        text = path.read_text()
    except OSError as e:
        raise BaselineError(f"cannot read baseline {path}: {e.strerror}") from None
    head = _HEAD.match(text)
    if head is None:
        raise BaselineError(f"{path} is not a clfuzz baseline (write one with `clfuzz baseline -o {path}`)")
    if int(head.group(1)) != SIGNATURE_VERSION:
        raise BaselineError(f"{path} names buckets of signature {head.group(1)}, this clfuzz keys signature "
                            f"{SIGNATURE_VERSION}: rewrite it with `clfuzz baseline --corpus CORPUS -o {path}` "
                            "(opening the corpus re-keys its buckets)")
    return {line.split()[0] for line in text.splitlines()[1:] if line.strip() and not line.startswith("#")}
