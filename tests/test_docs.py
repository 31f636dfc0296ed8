"""The documentation: the MkDocs site under docs/ builds without a warning, README.md stays a
set-up and use page, and no page, module, test or configuration file cites an issue number or a
file outside the repository (the specification is cited by its name and section, e.g. "OpenCL C
3.0.19 §6.4.3.3", never by the number of a file it was read from, e.g. "004 §6.4.3.3")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

README_MAX_LINES = 250

PACKAGES = ("app", "audit", "bench", "campaign", "corpus", "fuzz", "lang", "oracles", "triage", "tests")

SCANNED = ("README.md", "docs/**/*.md", "tests/README.md", *(f"{package}/**/*.py" for package in PACKAGES),
           "pyproject.toml", "setup.sh", "mkdocs.yml", ".ci/run")
"""Globs (relative to the repository root) of the files whose text must carry no forbidden
reference: the documentation, the code, its tests and benchmarks, and the configuration."""

NOT_SCANNED = ("tests/test_docs.py",)
"""Files the scan skips: this one, whose patterns and examples are the forbidden references."""

DATA = {path: ('"PoCL issue 1"',) for path in ("tests/data/corpora/make_old_corpus.py", "tests/test_rekey.py",
                                                "tests/test_schema.py")}
"""Strings that are data, not citations, left out of a file's scan: the note a bucket of the committed
old corpora (tests/data/corpora/schema-N.sqlite) was marked with, and the tests that read it back."""

FORBIDDEN = (
    (re.compile(r"\bissues? #?\d+\b", re.IGNORECASE), "an issue number"),
    (re.compile(r"\(#\d+\)"), "an issue number"),
    (re.compile(r"(?<![\w/])(?<!color: )#\d+\b"), "an issue number"),  # a CSS colour (app/dashboard.py) aside
    (re.compile(r"DIGEST"), "the spec digest outside the repository"),
    (re.compile(r"shared/spec"), "the spec folder outside the repository"),
    (re.compile(r"DESIGN\.md"), "the design notes outside the repository"),
    (re.compile(r"(?<![\w.,:+-])00[0-4](?![\w.,:-])"), "a spec file's number instead of the spec's name"),
)
"""Forbidden references. The last one catches "004 §7.4", "004's", "(003)", "000/003" and "the
extracted 004", and lets numbers pass ("2,000", "1_000_000", "0x004", "m001_tables", "BLE001")."""


def scanned_files(globs: tuple[str, ...] = SCANNED) -> list[Path]:
    """Every file one of ``globs`` names, once, in a stable order, but :data:`NOT_SCANNED`."""
    skipped = {ROOT / p for p in NOT_SCANNED}
    return sorted({p for g in globs for p in ROOT.glob(g) if p.is_file() and p not in skipped})


def forbidden_in(text: str) -> list[tuple[int, str, str]]:
    """``(line number, what, match)`` for each forbidden reference in ``text``."""
    return [(number, what, m.group(0))
            for number, line in enumerate(text.splitlines(), 1)
            for pattern, what in FORBIDDEN
            for m in pattern.finditer(line)]


def forbidden_references(path: Path) -> list[str]:
    """``path:line: what: match`` for each forbidden reference in the file (its :data:`DATA` aside)."""
    name = path.relative_to(ROOT).as_posix()
    text = path.read_text(encoding="utf-8")
    for data in DATA.get(name, ()):
        text = text.replace(data, "")
    return [f"{name}:{n}: {what}: {match!r}" for n, what, match in forbidden_in(text)]


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
    assert {ROOT / p for p in ("pyproject.toml", "setup.sh", "mkdocs.yml", ".ci/run", "oracles/conversions.py",
                               "fuzz/emit/spirv/atomics.py", "tests/oracles/test_maths.py")} <= set(files)
    assert all(any(p.is_relative_to(ROOT / package) for p in files) for package in PACKAGES)
    assert ROOT / "tests" / "test_docs.py" not in files
    found = [f for p in files for f in forbidden_references(p)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text", ["see issue 25", "(issue 26)", "Issues #7 and 8", "fixed (#12)", "as in #25",
                                  "DIGEST §11.3", "shared/spec/004", "../shared/DESIGN.md", "(004 §7.4)", "004's note",
                                  "as 003 lists", "(003)", "000/003", "the extracted 004", "001 §cl_khr_int64"])
def test_the_scan_catches(text):
    assert forbidden_in(text)


@pytest.mark.parametrize("text", ["OpenCL C 3.0.19 §6.4.3.3", "Table 13", "[Triage](triage.md#buckets-per-bug)",
                                  "https://github.com/pocl/pocl/issues/1234", "# Results", "2,000 programs",
                                  "1_000_000", "0x004", "m001_tables", "# noqa: BLE001", "0.001", "color: #222;",
                                  "OpenCL SPIR-V environment §6.7.1"])
def test_the_scan_lets_citations_pass(text):
    assert not forbidden_in(text)
