"""``clfuzz ci``: what a user's CI runs: the regression corpus on every local target, a short
smoke campaign, a JUnit XML report and an exit status.

**Regressions.** Every file of the regression folder (triage.regressions) is replayed on every
local target, exactly as ``tests/drivers/test_regressions.py`` replays it (the same helpers:
:func:`triage.regressions.current_verdict`, :func:`triage.regressions.run_on`). Per file there is
one oracle case (the verdict the file records must still be the oracle's: if not, the oracle
changed and the file must be reviewed) and one case per target:

- ``passed``: the driver gives the allowed results, or it is listed in the file's ``known_wrong``
  and still disagrees (an expected failure; the JUnit case says which known bucket);
- ``failed``: a driver that agreed before now disagrees: a regression;
- ``fixed``: a driver listed as known wrong now agrees. Like a strict xfail this fails the run, so
  that the file gets updated (remove the target from ``known_wrong``, mark the bucket fixed);
- ``skipped``: the target cannot take the program (capabilities or route);
- ``error``: the case could not be judged (the worker could not start, the program no longer
  validates, an exception in clfuzz).

**Driver releases** (``--drivers pocl-6.0``, fuzz.drivers.releases). The files know the bugs of
the system's targets (``known_wrong`` keyed by ``pocl``, ``pocl/spirv``); a release target is
judged against its system counterpart's entry (:func:`counterpart`: the same lineage on the same
front end). A known bug it still shows passes as above; one it no longer shows is ``gone``:
reported as FIXED with the release where it went away ("FIXED in pocl 6.0 (present in pocl
3.1)"), neither a failure nor a regression. The known buckets of the corpus given with
``--corpus`` (``reported``, ``ignored`` or in the baseline file) are checked on each release of
their driver the same way, with their reproducer (triage.versions.run_check; one case each,
named ``bucket ID``).

**Smoke campaign.** ``campaign.campaign.run_campaign`` for ``minutes`` (name ``ci-SEED``), without
triage. Every disagreement (a crash, timeout or build error included: they are buckets of their
own kinds) falls in a bucket; one case per target fails when a bucket it hit in *this* run is not
known. Known means the user has dealt with it already: its status in the corpus is ``ignored`` or
``reported`` (a ``fixed`` bucket seen again is ``new`` again, corpus.store), or a regression file
tracks it (its ``found_in`` or a ``known_wrong`` bucket). Everything else (``new``: untriaged)
fails the run, and the case says how to look at each bucket (``clfuzz report BUCKET --corpus
PATH -o DIR``) and how to accept it (``clfuzz mark BUCKET reported --corpus PATH``, or
``ignored``; the next run must be given that corpus). A new bucket less severe than ``--severity``
(oracles.rules.SEVERITIES, most serious first; a run cut at the ceiling is ``performance``, the
last, until it proves a hang: triage.buglist.bucket_severity) is listed, not failed.

**Exit status** (:attr:`CiResult.exit_code`): 0 when every case passed or was skipped, 1 when
any case failed or erred (a regression, a fixed bug, a changed oracle verdict, a new bucket, a
case that could not be judged). :class:`CiError` is the infrastructure failure (no OpenCL
device, the regression folder missing, empty or malformed, an unusable corpus, an unknown driver
name): the command prints its one line and exits 2 before running anything.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import AbstractSet, Any, Callable

from app.ci_cases import ERROR, FAILED, FIXED, GONE, REGRESSIONS, SKIPPED, SMOKE, Case, CiError, CiResult
from app.ci_releases import Counterpart, counterpart
from app.options import DEFAULT_SEVERITY
from corpus.bucket_queries import buckets_hit_since
from corpus.buckets import RESULT_KINDS
from corpus.store import Corpus, CorpusError
from fuzz.drivers import Target, Worker
from lang.ir import InvalidProgram
from oracles import at_least
from triage.buglist import bucket_severity

KNOWN_STATUSES = ("ignored", "reported")
"""Bucket statuses a smoke campaign accepts (see the module docstring)."""

_CLFUZZ_ERRORS = ("worker_error", "invalid_module")
"""Run statuses that are clfuzz's failure, not the driver's: the case is an error."""

_REQUIRED = {"title": str, "ftz": list, "verdict": list, "known_wrong": dict}


# ---- the regression corpus ---------------------------------------------------------------------


def load_regressions(folder: str | Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every regression file of ``folder``, loaded (triage.regressions.load) and checked; raises
    :class:`CiError` when the folder is missing or empty or a file is malformed."""
    from triage.regressions import load

    folder = Path(folder)
    if not folder.is_dir():
        raise CiError(f"no regression folder {folder}: pass --regressions DIR "
                      f"(`clfuzz export-regressions --corpus PATH -o DIR` writes one)")
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise CiError(f"no regression files (*.json) in {folder}: `clfuzz export-regressions` writes them")
    out = []
    for path in paths:
        try:
            case = load(path)
            for key, kind in _REQUIRED.items():
                if not isinstance(case.get(key), kind):
                    raise ValueError(f"no {key!r} ({kind.__name__})")
            for name, wrong in case["known_wrong"].items():
                if not (isinstance(wrong, dict) and "bucket" in wrong and "what" in wrong):
                    raise ValueError(f"known_wrong[{name!r}] needs 'bucket' and 'what'")
            for v in case["verdict"]:
                if not (isinstance(v, dict) and {"buffer", "lane"} <= v.keys()):
                    raise ValueError("a verdict entry needs 'buffer' and 'lane'")
        except (OSError, ValueError, KeyError, TypeError, InvalidProgram) as e:  # JSONDecodeError is a ValueError
            line = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CiError(f"malformed regression file {path}: {line}") from None
        out.append((path, case))
    return out


def oracle_case(path: Path, case: dict[str, Any]) -> Case:
    """The case of a file's recorded oracle verdict: failed when the oracle now says otherwise."""
    from triage.regressions import current_verdict

    c = Case(REGRESSIONS, "oracle", f"{path.stem} {case['title']}")
    t0 = time.perf_counter()
    try:
        now = current_verdict(case)
    except Exception as e:  # noqa: BLE001 - a CI run reports, it does not stop
        c.outcome, c.message = ERROR, f"the oracle could not judge the program: {type(e).__name__}: {e}"
    else:
        if now != case["verdict"]:
            changed = [f"{old['buffer']} lane {old['lane']}: recorded {_brief(old)}, now {_brief(new)}"
                       for old, new in zip(case["verdict"], now) if old != new]
            c.outcome = FAILED
            c.message = (f"the oracle's verdict changed on {len(changed) or len(now)} lane(s): review the oracle "
                         f"change; if it is right, re-export {path.name} (`clfuzz export-regressions`)")
            c.details = "\n".join(changed)
    c.time_s = time.perf_counter() - t0
    return c


def _brief(v: dict) -> str:
    return json.dumps({k: v.get(k) for k in ("allowed", "any_nan", "ranges")}, sort_keys=True)


def classify(path: Path, case: dict[str, Any], target: str, rows: list[dict] | None, supported: bool = True,
             beside: Counterpart | None = None) -> Case:
    """The outcome of one file on one target, from what the run gave: ``rows`` the disagreement
    rows ([] when it agrees; None when the program could not be run as a whole), ``supported``
    whether the target takes the program at all, ``beside`` the system driver of a release target
    (see the module docstring)."""
    c = Case(REGRESSIONS, target, f"{path.stem} {case['title']}")
    known = case["known_wrong"].get(beside.key if beside else target)
    if not supported:
        c.outcome, c.message = SKIPPED, f"{target} does not take this program (capabilities or route)"
    elif rows is None:
        c.outcome = ERROR
        c.message = f"the program no longer validates, or {target} takes only part of it: it was not judged"
    elif rows and rows[0]["kind"] in _CLFUZZ_ERRORS:
        c.outcome, c.message = ERROR, f"{rows[0]['kind']}: {rows[0]['actual_value']}"
    elif rows and known:
        c.known = known["bucket"]
        now = _row(rows[0])
        c.out = (f"known bug bucket {known['bucket']} ({known['what']}): still wrong, as expected"
                 + ("" if now == known["what"] else f"; now: {now}"))
    elif rows:
        c.outcome = FAILED
        c.message = (f"regression: {target} agreed with the oracle on this case before and now disagrees "
                     f"on {len(rows)} lane(s): {_row(rows[0])}")
        c.details = "\n".join(f"{_row(r)}\n  rule: {r.get('rule_text', '')} ({r.get('section', '')})"
                              for r in rows[:10])
    elif known and beside:
        c.outcome, c.message = GONE, beside.gone
        c.out = f"{beside.gone}: known bug bucket {known['bucket']} ({known['what']}) no longer shows, not a failure"
    elif known:
        c.outcome = FIXED
        c.message = (f"fixed: {target} now gives the allowed results, but {path.name} lists it as known wrong "
                     f"(bucket {known['bucket']}: {known['what']}). Remove {target!r} from known_wrong in "
                     f"{path} (and `clfuzz mark {known['bucket']} fixed` in your corpus)")
    return c


def _row(r: dict) -> str:
    if r.get("kind") not in RESULT_KINDS:
        return f"{r.get('kind')}: {r.get('actual_value', '')}"
    return f"{r['kind']}: {r['expression']} = {r['actual_value']}, expected {r['expected_value']}"


def replay(regressions: list[tuple[Path, dict[str, Any]]], targets: list[Target],
           on_case: Callable[[Case], None] | None = None, timeout_s: float = 60,
           system: list[Target] | None = None) -> list[Case]:
    """The oracle cases, then every file on every target (one worker per target at a time); a
    release target is judged beside its counterpart among the ``system`` targets."""
    from fuzz.drivers.capabilities import supports
    from triage.regressions import run_on

    cases = [oracle_case(path, case) for path, case in regressions]
    if on_case:
        for c in cases:
            on_case(c)
    for target in targets:
        workers: dict[str, Worker] = {}
        try:
            for path, case in regressions:
                t0 = time.perf_counter()
                try:
                    ok = supports(target, case["program"])
                    c = classify(path, case, target.name, run_on(case["program"], target, workers, timeout_s)
                                 if ok else [], ok, counterpart(target, system or []))
                except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
                    c = Case(REGRESSIONS, target.name, f"{path.stem} {case['title']}", ERROR,
                             f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                c.time_s = time.perf_counter() - t0
                cases.append(c)
                if on_case:
                    on_case(c)
        finally:
            for w in workers.values():
                w.close()
    return cases


def bucket_cases(corpus: Corpus, targets: list[Target], system: list[Target], known: AbstractSet[str],
                 tracked: AbstractSet[str], on_case: Callable[[Case], None] | None = None,
                 timeout_s: float = 60) -> list[Case]:
    """One case per known bucket of ``corpus`` (:func:`is_known` with ``known``, not one of the
    ``tracked`` buckets a regression file replays) on each release target of its driver and front
    end, from its reproducer (triage.versions): passed while the release shows it, ``gone`` when
    the oracle accepts every lane, skipped when the release does not take the program."""
    from triage.versions import reproducer, run_check

    buckets = [b for b in corpus.buckets() if is_known(b, known) and b["id"] not in tracked]
    cases = []
    for target in targets:
        beside = counterpart(target, system)
        for b in buckets if beside else ():
            if b["signature"].get("driver") != target.lineage or target.path not in b["paths"]:
                continue
            c, t0 = Case(REGRESSIONS, target.name, f"bucket {b['id']} {b['title']}"), time.perf_counter()
            try:
                program_id, row = reproducer(corpus, b["id"])
                verdict, detail = run_check(corpus.program(program_id), row, target, timeout_s)
            except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
                verdict, detail = ERROR, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            what = f"known bug bucket {b['id']} ({_status(b)}): {b['title']}"
            c.url = b.get("url") or ""
            if verdict in ("absent", ERROR, "not-run"):
                c.outcome = {"absent": GONE, ERROR: ERROR, "not-run": SKIPPED}[verdict]
                c.message, c.out = (beside.gone, f"{beside.gone}: {what}: no longer shows, not a failure") if c.outcome == GONE \
                    else (detail, "")
            else:
                c.known, c.out = b["id"], f"{what}: {'still wrong, as expected' if verdict == 'present' else verdict}; {detail}"
            c.time_s = time.perf_counter() - t0
            cases.append(c)
            if on_case:
                on_case(c)
    return cases


# ---- the smoke campaign ------------------------------------------------------------------------


def hit_buckets(corpus: Corpus, campaign: str, since: float) -> list[tuple[str, dict[str, Any]]]:
    """(target, bucket) for every bucket a run of ``campaign`` started at or after ``since`` hit
    (a disagreement stored by an earlier run and seen again counts: rows are deduplicated)."""
    hits = buckets_hit_since(corpus, campaign, since)
    buckets = {b["id"]: b for b in corpus.buckets()} if hits else {}
    return [(h["target"], buckets[h["bucket"]]) for h in hits if h["bucket"] in buckets]


def smoke_cases(targets: list[str], hits: list[tuple[str, dict[str, Any]]], corpus_path: str,
                known: AbstractSet[str] = frozenset(), stats: dict[str, Any] | None = None,
                wall_s: float = 0.0, floor: str = DEFAULT_SEVERITY) -> list[Case]:
    """One case per target: failed when it hit a bucket that is not known (status in
    :data:`KNOWN_STATUSES`, or its id in ``known``: the regression files' buckets) and whose
    severity is ``floor`` or more serious (oracles.rules.SEVERITIES); the others are listed."""
    cases = []
    for name in targets:
        s = (stats or {}).get(name)
        c = Case(SMOKE, name, f"smoke campaign on {name}", time_s=getattr(s, "wall_s", 0.0) or wall_s)
        lines = []
        if s is not None:
            statuses = ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items()))
            lines.append(f"{s.programs} programs, {s.judged:,} judged lanes, {s.mismatches:,} mismatching lanes"
                         + (f" ({statuses})" if statuses else ""))
        new = []
        for target, b in hits:
            if target != name:
                continue
            severity = bucket_severity(b)
            if is_known(b, known):
                why = b["status"] if b["status"] in KNOWN_STATUSES else "in the regression files or the baseline"
                lines.append(f"known bucket {b['id']} ({why}{', ' + b['url'] if b.get('url') else ''}): {b['title']}")
            elif not at_least(severity, floor):
                lines.append(f"new bucket {b['id']} below --severity {floor} ({severity}): {b['title']}")
            else:
                new.append(b)
        if new:
            c.outcome = FAILED
            c.message = (f"{len(new)} new bucket(s) on {name}, e.g. {new[0]['id']} {new[0]['title']}: "
                         f"`clfuzz report BUCKET --corpus {corpus_path} -o DIR` shows one")
            c.details = "\n".join(
                f"{b['id']} {b['title']} ({bucket_severity(b)}, status {b['status']}, {b['rows']} rows, "
                f"{b['programs']} programs)\n"
                f"  look:   clfuzz report {b['id']} --corpus {corpus_path} -o reports/{b['id']}\n"
                f"  accept: clfuzz mark {b['id']} reported --corpus {corpus_path}   (or: ignored)"
                for b in new) + "\nan accepted bucket is known to the next run given that corpus (--corpus)"
        c.out = "\n".join(lines)
        cases.append(c)
    return cases


def _status(bucket: dict[str, Any]) -> str:
    """A bucket's status, and where its vendor bug is when recorded (``clfuzz mark --url``)."""
    return bucket["status"] + (f", {bucket['url']}" if bucket.get("url") else "")


def is_known(bucket: dict[str, Any], known: AbstractSet[str] = frozenset()) -> bool:
    """Whether a smoke campaign accepts ``bucket``: its status is one of :data:`KNOWN_STATUSES`
    or a regression file tracks it (``known``, :func:`known_buckets`)."""
    return bucket["status"] in KNOWN_STATUSES or bucket["id"] in known


def known_buckets(regressions: list[tuple[Path, dict[str, Any]]]) -> set[str]:
    """Buckets the regression files track: those they were exported from and the known-wrong ones."""
    out: set[str] = set()
    for _, case in regressions:
        out.update(b for b in case.get("found_in", []) if isinstance(b, str))
        out.update(w["bucket"] for w in case["known_wrong"].values())
    return out


# ---- the whole run -----------------------------------------------------------------------------


def local_targets(names: list[str] | None) -> list[Target]:
    """The discovered targets ``names`` selects (fuzz.drivers.select; every one for None); raises
    :class:`CiError` when there is none or a name matches nothing."""
    from fuzz.drivers import UnknownDriver, discover, select

    try:
        targets = select(discover(), names)
    except UnknownDriver as e:
        raise CiError(str(e).splitlines()[0]) from None
    if not targets:
        raise CiError("no OpenCL device found" + (f" for --drivers {','.join(names)}" if names else "")
                      + ": `clfuzz drivers` lists what is installed (`bash setup.sh campaign` installs the local drivers)")
    return targets


def run_ci(drivers: list[str] | None = None, *, regressions: str | Path, minutes: float, seed: int = 0,
           corpus_path: str | Path | None = None, timeout_s: float = 60,
           on_case: Callable[[Case], None] | None = None,
           on_phase: Callable[[str], None] | None = None, severity: str = DEFAULT_SEVERITY,
           baseline: AbstractSet[str] = frozenset()) -> CiResult:
    """Replay the regression folder on the local targets ``drivers`` selects (every one for None,
    :func:`local_targets`), then a smoke campaign of ``minutes`` (none for 0) into
    ``corpus_path`` (a temporary corpus when None, kept only when it found new buckets, so that
    the report commands work); the smoke campaign fails on new buckets of ``severity`` or more
    serious that neither the corpus, the regression files nor ``baseline`` (bucket ids of a
    baseline file, triage.baseline) know. Raises :class:`CiError` before running anything when the folder,
    the targets or the corpus cannot be used (the folder is checked first: it needs no driver)."""
    from fuzz.drivers import discover

    files = load_regressions(regressions)
    targets = local_targets(drivers)
    system = discover()  # the counterparts of release targets
    result = CiResult(targets=[t.name for t in targets])
    temp = Path(tempfile.mkdtemp(prefix="clfuzz-ci-")) if minutes > 0 and corpus_path is None else None
    corpus = None
    try:
        if minutes > 0 or corpus_path is not None:
            corpus_path = str(corpus_path or temp / "ci.db")
            try:
                corpus = Corpus(corpus_path, create=True)
            except CorpusError as e:
                raise CiError(str(e).splitlines()[0]) from None
        t0 = time.perf_counter()
        if on_phase:
            on_phase(f"regressions: {len(files)} files on {len(targets)} targets ({regressions})")
        result.cases += replay(files, targets, on_case, timeout_s, system)
        if corpus is not None:
            result.cases += bucket_cases(corpus, targets, system, baseline, known_buckets(files), on_case, timeout_s)
        result.suite_s[REGRESSIONS] = time.perf_counter() - t0
        if corpus is not None and minutes > 0:
            t0 = time.perf_counter()
            result.campaign, result.corpus = f"ci-{seed}", corpus_path
            if on_phase:
                on_phase(f"smoke campaign {result.campaign}: {minutes:g} min on {len(targets)} targets "
                         f"(corpus {corpus_path})")
            smoke = _smoke(result, corpus, targets, minutes, seed, known_buckets(files) | set(baseline), timeout_s,
                           severity)
            result.cases += smoke
            result.suite_s[SMOKE] = time.perf_counter() - t0
            if on_case:
                for c in smoke:
                    on_case(c)
    finally:
        if corpus is not None:
            corpus.close()
        if temp is not None and not result.new_buckets:
            shutil.rmtree(temp, ignore_errors=True)
            result.corpus = None
    return result


def _smoke(result: CiResult, corpus: Corpus, targets: list[Target], minutes: float, seed: int,
           known: AbstractSet[str], timeout_s: float, floor: str) -> list[Case]:
    """Run the smoke campaign ``result.campaign`` and judge its buckets (sets ``result.programs``
    and ``result.new_buckets``)."""
    from campaign.campaign import run_campaign

    since = time.time()
    try:
        campaign = run_campaign(corpus, targets, minutes=minutes, seed=seed, name=result.campaign,
                                timeout_s=timeout_s)
    except Exception as e:  # noqa: BLE001 - a generator bug: every smoke case errs, the report is still written
        line = f"the smoke campaign stopped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return [Case(SMOKE, t.name, f"smoke campaign on {t.name}", ERROR, line) for t in targets]
    result.programs = campaign.programs
    hits = hit_buckets(corpus, result.campaign, since)
    new = {b["id"]: b for _, b in hits if not is_known(b, known) and at_least(bucket_severity(b), floor)}
    result.new_buckets = list(new.values())
    return smoke_cases(result.targets, hits, str(corpus.path), known, campaign.targets, campaign.wall_s, floor)
