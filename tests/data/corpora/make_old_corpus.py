"""Write a small corpus with the clfuzz of one past schema (tests/test_schema.py opens it with today's).

Run it with the checkout of the commit that introduced that schema first on the path::

    git worktree add --detach /tmp/schema5 cc7a7a6
    PYTHONPATH=/tmp/schema5 python tests/data/corpora/make_old_corpus.py tests/data/corpora/schema-5.sqlite
    git worktree remove /tmp/schema5

It writes what that version's API allows: two targets, three programs of a campaign, runs with
two wrong-result lanes, two build failures of one missing symbol (their runs' logs) and a run
without disagreements; from schema 2 a bucket marked reported, a confirmation and a reduction;
3 the campaign's state and a Hypothesis example; 4 the largest errors of a run; 5 the lanes'
deviations; 6 a culprit; 7 a reproduction rate and why a reduction is not minimal; 8 a release
check; 9 the runs' build options; 10 a run cut at its ceiling (a timeout row with the time it was
given) whose re-run at ten times that did not finish (a hang); 11 has the table of oracle defects
(empty); 12 a reduction's undefined operations (none); 13 has the bug evidence table (empty); 14 the
variants table (empty).
It prints the counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from corpus.store import Corpus, Program  # fuzz.ir's up to schema 4, lang.ir's since

try:
    from corpus.store import SCHEMA_VERSION
except ImportError:  # since schema 8 the schema's own module states it
    from corpus.schema import SCHEMA_VERSION

V = SCHEMA_VERSION
POCL = ("pocl", "opencl-c", "f-pocl", {"device_name": "cpu-haswell", "driver_version": "6.0",
                                        "platform_name": "Portable Computing Language"})
RUSTICL = ("rusticl", "opencl-c", "f-rusticl", {"device_name": "llvmpipe", "driver_version": "25.0.7",
                                                 "platform_name": "rusticl"})
LOG = ("clBuildProgram failed: BUILD_PROGRAM_FAILURE\nCannot find symbol _Z8half_cosDv3_f in kernel library\n"
       "<unknown>:0:0: {n} instructions in function")


def _program(statements: int, seed: int) -> Program:
    """A conversions program of ``statements`` saturating float4 -> int4 conversions (the IR's JSON
    has kept this form since schema 1)."""
    buffers, body = [], []
    for i in range(statements):
        buffers += [{"name": f"out{i}", "role": "out", "type": "int4"},
                    {"fill": {"pool": [0], "pool_weight": 3, "seed": seed + i}, "name": f"in{i}", "role": "in",
                     "type": "float4"}]
        body.append({"store": f"out{i}", "value": {"args": [{"load": f"in{i}", "type": "float4"}],
                                                   "attrs": {"rounding": "rte", "sat": True}, "op": "convert",
                                                   "type": "int4"}})
    return Program.from_json(json.dumps({"area": "conversions", "body": body, "buffers": buffers, "global_size": 16,
                                         "options": "", "requires": []}))


def failure_row(program: Program, status: str, log: str) -> dict:
    """That version's fuzz.judge.failure_row (schema 1's judge does not import: a row of its form)."""
    try:
        from fuzz.judge import failure_row as row_of
    except (ImportError, TypeError):
        return {"kind": status, "buffer": "out0", "work_item": -1, "lane": -1, "operation": "convert_int4_sat_rte",
                "src_type": "float4", "dst_type": "int4", "expression": "convert_int4_sat_rte(in0[gid])",
                "inputs": "{}", "expected": "", "allowed": "[]", "actual": "", "expected_value": "builds and runs",
                "actual_value": log.strip().splitlines()[-1][:300], "rule": "valid-program",
                "rule_text": "a valid program must build and run",
                "section": "OpenCL C 3.0 §6 (the program is valid by construction)", "input_class": "none"}
    return row_of(program, status, log)


def _run(program_id: str, target: tuple, status: str, mismatches: int, log: str = "") -> dict:
    return {"program_id": program_id, "target": target[0], "fingerprint_id": target[2], "path": target[1],
            "status": status, "checks": 16, "judged": 16 if status == "ok" else 0, "mismatches": mismatches,
            "build_s": 0.25, "run_s": 0.5, "log": log, "campaign": "nightly",
            **({"options": ""} if V >= 9 else {})}


def _wrong(program_id: str, lane: int, deviation: str) -> dict:
    row = {"program_id": program_id, "target": POCL[0], "fingerprint_id": POCL[2], "path": POCL[1],
           "kind": "wrong-result", "buffer": "out0", "work_item": 0, "lane": lane,
           "operation": "convert_int4_sat_rte", "src_type": "float4", "dst_type": "int4",
           "expression": "convert_int4_sat_rte(in0[gid])", "inputs": json.dumps({"in0": {"values": ["nan"]}}),
           "expected": "0x0", "allowed": "[0]", "actual": "0x80000000", "expected_value": "0",
           "actual_value": "-2147483648", "rule": "convert.sat.nan", "rule_text": "NaN converts to 0",
           "section": "OpenCL C 3.0 §6.4.3.3", "input_class": "nan"}
    if V >= 5:
        row.update(deviation=deviation, deviation_detail=f"the value is {deviation}")
    return row


def main(out: Path) -> None:
    out.unlink(missing_ok=True)
    corpus = Corpus(out)
    for target in (POCL, RUSTICL):
        corpus.add_target(*target)
    programs = [_program(1, 1), _program(1, 2), _program(2, 3)]
    pids = [corpus.add_program(p, "nightly") for p in programs]
    errors = [{"buffer": "out0", "operation": "convert_int4_sat_rte", "type": "int4", "ulps": 0.0, "limit": 0.0,
               "accepted": 1, "rule": "convert.sat.nan", "bound": "exact", "work_item": 0, "lane": 2,
               "expression": "convert_int4_sat_rte(in0[gid])", "inputs": "{}", "reference": "0",
               "actual_value": "0"}]
    corpus.add_run(_run(pids[0], POCL, "ok", 2), [_wrong(pids[0], 0, "type-limit"), _wrong(pids[0], 1, "other")],
                   *([errors] if V >= 4 else []))
    for i, n in ((1, 35), (2, 382)):  # one missing symbol: the logs differ in a number, the statements too
        log = LOG.format(n=n)
        failure = {**failure_row(programs[i], "build_error", log), "program_id": pids[i], "target": RUSTICL[0],
                   "fingerprint_id": RUSTICL[2], "path": RUSTICL[1]}
        corpus.add_run(_run(pids[i], RUSTICL, "build_error", 0, log), [failure])
    corpus.add_run(_run(pids[2], POCL, "ok", 0), [])
    if V >= 10:
        log = "no result after 60 s; worker killed"
        timeout = {**failure_row(programs[1], "timeout", log), "program_id": pids[1], "target": POCL[0],
                   "fingerprint_id": POCL[2], "path": POCL[1]}
        corpus.add_run(_run(pids[1], POCL, "timeout", 0, log), [timeout])
        corpus.decide_hang(pids[1], POCL[0], {"hang": True, "limit_s": 600.0})
    if V >= 3:
        corpus.update_campaign("nightly", 7, {"areas": ["conversions"]}, 3, 32,
                               {"areas": {"conversions": {"next": 3}}, "pending": []})
        corpus.save_example(b"nightly/conversions/key", b"example")
    else:
        corpus.update_campaign("nightly", 7, {"areas": ["conversions"]}, 3, 32)
    if V >= 2:
        wrong = next(b for b in corpus.buckets() if b["signature"]["kind"] == "wrong-result")
        corpus.mark(wrong["id"], "reported", "PoCL issue 1")
        if V >= 3:
            corpus.confirm(pids[0], POCL[0], wrong["id"], True)
        else:
            corpus.confirm(pids[0], POCL[0], True)
        size = {"statements": 1, "work_items": 1}
        corpus.add_reduction({"id": f"{wrong['id']}-1", "original_id": pids[0], "reduced_id": pids[0],
                              "bucket": wrong["id"], "target": POCL[0], "seconds": 1.5, "candidates": 12,
                              "size_before": json.dumps(size), "size_after": json.dumps(size),
                              **({"why": ""} if V >= 7 else {})})
        if V >= 6:
            corpus.blame(wrong["id"], {"operation": "convert_int_sat_rte", "src_type": "float", "dst_type": "int",
                                       "rule": "convert.sat.nan", "deviation": "type-limit"})
        if V >= 7:
            corpus.reproduced(corpus.buckets()[0]["id"], 3, 4)
        if V >= 8:
            corpus.add_release_checks([{"id": "rc-1", "bucket": corpus.buckets()[0]["id"], "target": "pocl-7.1",
                                        "lineage": "pocl", "version": "7.1", "release": "trixie",
                                        "fingerprint_id": "f-pocl-7.1", "program_id": pids[0], "verdict": "absent",
                                        "detail": "the oracle accepts every lane", "seconds": 3.0,
                                        "checked": 1.0}])
    counts = {t: corpus.db.execute(f"select count(*) from {t}").fetchone()[0]
              for t in ("programs", "runs", "disagreements")}
    corpus.close()
    corpus = Corpus(out)
    corpus.db.execute("PRAGMA journal_mode=DELETE")
    corpus.db.execute("PRAGMA page_size=512")  # a small file: a page per table and index
    corpus.db.execute("VACUUM")
    corpus.close()
    print(out, f"schema {V}", json.dumps(counts))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
