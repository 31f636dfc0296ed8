"""The spirv area's corner sweep (lang.corners.spirv): every SPIR-V-only form on every type the
campaign's devices take, one statement per corner or per group of corners its lanes cover.

Operands are input buffers whose lanes are listed exactly (``Fill.values``): a remainder's lanes
run through dividends -7, 0 and 7 against divisors -3 and 3 (every sign pair; unsigned types the
non-negative ones), an extended-arithmetic statement's lanes hold one operand pair whose exact
result leaves the type (MAX + 1, 0 - 1, MAX * 2, MIN * -1) and one whose result does not; the other
forms' corners are their shapes and attributes (bitcast type pairs, shuffle widths with an undefined
component, each comparison of OpSelect and OpAny/OpAll, ordered and unordered on floats) over
lanes of ordinary values. Programs hold ``policy.statements`` statements; the types follow the
capabilities (double with fp64, half with fp16, long and ulong with int64).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from fuzz.strategies.conversions import Caps
from lang.corners.spirv import (
    SIGNS_X,
    SIGNS_Y,
    TYPES,
    VECTORS,
    bitcast_pairs,
    extended_types,
    rem_modes,
    signs,
)
from lang.ir import Buffer, Fill, Load, Op, Program, Store, type_needs
from lang.ops import COMPARES, EXTENDED
from lang.policy import Policy
from lang.types import Type, scalar

GLOBAL_SIZE = 64
SIGN_VALUES = {"-": -7, "0": 0, "+": 7}
DIVISOR_VALUES = {"-": -3, "+": 3}


Build = Callable[["_Statements"], None]


def _bits(values: list[float | int], tname: str) -> tuple[int, ...]:
    s = scalar(tname)
    return tuple(int(b) for b in np.array(values, dtype=s.dtype).view(s.bits_dtype))


def _ordinary(tname: str) -> tuple[int, ...]:
    return _bits([1, 2, 3, 5, 0, 7, 4, 6] if scalar(tname).is_int else [1.5, -2.0, 0.0, 3.25, -0.5, 8.0, 1.5, 2.0],
                 tname)


class _Statements:
    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self.body: list[Store] = []

    def load(self, t: Type, values: tuple[int, ...]) -> Load:
        name = f"in{sum(b.role == 'in' for b in self.buffers)}"
        self.buffers.append(Buffer(name, t, "in", Fill(0, (), values=values)))
        return Load(name, t)

    def store(self, op: Op) -> None:
        name = f"out{len(self.body)}"
        self.buffers.append(Buffer(name, op.type, "out"))
        self.body.append(Store(name, op))


def _lane_pairs(t: Type, xs: list, ys: list) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Operand lanes of a ``t`` statement: pair ``k`` in every lane of work-item ``k`` (cycling)."""
    w = t.mem_lanes
    x = _bits([v for v in xs for _ in range(w)], t.scalar)
    y = _bits([v for v in ys for _ in range(w)], t.scalar)
    return x, y


def _bitcast(a: Type, b: Type) -> Build:
    return lambda s: s.store(Op("bitcast", (s.load(a, _ordinary(a.scalar)),), b))


def _shuffle(t: str, same: bool, wr: int) -> Build:
    wa, wb = (4, 4) if same else (2, 8)
    comps = tuple([-1] + [k % (wa + wb) for k in range(1, wr)])  # the first component undefined
    return lambda s: s.store(Op("vector_shuffle", (s.load(Type(t, wa), _ordinary(t)), s.load(Type(t, wb), _ordinary(t))),
                                Type(t, wr), (("components", comps),)))


def _rem(t: str, mode: str) -> Build:
    pairs = [(SIGN_VALUES[x], DIVISOR_VALUES[y]) for x in signs(t, SIGNS_X) for y in signs(t, SIGNS_Y)]
    vt = Type(t, 4)
    xs, ys = _lane_pairs(vt, [p[0] for p in pairs], [p[1] for p in pairs])
    return lambda s: s.store(Op("rem", (s.load(vt, xs), s.load(vt, ys)), vt, (("mode", mode),)))


def _rotated(t: str, k: int) -> tuple[int, ...]:
    values = _ordinary(t)
    return values[k:] + values[:k]


def _select(t: str, attrs: tuple) -> Build:
    vt = Type(t, 4)
    return lambda s: s.store(Op("op_select", tuple(s.load(vt, _rotated(t, k)) for k in range(4)), vt, attrs))


def _reduce(t: str, attrs: tuple, reduce: str) -> Build:
    vt = Type(t, 4)
    return lambda s: s.store(Op("reduce", (s.load(vt, _rotated(t, 0)), s.load(vt, _rotated(t, 1))), Type("int"),
                                tuple(sorted(attrs + (("reduce", reduce),)))))


def _extended(t: str, opcode: str, member: int) -> Build:
    """Two work-items: an operand pair whose exact result leaves the type, then one within it."""
    s_ = scalar(t)
    top = (1 << (s_.bits - 1)) - 1 if s_.signed else (1 << s_.bits) - 1
    least = -(1 << (s_.bits - 1)) if s_.signed else 0
    over = {"IAddCarry": (top, 1), "ISubBorrow": (0, 1), "UMulExtended": (top, 2), "SMulExtended": (least, -1)}[opcode]
    vt = Type(t, 2)
    xs, ys = _lane_pairs(vt, [over[0], 1], [over[1], 1])
    return lambda s: s.store(Op("extended", (s.load(vt, xs), s.load(vt, ys)), vt,
                                (("member", member), ("opcode", opcode))))


def _builders(types: tuple[str, ...]) -> list[Build]:
    out = [_bitcast(a, b) for a, b in bitcast_pairs(types)]
    for t in types:
        out += [_shuffle(t, same, wr) for same in (True, False) for wr in VECTORS]
        out += [_rem(t, mode) for mode in rem_modes(t)]
        for compare in COMPARES:
            for ordered in ((True, False) if scalar(t).is_float else (None,)):
                attrs = tuple(sorted((("compare", compare),) + ((("ordered", ordered),) if ordered is not None else ())))
                out += [_select(t, attrs)] + [_reduce(t, attrs, r) for r in ("any", "all")]
    out += [_extended(t, opcode, member) for opcode in EXTENDED for t in extended_types(opcode) if t in types
            for member in (0, 1)]
    return out


def spirv_sweep(caps: Caps, policy: Policy) -> list[Program]:
    """The spirv sweep (module docstring): deterministic for given capabilities."""
    types = tuple(t for t in TYPES if t in caps.scalars(frozenset({"fp64"})))
    builders = _builders(types)
    programs = []
    for start in range(0, len(builders), policy.statements):
        s = _Statements()
        for build in builders[start:start + policy.statements]:
            build(s)
        program = Program(tuple(s.buffers), tuple(s.body), GLOBAL_SIZE, area="spirv")
        programs.append(Program(program.buffers, program.body, GLOBAL_SIZE, requires=type_needs(program), area="spirv"))
    return programs
