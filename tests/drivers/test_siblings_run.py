"""A reduced case re-run as its sibling on a real driver (triage.siblings): Oclgrind computes
sinpi(1) as sin(pi * 1), a tiny number where OpenCL C requires zero, on float and on double alike.
The float case's double variant lands in the double bucket: evidence stored, and the double bucket,
which had no reduced case, gets the variant as one."""

from __future__ import annotations

import struct

from corpus.bug_queries import stored_evidence
from corpus.store import Corpus
from fuzz.drivers import Worker
from triage.bugs import listed
from triage.observe import observe
from triage.siblings import rerun_siblings

from tests.test_siblings import one
from .conftest import skip_without_icd, target_named

skip_without_icd()


def _stored(corpus: Corpus, program, target, worker) -> list[dict]:
    rows = observe(program, target, worker)
    assert rows, "Oclgrind computes sinpi(1) right: this test's premise is gone"
    corpus.add_program(program, "test")
    for r in rows:
        r.update(program_id=program.id, fingerprint_id=target.fingerprint_id, path=target.path)
    corpus.add_run({"program_id": program.id, "target": target.name, "fingerprint_id": target.fingerprint_id,
                    "path": target.path, "status": "ok", "checks": 1, "judged": 1, "mismatches": len(rows)}, rows)
    return rows


def _sinpi(tmp_path, double: float):
    """Oclgrind, a corpus, and its run of sinpi(1.0f) and of sinpi(``double``) stored: the target, the
    corpus and the float program."""
    target = target_named("oclgrind")
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    single = one("sinpi", "float", "float", [int.from_bytes(struct.pack("<f", 1.0), "little")])
    with Worker(target) as worker:
        _stored(corpus, single, target, worker)
        _stored(corpus, one("sinpi", "double", "double", [int.from_bytes(struct.pack("<d", double), "little")]),
                target, worker)
    return target, corpus, single


def test_the_float_case_shows_the_double_bucket(tmp_path):
    target, corpus, single = _sinpi(tmp_path, 3.0)
    [float_bucket] = [b["id"] for b in corpus.buckets() if b["signature"]["dst_type"] == "float"]
    with Worker(target) as worker:
        shown = rerun_siblings(corpus, float_bucket, single, target, worker)
    [double_bucket] = [b["id"] for b in corpus.buckets() if b["signature"]["dst_type"] == "double"]
    assert shown == [(double_bucket, True)]
    [evidence] = stored_evidence(corpus)
    assert (evidence["bucket"], evidence["same_as"], evidence["kind"]) == (double_bucket, float_bucket, "re-run")
    assert corpus.bucket(double_bucket)["reduced"] == {"statements": 1, "work_items": 1, "why": "", "undefined": []}
    [bug] = listed(corpus)[0]
    assert {e["kind"] for e in bug.evidence} <= {"re-run", "same-value", "same-operand"} and len(bug.buckets) == 2


def test_a_clamp_case_shows_its_min_part(tmp_path):
    """Oclgrind's integer clamp with scalar bounds on a short3 reads lane 0 of x for every lane;
    its case re-run as min(x, maxval) (§6.15.3 Table 13: clamp is min(max(x, minval), maxval))
    fails alike and lands in the bucket of Oclgrind's min on the same operands."""
    from lang.ir import Buffer, Fill, Load, Op, Program, Store
    from lang.types import Type

    target = target_named("oclgrind")
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    v, s = Type("short", 3), Type("short")

    def case(op: str, bounds: tuple[str, ...]) -> Program:
        return Program((Buffer("in0", v, "in", Fill(0, (), 3, (0, 1, 1, 0))), Buffer("in3", s, "in", Fill(0, (), 3, (1,))),
                        Buffer("in4", s, "in", Fill(0, (), 3, (1,))), Buffer("out1", v, "out")),
                       (Store("out1", Op(op, (Load("in0", v), *(Load(b, s) for b in bounds)), v)),),
                       global_size=1, area="expressions")

    clamp = case("clamp", ("in3", "in4"))
    with Worker(target) as worker:
        _stored(corpus, clamp, target, worker)
        _stored(corpus, case("min", ("in4",)), target, worker)
        [clamp_bucket] = [b["id"] for b in corpus.buckets() if b["signature"]["operation"] == "clamp"]
        [min_bucket] = [b["id"] for b in corpus.buckets() if b["signature"]["operation"] == "min"]
        shown = rerun_siblings(corpus, clamp_bucket, clamp, target, worker)
    assert shown == [(min_bucket, True)]  # the min bucket had no reduced case: the variant is its
    assert len(listed(corpus)[0]) == 1


def test_clfuzz_reduce_learns_what_the_campaigns_triage_learns_after_a_reduction(tmp_path):
    """``clfuzz reduce`` of the float bucket re-runs its case as its siblings, as the campaign's
    triage does after a reduction (triage.beside.after_reduction): the double bucket joins its bug,
    and the command says so. (It had only reduced: the bug list kept two bugs.)"""
    from click.testing import CliRunner

    from app.cli import cli

    _, corpus, _ = _sinpi(tmp_path, 3.0)
    assert len(listed(corpus)[0]) == 2  # nothing yet says they are one bug
    [float_bucket] = [b["id"] for b in corpus.buckets() if b["signature"]["dst_type"] == "float"]
    [double_bucket] = [b["id"] for b in corpus.buckets() if b["signature"]["dst_type"] == "double"]
    run = CliRunner().invoke(cli, ["reduce", float_bucket, "--corpus", str(tmp_path / "c.db")])
    assert run.exit_code == 0, run.output
    assert f"bucket {double_bucket} is the same bug, reduced by this case" in run.output
    [bug] = listed(corpus)[0]
    assert sorted(b["id"] for b in bug.buckets) == sorted([float_bucket, double_bucket])


def test_clfuzz_reduce_of_a_bug_reduces_no_bucket_twice(tmp_path):
    """sinpi(1) on float and on double: one bug by its operands before any reduction (same-operand);
    ``clfuzz reduce bug-...`` reduces the first bucket, whose case re-run as the double one becomes
    that bucket's reduced case: the command does not reduce it again."""
    from click.testing import CliRunner

    from app.cli import cli

    _, corpus, _ = _sinpi(tmp_path, 1.0)
    [bug] = listed(corpus)[0]
    assert len(bug.buckets) == 2 and not any(b["reduced"] for b in bug.buckets)
    run = CliRunner().invoke(cli, ["reduce", bug.id, "--corpus", str(tmp_path / "c.db")])
    assert run.exit_code == 0, run.output
    assert "(1 of 2 not reduced yet)" in run.output and "(2 of 2" not in run.output, run.output
    assert sum(line.startswith("reduced ") for line in run.output.splitlines()) == 1  # one reduction ran
    assert "is the same bug, reduced by this case" in run.output
    assert all(corpus.bucket(b["id"])["reduced"] for b in bug.buckets)
