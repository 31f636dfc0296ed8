"""Floating point added to a drawn flow program (lang.flow_fp): ``double`` variables computed by
``+ - * / sqrt fma`` where some target has fp64, float ``/`` and ``sqrt`` in programs built with
-cl-fp32-correctly-rounded-divide-sqrt where some target reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
and casts between ``float`` and ``double``.

:func:`add_fp` takes a program fuzz.strategies.flow built and its own random stream (drawn after
everything else, so the rest of a seed's program stays as it was): it adds variables (each an
output), perhaps a ``double`` input, and assignments at random places of the kernel's body,
inside loops too (their values carried from iteration to iteration) and reading the counters.
"""

from __future__ import annotations

import random
from dataclasses import replace

from lang.flow import (
    ITEMS,
    Assign,
    Bin,
    Call,
    Cast,
    Const,
    Decl,
    Expr,
    FlowProgram,
    If,
    Input,
    Item,
    Load,
    Loop,
    Output,
    Select,
    Stmt,
    Var,
)
from lang.flow_fp import CR_OPTION
from lang.maths import CR_DIVIDE_SQRT
from lang.nodes import Fill

SHARE = 0.5
"""The share of programs that get floating point (where the targets can take it)."""
CONSTANTS = {
    "float": (0, 0x3F800000, 0xBF000000, 0x40490FDB, 0x3EAAAAAB, 0x7F7FFFFF, 0x00800000, 0x40000000),
    "double": (0, 0x3FF0000000000000, 0xBFE0000000000000, 0x400921FB54442D18, 0x3FD5555555555555,
               0x7FEFFFFFFFFFFFFF, 0x0010000000000000, 0x4000000000000000, 0x3CB0000000000000),
}
"""Normal or zero constants (lang.flow_rules): 0, 1, -0.5, pi, 1/3, the largest, the least normal, 2
(and 2**-52)."""
DOUBLE_EDGES = (0, 0x8000000000000000, 0x3FF0000000000000, 0x0000000000000001, 0x000FFFFFFFFFFFFF,
                0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xBFF0000000000000)
"""Edge values of a double input: zeros, 1, subnormals (kept, §7.2), infinities, a NaN, -1."""
NARROW = {"float": ("char", "uchar", "short", "ushort"), "double": ("char", "uchar", "short", "ushort", "int", "uint")}
"""Integer types a float type holds exactly (lang.flow_rules: integer to float casts)."""


class FpGen:
    """Floating-point expressions of one program (``types``: the float types it computes in;
    ``divide``: whether float ``/`` and ``sqrt`` are allowed)."""

    def __init__(self, rnd: random.Random, p: FlowProgram, types: tuple[str, ...], divide: bool) -> None:
        self.r, self.p, self.types, self.divide = rnd, p, types, divide
        self.vars: dict[str, str] = {}
        self.ints = {d.name: d.type for d in p.variables}
        self.inputs = [i for i in p.inputs if i.type in types]

    def const(self, t: str) -> Const:
        return Const(t, self.r.choice(CONSTANTS[t]))

    def index(self, counters: tuple[str, ...]) -> Expr:
        r = self.r
        if counters and r.random() < 0.5:
            return Cast("uint", Var(r.choice(counters), "int"))
        return Item(r.choice(ITEMS), r.randrange(3)) if r.random() < 0.7 else Const("uint", r.randrange(64))

    def leaf(self, t: str, counters: tuple[str, ...]) -> Expr:
        r = self.r
        choices = [lambda: self.const(t)]
        mine = [n for n, vt in self.vars.items() if vt == t]
        if mine:
            choices += [lambda: Var(r.choice(mine), t)] * 3
        ins = [i for i in self.inputs if i.type == t]
        if ins:
            choices += [lambda: Load(r.choice(ins).name, t, self.index(counters))] * 2
        ints = [(n, it) for n, it in self.ints.items() if it in NARROW[t]]
        ints += [(c, "int") for c in counters if "int" in NARROW[t]]
        if ints:
            choices.append(lambda: Cast(t, Var(*r.choice(ints))))
        other = [n for n, vt in self.vars.items() if vt != t]
        if other:
            choices.append(lambda: Cast(t, Var((n := r.choice(other)), self.vars[n])))  # widening or narrowing
        return r.choice(choices)()

    def expr(self, t: str, counters: tuple[str, ...], depth: int) -> Expr:
        r = self.r
        if depth <= 0 or r.random() < 0.2:
            return self.leaf(t, counters)
        d = depth - 1
        divide = t == "double" or self.divide
        form = r.randrange(10)
        if form == 0:
            return Call("fma", tuple(self.expr(t, counters, d) for _ in range(3)), t)
        if form == 1 and divide:
            return Call("sqrt", (self.expr(t, counters, d),), t)
        if form == 2:
            cond = Bin(r.choice(("lt", "eq", "gt")), self.index(counters), Const("uint", r.randrange(8)), "int")
            return Select(cond, self.expr(t, counters, d), self.expr(t, counters, d))
        if form == 3 and len(self.types) == 2:
            return Cast(t, self.expr("float" if t == "double" else "double", counters, d))
        ops = ("add", "sub", "mul") + ("div", "div") * divide
        return Bin(r.choice(ops), self.expr(t, counters, d), self.expr(t, counters, d), t)


def _slots(body: tuple[Stmt, ...], path: tuple = (), counters: tuple[str, ...] = ()):
    """Every place a statement can go: (path to the block, position, the loop counters in scope)."""
    for i in range(len(body) + 1):
        yield path, i, counters
    for i, s in enumerate(body):
        if isinstance(s, Loop):
            yield from _slots(s.body, (*path, (i, "body")), (*counters, s.var))
        elif isinstance(s, If):
            yield from _slots(s.then, (*path, (i, "then")), counters)
            yield from _slots(s.orelse, (*path, (i, "orelse")), counters)


def _insert(body: tuple[Stmt, ...], path: tuple, at: int, stmt: Stmt) -> tuple[Stmt, ...]:
    if not path:
        return body[:at] + (stmt,) + body[at:]
    (i, field), rest = path[0], path[1:]
    inner = _insert(getattr(body[i], field), rest, at, stmt)
    return body[:i] + (replace(body[i], **{field: inner}),) + body[i + 1:]


def add_fp(p: FlowProgram, rnd: random.Random, fp64: bool, cr: bool) -> FlowProgram:
    """``p`` with floating point added from ``rnd`` (the module docstring), or ``p`` itself."""
    if not (fp64 or cr) or rnd.random() >= SHARE:
        return p
    double = fp64 and (not cr or rnd.random() < 0.7)
    divide = cr and (not fp64 or rnd.random() < 0.5)
    types = ("float", "double") if double else ("float",)
    g = FpGen(rnd, p, types, divide)
    inputs = p.inputs
    if double and rnd.random() < 0.7:
        inputs += (Input("din1", "double", rnd.choice((1, 7, 16, 64)), Fill(rnd.getrandbits(32), DOUBLE_EDGES)),)
        g.inputs.append(inputs[-1])
    decls = []
    for k in range(rnd.randint(1, 3)):
        t = rnd.choice(types) if k else types[-1]  # the first of the program's widest type
        decls.append(Decl(f"dv{k + 1}", t, g.const(t).value))
        g.vars[decls[-1].name] = t
    body = p.body
    for _ in range(rnd.randint(2, 6)):
        path, at, counters = rnd.choice(list(_slots(body)))
        name = rnd.choice(decls).name
        body = _insert(body, path, at, Assign(name, g.expr(g.vars[name], counters, 3)))
    requires = p.requires | ({"fp64"} if double else set()) | ({CR_DIVIDE_SQRT} if divide else set())
    outputs = p.outputs + tuple(Output(f"dout{k + 1}", d.name, d.type) for k, d in enumerate(decls))
    return replace(p, inputs=inputs, outputs=outputs, variables=p.variables + tuple(decls), body=body,
                   requires=frozenset(requires), options=CR_OPTION if divide else p.options)
