"""The cases and the result of a ``clfuzz ci`` run (app.ci runs it, app.ci_report writes it): its
suites, each case's outcome, and the exit status."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

REGRESSIONS = "regressions"
SMOKE = "smoke-campaign"
SUITES = (REGRESSIONS, SMOKE)

PASSED, FAILED, FIXED, SKIPPED, ERROR, GONE = "passed", "failed", "fixed", "skipped", "error", "gone"
OUTCOMES = (PASSED, FAILED, FIXED, SKIPPED, ERROR, GONE)
"""A case's outcome; ``failed`` and ``fixed`` are JUnit failures, ``error`` a JUnit error; ``gone``
(a known bug a driver release no longer shows) passes."""


class CiError(Exception):
    """CI cannot run at all (infrastructure); the message is one line saying what to do."""


@dataclass
class Case:
    """One JUnit test case: ``suite`` (:data:`SUITES`), ``classname`` (a target, or ``oracle``),
    ``name``, an outcome (:data:`OUTCOMES`), the failure's one-line ``message`` and ``details``,
    ``out`` (system-out), the seconds it took, the known bucket it still shows and where that
    bucket's vendor bug is (``url``)."""

    suite: str
    classname: str
    name: str
    outcome: str = PASSED
    message: str = ""
    details: str = ""
    out: str = ""
    time_s: float = 0.0
    known: str = ""  # the known bucket a passing case still shows (a regression's expected failure)
    url: str = ""  # where the vendor's bug of that known bucket is (``clfuzz mark ID reported --url URL``)

    @property
    def failing(self) -> bool:
        return self.outcome in (FAILED, FIXED, ERROR)


@dataclass
class CiResult:
    """Everything one ``clfuzz ci`` run found."""

    cases: list[Case] = field(default_factory=list)
    suite_s: dict[str, float] = field(default_factory=dict)
    targets: list[str] = field(default_factory=list)
    corpus: str | None = None  # the smoke campaign's corpus (None: none kept)
    campaign: str | None = None
    programs: int = 0
    new_buckets: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def suite(self, name: str) -> list[Case]:
        return [c for c in self.cases if c.suite == name]

    def counts(self, suite: str | None = None) -> dict[str, int]:
        """``tests``, ``failures`` (failed + fixed), ``errors``, ``skipped`` and each outcome."""
        cases = self.cases if suite is None else self.suite(suite)
        n = {o: sum(c.outcome == o for c in cases) for o in OUTCOMES}
        return {"tests": len(cases), "failures": n[FAILED] + n[FIXED], "errors": n[ERROR],
                "skipped": n[SKIPPED], **n}

    @property
    def exit_code(self) -> int:
        """0: everything passed (or was skipped); 1: a case failed or erred."""
        return 1 if any(c.failing for c in self.cases) else 0
