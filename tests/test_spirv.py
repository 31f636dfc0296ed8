"""The SPIR-V emitter: every module valid, the grammar read from the headers, words well formed."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from dataclasses import replace

import pytest
from conftest import SMALL
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from fuzz.emit import spirv
from fuzz.emit.grammar import grammar
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.expressions import expression_programs
from fuzz.strategies.spirv_only import spirv_programs
from fuzz.strategies.trees import EXPRESSIONS
from lang.ir import Literal, Load, Op, Program, walk
from lang.ops import OPS, SWIZZLE_FORMS, VERSION_KEYS
from lang.types import VECTOR_WIDTHS

pytestmark = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")

SEEN: Counter = Counter()


@seed(3)  # deterministic: the coverage test below must not depend on the day's draws
@settings(max_examples=1000, database=None, deadline=None, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(st.one_of(*[area(Caps(fp64=True), replace(SMALL, statements=statements, global_size=2, p_nested=0.3))
                   for area, statements in ((conversion_programs, 4), (spirv_programs, 4), (expression_programs, 12))]))
def test_every_module_is_valid(program: Program):
    SEEN["programs"] += 1
    problem = validate(spirv.emit(program), target_env(program))
    assert problem is None, f"{problem}\n{program.to_json()}"
    for s in program.body:
        for n in walk(s.value):
            SEEN[("width", n.type.width)] += 1
            SEEN[("type", n.type.scalar)] += 1
            SEEN[("node", n.op if isinstance(n, Op) else type(n).__name__)] += 1
            if isinstance(n, Op) and OPS[n.op].variant is not None:
                SEEN[("variant", n.op, OPS[n.op].variant(n))] += 1
            if isinstance(n, Op) and n.op == "convert":
                SEEN[("rounding", n.attr("rounding"))] += 1
                SEEN[("sat", bool(n.attr("sat")))] += 1


def test_the_validity_run_covered_every_construct():
    if not SEEN:
        pytest.skip("runs after test_every_module_is_valid")
    assert SEEN["programs"] >= 950
    keys = ([("width", w) for w in VECTOR_WIDTHS]
                # expressions: per-construct runs below; atomics and images: tests/test_*_programs.py
                + [("node", k) for k in list(OPS) + ["Load", "Literal"]
                   if OPS.get(k) is None or OPS[k].area not in ("expressions", "atomics", "images", "math")]
                + [("rounding", r) for r in (None, "rte", "rtz", "rtp", "rtn")] + [("sat", True)]
                + [("type", t) for t in ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                         "float", "double")])
    missing = [key for key in keys if not SEEN[key]]
    assert not missing, missing


def _valid_programs(strategy, examples: int) -> list[Program]:
    """``examples`` programs drawn from ``strategy`` (seeded), each checked to give a valid module."""
    programs: list[Program] = []

    @seed(7)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def check(program):
        problem = validate(spirv.emit(program), target_env(program))
        assert problem is None, f"{problem}\n{program.to_json()}"
        programs.append(program)

    check()
    return programs


def _nodes(programs: list[Program], name: str) -> list[Op]:
    """Every use of the operation ``name`` in ``programs``."""
    return [n for p in programs for s in p.body for n in walk(s.value) if isinstance(n, Op) and n.op == name]


# Coverage is asserted per construct, with margin, never on exact draws: Hypothesis (>= 6.131) also
# draws constants it collects from every local module loaded (hypothesis.internal.constants_ast),
# so one @seed gives other programs in the full suite than in this file alone.
VARIANTS = {
    "rem": {("rem", k) for k in ("OpSRem", "OpSMod", "OpUMod", "OpFRem", "OpFMod")},
    "extended": {("extended", k) for k in ("IAddCarry", "ISubBorrow", "UMulExtended", "SMulExtended")},
    "reduce": {("reduce", "any"), ("reduce", "all")},
    "vector_shuffle": {("vector_shuffle", "same"), ("vector_shuffle", "mixed")},
}
WEIGHT = {"rem": "w_rem", "extended": "w_extended", "reduce": "w_reduce", "vector_shuffle": "w_shuffle"}


@pytest.mark.parametrize("kind", sorted(VARIANTS))
def test_every_variant_of_the_spirv_only_forms_gives_valid_modules(kind):
    """Each SPIR-V-only statement kind drawn on its own: every variant is built (undefined
    OpVectorShuffle components included), and every module is valid."""
    weights = {f: 0 for f in ("w_convert", "w_cast", "w_as", "w_assign", "w_arith", "w_bitcast", "w_shuffle",
                              "w_rem", "w_extended", "w_select", "w_reduce")}
    policy = replace(SMALL, statements=6, global_size=2, **{**weights, WEIGHT[kind]: 1})
    seen = set()
    for n in _nodes(_valid_programs(spirv_programs(Caps(fp64=True), policy), 40), kind):
        seen.add((kind, OPS[kind].variant(n)))
        if kind == "vector_shuffle" and -1 in n.attr("components"):
            seen.add("undefined component")
    assert VARIANTS[kind] <= seen, VARIANTS[kind] - seen
    assert kind != "vector_shuffle" or "undefined component" in seen


@pytest.mark.parametrize("name", sorted(EXPRESSIONS) + ["vstore"])
def test_every_expression_construct_alone_gives_valid_modules(name):
    """Each tree operation drawn on its own (the others only where it cannot produce a type): it is
    built in each of its variants (``swizzle:hi`` on a 3-vector reads the undefined w lane), and
    every module is valid."""
    weights = {"w_expression": 0, "w_vstore": 1} if name == "vstore" else {"expression_weights": {name: 1.0}}
    policy = replace(SMALL, statements=6, global_size=2, expr_depth=2, **weights)
    seen = _nodes(_valid_programs(expression_programs(Caps(fp64=True, versions=VERSION_KEYS), policy), 25), name)
    assert seen, f"{name} was never built"
    variants = {OPS[name].variant(n) for n in seen} if OPS[name].variant else set()
    assert EXPRESSION_VARIANTS.get(name, set()) <= variants, EXPRESSION_VARIANTS[name] - variants
    if name == "swizzle":
        assert any(max(n.attr("components")) >= n.args[0].type.width for n in seen), "no undefined lane read"


EXPRESSION_VARIANTS = {
    "swizzle": set(SWIZZLE_FORMS), "insert": set(SWIZZLE_FORMS), "vec": {"splat", "parts"},
    "ternary": {"scalar", "vector"}, "min": {"scalar", "vector"}, "max": {"scalar", "vector"},
    "clamp": {"scalar", "vector"}, "vload": {"vload2", "vload3", "vload4", "vload8"},
    "vstore": {"vstore2", "vstore3", "vstore4", "vstore8"},
    "compare": {"==", "!=", "<", "<=", ">", ">="}, "shift": {"<<", ">>"}, "div": {"/", "%"},
    "arith": {"+", "-", "*", "&", "|", "^"}, "logic": {"&&", "||"},
}


def test_grammar_numbers_come_from_the_headers():
    g = grammar()
    # spot checks against the SPIR-V specification's tables (§3.32, §3.20, §3.16)
    assert g.magic == 0x07230203
    assert g.opcode("OpConvertFToS") == 110 and g.opcode("OpSatConvertSToU") == 118
    assert g.enum("Decoration", "FPRoundingMode") == 39 and g.enum("Decoration", "SaturatedConversion") == 28
    assert g.enum("FPRoundingMode", "RTN") == 3 and g.enum("AddressingModel", "Physical64") == 2
    # and against the C header of the same package, an independent rendering of the grammar
    header = open("/usr/include/spirv/unified1/OpenCL.std.h").read()
    assert f"OpenCLstd_Fmod = {g.opencl_std['fmod']}," in header


def _disassemble(program: Program) -> str:
    return subprocess.run(["spirv-dis", "--raw-id", "-"], input=spirv.emit(program), capture_output=True,
                          check=True).stdout.decode()


def _program(value, out_type):
    from lang.ir import Buffer, Fill, Store
    inputs = tuple(Buffer(n.buffer, n.type, "in", Fill(1)) for n in walk(value) if isinstance(n, Load))
    return Program(inputs + (Buffer("out0", out_type, "out"),), (Store("out0", value),), 4)


def test_conversions_use_the_instructions_the_environment_prescribes():
    from lang.types import Type
    x = Load("in0", Type("float", 4))
    text = _disassemble(_program(Op("convert", (x,), Type("int", 4), (("rounding", "rtn"), ("sat", True))), Type("int", 4)))
    assert "OpConvertFToS" in text and "SaturatedConversion" in text and "FPRoundingMode RTN" in text
    u = Load("in0", Type("int", 2))
    text = _disassemble(_program(Op("convert", (u,), Type("uchar", 2), (("sat", True),)), Type("uchar", 2)))
    assert "OpSatConvertSToU" in text and "SaturatedConversion" not in text
    text = _disassemble(_program(Op("convert", (u,), Type("uint", 2), (("rounding", "rte"),)), Type("uint", 2)))
    assert "Convert" not in text.split("OpFunction ")[1]  # int -> uint: no instruction, no rounding
    lit = Literal(Type("float", 1), (0x7FC00001,))
    text = _disassemble(_program(Op("cast", (lit,), Type("long", 3)), Type("long", 3)))
    assert "OpConvertFToS" in text and text.count("OpCompositeInsert") == 3
    assert "0x1.800002p+128" in text  # the NaN 0x7fc00001, payload kept bit for bit


def test_spirv_only_forms_use_their_instructions():
    from lang.types import Type
    a, b = Load("in0", Type("int", 2)), Load("in1", Type("int", 4))
    text = _disassemble(_program(Op("vector_shuffle", (a, b), Type("int", 3), (("components", (5, -1, 0)),)), Type("int", 3)))
    assert "OpVectorShuffle" in text and " 5 4294967295 0" in text
    x, y = Load("in0", Type("short", 4)), Load("in1", Type("short", 4))
    text = _disassemble(_program(Op("rem", (x, y), Type("short", 4), (("mode", "mod"),)), Type("short", 4)))
    assert "OpSMod" in text and "OpSelect" in text  # the divisor made safe first
    text = _disassemble(_program(Op("bitcast", (Load("in0", Type("ulong")),), Type("uchar", 8)), Type("uchar", 8)))
    assert "OpBitcast" in text
    f = Load("in0", Type("float", 8))
    text = _disassemble(_program(Op("reduce", (f, f), Type("int"), (("compare", "<"), ("ordered", False),
                                                                    ("reduce", "all"))), Type("int")))
    assert "OpFUnordLessThan" in text and "OpAll" in text
