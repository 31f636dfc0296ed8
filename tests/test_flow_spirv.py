"""The SPIR-V emitter of flow programs (fuzz.emit.spirv.flow_kernel): every drawn program gives a
module spirv-val accepts, in both control flow forms, and a hand-made program's module holds the
constructs its statements mean (OpPhi for carried values, the merges or their absence, the
barriers' scopes and semantics, DontInline, pointer parameters, the OpenCL.std built-ins)."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, seed, settings

from fuzz.emit.spirv.flow_kernel import emit
from fuzz.emit.validate import disassemble, validate
from fuzz.strategies.flow import flow_programs
from lang.flow import (
    Array,
    Assign,
    AStore,
    Bin,
    Call,
    Const,
    Decl,
    Exchange,
    Exit,
    FlowProgram,
    Function,
    If,
    Input,
    Invoke,
    Item,
    Load,
    Loop,
    Output,
    Pointer,
    PointerParam,
    Var,
)
from lang.flow_rules import check
from lang.nodes import Fill, InvalidProgram
from lang.shapes import CFGS

pytestmark = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")

U = lambda v: Const("uint", v)  # noqa: E731
S, T, X = Var("s", "uint"), Var("t", "uint"), Var("x", "int")
SEEN: Counter = Counter()


@seed(5)
@settings(max_examples=300, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(flow_programs())
def test_every_drawn_program_gives_a_valid_module_in_both_forms(program):
    for cfg in CFGS:
        p = replace(program, cfg=cfg)
        problem = validate(emit(p), "opencl1.2")
        assert problem is None, (problem, p)
    SEEN[program.cfg] += 1


def test_the_strategy_draws_both_forms():
    if not SEEN:
        pytest.skip("runs after test_every_drawn_program_gives_a_valid_module_in_both_forms")
    assert SEEN["structured"] > 150 and SEEN["unstructured"] > 50, SEEN


def hand_program() -> FlowProgram:
    """A loop of each form carrying ``s`` (one with a break, one with a continue), an if/else on
    data, a private array, an exchange in a uniform loop, a noinline helper with a scalar and an
    array pointer, and the integer built-ins."""
    helper = Function("h", (Decl("a", "uint"),), (PointerParam("p", "uint"), PointerParam("q", "uint", 2)), (),
                      (Assign("p", Bin("add", Var("p", "uint"), Var("a", "uint"), "uint")),
                       AStore("q", U(1), Var("a", "uint"))), Var("a", "uint"), noinline=True)
    counter = Bin("and", Load("in0", "uint", Item("global_id", 0)), U(7), "uint")
    body = (
        Loop("for", "i", U(0), counter, 8, 1, False,
             (Exit("break", Bin("eq", S, U(9), "int")),
              Assign("s", Bin("add", S, Call("min", (T, U(3)), "uint"), "uint")))),
        Loop("while", "j", U(2), U(5), 4, 2, True,
             (Exit("continue", Bin("eq", T, U(1), "int")), Assign("t", Bin("xor", T, S, "uint")))),
        Loop("do", "k", U(0), Item("num_groups", 0), 4, 1, False,
             (Exchange("la", S, Bin("add", Item("local_id", 0), U(1), "uint"), "s"),)),
        If(Bin("lt", S, T, "int"), (Assign("x", Bin("sadd", X, Const("int", 5), "int")),),
           (Assign("x", Bin("sdiv", X, Const("int", -1), "int")),)),
        AStore("pa", S, Call("mul_hi", (S, T), "uint")),
        Invoke("h", (Call("rotate", (S, T), "uint"),), (Pointer("t"), Pointer("pa", 1, True)), "s"),
    )
    return FlowProgram(
        inputs=(Input("in0", "uint", 4, Fill(0, values=(3, 0, 5, 100))),),
        outputs=(Output("o_s", "s", "uint"), Output("o_t", "t", "uint"), Output("o_x", "x", "int")),
        variables=(Decl("s", "uint", 1), Decl("t", "uint", 2), Decl("x", "int", -7)),
        arrays=(Array("pa", "uint", 4, "private", (1, 2, 3, 4)), Array("la", "uint", 4, "local")),
        functions=(helper,), body=body, global_size=(8,), local_size=(4,))


def _text(p: FlowProgram) -> str:
    module = emit(p)
    assert validate(module, "opencl1.2") is None
    return disassemble(module).decode()


def test_the_structured_module_holds_each_construct():
    p = hand_program()
    check(p)
    text = _text(p)
    assert text.count("OpLoopMerge") == 3
    assert text.count("OpSelectionMerge") == 3  # the if and the two exits
    # loop-carried s and t: OpPhi of uint beside each loop's int counter, more than the counters
    assert len(re.findall(r"= OpPhi %uint", text)) > 3
    assert re.search(r"OpBranchConditional %\w+ %\w+ %\w+\n", text)
    # barrier(CLK_LOCAL_MEM_FENCE): Workgroup (2) execution and memory scope, WorkgroupMemory |
    # SequentiallyConsistent (0x110 = 272)
    assert text.count("OpControlBarrier %uint_2 %uint_2 %uint_272") == 2
    assert re.search(r"%h = OpFunction %uint DontInline", text)
    assert re.search(r"OpFunctionParameter %_ptr_Function_uint", text)
    assert "OpInBoundsPtrAccessChain %_ptr_Function_uint" in text  # q[1]: arithmetic within the array
    assert "OpInBoundsAccessChain %_ptr_Function_uint" in text  # pa[s % 4] and pa + 1
    assert re.search(r"OpFunctionCall %uint %h %\w+ %\w+ %\w+", text)
    assert "OpVariable %_ptr_Workgroup__arr_uint_uint_4 Workgroup" in text and '"clfuzz.la"' in text
    for name in ("u_min", "u_mul_hi", "rotate"):
        assert re.search(rf"OpExtInst %uint %1 {name} ", text), name
    assert "OpExecutionMode %clfuzz ContractionOff" in text
    assert re.search(r"OpEntryPoint Kernel %clfuzz \"clfuzz\" .*LocalInvocationID", text)


def test_unstructured_modules_have_no_merges_and_arms_after_their_join():
    """Without merge instructions, the arms of the if and of the exits stand after the kernel's
    last block (its OpReturn), which no structured construct may do."""
    text = _text(replace(hand_program(), cfg="unstructured"))
    assert "OpLoopMerge" not in text and "OpSelectionMerge" not in text
    assert "OpPhi" in text
    lines = text.splitlines()
    ret = lines.index("               OpReturn")
    labels = {line.split()[0]: i for i, line in enumerate(lines) if line.endswith("= OpLabel")}
    targets = [labels[line.split()[2]] for line in lines if "OpBranchConditional" in line]
    assert sum(t > ret for t in targets) == 3, (ret, targets)
    structured = _text(hand_program()).splitlines()
    ret = structured.index("               OpReturn")
    labels = {line.split()[0]: i for i, line in enumerate(structured) if line.endswith("= OpLabel")}
    assert all(labels[line.split()[2]] < ret for line in structured if "OpBranchConditional" in line)


def test_the_validator_names_an_unknown_form():
    with pytest.raises(InvalidProgram, match="unknown control flow form"):
        check(replace(hand_program(), cfg="goto"))
