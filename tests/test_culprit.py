"""The faulty operation, not the outer one (triage.reduce's ``culprit`` pass, Corpus.blame): a
driver bug in add_sat shows through max(add_sat(..), ..) and min(add_sat(..), ..) in two programs,
two buckets named after the outer operations; triage finds that add_sat alone is wrong and both
become one bucket keyed on it. A bug of the outer operation itself keeps its own bucket."""

from __future__ import annotations

from simulated import SimTarget, SimWorker, simulated, store_observed

from corpus.reads import bucket_rows
from corpus.store import Corpus
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from oracles import evaluate
from triage.reduce import engine as reducer
from triage import session

T = Type("int", 4)


def _miscompiled(e, bug: str, instead: str):
    """``e`` with every ``bug`` operation computed as ``instead`` (a driver that lowers it wrongly)."""
    if not isinstance(e, Op):
        return e
    args = tuple(_miscompiled(a, bug, instead) for a in e.args)
    return Op(instead if e.op == bug else e.op, args, e.type, e.attrs)


def _simulator(bug: str, instead: str):
    """The oracle's results, except that the driver computes ``bug`` as ``instead`` wherever it
    appears, nested or not, so the wrong value propagates through the operations above it."""

    def driver(program: Program, s, expected, inputs):
        return evaluate(_miscompiled(s.value, bug, instead), program, inputs, frozenset()).allowed[0]

    return simulated(driver)


def _program(outer: str, seed: int) -> Program:
    a, b, c = (Buffer(f"in{i}", T, "in", Fill(seed + i, (1, 3, 5, 2**31 - 1), 3)) for i in range(3))
    inner = Op("add_sat", (Load("in0", T), Load("in1", T)), T)
    return Program((a, b, c, Buffer("out0", T, "out")), (Store("out0", Op(outer, (inner, Load("in2", T)), T)),), 64)


def test_the_nested_culprit_becomes_the_goal(monkeypatch):
    monkeypatch.setattr(reducer, "observe", _simulator("add_sat", "hadd"))
    program = _program("max", 1)
    rows = reducer.observe(program, SimTarget(), SimWorker())
    assert rows and rows[0]["operation"] == "max"  # named after the outer operation
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())
    assert result.culprit and result.reduced.body[0].value.op == "add_sat"
    assert result.rows[0]["operation"] == "add_sat"


def test_an_outer_bug_keeps_its_operation(monkeypatch):
    monkeypatch.setattr(reducer, "observe", _simulator("max", "min"))
    program = _program("max", 1)
    rows = reducer.observe(program, SimTarget(), SimWorker())
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())
    assert not result.culprit and result.reduced.body[0].value.op == "max"


def test_one_bug_through_two_outer_operations_is_one_bucket(monkeypatch, tmp_path):
    monkeypatch.setattr(reducer, "observe", _simulator("add_sat", "hadd"))
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    for outer, seed in (("max", 1), ("min", 7)):
        store_observed(corpus, _program(outer, seed), reducer.observe)
    before = corpus.buckets()
    assert sorted(b["signature"]["operation"] for b in before) == ["max", "min"]
    corpus.mark(before[0]["id"], "reported", "vendor#7")
    for b in before:
        row = bucket_rows(corpus, b["id"])[0]
        assert session.reduce_stored(corpus, row, SimTarget(), SimWorker()) is not None
    after = corpus.buckets()
    assert [b["signature"]["operation"] for b in after] == ["add_sat"]
    assert after[0]["status"] == "reported" and after[0]["note"] == "vendor#7"  # the marked bucket's status went along
    assert after[0]["reduced"] == {"statements": 1, "work_items": 1, "why": "", "undefined": []}


def test_a_culprit_two_drivers_share_leaves_each_its_own_bucket(monkeypatch, tmp_path):
    """Two drivers wrong the same way are two bugs: blaming one driver's bucket returns the bucket its
    own rows moved to (with the reduction and status going there), never the other driver's."""
    monkeypatch.setattr(reducer, "observe", _simulator("add_sat", "hadd"))
    corpus = Corpus(tmp_path / "c.db")
    program = _program("max", 1)
    corpus.add_program(program, "c")
    rows = reducer.observe(program, SimTarget(), SimWorker())
    for target in ("pocl", "rusticl"):
        corpus.add_target(target, "opencl-c", f"fp-{target}", {"device_name": target})
        own = [dict(r, target=target, program_id=program.id, fingerprint_id=f"fp-{target}", path="opencl-c")
               for r in rows]
        corpus.add_run({"program_id": program.id, "target": target, "fingerprint_id": f"fp-{target}",
                        "path": "opencl-c", "status": "ok", "campaign": "c", "checks": 1, "judged": 1,
                        "mismatches": len(own), "build_s": 0.0, "run_s": 0.0, "log": ""}, own)
    culprit = {**rows[0], "operation": "add_sat"}
    moved, before = {}, corpus.buckets()
    for b in sorted(before, key=lambda b: b["signature"]["driver"]):
        moved[b["signature"]["driver"]] = corpus.blame(b["id"], culprit)
    assert len(set(moved.values())) == 2
    for driver, new in moved.items():
        (bucket,) = corpus.buckets(bucket=new)
        assert bucket["signature"] == {**bucket["signature"], "driver": driver, "operation": "add_sat"}
        assert {r["target"] for r in bucket_rows(corpus, new)} == {driver}
    # blamed again once its rows are gone (an earlier reduction or join moved them): its driver's bucket
    (emptied,) = [b for b in before if b["signature"]["driver"] == "pocl"]
    assert bucket_rows(corpus, emptied["id"]) == [] and corpus.blame(emptied["id"], culprit) == moved["pocl"]
