"""Expectation files shaped like deqp-runner's, one set per driver, for ``clfuzz ci --expectations
DIR`` (docs/ci.md): which cases are known to fail, which are flaky, which are not run.

**Files.** ``DIR/<driver>-fails.txt``, ``DIR/<driver>-flakes.txt`` and ``DIR/<driver>-skips.txt``,
as Mesa's CI names its deqp-runner files (``llvmpipe-fails.txt``); ``<driver>`` is the target's
name with ``/`` written ``-`` (:func:`file_of`: ``pocl-spirv-fails.txt`` for ``pocl/spirv``). A
file may be missing (nothing expected of that kind); files of drivers this run does not select are
still checked, so one folder serves every runner of a team.

- ``fails.txt``: one ``ID,Fail``, ``ID,Crash`` or ``ID,Timeout`` per line: the id of a regression
  file (its name without ``.json``) or of a bucket (12 hex digits), and the result it gives;
- ``flakes.txt`` and ``skips.txt``: one regular expression per line, matched anywhere in an id as
  deqp-runner does (``^ID$`` names one case);
- blank lines and lines that start with ``#`` are comments.

An id that is neither a regression file of the folder replayed nor a bucket id, a status other
than the three, a line listed twice or a regular expression that does not compile stops the run
before anything runs: one line naming the file and the line number, exit status 2.

**A driver release** (``pocl-6.0``) reads each of its three files under its own name when there is
one, else its system counterpart's (app.ci_releases: ``pocl-fails.txt``); a known failure of the
counterpart that the release no longer shows is then reported "FIXED in pocl 6.0 (present in pocl
3.1)", not as an unexpected pass. Without ``--expectations``, a regression file's ``known_wrong``
entry is its target's ``fails.txt`` line (:func:`from_regressions`), as before.

**Updating** (``--update-expectations``, :func:`update`): the lines of the cases the run judged are
rewritten from their results, every other line is kept as it is (other shards' cases, buckets this
smoke campaign did not hit, comments): a confirmed Fail, Crash or Timeout, and an expected
failure, get their ``ID,STATUS`` line (new ones at the end, each under a ``# title`` comment); a
Pass or an unexpected pass loses its line; a flake gets ``^ID$`` in ``flakes.txt`` unless a regex
there already names it; ``skips.txt`` is never written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any, Callable, Iterable

from app.ci_cases import (CRASH, EXPECTABLE, EXPECTED_FAIL, FAIL, FLAKE, KNOWN_FLAKE, MISSING, PASS, TIMEOUT,
                          UNEXPECTED_PASS, Case, CiError, result_of)
from app.ci_releases import Counterpart

KINDS = ("fails", "flakes", "skips")
BUCKET_ID = re.compile(r"[0-9a-f]{12}")
_ENTRY = re.compile(r"([^,\s]+)\s*,\s*(\w+)")
HEADER = ("# clfuzz ci expectations of {driver}: one ID,Fail|Crash|Timeout per line (a regression file's id or "
          "a bucket id); # starts a comment (docs/ci.md)")


@dataclass(frozen=True)
class Entry:
    """What a case is expected to give: its ``status`` (:data:`app.ci_cases.EXPECTABLE`), where
    that is written (``ci/pocl-fails.txt:3``), what else is known of it, and how to drop it once
    the case passes."""

    status: str
    where: str
    note: str = ""
    fix: str = ""


Patterns = list[tuple[re.Pattern, str]]


@dataclass
class Expectations:
    """One driver's expectations: the expected failures by id, the flake and skip regexes with
    where each is written, and the counterpart whose expectations a release borrows (``beside``)."""

    fails: dict[str, Entry] = field(default_factory=dict)
    flakes: Patterns = field(default_factory=list)
    skips: Patterns = field(default_factory=list)
    beside: Counterpart | None = None

    def flaky(self, case_id: str) -> str | None:
        """Where a flakes regex that names ``case_id`` is written, or None."""
        return _first(self.flakes, case_id)

    def skipped(self, case_id: str) -> str | None:
        """Where a skips regex that names ``case_id`` is written, or None."""
        return _first(self.skips, case_id)


def _first(patterns: Patterns, case_id: str) -> str | None:
    return next((where for p, where in patterns if p.search(case_id)), None)


def stem(driver: str) -> str:
    """A driver's name as its files are named: ``/`` written ``-``."""
    return driver.replace("/", "-")


def file_of(folder: Path, driver: str, kind: str) -> Path:
    """``folder/<driver>-<kind>.txt`` (:data:`KINDS`)."""
    return folder / f"{stem(driver)}-{kind}.txt"


Parsed = dict[str, dict[str, Any]]
"""A folder's files: per driver stem, per kind, the fails entries by id or the regexes."""


def read_folder(folder: str | Path, regression_ids: AbstractSet[str], regressions: str = "") -> Parsed:
    """Every expectation file of ``folder`` (module docstring), checked; raises :class:`CiError`
    naming the file and line of the first bad line, or when ``folder`` is no folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CiError(f"no expectations folder {folder}: create it (`clfuzz ci --expectations {folder} "
                      f"--update-expectations` writes the files from a run)")
    out: Parsed = {}
    for kind in KINDS:
        for path in sorted(folder.glob(f"*-{kind}.txt")):
            parsed = _fails(path, regression_ids, regressions) if kind == "fails" else _patterns(path)
            out.setdefault(path.name[:-len(f"-{kind}.txt")], {})[kind] = parsed
    return out


def _lines(path: Path) -> Iterable[tuple[int, str, str]]:
    """(number, text, where) of each line of ``path`` that is no comment."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise CiError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            yield n, line, f"{path}:{n}"


def _fails(path: Path, regression_ids: AbstractSet[str], regressions: str) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for n, line, where in _lines(path):
        m = _ENTRY.fullmatch(line)
        if m is None or m.group(2) not in EXPECTABLE:
            raise CiError(f"{where}: malformed line {line!r}: write ID,{'|'.join(EXPECTABLE)} (# starts a comment)")
        case_id = m.group(1)
        if case_id not in regression_ids and not BUCKET_ID.fullmatch(case_id):
            raise CiError(f"{where}: unknown id {case_id!r}: neither a regression file of {regressions or 'the folder'} "
                          "nor a bucket id (12 hex digits); correct or remove the line")
        if case_id in out:
            raise CiError(f"{where}: {case_id} is listed twice (first at {out[case_id].where}); keep one line")
        out[case_id] = Entry(m.group(2), where,
                             fix=f"remove the line {where} (`clfuzz ci --update-expectations` rewrites the file)")
    return out


def _patterns(path: Path) -> Patterns:
    out = []
    for _, line, where in _lines(path):
        try:
            out.append((re.compile(line), where))
        except re.error as e:
            raise CiError(f"{where}: not a regular expression ({e.msg}): {line!r}") from None
    return out


def for_target(parsed: Parsed, target: str, beside: Counterpart | None) -> Expectations:
    """The expectations of ``target`` from a read folder: each kind under its own name, else (a
    release) its counterpart's; ``beside`` is kept when the fails are the counterpart's."""
    own = parsed.get(stem(target), {})
    other = parsed.get(stem(beside.key), {}) if beside else {}
    pick = {kind: own[kind] if kind in own else other.get(kind) for kind in KINDS}
    return Expectations(pick["fails"] or {}, pick["flakes"] or [], pick["skips"] or [],
                        beside if "fails" not in own and "fails" in other else None)


def from_regressions(files: list[tuple[Path, dict[str, Any]]], target: str,
                     beside: Counterpart | None) -> Expectations:
    """The expectations the regression files' ``known_wrong`` entries give ``target`` (a release:
    its counterpart's entries, ``beside``): the run's expectations without ``--expectations``."""
    key = beside.key if beside else target
    fails = {}
    for path, case in files:
        known = case["known_wrong"].get(key)
        if known:
            fails[path.stem] = Entry(result_of(known["what"].split(":")[0]), f"known_wrong[{key!r}] in {path}",
                                     f"known bug bucket {known['bucket']} ({known['what']})",
                                     f"remove {key!r} from known_wrong in {path} (and `clfuzz mark {known['bucket']} "
                                     "fixed` in your corpus)")
    return Expectations(fails, beside=beside)


def settle(result: str, expected: Entry | None, flaky: str | None, rerun: Callable[[], str],
           reruns: int) -> tuple[str, str]:
    """A case's status from the driver's ``result`` and its expectation, and a line saying why
    (docs/ci.md): what was expected is ExpectedFail (or Pass); no result is Missing; an
    unexpected result is KnownFlake when a flakes regex (``flaky``) names the case, else re-run
    ``reruns`` times (``rerun`` gives each result): Flake as soon as one differs, else it counts
    (Fail, Crash, Timeout, or UnexpectedPass for an expected failure that passes)."""
    want = expected.status if expected else PASS
    if result == want:
        return (EXPECTED_FAIL if expected else PASS), ""
    if result == MISSING:
        return MISSING, ""
    if flaky:
        return KNOWN_FLAKE, f"{result} where {want} was expected; a known flake ({flaky})"
    seen = [result]
    for i in range(reruns):
        seen.append(rerun())
        if seen[-1] != result:
            return FLAKE, f"{', then '.join(seen)}: the result changed on re-run {i + 1} of {reruns}"
    again = f"the same on {reruns} re-run{'s' if reruns != 1 else ''}" if reruns else "not re-run"
    return (UNEXPECTED_PASS if result == PASS else result), f"{result} where {want} was expected ({again})"


# ---- --update-expectations ---------------------------------------------------------------------


def _line_of(case: Case) -> str | None | bool:
    """The ``fails.txt`` line a judged case gets: ``ID,STATUS``, None for none, True to keep it."""
    if case.status in (FAIL, CRASH, TIMEOUT) or (case.status == EXPECTED_FAIL and case.result in EXPECTABLE):
        return f"{case.id},{case.result or case.status}"
    if case.status in (PASS, UNEXPECTED_PASS):
        return None
    return True


def _entry_id(line: str) -> str | None:
    m = _ENTRY.fullmatch(line.strip())
    return m.group(1) if m else None


def rewrite_fails(text: str, judged: dict[str, Case]) -> str:
    """``text`` of a ``fails.txt`` with the lines of the ``judged`` cases (by id) rewritten from
    their results (module docstring)."""
    lines, out, seen = text.splitlines(), [], set()
    for line in lines:
        case_id = _entry_id(line)
        case = judged.get(case_id) if case_id else None
        if case is None:
            out.append(line)
            continue
        seen.add(case_id)
        want = _line_of(case)
        if want is True:
            out.append(line)
        elif want is None:  # its title comment goes with it
            if out and out[-1] == f"# {case.title}":
                out.pop()
        else:
            out.append(want)
    for case_id in sorted(set(judged) - seen):
        want = _line_of(judged[case_id])
        if isinstance(want, str):
            out += [f"# {judged[case_id].title}", want]
    return "\n".join(out) + "\n" if out else ""


def update(folder: str | Path, cases: Iterable[Case], beside: dict[str, str]) -> list[str]:
    """Rewrite the ``fails.txt`` and ``flakes.txt`` of every driver of ``cases`` (the regression
    files' and the smoke campaign's buckets; ``beside``: a release's counterpart, whose files it
    starts from when it has none) from their results; one line per file written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    by_driver: dict[str, dict[str, Case]] = {}
    for c in cases:
        if c.driver != "oracle" and (c.result or c.status in (FLAKE, KNOWN_FLAKE)):
            by_driver.setdefault(c.driver, {})[c.id] = c
    written = []
    for driver, judged in sorted(by_driver.items()):
        fails = _source(folder, driver, "fails", beside.get(driver))
        old = fails.read_text() if fails else ""
        new = rewrite_fails(old or HEADER.format(driver=driver), judged)
        if new != (old or HEADER.format(driver=driver) + "\n"):
            file_of(folder, driver, "fails").write_text(new)
            written.append(f"{file_of(folder, driver, 'fails')}: {_changes(old, new)}")
        flakes = _source(folder, driver, "flakes", beside.get(driver))
        text = flakes.read_text() if flakes else ""
        lines = [line.strip() for line in text.splitlines()]
        known = [re.compile(line) for line in lines if line and not line.startswith("#")]
        new_flakes = [c for i, c in sorted(judged.items()) if c.status == FLAKE and not any(p.search(i) for p in known)]
        if new_flakes:
            add = "".join(f"# {c.title}\n^{c.id}$\n" for c in new_flakes)
            file_of(folder, driver, "flakes").write_text(text + ("\n" if text and not text.endswith("\n") else "") + add)
            written.append(f"{file_of(folder, driver, 'flakes')}: {len(new_flakes)} flake(s) added")
    return written


def _source(folder: Path, driver: str, kind: str, beside: str | None) -> Path | None:
    """The file a driver's ``kind`` is read from: its own, else its counterpart's, else None."""
    for name in (driver, beside):
        if name and file_of(folder, name, kind).exists():
            return file_of(folder, name, kind)
    return None


def _changes(old: str, new: str) -> str:
    before = {_entry_id(x): x.strip() for x in old.splitlines() if _entry_id(x)}
    after = {_entry_id(x): x.strip() for x in new.splitlines() if _entry_id(x)}
    changed = sum(1 for i in before.keys() & after.keys() if before[i] != after[i])
    return (f"{len(after.keys() - before.keys())} added, {len(before.keys() - after.keys())} removed, "
            f"{changed} changed ({len(after)} lines)")
