"""The architecture is enforced, not described (README "Architecture").

The import-linter contracts in pyproject.toml (layers, and the forbidden imports of the oracle,
the emitters, the store and the language) must all be kept; no module imports itself back
through others (import-linter sees layers, not cycles, so the module graph is checked here with
its graph library, grimp); no module is over 500 lines and no package holds more than a third
of the code.
"""

from __future__ import annotations

import graphlib
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "triage", "campaign", "fuzz", "oracles", "corpus", "lang")


def test_import_contracts_are_kept(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exit_code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    out = capsys.readouterr().out
    assert exit_code == 0, out
    assert "Contracts: 6 kept, 0 broken." in out


def test_no_module_imports_itself_back():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    deps = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    try:
        tuple(graphlib.TopologicalSorter(deps).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle: {' -> '.join(e.args[1])}")


def _sources() -> dict[Path, int]:
    return {p: len(p.read_text().splitlines()) for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def test_modules_are_small():
    big = {str(p.relative_to(ROOT)): n for p, n in _sources().items() if n > 500}
    assert not big, f"modules over 500 lines: {big}"


def test_no_package_holds_more_than_a_third():
    sizes = _sources()
    total = sum(sizes.values())
    for pkg in PACKAGES:
        share = sum(n for p, n in sizes.items() if p.relative_to(ROOT).parts[0] == pkg) / total
        assert share <= 1 / 3, f"{pkg}/ holds {share:.0%} of the code"
