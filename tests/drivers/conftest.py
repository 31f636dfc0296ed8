"""Shared fixtures for the driver tests: discovered targets, one Worker per target and module."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from fuzz.drivers import Worker, discover
from fuzz.drivers.icd import find_libraries

NO_ICD_REASON = "no OpenCL ICD installed (no /etc/OpenCL/vendors/*.icd, Oclgrind or NVIDIA library)"


def skip_without_icd() -> None:
    """Skip the calling test module when this machine has no OpenCL library at all."""
    if not find_libraries():
        pytest.skip(NO_ICD_REASON, allow_module_level=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``target`` over every discovered device, one group of tests per target (its
    OpenCL C path: a worker serves a device whatever the front end)."""
    if "target" in metafunc.fixturenames:
        targets = [t for t in discover() if t.path == "opencl-c"] if find_libraries() else []
        metafunc.parametrize("target", targets, ids=[t.name for t in targets], scope="module")


def target_named(name: str):
    """The discovered target ``name`` (``pocl/spirv``), or skip the test when it is not installed."""
    found = {t.name: t for t in discover()}
    if name not in found:
        pytest.skip(f"{name} is not installed")
    return found[name]


def run_generated(target, programs, statuses: tuple[str, ...] = ("ok",)) -> int:
    """Run every program the target takes (campaign.execute, no corpus) and check each ends in one of
    ``statuses`` with judged lanes (where the oracle judges any: a build option may void every rule,
    OpenCL 3.0 API §5.8.6.3, -cl-finite-math-only for one); the number run."""
    from campaign.execute import execute
    from fuzz.drivers.capabilities import supports
    from oracles import expected

    ran = 0
    with Worker(target, timeout_s=120) as w:
        for p in programs:
            if not supports(target, p):
                continue
            outcome = execute(p, target, w, None)
            assert outcome.status in statuses, (p.id, outcome.failures[:1])
            assert outcome.verdict.judged > 0 or not any(e.judged.any() for e in expected(p).values())
            ran += 1
    return ran


@pytest.fixture(scope="module")
def worker(target):
    """One Worker per target, shared by a module's tests (each test leaves it usable)."""
    with Worker(target, timeout_s=30) as w:
        yield w


def repeated_runs(corpus_file: str | Path) -> list[tuple[str, str]]:
    """The (program, target) pairs run more than once in the corpus at ``corpus_file`` (read beside
    the corpus: no corpus function counts a program's runs)."""
    with closing(sqlite3.connect(corpus_file)) as conn:
        return conn.execute("select program_id, target from runs group by program_id, target "
                            "having count(*) > 1").fetchall()
