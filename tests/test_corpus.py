"""The corpus: idempotent content-addressed writes, one-line errors on bad files."""

import sqlite3

import pytest
from conftest import SMALL
from hypothesis import HealthCheck, given, settings

from corpus.dashboard_queries import dashboard_totals, run_span
from corpus.merge import merge
from corpus.store import Corpus, CorpusError
from fuzz.strategies.conversions import Caps, conversion_programs


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(conversion_programs(Caps(fp64=True), SMALL))
def test_program_round_trips_through_the_corpus(program):
    c = Corpus(":memory:")
    pid = c.add_program(program)
    assert c.add_program(program) == pid  # idempotent
    assert c.program(pid) == program
    assert c.program(pid[:6]) == program  # unique prefix
    assert dashboard_totals(c)["programs"] == 1


def test_run_and_disagreements_are_written_together(memory_corpus):
    row = {"program_id": "p", "target": "t", "fingerprint_id": "f", "path": "opencl-c", "buffer": "out0",
           "lane": 3, "kind": "wrong-result", "operation": "convert_int"}
    run = {"program_id": "p", "target": "t", "fingerprint_id": "f", "path": "opencl-c", "status": "ok",
           "checks": 10, "judged": 10, "mismatches": 1}
    memory_corpus.add_run(run, [row])
    memory_corpus.add_run(run, [row])  # the same disagreement again is not a new row
    assert len(memory_corpus.disagreements()) == 1
    assert run_span(memory_corpus)["n"] == 2


def test_oracle_defects_follow_their_run_and_merge_once(tmp_path):
    """An oracle defect (campaign.rederive) is stored with its run, once per lane, apart from the
    disagreements (no bucket), and a merge carries it under the run's new id."""
    defect = {"program_id": "p", "target": "t", "fingerprint_id": "f", "path": "opencl-c", "buffer": "out0",
              "work_item": 1, "lane": 5, "operation": "expm1", "expected": '["0x9931a000"]',
              "rederived": '["0x99319efa"]', "why": "the re-derivation accepts the actual value"}
    run = {"program_id": "p", "target": "t", "fingerprint_id": "f", "path": "opencl-c", "status": "ok",
           "checks": 8, "judged": 8, "mismatches": 0, "campaign": "c"}
    a = Corpus(tmp_path / "a.db")
    first = a.add_run(run, [], [], [defect])
    a.add_run(run, [], [], [defect])  # the same lane again is not a new defect
    assert [(d["run_id"], d["lane"], d["campaign"]) for d in a.oracle_defects()] == [(first, 5, "c")]
    assert a.disagreements() == [] and a.buckets() == [] and a.oracle_defects("other") == []
    a.close()
    b = Corpus(tmp_path / "b.db")
    b.add_run({**run, "program_id": "q"}, [])  # run ids of b differ from a's
    merge(b, tmp_path / "a.db")
    merged = b.oracle_defects()
    assert len(merged) == 1 and b.db["runs"].get(merged[0]["run_id"])["program_id"] == "p"


def test_garbage_file_is_refused_with_one_line(tmp_path):
    bad = tmp_path / "c.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(CorpusError) as e:
        Corpus(bad)
    assert "not a usable clfuzz corpus" in str(e.value) and "\n" not in str(e.value)


def test_foreign_sqlite_file_is_refused(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("create table x (a)")
    conn.commit()
    conn.close()
    with pytest.raises(CorpusError, match="not a clfuzz corpus"):
        Corpus(other)


def test_missing_corpus_when_reading(tmp_path):
    with pytest.raises(CorpusError, match="run a campaign first"):
        Corpus(tmp_path / "none.db", create=False)


def test_unknown_program(memory_corpus):
    with pytest.raises(CorpusError, match="no program"):
        memory_corpus.program("deadbeef")


def test_coverage_counts_the_cells_of_programs_that_ran(memory_corpus):
    from corpus.coverage import coverage
    from lang.ir import Buffer, Fill, Load, Op, Program, Store
    from lang.types import Type

    i4, u4 = Type("int", 4), Type("uint", 4)
    x = Load("x", i4)
    program = Program(
        (Buffer("x", i4, "in", Fill(1)), Buffer("o", u4, "out"), Buffer("c", Type("int"), "out")),
        (Store("o", Op("abs", (Op("min", (x, Load("x", i4)), i4),), u4)),
         Store("c", Op("any", (Op("swizzle", (x,), Type("int", 2), (("components", (2, 3)), ("form", "hi"))),),
                       Type("int")))),
        4,
    )
    pid = memory_corpus.add_program(program)
    run = {"program_id": pid, "fingerprint_id": "f", "checks": 0, "judged": 0, "mismatches": 0, "build_s": 0.0,
           "run_s": 0.0, "log": "", "campaign": "c"}
    memory_corpus.add_run({**run, "target": "pocl", "path": "opencl-c", "status": "ok"}, [])
    memory_corpus.add_run({**run, "target": "pocl/spirv", "path": "spirv", "status": "ok"}, [])
    memory_corpus.add_run({**run, "target": "rusticl", "path": "opencl-c", "status": "crash"}, [])
    cov = coverage(memory_corpus)
    assert set(cov) == {"pocl", "pocl/spirv"}  # a crashed run covers nothing
    assert cov["pocl"]["path"] == "opencl-c"
    # abs is counted by its result type; any, a predicate, by its operand's
    assert cov["pocl"]["cells"] == [["abs", "uint", 4, 1], ["any", "int", 2, 1], ["min:vector", "int", 4, 1],
                                    ["swizzle:hi", "int", 2, 1]]
