"""The cases and the result of a ``clfuzz ci`` run (app.ci runs it, app.ci_report writes it): its
suites, each case's status in deqp-runner's words, the exit status, and the shard of a run.

**Statuses** (:data:`STATUSES`; docs/ci.md). What the driver gave (a case's ``result``) is one
of Pass, Fail, Crash, Timeout; a case's ``status`` says how that compares with its expectation:

- ``Pass``: the driver gives the allowed results and nothing expected otherwise;
- ``Fail``, ``Crash``, ``Timeout``: an unexpected result, the same on every re-run (a regression,
  or a new bucket of the smoke campaign);
- ``ExpectedFail``: the result the expectation names (``ID,Fail`` in ``fails.txt``, a regression
  file's ``known_wrong``, a bucket already ``reported`` or ``ignored``);
- ``UnexpectedPass``: an expected failure that passes now: the expectation must be updated;
- ``Flake``: an unexpected result that changed when re-run; ``KnownFlake``: an unexpected result
  of a case a ``flakes.txt`` regex names (not re-run);
- ``Skip``: not run (a ``skips.txt`` regex names it, or the target cannot take the program);
- ``Missing``: no result (the worker could not start, the program no longer validates, the
  smoke campaign stopped): deqp-runner's word for a test that gave none;
- ``Warn``: a new bucket below ``--severity``: listed, not failed.

Fail, Crash, Timeout, UnexpectedPass and Missing fail the run (:data:`FAILING`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence, TypeVar

REGRESSIONS = "regressions"
SMOKE = "smoke-campaign"
SUITES = (REGRESSIONS, SMOKE)

PASS, FAIL, CRASH, TIMEOUT = "Pass", "Fail", "Crash", "Timeout"
EXPECTED_FAIL, UNEXPECTED_PASS, FLAKE, KNOWN_FLAKE = "ExpectedFail", "UnexpectedPass", "Flake", "KnownFlake"
SKIP, MISSING, WARN = "Skip", "Missing", "Warn"
STATUSES = (PASS, FAIL, CRASH, TIMEOUT, EXPECTED_FAIL, UNEXPECTED_PASS, FLAKE, KNOWN_FLAKE, SKIP, MISSING, WARN)
"""Every status a case may end with, in deqp-runner's words (module docstring)."""
EXPECTABLE = (FAIL, CRASH, TIMEOUT)
"""The results a ``fails.txt`` line may expect."""
FAILING = frozenset({FAIL, CRASH, TIMEOUT, UNEXPECTED_PASS, MISSING})
"""The statuses that fail the run (exit status 1)."""

_BY_KIND = {"crash": CRASH, "timeout": TIMEOUT, "worker_error": MISSING, "invalid_module": MISSING}


def result_of(kind: str | None) -> str:
    """The result of a run whose first disagreement row (or a bucket's signature) is of ``kind``:
    Pass for none, Crash, Timeout, Missing for clfuzz's own failures (the worker, the SPIR-V
    module), Fail for any other (a wrong or imprecise value, a build or runtime error)."""
    return PASS if kind is None else _BY_KIND.get(kind, FAIL)


class CiError(Exception):
    """CI cannot run at all (infrastructure, bad input); the message is one line saying what to do."""


@dataclass
class Case:
    """One case: ``suite`` (:data:`SUITES`), the ``driver`` it ran on (a target, or ``oracle``),
    its ``id`` (a regression file's, a bucket's or the smoke campaign's), a ``title``, its
    ``status`` and the driver's ``result`` (:data:`STATUSES`), the one-line ``message`` and the
    ``details`` of a failing or flaky case, ``out`` (what a passing case still says), the seconds
    it took, where the vendor's bug of its bucket is (``url``) and, for a known bug a driver
    release no longer shows, how that is reported (``gone``: "FIXED in pocl 6.0 (present in pocl
    3.1)")."""

    suite: str
    driver: str
    id: str
    title: str = ""
    status: str = PASS
    result: str = ""
    message: str = ""
    details: str = ""
    out: str = ""
    time_s: float = 0.0
    url: str = ""
    gone: str = ""

    @property
    def name(self) -> str:
        """The JUnit case name: the id, then the title."""
        return f"{self.id} {self.title}".strip()

    @property
    def failing(self) -> bool:
        return self.status in FAILING


@dataclass
class CiResult:
    """Everything one ``clfuzz ci`` run (or the merge of several shards' runs) found."""

    cases: list[Case] = field(default_factory=list)
    suite_s: dict[str, float] = field(default_factory=dict)
    targets: list[str] = field(default_factory=list)
    corpus: str | None = None  # the smoke campaign's corpus (None: none kept)
    campaigns: list[str] = field(default_factory=list)
    programs: int = 0
    beside: dict[str, str] = field(default_factory=dict)  # a release target's counterpart (app.ci_releases)
    started: float = field(default_factory=time.time)

    def suite(self, name: str) -> list[Case]:
        return [c for c in self.cases if c.suite == name]

    def counts(self, suite: str | None = None) -> dict[str, int]:
        """``tests``, ``failures`` (failing driver results), ``errors`` (Missing), ``skipped``, and
        the count of each status."""
        cases = self.cases if suite is None else self.suite(suite)
        n = {s: sum(c.status == s for c in cases) for s in STATUSES}
        return {"tests": len(cases), "failures": sum(n[s] for s in FAILING - {MISSING}), "errors": n[MISSING],
                "skipped": n[SKIP], **n}

    @property
    def exit_code(self) -> int:
        """0: nothing failed; 1: a case failed (:data:`FAILING`)."""
        return 1 if any(c.failing for c in self.cases) else 0


T = TypeVar("T")


def check_fraction(fraction: int, start: int) -> None:
    """Raise :class:`CiError` unless ``start`` is a shard of ``fraction`` (1 <= start <= fraction)."""
    if fraction < 1:
        raise CiError(f"--fraction {fraction} is out of range: give the number of shards, 1 or more")
    if not 1 <= start <= fraction:
        raise CiError(f"--fraction-start {start} is out of range for --fraction {fraction}: "
                      f"give the shard of this job, counted from 1 to {fraction}")


def shard(items: Sequence[T], fraction: int = 1, start: int = 1) -> list[T]:
    """The items of shard ``start`` of ``fraction`` (counted from 1, as deqp-runner does): every
    ``fraction``-th item from the ``start``-th, so that the shards 1..fraction take every item once."""
    check_fraction(fraction, start)
    return list(items[start - 1::fraction])


def shard_seed(seed: int, start: int) -> int:
    """The smoke campaign's seed of shard ``start``: ``seed`` for the first, one more for each next."""
    return seed + start - 1


def describe(e: BaseException) -> str:
    """``Type: first line`` of an exception, for a case that could not be judged."""
    line = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {line}" if line else type(e).__name__

