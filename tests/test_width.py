"""A driver wrong only at one vector type (triage.width): the reduced case's scalar form, one
work-item a lane, is right; buckets of one driver so shown at the same type are one bug, and a
later bucket of that type joins it in two runs. Against a simulated driver (tests/simulated.py)
that gets every built-in on ``float4`` wrong (lane 0 reads 0) and its scalars right, as PoCL 3.1's
SPIR-V path gets every math built-in on ``double16``."""

from __future__ import annotations

import numpy as np
import pytest
from simulated import SimTarget, SimWorker, simulated, store_observed

from corpus.reads import bucket_rows
from corpus.store import Corpus
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from triage import join
from triage import observe as triage_observe
from triage import session, width
from triage.bugs import listed, title
from triage.reduce import engine as reducer

F, F4, I4 = Type("float", 1), Type("float", 4), Type("int", 4)
VALUES = (0.5, 1.25, 2.0, 3.5, 0.75, 1.5, 2.5, 0.25)


@pytest.fixture(autouse=True)
def _simulated(monkeypatch):
    monkeypatch.setattr(triage_observe, "runnable", lambda target, program: program)
    observe = simulated(_wrong_at_float4)
    for module in (reducer, width, join):
        monkeypatch.setattr(module, "observe", observe)


def _wrong_at_float4(program: Program, s: Store, expected, inputs) -> np.ndarray:
    """Lane 0 of a ``float4`` result reads 0 (``fabs`` wrong as a scalar too: a bug of its own)."""
    out = expected.allowed[0].copy()
    if s.value.type == F4 or s.value.op == "fabs":
        out[0] = 0
    return out


def _fill(values) -> Fill:
    return Fill(0, values=tuple(int(v) for v in np.array(values, np.float32).view(np.uint32)))


def _one(op: str, t: Type = F4, work_items: int = 2) -> Program:
    x = Buffer("x", t, "in", _fill(VALUES[:t.width * work_items]))
    return Program((x, Buffer("o", t, "out")), (Store("o", Op(op, (Load("x", t),), t)),), work_items)


def test_the_scalar_form_is_the_same_operands_one_work_item_a_lane():
    case = Program((Buffer("x", F4, "in", _fill(VALUES[:4])), Buffer("k", Type("int", 1), "in", Fill(0, values=(3,))),
                    Buffer("o", F4, "out")),
                   (Store("o", Op("ldexp", (Load("x", F4), Load("k", Type("int", 1))), F4)),), 1)
    scalar = width.scalar_form(case)
    assert width.vector_type(case) == "float4" and scalar.global_size == 4
    x, k, o = scalar.buffers
    assert (x.type, k.type, o.type) == (F, Type("int", 1), F)
    assert x.fill.values == case.buffers[0].fill.values and k.fill.values == (3, 3, 3, 3)
    assert scalar.body[0].value.type == F
    rootn = Program((Buffer("x", F4, "in", _fill(VALUES[:4])), Buffer("n", I4, "in", Fill(0, values=(1, 2, 3, 4))),
                     Buffer("o", F4, "out")), (Store("o", Op("rootn", (Load("x", F4), Load("n", I4)), F4)),), 1)
    scalar = width.scalar_form(rootn)  # every vector of one width: each as its scalar
    assert width.vector_type(rootn) == "float4" and [b.type for b in scalar.buffers] == [F, Type("int", 1), F]
    assert scalar.buffers[1].fill.values == (1, 2, 3, 4)
    dot = Program((Buffer("x", F4, "in", _fill(VALUES[:4])), Buffer("o", F, "out")),
                  (Store("o", Op("dot", (Load("x", F4), Load("x", F4)), F)),), 1)
    assert width.vector_type(dot) is None and width.scalar_form(dot) is None  # not lane-wise
    assert width.scalar_form(_one("sqrt")) is None  # two work-items: not a reduced case


def test_buckets_wrong_only_at_one_vector_type_are_one_bug(tmp_path):
    """sqrt and exp on float4 (right as scalars) are one bug by ``same-width``; fabs, wrong as a
    scalar too, stays apart; a later ceil on float4 joins in two runs before any reduction."""
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    observe = simulated(_wrong_at_float4)
    for op in ("sqrt", "exp", "fabs"):
        store_observed(corpus, _one(op), observe)
    by_op = {b["signature"]["operation"]: b["id"] for b in corpus.buckets()}
    shown = {}
    for op, bucket in by_op.items():
        reduction = session.reduce_stored(corpus, bucket_rows(corpus, bucket)[0], SimTarget(), SimWorker())
        assert (len(reduction.reduced.body), reduction.reduced.global_size) == (1, 1)
        shown[op] = width.only_at_width(corpus, reduction.bucket, reduction.reduced, SimTarget(), SimWorker())
    assert shown == {"sqrt": True, "exp": True, "fabs": False}
    bugs, _ = listed(corpus)
    [both] = [b for b in bugs if len(b.buckets) > 1]
    assert {b["operation"] for b in both.buckets} == {"sqrt", "exp"} and len(bugs) == 2
    assert [(e["kind"], e["type"]) for e in both.evidence] == [("same-width", "float4")]
    assert title(both) == "sim: built-ins on float4 wrong, right as scalars (exp, sqrt; 2 buckets)"
    store_observed(corpus, _one("ceil"), observe)
    ceil = next(b["id"] for b in corpus.buckets() if b["signature"]["operation"] == "ceil")
    assert join.join_known(corpus, ceil, bucket_rows(corpus, ceil)[0], SimTarget(), SimWorker()) == ceil
    assert corpus.bucket(ceil)["reduced"]["statements"] == 1
    [bug] = [b for b in listed(corpus)[0] if len(b.buckets) > 1]
    assert {b["operation"] for b in bug.buckets} == {"sqrt", "exp", "ceil"}


def test_a_bucket_at_a_known_width_is_triaged_first(tmp_path):
    """Beside a campaign, once a type is known to fail only as itself on a target, a waiting bucket
    of that type is taken before newer ones of other types (its join costs two runs)."""
    from triage.beside import Beside

    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    corpus.update_campaign("c", 0, {}, 0, 0, {})
    observe = simulated(_wrong_at_float4)
    store_observed(corpus, _one("sqrt"), observe)
    [sqrt] = corpus.buckets()
    reduction = session.reduce_stored(corpus, bucket_rows(corpus, sqrt["id"])[0], SimTarget(), SimWorker())
    assert width.only_at_width(corpus, reduction.bucket, reduction.reduced, SimTarget(), SimWorker())
    store_observed(corpus, _one("ceil"), observe)
    store_observed(corpus, _one("fabs", F, 8), observe)  # newer: taken first by age alone
    beside = Beside(corpus, "c")
    beside.since = 0.0
    assert beside.task(SimTarget()) is not None
    [taken] = [b for b in beside.tried if b != sqrt["id"]]
    assert corpus.bucket(taken)["signature"]["operation"] == "ceil"
