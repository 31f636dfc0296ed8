"""Discovery and fingerprints of the local drivers (tests/drivers/conftest.py parametrizes)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from fuzz.drivers import ProbeWarning, Target, UnknownDriver, discover, discovery, icd, select
from fuzz.drivers.discovery import ProbeError, run_probe
from fuzz.drivers.fingerprint import FP_FLAGS, fingerprint_id
from fuzz.drivers.listing import describe, table

from .conftest import skip_without_icd

skip_without_icd()
pytestmark = pytest.mark.drivers

FP_KEYS = {
    "platform_name", "platform_vendor", "platform_version", "device_name", "device_vendor",
    "device_version", "driver_version", "opencl_c_version", "profile", "device_type",
    "address_bits", "extensions", "fp64", "fp16", "int64", "single_fp_config",
    "double_fp_config", "half_fp_config", "image_support", "max_work_group_size",
    "max_compute_units", "global_mem_size", "local_mem_size", "max_mem_alloc_size", "icd_library",
}  # fmt: skip


def _installed() -> set[str]:
    return {lib.short for lib in icd.find_libraries()}


def _by_name(name: str) -> Target:
    found = [t for t in discover() if t.family == name]
    if not found:
        pytest.skip(f"{name} is not installed here")
    return found[0]


def test_local_drivers_are_found():
    expected = {"pocl", "rusticl", "oclgrind"} & _installed()
    assert {t.family for t in discover()} >= expected


def test_clover_without_devices_is_skipped():
    assert all(t.family != "clover" for t in discover())


def test_fingerprint_fields():
    targets = discover()
    assert targets
    assert len({t.name for t in targets}) == len(targets)
    for t in targets:
        fp = t.fingerprint
        assert FP_KEYS <= fp.keys(), FP_KEYS - fp.keys()
        assert fp["extensions"] == sorted(fp["extensions"])
        for config in ("single_fp_config", "double_fp_config", "half_fp_config"):
            assert set(fp[config]) == {name for name, _ in FP_FLAGS}
        assert re.fullmatch(r"[0-9a-f]{12}", t.fingerprint_id)
        assert t.fingerprint_id == fingerprint_id(fp)
        assert fp["icd_library"] == icd.library_of(t.icd_folder)


def test_fingerprint_id_ignores_memory_sizes():
    fp = dict(discover()[0].fingerprint)
    before = fingerprint_id(fp)
    fp["global_mem_size"] += 1
    fp["icd_library"] = "/elsewhere/lib.so"
    assert fingerprint_id(fp) == before
    fp["driver_version"] += "+1"
    assert fingerprint_id(fp) != before


_DUMP = (
    "import json; from fuzz.drivers import discover; "
    "print(json.dumps([[t.name, t.fingerprint_id, t.fingerprint] for t in discover()]))"
)


def test_fingerprints_stable_in_fresh_processes():
    env = dict(os.environ, PYTHONPATH=icd.PROJECT_ROOT)
    runs = [
        json.loads(subprocess.run([sys.executable, "-c", _DUMP], env=env, check=True,
                                  capture_output=True, timeout=120).stdout)
        for _ in range(2)
    ]  # fmt: skip
    assert runs[0] == runs[1]
    assert [[t.name, t.fingerprint_id] for t in discover()] == [r[:2] for r in runs[0]]


def test_rusticl_has_no_float_denormals_nor_fp64():
    fp = _by_name("rusticl").fingerprint
    assert fp["single_fp_config"]["denorm"] is False
    assert fp["fp64"] is False
    assert not any(fp["double_fp_config"].values())


@pytest.mark.parametrize("name", ["pocl", "oclgrind"])
def test_fp64(name):
    fp = _by_name(name).fingerprint
    assert fp["fp64"] is True
    assert fp["double_fp_config"]["round_to_nearest"]


def _fake(name: str) -> Target:
    return Target(name, {}, "0" * 12, "/nowhere", 0, 0)


def test_select():
    targets = [_fake("pocl-1"), _fake("pocl-2"), _fake("rusticl")]
    assert select(targets, None) == targets
    assert select(targets, []) == targets
    assert select(targets, ["rusticl", "pocl-2"]) == [targets[1], targets[2]]
    assert select(targets, ["pocl"]) == targets[:2]


def test_select_unknown_name():
    targets = discover()
    with pytest.raises(UnknownDriver) as info:
        select(targets, ["no-such-driver"])
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert "\n" not in message
    assert "no-such-driver" in message
    assert all(t.name in message for t in targets)


def test_icd_folders_written_once(tmp_path, monkeypatch):
    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path))
    monkeypatch.setenv("CLFUZZ_EXTRA_ICDS", "/opt/x/libFooOpenCL.so.1")
    libraries = icd.find_libraries()
    folders = icd.icd_folders()
    assert [f.name for f in folders] == [lib.short for lib in libraries]
    assert "FooOpenCL".lower() in [f.name for f in folders][-1]
    stamps = {}
    for lib, folder in zip(libraries, folders):
        assert folder.parent == tmp_path / "icd"
        files = list(folder.iterdir())
        assert [f.name for f in files] == [f"{lib.short}.icd"]
        assert files[0].read_text() == lib.library + "\n"
        stamps[files[0]] = files[0].stat().st_mtime_ns
    icd.icd_folders()
    assert {f: f.stat().st_mtime_ns for f in stamps} == stamps


def test_env_for(tmp_path, monkeypatch):
    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path))
    monkeypatch.setenv("OCL_ICD_FILENAMES", "/usr/lib/libother.so")
    folder = tmp_path / "icd" / "x"
    env = icd.env_for(folder)
    assert env["OCL_ICD_VENDORS"] == str(folder)
    assert env["RUSTICL_ENABLE"] == "llvmpipe"
    assert env["PYOPENCL_NO_CACHE"] == "1"
    assert env["PYOPENCL_COMPILER_OUTPUT"] == "0"
    for var in ("MESA_SHADER_CACHE_DIR", "POCL_CACHE_DIR"):
        assert env[var].startswith(str(tmp_path))
    assert "OCL_ICD_FILENAMES" not in env


def test_library_that_does_not_load_is_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("CLFUZZ_STATE", str(tmp_path))
    fake = icd.icd_folder(icd.IcdLibrary("fake", str(tmp_path / "libfake.so"), "test"))
    monkeypatch.setattr(discovery, "icd_folders", lambda: [fake])
    with pytest.warns(ProbeWarning, match="libfake"):
        assert discovery._discover.__wrapped__(30.0) == ()  # bypass (and keep) the cache


def test_probe_timeout():
    with pytest.raises(ProbeError, match="timed out"):
        run_probe(discover()[0].icd_folder, timeout_s=0.01)


def test_describe_and_table():
    from rich.console import Console

    targets = discover()
    records = describe(targets)
    assert json.loads(json.dumps(records)) == records
    assert [r["name"] for r in records] == [t.name for t in targets]
    console = Console(record=True, width=250)
    console.print(table(targets))
    text = console.export_text()
    for t in targets:
        assert t.name in text and t.fingerprint_id in text
