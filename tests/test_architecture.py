"""The architecture is enforced, not described (docs/architecture.md).

The import-linter contracts in pyproject.toml (layers, and the forbidden imports of the oracle,
the audit, the emitters, the store and the language, and SQL only in the store) must all be kept;
no module imports itself back through others (import-linter sees layers, not cycles, so the
module graph is checked here with its graph library, grimp); code outside the oracle imports it
through its face (``oracles/__init__.py``); no module imports a private name of another module;
no module is over 450 lines and no package holds more than a third of the code; the packages
``pip install .`` installs are the contracts' root packages.
"""

from __future__ import annotations

import ast
import graphlib
import re
import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = tuple(CONFIG["tool"]["importlinter"]["root_packages"])
MAX_LINES = 450
ORACLE_FACES = {"oracles", "oracles.conversions"}
"""What code outside the oracle may import of it: the face, and ``oracles.conversions`` (whose
``convert`` a checker outside the repository calls)."""


def test_import_contracts_are_kept(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    exit_code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    out = capsys.readouterr().out
    contracts = len(CONFIG["tool"]["importlinter"]["contracts"])
    assert exit_code == 0, out
    assert f"Contracts: {contracts} kept, 0 broken." in out


def test_installed_packages_are_the_contracts_root_packages():
    installed = {p.rstrip("*") for p in CONFIG["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert installed == set(PACKAGES)
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert on_disk == set(PACKAGES)


def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_no_module_imports_itself_back():
    graph = _graph()
    deps = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    try:
        tuple(graphlib.TopologicalSorter(deps).static_order())
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle: {' -> '.join(e.args[1])}")


def test_other_layers_import_the_oracle_through_its_face():
    graph = _graph()
    reach_in = {
        (m, o)
        for m in graph.modules if not (m == "oracles" or m.startswith("oracles."))
        for o in graph.find_modules_directly_imported_by(m)
        if (o == "oracles" or o.startswith("oracles.")) and o not in ORACLE_FACES
    }
    assert not reach_in, f"import the oracle from `oracles`, not its modules: {sorted(reach_in)}"


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            parts = p.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, node: ast.ImportFrom, path: Path) -> str:
    """The module an ``from X import ...`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_module_imports_a_private_name_of_another():
    """``from a import _x`` and ``a._x`` (``a`` a module of the project) reach into another
    module's privates; a package's private submodule (``from . import _proc``) is fine."""
    modules = _modules()
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        bound: set[str] = set()  # names bound to modules of the project
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(module, node, path)
                if source.split(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        bound.add(alias.asname or alias.name)
                    elif _private(alias.name):
                        found.append(f"{module}: from {source} import {alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in PACKAGES:
                        bound.add(alias.asname or alias.name.split(".")[0])
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in bound:
                    found.append(f"{module}: {ast.unparse(node)}")
    assert not found, "private names reached from another module:\n" + "\n".join(sorted(found))


def _sources() -> dict[Path, int]:
    return {p: len(p.read_text().splitlines()) for p in _modules().values()}


def test_modules_are_small():
    big = {str(p.relative_to(ROOT)): n for p, n in _sources().items() if n > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def test_no_package_holds_more_than_a_third():
    sizes = _sources()
    total = sum(sizes.values())
    for pkg in PACKAGES:
        share = sum(n for p, n in sizes.items() if p.relative_to(ROOT).parts[0] == pkg) / total
        assert share <= 1 / 3, f"{pkg}/ holds {share:.0%} of the code"
