"""Replay corpus/regressions/ (triage.regressions): the oracle's recorded verdict still holds, and
every local driver gives the allowed results, except where it is known to be wrong: those cases
are strict expected failures naming their bucket, so a fixed bug turns the suite red as surely as
a new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz.drivers import Worker
from fuzz.drivers.capabilities import supports
from triage.regressions import FOLDER, current_verdict, load, run_on

from .conftest import target_named

FILES = sorted(FOLDER.glob("*.json"))
LOCAL_TARGETS = ("pocl", "rusticl", "oclgrind", "pocl/spirv", "rusticl/spirv", "oclgrind/spirv")


def test_there_are_regressions():
    assert len(FILES) >= 5, f"corpus/regressions/ holds {len(FILES)} files"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_oracle_verdict_is_unchanged(path: Path):
    case = load(path)
    assert current_verdict(case) == case["verdict"]


def _cases():
    for path in FILES:
        case = load(path)
        for name in LOCAL_TARGETS:
            wrong = case["known_wrong"].get(name)
            marks = [pytest.mark.xfail(strict=True, reason=f"bucket {wrong['bucket']}: {wrong['what']}")] if wrong else []
            yield pytest.param(path, name, marks=marks, id=f"{path.stem}-{name}")


@pytest.fixture(scope="module")
def workers():
    pool: dict[str, Worker] = {}
    yield pool
    for w in pool.values():
        w.close()


@pytest.mark.drivers
@pytest.mark.parametrize("path,name", list(_cases()))
def test_driver_gives_allowed_results(path: Path, name: str, workers):
    target = target_named(name)
    program = load(path)["program"]
    if not supports(target, program):
        pytest.skip(f"{name} does not take this program (capabilities or route)")
    rows = run_on(program, target, workers)
    assert rows is not None, "the program no longer validates"
    assert rows == [], rows[0]["expression"] + ": " + rows[0]["actual_value"] + " (expected " + rows[0]["expected_value"] + ")"
