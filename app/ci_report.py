"""The report of a ``clfuzz ci`` run (app.ci): the JUnit XML as Jenkins and GitLab read it, and the
short summary the command prints."""

from __future__ import annotations

import platform
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from app.ci_cases import ERROR, FAILED, FIXED, GONE, PASSED, SKIPPED, SMOKE, SUITES, Case, CiResult

_INVALID_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(s: str) -> str:
    """``s`` without the characters XML 1.0 cannot hold (a driver's log may have them)."""
    return _INVALID_XML.sub("?", s)


def junit(result: CiResult) -> ET.Element:
    """The JUnit XML tree (the ``testsuites`` root) of ``result``: suites ``regressions`` and
    ``smoke-campaign``, counts and times as Jenkins and GitLab read them; a case that still shows a
    known bucket whose vendor bug was recorded (``clfuzz mark ID reported --url URL``) carries it as
    the property ``vendor_bug`` and in its system-out."""
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
        for c in result.suite(name):
            case = ET.SubElement(suite, "testcase", classname=_text(c.classname), name=_text(c.name),
                                 time=f"{c.time_s:.3f}")
            if c.url:  # the vendor's bug of the known bucket the case still shows
                ET.SubElement(ET.SubElement(case, "properties"), "property", name="vendor_bug", value=_text(c.url))
            if c.outcome in (FAILED, FIXED):
                el = ET.SubElement(case, "failure", message=_text(c.message), type=_failure_type(c))
                el.text = _text(c.details or c.message)
            elif c.outcome == ERROR:
                el = ET.SubElement(case, "error", message=_text(c.message), type="error")
                el.text = _text(c.details or c.message)
            elif c.outcome == SKIPPED:
                ET.SubElement(case, "skipped", message=_text(c.message))
            if c.out:
                ET.SubElement(case, "system-out").text = _text(c.out)
    return root


def _failure_type(c: Case) -> str:
    if c.outcome == FIXED:
        return "fixed"
    if c.suite == SMOKE:
        return "new-bucket"
    return "oracle-changed" if c.classname == "oracle" else "regression"


def write_junit(result: CiResult, path: str | Path) -> Path:
    """Write ``result`` as JUnit XML at ``path`` (folders created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tree = ET.ElementTree(junit(result))
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path


def summary(result: CiResult) -> list[str]:
    """A short human summary: counts per suite, one line per case that did not pass and per known
    bug a release no longer shows (``  FIXED in pocl 6.0 (present in pocl 3.1): pocl-6.0  CASE``),
    the verdict."""
    lines = []
    for name in SUITES:
        n = result.counts(name)
        if name == SMOKE and not n["tests"]:
            lines.append(f"{name}: not run (--minutes 0)")
            continue
        known = sum(1 for c in result.suite(name) if c.known)
        extra = (f", {known} of them known bugs still present" if known else "") + (
            f", {n[GONE]} known bugs fixed in a release" if n[GONE] else "")
        if name == SMOKE:
            extra = f", {result.programs} programs, {len(result.new_buckets)} new buckets"
        lines.append(f"{name}: {n['tests']} cases: {n[PASSED]} passed{extra}, {n[FAILED]} failed, {n[FIXED]} fixed, "
                     f"{n[ERROR]} errors, {n[SKIPPED]} skipped ({result.suite_s.get(name, 0.0):.0f} s)")
        for c in result.suite(name):
            if c.failing:
                lines.append(f"  {c.outcome.upper():6} {c.classname}  {c.name}: {c.message}")
            elif c.outcome == GONE:
                lines.append(f"  {c.message}: {c.classname}  {c.name}")
    if result.corpus and result.new_buckets:
        lines.append(f"smoke campaign corpus: {result.corpus}")
    lines.append("FAILED" if result.exit_code else "OK")
    return lines
