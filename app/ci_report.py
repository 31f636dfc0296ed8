"""The report of a ``clfuzz ci`` run (app.ci): the JUnit XML as Jenkins, GitLab and GitHub read it,
``results.csv`` (id, driver, status, seconds), the short summary the command prints, and the
merge of several shards' reports into one (``clfuzz ci-merge``).

Every JUnit test case also carries its ``id``, ``status`` and ``result`` (app.ci_cases) as
properties, and the smoke-campaign suite its campaigns and program count, so that a report read
back (:func:`read_junit`) is the run it was written from: the merge of shards is the union of
their cases (one case per suite, driver and id: where two shards' smoke campaigns hit the same
bucket on the same driver, the case whose status ranks first in :data:`MERGE_ORDER` stands, its
seconds the sum), and is written with the same writers as one run.
"""

from __future__ import annotations

import csv
import platform
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from app.ci_cases import (CRASH, EXPECTED_FAIL, FAIL, FLAKE, KNOWN_FLAKE, MISSING, PASS, SKIP, SMOKE, STATUSES,
                          SUITES, TIMEOUT, UNEXPECTED_PASS, WARN, Case, CiError, CiResult)

_INVALID_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
RESULTS_CSV, JUNIT_XML = "results.csv", "junit.xml"
MERGE_ORDER = (CRASH, TIMEOUT, FAIL, UNEXPECTED_PASS, MISSING, FLAKE, KNOWN_FLAKE, EXPECTED_FAIL, WARN, PASS,
               SKIP)
"""The status that stands when two shards judged the same case (a failing one first)."""


def _text(s: str) -> str:
    """``s`` without the characters XML 1.0 cannot hold (a driver's log may have them)."""
    return _INVALID_XML.sub("?", s)


def junit(result: CiResult) -> ET.Element:
    """The JUnit XML tree (the ``testsuites`` root) of ``result``: suites ``regressions`` and
    ``smoke-campaign``, counts and times as Jenkins and GitLab read them (Fail, Crash, Timeout and
    UnexpectedPass are failures, Missing an error, Skip skipped); a case that still shows a known
    bucket whose vendor bug was recorded (``clfuzz mark ID reported --url URL``) carries it as the
    property ``vendor_bug``."""
    total = result.counts()
    root = ET.Element("testsuites", name="clfuzz ci", tests=str(total["tests"]), failures=str(total["failures"]),
                      errors=str(total["errors"]), skipped=str(total["skipped"]),
                      time=f"{sum(result.suite_s.values()):.3f}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(result.started))
    for name in SUITES:
        n = result.counts(name)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(n["tests"]), failures=str(n["failures"]),
                              errors=str(n["errors"]), skipped=str(n["skipped"]),
                              time=f"{result.suite_s.get(name, 0.0):.3f}", timestamp=stamp,
                              hostname=platform.node() or "localhost")
        if name == SMOKE:
            _properties(suite, campaigns=",".join(result.campaigns), programs=str(result.programs))
        for c in result.suite(name):
            case = ET.SubElement(suite, "testcase", classname=_text(c.driver), name=_text(c.name),
                                 time=f"{c.time_s:.3f}")
            _properties(case, id=c.id, status=c.status, result=c.result, vendor_bug=c.url, gone=c.gone)
            if c.status == MISSING:
                el = ET.SubElement(case, "error", message=_text(c.message), type=MISSING)
                el.text = _text(c.details or c.message)
            elif c.failing:
                el = ET.SubElement(case, "failure", message=_text(c.message), type=c.status)
                el.text = _text(c.details or c.message)
            elif c.status == SKIP:
                ET.SubElement(case, "skipped", message=_text(c.message))
            if c.out:
                ET.SubElement(case, "system-out").text = _text(c.out)
    return root


def _properties(element: ET.Element, **values: str) -> None:
    props = ET.SubElement(element, "properties")
    for key, value in values.items():
        if value:
            ET.SubElement(props, "property", name=key, value=_text(value))


def write_junit(result: CiResult, path: str | Path) -> Path:
    """Write ``result`` as JUnit XML at ``path`` (folders created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = ET.ElementTree(junit(result))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path


def write_results(result: CiResult, path: str | Path) -> Path:
    """Write ``results.csv``: a header, then ``id,driver,status,seconds`` per case (deqp-runner's
    status words, app.ci_cases.STATUSES); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(("id", "driver", "status", "seconds"))
        out.writerows((c.id, c.driver, c.status, f"{c.time_s:.3f}") for c in result.cases)
    return path


def read_junit(path: str | Path) -> CiResult:
    """The run a :func:`junit` report was written from; raises :class:`CiError` for a file that is
    not one (``clfuzz ci --output DIR`` writes ``DIR/junit.xml``)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise CiError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}: give the folder "
                      f"`clfuzz ci --output DIR` wrote") from None
    result = CiResult()
    for suite in root.iter("testsuite"):
        name = suite.get("name", "")
        result.suite_s[name] = float(suite.get("time") or 0)
        props = _read_properties(suite)
        result.campaigns += [c for c in props.get("campaigns", "").split(",") if c]
        result.programs += int(props.get("programs") or 0)
        for case in suite.iter("testcase"):
            p = _read_properties(case)
            if name not in SUITES or p.get("status") not in STATUSES or not p.get("id"):
                raise CiError(f"{path} is not a report of `clfuzz ci` (a test case without its id and status)")
            el = next((case.find(tag) for tag in ("failure", "error", "skipped") if case.find(tag) is not None), None)
            title = case.get("name", "")[len(p["id"]):].strip()
            result.cases.append(Case(name, case.get("classname", ""), p["id"], title, p["status"], p.get("result", ""),
                                     el.get("message", "") if el is not None else "",
                                     (el.text or "") if el is not None and el.tag != "skipped" else "",
                                     case.findtext("system-out") or "", float(case.get("time") or 0),
                                     p.get("vendor_bug", ""), p.get("gone", "")))
            if case.get("classname") not in ("oracle", "") and case.get("classname") not in result.targets:
                result.targets.append(case.get("classname"))
    return result


def _read_properties(element: ET.Element) -> dict[str, str]:
    props = element.find("properties")
    return {p.get("name", ""): p.get("value", "") for p in props.iter("property")} if props is not None else {}


def merge(results: list[CiResult]) -> CiResult:
    """The union of several shards' results (module docstring)."""
    merged = CiResult(started=min((r.started for r in results), default=time.time()))
    by_key: dict[tuple[str, str, str], Case] = {}
    for r in results:
        for name, seconds in r.suite_s.items():
            merged.suite_s[name] = merged.suite_s.get(name, 0.0) + seconds
        merged.campaigns += [c for c in r.campaigns if c not in merged.campaigns]
        merged.programs += r.programs
        merged.targets += [t for t in r.targets if t not in merged.targets]
        for c in r.cases:
            key = (c.suite, c.driver, c.id)
            if key not in by_key:
                by_key[key] = c
                merged.cases.append(c)
                continue
            kept = by_key[key]
            kept.time_s += c.time_s
            if MERGE_ORDER.index(c.status) < MERGE_ORDER.index(kept.status):
                c.time_s = kept.time_s
                merged.cases[merged.cases.index(kept)] = by_key[key] = c
    return merged


def summary(result: CiResult) -> list[str]:
    """A short human summary: counts per suite, one line per case that failed or was flaky and per
    known bug a release no longer shows (``  FIXED in pocl 6.0 (present in pocl 3.1): pocl-6.0  CASE``),
    the verdict."""
    lines = []
    for name in SUITES:
        cases = result.suite(name)
        if name == SMOKE and not cases:
            lines.append(f"{name}: not run (--minutes 0)")
            continue
        n = result.counts(name)
        counts = ", ".join(f"{n[s]} {s}" for s in STATUSES if n[s])
        head = (f"{name} {','.join(result.campaigns)}: {result.programs} programs, " if name == SMOKE
                else f"{name}: ")
        gone = sum(1 for c in cases if c.gone)
        lines.append(f"{head}{n['tests']} cases: {counts or 'none'}"
                     + (f" ({gone} known bugs fixed in a release)" if gone else "")
                     + f" ({result.suite_s.get(name, 0.0):.0f} s)")
        for c in cases:
            if c.failing:
                lines.append(f"  {c.status:14} {c.driver}  {c.name}: {c.message}")
            elif c.status == FLAKE:
                lines.append(f"  {c.status:14} {c.driver}  {c.name}: {c.out}")
            elif c.gone:
                lines.append(f"  {c.gone}: {c.driver}  {c.name}")
    if result.corpus and any(c.failing for c in result.suite(SMOKE)):
        lines.append(f"smoke campaign corpus: {result.corpus}")
    lines.append("FAILED" if result.exit_code else "OK")
    return lines


def write_outputs(result: CiResult, folder: str | Path) -> list[Path]:
    """``results.csv``, ``junit.xml`` and, when the run has a smoke corpus, ``bugs.txt`` (the bug
    list of its smoke campaign, or of the whole corpus for several, as ``clfuzz buckets`` prints
    it piped) in ``folder``."""
    from app.commands_triage import bug_list_text
    from corpus.store import Corpus

    folder = Path(folder)
    out = [write_results(result, folder / RESULTS_CSV), write_junit(result, folder / JUNIT_XML)]
    if result.corpus and Path(result.corpus).exists():
        corpus = Corpus(result.corpus, read_only=True)
        try:
            text = bug_list_text(corpus, result.campaigns[0] if len(result.campaigns) == 1 else None)
        finally:
            corpus.close()
        (folder / "bugs.txt").write_text(text)
        out.append(folder / "bugs.txt")
    return out
