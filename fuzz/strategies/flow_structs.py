"""Structs in drawn flow programs (lang.flow_structs), drawn from a stream of their own after the
rest of the program (fuzz.strategies.flow.generate), so that a seed's program without structs
stays as it was.

One or two struct types of two to four members (integers of every width and signedness the
program may use, ``float`` where it draws floats), three kernel variables of each, one or two
struct helpers (a by-value parameter, often a pointer parameter and a local, a body of
statements on their integer members, the by-value parameter or the local returned; ``noinline``
only where the body calls no work-item function, which PoCL 3.1's SPIR path cannot load in a
DontInline function, a known bucket that would hide the rest of the program), and a block
of kernel statements on every scalar and member: the helpers' calls among them, some inside a
loop. Every member of every kernel variable is an output.
"""

from __future__ import annotations

from dataclasses import replace

from lang.flow import INT_TYPES, Const, Decl, FlowProgram, Item, Loop, Output, Stmt
from lang.flow_structs import SInvoke, Struct, StructFunction, StructParam, StructVar, member
from lang.flow_tree import expressions, statements, walk


class Structs:
    """What structs add to a program: declarations, helpers, kernel statements, outputs."""

    def __init__(self) -> None:
        self.structs: list[Struct] = []
        self.variables: list[StructVar] = []
        self.functions: list[StructFunction] = []
        self.body: tuple[Stmt, ...] = ()
        self.outputs: list[Output] = []


def _members(s: Struct, var: str, ints_only: bool) -> dict[str, str]:
    return {member(var, d.name): d.type for d in s.members if not ints_only or d.type in INT_TYPES}


def draw(g, types: list[str], scope: dict, depth: int) -> Structs:
    """Structs for a program whose kernel scope is ``scope`` (``g``: a fuzz.strategies.flow.Gen on
    the structs' own stream; ``types``: the integer types the program may use)."""
    r, out = g.r, Structs()
    kinds = types + (["float"] if g.floats else [])
    for _ in range(r.randint(1, 2)):
        s = Struct(g.name("S"), tuple(Decl(f"m{i}", r.choice(kinds if i else types)) for i in range(r.randint(2, 4))))
        out.structs.append(s)
        out.variables += [StructVar(g.name("s"), s.name, tuple(g.const(d.type).value for d in s.members))
                          for _ in range(3)]
    for _ in range(r.randint(1, 2)):
        out.functions.append(_function(g, r.choice(out.structs), out.structs))
    kernel = dict(scope, scalars=dict(scope["scalars"]), local={})  # no exchange: the launch is drawn before
    for v in out.variables:
        s = next(s for s in out.structs if s.name == v.struct)
        kernel["scalars"] |= _members(s, v.name, False)
        out.outputs += [Output(g.name("out"), n, t) for n, t in _members(s, v.name, False).items()]
    body = list(g.block(kernel, depth, 1, None, True))
    for f in out.functions:
        call = _call(g, f, out.variables, kernel)
        if r.random() < 0.4:
            more = g.block(kernel, 1, 4, None, False)
            call = Loop(r.choice(("for", "while", "do")), g.name("i"), Const("uint", r.randrange(4)),
                        Const("uint", r.randint(1, 4)), 4, r.randint(1, 3), r.random() < 0.5, (call, *more))
        body.insert(r.randint(0, len(body)), call)
    out.body = tuple(body)
    return out


def _function(g, s: Struct, structs: list[Struct]) -> StructFunction:
    r = g.r
    params = tuple(Decl(g.name("k"), r.choice(INT_TYPES)) for _ in range(r.randint(0, 1)))
    variables = tuple(Decl(g.name("t"), t, g.const(t).value) for t in r.sample(INT_TYPES, r.randint(0, 1)))
    by_value = StructParam(g.name("x"), s.name)
    structs_ = [by_value]
    if r.random() < 0.7:
        structs_.append(StructParam(g.name("y"), r.choice(structs).name, True))
    r.shuffle(structs_)
    locals_ = ()
    if r.random() < 0.5:
        locals_ = (StructVar(g.name("l"), s.name, tuple(g.const(d.type).value for d in s.members)),)
    scalars = {d.name: d.type for d in (*params, *variables)}
    for q in (*structs_, *locals_):
        scalars |= _members(next(t for t in structs if t.name == q.struct), q.name, True)
    body = g.block(_scope(scalars, True), 2, 1, None, False)
    result = r.choice([by_value.name, *(v.name for v in locals_)])
    items = any(isinstance(n, Item) for s in statements(body) for x in expressions(s) for n in walk(x))
    noinline = r.random() < 0.5 and not items  # PoCL 3.1's SPIR path cannot load that (a known bucket, docs/flow.md)
    return StructFunction(g.name("sh"), params, tuple(structs_), variables, locals_, body, result, noinline)


def _scope(scalars: dict[str, str], helper: bool) -> dict:
    """A scope of fuzz.strategies.flow.Gen with these scalars and nothing else."""
    return {"scalars": scalars, "arrays": {}, "local": {}, "inputs": (), "functions": (), "counters": set(),
            "helper": helper}


def _call(g, f: StructFunction, variables: list[StructVar], kernel: dict) -> SInvoke:
    r, taken, args = g.r, set(), []
    for q in f.structs:
        name = r.choice([v.name for v in variables if v.struct == q.struct and v.name not in taken])
        taken.add(name)
        args.append(name)
    results = [v.name for v in variables if v.struct == f.type and v.name not in taken]
    values = tuple(g.expr(d.type, kernel, 2) for d in f.params)
    return SInvoke(f.name, values, tuple(args), r.choice(results) if results and r.random() < 0.9 else "")


def added(p: FlowProgram, parts: Structs) -> FlowProgram:
    """``p`` with ``parts``: its statements after ``p``'s, its outputs after ``p``'s."""
    return replace(p, outputs=p.outputs + tuple(parts.outputs), body=p.body + parts.body, structs=tuple(parts.structs),
                   struct_vars=tuple(parts.variables), struct_functions=tuple(parts.functions))
