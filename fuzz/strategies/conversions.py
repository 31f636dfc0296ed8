"""Hypothesis strategies for conversion programs (OpenCL C 3.0 §6.4).

``conversion_programs(caps, policy)`` draws whole programs: ``policy.statements`` statements,
each an explicit ``convert_T[_sat][_rnd]``, a cast, an ``as_T``, an assignment conversion or a
mixed-type arithmetic expression, over every scalar type the capabilities allow and widths
1, 2, 3, 4, 8, 16. Operands are input buffers (filled from edge-value pools) or literals.
Only constructs the spec defines are built: ``_sat`` only with integer destinations, ``as_T``
only between types of the same size, mixed arithmetic only where no signed overflow is possible
for any operand values, casts only scalar -> scalar or scalar -> vector.

Structural choices (statement kinds, types, widths, rounding, saturation, operand kinds) follow
the policy's probabilities exactly: they come from a ``random.Random`` that Hypothesis seeds
(``st.randoms(use_true_random=True)``), because Hypothesis's own integer draws lean toward small
values. Values (pools, literals, fill seeds) are Hypothesis draws, edge-biased, and shrink toward
fewer pool values and simpler edge values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from hypothesis import strategies as st

from fuzz.strategies.values import pools, values
from lang.constructs import requirements
from lang.ir import Buffer, Expr, Fill, Literal, Load, Op, Program, Store, walk
from lang.ops import ROUNDINGS, Handlers
from lang.policy import Policy
from lang.types import SCALARS, VECTOR_WIDTHS, Type, common_type, scalar
from oracles import arith_is_defined


@dataclass(frozen=True)
class Caps:
    """What the targets of a campaign can take (from their fingerprints)."""

    fp64: bool = False
    fp16: bool = False
    int64: bool = True
    atomics: frozenset[str] = frozenset()  # atomics capabilities some target has (fuzz.drivers.probe)
    images: tuple[frozenset[tuple[str, str]], ...] = ()  # per device with images: its (kind, format) pairs
    cr_divide_sqrt: bool = False  # a device has CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT for float
    versions: frozenset[str] = frozenset()  # OpenCL C versions some target builds (lang.ops C_VERSIONS: "cl2.0")
    features: frozenset[str] = frozenset()  # optional features some target has (lang.shapes.NEEDS)
    launches: frozenset[str] = frozenset()  # flow launch requirements some target meets (lang.flow_launch)

    def scalars(self, requires: frozenset[str]) -> tuple[str, ...]:
        have = {"fp64": self.fp64 and "fp64" in requires, "fp16": self.fp16 and "fp16" in requires,
                "int64": self.int64}
        return tuple(n for n, s in SCALARS.items() if s.needs is None or have.get(s.needs, False))


@dataclass
class Builder:
    """State while drawing one program: buffer naming and the scalar types in use."""

    draw: Callable
    rnd: random.Random
    policy: Policy
    types: tuple[str, ...]
    versions: frozenset[str] = frozenset()  # Caps.versions: operations of later OpenCL C versions allowed
    buffers: list[Buffer] = field(default_factory=list)

    def name(self, prefix: str) -> str:
        return f"{prefix}{sum(b.role == ('in' if prefix == 'in' else 'out') for b in self.buffers)}"

    def chance(self, p: float) -> bool:
        return self.rnd.random() < p

    def scalar_type(self, among: tuple[str, ...] | None = None) -> str:
        return self.rnd.choice(among or self.types)

    def width(self) -> int:
        return self.rnd.choice(VECTOR_WIDTHS[1:]) if self.chance(self.policy.p_vector) else 1

    def operand(self, t: Type) -> Expr:
        """A buffer load (filled from an edge-value pool; sometimes one the program already reads)
        or a literal of type ``t``."""
        if self.chance(self.policy.p_literal_operand):
            return Literal(t, tuple(self.draw(values(t.scalar)) for _ in range(t.width)))
        same = [b.name for b in self.buffers if b.role == "in" and b.type == t]
        if same and self.chance(self.policy.p_reuse_input):  # x op x: what common-subexpression passes see
            return Load(self.rnd.choice(same), t)
        return self.load(t)

    def load(self, t: Type) -> Load:
        """A load of a new input buffer of type ``t``, filled from an edge-value pool."""
        fill = Fill(self.draw(st.integers(0, 2**32 - 1)), self.draw(pools(t.scalar, self.policy.pool_max)))
        b = Buffer(self.name("in"), t, "in", fill)
        self.buffers.append(b)
        return Load(b.name, t)

    def draw_values(self, name: str, k: int) -> list[int]:
        """``k`` edge-biased values of the integer type ``name`` (as numbers, not bits)."""
        s = scalar(name)
        return [v - (1 << s.bits) if s.signed and v >> (s.bits - 1) else v
                for v in (self.draw(values(name)) for _ in range(k))]

    def output(self, t: Type) -> str:
        b = Buffer(self.name("out"), t, "out")
        self.buffers.append(b)
        return b.name


BUILDERS: Handlers[Callable[[Builder], Store]] = Handlers()
"""The statement builders of the conversions area, by statement kind (the other areas add theirs
to these in their own tables)."""
builds = BUILDERS.register


def _convert_expr(b: Builder, dst: Type, depth: int = 0) -> Expr:
    src = dst.with_scalar(b.scalar_type())
    if depth == 0 and b.chance(b.policy.p_nested):
        arg = _convert_expr(b, src, depth + 1)
    else:
        arg = b.operand(src)
    attrs = {}
    if scalar(dst.scalar).is_int and b.chance(b.policy.p_sat):
        attrs["sat"] = True
    if b.chance(b.policy.p_rounding):
        attrs["rounding"] = b.rnd.choice(ROUNDINGS)
    return Op("convert", (arg,), dst, tuple(sorted(attrs.items())))


@builds("convert")
def _convert(b: Builder) -> Store:
    """convert_T[_sat][_rnd] of an n-lane operand to n lanes of T (§6.4.3)."""
    dst = Type(b.scalar_type(), b.width())
    return Store(b.output(dst), _convert_expr(b, dst))


@builds("cast")
def _cast(b: Builder) -> Store:
    """(T)x or (Tn)x of a scalar x (§6.4.2: vector-to-vector casts are illegal)."""
    dst = Type(b.scalar_type(), b.width())
    arg = b.operand(Type(b.scalar_type()))
    return Store(b.output(dst), Op("cast", (arg,), dst))


@builds("as")
def _as(b: Builder) -> Store:
    """as_T between types of equal size: same lane count, or 4 lanes to 3 (§6.4.4)."""
    src_s = b.scalar_type()
    same_size = tuple(n for n in b.types if scalar(n).bits == scalar(src_s).bits)
    dst_s = b.scalar_type(same_size)
    if b.chance(0.2):
        src, dst = Type(src_s, 4), Type(dst_s, 3)
    else:
        w = b.width()
        src, dst = Type(src_s, w), Type(dst_s, w)
    return Store(b.output(dst), Op("as", (b.operand(src),), dst))


@builds("assign")
def _assign(b: Builder) -> Store:
    """An implicit conversion by assignment: scalar to scalar, or scalar to vector (§6.4.1)."""
    dst = Type(b.scalar_type(), b.width())
    return Store(b.output(dst), b.operand(Type(b.scalar_type())))


@builds("arith")
def _arith(b: Builder) -> Store:
    """x op y on two scalars of different types, only where every operand pair is defined."""
    operator = b.rnd.choice(("+", "-", "*"))
    x = b.scalar_type()
    # float is always a partner: a floating common type is always defined
    y = b.scalar_type(tuple(y for y in b.types if arith_is_defined(operator, x, y)))
    t = Type(common_type(x, y))
    op = Op("arith", (b.operand(Type(x)), b.operand(Type(y))), t, (("operator", operator),))
    return Store(b.output(t), op)


def conversion_kinds(policy: Policy) -> list[tuple[str, int]]:
    return [("convert", policy.w_convert), ("cast", policy.w_cast), ("as", policy.w_as),
            ("assign", policy.w_assign), ("arith", policy.w_arith)]


def program_of(draw, caps: Caps, policy: Policy, kinds: list[tuple[str, int]], area: str,
               builders: dict[str, Callable[[Builder], Store]]) -> Program:
    """One program of ``policy.statements`` statements, each built by the builder (of
    ``builders``, by statement kind) of a kind drawn with the given weights (what every area's
    strategy shares)."""
    if policy.statements < 1 or policy.global_size < 1:
        raise ValueError("policy.statements and policy.global_size must be at least 1")
    rnd = draw(st.randoms(use_true_random=True))
    requires = set()
    if caps.fp64 and rnd.random() < policy.p_fp64:
        requires.add("fp64")
    if caps.fp16 and rnd.random() < policy.p_fp16:
        requires.add("fp16")
    types = caps.scalars(frozenset(requires))
    if not caps.int64:
        types = tuple(t for t in types if scalar(t).needs != "int64")
    b = Builder(draw, rnd, policy, types, caps.versions)
    names, weights = zip(*kinds)
    body = [builders[rnd.choices(names, weights)[0]](b) for _ in range(policy.statements)]
    used = {n.type.scalar for s in body for n in walk(s.value)} | {bb.type.scalar for bb in b.buffers}
    needs = {scalar(n).needs for n in used} - {None, "int64"}
    needs |= set().union(*(requirements(statement.value) for statement in body))  # OpenCL C versions
    return Program(tuple(b.buffers), tuple(body), policy.global_size, requires=frozenset(needs), area=area)


@st.composite
def conversion_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Whole conversion programs of ``policy.statements`` statements (see the module docstring)."""
    return program_of(draw, caps, policy, conversion_kinds(policy), "conversions", BUILDERS)
