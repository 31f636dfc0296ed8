"""The routes the bug list shows (triage.buglist) and the route whose bug triage.route_check
judges: each the route of the target a bucket's rows were seen on, from that target's stored
fingerprint, never the system driver's route taken for granted. Without any driver."""

from __future__ import annotations

from dataclasses import replace

import pytest

from corpus.store import Corpus
from fuzz.drivers import Target, discovery, routes
from fuzz.drivers.discovery import spirv_target
from triage import route_check
from triage.buglist import bug_list, route_seen

POCL_FP = {"platform_name": "Portable Computing Language", "driver_version": "3.1+debian"}
IL_FP = {**POCL_FP, "driver_version": "6.0+debian", "il_version": "SPIR-V_1.0 SPIR-V_1.2"}
ROW = {"program_id": "p", "buffer": "out0", "lane": 3, "work_item": 3, "kind": "wrong-result",
       "operation": "sinpi", "src_type": "float", "dst_type": "float", "rule": "math.sinpi.special",
       "deviation": "signed-zero", "actual_value": "1"}


def _target(name: str, fp: dict, release: str = "", path: str = "opencl-c") -> Target:
    """A target as discovery makes it (a SPIR-V path through discovery.spirv_target, which states
    its route in the fingerprint), with no device behind it."""
    base = Target(name, fp, f"{name}-id", "/icd", 0, 0, root=f"/r/{release}" if release else "", release=release)
    if path == "opencl-c":
        return base
    spirv = spirv_target(base)
    assert spirv is not None
    return spirv


def _seen(corpus: Corpus, target: Target, program_id: str = "p") -> None:
    """A run of ``target`` with one disagreement row, its target stored as a campaign stores it."""
    corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
    row = {**ROW, "program_id": program_id, "target": target.name, "fingerprint_id": target.fingerprint_id,
           "path": target.path}
    corpus.add_run({"program_id": program_id, "target": target.name, "fingerprint_id": target.fingerprint_id,
                    "path": target.path, "status": "ok", "checks": 1, "judged": 1, "mismatches": 1}, [row])


@pytest.fixture
def translated(monkeypatch) -> None:
    """The system PoCL's translated route, whether or not this machine has llvm-spirv-15."""
    monkeypatch.setattr(routes.shutil, "which", lambda exe: f"/usr/bin/{exe}")
    monkeypatch.setattr(discovery, "translator_version", lambda route: route.translator and f"{route.translator} 1.0-test")


def test_a_bucket_seen_on_a_release_il_path_shows_the_il_route(memory_corpus, translated):
    """One PoCL bucket seen on PoCL 3.1's OpenCL C path, its translated SPIR-V path and PoCL 6.0's
    ``il`` path: the bug list gives each target its own route, and the ``il`` route is among the
    bucket's routes (before: the translated route, from the system's lineage, for both SPIR-V rows)."""
    system, system_spirv = _target("pocl", POCL_FP), _target("pocl", POCL_FP, path="spirv")
    release_spirv = _target("pocl-6.0", IL_FP, "trixie", path="spirv")
    for i, t in enumerate((system, system_spirv, release_spirv)):
        _seen(memory_corpus, t, f"p{i}")
    [bucket] = memory_corpus.buckets()
    assert [(t["target"], t["path"]) for t in bucket["targets"]] == [
        ("pocl", "opencl-c"), ("pocl-6.0/spirv", "spirv"), ("pocl/spirv", "spirv")]
    [bug] = bug_list([bucket])
    by_target = {t["target"]: t["route"] for t in bug["targets"]}
    assert by_target["pocl"].startswith("OpenCL C source -> ")
    assert by_target["pocl-6.0/spirv"] == release_spirv.fingerprint["route_chain"]
    assert "straight to the driver" in by_target["pocl-6.0/spirv"] and "clCreateProgramWithIL" in by_target["pocl-6.0/spirv"]
    assert by_target["pocl/spirv"] == system_spirv.fingerprint["route_chain"]
    assert by_target["pocl/spirv"].startswith("SPIR-V module -> llvm-spirv-15 1.0-test -r -> LLVM bitcode")
    assert bug["routes"] == [by_target["pocl"], by_target["pocl-6.0/spirv"], by_target["pocl/spirv"]]
    assert all("fingerprint" not in t for t in bug["targets"])  # `clfuzz buckets --json` stays short


def test_a_bucket_seen_only_on_the_il_path_shows_no_translator(memory_corpus, translated):
    _seen(memory_corpus, _target("pocl-6.0", IL_FP, "trixie", path="spirv"))
    [bug] = bug_list(memory_corpus.buckets())
    assert len(bug["routes"]) == 1 and "llvm-spirv" not in bug["routes"][0]
    assert "straight to the driver" in bug["routes"][0]


def test_a_fingerprint_without_its_route_gets_the_route_its_device_reports(translated):
    """A corpus written before fingerprints stated their route: the route comes from the stored
    fingerprint's reports (its IL version), the OpenCL C path is the driver's compiler."""
    assert "clCreateProgramWithIL" in route_seen("pocl", "spirv", IL_FP)
    assert " -r -> LLVM bitcode" in route_seen("pocl", "spirv", POCL_FP)
    assert route_seen("pocl", "opencl-c", IL_FP).startswith("OpenCL C source")
    assert "its container" in route_seen("rusticl", "spirv", {"platform_name": "rusticl"})


def test_rows_from_an_older_caller_get_one_route_per_path():
    bucket = {"id": "b", "signature": {"driver": "pocl", "kind": "wrong-result"}, "paths": ["opencl-c", "spirv"],
              "status": "new", "rows": 1}
    [bug] = bug_list([bucket])
    assert [t["path"] for t in bug["targets"]] == ["opencl-c", "spirv"] and len(bug["routes"]) == 2


def test_route_check_takes_the_targets_own_route(translated):
    """triage.route_check judges the route of the target (Target.route), not its name's family's:
    a release's ``il`` path and a device of the system's lineage that reports SPIR-V IL have no
    translator; the system's PoCL SPIR-V path is translated, with the clang of its translator."""
    release = _target("pocl-6.0", IL_FP, "trixie", path="spirv")
    assert release.route.kind == "il"
    assert route_check.translated_route_verdict(None, release, {}, None) == "not a translated route"
    reports_il = replace(_target("pocl", POCL_FP, path="spirv"), fingerprint={**IL_FP, "path": "spirv"})
    assert reports_il.family == "pocl" and reports_il.route.kind == "il"
    assert route_check.translated_route_verdict(None, reports_il, {}, None) == "not a translated route"
    system = _target("pocl", POCL_FP, path="spirv")
    assert system.route.translator == "llvm-spirv-15"
    assert route_check.translated_route_verdict(None, _target("pocl", POCL_FP), {}, None) == "not a translated route"


def test_clang_for_a_route_or_a_lineage(monkeypatch):
    monkeypatch.setattr(route_check.shutil, "which", lambda exe: f"/usr/bin/{exe}")
    assert route_check.clang_for(routes.ROUTES["pocl"]) == "clang-15"
    assert route_check.clang_for("oclgrind") == "clang-14"
    assert route_check.clang_for(routes.il_route("pocl")) is None and route_check.clang_for(None) is None
    monkeypatch.setattr(route_check.shutil, "which", lambda exe: None)
    assert route_check.clang_for(routes.ROUTES["pocl"]) is None


def test_a_math_bucket_cites_its_function_and_the_list_names_its_types(memory_corpus):
    """A math function's rules are keyed as one (math.sinpi): the bug list cites the function's
    declared section (§6.15.2 Table 14 with the §7.4 bounds and §7.5 special values), not nothing,
    and its line names the element types, so sinpi on float and on double read apart."""
    from triage.bugs import listed, markdown

    _seen(memory_corpus, _target("pocl", POCL_FP))
    bug = bug_list(memory_corpus.buckets())[0]
    assert bug["rule"] == "math.sinpi" and bug["section"] == "OpenCL C 3.0 §6.15.2 Table 14, §7.4, §7.5"
    assert bug["types"] == "float"
    line = markdown(listed(memory_corpus)[0]).splitlines()[-1]
    assert "| sinpi float |" in line and "(OpenCL C 3.0 §6.15.2 Table 14, §7.4, §7.5)" in line and "()" not in line


def test_a_failure_cites_the_valid_program_rule_section():
    """A build error, crash or hang breaks oracles.rules.FAILURE, which is not a registered rule: the
    bug list still cites its section (the summary showed 'valid-program ()')."""
    from oracles import FAILURE
    from triage.buglist import section_of

    assert section_of("valid-program") == FAILURE.section == "OpenCL C 3.0 §6 (the program is valid by construction)"


def test_a_spir_v_modules_failure_cites_the_spir_v_environment(memory_corpus, translated):
    """A valid SPIR-V module that fails to build breaks no OpenCL C rule: the driver was given a
    module that passed spirv-val for the OpenCL environment, which the OpenCL SPIR-V environment
    requires an implementation to consume (§2.1: "must support SPIR-V 1.0 modules"; §3.1: "must
    support SPIR-V 1.0 modules that declare the following capabilities"), through the OpenCL 3.0
    API's clCreateProgramWithIL (§5.8.1) and clBuildProgram (§5.8.4). Its row (fuzz.judge.failure_row
    on the SPIR-V path) and its bucket (seen only there) cite that rule, a violation; the same
    failure of OpenCL C source keeps the valid-program rule."""
    from fuzz.judge import failure_row
    from lang.ir import Buffer, Fill, Load, Program, Store
    from lang.types import Type
    from oracles import severity_of

    f = Type("float")
    program = Program((Buffer("a", f, "in", Fill(0)), Buffer("o", f, "out")), (Store("o", Load("a", f)),), 1,
                      area="expressions")
    for i, (target, rule) in enumerate([(_target("pocl", POCL_FP, path="spirv"), "valid-module"),
                                        (_target("pocl", POCL_FP), "valid-program")]):
        row = failure_row(program, "build_error", f"LLVM ERROR: failure {'AB'[i]}", target.path)
        assert row["rule"] == rule and severity_of(row["rule"]) == "violation"
        memory_corpus.add_target(target.name, target.path, target.fingerprint_id, target.fingerprint)
        memory_corpus.add_run({"program_id": f"p{i}", "target": target.name, "fingerprint_id": target.fingerprint_id,
                               "path": target.path, "status": "build_error", "checks": 0, "judged": 0,
                               "mismatches": 0},
                              [{**row, "program_id": f"p{i}", "target": target.name,
                                "fingerprint_id": target.fingerprint_id, "path": target.path}])
    bugs = {b["paths"][0]: b for b in bug_list(memory_corpus.buckets())}
    spirv, source = bugs["spirv"], bugs["opencl-c"]
    assert spirv["rule"] == "valid-module" and source["rule"] == "valid-program"
    for text in ("OpenCL SPIR-V environment §2.1", "§3.1", "§4", "OpenCL 3.0 API §5.8.1 clCreateProgramWithIL",
                 "§5.8.4 clBuildProgram", "must support"):
        assert text in spirv["section"]
    assert "OpenCL C 3.0 §6" not in spirv["section"] and source["section"].startswith("OpenCL C 3.0 §6")
