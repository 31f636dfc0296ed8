"""Reports of the buckets of flow programs (lang.flow): the kernel, its two builds, every wrong lane
with the expected and the actual value of each build.

A flow program runs built with the default options and with ``-cl-opt-disable``
(campaign.flow.BUILDS), each a program of its own in the corpus. A bucket's report
(:func:`write_flow_report`, called by ``clfuzz report`` for such a bucket) writes

- ``kernel.cl``: a comment stating the bucket's build options, then the kernel as clfuzz emits it
  (fuzz.emit.opencl_flow);
- ``program.json``: the program (lang.flow's JSON form);
- ``repro.py`` (triage.repro_script): builds and runs the kernel as the bucket's build did and
  checks every lane of the outputs its rows are in against the interpreter's exact values;
- ``README.md``: the driver, the rule, that the program is defined (lang.flow_rules accepts it),
  and each wrong lane's expected value, its actual value in this build and in the other build
  (the corpus's: the other build's wrong value, the expected one where the other build ran and
  got the lane right, or that it did not run), so a difference between the two builds shows;
  and where the program is an equivalence-modulo-inputs variant or has variants
  (campaign.flow_variants) that got a lane otherwise on the target, both kernels and both values
  (triage.flow_variant_report).

A bucket reduced at the structure level (triage.flow_triage) shows its reduced kernel, with its
size before and after; one not reduced yet (:data:`NOT_REDUCED`) the program as found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from campaign.flow import RULES, FlowExpectations, build_name, builds, flow_job, verdict_of
from corpus.reads import bucket_rows, fingerprint_of, rows_on_target
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from fuzz.drivers.capabilities import ftz_for, runnable
from fuzz.drivers.discovery import lineage_of
from fuzz.drivers.routes import PATH_SPIRV
from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as spirv_module
from fuzz.emit.validate import disassemble
from fuzz.judge import failure_row
from lang.flow import FlowProgram, regions
from lang.flow_rules import check
from lang.ir import InvalidProgram
from lang.types import format_value, scalar
from oracles import flow_outcomes
from triage.flow_variant_report import variant_section
from triage.repro_script import MAX_CHECKS, job_data, repro_source

NOT_REDUCED = "not reduced yet (`clfuzz reduce BUCKET` reduces it at the structure level)"
"""What a flow bucket without a reduction says (triage.flow_triage reduces them)."""


def is_flow(corpus: Corpus, bucket: dict[str, Any]) -> bool:
    """Whether ``bucket``'s first row is of a flow program."""
    rows = bucket_rows(corpus, bucket["id"])
    return bool(rows) and isinstance(corpus.program(rows[0]["program_id"]), FlowProgram)


def observe_flow(p: FlowProgram, target: Target, worker: Worker) -> list[dict[str, Any]] | None:
    """triage.observe.observe of a flow program: run it (its build) on ``target`` and judge every
    lane: its wrong-code rows (a failure row for a build error, crash or timeout); None when the
    validator rejects it or the target does not take it."""
    try:
        check(p)
    except InvalidProgram:
        return None
    if runnable(target, p) is not p:
        return None
    result = worker.run(flow_job(p, target.path, target.lineage, target.fingerprint))
    found = (verdict_of(p, FlowExpectations(p), result.outputs["out"], "float" not in ftz_for(target.fingerprint)).rows
             if result.ok else [failure_row(p, result.status, result.log, target.path)])
    for r in found:
        r["target"] = target.name
    return found


def other_build(p: FlowProgram) -> FlowProgram:
    """``p`` with the other options of campaign.flow.BUILDS (campaign.flow.builds)."""
    return next(b for b in builds(p) if b.options != p.options)


def flow_lanes(corpus: Corpus, bucket: dict[str, Any]) -> tuple[FlowProgram, dict[str, Any], list[dict[str, Any]]]:
    """The bucket's program (its reduced case's, else its first row's build), that row, and each wrong lane of it on that
    row's target: ``output``, ``item``, ``expected``, ``actual`` and ``other`` (the other build's
    value of the lane: module docstring)."""
    rows = bucket_rows(corpus, bucket["id"])
    reduced = {r["reduced_id"] for r in corpus.reductions(bucket["id"])}  # its reduced cases' rows first
    first = min(rows, key=lambda r: r["program_id"] not in reduced)
    program = corpus.program(first["program_id"])
    other = other_build(program)
    theirs = {(r["buffer"], r["lane"]): r for r in rows_on_target(corpus, other.id, first["target"])
              if r["lane"] >= 0}
    ran = corpus.judged(other.id, first["target"])
    lanes = []
    for r in rows_on_target(corpus, program.id, first["target"]):
        if r["bucket"] != bucket["id"] or r["lane"] < 0:  # a crash or build error has no lane
            continue
        o = theirs.get((r["buffer"], r["lane"]))
        lanes.append({"output": r["buffer"], "item": r["work_item"], "expected": r["expected_value"],
                      "actual": r["actual_value"], "other": o["actual_value"] if o else
                      f"{r['expected_value']} (right)" if ran else "not run (or failed)"})
    return program, first, lanes


def flow_checks(p: FlowProgram, lanes: list[dict[str, Any]], keeps_denormals: bool) -> list[dict[str, Any]]:
    """The lanes ``repro.py`` compares (triage.repro_script's form): the wrong ones first, then every
    other judged lane of their outputs, each with its exact bits (any NaN for a NaN)."""
    expected = flow_outcomes(p)
    _, _, offsets, _ = regions(p)
    outputs = {o.name: o for o in p.outputs}
    wanted = [(x["output"], x["item"]) for x in lanes]
    wanted += [(name, i) for name in dict.fromkeys(n for n, _ in wanted) for i in range(p.work_items)]
    out = []
    for name, item in list(dict.fromkeys(wanted))[:MAX_CHECKS]:
        e, s = expected[name], scalar(outputs[name].type)
        if not keeps_denormals and e.flushable[item]:
            continue
        bits = int(e.bits[item])
        _, text, section = RULES["float" if s.is_float else "int"]
        out.append({"buffer": name, "lane": item, "offset": offsets[name] + item * s.size, "bits": s.bits_dtype.name,
                    "value": s.dtype.name, "allowed": [bits], "allowed_text": [format_value(bits, s.name)],
                    "any_nan": bool(np.asarray(e.nan)[item]), "ranges": [], "rule": f"{text} ({section})"})
    return out


def write_flow_report(corpus: Corpus, bucket: dict[str, Any], folder: Path) -> Path:
    """Write the report folder of a flow ``bucket`` into ``folder`` (module docstring)."""
    program, first, lanes = flow_lanes(corpus, bucket)
    fp = fingerprint_of(corpus, first["fingerprint_id"])
    keeps = "float" not in ftz_for(fp)
    job = flow_job(program, first["path"], lineage_of(first["target"], fp), fp)
    options = job.options
    if first["path"] == PATH_SPIRV:  # the module the failing path ran, beside the OpenCL C text
        (folder / "kernel.spvasm").write_bytes(disassemble(spirv_module(program)))
    (folder / "kernel.cl").write_text(f"/* Written by clfuzz's report: build this kernel with the clBuildProgram "
                                      f"options \"{options}\"{'' if options else ' (none)'}, as repro.py does. */\n"
                                      + emit(program))
    (folder / "program.json").write_text(json.dumps(json.loads(program.to_json()), indent=1, sort_keys=True))
    front = {"path": first["path"], "label": "SPIR-V" if first["path"] == PATH_SPIRV else "OpenCL C", "platform": fp.get("platform_name", "").strip(),
             "device": fp.get("device_name", "").strip(), "job": job_data(job),
             "checks": flow_checks(program, lanes, keeps) if lanes else []}
    kind = bucket["signature"]["kind"]
    (folder / "repro.py").write_text(repro_source({"title": bucket["title"], "bucket": bucket["id"], "kind": kind,
                                                   "fronts": [front], "timeout_s": 600.0}))
    reduction = next((r for r in reversed(corpus.reductions(bucket["id"])) if r["reduced_id"] == program.id), None)
    pairs, kernels = variant_section(corpus, program, first["target"], lanes)  # EMI: triage.flow_variant_report
    for name, text in kernels.items():
        (folder / name).write_text(text)
    (folder / "README.md").write_text(flow_readme(bucket, program, first, fp, lanes, reduction) + "\n".join(pairs))
    return folder


def reduced_text(reduction: dict[str, Any] | None) -> str:
    """What a flow report says of its kernel: reduced from what to what (a ``reductions`` row), or
    :data:`NOT_REDUCED`."""
    if reduction is None:
        return f"{NOT_REDUCED}: `kernel.cl` is the program as found"
    before, after = json.loads(reduction["size_before"]), json.loads(reduction["size_after"])
    said = ", ".join(f"{k.replace('_', ' ')} {before[k]} -> {after[k]}" for k in ("statements", "loops", "functions",
                                                                                   "work_items") if k in before)
    return (f"`kernel.cl` is the program reduced at the structure level ({said}; {reduction['candidates']} "
            f"candidates, each checked defined before it ran)" + (f"; not further: {reduction['why']}" if reduction["why"]
                                                                   else ""))


def flow_readme(bucket: dict[str, Any], program: FlowProgram, first: dict[str, Any], fp: dict[str, Any],
                lanes: list[dict[str, Any]], reduction: dict[str, Any] | None = None) -> str:
    """The README.md of a flow bucket's report (module docstring)."""
    check(program)  # raises for a program that breaks a rule: no report claims it defined
    this, that = build_name(program.options), build_name(other_build(program).options)
    out = [f"# {bucket['title']}", "",
           f"Bucket `{bucket['id']}`, program `{program.id}` ({len(emit(program).splitlines())} lines of OpenCL C), "
           f"seen on {first['target']} ({fp.get('device_name', '').strip()}, driver "
           f"{fp.get('driver_version', '').strip()}), built with `{program.options or '(no options)'}`.", "",
           f"The program is defined: clfuzz's validator (lang.flow_rules) accepts it; each output's value is the "
           f"exact interpreter's (oracles.flow). Rule: {first['rule_text']} ({first['section']}).", "",
           f"{reduced_text(reduction)}; launch: global size {list(program.global_size)}, "
           f"local size {list(program.local_size)}.", ""]
    if bucket.get("versions"):  # clfuzz versions BUCKET (triage.versions)
        out += ["Release range: " + ", ".join(f"{k} {v}" for k, v in bucket["versions"].items()) + ".", ""]
    if bucket["signature"]["kind"] != "wrong-code":
        out += [f"The run failed: {first['actual_value']}", ""]
    else:
        differ = sum(x["other"] != x["actual"] for x in lanes)
        out += [f"Wrong lanes ({len(lanes)} recorded; {differ} where the {that} build's value differs from this "
                f"build's):", "", f"| output | work-item | expected | actual ({this}) | actual ({that}) |",
                "|---|---|---|---|---|"]
        out += [f"| {x['output']} | {x['item']} | {x['expected']} | {x['actual']} | {x['other']} |" for x in lanes]
        out.append("")
    out += ["`repro.py` builds and runs `kernel.cl` as clfuzz did and exits 1 while a lane differs.", ""]
    return "\n".join(out)
