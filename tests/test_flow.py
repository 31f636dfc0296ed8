"""Flow programs (lang.flow): the validator rejects each rule's breach with its reason, the
strategy draws only valid programs, and the exact interpreter (oracles.flow) gives the bits of
hand-worked kernels and of the host-C evaluation (tests/flow_host.py: gcc, -fsanitize=undefined)
on drawn programs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings

from fuzz.emit.opencl_flow import emit
from fuzz.strategies.flow import flow_programs
from lang.flow import (
    Array,
    Assign,
    Bin,
    Call,
    Cast,
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
    Un,
    Var,
)
from lang.flow_rules import check
from lang.nodes import Fill, InvalidProgram
from oracles.flow import interpret

from tests.flow_host import run_host

U = lambda v: Const("uint", v)  # noqa: E731
I = lambda v: Const("int", v)  # noqa: E731
LID = Item("local_id", 0)
GID = Item("global_id", 0)
INT_MIN = -(2**31)


def _hand() -> FlowProgram:
    """Four work-items in one work-group; trips 3, 0, 5, 100 from the input."""
    s, v, q, r = Var("s", "uint"), Var("v", "int"), Var("q", "int"), Var("r", "int")
    body = (
        # s = 0 + 2 + 4 (3 trips) / nothing / 0 + 2 + 4 + 6 (capped at 4 trips) / the same
        Loop("for", "i", U(0), Load("in0", "uint", GID), 4, 2, False,
             (Assign("s", Bin("add", s, Cast("uint", Var("i", "int")), "uint")),)),
        # the neighbour's s: [0, 12, 12, 6]
        Exchange("la", s, Bin("add", LID, U(1), "uint"), "s"),
        # i = 3, 2, 1 (reverse): v = 3 then break at 2
        Loop("while", "j", U(1), U(3), 8, 1, True,
             (Exit("break", Bin("eq", Var("j", "int"), I(2), "int")),
              Assign("v", Bin("sadd", Bin("smul", v, I(10), "int"), Var("j", "int"), "int")))),
        Assign("q", Bin("sdiv", I(INT_MIN), I(-1), "int")),  # guarded: MIN / -1 gives MIN
        Assign("r", Bin("srem", I(7), Bin("sub", Cast("short", LID), Cast("short", LID), "int"), "int")),  # % 0: 7
        If(Bin("eq", LID, U(3), "int"), (Assign("r", Bin("srem", I(-7), I(2), "int")),)),  # -1 (truncation)
    )
    return FlowProgram(
        inputs=(Input("in0", "uint", 4, Fill(0, values=(3, 0, 5, 100))),),
        outputs=(Output("o_s", "s", "uint"), Output("o_v", "v", "int"), Output("o_q", "q", "int"),
                 Output("o_r", "r", "int")),
        variables=(Decl("s", "uint"), Decl("v", "int"), Decl("q", "int"), Decl("r", "int")),
        arrays=(Array("la", "uint", 4, "local"),), functions=(), body=body, global_size=(4,), local_size=(4,))


def test_hand_worked_kernel():
    p = _hand()
    check(p)
    out = interpret(p)
    assert out["o_s"].bits.tolist() == [0, 12, 12, 6]
    assert out["o_v"].bits.tolist() == [3] * 4
    assert out["o_q"].bits.view(np.int32).tolist() == [INT_MIN] * 4
    assert out["o_r"].bits.view(np.int32).tolist() == [7, 7, 7, -1]


def test_a_global_offset_moves_the_global_ids_only():
    """OpenCL C 3.0.19 §6.15.1: get_global_id(d) is get_group_id(d) * get_local_size(d) +
    get_local_id(d) + get_global_offset(d); the group and local ids do not move, and each
    work-item's outputs stay at its linear id counted from the offset. Six work-items in groups
    of two along dimension 0, offset (5, 7) over a (6, 1) launch."""
    names = ("g", "l", "lin", "o", "y")
    outs = tuple(Output(f"o_{n}", n, "uint") for n in names)
    body = (Assign("g", GID), Assign("l", Item("group_id", 0)), Assign("lin", Item("global_linear_id", 0)),
            Assign("o", Item("global_offset", 1)), Assign("y", Item("global_id", 1)))
    p = FlowProgram((), outs, tuple(Decl(n, "uint") for n in names), (), (), body, (6, 1), (2, 1),
                    global_offset=(5, 7))
    check(p)
    out = interpret(p)
    assert out["o_g"].bits.tolist() == [5, 6, 7, 8, 9, 10] and out["o_l"].bits.tolist() == [0, 0, 1, 1, 2, 2]
    assert out["o_lin"].bits.tolist() == list(range(6)) and out["o_o"].bits.tolist() == [7] * 6
    assert out["o_y"].bits.tolist() == [7] * 6
    host = run_host(p)
    assert all(host[o.name].tolist() == out[o.name].bits.tolist() for o in outs)
    with pytest.raises(InvalidProgram, match="global offset"):
        check(replace(p, global_offset=(5,)))


def test_helper_pointers_and_fma():
    """A helper adds its argument through a pointer and writes an array from an offset; fma is
    fused: (1 + 2**-12)**2 - 1 is 2**-11 + 2**-24 exactly (unfused, the product rounds to 1 + 2**-11)."""
    f = Function("h", (Decl("a", "uint"),), (PointerParam("p", "uint"), PointerParam("q", "uint", 2)), (),
                 (Assign("p", Bin("add", Var("p", "uint"), Var("a", "uint"), "uint")),
                  Assign("a", U(9))), Var("a", "uint"))
    one = Const("float", 0x3F800000)
    a = Const("float", 0x3F800800)  # 1 + 2**-12
    p = FlowProgram((), (Output("o_x", "x", "uint"), Output("o_y", "y", "uint"), Output("o_f", "f", "float")),
                    (Decl("x", "uint", 5), Decl("y", "uint"), Decl("f", "float")), (), (f,),
                    (Invoke("h", (GID,), (Pointer("x"),), "y"),
                     Assign("f", Call("fma", (a, a, Bin("sub", Const("float", 0), one, "float")), "float"))),
                    (3,), (1,))
    p = replace(p, functions=(replace(f, pointers=f.pointers[:1]),))
    check(p)
    out = interpret(p)
    assert out["o_x"].bits.tolist() == [5, 6, 7] and out["o_y"].bits.tolist() == [9] * 3
    assert out["o_f"].bits.view(np.float32)[0] == np.float32(2.0**-11 + 2.0**-24)


def _breach(**changes) -> FlowProgram:
    return replace(_hand(), **changes)


def _with(*stmts) -> FlowProgram:
    return replace(_hand(), body=tuple(stmts))


V = Var("v", "int")
S = Var("s", "uint")
BREACHES = {
    "signed add": (_with(Assign("v", Bin("add", V, V, "int"))), "may overflow"),
    "ushort product": (_with(Assign("v", Bin("mul", Cast("ushort", S), Cast("ushort", S), "int"))), "may overflow"),
    "signed shift": (_with(Assign("v", Bin("shl", V, V, "int"))), "shifts on uint/ulong"),
    "plain division": (_with(Assign("v", Bin("div", V, V, "int"))), "unknown operator"),
    "negated int": (_with(Assign("v", Un("neg", V, "int"))), "no negation of int"),
    "clamp out of order": (_with(Assign("v", Call("clamp", (V, I(5), I(1)), "int"))), "minval <= maxval"),
    "mul24 unmasked": (_with(Assign("s", Call("mul24", (S, S), "uint"))), "24"),
    "float comparison": (_with(Assign("v", Bin("lt", Const("float", 0), Const("float", 0), "int"))), "never decides control flow"),
    "float to int": (_with(Assign("v", Cast("int", Const("float", 0x3F800000)))), "cast of a float"),
    "subnormal constant": (_with(Assign("v", Cast("int", Const("float", 1)))), "finite and normal"),
    "loop over its cap": (_with(Loop("for", "k", U(0), U(1), 1000, 1, False, ())), "cap 1..64"),
    "break outside a loop": (_with(Exit("break", I(1))), "outside a loop"),
    "counter assigned": (_with(Loop("for", "k", U(0), U(1), 4, 1, False, (Assign("k", I(0)),))), "no assignable"),
    "exchange under divergence": (_with(If(Bin("eq", LID, U(0), "int"), (Exchange("la", S, U(0), "s"),))),
                                  "not work-group uniform"),
    "exchange after a divergent break": (_with(Loop("for", "k", U(0), U(4), 4, 1, False, (
        Exit("break", Bin("eq", LID, U(1), "int")), Exchange("la", S, U(0), "s")))), "leave or skip"),
    "local array of the wrong size": (_breach(arrays=(Array("la", "uint", 3, "local"),)), "one element per work-item"),
    "double without fp64": (_breach(variables=_hand().variables + (Decl("d", "double"),)), "needs fp64"),
    "local size not dividing": (_breach(global_size=(6,), local_size=(4,)), "dividing"),
    "float sqrt without the option": (_breach(variables=_hand().variables + (Decl("d", "float"),),
                                              body=(Assign("d", Call("sqrt", (Const("float", 0),), "float")),)),
                                      "only in a program built with -cl-fp32-correctly-rounded-divide-sqrt"),
}


@pytest.mark.parametrize("name", list(BREACHES))
def test_validator_rejects_each_breach_with_its_reason(name):
    program, reason = BREACHES[name]
    with pytest.raises(InvalidProgram, match=reason):
        check(program)


def test_pointer_rules():
    f = Function("h", (), (PointerParam("p", "uint"), PointerParam("q", "uint")), (), (), U(0))
    base = replace(_hand(), functions=(f,), variables=_hand().variables + (Decl("t", "uint"),))
    check(replace(base, body=(Invoke("h", (), (Pointer("s"), Pointer("t"))),)))
    with pytest.raises(InvalidProgram, match="distinct objects"):
        check(replace(base, body=(Invoke("h", (), (Pointer("s"), Pointer("s"))),)))
    g = Function("g", (), (PointerParam("q", "uint", 3),), (), (), U(0))
    arrays = (Array("pa", "uint", 4, "private", (0, 1, 2, 3)),)
    ok = replace(base, functions=(g,), arrays=arrays, body=(Invoke("g", (), (Pointer("pa", 1, True),)),))
    check(ok)
    with pytest.raises(InvalidProgram, match="in bounds"):
        check(replace(ok, body=(Invoke("g", (), (Pointer("pa", 2, True),)),)))


@settings(max_examples=300, deadline=None)
@given(flow_programs())
def test_every_drawn_program_is_valid(program):
    check(program)
    assert "#pragma OPENCL FP_CONTRACT OFF" in emit(program)


@settings(max_examples=12, deadline=None)
@given(flow_programs())
def test_interpreter_agrees_with_the_host_c_build(program):
    """Every output lane's bits, NaN for NaN; the host build runs without undefined behaviour."""
    expected = interpret(program)
    host = run_host(program)
    for o in program.outputs:
        e, h = expected[o.name], host[o.name]
        nan = e.nan & np.isnan(h.view(np.float32)) if o.type == "float" else np.zeros(len(h), bool)
        assert ((e.bits == h) | nan).all(), (o.name, np.nonzero((e.bits != h) & ~nan)[0][:4])
