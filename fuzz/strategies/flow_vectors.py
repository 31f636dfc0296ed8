"""Vector values for drawn flow programs (lang.flow_vectors), added to a program the flow
strategy (fuzz.strategies.flow) has built, from a random stream of their own drawn after every
other draw, so that a seed's program without them stays as it was.

One to three vector variables (element types of every width and signedness, ``float``; 2, 3,
4, 8 or 16 components) are changed by a loop nest of vector statements appended to the kernel
and by statements put at the end of some of the kernel's top-level loops, so that their values
pass through loops and branches: whole assignments of component-wise arithmetic (only the
defined forms, lang.flow_vector_rules), swizzle reads and writes, ``shuffle``/``shuffle2`` with
masks of data or of constants above the width, ``select``, and component reads into the
kernel's scalars. At the end every component of every vector is read into a scalar of its own,
an output, so every vector's value is observed.
"""

from __future__ import annotations

from dataclasses import replace

from lang.flow import Assign, Const, Decl, FlowProgram, If, Loop, Output, Var
from lang.flow_vector_rules import POWERS
from lang.flow_vectors import (
    NAMES,
    VBIN_OPS,
    VCALL_FNS,
    WIDTHS,
    Shuffle,
    Swizzle,
    SwizzleStore,
    VBin,
    VCall,
    Vec,
    VSelect,
    element,
    half,
    vector,
    width,
)
from lang.types import scalar

SHARE = 0.5
"""The share of drawn programs that get vectors."""
INTEGERS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")


class Vectors:
    """The vector statements of one program, drawn by ``gen`` (a fuzz.strategies.flow.Gen, its
    stream the vectors' own), which draws the scalar expressions over the kernel's ``scope``."""

    def __init__(self, gen, scope: dict) -> None:
        self.r, self.gen, self.scope = gen.r, gen, scope
        self.vectors: dict[str, str] = {}

    def scalar(self, t: str, depth: int = 1):
        return self.gen.expr(t, self.scope, depth)

    def expr(self, t: str, depth: int):
        """A vector expression of type ``t`` (or, ``t`` a scalar, a component read or a scalar)."""
        r, e, n = self.r, element(t), width(t)
        if n == 1:
            return self.read(t, depth) if r.random() < 0.6 else self.scalar(t)
        names = [v for v, vt in self.vectors.items() if vt == t]
        if depth <= 0 or r.random() < 0.2:
            if names and r.random() < 0.7:
                return Var(r.choice(names), t)
            return Vec(t, tuple(self.part(e) for _ in range(n)))
        d = depth - 1
        form = r.choice(("bin", "bin", "call", "swizzle", "swizzle", "shuffle", "select"))
        s = scalar(e)
        if form == "bin" or form == "call" and s.is_float:
            ops = ("add", "sub", "mul") if s.is_float else VBIN_OPS if not s.signed else ("and", "or", "xor")
            return VBin(r.choice(ops), self.expr(t, d), self.expr(t, d), t)
        if form == "call":
            return VCall(r.choice(VCALL_FNS), (self.expr(t, d), self.expr(t, d)), t)
        if form == "swizzle":
            w = r.choice(WIDTHS)  # a read may name a component more than once (§6.3.7)
            comps, spelling = self.components(w, n, distinct=False)
            return Swizzle(self.expr(vector(e, w), d), comps, spelling, t)
        if form == "shuffle" and n in POWERS:
            m = r.choice(POWERS)
            mask_type = vector(_unsigned(s.size), n)
            if r.random() < 0.5:  # constants, most above the width: only the low bits count
                limit = (1 << min(8 * s.size, 16)) - 1
                mask = Vec(mask_type, tuple(Const(element(mask_type), r.randint(0, limit)) for _ in range(n)))
            else:
                mask = self.expr(mask_type, d)
            x = self.expr(vector(e, m), d)
            return Shuffle(x, self.expr(vector(e, m), d) if r.random() < 0.5 else None, mask, t)
        c = vector(r.choice((_unsigned(s.size), _signed(s.size))), n)
        return VSelect(self.expr(t, d), self.expr(t, d), self.expr(c, d))

    def part(self, e: str):
        """A scalar part: often a small or negative constant (select's sign), else data."""
        if self.r.random() < 0.3 and scalar(e).is_int:
            s = scalar(e)
            return Const(e, self.r.choice((0, 1, 3, s.max, s.min)))
        return self.scalar(e)

    def read(self, t: str, depth: int):
        """One component of a vector of element ``t``."""
        w = self.r.choice(WIDTHS)
        comps, spelling = self.components(w, 1, distinct=True)
        return Swizzle(self.expr(vector(t, w), depth - 1), comps, spelling, t)

    def components(self, w: int, n: int, distinct: bool) -> tuple[tuple[int, ...], str]:
        """``n`` components of a vector of ``w`` and their spelling (§6.3.7)."""
        r = self.r
        if w in POWERS and n * 2 == w and r.random() < 0.4:
            spelling = r.choice(("lo", "hi", "even", "odd"))
            return half(spelling, w), spelling
        comps = tuple(r.sample(range(w), n)) if distinct else tuple(r.randrange(w) for _ in range(n))
        return comps, "xyzw" if w <= len(NAMES) and r.random() < 0.5 else "s"

    def statement(self, depth: int, work: int):
        r = self.r
        v = r.choice(list(self.vectors))
        t = self.vectors[v]
        kind = r.choice(("assign", "store", "store", "read") + (("if", "loop") if depth > 0 else ()))
        if kind == "assign":
            return Assign(v, self.expr(t, 2))
        if kind == "store":
            n = r.choice([k for k in (1, 2, 3, 4, 8) if k < width(t)] or [1])
            comps, spelling = self.components(width(t), n, distinct=True)
            return SwizzleStore(v, comps, spelling, self.expr(vector(element(t), n), 2))
        if kind == "read":
            targets = [s for s, st in self.scope["scalars"].items() if st == element(t) and s not in self.scope["counters"]]
            if not targets:
                return Assign(v, self.expr(t, 1))
            return Assign(r.choice(targets), self.read(element(t), 2))
        if kind == "if":
            return If(self.scalar("int", 2), self.block(depth - 1, work),
                      self.block(depth - 1, work) if r.random() < 0.5 else ())
        cap = r.choice([c for c in (1, 2, 3, 5, 8, 16) if c * work <= 64])
        counter = self.gen.name("vi")
        base, trips = self.scalar("uint"), self.scalar("uint")
        self.scope["scalars"][counter] = "int"
        self.scope["counters"].add(counter)
        body = self.block(depth - 1, work * cap)
        del self.scope["scalars"][counter]
        self.scope["counters"].discard(counter)
        return Loop(r.choice(("for", "while", "do")), counter, base, trips, cap, r.randint(1, 3), r.random() < 0.4, body)

    def block(self, depth: int, work: int) -> tuple:
        return tuple(self.statement(depth, work) for _ in range(self.r.randint(1, 3)))


def _unsigned(size: int) -> str:
    return {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}[size]


def _signed(size: int) -> str:
    return _unsigned(size)[1:]


def with_vectors(p: FlowProgram, gen, scope: dict) -> FlowProgram:
    """``p`` with vectors (the module docstring) in a share :data:`SHARE` of the draws of ``gen``
    (the strategy's Gen after ``p``, on a stream of its own: its names go on from ``p``'s)."""
    r = gen.r
    if r.random() >= SHARE:
        return p
    elements = [t for t in INTEGERS if "int64" in p.requires or scalar(t).bits < 64] + ["float"] * gen.floats
    v = Vectors(gen, scope)
    decls = []
    for _ in range(r.randint(1, 3)):
        t = vector(r.choice(elements), r.choice(WIDTHS))
        decls.append(Decl(gen.name("vec"), t, gen.const(element(t)).value))
        v.vectors[decls[-1].name] = t
    body = list(p.body)
    for i, s in enumerate(body):  # some top-level loops carry vector values too
        if isinstance(s, Loop) and r.random() < 0.5:
            body[i] = replace(s, body=s.body + v.block(0, 1))
    body += v.block(2, 1)
    reads, outputs = [], []
    for d in decls:
        for k in range(width(d.type)):
            c = Decl(gen.name("vc"), element(d.type), 0)
            spelling = "xyzw" if width(d.type) <= len(NAMES) and r.random() < 0.5 else "s"
            reads.append(c)
            body.append(Assign(c.name, Swizzle(Var(d.name, d.type), (k,), spelling, c.type)))
            outputs.append(Output(gen.name("out"), c.name, c.type))
    return replace(p, variables=p.variables + tuple(decls) + tuple(reads), body=tuple(body),
                   outputs=p.outputs + tuple(outputs))

