"""Whose bug on a translated route (triage.route_check): a PoCL bug that its OpenCL C path shows
too (corpus/regressions) is reproduced by clang's bitcode of the same kernel on PoCL's SPIR-V
route's device: the driver's bug. A route without translator, or a missing clang, is said."""

from __future__ import annotations

from campaign.execute import execute
from fuzz.drivers import Worker
from fuzz.drivers.routes import ROUTES, chain_of
from triage.regressions import FOLDER, load
from triage.route_check import clang_for, translated_route_verdict

from .conftest import skip_without_icd, target_named

skip_without_icd()

POCL_BUG = FOLDER / "53ed018103b390ec.json"  # known wrong on pocl and pocl/spirv


def test_routes_are_said_as_they_are():
    assert chain_of("pocl", "opencl-c").startswith("OpenCL C source")
    assert chain_of("pocl", "spirv", "llvm-spirv-15 15.0.0-2") == (
        "SPIR-V module -> llvm-spirv-15 15.0.0-2 -r -> LLVM bitcode (SPIR 1.2) -> PoCL clCreateProgramWithBinary "
        "(-x spir -spir-std=1.2)")
    assert "straight to the driver" in chain_of("rusticl", "spirv")
    assert ROUTES["pocl"].command() == "llvm-spirv-15 -r kernel.spv -o kernel.bc"


def test_a_driver_bug_reproduces_through_clangs_bitcode():
    case = load(POCL_BUG)
    assert {"pocl", "pocl/spirv"} <= case["known_wrong"].keys()
    target = target_named("pocl/spirv")
    assert clang_for("pocl") == "clang-15"
    with Worker(target, timeout_s=120) as worker:
        outcome = execute(case["program"], target, worker, None)
        assert outcome.verdict.rows, "the known PoCL bug no longer shows on pocl/spirv"
        sentence = translated_route_verdict(case["program"], target, outcome.verdict.rows[0], worker)
    assert sentence.endswith("the driver's bug, whatever made its bitcode"), sentence


def test_rusticl_has_no_translator():
    target = target_named("rusticl/spirv")
    with Worker(target, timeout_s=60) as worker:
        assert translated_route_verdict(load(POCL_BUG)["program"], target, {}, worker) == "not a translated route"


def test_the_fingerprint_states_the_route():
    chain = target_named("pocl/spirv").fingerprint["route_chain"]
    assert chain.startswith("SPIR-V module -> llvm-spirv-15 ") and chain.endswith("(-x spir -spir-std=1.2)")


def test_an_oclgrind_bug_reproduces_through_clang_14s_bitcode():
    case = load(FOLDER / "17ce28f5e43d7404.json")  # known wrong on oclgrind and oclgrind/spirv
    target = target_named("oclgrind/spirv")
    assert clang_for("oclgrind") == "clang-14"
    with Worker(target, timeout_s=120) as worker:
        rows = execute(case["program"], target, worker, None).verdict.rows
        assert rows, "the known Oclgrind bug no longer shows on oclgrind/spirv"
        sentence = translated_route_verdict(case["program"], target, rows[0], worker)
    assert sentence.endswith("the driver's bug, whatever made its bitcode"), sentence
