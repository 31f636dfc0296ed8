"""Shared fixtures for the driver tests: discovered targets, one Worker per target and module."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def worker(target):
    """One Worker per target, shared by a module's tests (each test leaves it usable)."""
    with Worker(target, timeout_s=30) as w:
        yield w
