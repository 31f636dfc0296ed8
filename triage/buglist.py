"""The bug list: each bucket as a driver engineer reads it, what needs a person first.

Beyond its corpus row (corpus.store.Corpus.buckets: rows, paths, driver versions, status,
reduced size), a bucket gets the severity of the rule its disagreements break
(oracles.rules.SEVERITIES, declared with each rule; a timeout's from whether it is a hang,
triage.slow; ``letter`` where its reduced program is not a defined one: triage.reduce's ``defined``
pass), the rule's section, the routes its rows took (fuzz.drivers.routes): per target its rows
were seen on, from the target's stored fingerprint, so a bucket seen on a release's ``il`` path
says ``clCreateProgramWithIL``, not the system driver's translated route; and the build options
its runs recorded, with the options it was seen only under (:func:`only_under`). ``clfuzz
buckets`` (and its ``--json``), the report, the dashboard and ``clfuzz ci`` read it.
"""

from __future__ import annotations

import json
from typing import Iterable

from corpus.buckets import INTERACTION, LANE_KINDS
from corpus.run_facts import TIMEOUT
from fuzz.drivers.routes import PATH_OPENCL_C, PATH_SPIRV, chain_of
from lang.maths import FUNCTIONS
from oracles import FAILURE, FAILURE_SPIRV, SEVERITIES, SLOW, Rule, by_id, failure_rule, severity_of
from triage import slow
from triage.reduce import composite_of


def bucket_severity(bucket: dict) -> str:
    """The severity of a bucket row of corpus.store.Corpus.buckets: its signature's rule's; a
    timeout's is performance until a re-run at ten times the ceiling did not finish (a hang:
    violation, :func:`timeout_rule`); ``letter`` where its reduced program shows a wrong value
    only with an operation whose result the spec leaves undefined or implementation-defined
    (:func:`undefined_of`). A crash, a build or runtime failure stays as severe with such an
    operation: the spec leaves its *value* open, not whether the program builds and runs."""
    if bucket["signature"]["kind"] == TIMEOUT:
        return timeout_rule(bucket).severity
    if undefined_of(bucket) and bucket["signature"]["kind"] in LANE_KINDS:
        return "letter"
    if bucket["signature"]["kind"] == INTERACTION:  # keyed without a rule: its rows' most severe
        return min((severity_of(r) for r in bucket.get("rules") or [""]), key=list(SEVERITIES).index)
    return severity_of(bucket["signature"].get("rule", ""))


def only_under(bucket: dict) -> list[str]:
    """The build options every run of ``bucket`` was built with that the program chose: the
    ``-cl-`` options (OpenCL 3.0 API §5.8.4) but ``-cl-std``, which clfuzz adds, common to
    every options string its runs recorded (``build_options``, corpus.run_facts); none when a run
    has no record (an older corpus) or none was recorded."""
    if bucket.get("options_unrecorded") or not bucket.get("build_options"):
        return []
    common = set.intersection(*(set(o.split()) for o in bucket["build_options"]))
    return sorted(w for w in common if w.startswith("-cl-") and not w.startswith("-cl-std="))


def options_text(bucket: dict) -> str:
    """The build options of a bucket's runs in one line: each distinct string (``none`` for an
    empty one), then "seen only with X" (:func:`only_under`); "not recorded" when none was."""
    if not bucket.get("build_options"):
        return "not recorded"
    seen = ", ".join(f"`{o}`" if o else "none" for o in bucket["build_options"])
    only = only_under(bucket)
    return seen + (f"; seen only with {' '.join(only)}" if only else "")


def undefined_of(bucket: dict) -> list[dict]:
    """What of a bucket's latest reduced program the spec leaves undefined or implementation-defined
    (triage.reduce.Reduction.undefined; triage.reduce.sentence says it): the disagreement did not
    show without it. Empty for a defined program, an unreduced bucket or an older reduction."""
    return (bucket.get("reduced") or {}).get("undefined") or []


def route_seen(lineage: str, path: str, fingerprint: dict) -> str:
    """How a program reached the target a row was seen on: its OpenCL C compiler, or the SPIR-V
    route its stored ``fingerprint`` states (``route_chain``, fuzz.drivers.discovery.spirv_target),
    else the route the device's reports give (fuzz.drivers.routes.route_of: a corpus written before
    fingerprints named their route)."""
    if path != PATH_OPENCL_C and fingerprint.get("route_chain"):
        return fingerprint["route_chain"]
    return chain_of(lineage, path, fingerprint.get("translator", ""), fingerprint)


def _targets(lineage: str, bucket: dict) -> list[dict]:
    """The bucket's ``targets`` (corpus.store.Corpus.buckets) without their fingerprints, each with
    its ``route``; a row without them (an older caller) gets one per path, from the lineage."""
    seen = bucket.get("targets") or [{"target": "", "path": p, "fingerprint": {}} for p in bucket["paths"]]
    return [{"target": t["target"], "path": t["path"], "route": route_seen(lineage, t["path"], t["fingerprint"])}
            for t in seen]


def failure_rule_of(bucket: dict) -> Rule:
    """The rule a failure bucket (build error, crash, hang) breaks: the SPIR-V environment's
    (oracles.rules.FAILURE_SPIRV) where every row of it ran a SPIR-V module, else OpenCL C's."""
    paths = set(bucket.get("paths") or ())
    return failure_rule(bool(paths) and paths <= {PATH_SPIRV})


def timeout_rule(bucket: dict) -> Rule:
    """The rule a timeout bucket is read under: its failure rule (:func:`failure_rule_of`) once a
    re-run at ten times the ceiling did not finish (a hang, triage.slow), else oracles.SLOW (slow,
    or undecided)."""
    return failure_rule_of(bucket) if bucket.get("hang") else SLOW


def section_of(rule: str) -> str:
    """Where the spec states a bucket's rule: the registered rule's section (a build error's,
    crash's or hang's: oracles.rules.FAILURE or FAILURE_SPIRV, and a slow run's: oracles.rules.SLOW,
    none of them registered), and for a math function's rules keyed as one
    (corpus.buckets.rule_family: ``math.tanpi``) the function's declared section (lang.maths), which
    covers its bound and its special values."""
    found = {FAILURE.id: FAILURE, FAILURE_SPIRV.id: FAILURE_SPIRV, SLOW.id: SLOW}.get(rule) or by_id(rule)
    if found:
        return found.section
    fn = rule.split(".")[1] if rule.startswith("math.") and rule.count(".") == 1 else ""
    return FUNCTIONS[fn].section if fn in FUNCTIONS else ""


def types_of(sig: dict) -> str:
    """A wrong value's element types as its signature keeps them (``float``, ``float -> signed
    integer``); nothing for a failure."""
    if "failure" in sig:
        return ""
    src, dst = sig.get("src_type", ""), sig.get("dst_type", "")
    return f"{src} -> {dst}" if src and src != dst else dst


def _without_driver(sig: dict) -> str:
    return json.dumps({k: v for k, v in sig.items() if k != "driver"}, sort_keys=True)


def bug_list(buckets: Iterable[dict]) -> list[dict]:
    """The buckets as bugs: each with ``driver``, ``operation`` (the failure's first error line
    for a build error, crash or timeout; for a statement reduced to nested operations none of which
    is wrong alone, all of them, outermost first: ``convert_T of convert_T_sat``,
    triage.reduce.composite_of), its element ``types``, ``kind``, ``deviation``, ``rule``
    and its ``section`` (:func:`section_of`),
    ``severity``, the ``targets`` its rows were seen on (``{"target", "path", "route"}``) and their
    distinct ``routes`` (:func:`route_seen`), ``build_options`` (corpus.run_facts) and
    ``only_under`` (:func:`only_under`), a timeout's ``hang`` (true, false: it finished, null:
    undecided) and ``slow`` (triage.slow.summary: the time given, the re-run, the other drivers'
    times; null for another kind), and the ``related`` buckets: those of other
    drivers that fail the same way (same signature but the driver; the local drivers share LLVM
    and, on their SPIR-V paths, the translator, so one upstream report may cover them); new ones
    first, then most severe, then most rows."""
    buckets = list(buckets)
    alike: dict[str, list[str]] = {}  # the signature without its driver -> bucket ids
    for b in buckets:
        alike.setdefault(_without_driver(b["signature"]), []).append(b["id"])
    out = []
    for b in buckets:
        sig = b["signature"]
        rule = (timeout_rule(b).id if sig["kind"] == TIMEOUT
                else " / ".join(b.get("rules") or []) if sig["kind"] == INTERACTION
                else sig.get("rule", failure_rule_of(b).id if "failure" in sig else ""))
        targets = _targets(sig["driver"], b)
        nested = (None if "failure" in sig  # a failure is named by its message, whatever statement showed it
                  else composite_of((b.get("reduced") or {}).get("why", "")))  # none wrong alone: name them all
        out.append({**b, "driver": sig["driver"], "operation": nested or sig.get("operation") or sig.get("failure", ""),
                    "types": types_of(sig), "kind": sig["kind"], "deviation": sig.get("deviation", ""), "rule": rule,
                    "section": "; ".join(dict.fromkeys(section_of(r) for r in rule.split(" / "))),
                    "severity": bucket_severity(b),
                    "targets": targets, "routes": list(dict.fromkeys(t["route"] for t in targets)),
                    "build_options": b.get("build_options", []), "only_under": only_under(b),
                    "hang": b.get("hang"), "slow": slow.summary(b),
                    "related": [i for i in alike[_without_driver(sig)] if i != b["id"]]})
    order = list(SEVERITIES)
    return sorted(out, key=lambda b: (b["status"] != "new", order.index(b["severity"]), -b["rows"]))


def size_text(reduced: dict | None) -> str:
    """A bucket's reduced size as the lists show it (``1 st / 1 wi``), or ``pending``."""
    return f"{reduced['statements']} st / {reduced['work_items']} wi" if reduced else "pending"


FLAKY = "not reduced: flaky, it did not show again on a fresh worker"
"""What the lists say of a bucket whose confirmation did not reproduce it (triage.confirm)."""


def reduced_text(bucket: dict) -> str:
    """A bug-list entry's reduced size, or ``pending`` with the reason its campaign recorded
    (``pending``: triage.bugs.listed), or that it is flaky (not reduced: :data:`FLAKY`)."""
    if not bucket["reduced"] and bucket.get("confirmation") == "flaky":
        return FLAKY
    return size_text(bucket["reduced"]) + (f": {bucket['pending']}" if not bucket["reduced"] and bucket.get("pending")
                                           else "")


def deviation_text(bucket: dict) -> str:
    """A bug-list entry's deviation class (its kind for a failure), and for a timeout what time it
    was given and what its re-run found (triage.slow.text)."""
    return (bucket["deviation"] or bucket["kind"]) + (f": {slow.text(bucket)}" if bucket["slow"] else "")
