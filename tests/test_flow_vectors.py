"""Vector values of flow programs (lang.flow_vectors): hand-worked kernels whose values are
computed by hand from OpenCL C 3.0.19 (§6.3.7 components, §6.15.13 shuffle, §6.15.6 select)
against the interpreter, the host-C build and spirv-val; the validator's rules one by one; drawn
programs with vectors against the host-C build (an independent evaluation), through JSON, the
SPIR-V validator and the reducer."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace

import numpy as np
import pytest

from fuzz.emit.opencl_flow import emit
from fuzz.emit.spirv.flow_kernel import emit as spirv
from fuzz.emit.validate import validate
from fuzz.strategies.flow import generate
from lang.flow import Assign, Bin, Cast, Const, Decl, FlowProgram, Item, Loop, Output, Var
from lang.flow_rules import check
from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, VBin, VCall, Vec, VSelect, is_vector
from lang.nodes import InvalidProgram
from lang.shapes import CFGS
from oracles.flow import interpret
from tests.flow_host import run_host
from triage.reduce.flow import reduce_flow

GID = Item("global_id", 0)
V = Var("v", "uint4")


def _vec(t: str, *values: int) -> Vec:
    return Vec(t, tuple(Const(t.rstrip("0123456789"), x) for x in values))


def _reads(name: str, t: str, n: int) -> tuple[tuple[Decl, ...], tuple[Assign, ...], tuple[Output, ...]]:
    """One scalar per component of vector ``name`` and its output ``o_<name><k>``."""
    e = t.rstrip("0123456789")
    decls = tuple(Decl(f"{name}{k}", e) for k in range(n))
    reads = tuple(Assign(f"{name}{k}", Swizzle(Var(name, t), (k,), "s", e)) for k in range(n))
    return decls, reads, tuple(Output(f"o_{name}{k}", f"{name}{k}", e) for k in range(n))


def hand() -> FlowProgram:
    """Four work-items.

    * ``v`` (uint4): a loop of 4 iterations ``v.yzw = v.xyz; v.x = i + gid``: (3+g, 2+g, 1+g, g);
    * ``s`` (uint4): ``shuffle((10, 11, 12, 13), (5, 0xFFFFFFFF, 6, 3))``: the low 2 bits 1, 3, 2, 3
      pick (11, 13, 12, 13); ``t`` (uint2): ``shuffle2`` of that and (20, 21, 22, 23) by (9, 4):
      the low 3 bits 1, 4 pick (13, 20);
    * ``c`` (char4): ``select((1, 2, 3, 4), (-1, -2, -3, -4), (-128, 127, -1, 0))``: the MSB is set
      in -128 and -1: (-1, 2, -3, 4); ``u`` (char4) with c as uchar (0x80, 0x7F, 0xFF, 0x00) and
      then ``u.hi = add_sat(u.lo, (char2)(127, 127))``: (-1, 2, 126, 127);
    * ``z`` (uint8): z.odd = v, z.even = s.wzyx: (13, 3+g, 12, 2+g, 13, 1+g, 11, g).
    """
    loop = Loop("for", "i", Const("uint", 0), Const("uint", 4), 8, 1, False, (
        SwizzleStore("v", (1, 2, 3), "xyzw", Swizzle(V, (0, 1, 2), "xyzw", "uint3")),
        SwizzleStore("v", (0,), "s", Bin("add", Cast("uint", Var("i", "int")), GID, "uint")),
    ))
    s = Shuffle(_vec("uint4", 10, 11, 12, 13), None, _vec("uint4", 5, 0xFFFFFFFF, 6, 3), "uint4")
    t = Shuffle(Var("s", "uint4"), _vec("uint4", 20, 21, 22, 23), _vec("uint2", 9, 4), "uint2")
    a, b = _vec("char4", 1, 2, 3, 4), _vec("char4", -1, -2, -3, -4)
    body = (loop, Assign("s", s), Assign("t", t),
            Assign("c", VSelect(a, b, _vec("char4", -128, 127, -1, 0))),
            Assign("u", VSelect(a, b, _vec("uchar4", 0x80, 0x7F, 0xFF, 0))),
            SwizzleStore("u", (2, 3), "hi", VCall("add_sat", (Swizzle(Var("u", "char4"), (0, 1), "lo", "char2"),
                                                               _vec("char2", 127, 127)), "char2")),
            SwizzleStore("z", (1, 3, 5, 7), "odd", V),
            SwizzleStore("z", (0, 2, 4, 6), "even", Swizzle(Var("s", "uint4"), (3, 2, 1, 0), "s", "uint4")))
    vectors = (("v", "uint4", 4), ("s", "uint4", 4), ("t", "uint2", 2), ("c", "char4", 4), ("u", "char4", 4),
               ("z", "uint8", 8))
    parts = [_reads(*x) for x in vectors]
    return FlowProgram((), sum((o for _, _, o in parts), ()),
                       tuple(Decl(n, t) for n, t, _ in vectors) + sum((d for d, _, _ in parts), ()), (), (),
                       body + sum((r for _, r, _ in parts), ()), (4,), (2,))


def _values(out: dict, name: str, n: int, dtype=np.uint32) -> list[list[int]]:
    """Per work-item, the components of vector ``name``."""
    return np.stack([out[f"o_{name}{k}"].view(dtype) for k in range(n)], axis=1).tolist()


def test_hand_worked_vectors():
    p = hand()
    check(p)
    for out in (interpret(p), run_host(p)):
        out = {k: getattr(v, "bits", v) for k, v in out.items()}
        assert _values(out, "v", 4) == [[3 + g, 2 + g, 1 + g, g] for g in range(4)]
        assert _values(out, "s", 4) == [[11, 13, 12, 13]] * 4
        assert _values(out, "t", 2) == [[13, 20]] * 4
        assert _values(out, "c", 4, np.int8) == [[-1, 2, -3, 4]] * 4
        assert _values(out, "u", 4, np.int8) == [[-1, 2, 126, 127]] * 4
        assert _values(out, "z", 8) == [[13, 3 + g, 12, 2 + g, 13, 1 + g, 11, g] for g in range(4)]


def test_the_kernel_text_spells_each_construct():
    text = emit(hand())
    for piece in ("uint4 v = ((uint4)(((uint)0U)));", "v.yzw = (v).xyz;", "v.s0 = ", "shuffle(((uint4)(", "shuffle2(s, ",
                  "select(((char4)(", "u.hi = add_sat((u).lo, ", "z.odd = v;", "z.even = (s).s3210;"):
        assert piece in text, piece


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")
def test_the_modules_are_valid_in_both_forms():
    for cfg in CFGS:
        assert validate(spirv(replace(hand(), cfg=cfg)), "opencl1.2") is None


U4, C4 = _vec("uint4", 1, 2, 3, 4), _vec("char4", 1, 2, 3, 4)
BREACHES = {
    "signed components may overflow": Assign("c", VBin("add", C4, C4, "char4")),
    "each named once": SwizzleStore("v", (0, 0), "s", _vec("uint2", 1, 2)),
    "only vectors of up to four": Assign("v", Swizzle(Var("z", "uint8"), (0, 1, 2, 3), "xyzw", "uint4")),
    "its half exactly": Assign("t", Swizzle(V, (0, 2), "lo", "uint2")),
    "unsigned components": Assign("v", Shuffle(U4, None, _vec("int4", 1, 2, 3, 4), "uint4")),
    "inputs of one type of 2, 4, 8 or 16": Assign("v", Shuffle(_vec("uint3", 1, 2, 3), None, U4, "uint4")),
    "of a's size": Assign("v", VSelect(U4, U4, C4)),
    "vectors change only through": Assign("v", Bin("add", V, V, "uint4")),
    "one uint per component": Assign("v", Vec("uint4", (Const("uint", 1),) * 3)),
}


@pytest.mark.parametrize("reason", BREACHES)
def test_the_validator_rejects_each_breach(reason):
    p = hand()
    with pytest.raises(InvalidProgram, match=reason):
        check(replace(p, body=p.body + (BREACHES[reason],)))


def test_vectors_are_kernel_variables_only():
    p = hand()
    with pytest.raises(InvalidProgram, match="vectors are kernel variables only"):
        check(replace(p, outputs=p.outputs + (Output("o", "v", "uint4"),)))


def drawn(count: int) -> list[FlowProgram]:
    """The first ``count`` drawn programs with vectors."""
    found = (generate(random.Random(seed)) for seed in range(1000))
    return [p for p, _ in zip((p for p in found if any(is_vector(d.type) for d in p.variables)), range(count))]


def test_drawn_vectors_agree_with_the_host_c_build():
    for p in drawn(6):
        check(p)
        assert FlowProgram.from_json(p.to_json()) == p
        expected, host = interpret(p), run_host(p)
        for o in p.outputs:
            e, h = expected[o.name], host[o.name]
            assert ((e.bits == h) | e.nan).all(), (o.name, p.to_json())


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")
def test_drawn_vectors_give_valid_modules():
    for p in drawn(12):
        for cfg in CFGS:
            assert validate(spirv(replace(p, cfg=cfg)), "opencl1.2") is None


def test_the_reducer_shrinks_vector_programs():
    """A stand-in failure (``s.s0``, a shuffle's first component, is 11 on work-item 0 of the
    hand kernel) keeps the vectors that make it, and every candidate the reducer runs is valid."""
    def fails(q: FlowProgram) -> bool:
        check(q)
        out = interpret(q)
        return "o_s0" in out and out["o_s0"].bits[0] == 11
    result = reduce_flow(hand(), fails, budget_s=60)
    assert fails(result.reduced) and len(result.reduced.body) < len(hand().body)
