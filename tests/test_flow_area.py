"""The flow area in the corpus and in campaigns: a flow program's JSON form (exact round trip,
a hand-written form), its storage beside lang.ir programs, its judged lanes as wrong-code rows."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings

from campaign.flow_variants import variants
from corpus.store import Corpus
from fuzz.emit.opencl_flow import emit
from fuzz.strategies.flow import flow_programs
from lang.flow import (
    Assign,
    Bin,
    Cast,
    Const,
    Decl,
    FlowProgram,
    If,
    Input,
    Invoke,
    Load,
    Loop,
    Output,
    Pointer,
    Var,
    program_from_json,
)
from lang.ir import InvalidProgram
from lang.nodes import Fill
from tests.flow_fakes import FakeTarget as _Target


def _tiny() -> FlowProgram:
    """``s = 7; s += in0[i % 2]`` for i in 0, 1 (trips 2, cap 3): s = 7 + 1 + 2 = 10 on both work-items."""
    s = Var("s", "uint")
    body = (Loop("for", "i", Const("uint", 0), Const("uint", 2), 3, 1, False,
                 (Assign("s", Bin("add", s, Load("in0", "uint", Cast("uint", Var("i", "int"))), "uint")),)),)
    return FlowProgram((Input("in0", "uint", 2, Fill(5, values=(1, 2))),), (Output("o", "s", "uint"),),
                       (Decl("s", "uint", 7),), (), (), body, (2,), (1,))


@settings(max_examples=60, deadline=None)
@given(flow_programs())
def test_json_round_trip_is_exact(program):
    again = FlowProgram.from_json(program.to_json())
    assert again == program
    assert again.to_json() == program.to_json() and again.id == program.id


def test_json_form_of_a_hand_written_program():
    data = json.loads(_tiny().to_json())
    assert data["node"] == "FlowProgram" and data["area"] == "flow" and data["requires"] == []
    assert data["global_size"] == [2] and data["local_size"] == [1]
    assert data["variables"] == [{"node": "Decl", "name": "s", "type": "uint", "init": 7}]
    assert data["inputs"][0]["fill"] == {"node": "Fill", "seed": 5, "pool": [], "pool_weight": 3, "values": [1, 2]}
    loop = data["body"][0]
    assert (loop["node"], loop["form"], loop["cap"], loop["step"], loop["reverse"]) == ("Loop", "for", 3, 1, False)
    assert loop["body"][0]["value"]["b"] == {"node": "Load", "buffer": "in0", "type": "uint",
                                             "index": {"node": "Cast", "type": "uint",
                                                       "a": {"node": "Var", "name": "i", "type": "int"}}}


@pytest.mark.parametrize("text, why", [
    ('{"node": "FlowProgram", "inputs": [{"node": "Nope"}]}', "unknown node 'Nope'"),
    ('{"node": "FlowProgram", "inputs": []}', "node FlowProgram: "),
    ("{", "not JSON"),
])
def test_bad_json_is_one_line(text, why):
    with pytest.raises(InvalidProgram, match=why) as e:
        program_from_json(text)
    assert "\n" not in str(e.value)


def test_stored_like_other_programs(tmp_path):
    from lang.ir import Program
    corpus = Corpus(tmp_path / "c.db")
    flow, other = _tiny(), Program.from_json(
        '{"area":"expressions","body":[],"buffers":[],"global_size":1,"options":"","requires":[]}')
    assert corpus.add_program(flow, "c") == flow.id and corpus.add_program(other, "c") == other.id
    assert corpus.program(flow.id) == flow and corpus.program(flow.id[:10]) == flow
    assert corpus.program(other.id) == other
    rows = {r["id"]: r for r in corpus.db["programs"].rows}
    assert rows[flow.id]["area"] == "flow" and rows[flow.id]["statements"] == 1


class _Worker:
    """A driver that computes ``_tiny`` right (10, 10) except, built with -cl-opt-disable, work-item
    1 (11); with ``crash`` it crashes on every build."""

    def __init__(self, crash: bool = False) -> None:
        self.crash, self.options = crash, []

    def run(self, job):
        from fuzz.drivers import Result
        self.options.append(job.options)
        if self.crash:
            return Result("crash", {}, "killed by SIGSEGV", 0.0, 0.0)
        lanes = np.array([10, 11 if job.options == "-cl-opt-disable" else 10], np.uint32)
        return Result("ok", {"out": lanes.tobytes()}, "", 0.01, 0.01)


class _Lane:
    """A target's lane as triage.beside sees it: runs a triage task on the fake driver."""

    def __init__(self, worker):
        self.worker = worker

    def beside(self, fn):
        return fn(self.worker)


class _Release(_Target):
    name, release = "fake-2.0", "testing"


def _campaign(tmp_path, worker):
    from campaign.execute import execute
    corpus = Corpus(tmp_path / "c.db")
    p = _tiny()
    corpus.add_program(p, "c")
    execute(p, _Target(), worker, corpus, campaign="c")
    return corpus, p


def test_both_builds_run_and_a_wrong_lane_is_wrong_code(tmp_path):
    from lang.flow_rules import check
    check(_tiny())
    worker = _Worker()
    corpus, p = _campaign(tmp_path, worker)
    assert worker.options[:2] == ["", "-cl-opt-disable"]  # then its EMI variants, default build (campaign.flow_variants)
    assert worker.options[2:] == [""] * len(variants(p)) and variants(p)
    opt = replace(p, options="-cl-opt-disable")
    runs = {r["program_id"]: r for r in corpus.db["runs"].rows}
    assert {runs[p.id]["options"], runs[opt.id]["options"]} == {"", "-cl-opt-disable"}
    assert (runs[p.id]["judged"], runs[p.id]["mismatches"], runs[opt.id]["mismatches"]) == (2, 0, 1)
    assert corpus.program(opt.id) == opt  # the build is stored before it runs
    (row,) = corpus.disagreements()
    assert (row["program_id"], row["kind"], row["buffer"], row["work_item"]) == (opt.id, "wrong-code", "o", 1)
    assert (row["expected"], row["actual"], row["expected_value"], row["actual_value"]) == ("0xa", "0xb", "10", "11")
    assert row["operation"] == "flow assign + for loop" and row["rule"] == "flow.integer"
    (bucket,) = corpus.buckets()
    assert bucket["signature"]["kind"] == "wrong-code" and "-cl-opt-disable" not in bucket["title"]
    assert bucket["build_options"] == ["-cl-opt-disable"]  # the build is an attribute: seen only with it
    from triage.buglist import only_under
    assert only_under(bucket) == ["-cl-opt-disable"]


def test_a_crash_is_a_failure_of_each_build(tmp_path):
    corpus, p = _campaign(tmp_path, _Worker(crash=True))
    rows = corpus.disagreements()
    assert [r["kind"] for r in rows] == ["crash"] * (2 + len(variants(p))) and {r["operation"] for r in rows} == {"program"}
    assert len(corpus.buckets()) == 1


def test_constructs_of_names_the_writers_constructs():
    from campaign.flow import constructs_of
    from lang.flow import Exit, Function, PointerParam
    helper = Function("h", (), (PointerParam("q", "int"),), (), (), Const("int", 0), noinline=True)
    body = (Loop("do", "i", Const("uint", 0), Const("uint", 2), 2, 1, False,
                 (Exit("break", Const("int", 0)), If(Const("int", 1), (Assign("a", Const("int", 1)),)))),
            Invoke("h", (), (Pointer("b"),)))
    p = FlowProgram((), (), (Decl("a", "int"), Decl("b", "int"), Decl("c", "int")), (), (helper,), body, (1,), (1,))
    assert constructs_of(p, "a") == "assign + break + do loop + if"
    assert constructs_of(p, "b") == "noinline call + pointer"
    assert constructs_of(p, "c") == "initial value"


def test_report_emit_reduce_and_triage_of_a_flow_bucket(tmp_path):
    from click.testing import CliRunner

    from app.cli import cli
    from corpus.bucket_queries import flow_waiting, triage_candidates
    corpus, p = _campaign(tmp_path, _Worker())
    (bucket,) = corpus.buckets()
    assert triage_candidates(corpus, "c", "fake", 0.0) == []
    (waiting,) = flow_waiting(corpus, "c", "fake")
    assert waiting["id"] == bucket["id"] and not waiting["confirmed"] and flow_waiting(corpus, "c", "other") == []
    corpus.close()
    db = str(tmp_path / "c.db")
    out = CliRunner().invoke(cli, ["report", bucket["id"], "--corpus", db, "-o", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    assert "not reduced yet" in out.output and "not reduced yet" in (tmp_path / "r" / "README.md").read_text()
    readme = (tmp_path / "r" / "README.md").read_text()
    assert "| o | 1 | 10 | 11 | 10 (right) |" in readme and "-cl-opt-disable" in readme
    kernel = (tmp_path / "r" / "kernel.cl").read_text()
    assert '"-cl-opt-disable"' in kernel and "__kernel" in kernel
    assert {f.name for f in (tmp_path / "r").iterdir()} == {"README.md", "kernel.cl", "program.json", "repro.py"}
    emitted = CliRunner().invoke(cli, ["emit", p.id, "--corpus", db])
    assert emitted.exit_code == 0 and emitted.output == emit(p)
    reduced = CliRunner().invoke(cli, ["reduce", bucket["id"], "--corpus", db])
    assert reduced.exit_code == 2 and "not installed here" in reduced.output  # reduced on its own driver only


def test_report_of_a_flow_crash_bucket(tmp_path):
    """A crash has no wrong lane: its report ships the kernel and a repro.py that expects the run to
    end (no lane checks), and never stops on the crash row's empty output name."""
    from click.testing import CliRunner

    from app.cli import cli
    corpus, _ = _campaign(tmp_path, _Worker(crash=True))
    (bucket,) = [b for b in corpus.buckets() if b["signature"]["kind"] == "crash"]
    corpus.close()
    out = CliRunner().invoke(cli, ["report", bucket["id"], "--corpus", str(tmp_path / "c.db"), "-o", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    assert {f.name for f in (tmp_path / "r").iterdir()} == {"README.md", "kernel.cl", "program.json", "repro.py"}
    assert "killed by SIGSEGV" in (tmp_path / "r" / "README.md").read_text()


def test_the_area_is_chosen_by_name_and_runs_on_both_paths():
    from fuzz.drivers import Target
    from fuzz.drivers.capabilities import runnable
    from fuzz.strategies import AREAS, DEFAULT_AREAS
    assert "flow" in AREAS and "flow" not in DEFAULT_AREAS and set(DEFAULT_AREAS) == set(AREAS) - {"flow"}
    p = replace(_tiny(), requires=frozenset({"int64"}))
    c = Target("c", {"int64": True}, "fp-c", "", 0, 0)
    assert runnable(c, p) is p
    assert runnable(replace(c, path="spirv"), p) is p  # its SPIR-V module (fuzz.emit.spirv.flow_kernel)
    assert runnable(replace(c, fingerprint={}), p) is None  # no int64


def test_a_worker_process_draws_and_judges_a_flow_program_as_this_process_does():
    from conftest import SMALL

    from campaign.execute import Part, conclude, expectations_of
    from campaign.pool import Harness
    from fuzz.drivers import Result, Target
    from fuzz.strategies import AREAS, Caps, Draws
    from lang.flow import regions
    from oracles import flow_outcomes
    target = Target("fake", {}, "fp-fake", "", 0, 0)
    harness = Harness(1, [target], (Caps(), SMALL, 3))
    try:
        program = harness.draw("flow", 0, "fake").result(60)
        assert isinstance(program, FlowProgram) and program == Draws(AREAS["flow"](Caps(), SMALL), 3)[0]
        expected = flow_outcomes(program)
        out = bytearray(regions(program)[3])
        for o, at in regions(program)[2].items():
            bits = expected[o].bits.copy()
            bits[0] ^= 1  # lane 0 of every output wrong
            out[at:at + bits.nbytes] = bits.tobytes()
        result = Result("ok", {"out": bytes(out)}, "", 0.1, 0.1)
        there = harness.judge(Part(program, harness.expect(program, (frozenset(),), "fake").result(60)), target,
                              result).result(60)
        here = conclude(Part(program, expectations_of(program)), target, result)
    finally:
        harness.close()
    key = ("buffer", "lane", "kind", "operation", "expected", "actual")
    assert [[r[k] for k in key] for r in there[2].rows] == [[r[k] for k in key] for r in here[2].rows]
    flushable = sum(bool(expected[o.name].flushable[0]) for o in program.outputs)  # not judged: no CL_FP_DENORM
    assert there[0].verdict.mismatches == len(program.outputs) - flushable and there[1] == []


def test_a_rerun_shows_a_wrong_lane_again_by_its_lane():
    from triage.confirm import shows_again
    from triage.versions import verdict
    row = {"kind": "wrong-code", "buffer": "o", "lane": 1, "actual_value": "11"}
    assert shows_again(row, [dict(row)]) and verdict(row, [dict(row)])[0] == "present"
    other = {**row, "lane": 0}
    assert not shows_again(row, [other]) and verdict(row, [other])[0] == "different"
    assert verdict(row, [])[0] == "absent"


def test_a_float_lane_s_class_names_a_mechanism():
    from campaign.flow import deviation
    assert deviation("float", 0x00000000, 0x80000000, False) == "signed-zero"
    assert deviation("float", 0x3F800000, 0x7FC00000, False) == "nan"
    assert deviation("float", 0x7FC00000, 0x7F800000, True) == "number-for-nan"
    assert deviation("float", 0x3F800000, 0x40000000, False) == deviation("uint", 1, 2, False) == "other"


def test_triage_beside_a_campaign_confirms_a_flow_bucket_and_reduces_it(tmp_path):
    """The fake driver's -cl-opt-disable build writes (10, 11) whatever the kernel: confirmed on a
    fresh worker, then reduced at the structure level (triage.flow_triage): the loop goes and one
    work-item is left (the interpreter's 7 for s, against 10), every candidate defined, and the
    bucket's rows move to the reduced case's bucket."""
    from lang.flow_rules import check
    from triage.beside import Beside, pending_reasons

    worker = _Worker()
    worker.restart = lambda: None
    corpus, p = _campaign(tmp_path, worker)
    events = []
    beside = Beside(corpus, "c", on_event=lambda what, b: events.append(what), targets=[_Target()])
    task = beside.task(_Target())
    task(_Lane(worker), 60.0, 60.0)
    assert events == ["confirmed", "reduced"] and worker.options[-1] == "-cl-opt-disable"  # the bucket's build
    (reduction,) = corpus.reductions()
    reduced = corpus.program(reduction["reduced_id"])
    check(reduced)
    assert reduced.options == "-cl-opt-disable" and reduced.body == () and reduced.work_items == 1
    (bucket,) = corpus.buckets()
    assert bucket["reduced"]["statements"] == 0 and "flow initial value" in bucket["title"]
    assert bucket["build_options"] == ["-cl-opt-disable"]  # seen only under it: an attribute, not its key
    assert beside.task(_Target()) is None  # taken once

    class Result:
        targets: dict = {}
    corpus.update_campaign("c", 0, {}, 1, 0)
    beside.leave(Result(), 0.25)
    assert pending_reasons(corpus, "c") == {}


class _HistoryWorker(_Worker):
    """A driver that computes every kernel right (the interpreter's values: ``kernels`` maps each
    kernel text the jobs carried to its program) except that its -cl-opt-disable build writes 11 on
    work-item 1 while the kernel has a loop, and also right after a kernel with one in the same
    process (PoCL 7.1: a kernel's lanes that depend on what the process built before it)."""

    def __init__(self, kernels: dict) -> None:
        super().__init__()
        self.kernels, self.after_loop = kernels, False

    def restart(self) -> None:
        self.after_loop = False

    def run(self, job):
        from fuzz.drivers import Result
        from oracles import flow_outcomes
        p = self.kernels[job.program.decode()]
        loop = any(isinstance(s, Loop) for s in p.body)
        lanes = flow_outcomes(p)["o"].bits.copy()
        if job.options == "-cl-opt-disable" and (loop or self.after_loop) and len(lanes) > 1:
            lanes[1] = 11
        self.after_loop = loop
        return Result("ok", {"out": lanes.tobytes()}, "", 0.01, 0.01)


def test_a_reduction_is_kept_only_where_its_case_fails_in_a_new_process(tmp_path, monkeypatch):
    """On a worker that ran the loop before, the kernel without the loop still fails: the first
    reduction drops the loop, its case then passes alone on a fresh worker, and the reduction is
    made again with every candidate on a fresh worker, which keeps the loop."""
    import campaign.flow as flow_module
    from triage.flow_triage import reduce_flow_stored
    from triage.session import find_row

    kernels = {}

    def emitted(p):
        kernels[emit(p)] = p
        return emit(p)
    monkeypatch.setattr(flow_module, "emit", emitted)
    worker = _HistoryWorker(kernels)
    corpus, p = _campaign(tmp_path, worker)
    (bucket,) = corpus.buckets()
    assert reduce_flow_stored(corpus, find_row(corpus, bucket["id"]), _Target(), worker, 30) is not None
    reduced = corpus.program(corpus.reductions()[0]["reduced_id"])
    assert reduced.options == "-cl-opt-disable" and any(isinstance(s, Loop) for s in reduced.body)
    assert reduced.work_items == 2  # the wrong lane is work-item 1's


def test_a_reduced_flow_bucket_gets_its_release_range(tmp_path, monkeypatch):
    """Given releases of the bucket's driver, triage ranges the reduced flow bucket over them
    (triage.versions.check_bucket on the bucket its rows moved to), as it does a reduced
    statement's; a target of another lineage has no releases to range over."""
    import triage.beside as beside_module
    from triage.beside import Beside

    checked = []
    monkeypatch.setattr(beside_module, "check_bucket", lambda corpus, bucket, releases, timeout_s: checked.append(
        (bucket, [t.name for t in releases])))
    worker = _Worker()
    worker.restart = lambda: None
    corpus, _ = _campaign(tmp_path, worker)
    events = []
    beside = Beside(corpus, "c", on_event=lambda what, b: events.append((what, b["id"])), targets=[_Target()],
                    releases=[_Target(), _Release()])
    beside.task(_Target())(_Lane(worker), 120.0, 120.0)
    (bucket,) = corpus.buckets()
    assert checked == [(bucket["id"], ["fake", "fake-2.0"])]
    assert [w for w, _ in events] == ["confirmed", "reduced", "ranged"] and events[-1][1] == bucket["id"]


def test_a_vector_component_s_constructs_are_the_vector_s():
    """An output that holds a component of a vector (``c = v.s1``) is keyed on how the vector was
    computed: the loop around its swizzle store and the shuffle it was assigned, not the read."""
    from campaign.flow import constructs_of
    from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, Vec
    v = Var("v", "uint4")
    body = (Assign("v", Shuffle(v, None, Vec("uint4", tuple(Const("uint", k) for k in (3, 2, 1, 0))), "uint4")),
            Loop("for", "i", Const("uint", 0), Const("uint", 2), 2, 1, False,
                 (SwizzleStore("v", (0,), "s", Const("uint", 7)),)),
            Assign("c", Swizzle(v, (1,), "s", "uint")), Assign("d", Const("uint", 1)))
    p = FlowProgram((), (), (Decl("v", "uint4"), Decl("c", "uint"), Decl("d", "uint")), (), (), body, (1,), (1,))
    assert constructs_of(p, "c") == "assign + for loop + shuffle + swizzle store + vector"
    assert constructs_of(p, "d") == "assign"


def test_a_struct_member_s_constructs_name_the_struct_call():
    """A member written by a struct helper (its result assigned, or the struct passed by pointer)
    is keyed on that call; a member only assigned in the kernel is an assignment."""
    from campaign.flow import constructs_of
    from lang.flow_structs import SInvoke, Struct, StructFunction, StructParam, StructVar
    s = Struct("S", (Decl("a", "int"), Decl("b", "ushort")))
    f = StructFunction("f", (), (StructParam("x", "S"), StructParam("y", "S", True)), (), (),
                       (Assign("y.a", Const("int", 5)),), "x", noinline=True)
    body = (SInvoke("f", (), ("s", "t"), "u"), Assign("s.b", Const("ushort", 2)))
    p = replace(FlowProgram((), (), (), (), (), body, (1,), (1,)), structs=(s,), struct_functions=(f,),
                struct_vars=tuple(StructVar(n, "S", (1, 1)) for n in "stu"))
    assert constructs_of(p, "u.a") == "noinline struct call"
    assert constructs_of(p, "t.a") == "noinline struct call + struct pointer"
    assert constructs_of(p, "s.b") == "assign" and constructs_of(p, "s.a") == "initial value"


def test_a_bucket_seen_only_on_a_variant_has_no_release_range_here(tmp_path, monkeypatch):
    """A bucket whose rows are all on a target the releases do not hold (PoCL's work-group method
    ``pocl+wg-loops``) is not ranged: triage skips it, where it used to fail with "not installed
    here"; ``clfuzz versions`` says so in one line."""
    import triage.beside as beside_module
    from triage.beside import Beside
    from triage.versions import check_bucket, ranged_on

    worker = _Worker()
    worker.restart = lambda: None
    corpus, _ = _campaign(tmp_path, worker)
    (bucket,) = corpus.buckets()
    assert ranged_on(corpus, bucket, [_Release()]) is None and ranged_on(corpus, bucket, [_Target()])[0].name == "fake"
    with pytest.raises(ValueError, match="not installed here"):
        check_bucket(corpus, bucket["id"], [_Release()])
    checked, events = [], []
    monkeypatch.setattr(beside_module, "check_bucket", lambda *a, **k: checked.append(a))
    beside = Beside(corpus, "c", on_event=lambda what, b: events.append(what), targets=[_Target()],
                    releases=[_Release()])
    beside.task(_Target())(_Lane(worker), 120.0, 120.0)
    assert events == ["confirmed", "reduced"] and checked == []
