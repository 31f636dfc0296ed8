"""What a flow bucket's report (triage.flow_report) shows of equivalence-modulo-inputs variants
(campaign.flow_variants): where the bucket's program is a variant, its original; where it is an
original, its variants; each beside the bucket's program where the two got a lane the oracle fixes
differently on the bucket's target.

A variant computes what its original computes, bit for bit (fuzz.strategies.flow_emi: the same
outputs for these inputs, checked by the interpreter), so two different values of one lane on one
target are a bug whichever of them the oracle calls wrong: the section names both programs, writes
both kernels (``original.cl`` or ``variant-KIND.cl`` beside ``kernel.cl``) and lists the lane's
expected value and both actual values.
"""

from __future__ import annotations

from typing import Any

from corpus.reads import rows_on_target
from corpus.store import Corpus
from corpus.variants import variant_of, variants_of
from fuzz.emit.opencl_flow import emit
from lang.flow import FlowProgram


def counterparts(corpus: Corpus, program: FlowProgram) -> list[tuple[str, str, str]]:
    """(file name, role, program id) of each program the bucket's ``program`` is an EMI pair with:
    its original (role ``original``), or its variants (role ``variant KIND``)."""
    link = variant_of(corpus, program.id)
    if link:
        return [("original.cl", f"original of this {link['kind']} variant", link["original_id"])]
    return [(f"variant-{v['kind']}.cl", f"{v['kind']} variant", v["program_id"]) for v in variants_of(corpus, program.id)]


def lane_value(corpus: Corpus, program_id: str, target: str, output: str, item: int, expected: str) -> str | None:
    """The value program ``program_id`` got at ``output``'s work-item ``item`` on ``target``: its
    row's actual value, the expected one where it ran and the lane was right, None where it did not run."""
    row = next((r for r in rows_on_target(corpus, program_id, target) if r["buffer"] == output and r["work_item"] == item
                and r["kind"] == "wrong-code"), None)
    if row is not None:
        return row["actual_value"]
    return expected if corpus.judged(program_id, target) else None


def variant_section(corpus: Corpus, program: FlowProgram, target: str,
                    lanes: list[dict[str, Any]]) -> tuple[list[str], dict[str, str]]:
    """The README lines and the kernel files (name -> OpenCL C) of the EMI pairs of ``program`` that
    differ from it on a lane of ``lanes`` (triage.flow_report.flow_lanes) on ``target``."""
    lines: list[str] = []
    files: dict[str, str] = {}
    for name, role, pid in counterparts(corpus, program):
        differ = []
        for x in lanes:
            theirs = lane_value(corpus, pid, target, x["output"], x["item"], x["expected"])
            if theirs is not None and theirs != x["actual"]:
                differ.append((x, theirs))
        if not differ:
            continue
        files[name] = emit(corpus.program(pid))
        lines += [f"Equivalence modulo inputs: `{name}` is the {role} (program `{pid}`): it computes the same "
                  f"outputs for these inputs, and on {target} it got {len(differ)} of these lanes otherwise:", "",
                  f"| output | work-item | expected | actual (`kernel.cl`) | actual (`{name}`) |", "|---|---|---|---|---|"]
        lines += [f"| {x['output']} | {x['item']} | {x['expected']} | {x['actual']} | {theirs} |" for x, theirs in differ]
        lines.append("")
    return lines, files
