"""Bugs: the buckets of one driver that show one root cause, grouped by evidence.

A bucket (corpus.buckets) is a fine key that a CI baseline holds; a driver engineer reads bugs.
Two buckets are one bug only when evidence says so, and only between buckets of one driver whose
operations are siblings (lang.families: element types of one function, destinations of one
conversion, read functions of one image kind, a function's out-parameter, ``_r``, ``half_`` and
``native_`` forms, functions that share one implementation). The evidence, each recorded with
the cases that showed it:

- ``same-operand``: a wrong lane of each bucket with the same operands (as numbers: ``0.5f`` and
  ``0.5`` are one operand; of a lane-wise vector operation the lane's own component) and the
  same deviation class of the wrong value (oracles.deviation: a flushed value, a wrong signed
  zero, another layer's texel, ...); ``same-value`` where the wrong values are the same number
  too, of the same quantity (both the function's result or both its out-parameter: ``sincos``
  gives a sine and, through its pointer, a cosine);
- ``same-trigger``: two ``interaction`` buckets (triage.reduce: a statement wrong only beside
  others, each agreeing alone) that share a statement, or each a call with an out-parameter
  (lang.families.trigger), and whose wrong lanes read the same value; a bucket reduced to one
  such call whose own wrong lanes all read that value, on the same front ends only (Oclgrind's
  OpenCL C path leaves ``modf(x, &ip)``'s outputs at their initial +0 as it leaves the
  statements' beside such a call);
- ``same-failure``: build failures (or runtime errors) of one driver on the same front ends whose
  messages say that a symbol is missing and differ only in the symbol (:data:`MISSING_SYMBOL`:
  PoCL's SPIR-V path ``Cannot find symbol fmin_common in kernel library`` and ``... fmax_common
  ...``; Oclgrind's, at kernel creation, ``Undefined external function: fmin_common``): the driver
  says the cause itself, one kernel library without the built-ins its front end calls;
- ``same-width``: buckets of one driver whose reduced cases each fail only at one vector type,
  the same on the same front ends (triage.width: the same operands as scalars, one work-item a
  lane, are right): the type is what the driver mishandles, whichever function it carries;
- ``re-run`` and any other kind stored in table bug_evidence (a reduced case re-run as the
  sibling: triage.siblings).

Buckets joined by evidence, directly or through others, are one bug. Its id is ``bug-`` and the
hash of its founding bucket (the first seen), so it stays while later buckets join it and is
never mistaken for a bucket id (hex only). A bug's severity is its most severe bucket's, its
status the status that most needs a person among its buckets (corpus.buckets.STATUSES, in that
order: ``new`` first).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable

from corpus.bug_queries import lane_cases, pending_reasons, stored_evidence
from corpus.buckets import INTERACTION, STATUSES
from corpus.store import Corpus, CorpusError
from lang.families import OUT_PARAMETER, root, trigger
from lang.maths import FUNCTIONS
from lang.types import Type
from oracles import SEVERITIES
from triage.buglist import bug_list, deviation_text, options_text, reduced_text
from triage.width import KIND as WIDTH

MISSING_SYMBOL = re.compile(r"(Cannot find symbol|undefined (?:symbol|reference)(?: to)?:?|Undefined external function:)"
                            r"\s+`?([\w*.$]+)'?`?", re.I)
"""A driver's message that a symbol its program needs is missing (corpus.buckets.first_error's
first kind of failure line); group 2 is the symbol."""
WHOLE = frozenset({"read_image", *(n for n, f in FUNCTIONS.items() if f.group == "geometric")})
"""Operation families that are not lane-wise: each wrong lane's operands are every value read."""
PREFIX = "bug-"
"""What a bug id starts with; a bucket id is hex only."""


@dataclass
class Bug:
    """Buckets of one driver with one root cause (module docstring)."""

    id: str
    driver: str
    buckets: list[dict[str, Any]]  # bug-list entries (triage.buglist.bug_list), the lead first
    evidence: list[dict[str, Any]] = field(default_factory=list)

    @property
    def lead(self) -> dict[str, Any]:
        """The bucket that stands for the bug: the most severe, an interaction where the bug is one
        (its buckets beside the trigger are its victims), reduced, most seen (the report's)."""
        return self.buckets[0]


def number(text: str) -> str:
    """A value as :func:`lang.types.format_value` writes it, as an exact number in one spelling
    whatever its type (``0x1.8p+0 (1.5)`` and ``1.5`` alike, ``-0`` kept apart from ``0``, every
    NaN one ``nan``); text that is no number comes back as it is."""
    t = text.strip().split(" (")[0].strip()
    low = t.lower()
    if "nan" in low:
        return "nan"
    if low in ("inf", "+inf", "-inf", "infinity", "-infinity"):
        return "-inf" if low.startswith("-") else "inf"
    try:
        value = Fraction(float.fromhex(t)) if "0x" in low and "p" in low else Fraction(int(t, 0) if "0x" in low else t)
    except (ValueError, ZeroDivisionError):
        return text.strip()
    if value == 0:
        return "-0" if t.startswith("-") else "0"
    return str(value)


def operands(case: dict[str, Any], lanewise: bool = True) -> tuple[str, ...]:
    """A wrong lane's operands as :func:`number`s, in the order its row lists them (fuzz.judge: the
    input buffers and literals as the expression reads them): of a ``lanewise`` operation (OpenCL C
    3.0.19 §6.3.2: component by component), of each operand as wide as the output the lane's own
    component; of any other operand (a scalar beside a vector), and of every operand of an
    operation that is not lane-wise (an image read's coordinate, a geometric function's vectors,
    §6.15.5, §6.15.15), every value."""
    width = Type.parse(case["out_type"]).width if case.get("out_type") and lanewise else 0
    component = case["lane"] % (4 if width == 3 else width) if width else -1
    found = json.loads(case["inputs"] or "{}")
    values = [x["values"] for name, v in found.items() for x in (v if name == "literals" else [v])
              if isinstance(x, dict) and "values" in x]
    out: list[str] = []
    for v in values:
        out += [number(v[component])] if width > 1 and len(v) == width else [number(x) for x in v]
    return tuple(out)


class _Groups:
    """Union-find over bucket ids, remembering the evidence of each union."""

    def __init__(self, ids: Iterable[str]):
        self.parent = {i: i for i in ids}
        self.evidence: list[dict[str, Any]] = []

    def find(self, i: str) -> str:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: str, b: str, evidence: dict[str, Any]) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.evidence.append(evidence)


def _case(c: dict[str, Any]) -> dict[str, Any]:
    """What evidence shows of a wrong lane: where, the expression, its operands and values."""
    return {"program": c["program_id"], "target": c["target"], "expression": c["expression"],
            "work_item": c["work_item"], "lane": c["lane"], "inputs": json.loads(c["inputs"] or "{}"),
            "expected": c["expected_value"], "actual": c["actual_value"], "deviation": c["deviation"]}


def _lane_evidence(groups: _Groups, buckets: dict[str, dict], cases: list[dict]) -> None:
    """``same-value`` and ``same-operand`` evidence between sibling buckets of one driver."""
    by_key: dict[tuple, dict[str, dict]] = {}  # (driver, root, operands) -> bucket -> case
    for c in cases:
        b = buckets.get(c["bucket"])
        if b is None or b["kind"] == INTERACTION:
            continue
        family = root(b["operation"])
        key = (b["driver"], family, operands(c, family not in WHOLE))
        c = {**c, "role": b["operation"].endswith(OUT_PARAMETER)}
        by_key.setdefault(key, {}).setdefault(c["bucket"], c)
        same = by_key[key]  # the same quantity first: its evidence may be the same value
        for other, oc in sorted(same.items(), key=lambda kv: kv[1]["role"] != c["role"]):
            if other == c["bucket"] or groups.find(other) == groups.find(c["bucket"]):
                continue
            if not oc["deviation"] or oc["deviation"] != c["deviation"]:
                continue
            same_value = oc["role"] == c["role"] and number(oc["actual_value"]) == number(c["actual_value"])
            kind = "same-value" if same_value else "same-operand"
            groups.join(other, c["bucket"], {"bucket": c["bucket"], "same_as": other, "kind": kind,
                                             "cases": [_case(oc), _case(c)]})


def _interaction_evidence(groups: _Groups, buckets: dict[str, dict], cases: list[dict]) -> None:
    """``same-trigger`` evidence between interaction buckets of one driver."""
    seen: dict[tuple[str, str, str], dict] = {}  # (driver, statement's operation, wrong value) -> first case
    for c in cases:
        b = buckets.get(c["bucket"])
        if b is None or b["kind"] != INTERACTION:
            continue
        for op in b["operation"].split(" + "):  # the statements of its smallest set (corpus.buckets)
            key = (b["driver"], trigger(op), number(c["actual_value"]))
            first = seen.setdefault(key, {**c, "operation": op})
            if first["bucket"] != c["bucket"] and groups.find(first["bucket"]) != groups.find(c["bucket"]):
                groups.join(first["bucket"], c["bucket"],
                            {"bucket": c["bucket"], "same_as": first["bucket"], "kind": "same-trigger",
                             "trigger": op, "cases": [_case(first), _case(c)]})


def _trigger_evidence(groups: _Groups, buckets: dict[str, dict], cases: list[dict]) -> None:
    """``same-trigger`` evidence between an interaction bucket with a call with an out-parameter
    (lang.families.trigger) and a bucket whose every wrong lane reads what the interaction's
    victims read, on exactly the interaction's front ends, whose bug so far (the evidence before
    this) was seen on no other front end, and that is either reduced to one such call (the
    trigger fails its own stores as it fails its neighbours') or not reduced yet with such a call
    in each of its programs (the victim's symptom, beside the trigger). A bucket whose bug shows
    on another front end too has a wrong value of its own (Oclgrind's ``fract(inf)`` on both
    paths) and is left apart."""
    victims: dict[tuple, dict] = {}  # (driver, wrong value, front ends) -> an interaction's case
    own: dict[str, list[dict]] = {}
    for c in cases:
        b = buckets.get(c["bucket"])
        if b is None:
            continue
        if b["kind"] == INTERACTION and any(trigger(op) == "out-parameter" for op in b["operation"].split(" + ")):
            victims.setdefault((b["driver"], number(c["actual_value"]), tuple(sorted(b["paths"]))), c)
        elif (trigger(b["operation"]) == "out-parameter" and (b.get("reduced") or {}).get("statements") == 1
              or b.get("reduced") is None and b["kind"] != INTERACTION):
            own.setdefault(b["id"], []).append(c)
    fronts: dict[str, set[str]] = {}
    for b in buckets.values():
        fronts.setdefault(groups.find(b["id"]), set()).update(b["paths"])
    for bucket, found in own.items():
        b = buckets[bucket]
        values = {number(c["actual_value"]) for c in found}
        paths = tuple(sorted(b["paths"]))
        unreduced = b.get("reduced") is None
        if unreduced and not all(c["out_call"] for c in found):
            continue
        first = victims.get((b["driver"], *values, paths)) if len(values) == 1 else None
        if first is None or fronts[groups.find(bucket)] != set(paths):
            continue
        if groups.find(first["bucket"]) != groups.find(bucket):
            groups.join(first["bucket"], bucket, {"bucket": bucket, "same_as": first["bucket"], "kind": "same-trigger",
                                                  "trigger": b["operation"], "cases": [_case(first), _case(found[0])]})


def _failure_evidence(groups: _Groups, buckets: dict[str, dict]) -> None:
    """``same-failure`` evidence between build failures (or runtime errors: Oclgrind misses a symbol
    when the kernel is created) of one driver and front ends that miss another symbol in the same
    message (:data:`MISSING_SYMBOL`)."""
    seen: dict[tuple, dict] = {}  # (driver, kind, paths, message without the symbol) -> first bucket
    for b in sorted(buckets.values(), key=lambda b: b["id"]):
        m = MISSING_SYMBOL.search(b["operation"]) if b["kind"] in ("build_error", "runtime_error") else None
        if m is None:
            continue
        key = (b["driver"], b["kind"], tuple(sorted(b["paths"])),
               b["operation"][:m.start(2)] + "*" + b["operation"][m.end(2):])
        first = seen.setdefault(key, {**b, "symbol": m.group(2)})
        if first["id"] != b["id"] and groups.find(first["id"]) != groups.find(b["id"]):
            groups.join(first["id"], b["id"], {"bucket": b["id"], "same_as": first["id"], "kind": "same-failure",
                                               "message": key[3], "symbols": [first["symbol"], m.group(2)]})


def _width_evidence(groups: _Groups, buckets: dict[str, dict], rows: list[dict]) -> None:
    """``same-width`` evidence between buckets each shown wrong only at the same vector type
    (triage.width) on one driver and the same front ends."""
    seen: dict[tuple, dict] = {}  # (driver, type, paths) -> the first bucket's record
    for r in rows:
        b = buckets.get(r["bucket"])
        if r["kind"] != WIDTH or b is None:
            continue
        detail = json.loads(r["detail"] or "{}")
        key = (b["driver"], detail.get("type"), tuple(sorted(b["paths"])))
        first = seen.setdefault(key, {**detail, "bucket": b["id"], "program": r["program_id"]})
        if first["bucket"] != b["id"] and groups.find(first["bucket"]) != groups.find(b["id"]):
            groups.join(first["bucket"], b["id"], {"bucket": b["id"], "same_as": first["bucket"], "kind": "same-width",
                                                   "type": key[1], "programs": [first["program"], r["program_id"]]})


def _stored(groups: _Groups, buckets: dict[str, dict], rows: list[dict]) -> None:
    """The evidence stored by re-runs (table bug_evidence), between buckets still listed."""
    for r in rows:
        if r["kind"] == WIDTH:  # about one bucket: joined by _width_evidence
            continue
        a, b = r["same_as"], r["bucket"]
        if a in buckets and b in buckets and buckets[a]["driver"] == buckets[b]["driver"]:
            groups.join(a, b, {"bucket": b, "same_as": a, "kind": r["kind"], "program": r["program_id"],
                               **json.loads(r["detail"] or "{}")})


def bug_id(founder: str) -> str:
    """The id of a bug founded by bucket ``founder`` (module docstring)."""
    return PREFIX + hashlib.sha256(founder.encode()).hexdigest()[:12]


def _lead_order(b: dict[str, Any]) -> tuple:
    order = list(SEVERITIES)
    reduced = b.get("reduced") or {}
    return (order.index(b["severity"]), b["kind"] != INTERACTION, not reduced, reduced.get("statements") or 0,
            -b["rows"], b["id"])


def group(entries: list[dict[str, Any]], cases: list[dict[str, Any]], stored: list[dict[str, Any]]) -> list[Bug]:
    """The bugs of bug-list ``entries`` (triage.buglist.bug_list) from the ``cases`` of their wrong
    lanes (corpus.bug_queries.lane_cases) and ``stored`` evidence (corpus.bug_queries.stored_evidence):
    ordered as :func:`order` says."""
    buckets = {b["id"]: b for b in entries}
    groups = _Groups(buckets)
    _stored(groups, buckets, stored)
    _lane_evidence(groups, buckets, cases)
    _interaction_evidence(groups, buckets, cases)
    _trigger_evidence(groups, buckets, cases)
    _failure_evidence(groups, buckets)
    _width_evidence(groups, buckets, stored)
    members: dict[str, list[dict]] = {}
    for b in entries:
        members.setdefault(groups.find(b["id"]), []).append(b)
    bugs = []
    for found in members.values():
        founder = min(found, key=lambda b: (b.get("first_seen") or 0, b["id"]))
        ids = {b["id"] for b in found}
        evidence = [e for e in groups.evidence if e["bucket"] in ids]
        bugs.append(Bug(bug_id(founder["id"]), founder["driver"], sorted(found, key=_lead_order), evidence))
    return order(bugs)


def order(bugs: list[Bug]) -> list[Bug]:
    """What most needs a person first: most severe, then new, then most rows."""
    severities = list(SEVERITIES)
    return sorted(bugs, key=lambda g: (severities.index(severity(g)), STATUSES.index(status(g)), -rows(g),
                                       g.id))


def severity(bug: Bug) -> str:
    """The most severe of its buckets' severities (oracles.SEVERITIES, most severe first)."""
    return min((b["severity"] for b in bug.buckets), key=list(SEVERITIES).index)


def status(bug: Bug) -> str:
    """The status among its buckets' that most needs a person (corpus.buckets.STATUSES order)."""
    return min((b["status"] for b in bug.buckets), key=STATUSES.index)


def rows(bug: Bug) -> int:
    """The disagreement rows of its buckets."""
    return sum(b["rows"] for b in bug.buckets)


def paths(bug: Bug) -> list[str]:
    """The front ends its buckets were seen on, sorted."""
    return sorted({p for b in bug.buckets for p in b["paths"]})


def urls(bug: Bug) -> list[str]:
    """Where the vendor's bug is, as its buckets record it (``clfuzz mark --url``), sorted."""
    return sorted({b["url"] for b in bug.buckets if b.get("url")})


def operations(bug: Bug) -> list[str]:
    """The operations of its buckets, sorted."""
    return sorted({b["operation"] for b in bug.buckets})


def types_of(bug: Bug) -> list[str]:
    """The element types of its buckets (triage.buglist.types_of), sorted."""
    return sorted({b["types"] for b in bug.buckets if b["types"]})


def title(bug: Bug) -> str:
    """One line naming the bug: its lead bucket's title; for a bug of several buckets, the family
    and what varies (types, operations), for interactions the statements they share, and for
    buckets each wrong only at one vector type (``same-width``) that type."""
    lead = bug.lead
    if len(bug.buckets) == 1:
        return lead["title"]
    ops, types = operations(bug), types_of(bug)
    deviations = sorted({b["deviation"] or b["kind"] for b in bug.buckets})
    if lead["kind"] == INTERACTION:
        seen = Counter(trigger(op) for b in bug.buckets for op in set(b["operation"].split(" + ")))
        most = max(seen.values())
        triggers = sorted(op for op, n in seen.items() if n == most)  # in every set, else in most of them
        return (f"{bug.driver}: a statement's result is wrong beside {' or '.join(_trigger_text(t) for t in triggers)} "
                f"(interaction, {len(bug.buckets)} buckets)")
    widths = {e.get("type") for e in bug.evidence if e["kind"] == "same-width"}
    if len(widths) == 1:  # buckets shown wrong only at that type (and their siblings)
        return (f"{bug.driver}: built-ins on {widths.pop()} wrong, right as scalars ({', '.join(ops)}; "
                f"{len(bug.buckets)} buckets)")
    return (f"{bug.driver}: {' / '.join(ops)} {' / '.join(types)}: {', '.join(deviations)} "
            f"({len(bug.buckets)} buckets)")


def _trigger_text(name: str) -> str:
    return "a call with an out-parameter" if name == "out-parameter" else name


def bugs_of(corpus: Corpus, entries: list[dict[str, Any]]) -> list[Bug]:
    """The bugs of bug-list ``entries`` of ``corpus`` (:func:`group` over its stored cases)."""
    return group(entries, lane_cases(corpus), stored_evidence(corpus))


def as_json(bug: Bug) -> dict[str, Any]:
    """A bug as ``clfuzz buckets --json`` lists it."""
    lead = bug.lead
    return {"id": bug.id, "driver": bug.driver, "title": title(bug), "severity": severity(bug), "status": status(bug),
            "buckets": [b["id"] for b in bug.buckets], "evidence": bug.evidence,
            "rows": rows(bug), "paths": paths(bug), "operations": operations(bug), "types": types_of(bug),
            "reduced": lead.get("reduced"), "lead": lead["id"], "urls": urls(bug)}


def listed(corpus: Corpus, campaign: str | None = None) -> tuple[list[Bug], list[dict[str, Any]]]:
    """The bugs of ``corpus`` (of the buckets ``campaign`` saw, if given) and their buckets as
    bug-list entries (triage.buglist.bug_list), each entry with the ``bug`` it belongs to and, if
    it is not reduced, why (``pending``: what the campaign that left it recorded, or empty)."""
    entries = bug_list(corpus.buckets(campaign))
    why = pending_reasons(corpus)
    for b in entries:
        b["pending"] = why.get(b["id"], "") if b["reduced"] is None else ""
    bugs = bugs_of(corpus, entries)
    for bug in bugs:
        for b in bug.buckets:
            b["bug"] = bug.id
    return bugs, entries


def find(corpus: Corpus, ref: str) -> Bug:
    """The bug whose id is ``ref`` or starts with it (``bug-`` and hex); raises
    corpus.store.CorpusError saying what to do when none or several match."""
    found = [b for b in listed(corpus)[0] if b.id.startswith(ref)]
    if not found:
        raise CorpusError(f"no bug {ref!r} in {corpus.path}; `clfuzz buckets --corpus {corpus.path}` lists them")
    if len(found) > 1:
        raise CorpusError(f"bug id prefix {ref!r} is ambiguous; give more characters")
    return found[0]


def resolve(corpus: Corpus, ref: str) -> list[str]:
    """The bucket ids ``ref`` names: a bug's (:func:`find`), else the one bucket whose id is
    ``ref`` or starts with it (corpus.store.Corpus.bucket)."""
    if ref.startswith(PREFIX):
        return [b["id"] for b in find(corpus, ref).buckets]
    return [corpus.bucket(ref)["id"]]


def markdown(bugs: list[Bug], limit: int = 60) -> str:
    """The bug list as a Markdown table (the campaign summary's first section): what most needs a
    person first, one line per bug, at most ``limit`` lines; the rule, its section and the build
    options are its lead bucket's."""
    buckets = sum(len(g.buckets) for g in bugs)
    lines = [f"## Bug list: {len(bugs)} bugs, {buckets} buckets (`clfuzz buckets`)", "",
             "| bug | status | severity | driver | paths | faulty operation | deviation | rule | build options "
             "| rows | buckets | reduced |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in bugs[:limit]:
        lead = g.lead
        what = " / ".join(operations(g)) + (" " + " / ".join(types_of(g)) if types_of(g) else "")
        deviation = ", ".join(sorted({deviation_text(b) for b in g.buckets}))
        lines.append(f"| {g.id} | {status(g)} | {severity(g)} | {g.driver} | {', '.join(paths(g))} "
                     f"| {what.replace('|', '/')} | {deviation} | {lead['rule']} ({lead['section']}) "
                     f"| {options_text(lead)} | {rows(g)} | {len(g.buckets)} | {reduced_text(lead)} |")
    if len(bugs) > limit:
        lines.append(f"| ... | {len(bugs) - limit} more | | | | | | | | | | |")
    return "\n".join(lines) + "\n"
