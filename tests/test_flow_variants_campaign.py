"""Equivalence-modulo-inputs variants in flow campaigns (campaign.flow_variants): each drawn
program also runs as its variants, each stored and linked to its original before it runs, judged
on every lane by the interpreter's outcome for the variant; a variant's wrong lane is a wrong-code
row naming the variant kind, and the bucket's report shows the original's and the variant's
kernels and values (triage.flow_variant_report). A fake driver stands in for the device."""

from __future__ import annotations

import numpy as np

from campaign.execute import execute
from campaign.flow_variants import PER_PROGRAM, variants
from corpus.store import Corpus
from corpus.variants import variant_of, variants_of
from fuzz.drivers import Result
from fuzz.emit.opencl_flow import emit
from lang.flow import Assign, Bin, Const, Decl, FlowProgram, Input, Load, Loop, Output, Var
from lang.flow_rules import check
from lang.nodes import Fill
from tests.flow_fakes import FakeTarget as _Target
from triage.flow_variant_report import variant_section


def _program() -> FlowProgram:
    """``s = 7; s += in0[0]; s += 1`` for i = 0, 1 (a constant base: splittable; an integer input:
    dead and live variants): s = 7 + 2 * (in0[0] + 1) = 11 on both work-items."""
    s = Var("s", "uint")
    body = (Loop("for", "i", Const("uint", 0), Const("uint", 2), 3, 1, False,
                 (Assign("s", Bin("add", s, Load("in0", "uint", Const("uint", 0)), "uint")),
                  Assign("s", Bin("add", s, Const("uint", 1), "uint")))),)
    return FlowProgram((Input("in0", "uint", 2, Fill(0, values=(1, 2))),), (Output("o", "s", "uint"),),
                       (Decl("s", "uint", 7),), (), (), body, (2,), (1,))


class _Worker:
    """Right (11) on every lane, except that the split variant (its trip count kept in
    ``split0_n``) gets work-item 1 wrong (99); it records each kernel."""

    def __init__(self) -> None:
        self.kernels: list[str] = []

    def run(self, job):
        text = job.program.decode()
        self.kernels.append(text)
        wrong = "split0_n" in text
        return Result("ok", {"out": np.array([11, 99 if wrong else 11], np.uint32).tobytes()}, "", 0.01, 0.01)


def test_the_policy_gives_each_program_its_variants_every_time():
    p = _program()
    check(p)
    made = variants(p)
    assert [k for k, _ in made] in (["dead", "split"], ["live", "split"]) and len(made) == PER_PROGRAM
    assert [v.id for _, v in variants(p)] == [v.id for _, v in made]  # seeded by the program: every target alike
    for _, v in made:
        check(v)
        assert emit(v) != emit(p)


def test_variants_are_stored_linked_judged_and_reported_with_their_original(tmp_path):
    corpus = Corpus(tmp_path / "c.db")
    p = _program()
    corpus.add_program(p, "c")
    worker = _Worker()
    execute(p, _Target(), worker, corpus, campaign="c")
    made = dict(variants(p))
    assert len(worker.kernels) == 2 + len(made)  # two builds, then each variant
    assert {v["kind"]: v["program_id"] for v in variants_of(corpus, p.id)} == {k: v.id for k, v in made.items()}
    for kind, v in made.items():
        assert corpus.program(v.id) == v and variant_of(corpus, v.id) == {"original_id": p.id, "kind": kind}
    runs = {r["program_id"]: r for r in corpus.db["runs"].rows}
    assert all(runs[v.id]["judged"] == 2 and runs[v.id]["options"] == "" for v in made.values())
    # only the split variant (two loops) got work-item 1 wrong: one wrong-code row, its kind named
    (row,) = corpus.disagreements()
    assert (row["program_id"], row["kind"], row["work_item"]) == (made["split"].id, "wrong-code", 1)
    assert (row["expected_value"], row["actual_value"]) == ("11", "99")
    assert row["deviation_detail"] == f"built with default, EMI variant split of program {p.id[:12]}"
    # the report of the variant's bucket shows the original, which got the lane right on the target
    lanes = [{"output": "o", "item": 1, "expected": "11", "actual": "99"}]
    lines, files = variant_section(corpus, made["split"], "fake", lanes)
    assert files == {"original.cl": emit(p)}
    assert "| o | 1 | 11 | 99 | 11 |" in lines and p.id in lines[0]
    # and the original's report (were it a bucket) shows the variant that differs
    lines, files = variant_section(corpus, p, "fake", [{"output": "o", "item": 1, "expected": "11", "actual": "11"}])
    assert list(files) == ["variant-split.cl"] and "| o | 1 | 11 | 11 | 99 |" in lines
    # a lane both got alike shows no pair
    assert variant_section(corpus, p, "fake", [{"output": "o", "item": 0, "expected": "11", "actual": "11"}]) == ([], {})
