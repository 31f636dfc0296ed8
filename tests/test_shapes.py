"""Kernel shapes (lang.shapes, area ``shapes``): the values steps compute against an independent
simulation of the emitted C, validity by construction, the strategy's shares, and triage's
verdict (the twin shows a built-in bug; a lane only the shape breaks is wrong code, one bucket per
smallest shape)."""

from __future__ import annotations

import collections
import json
import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from simulated import SimTarget, SimWorker, simulated, store_observed

from corpus.buckets import WRONG_CODE, signature
from corpus.reads import bucket_rows
from fuzz.emit.opencl_c import emit
from fuzz.strategies.conversions import Caps
from fuzz.strategies.shapes import shape_of, shape_programs, words
from lang.derive import twin
from lang.ir import Buffer, Fill, InvalidProgram, Load, Op, Program, Store, from_data, validate
from lang.layout import input_bytes, layout
from lang.policy import Policy
from lang.shapes import KINDS, MASK, Part, Shape, ShapeError, carried_sum, check, permutation, tree_sum
from lang.types import Type
from oracles import evaluate
from triage.reduce import engine as reducer

T = Type("int", 4)


def _c_loop(form: str, n: int, a: int, b: int, c: int) -> int:
    """The emitted loops, written the C way (j++ in the for header, k = j++ at the top otherwise)."""
    s = 0
    if form == "for":
        j = 0
        while j < n:
            if j == b:
                break
            if (j & 3) != c:
                s += a ^ j
            j += 1
        return s & MASK
    j = 0
    first = True
    while (first and form == "do") or j < n:
        first = False
        k = j
        j += 1
        if k == b:
            break
        if (k & 3) == c:
            continue
        s += a ^ k
    return s & MASK


@pytest.mark.parametrize("form", ["for", "while", "do"])
def test_carried_sum_is_the_emitted_loop(form):
    rnd = random.Random(form)
    for _ in range(300):
        n, a, b, c = rnd.choice((0, 1, 2, 5, 40)), rnd.getrandbits(32), rnd.randrange(50), rnd.randrange(4)
        assert carried_sum(form, (n, a, b, c)) == _c_loop(form, n, a, b, c)
    assert carried_sum("do", (0, 7, 99, 3)) == 7  # a do loop runs its body once even for n = 0


def test_tree_sum_and_permutations():
    for ls in (1, 2, 16, 256):
        a, b = 0x9E3779B9, 12345
        assert tree_sum((a, b), ls) == sum(lid * a + b for lid in range(ls)) % 2**32
        assert sorted(permutation(Part("exchange", "local", (0x1235, 77)), ls)) == list(range(ls))
        assert sorted(permutation(Part("rounds", "local", (5, 3, 9)), ls)) == list(range(ls))


def _base(n: int = 64) -> Program:
    a = Buffer("in0", T, "in", Fill(3, (1, -1 & MASK, 7), 3))
    return Program((a, Buffer("out0", T, "out")), (Store("out0", Op("add_sat", (Load("in0", T), Load("in0", T)), T)),), n,
                   area="expressions")


def _shaped(steps=(), wraps=(), local=0, n=64) -> Program:
    return replace(_base(n), area="shapes", local_size=local, shape=Shape("expressions", steps, wraps))


def test_check_refuses_what_is_not_defined():
    with pytest.raises(InvalidProgram, match="power-of-two"):
        validate(_shaped(steps=(Part("exchange", "local", (3, 1)),), local=0))
    with pytest.raises(InvalidProgram, match="intended path"):
        validate(_shaped(wraps=(Part("if-uniform", "then", (1, 2)),)))  # the statements would never run
    with pytest.raises(InvalidProgram, match="intended path"):
        validate(_shaped(wraps=(Part("loop", "for-once", (3, 3)),)))  # iteration 3 of 3 never comes
    with pytest.raises(ShapeError, match="atomic"):
        check(Shape("atomics", (), (Part("loop", "for-every", (2, 0)),)), 64, 64, shared=True)
    with pytest.raises(InvalidProgram, match="area 'shapes'"):
        validate(replace(_base(), shape=Shape("expressions", (), (Part("switch", "case", (1,)),))))


def test_json_round_trip_keeps_the_shape_and_the_twin_is_the_base():
    p = _shaped(steps=(Part("tree", "local", (5, 6)), Part("call", "swap", (1, 9))),
                wraps=(Part("loop", "while-break", (9, 4)),), local=16)
    assert from_data(json.loads(p.to_json())) == p
    assert twin(p) == _base()
    region = layout(p).inputs["ctl"]
    raw = np.frombuffer(input_bytes(p), dtype=np.uint32, count=len(p.shape.controls), offset=region.offset)
    assert tuple(int(w) for w in raw) == p.shape.controls == (5, 6, 1, 9, 9, 4)


def test_drawn_programs_are_valid_and_every_kind_has_a_fair_share():
    programs: list[Program] = []

    @settings(max_examples=150, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(shape_programs(Caps(fp64=True), Policy(math_statements=2, image_statements=2, shape_statements=2)))
    def draw(p):
        programs.append(p)

    draw()
    kinds = collections.Counter()
    for p in programs:
        validate(p)
        assert emit(p)  # OpenCL C for every shape
        kinds.update({k.kind for k in p.shape.parts})
    loops = sum(any(k.kind in ("carried", "rounds", "tree", "array", "loop") for k in p.shape.parts) for p in programs)
    barriers = sum(any(KINDS[k.kind].local for k in p.shape.steps) for p in programs)  # call:local has none
    branches = sum(any(k.kind in ("if-uniform", "if-divergent", "switch", "dead", "select") for k in p.shape.parts)
                   for p in programs)
    assert min(loops, barriers, branches) >= len(programs) // 5, (loops, barriers, branches)
    assert set(kinds) == set(KINDS)


def test_the_generic_call_is_drawn_only_for_devices_with_generic_pointers():
    """``call:generic`` needs the generic address space (lang.shapes.Kind.needs): drawn only when a
    target has it (Caps.features), and then the program requires it (so only such targets run it,
    built as OpenCL C 2.0 or 3.0) while its twin does not; a program that lacks the requirement is
    invalid."""
    rnd = random.Random(3)
    policy = Policy(shape_steps=3)
    without = [shape_of(_base(), rnd, policy) for _ in range(300)]
    assert not any(p.form == "generic" for q in without for p in q.shape.parts)
    assert all("generic_address_space" not in q.requires for q in without)
    with_ = [shape_of(_base(), rnd, policy, frozenset({"generic_address_space"})) for _ in range(300)]
    generic = [q for q in with_ if any(p.form == "generic" for p in q.shape.parts)]
    assert generic and all("generic_address_space" in q.requires for q in generic)
    assert all("generic_address_space" not in twin(q).requires for q in generic)
    assert "uint* p" in emit(generic[0])
    for q in generic[:3]:
        validate(q)
    with pytest.raises(InvalidProgram, match="generic_address_space"):
        validate(replace(generic[0], requires=frozenset()))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_drawn_words_take_the_intended_path(kind):
    rnd = random.Random(kind)
    for form in KINDS[kind].forms:
        for _ in range(50):
            assert KINDS[kind].valid(form, words(kind, form, rnd, 64))


def _driver(broken):
    """The oracle's results, except lanes 0..3 of the statements of programs ``broken`` picks."""
    def driver(program, s, expected, inputs):
        bits = evaluate(s.value, program, inputs, frozenset()).allowed[0].copy()
        if broken(program):
            bits[:4] ^= 1
        return bits
    return simulated(driver)


def _reduce(monkeypatch, program: Program, broken):
    monkeypatch.setattr(reducer, "observe", _driver(broken))
    row = reducer.observe(program, SimTarget(), SimWorker())[0]
    return reducer.reduce_program(program, row, SimTarget(), SimWorker(), 30.0), row


def test_a_built_in_bug_in_a_shaped_program_is_the_built_in_s(monkeypatch):
    p = _shaped(steps=(Part("carried", "for", (3, 1, 99, 0)),), wraps=(Part("switch", "case", (5,)),))
    reduction, row = _reduce(monkeypatch, p, lambda q: True)
    assert json.loads(row["culprit"]) == {"shape": "unreduced"}  # keyed apart until triage knows
    assert reduction.reduced.shape is None and reduction.blame is None
    assert "shape" not in signature(reduction.rows[0])


def test_a_lane_only_a_loop_breaks_is_wrong_code_keyed_on_the_smallest_shape(monkeypatch):
    loop = Part("loop", "do-every", (2, 0))
    p = _shaped(steps=(Part("select", "ternary", (1, 2)),), wraps=(Part("if-uniform", "else", (4, 4)), loop))
    has_loop = lambda q: q.shape is not None and any(w.kind == "loop" for w in q.shape.wraps)  # noqa: E731
    reduction, _ = _reduce(monkeypatch, p, has_loop)
    assert reduction.reduced.shape.parts == (replace(loop, words=(1, 0)),)  # the loop alone, one iteration
    assert reduction.blame["kind"] == WRONG_CODE and reduction.blame["shape"] == "loop:do-every"
    sig = signature({**reduction.rows[0], "target": "sim"})
    assert sig["kind"] == WRONG_CODE and sig["shape"] == "loop:do-every" and sig["rule"] == "shape.twin"


def _stored(corpus, program: Program) -> None:
    store_observed(corpus, program, reducer.observe)


def test_wrong_code_buckets_key_on_the_shape_and_the_report_ships_the_twin(monkeypatch, tmp_path):
    """Two programs whose loop the driver mis-compiles, around different statements and beside
    different other parts, are one wrong-code bucket; a built-in bug under a shape joins the
    built-in's bucket of a straight-line program."""
    from corpus.store import Corpus
    from triage import session
    from triage.report import case_of, readme, write_report

    has_loop = lambda q: q.shape is not None and any(w.kind == "loop" for w in q.shape.wraps)  # noqa: E731
    monkeypatch.setattr(reducer, "observe", _driver(has_loop))
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    loop = Part("loop", "for-every", (3, 0))
    first = _shaped(steps=(Part("array", "private", (4, 9)),), wraps=(loop,))
    second = replace(_shaped(wraps=(Part("switch", "case", (7,)), loop)),
                     body=(Store("out0", Op("hadd", (Load("in0", T), Load("in0", T)), T)),))
    for p in (first, second):
        _stored(corpus, p)
    assert {b["signature"].get("shape") for b in corpus.buckets()} == {"unreduced"}
    for b in corpus.buckets():
        row = bucket_rows(corpus, b["id"])[0]
        assert session.reduce_stored(corpus, row, SimTarget(), SimWorker()) is not None
    (bucket,) = corpus.buckets()
    assert bucket["signature"]["kind"] == WRONG_CODE and bucket["signature"]["shape"] == "loop:for-every"
    text = readme(case_of(corpus, bucket["id"]))
    assert "Wrong code" in text and "twin.cl" in text and "shape.twin" in text
    folder = write_report(corpus, bucket["id"], tmp_path / "report")
    assert "for (uint w0" in (folder / "kernel.cl").read_text() and "for (" not in (folder / "twin.cl").read_text()


def test_unstructured_control_flow_is_kept_only_where_the_bug_needs_it(monkeypatch):
    """A driver wrong on unstructured SPIR-V only: the reduced shape keeps ``unstructured`` and the
    bucket's shape says so; wrong on any loop: the reducer makes the control flow structured."""
    loop = Part("loop", "for-once", (3, 1))
    p = _shaped(wraps=(Part("switch", "case", (7,)), loop))
    p = replace(p, shape=replace(p.shape, cfg="unstructured"))
    assert from_data(json.loads(p.to_json())) == p
    assert "cfg" not in json.loads(_shaped(wraps=(loop,)).to_json())["shape"]  # older programs' JSON unchanged
    unstructured = lambda q: q.shape is not None and q.shape.cfg == "unstructured"  # noqa: E731
    reduction, _ = _reduce(monkeypatch, p, unstructured)
    assert reduction.reduced.shape.cfg == "unstructured" and reduction.blame["shape"].endswith("| unstructured")
    has_loop = lambda q: q.shape is not None and any(w.kind == "loop" for w in q.shape.wraps)  # noqa: E731
    reduction, _ = _reduce(monkeypatch, p, has_loop)
    assert reduction.reduced.shape.cfg == "structured" and reduction.blame["shape"] == "loop:for-once"


def test_the_reducer_shortens_loops_to_one_iteration(monkeypatch):
    """A driver wrong whenever a carried loop runs: the reduced shape keeps that loop, shortened."""
    runs = lambda q: q.shape is not None and any(s.kind == "carried" and s.words[0] for s in q.shape.steps)  # noqa: E731
    p = _shaped(steps=(Part("carried", "while", (64, 5, 99, 1)), Part("select", "ternary", (0, 1))),
                wraps=(Part("loop", "for-break", (16, 9)),))
    reduction, _ = _reduce(monkeypatch, p, runs)
    assert reduction.reduced.shape.parts == (Part("carried", "while", (1, 5, 99, 1)),)


def test_a_built_in_bug_under_a_shape_joins_the_straight_line_bucket(monkeypatch, tmp_path):
    """The twin shows it: the shaped program's rows move to the built-in's bucket, where the same
    bug found in a straight-line program already is (one bug, one bucket)."""
    from corpus.store import Corpus
    from triage import session
    from triage.versions import reproducer

    monkeypatch.setattr(reducer, "observe", _driver(lambda q: True))
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    _stored(corpus, _base())
    _stored(corpus, _shaped(steps=(Part("carried", "for", (3, 1, 99, 0)),), wraps=(Part("switch", "case", (5,)),)))
    assert len(corpus.buckets()) == 2
    shaped = next(b for b in corpus.buckets() if b["signature"].get("shape"))
    row = bucket_rows(corpus, shaped["id"])[0]
    reduction = session.reduce_stored(corpus, row, SimTarget(), SimWorker())
    (bucket,) = corpus.buckets()
    assert "shape" not in bucket["signature"] and bucket["programs"] >= 2
    # what the release-range check beside a campaign reads next: the bucket the rows moved to
    assert reduction.bucket == bucket["id"] != shaped["id"]
    assert reproducer(corpus, reduction.bucket)[0] == reduction.reduced.id


def test_a_built_in_bug_the_shape_hides_on_some_lanes_is_still_the_built_in_s(monkeypatch):
    """The twin is wrong on more lanes than the shaped program (so the reducer cannot take it in
    its place): the built-in is still wrong without the shape, so no wrong-code verdict."""
    def driver(program, s, expected, inputs):
        bits = evaluate(s.value, program, inputs, frozenset()).allowed[0].copy()
        bits[:4 if program.shape is not None else 8] ^= 1
        return bits
    monkeypatch.setattr(reducer, "observe", simulated(driver))
    p = _shaped(wraps=(Part("switch", "case", (5,)),))
    row = reducer.observe(p, SimTarget(), SimWorker())[0]
    reduction = reducer.reduce_program(p, row, SimTarget(), SimWorker(), 30.0)
    assert reduction.blame is None and reduction.culprit  # keyed as the built-in's (Corpus.blame)
    assert "shape" not in signature({**reduction.rows[0], "culprit": "", "target": "sim"})
