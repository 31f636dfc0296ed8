"""The documentation: the MkDocs site under docs/ builds without a warning, README.md stays a
set-up and use page, and no page cites an issue number or a file outside the repository (the
specification is cited by its name and section, e.g. "OpenCL C 3.0.19 §6.4.3.3")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

README_MAX_LINES = 250

SCANNED = ("README.md", "docs/**/*.md", "tests/README.md")
"""Globs (relative to the repository root) of the files whose text must carry no forbidden
reference; extend it to scan more (code, for one)."""

FORBIDDEN = (
    (re.compile(r"\bissues? #?\d+\b", re.IGNORECASE), "an issue number"),
    (re.compile(r"\(#\d+\)"), "an issue number"),
    (re.compile(r"(?<![\w/])#\d+\b"), "an issue number"),
    (re.compile(r"DIGEST"), "the spec digest outside the repository"),
    (re.compile(r"shared/spec"), "the spec folder outside the repository"),
    (re.compile(r"DESIGN\.md"), "the design notes outside the repository"),
)


def scanned_files(globs: tuple[str, ...] = SCANNED) -> list[Path]:
    """Every file one of ``globs`` names, once, in a stable order."""
    return sorted({p for g in globs for p in ROOT.glob(g) if p.is_file()})


def forbidden_in(text: str) -> list[tuple[int, str, str]]:
    """``(line number, what, match)`` for each forbidden reference in ``text``."""
    return [(number, what, m.group(0))
            for number, line in enumerate(text.splitlines(), 1)
            for pattern, what in FORBIDDEN
            for m in pattern.finditer(line)]


def forbidden_references(path: Path) -> list[str]:
    """``path:line: what: match`` for each forbidden reference in the file."""
    return [f"{path.relative_to(ROOT)}:{n}: {what}: {match!r}"
            for n, what, match in forbidden_in(path.read_text(encoding="utf-8"))]


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[dev]')")
    # not -q: it hides the warnings, and --strict then passes whatever they say
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert (tmp_path / "site" / "index.html").exists()


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move the rest to docs/"


def test_no_issue_numbers_or_outside_references():
    files = scanned_files()
    assert ROOT / "README.md" in files and ROOT / "tests" / "README.md" in files
    assert any(p.parent.name == "docs" for p in files)
    found = [f for p in files for f in forbidden_references(p)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text", ["see issue 25", "(issue 26)", "Issues #7 and 8", "fixed (#12)", "as in #25",
                                  "DIGEST §11.3", "shared/spec/004", "../shared/DESIGN.md"])
def test_the_scan_catches(text):
    assert forbidden_in(text)


@pytest.mark.parametrize("text", ["OpenCL C 3.0.19 §6.4.3.3", "Table 13", "[Triage](triage.md#buckets-per-bug)",
                                  "https://github.com/pocl/pocl/issues/1234", "# Results"])
def test_the_scan_lets_citations_pass(text):
    assert not forbidden_in(text)
