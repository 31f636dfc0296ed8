"""Strategies for the forms only SPIR-V expresses (``lang.ops`` area ``spirv``).

``spirv_programs(caps, policy)`` draws programs that mix the conversion statements with
OpBitcast across component counts, OpVectorShuffle with undefined components, OpSRem/OpSMod/
OpUMod/OpFRem/OpFMod, the extended-arithmetic instructions, OpSelect on Boolean vectors and
OpAny/OpAll. Such a program runs on the SPIR-V paths only (``lang.constructs.paths_of``). Only defined
forms are built: OpBitcast between equal total sizes whose component counts divide (never a
3-component vector), remainders through a divisor made safe in the program itself, OpAny/OpAll
on vectors.
"""

from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

from fuzz.strategies.conversions import BUILDERS, Builder, Caps, conversion_kinds, program_of
from lang.corners.spirv import VECTORS, bitcast_pairs
from lang.ir import Op, Program, Store
from lang.ops import COMPARES, EXTENDED, Handlers
from lang.policy import Policy
from lang.types import VECTOR_WIDTHS, Type, scalar

SPIRV_BUILDERS: Handlers[Callable[[Builder], Store]] = Handlers()
"""The statement builders of the forms only SPIR-V has, by statement kind."""
builds = SPIRV_BUILDERS.register


@builds("bitcast")
def _bitcast(b: Builder) -> Store:
    src, dst = b.rnd.choice(bitcast_pairs(b.types))
    return Store(b.output(dst), Op("bitcast", (b.operand(src),), dst))


@builds("vector_shuffle")
def _shuffle(b: Builder) -> Store:
    """Two vectors of one element type, any result width; at least one component undefined."""
    s = b.scalar_type()
    wa, wb, wr = (b.rnd.choice(VECTORS) for _ in range(3))
    comps = [-1 if b.chance(b.policy.p_undefined_component) else b.rnd.randrange(wa + wb) for _ in range(wr)]
    comps[b.rnd.randrange(wr)] = -1
    dst = Type(s, wr)
    op = Op("vector_shuffle", (b.operand(Type(s, wa)), b.operand(Type(s, wb))), dst, (("components", tuple(comps)),))
    return Store(b.output(dst), op)


@builds("rem")
def _rem(b: Builder) -> Store:
    t = Type(b.scalar_type(), b.width())
    mode = b.rnd.choice(("rem", "mod")) if t.elem.is_float or t.elem.signed else "mod"
    return Store(b.output(t), Op("rem", (b.operand(t), b.operand(t)), t, (("mode", mode),)))


@builds("extended")
def _extended(b: Builder) -> Store:
    opcode = b.rnd.choice(EXTENDED)
    signed = opcode == "SMulExtended"
    ints = tuple(n for n in b.types if scalar(n).is_int and scalar(n).signed == signed)
    t = Type(b.scalar_type(ints), b.width())
    attrs = (("member", b.rnd.randrange(2)), ("opcode", opcode))
    return Store(b.output(t), Op("extended", (b.operand(t), b.operand(t)), t, attrs))


def _comparison(b: Builder, width: int) -> tuple[tuple, tuple]:
    """Two operands of one type and the comparison's attributes."""
    t = Type(b.scalar_type(), width)
    attrs = [("compare", b.rnd.choice(COMPARES))]
    if t.elem.is_float:
        attrs.append(("ordered", b.chance(0.5)))
    return (b.operand(t), b.operand(t)), tuple(sorted(attrs))


@builds("op_select")
def _select(b: Builder) -> Store:
    width = b.rnd.choice(VECTOR_WIDTHS)
    (x, y), attrs = _comparison(b, width)
    t = Type(b.scalar_type(), width)
    return Store(b.output(t), Op("op_select", (x, y, b.operand(t), b.operand(t)), t, attrs))


@builds("reduce")
def _reduce(b: Builder) -> Store:
    (x, y), attrs = _comparison(b, b.rnd.choice(VECTORS))
    t = Type("int")
    return Store(b.output(t), Op("reduce", (x, y), t, tuple(sorted(attrs + (("reduce", b.rnd.choice(("any", "all"))),)))))


def _spirv_kinds(policy: Policy) -> list[tuple[str, int]]:
    return conversion_kinds(policy) + [("bitcast", policy.w_bitcast), ("vector_shuffle", policy.w_shuffle), ("rem", policy.w_rem),
                             ("extended", policy.w_extended), ("op_select", policy.w_select),
                             ("reduce", policy.w_reduce)]


@st.composite
def spirv_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Programs of conversions and SPIR-V-only forms (see the module docstring)."""
    return program_of(draw, caps, policy, _spirv_kinds(policy), "spirv", {**BUILDERS, **SPIRV_BUILDERS})
