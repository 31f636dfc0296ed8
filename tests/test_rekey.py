"""A corpus whose buckets were keyed by an older signature is re-keyed when opened
(corpus.buckets.SIGNATURE_VERSION): no row is lost and a bucket someone marked keeps its status."""

from __future__ import annotations

from conftest import meta, old_corpus

from corpus.buckets import SIGNATURE_VERSION, failure_message
from corpus.store import Corpus

LOG = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE\nCannot find symbol _Z8half_cosDv3_f in kernel library\n"
       "<unknown>:0:0: {n} instructions in function")


def test_an_old_corpus_is_rekeyed_and_keeps_its_statuses(tmp_path):
    # written at schema 5, keyed by signature 1: its two build failures (one missing symbol, two
    # statements, logs that differ in a number) in two buckets, its wrong lanes' bucket reported
    path = old_corpus(5, tmp_path)
    assert meta(path, "signature_version") is None
    again = Corpus(path)
    rows = again.disagreements()
    failures = [r for r in rows if r["kind"] == "build_error"]
    assert len(rows) == 4 and len(failures) == 2 and len({r["bucket"] for r in failures}) == 1  # one bug, one bucket
    assert {r["actual_value"] for r in failures} == {"Cannot find symbol _Z8half_cosDv3_f in kernel library"}
    bucket = again.bucket(failures[0]["bucket"])
    assert bucket["signature"]["failure"] == failure_message(LOG.format(n=35)) == failure_message(LOG.format(n=382))
    assert bucket["signature"]["failure"] == "Cannot find symbol half_* in kernel library"
    wrong = again.bucket(next(r["bucket"] for r in rows if r["kind"] == "wrong-result"))
    assert wrong["status"] == "reported" and wrong["note"] == "PoCL issue 1" and wrong["rows"] == 2
    assert [r["bucket"] for r in again.reductions()] == [wrong["id"]]  # the reduction followed its bucket
    again.close()
    assert meta(path, "signature_version") == str(SIGNATURE_VERSION)
