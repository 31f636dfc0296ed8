"""An audit you can rerun: re-derive, for a sample of buckets, the expected value of one stored
disagreement with a computation that shares no code with the oracle, and list every verdict it
cannot reproduce (``clfuzz audit``).

The sample is deterministic: the buckets with a value verdict (kinds wrong-result,
imprecise-result and wrong-code; a build error, crash or timeout is not a value verdict: those buckets are
counted and skipped) are grouped by area and operation, the groups taken in turn (sorted by name,
each group's buckets by id) until the sample is full. Of each bucket the row with the least id is
audited: its program is loaded from the corpus, the statement that writes its buffer is evaluated
for its work-item by the audit's own evaluator (:mod:`audit.eval`: exact integers and
Fractions from OpenCL C 3.0.19 §6.3-§6.15, mpmath for the math built-ins, Table 17's definitions
for the geometric functions, a plain texel walk and LINEAR's hull for images), with the inputs the
row records, the float environment of its target (the floating types without CL_FP_DENORM may
flush, §7.2) and the build options its run recorded (the program's where it recorded none;
:mod:`audit.build`: the rules each option of the OpenCL 3.0 API §5.8.4 leaves standing), and the
lane the row names is compared:

* **reproduced**: the independent derivation rejects the actual value too, and allows the value
  the row expected (the same bits, or a value within the bound it derives);
* **NOT REPRODUCED**: it allows the actual value, or not the expected one, or finds the lane not
  specified at all (undefined, implementation-defined, voided by the build options, or a program
  the IR types otherwise than C does); both sides' values are printed;
* **not audited (reason)**: what the audit has no independent reference for (atomics, half
  precision math, a*b+c that -cl-mad-enable may contract, ...), never counted as reproduced.

A flow program's row (kind wrong-code, lang.flow) is re-derived by the program built for the
host as C (:mod:`triage.flow_audit`, gcc with ``-fsanitize=undefined``): reproduced where the
host's bits of the lane are the expected ones and not the actual ones; not audited without gcc.

Every timeout bucket is audited too, from its runs (:func:`audit_timeout`): no OpenCL
specification sets a time limit, so a run cut at the ceiling is slow (severity performance) and a
hang (a violation) only where a re-run given at least :data:`HANG_FACTOR` times the time the cut
run was given produced no result either; the bucket's ``hang`` verdict must be that one. A build
error or crash is not audited (no value to re-derive), and counted.
``--json`` gives the counts per bucket kind (buckets, sampled, audited, reproduced).

No module of ``oracles`` is imported here or by the audit's package, :mod:`audit` (its import-linter
contract ``audit-independent``, pyproject.toml).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from audit import NOT_AUDITED, Env, Evaluator, TooMany, Unsupported, bits_text, decode, is_float
from corpus.buckets import RESULT_KINDS, WRONG_CODE
from corpus.reads import bucket_rows, first_result_row, target_fingerprints
from corpus.run_facts import TIMEOUT
from corpus.store import Corpus, CorpusError
from lang.flow import FlowProgram
from lang.ir import Program, Store
from triage.flow_audit import audit_flow_row

VALUE_KINDS = (*RESULT_KINDS, WRONG_CODE)
"""The bucket kinds whose rows are value verdicts the audit re-derives."""
DEFAULT_SAMPLE = 50
HANG_FACTOR = 10.0
"""How many times the time a cut run was given its re-run must have had before its silence is a
hang (docs/triage.md, "Slow runs and hangs"); the audit's own reading, not triage.slow's constant."""


@dataclass
class Finding:
    """The audit of one bucket's row."""

    bucket: str
    row: dict
    status: str  # reproduced, not reproduced, not audited
    reason: str = ""
    independent: str = ""  # what the audit allows
    kind: str = ""  # the bucket's kind (wrong-result, imprecise-result)


@dataclass
class AuditResult:
    buckets: int = 0  # buckets in the corpus
    failures: int = 0  # buckets of build errors and crashes: not value verdicts
    findings: list[Finding] = field(default_factory=list)
    bucket_kinds: Counter = field(default_factory=Counter)  # every bucket's kind, sampled or not

    def with_status(self, status: str) -> list[Finding]:
        return [f for f in self.findings if f.status == status]

    @property
    def not_audited(self) -> Counter:
        return Counter(f.reason for f in self.with_status("not audited"))

    def kinds(self) -> dict[str, dict[str, int]]:
        """Per bucket kind: buckets in the corpus, sampled, audited and reproduced (a build error's
        or crash's is never sampled; every timeout bucket is)."""
        out = {}
        for kind in sorted(self.bucket_kinds):
            mine = [f for f in self.findings if f.kind == kind]
            out[kind] = {"buckets": self.bucket_kinds[kind], "sampled": len(mine),
                         "audited": sum(f.status != "not audited" for f in mine),
                         "reproduced": sum(f.status == "reproduced" for f in mine)}
        return out


def sample_buckets(every: list[dict], n: int) -> tuple[list[dict], int, int]:
    """Of a corpus's buckets (``every``, as corpus.store.Corpus.buckets lists them): (the sampled
    value-verdict buckets, buckets in all, build-error and crash buckets skipped)."""
    values = [b for b in every if b["signature"].get("kind") in VALUE_KINDS]
    timeouts = sum(b["signature"].get("kind") == TIMEOUT for b in every)
    groups: dict[tuple[str, str], list[dict]] = {}
    for b in sorted(values, key=lambda b: b["id"]):
        groups.setdefault((b["signature"].get("area", ""), b["signature"].get("operation", "")), []).append(b)
    order = [groups[k] for k in sorted(groups)]
    picked: list[dict] = []
    depth = 0
    while len(picked) < n and any(depth < len(g) for g in order):
        picked += [g[depth] for g in order if depth < len(g)][: n - len(picked)]
        depth += 1
    return picked, len(every), len(every) - len(values) - timeouts


def audit_corpus(corpus: Corpus, sample: int = DEFAULT_SAMPLE) -> AuditResult:
    every = corpus.buckets()
    buckets, total, failures = sample_buckets(every, sample)
    kinds = Counter(b["signature"].get("kind", "") for b in every)
    result = AuditResult(total, failures, bucket_kinds=kinds)
    fingerprints = {f: json.loads(text or "{}") for f, text in target_fingerprints(corpus).items()}
    hosts: dict[str, dict] = {}  # each flow program's host outputs (triage.flow_audit)
    for b in buckets:
        row = first_result_row(corpus, b["id"], VALUE_KINDS)
        if row is None:
            continue
        kind = b["signature"].get("kind", "")
        try:
            program = corpus.program(row["program_id"])
        except CorpusError as e:
            result.findings.append(Finding(b["id"], row, "not audited", f"program not loadable: {e}", kind=kind))
            continue
        if isinstance(program, FlowProgram):
            status, reason, independent = audit_flow_row(row, program, hosts)
            finding = Finding(b["id"], row, status, reason, independent)
        else:
            finding = audit_row(b["id"], row, program, fingerprints.get(row["fingerprint_id"], {}))
        finding.kind = kind
        result.findings.append(finding)
    for b in every:
        if b["signature"].get("kind") == TIMEOUT:
            rows = bucket_rows(corpus, b["id"])
            if rows:
                result.findings.append(audit_timeout(b, rows[0]))
    return result


def timeout_verdict(runs: list[dict]) -> bool | None:
    """A timeout bucket's hang verdict read from its runs' re-runs (``slow_runs``: the time each
    cut run was given, ``given_s``, and its re-run's ``limit_s`` and result): True where a re-run
    given at least HANG_FACTOR times as long gave no result, False where a re-run finished (and
    none is a hang), None where none was re-run."""
    verdict = None
    for run in runs:
        if run.get("limit_s") is None:
            continue
        given = float(run.get("given_s") or 0.0)
        silent = run.get("status") in (None, TIMEOUT)
        if silent and given and float(run["limit_s"]) >= HANG_FACTOR * given:
            return True
        if not silent:
            verdict = False
    return verdict


def audit_timeout(bucket: dict, row: dict) -> Finding:
    """Audit a timeout bucket (module docstring): its ``hang`` verdict against its runs'."""
    derived, claimed = timeout_verdict(bucket.get("slow_runs") or []), bucket.get("hang")
    said = {True: "a hang (violation)", False: "slow, finished when re-run (performance)",
            None: "slow, undecided (performance)"}
    if derived == claimed:
        return Finding(bucket["id"], row, "reproduced", "", said[derived], kind=TIMEOUT)
    return Finding(bucket["id"], row, "not reproduced", f"its runs say {said[derived]}, the bucket says "
                   f"{said.get(claimed, claimed)}", said[derived], kind=TIMEOUT)


def flush_set(fingerprint: dict) -> frozenset[str]:
    """The floating types whose denormals the device may flush: its FP config lacks CL_FP_DENORM
    (OpenCL C 3.0 §7.2)."""
    out = set()
    for name, key, present in (("half", "half_fp_config", fingerprint.get("fp16")),
                               ("float", "single_fp_config", True),
                               ("double", "double_fp_config", fingerprint.get("fp64"))):
        if present and not (fingerprint.get(key) or {}).get("denorm", False):
            out.add(name)
    return frozenset(out)


def audit_row(bucket: str, row: dict, program: Program, fingerprint: dict) -> Finding:
    """Re-derive the lane of one disagreement row independently and compare."""
    def skip(reason: str) -> Finding:
        return Finding(bucket, row, "not audited", reason)

    if program.area == "atomics" or program.shared or str(row["rule"]).startswith("atomic"):
        return skip("atomics: a verdict on the history of shared locations")
    stmt = next((s for s in program.body if row["buffer"] in (s.buffer, s.pointee)), None)
    if not isinstance(stmt, Store):
        return skip("the row's buffer is written by no statement")
    try:
        inputs = {name: [int(b, 16) for b in v["bits"]] for name, v in json.loads(row["inputs"]).items()
                  if isinstance(v, dict) and "bits" in v}
    except (ValueError, TypeError):
        return skip("the row's inputs are not readable")
    target_t = program.buffer(row["buffer"]).type
    item, lane_no = int(row["work_item"]), int(row["lane"]) - int(row["work_item"]) * target_t.mem_lanes
    if item < 0 or not 0 <= lane_no < target_t.mem_lanes:
        return skip("the row names no lane")
    ev = Evaluator(program, inputs, Env(flush_set(fingerprint)), item, row["path"] == "spirv", fingerprint,
                   row.get("build_options"))
    try:
        lane = ev.stored(stmt, row["buffer"])[lane_no]
    except (Unsupported, TooMany) as e:
        return skip(str(e))
    except Exception as e:  # an audit bug is shown, never counted as a verdict
        return skip(f"audit error: {type(e).__name__}: {e}")
    s = target_t.scalar
    actual, expected = int(row["actual"], 16), int(row["expected"], 16)
    independent = lane.text()
    if lane.undefined.startswith(NOT_AUDITED):
        return skip(lane.undefined[len(NOT_AUDITED):])
    if lane.undefined:
        return Finding(bucket, row, "not reproduced", f"the spec does not specify this lane: {lane.undefined}",
                       independent)
    if lane.allows(actual):
        return Finding(bucket, row, "not reproduced", "the independent derivation allows the actual value",
                       independent)
    if not (lane.allows(expected) or (is_float(s) and decode(expected, s).kind == "nan" and lane.nan)):
        return Finding(bucket, row, "not reproduced", "the expected values differ", independent)
    return Finding(bucket, row, "reproduced", "", independent)


def report_json(result: AuditResult) -> dict:
    """What ``clfuzz audit --json`` prints: the counts, per bucket kind too, every verdict not
    reproduced (its row's identity, both sides' values and why) and the reasons for not auditing."""
    return {
        "buckets": result.buckets, "skipped": result.failures, "sampled": len(result.findings),
        "audited": sum(f.status != "not audited" for f in result.findings),
        "reproduced": len(result.with_status("reproduced")),
        "not_reproduced": [{"bucket": f.bucket, "row": f.row["id"], "target": f.row["target"],
                            "operation": f.row["operation"], "rule": f.row["rule"],
                            "expected": f.row["expected_value"], "actual": f.row["actual_value"],
                            "independent": f.independent, "why": f.reason}
                           for f in result.with_status("not reproduced")],
        "not_audited": dict(sorted(result.not_audited.items(), key=lambda kv: (-kv[1], kv[0]))),
        "kinds": result.kinds(),
    }


def report_lines(result: AuditResult) -> list[str]:
    """What ``clfuzz audit`` prints: every verdict not reproduced, then the counts."""
    lines = []
    for f in result.with_status("not reproduced"):
        r = f.row
        s = r["dst_type"].rstrip("0123456789") if r["dst_type"] else ""
        lines += [
            f"NOT REPRODUCED  bucket {f.bucket}  {r['target']}  {r['operation']}  row {r['id']}",
            f"  program {r['program_id']}  buffer {r['buffer']}  work-item {r['work_item']}  lane {r['lane']}",
            f"  expression: {r['expression'][:300]}",
            f"  inputs: {r['inputs'][:300]}",
            f"  oracle:      expected {r['expected_value']}  (rule {r['rule']})",
            f"  independent: {f.independent}",
            f"  actual:      {r['actual_value']}" + (f"  ({bits_text(int(r['actual'], 16), s)})" if s in (
                "half", "float", "double") else ""),
            f"  why: {f.reason}",
        ]
    audited = [f for f in result.findings if f.status != "not audited"]
    lines.append(f"audit: {len(result.findings)} buckets sampled of {result.buckets} "
                 f"({result.failures} build-error/crash buckets skipped: not value verdicts)")
    lines.append(f"  audited {len(audited)}: reproduced {len(result.with_status('reproduced'))}, "
                 f"not reproduced {len(result.with_status('not reproduced'))}")
    lines.append(f"  not audited {len(result.with_status('not audited'))}"
                 + ("" if not result.not_audited else ":"))
    for reason, count in sorted(result.not_audited.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"    {count:4}  {reason}")
    return lines
