"""What a reduction keeps and whom it blames, against simulated drivers (tests/simulated.py):

* a candidate that shows the bucket's disagreement is kept even where other lanes start to
  disagree (a driver's ``max`` wrong on one lane of a four-statement program is wrong on every
  lane of the statement alone);
* a disagreement that only statements together show is an ``interaction`` bucket of the smallest
  set, never the bucket of one of them (Oclgrind's: a statement reads 0 beside one that calls an
  out-parameter function; here ``floor`` reads 0 beside ``fabs``);
* the reduced case is re-run on a fresh worker: a driver that keeps something of an earlier run
  (``-`` wrong once ``fabs`` ran in the worker) gets no single statement blamed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from simulated import SimTarget, SimWorker, simulated, store_observed

from corpus.buckets import INTERACTION, LANE_KINDS, bucket_id, signature, title
from corpus.reads import bucket_rows
from corpus.store import Corpus
from lang.derive import one_work_item, restrict
from lang.ir import Buffer, Fill, Load, Op, Program, Store, walk
from lang.layout import input_values
from lang.types import Type, scalar
from oracles import evaluate
from triage import observe as triage_observe
from triage import session
from triage.reduce import engine as reducer

F4, I4 = Type("float", 4), Type("int", 4)


@pytest.fixture(autouse=True)
def _every_target_takes_it(monkeypatch):
    monkeypatch.setattr(triage_observe, "runnable", lambda target, program: program)


def _program(*statements: tuple[str, Type], global_size: int = 4) -> Program:
    """One statement ``out{i} = op(in{i})`` per (op, type); ``max`` takes two inputs."""
    buffers, body = [], []
    for i, (op, t) in enumerate(statements):
        args = [f"in{i}"] + ([f"in{i}b"] if op in ("max", "arith") else [])
        buffers += [Buffer(a, t, "in", _lanes(t, 4 * global_size, 3 * i + k)) for k, a in enumerate(args)]
        attrs = (("operator", "-"),) if op == "arith" else ()
        body.append(Store(f"out{i}", Op(op, tuple(Load(a, t) for a in args), t, attrs)))
        buffers.append(Buffer(f"out{i}", t, "out"))
    return Program(tuple(buffers), tuple(body), global_size)


def _lanes(t: Type, n: int, shift: int) -> Fill:
    """``n`` explicit lanes: halves and quarters for a float (no lane integral), distinct integers."""
    if t.elem.is_float:
        values = np.array([(k + shift) % 7 - 2.75 for k in range(n)], np.float32).view(np.uint32)
    else:
        values = np.array([(k * 5 + shift) % 11 - 4 for k in range(n)], np.int32).view(np.uint32)
    return Fill(0, values=tuple(int(v) for v in values))


def _ops(program: Program) -> set[str]:
    return {n.op for s in program.body for n in walk(s.value) if isinstance(n, Op)}


def _zeros(expected) -> np.ndarray:
    return np.zeros(len(expected), scalar(expected.scalar).bits_dtype)


# -- (c) new disagreements elsewhere do not disqualify a candidate ------------------------------


def _crowded_max(program: Program, s: Store, expected, inputs) -> np.ndarray:
    """``max`` computed as ``min``: on every lane in a program of fewer than three statements, only on
    work-item 1's first lane in a larger one (a bug that depends on the code around it)."""
    if s.value.op != "max":
        return expected.allowed[0]
    wrong = evaluate(Op("min", s.value.args, s.value.type), program, inputs, frozenset()).allowed[0]
    if len(program.body) < 3:
        return wrong
    out = expected.allowed[0].copy()
    out[4] = wrong[4]
    return out


def test_a_candidate_that_shows_the_disagreement_is_kept_whatever_else_disagrees(monkeypatch):
    observe = simulated(_crowded_max)
    monkeypatch.setattr(reducer, "observe", observe)
    program = _program(("fabs", F4), ("max", I4), ("floor", F4), ("ceil", F4))
    rows = observe(program, SimTarget(), None)
    assert [(r["buffer"], r["work_item"], r["lane"]) for r in rows] == [("out1", 1, 4)]
    alone = one_work_item(program, 1, input_values(program), [1])
    assert len(observe(alone, SimTarget(), None)) > 1  # the statement alone disagrees on lanes that agreed
    worker = SimWorker()
    result = reducer.reduce_program(program, rows[0], SimTarget(), worker)
    assert len(result.reduced.body) == 1 and result.reduced.global_size == 1 and _ops(result.reduced) == {"max"}
    assert result.why_not_minimal == "" and not result.culprit and result.passes["alone"] == 1
    assert worker.restarts == 1  # the reduced case ran once more on a fresh worker


# -- (b) an interaction is the smallest set of statements, each agreeing alone --------------------


def _floor_beside_fabs(program: Program, s: Store, expected, inputs) -> np.ndarray:
    """``floor`` reads 0 whenever another statement of the program calls ``fabs``."""
    if s.value.op == "floor" and "fabs" in _ops(program):
        return _zeros(expected)
    return expected.allowed[0]


def test_a_disagreement_only_statements_together_show_is_their_interaction(monkeypatch, tmp_path):
    observe = simulated(_floor_beside_fabs)
    monkeypatch.setattr(reducer, "observe", observe)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    program = _program(("ceil", F4), ("fabs", F4), ("trunc", F4), ("floor", F4), ("round", F4))
    store_observed(corpus, program, observe)
    (before,) = corpus.buckets()
    assert before["signature"]["operation"] == "floor"  # named after the innocent statement
    row = bucket_rows(corpus, before["id"])[0]
    reduction = session.reduce_stored(corpus, row, SimTarget(), SimWorker())
    small = reduction.reduced
    assert small.global_size == 1 and [s.value.op for s in small.body] == ["fabs", "floor"]
    for i in range(2):  # each statement alone agrees
        assert observe(restrict(small, [i]), SimTarget(), None) == []
    assert reduction.blame["kind"] == INTERACTION and reduction.blame["operation"] == "fabs + floor"
    assert reduction.why_not_minimal == "2 statements: none shows it alone"
    (after,) = corpus.buckets()  # the floor bucket's rows moved: never blamed on floor alone
    assert after["id"] == reduction.bucket != before["id"] and after["signature"]["kind"] in LANE_KINDS
    assert after["signature"] == {"driver": "sim", "kind": INTERACTION, "operation": "fabs + floor",
                                  "deviation": before["signature"]["deviation"]}
    assert after["title"] == f"sim: fabs + floor: interaction, {before['signature']['deviation']}"
    assert after["rows"] == before["rows"] + len(reduction.rows) and after["reduced"]["statements"] == 2


def test_an_interactions_signature_is_its_operations_and_deviation():
    """The sorted operation families of the set, without widths or types, whichever statement's lane
    is wrong; another driver or deviation is another bug."""
    row = {"kind": "wrong-result", "target": "oclgrind", "operation": "floor", "src_type": "float4",
           "dst_type": "float4", "rule": "math.floor.special", "deviation": "type-limit"}

    def keyed(**culprit):
        blame = {"operation": "floor + sincos", "kind": INTERACTION, "deviation": "type-limit", **culprit}
        return signature({**row, "culprit": json.dumps(blame)})

    sig = keyed()
    assert sig == {"driver": "oclgrind", "kind": INTERACTION, "operation": "floor + sincos", "deviation": "wrong-value"}
    assert keyed(operation="sincos + floor") == sig and keyed(deviation="other-lane") == sig
    assert signature({**row, "src_type": "double2", "dst_type": "double2", "culprit": json.dumps(
        {"operation": "floor + sincos", "kind": INTERACTION, "deviation": "type-limit"})}) == sig
    assert bucket_id(keyed(deviation="number-for-nan")) != bucket_id(sig)
    assert bucket_id(keyed(operation="floor + modf")) != bucket_id(sig)
    assert bucket_id(signature({**row, "target": "pocl", "culprit": json.dumps(
        {"operation": "floor + sincos", "kind": INTERACTION, "deviation": "type-limit"})})) != bucket_id(sig)
    assert title(sig) == "oclgrind: floor + sincos: interaction, wrong-value"


# -- (d) the reduced case shows it on a fresh worker, a blamed statement alone -------------------


class RememberingWorker(SimWorker):
    """A worker that keeps something of every program it ran until it restarts: once a program with
    ``fabs`` ran in it, its ``-`` is wrong (0), in that program and every later one."""

    def __init__(self) -> None:
        super().__init__()
        self.fabs_ran = False

    def restart(self) -> None:
        super().restart()
        self.fabs_ran = False


def _remembering():
    worker = RememberingWorker()

    def driver(program: Program, s: Store, expected, inputs) -> np.ndarray:
        return _zeros(expected) if s.value.op == "arith" and worker.fabs_ran else expected.allowed[0]

    judged = simulated(driver)

    def observe(program: Program, target, w, lanes=None):
        worker.fabs_ran |= "fabs" in _ops(program)
        return judged(program, target, w, lanes)

    return worker, observe


def test_a_statement_is_blamed_only_if_it_shows_it_alone_on_a_fresh_worker(monkeypatch):
    worker, observe = _remembering()
    monkeypatch.setattr(reducer, "observe", observe)
    program = _program(("fabs", F4), ("arith", F4), ("floor", F4))
    rows = observe(program, SimTarget(), worker)
    assert {r["operation"] for r in rows} == {"operator-"}
    worker.restart()
    result = reducer.reduce_program(program, rows[0], SimTarget(), worker)
    # on the warm worker `-` alone (after fabs ran) was wrong; on a fresh one it is right
    assert sorted(s.value.op for s in result.reduced.body) == ["arith", "fabs"]
    assert result.blame["kind"] == INTERACTION and result.blame["operation"] == "fabs + operator-"
    assert "did not show it on a fresh worker" in result.why_not_minimal
    minus = restrict(result.reduced, [[s.value.op for s in result.reduced.body].index("arith")])
    worker.restart()
    assert observe(minus, SimTarget(), worker) == []


def test_a_disagreement_no_fresh_worker_shows_is_not_reduced(monkeypatch):
    """Wrong only on the worker's first program (state a fresh worker does not have): the campaign's
    run showed it, no run on a fresh worker does; nothing is reduced."""
    runs = []

    def driver(program: Program, s: Store, expected, inputs) -> np.ndarray:
        return _zeros(expected) if s.value.op == "floor" and len(runs) == 1 else expected.allowed[0]

    judged = simulated(driver)

    def observe(program, target, worker, lanes=None):
        runs.append(program.id)
        return judged(program, target, worker, lanes)

    monkeypatch.setattr(reducer, "observe", observe)
    program = _program(("floor", F4), ("ceil", F4))
    rows = observe(program, SimTarget(), None)
    assert rows
    assert reducer.reduce_program(program, rows[0], SimTarget(), SimWorker(), rows=rows) is None


# -- an interaction found once is tried at once on the program's other statements (triage.covictims)


def _beside_fract(program: Program, s: Store, expected, inputs) -> np.ndarray:
    """``floor``, ``trunc`` and ``round`` read 0 whenever another statement calls ``fract`` (a call
    with an out-parameter: Oclgrind's bug), ``ceil`` never."""
    if s.value.op in ("floor", "trunc", "round") and "fract" in _ops(program):
        return _zeros(expected)
    return expected.allowed[0]


def test_an_interaction_is_tried_on_the_other_statements_of_its_program(monkeypatch, tmp_path):
    from triage import covictims as module

    observe = simulated(_beside_fract)
    for m in (reducer, module):
        monkeypatch.setattr(m, "observe", observe)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    fract = Op("fract", (Load("inx", F4),), F4, (("out", "outxp"),))
    program = _program(("floor", F4), ("ceil", F4), ("trunc", F4), ("round", F4))
    program = Program(program.buffers + (Buffer("inx", F4, "in", _lanes(F4, 16, 9)), Buffer("outx", F4, "out"),
                                         Buffer("outxp", F4, "out")),
                      program.body + (Store("outx", fract),), program.global_size)
    store_observed(corpus, program, observe)
    before = corpus.buckets()  # a bucket per statement and deviation class, none of fract or ceil
    victims = {b["signature"]["operation"]: b["id"] for b in before}
    assert set(victims) == {"floor", "trunc", "round"}
    row = bucket_rows(corpus, victims["floor"])[0]
    reduction = session.reduce_stored(corpus, row, SimTarget(), SimWorker())
    assert reduction.blame["operation"] == "floor + fract"
    moved = module.covictims(corpus, reduction, SimTarget(), SimWorker())
    after = {b["signature"]["operation"] for b in corpus.buckets()}
    assert len(moved) == len(before) - 1 and after == {"floor + fract", "fract + trunc", "fract + round"}
    for b in corpus.buckets():
        assert b["signature"]["kind"] == INTERACTION and b["reduced"]["statements"] == 2
        assert b["reduced"]["work_items"] == 1


def _with_fract(program: Program, seed: int) -> Program:
    """``program`` with a last statement ``outx = fract(inx, &outxp)`` (a call with an out-parameter)."""
    fract = Op("fract", (Load("inx", F4),), F4, (("out", "outxp"),))
    return Program(program.buffers + (Buffer("inx", F4, "in", _lanes(F4, 16, seed)), Buffer("outx", F4, "out"),
                                      Buffer("outxp", F4, "out")),
                   program.body + (Store("outx", fract),), program.global_size)


def test_a_later_programs_victim_joins_a_known_interaction_in_one_run(monkeypatch, tmp_path):
    """Once a driver has a reduced interaction, a bucket of another program beside a call with an
    out-parameter (a new victim, or a bucket the interaction emptied that new rows fill again) is
    reduced to its statement beside that call by triage.join, without a reduction of its own, and
    its program's other victims with it (``round``); a statement wrong alone (``ceil`` here) is
    left to its reduction."""
    from triage import covictims as module
    from triage import join

    def beside_fract_or_ceil(program, s, expected, inputs):
        return _zeros(expected) if s.value.op == "ceil" else _beside_fract(program, s, expected, inputs)

    observe = simulated(beside_fract_or_ceil)
    for m in (reducer, module):
        monkeypatch.setattr(m, "observe", observe)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    first = _with_fract(_program(("floor", F4), ("sqrt", F4)), 9)
    store_observed(corpus, first, observe)
    [floor] = [b for b in corpus.buckets() if b["signature"]["operation"] == "floor"]
    later = _with_fract(_program(("trunc", F4), ("ceil", F4), ("round", F4)), 5)
    store_observed(corpus, later, observe)
    by_op = {b["signature"]["operation"]: b["id"] for b in corpus.buckets()}
    trunc_row = bucket_rows(corpus, by_op["trunc"])[0]
    assert join.join_known(corpus, by_op["trunc"], trunc_row, SimTarget(), SimWorker()) is None  # none known yet
    row = bucket_rows(corpus, floor["id"])[0]
    assert session.reduce_stored(corpus, row, SimTarget(), SimWorker()).blame["operation"] == "floor + fract"
    assert not bucket_rows(corpus, floor["id"])  # its rows moved to the interaction's bucket
    store_observed(corpus, _with_fract(_program(("round", F4), ("floor", F4)), 3), observe)
    refilled = bucket_rows(corpus, floor["id"])[0]
    for bucket, row, op in ((by_op["trunc"], trunc_row, "fract + trunc"), (floor["id"], refilled, "floor + fract")):
        heard: list[str] = []
        moved = join.join_known(corpus, bucket, row, SimTarget(), SimWorker(), on_moved=heard.append)
        if op == "fract + trunc":  # its program-mates beside the same call, told (the summary counts them)
            assert sorted((corpus.bucket(h)["signature"]["operation"], corpus.bucket(h)["signature"]["deviation"])
                          for h in heard) == [("fract + round", "wrong-value"), ("fract + trunc", "wrong-value")]
            assert moved not in heard and corpus.bucket(moved)["signature"]["deviation"] == "signed-zero"
        signature = corpus.bucket(moved)["signature"]
        assert (signature["kind"], signature["operation"]) == (INTERACTION, op)
        assert corpus.bucket(moved)["reduced"]["statements"] == 2 and not bucket_rows(corpus, bucket)
    assert not bucket_rows(corpus, by_op["round"])  # trunc's program-mate, tried beside the same call at once
    assert any(b["signature"]["operation"] == "fract + round" for b in corpus.buckets())
    ceil_row = bucket_rows(corpus, by_op["ceil"])[0]
    assert join.join_known(corpus, by_op["ceil"], ceil_row, SimTarget(), SimWorker()) is None


def test_nested_operations_none_wrong_alone_are_named_together():
    """rusticl 22.3 gets convert_ulong_rtz(convert_ushort_sat(NaN)) wrong (2147483648 for 0) while
    convert_ushort_sat(NaN) alone is right (0): the reduced statement keeps both, its why names them
    outermost first, and the bug list shows the pair as the bucket's operation, not the outer one."""
    from lang.ir import Buffer, Fill, Load, Op, Program, Store
    from lang.types import Type
    from triage.buglist import bug_list
    from triage.reduce import composite_of, why_not_minimal

    f, us, ul = Type("float"), Type("ushort"), Type("ulong")
    inner = Op("convert", (Load("in6", f),), us, (("rounding", ""), ("sat", True)))
    outer = Op("convert", (inner,), ul, (("rounding", "rtz"), ("sat", False)))
    p = Program((Buffer("in6", f, "in", Fill(0, (), 3, (0x7FC00000,))), Buffer("out8", ul, "out")),
                (Store("out8", outer),), global_size=1, area="conversions")
    why = why_not_minimal(p, [])
    assert why == "2 operations together (convert_T_rtz of convert_T_sat): none shows it alone"
    assert composite_of(why) == "convert_T_rtz of convert_T_sat" and composite_of("2 statements: none shows it alone") is None
    sig = {"kind": "wrong-result", "driver": "rusticl", "operation": "convert_T", "src_type": "float",
           "dst_type": "unsigned integer", "rule": "convert.sat.nan", "deviation": "wrong-value"}
    bucket = {"id": "b1", "signature": sig, "status": "new", "rows": 1, "paths": ["opencl-c"],
              "reduced": {"statements": 1, "work_items": 1, "why": why, "undefined": []}}
    [entry] = bug_list([bucket])
    assert entry["operation"] == "convert_T_rtz of convert_T_sat"
    crash = {**bucket, "id": "b2", "signature": {"kind": "crash", "driver": "oclgrind", "failure": "killed by SIGSEGV"}}
    assert [e["operation"] for e in bug_list([crash])] == ["killed by SIGSEGV"]  # a failure keeps its message
