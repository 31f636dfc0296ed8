"""``clfuzz audit`` of flow programs (triage.flow_audit): a wrong-code bucket's row re-derived by
the host C build of its stored program (gcc, triage.flow_host), never by the interpreter: a wrong
lane is reproduced, a row whose actual value is the right one is not, and without gcc the bucket is
not audited; ``--json``'s ``kinds`` counts wrong-code buckets sampled, audited and reproduced."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from campaign.flow import FlowExpectations, verdict_of
from corpus.store import Corpus
from fuzz.strategies.flow import generate
from lang.flow import FlowProgram, regions
from lang.types import scalar
from oracles import flow_outcomes
from triage import flow_audit
from triage.audit import audit_corpus, report_json

KEYS = {"target": "fake", "fingerprint_id": "fp", "path": "opencl-c"}


def _out(p: FlowProgram, item: int, flip: int) -> bytes:
    """The ``out`` bytes of a run right on every lane but ``item`` of the first output (bits xor ``flip``)."""
    _, _, offsets, size = regions(p)
    buf = bytearray(size)
    for o in p.outputs:
        bits = flow_outcomes(p)[o.name].bits.copy()
        if o is p.outputs[0]:
            bits[item] ^= np.array(flip, bits.dtype)
        raw = bits.tobytes()
        buf[offsets[o.name]:offsets[o.name] + len(raw)] = raw
    return bytes(buf)


def _stored(corpus: Corpus, p: FlowProgram, rows: list[dict]) -> None:
    corpus.add_program(p)
    corpus.add_target("fake", "opencl-c", "fp", {"single_fp_config": {"denorm": True}})
    corpus.add_run({"program_id": p.id, **KEYS, "status": "ok", "checks": 1, "judged": 1, "mismatches": len(rows),
                    "options": p.options}, [{**r, "program_id": p.id, **KEYS} for r in rows])


@pytest.fixture(scope="module")
def program() -> FlowProgram:
    """A drawn program whose first output is an integer (its lanes compare by bits alone)."""
    return next(p for seed in range(20) if not scalar((p := generate(random.Random(seed))).outputs[0].type).is_float)


def test_a_wrong_lane_is_reproduced_and_a_right_one_is_not(program, tmp_path):
    corpus = Corpus(tmp_path / "c.db")
    wrong = verdict_of(program, FlowExpectations(program), _out(program, 1, 0x10), True).rows
    assert len(wrong) == 1 and wrong[0]["kind"] == "wrong-code" and wrong[0]["work_item"] == 1
    _stored(corpus, program, wrong)
    # the same program in the other build, its row stored with the right value as the actual one
    # and a wrong expectation: an oracle that was wrong (its lane is in another bucket: another build)
    other = replace(program, options="-cl-opt-disable")
    right = dict(wrong[0], actual=wrong[0]["expected"], expected=f"{int(wrong[0]['actual'], 16):#x}",
                 operation=wrong[0]["operation"] + " (other)")
    _stored(corpus, other, [right])
    result = audit_corpus(corpus)
    by_program = {f.row["program_id"]: f for f in result.findings}
    assert by_program[program.id].status == "reproduced" and by_program[program.id].kind == "wrong-code"
    assert by_program[other.id].status == "not reproduced"
    assert by_program[other.id].reason == "the independent evaluation gives the actual value"
    kinds = report_json(result)["kinds"]
    assert kinds["wrong-code"] == {"buckets": 2, "sampled": 2, "audited": 2, "reproduced": 1}
    out = CliRunner().invoke(cli, ["audit", "--corpus", str(tmp_path / "c.db"), "--json"])
    assert out.exit_code == 1 and json.loads(out.output)["kinds"]["wrong-code"]["reproduced"] == 1


def test_without_gcc_a_flow_bucket_is_not_audited(program, tmp_path, monkeypatch):
    corpus = Corpus(tmp_path / "c.db")
    _stored(corpus, program, verdict_of(program, FlowExpectations(program), _out(program, 0, 1), True).rows)
    monkeypatch.setattr(flow_audit.shutil, "which", lambda name: None)
    (finding,) = audit_corpus(corpus).findings
    assert (finding.status, finding.reason) == ("not audited", flow_audit.NO_GCC)
    assert report_json(audit_corpus(corpus))["kinds"]["wrong-code"] == {"buckets": 1, "sampled": 1, "audited": 0,
                                                                       "reproduced": 0}
