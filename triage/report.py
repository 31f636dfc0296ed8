"""A vendor-ready report of one bucket: a folder a driver engineer can act on without clfuzz.

``clfuzz report BUCKET -o DIR`` writes

- ``README.md``: a one-line summary, the driver's fingerprint, the build options (the kernel's,
  and those the bucket's runs recorded per front end, with any it was seen only under), the rule
  and its spec section, expected vs actual (bits and values) for each failing lane (a timeout:
  the time it was given, its re-run at ten times that, the other drivers' times), how often and
  since when;
- ``kernel.cl`` (OpenCL C path: a comment of the report's stating its build options, then the
  kernel as clfuzz emits it) or ``kernel.spv`` and ``kernel.spvasm`` (SPIR-V path);
- ``repro.py``: needs only pyopencl and numpy; builds the kernel exactly as clfuzz did (the
  SPIR-V path embeds the binary the driver's route loads, fuzz.drivers.routes), sets up the same
  buffers, images and samplers, runs it, prints expected vs actual and exits 1 while the bug is
  present (0 once fixed, 2 when it cannot run: no matching device).

The program is the bucket's reduced program when there is one (triage.reduce), else the program
it was seen in. Expected values are the oracle's, computed here from the program alone.
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from campaign.expectations import Expectations
from campaign.jobs import build_options, job_for
from corpus.buckets import LANE_KINDS, RESULT_KINDS, WRONG_CODE
from corpus.reads import bucket_rows, fingerprint_of, rows_in_bucket, rows_on_target
from corpus.run_facts import TIMEOUT
from corpus.store import Corpus, CorpusError
from fuzz.drivers import Job, Target, Worker
from fuzz.drivers.capabilities import ftz_for
from fuzz.drivers.discovery import lineage_of
from fuzz.drivers.protocol import BufferArg, ImageArg, SamplerArg
from fuzz.drivers.routes import PATH_OPENCL_C, chain_of, route_of
from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import disassemble
from lang.derive import twin
from lang.images import ADDRESSING, DIMS, FILTERS
from lang.ir import Literal, Load, Program, walk
from lang.layout import input_values, layout
from lang.types import format_value, scalar
from oracles import SEVERITIES, as_bits, by_id, rule, severity_of
from triage import slow
from triage.repro_script import repro_source
from triage.buglist import only_under, timeout_rule, undefined_of
from triage.reduce import sentence
from triage.route_check import translated_route_verdict

MAX_CHECKS = 64
ENVIRONMENT = {"rusticl": "RUSTICL_ENABLE=llvmpipe ",
               "oclgrind": "OCL_ICD_VENDORS=/path/to/folder-with-an-.icd-naming-liboclgrind-rt-icd.so "}
"""What a driver needs in the environment to show its device (as fuzz.drivers.icd sets it for a worker)."""


def case_of(corpus: Corpus, ref: str) -> dict[str, Any]:
    """Everything a report (and a regression file) is made of, from the corpus alone: the bucket,
    the program (reduced if possible), its rows on the bucket's target, the target's fingerprint."""
    bucket = corpus.bucket(ref)
    reductions = corpus.reductions(bucket["id"])
    if reductions:
        pid = reductions[-1]["reduced_id"]
        rows = rows_on_target(corpus, pid, bucket["target"])
    else:
        example = bucket_rows(corpus, bucket["id"])[0]
        pid = example["program_id"]
        rows = rows_in_bucket(corpus, pid, bucket["id"])
    if not rows:
        raise CorpusError(f"bucket {bucket['id']} has no disagreement to report")
    fingerprint = fingerprint_of(corpus, rows[0]["fingerprint_id"])
    return {"bucket": bucket, "program": corpus.program(pid), "rows": rows, "fingerprint": fingerprint,
            "reduced": bool(reductions), "why": (reductions[-1].get("why") or "") if reductions else "",
            "target": bucket["target"], "path": rows[0]["path"]}


def checks(program: Program, ftz: frozenset[str], rows: list[dict]) -> list[dict]:
    """The lanes a reproducer compares: every judged lane of the outputs the rows are in (the
    failing ones first), each with what the oracle allows (bits, any NaN, value intervals) on a
    device that may flush the denormals of the types in ``ftz``."""
    expectations = Expectations(program).get(ftz)
    regions = layout(program).outputs
    failing = [(r["buffer"], r["lane"]) for r in rows if r["buffer"] in regions and r["lane"] >= 0]
    lanes = failing + [(name, int(i)) for name in dict.fromkeys(b for b, _ in failing)
                       for i in np.flatnonzero(expectations[name].judged)]
    out = []
    for name, lane in list(dict.fromkeys(lanes))[:MAX_CHECKS]:
        exp = expectations[name]
        if not exp.judged[lane]:
            continue
        s = scalar(exp.scalar)
        allowed = sorted({int(a[lane]) for a in exp.allowed})
        ranges = [[format_value(int(as_bits(lo[lane:lane + 1])[0]), s.name),
                   format_value(int(as_bits(hi[lane:lane + 1])[0]), s.name),
                   float(lo[lane]) if s.is_float else int(lo[lane]),
                   float(hi[lane]) if s.is_float else int(hi[lane])]
                  for lo, hi in exp.ranges if lo[lane] <= hi[lane]]
        r = rule(int(exp.rule[lane]))
        out.append({"buffer": name, "lane": lane, "offset": regions[name].offset + lane * s.size,
                    "bits": s.bits_dtype.name, "value": s.dtype.name, "allowed": allowed,
                    "allowed_text": [format_value(a, s.name) for a in allowed], "any_nan": bool(exp.any_nan[lane]),
                    "ranges": ranges, "rule": f"{r.text} ({r.section})"})
    return out


def _job_data(job: Job) -> dict:
    args = []
    for a in job.args:
        kind = {BufferArg: "buffer", ImageArg: "image", SamplerArg: "sampler"}[type(a)]
        d = asdict(a)
        if d.get("data") is not None:
            d["data"] = base64.b64encode(d["data"]).decode()
        args.append({"arg": kind, **d})
    return {"kind": job.kind, "program": base64.b64encode(job.program).decode(), "options": job.options,
            "kernel": job.kernel, "args": args, "global_size": list(job.global_size),
            "local_size": list(job.local_size) if job.local_size else None}


def write_report(corpus: Corpus, ref: str, out_dir: str | Path, targets: list[Target] | None = None) -> Path:
    """Write the report folder of bucket ``ref`` (see the module docstring); returns the folder.
    On a translated SPIR-V route whose target is among ``targets`` (this machine's), the report
    also says whether clang's bitcode of the same kernel reproduces the bug (triage.route_check)."""
    case = case_of(corpus, ref)
    bucket, program, rows, fp = case["bucket"], case["program"], case["rows"], case["fingerprint"]
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    family, path = lineage_of(case["target"], fp), case["path"]
    files = []
    job = job_for(program, None, path, family, fp)
    if path == PATH_OPENCL_C:
        (folder / "kernel.cl").write_text(options_comment(job.options) + emit(program))
        files.append("kernel.cl")
    if path != PATH_OPENCL_C:
        module = spirv.emit(program)
        (folder / "kernel.spv").write_bytes(module)
        (folder / "kernel.spvasm").write_bytes(_disassemble(module))
        route = route_of(family, fp)
        files += ["kernel.spv", "kernel.spvasm"]
        if route.kind != "il":  # the il route's driver reads kernel.spv itself
            (folder / route.received).write_bytes(job.program)  # what the driver really received
            files.append(route.received)
    if bucket["signature"]["kind"] == WRONG_CODE:  # the straight-line twin the driver gets right
        files += _write_twin(folder, program, path)
    lanes = checks(program, ftz_for(fp), rows) if bucket["signature"]["kind"] in LANE_KINDS else []
    data = {"title": bucket["title"], "bucket": bucket["id"], "kind": bucket["signature"]["kind"],
            "platform": fp.get("platform_name", "").strip(), "device": fp.get("device_name", "").strip(),
            "job": _job_data(job), "checks": lanes}
    (folder / "repro.py").write_text(repro_source(data))
    (folder / "program.json").write_text(json.dumps(json.loads(program.to_json()), indent=1, sort_keys=True))
    whose = _whose_bug(case, targets) if path != PATH_OPENCL_C and bucket["signature"]["kind"] in LANE_KINDS else ""
    (folder / "README.md").write_text(_readme(case, files, lanes, family, path, whose))
    return folder


def options_comment(options: str) -> str:
    """The comment a report's ``kernel.cl`` begins with: the options it is built with (the report
    writes it; the emitter's kernel follows unchanged)."""
    return (f"/* Written by clfuzz's report: build this kernel with the clBuildProgram options "
            f"\"{options}\"{'' if options else ' (none)'}, as repro.py does. */\n")


def _rule_lines(bucket: dict, first: dict, undefined: list[dict]) -> list[str]:
    """The rule the bucket breaks, quoted with its section and severity; a wrong-code bucket's is
    ``shape.twin``, followed by the rule the lane's value breaks; a timeout's follows from whether
    its re-run at ten times the ceiling finished (triage.buglist.timeout_rule), not from its row."""
    sig, severity = bucket["signature"], None
    if sig["kind"] == TIMEOUT:
        broken = timeout_rule(bucket)
        first = {**first, "rule": broken.id, "rule_text": broken.text, "section": broken.section}
        severity = broken.severity
    lane = [f"> {first['rule_text']}", ">", f"> — {first['section']} (rule `{first['rule']}`)", ""]
    if sig["kind"] != WRONG_CODE:
        return [*lane, *_severity_lines(first["rule"], undefined, severity)]
    twin_rule = by_id(sig["rule"])
    return [f"> {twin_rule.text}", ">", f"> — {twin_rule.section} (rule `{twin_rule.id}`)", "",
            *_severity_lines(twin_rule.id, undefined), "The lane's value breaks:", "", *lane]


def _write_twin(folder: Path, program: Program, path: str) -> list[str]:
    """The wrong-code bucket's second program: the same statements without the shape (lang.derive.twin),
    which the driver computes right (triage.reduce.passes.shapes), as the kernel of the report's path."""
    other = twin(program)
    (folder / "twin.json").write_text(json.dumps(json.loads(other.to_json()), indent=1, sort_keys=True))
    if path == PATH_OPENCL_C:
        (folder / "twin.cl").write_text(emit(other))
        return ["twin.cl", "twin.json"]
    (folder / "twin.spvasm").write_bytes(_disassemble(spirv.emit(other)))
    return ["twin.spvasm", "twin.json"]


def _whose_bug(case: dict, targets: list[Target] | None) -> str:
    """triage.route_check's sentence for the case's target, if this machine has it."""
    target = next((t for t in targets or [] if t.name == case["target"]), None)
    if target is None:
        return f"not checked: {case['target']} is not on the machine that wrote this report"
    with Worker(target, timeout_s=120) as worker:
        return translated_route_verdict(case["program"], target, case["rows"][0], worker)


def readme(case: dict[str, Any], lanes: list[dict] | None = None) -> str:
    """The ``README.md`` text that :func:`write_report` writes for a case (:func:`case_of`),
    without writing anything; ``lanes``, the lanes its ``repro.py`` checks (:func:`checks`, a
    run of the oracle), are left out of the text when not given."""
    family, path = lineage_of(case["target"], case["fingerprint"]), case["path"]
    files = ["kernel.cl"] if path == PATH_OPENCL_C else ["kernel.spv", "kernel.spvasm"]
    return _readme(case, files, lanes or [], family, path, "")


def _disassemble(module: bytes) -> bytes:
    try:
        return disassemble(module)
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        return f"; spirv-dis failed: {e}\n".encode()


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp)) if stamp else "?"


def _inputs_text(inputs: dict) -> str:
    """A row's inputs as ``in3: 1.5, -0; literal long: -9223372036854775807``."""
    parts = []
    for name, v in inputs.items():
        if name == "literals":
            parts += [f"literal {lit['type']}: {', '.join(lit['values'])}" for lit in v]
        elif isinstance(v, dict) and "values" in v:
            parts.append(f"{name}: {', '.join(v['values'])}")
        else:
            parts.append(f"{name}: {v}")
    return "; ".join(parts)


def _image_lines(program: Program) -> list[str]:
    """What a kernel's images and samplers are: kind, channel order and type, size, the stored
    texels (all of them for a small image), and each sampler's settings."""
    if not program.images and not program.samplers:
        return []
    inputs = input_values(program)
    out = ["", "## Images and samplers", ""]
    for image in program.images:
        texels = inputs[image.name].reshape(image.texels, -1)
        shown = "; ".join("(" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in t.tolist()) + ")"
                          for t in texels[:16])
        more = f"; ... ({image.texels} texels)" if image.texels > 16 else ""
        out.append(f"- `{image.name}`: {DIMS[image.dim].c_type}, CL_{image.order} / CL_{image.channel}, size "
                   f"{' x '.join(map(str, image.shape))}; stored channels per texel (x fastest): {shown}{more}")
    for s in program.samplers:
        out.append(f"- `{s.name}`: normalized coordinates {'true' if s.normalized else 'false'}, "
                   f"{ADDRESSING[s.addressing][1]}, {FILTERS[s.filter][1]} ({s.scope})")
    return out


def operand_form(program: Program, buffer: str) -> str:
    """How the operands of the statement writing ``buffer`` reach the kernel: as literals (the
    compiler can fold the operation while building it) or loaded from input buffers (computed when
    the kernel runs); the two take different paths through a compiler, and the reducer keeps the
    form that shows the bug (triage.reduce, ``subexpressions``)."""
    leaves = [n for s in program.body if s.buffer == buffer for n in walk(s.value) if isinstance(n, (Literal, Load))]
    literals = sum(isinstance(n, Literal) for n in leaves)
    if not leaves:
        return ""
    if literals == len(leaves):
        return "written in the kernel as literals (the compiler may compute the result while building it)"
    if not literals:
        return "loaded from input buffers (computed when the kernel runs)"
    return f"{literals} written as literals, {len(leaves) - literals} loaded from input buffers"


def _severity_lines(rule_id: str, undefined: list[dict], severity: str | None = None) -> list[str]:
    """The severity of the broken rule (``severity`` where the bucket decides it), what it means,
    and for a recommendation the text that may still require it (oracles.rules); ``letter`` where
    the program is not a defined one, with what of it the spec leaves undefined or
    implementation-defined (triage.buglist.undefined_of)."""
    if undefined:
        return ["Severity: **letter**: the disagreement shows only in a program that is not a defined one "
                "(no program without the following, nor with its defined form where it has one, showed it): "
                + "; ".join(sentence(u) for u in undefined) + ".", ""]
    severity = severity or severity_of(rule_id)
    note = getattr(by_id(rule_id), "note", "")
    return [f"Severity: **{severity}**: {SEVERITIES[severity]}." + (f" {note}." if note else ""), ""]


def _options_lines(bucket: dict, options: str | None, path: str) -> list[str]:
    """The build options: this kernel's (what repro.py passes), those the bucket's runs recorded per
    front end (corpus.run_facts), and the options it was seen only under (triage.buglist.only_under)."""
    def front(p: str) -> str:
        return "OpenCL C" if p == PATH_OPENCL_C else "SPIR-V"

    lines = [f"- build options of this kernel ({front(path)}): " + (f"`{options}`" if options else "none")]
    lines += [f"- build options its runs recorded ({front(p)}): " + ", ".join(f"`{o}`" if o else "none" for o in seen)
              for p, seen in sorted((bucket.get("build_options_by_path") or {}).items())]
    only = only_under(bucket)
    return lines + ([f"- seen only with {' '.join(only)}: every run that showed it was built so"] if only else [])


def _readme(case: dict, files: list[str], lanes: list[dict], family: str, path: str, whose: str) -> str:
    bucket, program, rows, fp = case["bucket"], case["program"], case["rows"], case["fingerprint"]
    sig, first = bucket["signature"], rows[0]
    spelled = f"`{first['expression']}`" if first["expression"] else "the kernel"
    if sig["kind"] == WRONG_CODE:
        summary = (f"{fp.get('device_name', sig['driver'])} ({sig['driver']}, {path} path) computes {spelled} "
                   f"as {first['actual_value']} where OpenCL requires {first['expected_value']}, but only inside "
                   f"this kernel's structure ({sig['shape']}): the same statements without it "
                   f"({'twin.cl' if path == PATH_OPENCL_C else 'twin.spvasm'}) compute every lane right on this "
                   "driver. Wrong code: the compiler mis-handles the structure, not the built-in.")
    elif sig["kind"] in RESULT_KINDS:
        summary = (f"{fp.get('device_name', sig['driver'])} ({sig['driver']}, {path} path) computes {spelled} "
                   f"as {first['actual_value']} where OpenCL requires {first['expected_value']}.")
    else:
        summary = f"{fp.get('device_name', sig['driver'])} ({sig['driver']}, {path} path): a valid kernel fails: {sig['kind']}."
    if undefined_of(bucket):  # not a defined program: the severity lines say which operation
        summary += (" Only beside an operation whose result the specification leaves undefined or "
                    "implementation-defined.")
    route = (f"- route: {chain_of(family, path, fp.get('translator', ''), fp)}",)
    if path != PATH_OPENCL_C:
        made = route_of(family, fp).command()
        route += (f"- what the driver received: `{route_of(family, fp).received}`"
                  + (f", made by `{made}`" if made else " as it is (clCreateProgramWithIL)"),)
        if whose:
            route += (f"- whose bug: {whose}",)
    lines = [
        f"# {bucket['title']}", "", summary, "",
        "## Driver", "",
        *(f"- {k.replace('_', ' ')}: {fp[k]}" for k in ("platform_name", "platform_version", "device_name", "device_version",
                                                         "driver_version", "opencl_c_version") if fp.get(k)),
        f"- front end: {'OpenCL C source' if path == PATH_OPENCL_C else 'SPIR-V'}", *route,
        *_options_lines(bucket, build_options(program, path, family, fp), path), "",
        "## The rule", "",
        *_rule_lines(bucket, first, undefined_of(bucket)),
        "## Expected vs actual", "",
    ]
    if sig["kind"] in LANE_KINDS:
        lines += ["| output | lane | inputs | expected (bits) | expected (value) | actual (bits) | actual (value) |",
                  "|---|---|---|---|---|---|---|"]
        for r in rows[:8]:
            inputs = _inputs_text(json.loads(r["inputs"] or "{}"))
            lines.append(f"| {r['buffer']}[{r['work_item']}] | {r['lane']} | {inputs} | `{r['expected']}` "
                         f"| {r['expected_value']} | `{r['actual']}` | {r['actual_value']} |")
        lines += ["", f"All allowed results of the first lane: {', '.join(json.loads(first['allowed']))}."]
        form = operand_form(program, first["buffer"])
        if form:
            lines += ["", f"Operands: {form}."]
        if first.get("deviation"):
            lines += ["", f"What the wrong value is: {first['deviation']}"
                      + (f" ({first['deviation_detail']})." if first.get("deviation_detail") else ".")]
        lines += _image_lines(program)
    else:
        lines += [f"- expected: {first['expected_value']}", f"- actual: {sig['kind']}: {first['actual_value']}",
                  *([f"- time: {slow.text(bucket)}"] if sig["kind"] == TIMEOUT else [])]
    seen = (f"Seen in {bucket['rows']} lanes of {bucket['programs']} programs, first {_when(bucket['first_seen'])}, "
            f"last {_when(bucket['last_seen'])}; confirmed on a fresh process: {bucket['confirmation']}"
            + (f", shown again in {bucket['reproduced'].replace('/', ' of ')} re-runs." if bucket.get("reproduced") else "."))
    if bucket.get("versions"):
        seen += " Releases checked (`clfuzz versions`): " + ", ".join(f"{v} {w}" for v, w in bucket["versions"].items()) + "."
    lines += ["", "## How often", "", seen, "",
              "## Reproduce", "",
              f"Files: {', '.join(files)}, `repro.py` and `program.json` (clfuzz's program: `clfuzz replay program.json`).",
              f"The program was {'reduced by clfuzz to' if case['reduced'] else 'found as'} {len(program.body)} "
              f"statement(s) over {program.global_size} work-item(s)"
              + (f"; not further: {case['why']}." if case.get("why") else "."), "",
              "```sh", "pip install pyopencl numpy", f"{ENVIRONMENT.get(family, '')}python3 repro.py    "
              "# exit 1: bug present, 0: fixed", "```", "",
              f"`repro.py` picks the device named `{fp.get('device_name', '')}` of platform `{fp.get('platform_name', '')}` "
              "(`--device SUBSTRING` picks another). It checks "
              f"{len(lanes)} lanes against the values the specification allows." if lanes else
              "`repro.py` builds and runs the kernel and reports the failure.", ""]
    return "\n".join(lines)
