"""Structs in flow programs (lang.flow_structs): hand-worked kernels (a struct through a loop and
a branch, a by-value copy the callee's writes leave unchanged, a by-pointer write the caller sees,
a returned struct) against values worked out by hand, in the interpreter and in the host C build;
their SPIR-V modules spirv-val clean in both control flow forms; the validator's struct rules;
the JSON form; and drawn programs with structs agreeing with the host C build."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import replace

import numpy as np
import pytest

from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as emit_spirv
from fuzz.emit.validate import validate
from fuzz.strategies.flow import generate
from lang.flow import Assign, Bin, Cast, Const, Decl, FlowProgram, If, Item, Loop, Output, Var
from lang.flow_rules import check
from lang.flow_structs import SInvoke, Struct, StructFunction, StructParam, StructVar
from lang.flow_tree import statements
from lang.nodes import InvalidProgram
from lang.shapes import CFGS
from oracles.flow import interpret
from tests.flow_host import run_host
from triage.reduce.flow import reduce_flow

GID = Item("global_id", 0)
ONE_F, TWO_F = 0x3F800000, 0x40000000


def _program(body, struct_vars, outputs, functions=(), structs=None) -> FlowProgram:
    structs = structs or (Struct("P", (Decl("a", "int"), Decl("b", "uchar"), Decl("f", "float"))),
                          Struct("Q", (Decl("x", "uint"), Decl("y", "short"))))
    return FlowProgram((), tuple(Output(f"o{i}", v, t) for i, (v, t) in enumerate(outputs)), (), (), (), body,
                       (4,), (2,), structs=structs, struct_vars=struct_vars, struct_functions=functions)


def _through_a_loop() -> FlowProgram:
    """s = {1, 250, 1.0f}; for i in 0..3: s.a += i; s.b += 3; s.f *= 2; if (gid & 1) s.a += 100; s.a += gid."""
    a, b, f = Var("s.a", "int"), Var("s.b", "uchar"), Var("s.f", "float")
    loop = Loop("for", "i", Const("uint", 0), Const("uint", 4), 8, 1, False, (
        Assign("s.a", Bin("sadd", a, Var("i", "int"), "int")),
        Assign("s.b", Cast("uchar", Bin("add", b, Const("uchar", 3), "int"))),
        Assign("s.f", Bin("mul", f, Const("float", TWO_F), "float"))))
    branch = If(Bin("and", GID, Const("uint", 1), "uint"), (Assign("s.a", Bin("sadd", a, Const("int", 100), "int")),))
    body = (loop, branch, Assign("s.a", Bin("sadd", a, Cast("int", GID), "int")))
    return _program(body, (StructVar("s", "P", (1, 250, ONE_F)),), [("s.a", "int"), ("s.b", "uchar"), ("s.f", "float")])


def _calls() -> FlowProgram:
    """h(k, struct Q v, private struct Q *w) { v.x += k; v.y *= 2; w->x *= 3; w->y += v.y; return v; }
    and g(k) { struct Q t = {1, 7}; for i in 0..2: t.x += k; t.y += i; return t; };
    a = {5, -3}, b = {10, 20}: r = h(100, a, &b); c = g(gid)."""
    vx, vy, wx, wy = Var("v.x", "uint"), Var("v.y", "short"), Var("w.x", "uint"), Var("w.y", "short")
    h = StructFunction("h", (Decl("k", "uint"),), (StructParam("v", "Q"), StructParam("w", "Q", True)), (), (), (
        Assign("v.x", Bin("add", vx, Var("k", "uint"), "uint")),
        Assign("v.y", Cast("short", Bin("mul", vy, Const("short", 2), "int"))),
        Assign("w.x", Bin("mul", wx, Const("uint", 3), "uint")),
        Assign("w.y", Cast("short", Bin("add", wy, vy, "int")))), "v", noinline=True)
    tx, ty = Var("t.x", "uint"), Var("t.y", "short")
    g = StructFunction("g", (Decl("k", "uint"),), (), (), (StructVar("t", "Q", (1, 7)),), (
        Loop("while", "i", Const("uint", 0), Const("uint", 3), 4, 1, False, (
            Assign("t.x", Bin("add", tx, Var("k", "uint"), "uint")),
            Assign("t.y", Cast("short", Bin("add", ty, Cast("short", Var("i", "int")), "int"))))),), "t")
    body = (SInvoke("h", (Const("uint", 100),), ("a", "b"), "r"), SInvoke("g", (GID,), (), "c"))
    variables = tuple(StructVar(n, "Q", init) for n, init in (("a", (5, -3)), ("b", (10, 20)), ("r", (0, 0)),
                                                           ("c", (0, 0))))
    outputs = [(f"{v}.{m}", t) for v in "abrc" for m, t in (("x", "uint"), ("y", "short"))]
    return _program(body, variables, outputs, (h, g))


def _bits(values, t: str) -> list[int]:
    return list(np.array(values, t).view(f"u{np.dtype(t).itemsize}"))


HAND = {
    "loop": (_through_a_loop, [_bits([7, 108, 9, 110], "int32"), [6] * 4, [0x41800000] * 4]),
    "calls": (_calls, [[5] * 4, _bits([-3] * 4, "int16"), [30] * 4, [14] * 4, [105] * 4, _bits([-6] * 4, "int16"),
                       [1, 4, 7, 10], [10] * 4]),
}


@pytest.mark.parametrize("name", HAND)
def test_hand_worked_kernels(name):
    make, want = HAND[name]
    p = make()
    check(p)
    got = interpret(p)
    assert [list(got[o.name].bits) for o in p.outputs] == want
    host = run_host(p)
    assert [list(host[o.name]) for o in p.outputs] == want
    text = emit(p)
    assert "struct Q {" in text or "struct P {" in text
    if name == "calls":
        assert "static struct Q h(uint k, struct Q v, private struct Q *w)" in text and "r = h(((uint)100U), a, &b);" in text
        assert "(*w).x" in text


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")
@pytest.mark.parametrize("name", HAND)
def test_hand_worked_modules_are_valid_in_both_forms(name):
    for cfg in CFGS:
        assert validate(emit_spirv(replace(HAND[name][0](), cfg=cfg)), "opencl1.2") is None


def test_json_form_round_trips():
    p = _calls()
    assert FlowProgram.from_json(p.to_json()) == p
    bare = replace(p, structs=(), struct_vars=(), struct_functions=(), body=(), outputs=())
    keys = set(json.loads(bare.to_json()))  # programs without structs keep their JSON and their id
    assert {"structs", "struct_vars", "struct_functions"}.isdisjoint(keys) and "variables" in keys


BREACHES = {
    "member of no struct": lambda p: replace(p, body=(Assign("s.z", Const("int", 0)),)),
    "struct of no type": lambda p: replace(p, struct_vars=(StructVar("s", "Z", (1,)),)),
    "init count": lambda p: replace(p, struct_vars=(StructVar("s", "P", (1, 2)),)),
    "init range": lambda p: replace(p, struct_vars=(StructVar("s", "P", (1, 256, 0)),)),
    "long member without int64": lambda p: replace(p, structs=(Struct("P", (Decl("a", "long"),)),),
                                                   struct_vars=(StructVar("s", "P", (0,)),), body=(), outputs=()),
    "reserved tag": lambda p: replace(p, structs=(*p.structs, Struct("wi", (Decl("a", "int"),)))),
}


@pytest.mark.parametrize("name", BREACHES)
def test_validator_rejects_struct_breaches(name):
    with pytest.raises(InvalidProgram):
        check(BREACHES[name](_through_a_loop()))


def test_call_rules():
    p = _calls()
    same = replace(p, body=(SInvoke("h", (Const("uint", 1),), ("a", "a"), "r"),))
    wrong_type = replace(p, body=(SInvoke("h", (Const("int", 1),), ("a", "b"), "r"),))
    into_pointer = replace(p, body=(SInvoke("h", (Const("uint", 1),), ("a", "b"), "b"),))
    float_in_helper = replace(p, structs=(Struct("Q", (Decl("x", "uint"), Decl("y", "float"))),),
                              struct_vars=tuple(replace(v, init=(5, 0)) for v in p.struct_vars), outputs=())
    for bad in (same, wrong_type, into_pointer, float_in_helper):
        with pytest.raises(InvalidProgram):
            check(bad)


def with_structs(n: int) -> list[FlowProgram]:
    found, seed = [], 0
    while len(found) < n:
        p = generate(random.Random(seed))
        seed += 1
        if p.struct_functions:
            found.append(p)
    return found


@pytest.mark.parametrize("p", with_structs(6), ids=lambda p: p.id[:8])
def test_drawn_programs_with_structs_agree_with_the_host_c_build(p):
    check(p)
    got = interpret(p)
    host = run_host(p)
    for o in p.outputs:
        g = got[o.name]
        same = (g.bits == host[o.name]) | g.nan | g.flushable
        assert same.all(), (o, g.bits, host[o.name], emit(p))


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")
def test_drawn_programs_with_structs_give_valid_modules():
    for p in with_structs(20):
        for cfg in CFGS:
            assert validate(emit_spirv(replace(p, cfg=cfg)), "opencl1.2") is None, p


def test_reducer_keeps_a_struct_call_and_drops_the_rest():
    """Structural reduction on a drawn program with structs: every candidate is defined, and the
    smallest program that still calls a struct helper keeps that one call at the top level."""
    p = with_structs(1)[0]

    def calls(q: FlowProgram) -> bool:
        check(q)
        return any(isinstance(s, SInvoke) for s in statements(q.body))

    r = reduce_flow(p, calls, budget_s=60)
    assert calls(r.reduced) and len(r.reduced.body) == 1 and len(r.reduced.outputs) == 1
    assert isinstance(r.reduced.body[0], SInvoke) and r.reduced.body[0].var == ""  # the result dropped too
    assert all(f.body == () and not f.noinline for f in r.reduced.struct_functions)  # helpers' bodies reduced too
