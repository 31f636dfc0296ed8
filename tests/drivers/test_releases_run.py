"""Other Debian releases' drivers, run inside their root filesystems (``clfuzz releases install``):
discovered with fingerprints, a worker started in each root, a program judged there by the oracle,
and a release-range verdict taken from that judgement. Skipped when no release is installed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app.cli import cli
from fuzz.drivers import Worker, discover, select
from fuzz.drivers.releases import installed
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type
from tests.drivers.conftest import skip_without_icd
from triage.observe import observe
from triage.versions import verdict

skip_without_icd()
if not installed():
    pytest.skip("no driver release installed (clfuzz releases install)", allow_module_level=True)

RELEASES = [t for t in discover(releases=True) if t.release]


def _program() -> Program:
    """add_sat and rotate over edge values of int and uchar4: defined for every input."""
    a, b = Type("int"), Type("uchar", 4)
    buffers = (Buffer("x", a, "in", Fill(3, (0, 1, 0xFFFFFFFF, 2**31 - 1, 2**31), 2)),
               Buffer("y", b, "in", Fill(4, (0, 1, 255, 128), 2)),
               Buffer("s", a, "out"), Buffer("r", b, "out"))
    body = (Store("s", Op("add_sat", (Load("x", a), Load("x", a)), a)),
            Store("r", Op("rotate", (Load("y", b), Load("y", b)), b)))
    return Program(buffers, body, 64)


def test_every_release_is_listed_with_its_fingerprint_and_routes():
    assert RELEASES, "a release is installed but none of its drivers was discovered (see clfuzz releases)"
    for t in RELEASES:
        assert t.root and t.fingerprint["release"] == t.release
        assert t.name.startswith(f"{t.lineage}-") and t.lineage in ("pocl", "rusticl")
        assert t.fingerprint["spirv_routes"]
        assert t in select(discover(), [t.name])  # added by select when named (with its SPIR-V path)
    assert not any(t.release for t in discover() + select(discover(releases=True), None))  # default: the system's


@pytest.mark.parametrize("release_target", RELEASES, ids=[t.name for t in RELEASES])
def test_a_program_is_judged_on_the_release(release_target):
    target = release_target
    program = _program()
    with Worker(target, timeout_s=120) as w:
        rows = observe(program, target, w)
    assert rows == [], rows[:2]
    row = {"buffer": "s", "lane": 0, "kind": "wrong-result", "actual_value": ""}
    assert verdict(row, rows)[0] == "absent"


def test_the_releases_command_lists_them():
    result = CliRunner().invoke(cli, ["releases", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == 1
    names = {t["name"] for r in doc["releases"] for t in r["targets"]}
    assert names == {t.name for t in RELEASES}
