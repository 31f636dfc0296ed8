"""The bug level above buckets (triage.bugs): buckets of one driver grouped into bugs by evidence
(the same operand showing the same deviation on sibling operations, lang.families), never by
name alone, never across drivers; known-distinct bugs kept apart. Without any driver: rows as a
campaign stores them, values worked by hand."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from app.cli import cli
from corpus.store import Corpus
from lang.families import root
from triage.bugs import PREFIX, bug_id, listed, number, resolve, title

FP = {"oclgrind": {"platform_name": "Oclgrind", "driver_version": "21.10"},
      "rusticl": {"platform_name": "rusticl", "driver_version": "22.3.6"},
      "pocl": {"platform_name": "Portable Computing Language", "driver_version": "3.1"}}
HEX = {"float": {"-0": "0x80000000", "inf": "0x7f800000", "1": "0x3f800000", "0.5": "0x3f000000"},
       "double": {"-0": "0x8000000000000000", "inf": "0x7ff0000000000000", "1": "0x3ff0000000000000",
                  "0.5": "0x3fe0000000000000"}}
TEXT = {"-0": "-0x0.0p+0 (-0)", "0": "0x0.0p+0 (0)", "inf": "inf", "1": "0x1.0000000000000p+0 (1)",
        "0.5": "0x1.0000000000000p-1 (0.5)", "nan": "nan(0x7fc00000)", "-1.2e-16": "-0x1.1a62640000000p-53 (-1.2246469e-16)"}


def lane(corpus: Corpus, driver: str, operation: str, typ: str, operand: str, actual: str, deviation: str,
         program: str, kind: str = "wrong-result", rule: str | None = None, extra: dict | None = None,
         path: str = "opencl-c") -> None:
    """One run of ``program`` on ``driver``'s OpenCL C path (or ``path``) with one wrong lane:
    ``operation`` on ``typ`` read ``operand`` and gave ``actual`` (keys of TEXT), a deviation of
    class ``deviation``."""
    target = driver if path == "opencl-c" else f"{driver}/{path}"
    corpus.add_target(target, path, f"{driver}-id", FP[driver])
    row = {"program_id": program, "target": target, "fingerprint_id": f"{driver}-id", "path": path,
           "buffer": "out0", "lane": 0, "work_item": 0, "kind": kind, "operation": operation, "src_type": typ,
           "dst_type": typ, "rule": rule or f"math.{root(operation)}", "deviation": deviation,
           "expression": f"{operation}(in0[gid])", "expected_value": "?", "actual_value": TEXT[actual],
           "inputs": json.dumps({"in0": {"type": typ, "bits": [HEX[typ].get(operand, "0x0")],
                                         "values": [TEXT[operand]]}}), **(extra or {})}
    corpus.add_run({"program_id": program, "target": target, "fingerprint_id": f"{driver}-id", "path": path,
                    "status": "ok", "checks": 1, "judged": 1, "mismatches": 1}, [row])


def test_numbers_compare_as_exact_values_whatever_their_type():
    assert number("0x1.8000000000000p+0 (1.5)") == number("1.5") == "3/2"
    assert number("0x1.0000000000000p-1 (0.5)") == number("0x1.0000000000000p-1 (0.50000000000000000)")
    assert number("-0x0.0p+0 (-0)") == "-0" != number("0x0.0p+0 (0)") == "0"
    assert number("nan(0x7fc00000)") == number("nan(0x7ff8000000000000)") == "nan"
    assert number("-128") == "-128" and number("18446744073709551615") == "18446744073709551615"
    assert number("-inf") == "-inf" != number("inf")


def test_one_function_on_float_and_double_with_the_same_operand_and_value_is_one_bug(memory_corpus):
    """Oclgrind's sinpi(1) on float and on double (two buckets: element types are part of a
    bucket's key) give the same wrong value: one bug, its evidence the two cases."""
    lane(memory_corpus, "oclgrind", "sinpi", "float", "1", "-1.2e-16", "wrong-value", "p1")
    lane(memory_corpus, "oclgrind", "sinpi", "double", "1", "-1.2e-16", "wrong-value", "p2")
    bugs, entries = listed(memory_corpus)
    assert len(entries) == 2 and len(bugs) == 1
    [bug] = bugs
    assert [e["kind"] for e in bug.evidence] == ["same-value"]
    assert {c["program"] for c in bug.evidence[0]["cases"]} == {"p1", "p2"}
    assert {b["bug"] for b in entries} == {bug.id} and re.fullmatch(r"bug-[0-9a-f]{12}", bug.id)
    assert title(bug) == "oclgrind: sinpi double / float: wrong-value (2 buckets)"


def test_known_distinct_bugs_of_one_driver_stay_apart(memory_corpus):
    """Oclgrind's fract(-0) sign and fract(inf) value are two bugs (other operands, other
    deviations); rusticl's sign(-0) and tgamma(-0) are two (one operand, one deviation, but no
    family: sign and tgamma share no implementation)."""
    lane(memory_corpus, "oclgrind", "fract", "float", "-0", "0", "signed-zero", "p1")
    lane(memory_corpus, "oclgrind", "fract", "double", "inf", "0", "wrong-value", "p2")
    lane(memory_corpus, "rusticl", "sign", "float", "-0", "0", "signed-zero", "p3")
    lane(memory_corpus, "rusticl", "tgamma", "float", "-0", "0", "signed-zero", "p4")
    bugs, entries = listed(memory_corpus)
    assert len(entries) == len(bugs) == 4


def test_one_operand_with_another_deviation_is_no_evidence(memory_corpus):
    lane(memory_corpus, "oclgrind", "fract", "float", "-0", "0", "signed-zero", "p1")
    lane(memory_corpus, "oclgrind", "fract", "double", "-0", "nan", "number-for-nan", "p2")
    assert len(listed(memory_corpus)[0]) == 2


def test_build_failures_missing_another_symbol_of_one_library_are_one_bug(memory_corpus):
    """PoCL's SPIR-V path: "Cannot find symbol fmin_common in kernel library" and the same for
    fmax_common and the half_ family are one kernel library without the built-ins (evidence
    ``same-failure``); another message and another driver's stay apart."""
    def fails(driver: str, message: str, program: str, kind: str = "build_error") -> None:
        lane(memory_corpus, driver, "fmin", "float", "1", "0", "", program, kind=kind, path="spirv",
             extra={"actual_value": message, "deviation": None, "rule": None})

    for i, symbol in enumerate(("_Z11fmin_commonDv4_fS_", "_Z11fmax_commonff", "_Z8half_cosDv3_f")):
        fails("pocl", f"error: Cannot find symbol {symbol} in kernel library", f"p{i}")
    fails("pocl", "LLVM ERROR: Cannot select: fmin_common", "p6")
    fails("rusticl", "error: Cannot find symbol _Z11fmin_commonff in kernel library", "p7")
    bugs, entries = listed(memory_corpus)
    assert len(entries) == 5
    [library] = [b for b in bugs if len(b.buckets) > 1]
    assert sorted(b["operation"] for b in library.buckets) == [
        f"error: Cannot find symbol {s} in kernel library" for s in ("fmax_common", "fmin_common", "half_*")]
    assert {e["kind"] for e in library.evidence} == {"same-failure"} and len(library.evidence) == 2
    assert len(bugs) == 3


def test_runtime_errors_missing_another_symbol_are_one_bug(memory_corpus):
    """Oclgrind's SPIR-V path misses OpenCL.std's ``fmin_common`` and ``fmax_common`` when the kernel
    is created (a runtime error, keyed on the line after its fatal error's: corpus.buckets): one
    library without the built-ins; an instruction it cannot simulate is another bug."""
    def fails(message: str, program: str) -> None:
        lane(memory_corpus, "oclgrind", "fmin", "float", "1", "0", "", program, kind="runtime_error", path="spirv",
             extra={"actual_value": message, "deviation": None, "rule": None})

    for i, symbol in enumerate(("fmin_common", "fmax_common")):
        fails(f"setup: LogicError: clCreateKernel failed: INVALID_KERNEL_NAME\nOCLGRIND FATAL ERROR "
              f"(./src/core/WorkItem.cpp:1681)\nUndefined external function: {symbol}", f"p{i}")
    fails("OCLGRIND FATAL ERROR (./src/core/WorkItem.cpp:282)\nUnsupported instruction: addrspacecast", "p2")
    bugs, entries = listed(memory_corpus)
    assert len(entries) == 3 and sorted(len(b.buckets) for b in bugs) == [1, 2]
    [library] = [b for b in bugs if len(b.buckets) > 1]
    assert sorted(b["operation"] for b in library.buckets) == [
        f"Undefined external function: {s}" for s in ("fmax_common", "fmin_common")]
    assert [e["kind"] for e in library.evidence] == ["same-failure"]
    from triage.bug_report import _bug_lines  # the report's "why these are one bug" names no build failure

    assert "the same failure, `Undefined external function: *`, for another missing symbol" in "\n".join(
        _bug_lines(memory_corpus, library))


def test_buckets_of_two_drivers_are_never_one_bug(memory_corpus):
    lane(memory_corpus, "oclgrind", "sign", "float", "-0", "0", "signed-zero", "p1")
    lane(memory_corpus, "rusticl", "sign", "float", "-0", "0", "signed-zero", "p2")
    lane(memory_corpus, "rusticl", "sign", "double", "-0", "0", "signed-zero", "p3")
    bugs, _ = listed(memory_corpus)
    assert sorted(len(b.buckets) for b in bugs) == [1, 2]
    assert {b.driver for b in bugs} == {"oclgrind", "rusticl"}


def test_siblings_by_declaration_share_evidence(memory_corpus):
    """A function and its half_ form, its _r form and its out-parameter are one family
    (lang.families); a wrong value of the function's result and one of its out-parameter on the
    same operand are the same operand's evidence, never the same value's (two quantities)."""
    assert root("half_sin") == root("sincos (out-parameter)") == root("tan") == "sin"
    assert root("lgamma_r (out-parameter)") == "lgamma" and root("read_imageui") == "read_image"
    assert root("convert_T_sat_rtn") == "convert_T_sat" != root("convert_T_rtn") == "convert_T"
    assert root("clamp") == root("max") == "min"  # clamp is min(max(x, minval), maxval), §6.15.3
    lane(memory_corpus, "oclgrind", "lgamma", "float", "0.5", "0", "wrong-value", "p1")
    lane(memory_corpus, "oclgrind", "lgamma_r", "float", "0.5", "0", "wrong-value", "p2")
    lane(memory_corpus, "oclgrind", "lgamma_r (out-parameter)", "float", "0.5", "0", "wrong-value", "p3")
    [bug], _ = listed(memory_corpus)
    kinds = {(frozenset((e["bucket"], e["same_as"])), e["kind"]) for e in bug.evidence}
    by_op = {b["operation"]: b["id"] for b in bug.buckets}
    assert len(bug.buckets) == 3 and {k for _, k in kinds} == {"same-value", "same-operand"}
    assert (frozenset((by_op["lgamma"], by_op["lgamma_r"])), "same-value") in kinds


def test_the_pi_functions_share_their_reduction(memory_corpus):
    """sinpi, cospi and tanpi (OpenCL C 3.0.19 §6.15.2 Table 11: the functions of pi * x) are one
    family: PoCL's sinpi(1) = -0 and tanpi(1) = +0 are two signed zeros on one operand (sinpi(n) is
    +0 and tanpi(1) is -0 for a positive integer n, §7.5.1): one bug; its cospi(0.5) = -0, on
    another operand, has no evidence yet and stays apart."""
    assert root("cospi") == root("tanpi") == root("sinpi") != root("sin")
    lane(memory_corpus, "pocl", "sinpi", "float", "1", "-0", "signed-zero", "p1")
    lane(memory_corpus, "pocl", "tanpi", "float", "1", "0", "signed-zero", "p2")
    lane(memory_corpus, "pocl", "cospi", "float", "0.5", "-0", "signed-zero", "p3")
    bugs, _ = listed(memory_corpus)
    assert sorted(sorted(b["operation"] for b in bug.buckets) for bug in bugs) == [["cospi"], ["sinpi", "tanpi"]]


def test_nested_conversions_none_wrong_alone_are_siblings_by_each_part(memory_corpus):
    """rusticl folds convert_ushort_sat(NaN) inside an outer conversion to 2147483648 (each alone is
    right: the reducer names the statement by both, outermost first); the outer conversion's
    rounding mode and destination differ between the two buckets, the operand and the wrong value do
    not: one bug (``same-value``). A nested pair of another family stays apart."""
    assert root("convert_T_rtz of convert_T_sat") == root("convert_T_rtp of convert_T_sat") == "convert_T of convert_T_sat"
    assert root("convert_T of convert_T_sat") != root("convert_T_sat of convert_T")
    for program, (typ, outer) in enumerate((("float", "convert_T_rtz"), ("float", "convert_T_rtp"))):
        lane(memory_corpus, "rusticl", "convert_T_sat", typ, "1", "0", "wrong-value", f"p{program}",
             extra={"actual_value": "2147483648", "dst_type": "unsigned integer" if program else "signed integer",
                    "inputs": json.dumps({"in0": {"type": "float", "bits": ["0x7fc00000"], "values": ["nan(0x7fc00000)"]}})})
        [bucket] = [b for b in memory_corpus.buckets() if b["programs"] == 1 and not memory_corpus.reductions(b["id"])]
        memory_corpus.add_reduction({"id": f"r{program}", "original_id": f"p{program}", "reduced_id": f"p{program}",
                                     "bucket": bucket["id"], "target": "rusticl", "seconds": 0.1, "candidates": 1,
                                     "size_before": "{}", "size_after": json.dumps({"statements": 1, "work_items": 1}),
                                     "why": f"2 operations together ({outer} of convert_T_sat): none shows it alone"})
    bugs, entries = listed(memory_corpus)
    assert len(entries) == 2 and len(bugs) == 1
    assert [e["kind"] for e in bugs[0].evidence] == ["same-value"]


def test_interactions_that_share_a_statement_and_a_wrong_value_are_one_bug(memory_corpus):
    """Oclgrind's out-parameter interaction: floor and trunc each read 0 beside a sincos, with
    deviations of several classes (a wrong value, a wrong signed zero): buckets keyed on the
    statements of the smallest set and the deviation (corpus.buckets), one bug named after the
    shared statement; an interaction that reads another value stays apart."""
    cases = (("p1", "floor", "0", "wrong-value"), ("p2", "trunc", "0", "signed-zero"), ("p3", "trunc", "0", "wrong-value"),
             ("p4", "round", "nan", "wrong-value"))
    for program, victim, actual, deviation in cases:
        culprit = {"kind": "interaction", "operation": " + ".join(sorted(["sincos", victim])), "deviation": deviation}
        lane(memory_corpus, "oclgrind", victim, "float", "0.5", actual, deviation, program,
             extra={"culprit": json.dumps(culprit)})
    bugs, entries = listed(memory_corpus)
    assert {b["kind"] for b in entries} == {"interaction"} and len(entries) == 4
    assert {b["rule"] for b in entries} == {"math.floor", "math.trunc", "math.round"}  # its rows' rule
    assert {b["severity"] for b in entries} == {"violation"}
    assert sorted(len(b.buckets) for b in bugs) == [1, 3]
    big = next(b for b in bugs if len(b.buckets) == 3)
    assert {e["kind"] for e in big.evidence} == {"same-trigger"} and {e["trigger"] for e in big.evidence} <= {
        "sincos", "trunc"}
    assert title(big) == ("oclgrind: a statement's result is wrong beside a call with an out-parameter "
                          "(interaction, 3 buckets)")


def _beside_sincos(corpus: Corpus, victim: str, program: str) -> None:
    culprit = {"kind": "interaction", "operation": " + ".join(sorted(["sincos", victim])), "deviation": "wrong-value"}
    lane(corpus, "oclgrind", victim, "float", "0.5", "0", "wrong-value", program, extra={"culprit": json.dumps(culprit)})


def _reduced(corpus: Corpus, bucket: str) -> None:
    corpus.add_reduction({"id": f"r:{bucket}", "original_id": "p", "reduced_id": "p", "bucket": bucket,
                          "target": "oclgrind", "seconds": 0.1, "candidates": 1, "size_before": "{}",
                          "size_after": json.dumps({"statements": 1, "work_items": 1}), "why": ""})


def test_a_call_with_an_out_parameter_that_reads_what_its_victims_read_joins_the_interaction(memory_corpus):
    """Oclgrind's OpenCL C path leaves a statement's output at its initial +0 beside a call with an
    out-parameter, and the call's own outputs too: modf(x, &ip) reduced to one statement reading
    +0 on that front end only is the interaction's bug (the interaction stays its lead); a modf
    reading another value, or one whose bug also shows on the SPIR-V path, is not."""
    _beside_sincos(memory_corpus, "floor", "p1")
    lane(memory_corpus, "oclgrind", "modf", "float", "0.5", "0", "wrong-value", "p2")
    _reduced(memory_corpus, next(b["id"] for b in memory_corpus.buckets() if b["signature"]["operation"] == "modf"))
    lane(memory_corpus, "oclgrind", "sincos", "float", "0.5", "1", "wrong-value", "p3")
    _reduced(memory_corpus, next(b["id"] for b in memory_corpus.buckets() if b["signature"]["operation"] == "sincos"))
    bugs, entries = listed(memory_corpus)
    assert sorted(len(b.buckets) for b in bugs) == [1, 2]
    joined = next(b for b in bugs if len(b.buckets) == 2)
    assert joined.lead["kind"] == "interaction" and [e["kind"] for e in joined.evidence] == ["same-trigger"]
    assert title(joined).startswith("oclgrind: a statement's result is wrong beside a call with an out-parameter")


def test_a_trigger_whose_bug_shows_on_another_front_end_stays_apart(memory_corpus):
    """fract(inf) reads +0 on the OpenCL C path, but its float twin with the same operand and
    deviation fails on the SPIR-V path too: a value bug of fract's own, not the interaction's."""
    _beside_sincos(memory_corpus, "floor", "p1")
    lane(memory_corpus, "oclgrind", "fract", "float", "inf", "0", "wrong-value", "p2")
    _reduced(memory_corpus, next(b["id"] for b in memory_corpus.buckets() if b["signature"]["operation"] == "fract"))
    lane(memory_corpus, "oclgrind", "fract", "double", "inf", "0", "wrong-value", "p3")
    lane(memory_corpus, "oclgrind", "fract", "double", "inf", "0", "wrong-value", "p3", path="spirv")
    bugs, _ = listed(memory_corpus)
    assert sorted(len(b.buckets) for b in bugs) == [1, 2]
    assert {b.lead["kind"] for b in bugs} == {"interaction", "wrong-result"}


def test_an_unreduced_bucket_joins_only_beside_a_call_with_an_out_parameter(memory_corpus, monkeypatch):
    """A bucket not reduced yet whose lanes read the victims' +0 on their front end joins the
    interaction when each of its programs calls a built-in with an out-parameter (attribute
    ``out``, lang.ir), the victim's situation; without one it waits for its reduction."""
    import triage.bugs as bugs_module

    _beside_sincos(memory_corpus, "floor", "p1")
    lane(memory_corpus, "oclgrind", "acos", "float", "0.5", "0", "wrong-value", "p2")
    lane(memory_corpus, "oclgrind", "log2", "float", "0.5", "0", "wrong-value", "p3")
    real = bugs_module.lane_cases
    monkeypatch.setattr(bugs_module, "lane_cases", lambda c: [{**x, "out_call": x["program_id"] == "p2"} for x in real(c)])
    bugs, _ = listed(memory_corpus)
    assert sorted(sorted(b["operation"] for b in bug.buckets) for bug in bugs) == [["acos", "floor + sincos"], ["log2"]]


def test_a_bug_id_stays_when_a_later_bucket_joins(memory_corpus):
    lane(memory_corpus, "oclgrind", "cospi", "float", "0.5", "-1.2e-16", "wrong-value", "p1")
    [alone], _ = listed(memory_corpus)
    lane(memory_corpus, "oclgrind", "cospi", "double", "0.5", "-1.2e-16", "wrong-value", "p2")
    [joined], _ = listed(memory_corpus)
    assert alone.id == joined.id == bug_id(alone.buckets[0]["id"]) and alone.id.startswith(PREFIX)
    assert resolve(memory_corpus, joined.id) == [b["id"] for b in joined.buckets]
    assert resolve(memory_corpus, joined.buckets[1]["id"][:8]) == [joined.buckets[1]["id"]]


def test_the_terminal_list_is_one_line_per_bug_with_full_ids(tmp_path):
    path = str(tmp_path / "c.db")
    corpus = Corpus(path)
    lane(corpus, "oclgrind", "sinpi", "float", "1", "-1.2e-16", "wrong-value", "p1")
    lane(corpus, "oclgrind", "sinpi", "double", "1", "-1.2e-16", "wrong-value", "p2")
    lane(corpus, "rusticl", "sign", "float", "-0", "0", "signed-zero", "p3")
    corpus.close()
    run = CliRunner().invoke(cli, ["buckets", "--corpus", path])
    assert run.exit_code == 0, run.output
    header, *lines = run.output.strip().splitlines()
    assert header.split("\t")[0] == "bug" and len(lines) == 2
    assert all(re.fullmatch(r"bug-[0-9a-f]{12}", line.split("\t")[0]) for line in lines)
    assert "double / float" in run.output
    flat = CliRunner().invoke(cli, ["buckets", "--corpus", path, "--buckets", "--driver", "oclgrind"])
    assert len(flat.output.strip().splitlines()) == 3 and all(
        re.fullmatch(r"[0-9a-f]{12}", line.split("\t")[0]) for line in flat.output.strip().splitlines()[1:])
    data = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", path, "--json"]).output)
    assert data["schema"] == 2 and len(data["bugs"]) == 2 and len(data["buckets"]) == 3
    assert {b["bug"] for b in data["buckets"]} == {g["id"] for g in data["bugs"]}
    assert all({"id", "driver", "title", "severity", "buckets", "evidence"} <= set(g) for g in data["bugs"])
    only = CliRunner().invoke(cli, ["buckets", "--corpus", path, "--severity", "letter"])
    assert only.output.strip().splitlines()[1:] == []


def test_a_re_run_is_tried_only_on_siblings_that_deviate_alike(memory_corpus):
    """triage.siblings re-runs a reduced case as the buckets of its family whose wrong values
    deviate alike: Oclgrind's double fract(inf) value bug is not re-run as its float fract(-0)
    sign bug (a variant of one landing in the other's bucket would merge two bugs)."""
    from triage.siblings import siblings_of

    lane(memory_corpus, "oclgrind", "fract", "float", "-0", "0", "signed-zero", "p1")
    lane(memory_corpus, "oclgrind", "fract", "double", "inf", "0", "wrong-value", "p2")
    lane(memory_corpus, "oclgrind", "fract", "double", "-0", "0", "signed-zero", "p3")
    lane(memory_corpus, "rusticl", "fract", "double", "-0", "0", "signed-zero", "p4")
    by = {(b["signature"]["dst_type"], b["signature"]["deviation"], b["signature"]["driver"]): b
          for b in memory_corpus.buckets()}
    assert siblings_of(memory_corpus, by[("double", "wrong-value", "oclgrind")]) == []
    assert [b["id"] for b in siblings_of(memory_corpus, by[("float", "signed-zero", "oclgrind")])] == [
        by[("double", "signed-zero", "oclgrind")]["id"]]


def test_a_lane_wise_operation_compares_the_lanes_own_component():
    """A float4 lane-wise operation's lane 6 is work-item 1's component 2 (OpenCL C §6.3.2): its
    operand is that component, a scalar beside it whole; an image read's coordinate and a
    geometric function's vector are compared whole."""
    from triage.bugs import operands

    row = {"out_type": "float4", "lane": 6, "inputs": json.dumps({
        "in0": {"values": ["0x1.0000000000000p+0 (1)", "2", "3", "4"]}, "literals": [{"values": ["0.5"]}]})}
    assert operands(row) == ("3", "1/2")
    assert operands(row, lanewise=False) == ("1", "2", "3", "4", "1/2")
    three = {**row, "out_type": "float3", "lane": 5, "inputs": json.dumps({"in0": {"values": ["1", "2", "3"]}})}
    assert operands(three) == ("2",)  # a 3-vector takes four lanes in memory (§6.3.5)


def test_a_pending_bucket_says_why_in_the_bug_list(tmp_path):
    """A bucket the campaign left unreduced carries the reason the campaign recorded (triage.beside:
    the triage share spent, with its numbers), in the JSON and the piped list."""
    path = str(tmp_path / "c.db")
    corpus = Corpus(path)
    lane(corpus, "oclgrind", "sinpi", "float", "1", "-1.2e-16", "wrong-value", "p1")
    [bucket] = corpus.buckets()
    why = "not started: found 3 s before the campaign ended; the triage share of oclgrind (25% of 300 s) was spent"
    corpus.update_campaign("c", 7, {}, 1, 1)
    corpus.left_pending("c", {bucket["id"]: why})
    corpus.close()
    data = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", path, "--json"]).output)
    assert data["buckets"][0]["pending"] == why
    line = CliRunner().invoke(cli, ["buckets", "--corpus", path]).output.splitlines()[1]
    assert line.split("\t")[10] == f"pending: {why}"


def test_a_flaky_bucket_says_so_in_the_bug_list(tmp_path):
    """A bucket whose rows did not show again on a fresh worker (triage.confirm) is not pending:
    the list says it is flaky, also where the campaign recorded no reason for it."""
    path = str(tmp_path / "c.db")
    corpus = Corpus(path)
    lane(corpus, "oclgrind", "sinpi", "float", "1", "-1.2e-16", "wrong-value", "p1")
    [bucket] = corpus.buckets()
    corpus.confirm("p1", "oclgrind", bucket["id"], False)
    corpus.close()
    line = CliRunner().invoke(cli, ["buckets", "--corpus", path]).output.splitlines()[1]
    assert line.split("\t")[10] == "not reduced: flaky, it did not show again on a fresh worker"
