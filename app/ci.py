"""``clfuzz ci``: what a user's CI runs: the regression corpus on every local target, a short
smoke campaign (app.ci_smoke), results in deqp-runner's words (app.ci_cases), a results.csv, a
JUnit XML report and an exit status (app.ci_report); docs/ci.md is the user's page.

**Regressions.** Every file of the regression folder (triage.regressions) is replayed on every
local target, exactly as ``tests/drivers/test_regressions.py`` replays it (the same helpers:
:func:`triage.regressions.current_verdict`, :func:`triage.regressions.run_on`). Per file there is
one oracle case (driver ``oracle``: Fail when the verdict the file records is no longer the
oracle's, so that the file gets reviewed) and one case per target, whose id is the file's name
without ``.json``. The target's result (Pass, Fail, Crash, Timeout) is judged against its
expectations (app.ci_expectations: the ``--expectations`` folder's files, else the files'
``known_wrong`` entries) by :func:`app.ci_expectations.settle`: an unexpected result is re-run on
a fresh worker ``--flake-reruns`` times and is a Flake when it changes. A case a ``skips.txt``
regex names, or whose program the target cannot take (capabilities or route), is a Skip; one
that could not be judged (the worker could not start, the program no longer validates) is
Missing.

**Driver releases** (``--drivers pocl-6.0``, fuzz.drivers.releases). A release target without
expectations of its own is judged against its system counterpart's (app.ci_releases: the same
lineage on the same front end; ``known_wrong`` keyed by ``pocl``, or ``pocl-fails.txt``). A known
bug it still shows is an ExpectedFail; one it no longer shows is reported as FIXED with the
release where it went away ("FIXED in pocl 6.0 (present in pocl 3.1)"), a Pass, not an
unexpected pass. The known buckets of the corpus given with ``--corpus`` (``reported``,
``ignored`` or in the baseline file) are checked on each release of their driver the same way,
with their reproducer (triage.versions.run_check; one case each, named by the bucket id).

**Shards** (``--fraction N --fraction-start K``, K from 1 as deqp-runner counts): shard K
replays every N-th regression file from the K-th (its oracle case with it) and checks every N-th
known bucket; its smoke campaign has a seed of its own (app.ci_cases.shard_seed). The N shards
together judge every case once; ``clfuzz ci-merge`` joins their results (app.ci_report).

**Exit status** (:attr:`CiResult.exit_code`): 0 when no case failed, 1 when one did (a
regression, an unexpected pass, a changed oracle verdict, a new bucket, a case that could not be
judged: app.ci_cases.FAILING). :class:`CiError` is the infrastructure failure or bad input (no
OpenCL device, the regression folder missing, empty or malformed, a bad expectation file, a
fraction out of range, an unusable corpus, an unknown driver name): the command prints its one
line and exits 2 before running anything.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import AbstractSet, Any, Callable

from app.ci_cases import (EXPECTED_FAIL, FAIL, FLAKE, KNOWN_FLAKE, MISSING, PASS, REGRESSIONS, SKIP, SMOKE,
                          UNEXPECTED_PASS, Case, CiError, CiResult, describe, result_of, shard, shard_seed)
from app.ci_expectations import Expectations, Parsed, for_target, from_regressions, read_folder, settle
from app.ci_releases import counterpart
from app.ci_smoke import Rules, is_known, known_buckets, run_smoke
from app.options import DEFAULT_SEVERITY
from corpus.buckets import RESULT_KINDS
from corpus.store import Corpus, CorpusError
from fuzz.drivers import Target, Worker
from lang.ir import InvalidProgram

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
    """The case of a file's recorded oracle verdict: Fail when the oracle now says otherwise."""
    from triage.regressions import current_verdict

    c = Case(REGRESSIONS, "oracle", path.stem, case["title"])
    t0 = time.perf_counter()
    try:
        now = current_verdict(case)
    except Exception as e:  # noqa: BLE001 - a CI run reports, it does not stop
        c.status, c.message = MISSING, f"the oracle could not judge the program: {describe(e)}"
    else:
        if now != case["verdict"]:
            changed = [f"{old['buffer']} lane {old['lane']}: recorded {_brief(old)}, now {_brief(new)}"
                       for old, new in zip(case["verdict"], now) if old != new]
            c.status = FAIL
            c.message = (f"the oracle's verdict changed on {len(changed) or len(now)} lane(s): review the oracle "
                         f"change; if it is right, re-export {path.name} (`clfuzz export-regressions`)")
            c.details = "\n".join(changed)
    c.time_s = time.perf_counter() - t0
    return c


def _brief(v: dict) -> str:
    return json.dumps({k: v.get(k) for k in ("allowed", "any_nan", "ranges")}, sort_keys=True)


def outcome(rows: list[dict] | None) -> str:
    """A run's result from its disagreement rows: Missing when it could not be run as a whole
    (None), else app.ci_cases.result_of its first row's kind (Pass for none)."""
    return MISSING if rows is None else result_of(rows[0]["kind"] if rows else None)


def classify(path: Path, case: dict[str, Any], target: str, rows: list[dict] | None, expect: Expectations,
             rerun: Callable[[], str] = lambda: MISSING, reruns: int = 0) -> Case:
    """The case of one file on one target from what the run gave: ``rows`` the disagreement rows
    ([] when it agrees; None when the program could not be run as a whole), judged against
    ``expect`` with ``reruns`` re-runs (``rerun`` gives each one's result; module docstring)."""
    c = Case(REGRESSIONS, target, path.stem, case["title"], result=outcome(rows))
    entry = expect.fails.get(path.stem)
    c.status, why = settle(c.result, entry, expect.flaky(path.stem), rerun, reruns)
    first = _row(rows[0]) if rows else ""
    if c.status == UNEXPECTED_PASS and expect.beside:
        c.status, c.gone = PASS, expect.beside.gone
        c.out = f"{c.gone}: {entry.note or entry.where} no longer shows, not a failure"
    elif c.status == EXPECTED_FAIL:
        c.out = f"{entry.note or 'expected ' + entry.status} ({entry.where}): still wrong, as expected; now: {first}"
    elif c.status == UNEXPECTED_PASS:
        c.message = (f"fixed: {target} now gives the allowed results, but {entry.where} expects {entry.status}"
                     f"{' (' + entry.note + ')' if entry.note else ''}: {entry.fix}")
    elif c.status == MISSING:
        c.message = (f"{rows[0]['kind']}: {rows[0]['actual_value']}" if rows else
                     f"the program no longer validates, or {target} takes only part of it: it was not judged")
    elif c.status in (FLAKE, KNOWN_FLAKE):
        c.out = f"{c.status}: {why}" + (f"; first: {first}" if first else "")
    elif c.failing:
        c.message = f"regression: {why}" + (f": {first}" if first else "")
        c.details = "\n".join(f"{_row(r)}\n  rule: {r.get('rule_text', '')} ({r.get('section', '')})"
                              for r in rows[:10])
    return c


def _row(r: dict) -> str:
    if r.get("kind") not in RESULT_KINDS:
        return f"{r.get('kind')}: {r.get('actual_value', '')}"
    return f"{r['kind']}: {r['expression']} = {r['actual_value']}, expected {r['expected_value']}"


def replay(regressions: list[tuple[Path, dict[str, Any]]], targets: list[Target], expect: dict[str, Expectations],
           on_case: Callable[[Case], None] | None = None, timeout_s: float = 60, reruns: int = 0) -> list[Case]:
    """The oracle cases, then every file on every target (one worker per target at a time, a
    fresh one for each re-run), judged against ``expect`` (by target name)."""
    from fuzz.drivers.capabilities import supports
    from triage.regressions import run_on

    def fresh(program, target: Target) -> str:
        workers: dict[str, Worker] = {}
        try:
            return outcome(run_on(program, target, workers, timeout_s))
        except Exception:  # noqa: BLE001 - a re-run that cannot run gives no result
            return MISSING
        finally:
            for w in workers.values():
                w.close()

    cases = [oracle_case(path, case) for path, case in regressions]
    for c in cases if on_case else ():
        on_case(c)
    for target in targets:
        workers: dict[str, Worker] = {}
        exp = expect.get(target.name) or Expectations()
        try:
            for path, case in regressions:
                t0, program = time.perf_counter(), case["program"]
                try:
                    if exp.skipped(path.stem):
                        c = Case(REGRESSIONS, target.name, path.stem, case["title"], SKIP,
                                 message=f"skipped ({exp.skipped(path.stem)})")
                    elif not supports(target, program):
                        c = Case(REGRESSIONS, target.name, path.stem, case["title"], SKIP,
                                 message=f"{target.name} does not take this program (capabilities or route)")
                    else:
                        c = classify(path, case, target.name, run_on(program, target, workers, timeout_s), exp,
                                     lambda: fresh(program, target), reruns)
                except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
                    c = Case(REGRESSIONS, target.name, path.stem, case["title"], MISSING, message=describe(e))
                c.time_s = time.perf_counter() - t0
                cases.append(c)
                if on_case:
                    on_case(c)
        finally:
            for w in workers.values():
                w.close()
    return cases


def bucket_cases(buckets: list[dict[str, Any]], corpus: Corpus, targets: list[Target], system: list[Target],
                 on_case: Callable[[Case], None] | None = None, timeout_s: float = 60) -> list[Case]:
    """One case per bucket of ``buckets`` (known ones, not tracked by a regression file) on each
    release target of its driver and front end, from its reproducer (triage.versions):
    ExpectedFail while the release shows it, a Pass FIXED in the release when the oracle accepts
    every lane, Skip when the release does not take the program."""
    from triage.versions import reproducer, run_check

    cases = []
    for target in targets:
        beside = counterpart(target, system)
        for b in buckets if beside else ():
            if b["signature"].get("driver") != target.lineage or target.path not in b["paths"]:
                continue
            c, t0 = Case(REGRESSIONS, target.name, b["id"], b["title"], url=b.get("url") or ""), time.perf_counter()
            try:
                program_id, row = reproducer(corpus, b["id"])
                verdict, detail = run_check(corpus.program(program_id), row, target, timeout_s)
            except Exception as e:  # noqa: BLE001 - one broken case must not hide the others
                verdict, detail = "error", describe(e)
            what = f"known bug bucket {b['id']} ({b['status']}{', ' + b['url'] if b.get('url') else ''})"
            if verdict == "absent":
                c.result, c.gone, c.out = PASS, beside.gone, f"{beside.gone}: {what}: no longer shows, not a failure"
            elif verdict in ("error", "not-run"):
                c.status, c.message = (MISSING if verdict == "error" else SKIP), detail
            else:
                c.status, c.result = EXPECTED_FAIL, result_of(b["signature"].get("kind"))
                c.out = f"{what}: {'still wrong, as expected' if verdict == 'present' else verdict}; {detail}"
            c.time_s = time.perf_counter() - t0
            cases.append(c)
            if on_case:
                on_case(c)
    return cases


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


def expectations_of(files: list[tuple[Path, dict[str, Any]]], parsed: Parsed | None, targets: list[Target],
                    system: list[Target]) -> dict[str, Expectations]:
    """Each target's expectations: from the ``parsed`` folder of expectation files
    (app.ci_expectations.read_folder), else from the regression files' ``known_wrong`` entries."""
    return {t.name: (for_target(parsed, t.name, counterpart(t, system)) if parsed is not None
                     else from_regressions(files, t.name, counterpart(t, system))) for t in targets}


def run_ci(drivers: list[str] | None = None, *, regressions: str | Path, minutes: float, seed: int = 0,
           corpus_path: str | Path | None = None, timeout_s: float = 60,
           on_case: Callable[[Case], None] | None = None,
           on_phase: Callable[[str], None] | None = None, severity: str = DEFAULT_SEVERITY,
           baseline: AbstractSet[str] = frozenset(), expectations: str | Path | None = None,
           reruns: int = 2, fraction: int = 1, start: int = 1) -> CiResult:
    """Replay shard ``start`` of ``fraction`` of the regression folder on the local targets
    ``drivers`` selects (every one for None, :func:`local_targets`), then a smoke campaign of
    ``minutes`` (none for 0) into ``corpus_path`` (a temporary corpus when None, kept only when a
    case of it failed, so that the report commands work); the smoke campaign's buckets are judged
    by app.ci_smoke (``baseline``: bucket ids of a baseline file, triage.baseline, are known).
    Raises :class:`CiError` before running anything when the folder, the expectations, the
    fraction, the targets or the corpus cannot be used (those that need no driver first)."""
    from fuzz.drivers import discover

    files = load_regressions(regressions)
    mine = shard(files, fraction, start)
    parsed = read_folder(expectations, {p.stem for p, _ in files}, str(regressions)) \
        if expectations is not None else None
    targets = local_targets(drivers)
    system = discover()  # the counterparts of release targets
    tracked = known_buckets(files)
    rules = Rules(expectations_of(files, parsed, targets, system), tracked | set(baseline), severity, reruns,
                  str(expectations) if expectations is not None else None)
    result = CiResult(targets=[t.name for t in targets],
                      beside={t.name: b.key for t in targets if (b := counterpart(t, system))})
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
            on_phase(f"regressions: {len(mine)} of {len(files)} files on {len(targets)} targets ({regressions})"
                     + (f", shard {start} of {fraction}" if fraction > 1 else ""))
        result.cases += replay(mine, targets, rules.expect, on_case, timeout_s, reruns)
        if corpus is not None:
            known = [b for b in corpus.buckets() if is_known(b, baseline) and b["id"] not in tracked]
            result.cases += bucket_cases(shard(known, fraction, start), corpus, targets, system, on_case, timeout_s)
        result.suite_s[REGRESSIONS] = time.perf_counter() - t0
        if corpus is not None and minutes > 0:
            t0, smoke_seed = time.perf_counter(), shard_seed(seed, start)
            if on_phase:
                on_phase(f"smoke campaign ci-{smoke_seed}: {minutes:g} min on {len(targets)} targets "
                         f"(corpus {corpus_path})")
            smoke = run_smoke(result, corpus, targets, minutes, smoke_seed, rules, timeout_s)
            result.cases += smoke
            result.suite_s[SMOKE] = time.perf_counter() - t0
            for c in smoke if on_case else ():
                on_case(c)
        result.corpus = str(corpus_path) if corpus is not None else None
    finally:
        if corpus is not None:
            corpus.close()
        if temp is not None and not any(c.failing for c in result.suite(SMOKE)):
            shutil.rmtree(temp, ignore_errors=True)
            result.corpus = None
    return result
