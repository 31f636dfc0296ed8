"""Shared fixtures: an in-memory corpus, small policies, and the local drivers (skipped if absent)."""

from __future__ import annotations

import pytest

from corpus.store import Corpus
from lang.policy import Policy

SMALL = Policy(statements=6, global_size=32)


@pytest.fixture
def memory_corpus():
    c = Corpus(":memory:")
    yield c
    c.close()


@pytest.fixture(scope="session")
def targets():
    from fuzz.drivers import discover

    found = discover()
    if not found:
        pytest.skip("no OpenCL driver installed (run `bash setup.sh test`)")
    return found
