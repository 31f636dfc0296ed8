"""A corpus whose buckets were keyed by an older signature is re-keyed when opened
(corpus.buckets.SIGNATURE_VERSION): no row is lost and a bucket someone marked keeps its status."""

from __future__ import annotations

from corpus.buckets import SIGNATURE_VERSION, failure_message
from corpus.store import Corpus
from triage.regressions import FOLDER, load

LOG = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE\nCannot find symbol _Z8half_cosDv3_f in kernel library\n"
       "<unknown>:0:0: {n} instructions in function")


def _failure(pid: str, n: int) -> tuple[dict, dict]:
    log = LOG.format(n=n)
    run = {"program_id": pid, "target": "pocl/spirv", "fingerprint_id": "fp", "path": "spirv", "status": "build_error",
           "campaign": "c", "checks": 0, "judged": 0, "mismatches": 0, "build_s": 0.0, "run_s": 0.0, "log": log}
    row = {"program_id": pid, "target": "pocl/spirv", "fingerprint_id": "fp", "path": "spirv", "kind": "build_error",
           "buffer": "", "work_item": -1, "lane": -1, "operation": "half_cos", "src_type": "float3",
           "dst_type": "float3", "expression": "", "inputs": "{}", "expected": "", "allowed": "[]", "actual": "",
           "expected_value": "builds and runs", "actual_value": log.splitlines()[-1], "rule": "valid-program",
           "rule_text": "", "section": "", "input_class": "none"}
    return run, row


def test_an_old_corpus_is_rekeyed_and_keeps_its_statuses(tmp_path):
    path = tmp_path / "old.db"
    corpus = Corpus(path)
    corpus.add_target("pocl/spirv", "spirv", "fp", {"device_name": "cpu", "driver_version": "3.1"})
    for n, case in zip((35, 382), (FOLDER / "17ce28f5e43d7404.json", FOLDER / "3148e611217c28df.json")):
        pid = corpus.add_program(load(case)["program"], "c")
        run, row = _failure(pid, n)
        corpus.add_run(run, [row])
    corpus.db["meta"].upsert({"key": "signature_version", "value": "1"}, pk="key")
    corpus.db.execute("update disagreements set bucket = 'old-' || lane || '-' || id")  # as keyed before
    olds = [r["bucket"] for r in corpus.db["disagreements"].rows]
    for b in olds:
        corpus.db["buckets"].insert({"id": b, "title": "t", "signature": "{}", "target": "pocl/spirv", "status": "new",
                                     "note": "", "created": 0.0, "changed": 0.0})
    corpus.db["buckets"].update(olds[1], {"status": "reported", "note": "PoCL issue 1", "changed": 5.0})
    corpus.close()

    again = Corpus(path)
    rows = list(again.db["disagreements"].rows)
    assert len(rows) == 2 and len({r["bucket"] for r in rows}) == 1  # one missing-symbol bug, one bucket
    assert {r["actual_value"] for r in rows} == {"Cannot find symbol _Z8half_cosDv3_f in kernel library"}
    bucket = again.bucket(rows[0]["bucket"])
    assert bucket["status"] == "reported" and bucket["note"] == "PoCL issue 1"
    assert bucket["signature"]["failure"] == failure_message(LOG) == "Cannot find symbol half_* in kernel library"
    assert again.db["meta"].get("signature_version")["value"] == str(SIGNATURE_VERSION)
