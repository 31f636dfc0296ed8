"""The ``README.md`` of a vendor report (triage.report): what a driver engineer reads first.

:func:`bucket_section` renders one bucket's case (triage.report.case_of) at a given heading level,
so that a report of several buckets (a bug and its variants) is made of the same sections;
:func:`readme_text` is a one-bucket report: its title, the section, and how to run ``repro.py``.
The text cites only the specification (a rule's section and sentence, and whether the
specification requires it or recommends it), never a file of clfuzz.
"""

from __future__ import annotations

import importlib.metadata
import json
import time
from typing import Any

from campaign.jobs import build_options
from corpus.buckets import INTERACTION, LANE_KINDS, RESULT_KINDS, WRONG_CODE
from corpus.run_facts import TIMEOUT
from fuzz.drivers.discovery import lineage_of
from fuzz.drivers.icd import OCLGRIND_LIBRARY
from fuzz.drivers.routes import PATH_OPENCL_C, route_of
from lang.images import ADDRESSING, DIMS, FILTERS
from lang.ir import Literal, Load, Program, walk
from lang.layout import input_values
from oracles import SEVERITIES, by_id, severity_of
from triage import slow
from triage.buglist import bucket_severity, only_under, route_seen, timeout_rule, undefined_of
from triage.reduce import sentence

STRENGTH = {
    "violation": "The specification requires this: it says shall or must (or states it as a definition).",
    "recommendation": "The specification recommends this: it says should, which by itself does not require it.",
    "tolerance": "The specification leaves this bound loose: the bound is clfuzz's reading of it, neither a shall "
                 "nor a should.",
    "letter": "This is the letter of the specification, from which hardware practice commonly departs.",
    "performance": "No rule of the specification applies: it sets no time limit.",
}
"""What a rule of each severity (oracles.SEVERITIES) is in the specification's words."""

SETUP = {
    "oclgrind": (["mkdir -p oclgrind-icd", f"echo {OCLGRIND_LIBRARY} > oclgrind-icd/oclgrind.icd"],
                 'OCL_ICD_VENDORS="$PWD/oclgrind-icd" ',
                 "Oclgrind installs no ICD file: the first two lines give the OpenCL loader a vendors folder "
                 f"naming its library (`{OCLGRIND_LIBRARY}` is where Debian's `oclgrind` package puts it)."),
    "rusticl": ([], "RUSTICL_ENABLE=llvmpipe ", "rusticl shows its devices only where `RUSTICL_ENABLE` names "
                                               "their driver (llvmpipe here)."),
}
"""What a driver needs before ``python3 repro.py`` shows its device (as fuzz.drivers.icd sets it for
a worker): commands to run once, the environment of the command, and why."""


def front_label(path: str) -> str:
    """A front end as people name it."""
    return "OpenCL C" if path == PATH_OPENCL_C else "SPIR-V"


def clfuzz_version() -> str:
    """The version ``clfuzz --version`` prints (the installed package's)."""
    try:
        return importlib.metadata.version("clfuzz")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (clfuzz not installed as a package)"


def readme_text(case: dict[str, Any], files: list[str]) -> str:
    """The ``README.md`` of a one-bucket report of ``case`` whose kernel files are ``files``."""
    bucket, fp = case["bucket"], case["fingerprint"]
    family = lineage_of(case["target"], fp)
    commands, env, why = SETUP.get(family, ([], "", ""))
    if family == "rusticl" and "llvmpipe" not in fp.get("device_name", ""):
        env, why = "RUSTICL_ENABLE=<its driver> ", "rusticl shows its devices only where `RUSTICL_ENABLE` names their driver."
    fronts = [f for f in case["fronts"] if f["shown"] not in ("absent", "cannot")]
    paths = " or ".join(f"`--path {f['path']}`" for f in fronts)
    lanes = max((f.get("checks", 0) for f in fronts), default=0)
    lines = [f"# {bucket['title']}", "", *bucket_section(case, 2), "## Reproduce", "",
             f"Files: {', '.join(dict.fromkeys(files))}, `repro.py` and `program.json` (clfuzz's program: "
             "`clfuzz replay program.json`).", "",
             "```sh", "pip install pyopencl numpy", *commands,
             f"{env}python3 repro.py    # exit 1: bug present (it says on which front end), 0: fixed on all, "
             "2: cannot tell", *([f"{env}python3 repro.py --path {fronts[-1]['path']}    # one front end"]
                                 if len(fronts) > 1 else []), "```", ""]
    if why:
        lines += [why, ""]
    lines += [f"`repro.py` runs the kernel of each front end ({', '.join(front_label(f['path']) for f in fronts)}; "
              f"{paths} picks one) on the device named `{fp.get('device_name', '').strip()}` of platform "
              f"`{fp.get('platform_name', '').strip()}` (`--device SUBSTRING` picks another)"
              + (f" and checks up to {lanes} lanes against the values the specification allows." if lanes else
                 " and reports the failure."), ""]
    return "\n".join(lines)


def bucket_section(case: dict[str, Any], level: int = 2) -> list[str]:
    """One bucket's part of a report, its headings at ``level``: the summary, status, driver,
    front ends, rule and severity, expected vs actual, the reduction, how often."""
    h = "#" * level
    bucket, fp = case["bucket"], case["fingerprint"]
    kind = bucket["signature"]["kind"]
    lines = [_summary(case), ""]
    if bucket["status"] != "new" or bucket.get("url"):
        lines += [f"{h} Status", "", f"- {bucket['status']}" + (f": {bucket['note']}" if bucket.get("note") else "")]
        lines += [f"- the vendor's bug: {bucket['url']}"] if bucket.get("url") else []
        lines.append("")
    lines += [f"{h} Driver", "", f"- fingerprint: `{case['fingerprint_id']}` (what the device reports, below)",
              *(f"- {k.replace('_', ' ')}: {fp[k]}" for k in ("platform_name", "platform_version", "device_name",
                                                               "device_version", "driver_version", "opencl_c_version",
                                                               "il_version") if fp.get(k)),
              f"- clfuzz version: {clfuzz_version()}", "",
              f"{h} Front ends", "", *_front_lines(case), "",
              f"{h} The rule", "", *_rule_lines(case), f"{h} Expected vs actual", ""]
    if kind in LANE_KINDS:
        lines += _value_lines(case)
    else:
        first = case["rows"][0]
        lines += [f"- expected: {first['expected_value']}", f"- actual: {kind}: {first['actual_value']}",
                  *([f"- time: {slow.text(bucket)}"] if kind == TIMEOUT else [])]
    lines += ["", f"{h} How the program was reduced", "", _reduction_text(case), "", f"{h} How often", "",
              _seen_text(bucket), ""]
    return lines


WANTS: dict[str, str] = {
    "violation": "OpenCL requires",
    "recommendation": "OpenCL recommends (a should)",
    "tolerance": "clfuzz's reading of a bound OpenCL leaves loose gives",
    "letter": "the letter of OpenCL requires",
    "performance": "OpenCL requires",
}
"""What the summary says of the expected value, by the bucket's severity (oracles.SEVERITIES)."""


def _summary(case: dict) -> str:
    bucket, fp, first = case["bucket"], case["fingerprint"], case["rows"][0]
    sig = bucket["signature"]
    fronts = " and ".join(front_label(f["path"]) for f in case["fronts"] if f["shown"] in ("stored", "run"))
    who = f"{fp.get('device_name', sig['driver']).strip()} ({sig['driver']}, {fronts or front_label(case['path'])})"
    spelled = f"`{first['expression']}`" if first["expression"] else "the kernel"
    wants = f"where {WANTS[bucket_severity(bucket)]} {first['expected_value']}"
    if sig["kind"] == WRONG_CODE:
        text = (f"{who} computes {spelled} as {first['actual_value']} {wants}, "
                f"but only inside this kernel's structure ({sig['shape']}): the same statements without it (twin.cl, "
                "twin.spvasm) compute every lane right on this driver. Wrong code: the compiler mis-handles the "
                "structure, not the built-in.")
    elif sig["kind"] in RESULT_KINDS:
        text = f"{who} computes {spelled} as {first['actual_value']} {wants}."
    elif sig["kind"] == INTERACTION:
        text = (f"{who} computes {spelled} as {first['actual_value']} {wants}, but only beside this kernel's other "
                f"statements ({len(case['program'].body)} in all): none of them shows a wrong value alone.")
    else:
        text = f"{who}: a valid kernel fails: {sig['kind']}."
    if undefined_of(bucket):
        text += " Only beside an operation whose result the specification leaves undefined or implementation-defined."
    return text


def _front_lines(case: dict) -> list[str]:
    """Each front end of the bucket: whether this program shows the bug there, the route, the
    build options (this kernel's, those the bucket's runs recorded, any it was seen only under)."""
    bucket, program = case["bucket"], case["program"]
    recorded = bucket.get("build_options_by_path") or {}
    lines = []
    for front in case["fronts"]:
        path, fp, target = front["path"], front["fingerprint"], front["target"]
        family = lineage_of(target, fp)
        shown = {"stored": f"this program fails there (clfuzz's run on `{target}`)",
                 "run": f"this program fails there (run on `{target}` when this report was written)",
                 "absent": f"this program does not show it there (run on `{target}` when this report was written; "
                           "the bug was seen there in other programs): no files for it",
                 "cannot": "the bug was seen there in other programs: no files for it"}.get(front["shown"], "")
        status = "; ".join(s for s in (shown, front["note"]) if s)
        options = build_options(program, path, family, fp)
        lines += [f"- **{front_label(path)}**: {status}", f"  - route: {route_seen(family, path, fp)}",
                  "  - build options of this kernel: " + (f"`{options}`" if options else "none")]
        if path in recorded:
            lines.append("  - build options its runs recorded: "
                         + ", ".join(f"`{o}`" if o else "none" for o in recorded[path]))
        route = route_of(family, fp) if path != PATH_OPENCL_C else None
        if route is not None:
            made = route.command()
            lines.append(f"  - what the driver received: `{route.received}`"
                         + (f", made by `{made}`" if made else " as it is (clCreateProgramWithIL)"))
        if front.get("whose"):
            lines.append(f"  - whose bug: {front['whose']}")
    only = only_under(bucket)
    return lines + ([f"- seen only with {' '.join(only)}: every run that showed it was built so"] if only else [])


def _cited(rule_id: str, row: dict | None = None) -> tuple[str, str, str]:
    """A rule's sentence, section and severity: the registered rule's (oracles.by_id), else as the
    row recorded them."""
    found = by_id(rule_id)
    if found is not None:
        return found.text, found.section, found.severity
    row = row or {}
    return row.get("rule_text", rule_id), row.get("section", ""), severity_of(rule_id)


def _quote(rule_id: str, text: str, section: str, severity: str, note: str = "") -> list[str]:
    """A rule quoted with its section, whether the specification requires or recommends it
    (:data:`STRENGTH`), its note, and the rule's id in clfuzz's bug list."""
    return [f"> {text}", ">", f"> — {section}", "",
            STRENGTH[severity] + (f" {note}." if note else "") + f" (clfuzz's rule id: `{rule_id}`)", ""]


def _rule_lines(case: dict) -> list[str]:
    """The rules the bucket's lanes break (each front end's may differ: a SPIR-V decoration, an
    OpenCL C sentence), quoted with section and strength; a wrong-code bucket's ``shape.twin``
    first; a timeout's follows from whether its re-run at ten times the ceiling finished
    (triage.buglist.timeout_rule). Then the bucket's severity as the bug list gives it
    (triage.buglist.bucket_severity), with what the spec leaves undefined where that decides it."""
    bucket = case["bucket"]
    sig = bucket["signature"]
    lines = []
    if sig["kind"] == TIMEOUT:
        broken = timeout_rule(bucket)
        lines += _quote(broken.id, broken.text, broken.section, broken.severity)
    else:
        if sig["kind"] == WRONG_CODE:
            twin_rule = by_id(sig["rule"])
            lines += [*_quote(twin_rule.id, twin_rule.text, twin_rule.section, twin_rule.severity),
                      "The lane's value breaks:", ""]
        rows = {r["rule"]: r for f in case["fronts"] for r in f["rows"]}
        for rule_id, row in rows.items():
            text, section, severity = _cited(rule_id, row)
            lines += _quote(rule_id, text, section, severity, getattr(by_id(rule_id), "note", ""))
    severity = bucket_severity(bucket)
    lines.append(f"Severity: **{severity}**, as clfuzz's bug list gives it: {SEVERITIES[severity]}.")
    undefined = undefined_of(bucket)
    if undefined:
        lines.append("The disagreement shows only in a program that is not a defined one (no program without the "
                     "following, nor with its defined form where it has one, showed it): "
                     + "; ".join(sentence(u) for u in undefined) + ".")
    return [*lines, ""]


def _value_lines(case: dict) -> list[str]:
    """Expected vs actual of the failing lanes of each front end (the first eight of the case's,
    four of another's), the allowed results, how the operands reach the kernel, the deviation."""
    program, first = case["program"], case["rows"][0]
    lines = ["| front end | output | lane | inputs | expected (bits) | expected (value) | actual (bits) | actual (value) |",
             "|---|---|---|---|---|---|---|---|"]
    for i, front in enumerate(case["fronts"]):
        for r in front["rows"][:8 if i == 0 else 4]:
            inputs = inputs_text(json.loads(r.get("inputs") or "{}"))
            lines.append(f"| {front_label(front['path'])} | {r['buffer']}[{r['work_item']}] | {r['lane']} | {inputs} "
                         f"| `{r['expected']}` | {r['expected_value']} | `{r['actual']}` | {r['actual_value']} |")
    allowed = first["allowed"] if isinstance(first["allowed"], list) else json.loads(first["allowed"] or "[]")
    lines += ["", f"All allowed results of the first lane: {', '.join(allowed)}."]
    form = operand_form(program, first["buffer"])
    if form:
        lines += ["", f"Operands: {form}."]
    if first.get("deviation"):
        lines += ["", f"What the wrong value is: {first['deviation']}"
                  + (f" ({first['deviation_detail']})." if first.get("deviation_detail") else ".")]
    return lines + _image_lines(program)


def _reduction_text(case: dict) -> str:
    """How the program was reduced: from what size to what, on which target and front end, in how
    long, why not further; or why it is the program as found."""
    r, program, bucket = case["reduction"], case["program"], case["bucket"]
    if r is None:
        why = ("a flaky bucket is not reduced" if bucket["confirmation"] == "flaky" else
               "no reduction was run on this machine's drivers")
        return (f"Not reduced ({why}): this is the program clfuzz found, {len(program.body)} statement(s) over "
                f"{program.global_size} work-item(s).")
    before, after = r["before"], r["after"]
    where = "when this report was written (not stored in the corpus)" if not r["stored"] else "in triage"
    return (f"clfuzz reduced the program it was found in, {before.get('statements', '?')} statement(s) over "
            f"{before.get('work_items', '?')} work-item(s), to {after.get('statements', '?')} statement(s) over "
            f"{after.get('work_items', '?')} work-item(s) on `{r['target']}` ({front_label(r['path'])} front end) "
            f"{where}, in {r['seconds']:.1f} s and {r['candidates']} candidate programs: each smaller candidate was "
            "kept only where that target still showed the same disagreement"
            + (f"; not further: {r['why']}." if r.get("why") else "."))


def _seen_text(bucket: dict) -> str:
    seen = (f"Seen in {bucket['rows']} lanes of {bucket['programs']} programs, first {_when(bucket['first_seen'])}, "
            f"last {_when(bucket['last_seen'])}; confirmed on a fresh process: {bucket['confirmation']}"
            + (f", shown again in {bucket['reproduced'].replace('/', ' of ')} re-runs." if bucket.get("reproduced") else "."))
    if bucket.get("versions"):
        seen += " Releases checked (`clfuzz versions`): " + ", ".join(f"{v} {w}" for v, w in bucket["versions"].items()) + "."
    return seen


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp)) if stamp else "?"


def inputs_text(inputs: dict) -> str:
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
    out = ["", "Images and samplers:", ""]
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
