"""Programs of area ``flow`` (lang.flow): kernels whose data flows through loops, branches,
arrays and calls, valid by construction (every drawn program passes lang.flow_rules.check).

Hypothesis draws a seed and the program is built from it (:func:`generate`), like the shapes
strategy: a launch of one to three dimensions, inputs of every integer type (and ``float``),
variables, private arrays, a local array when the work-group has more than one work-item,
helpers, then a body of statements nested up to :data:`DEPTH`. Every construct keeps its rule
by the way it is built: signed ``int``/``long`` arithmetic in the guarded forms, shifts on
``uint``/``ulong``, ``clamp`` between ``min`` and ``max`` of the same pair, ``mul24``/``mad24`` on
masked operands, loops nested so that the product of their caps stays within :data:`WORK`,
exchanges only where every enclosing condition is work-group uniform. Every variable is an
output, so every value the body computes is observed.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from fuzz.strategies.flow_launch import LAUNCHES, cl2_launch
from lang.flow import (
    INT_TYPES,
    ITEMS,
    OFFSET_CAP,
    TRIP_CAP,
    ALoad,
    Array,
    Assign,
    AStore,
    Bin,
    Call,
    Cast,
    Const,
    Decl,
    Exchange,
    Exit,
    Expr,
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
    Select,
    Stmt,
    Un,
    Var,
    promoted,
)
from fuzz.strategies import flow_structs
from fuzz.strategies.flow_fp import add_fp
from fuzz.strategies.flow_vectors import with_vectors
from lang.flow_tree import walk
from lang.flow_rules import MASK24, unsigned
from lang.nodes import Fill
from lang.types import scalar

DEPTH = 3
WORK = 512
"""Most iterations of the innermost body of a loop nest (the product of the nest's caps)."""
CAPS = (1, 2, 3, 4, 8, 16, 33, TRIP_CAP)
OFFSETS = (0, 1, 3, 64, 1000, OFFSET_CAP)
"""Global work offsets a launch draws (OpenCL C 3.0.19 §6.15.1: every global id moves by it)."""
UNSTRUCTURED = 0.3
"""The share of programs whose SPIR-V control flow has no merge instructions (lang.shapes.CFGS)."""
STRUCTS = 0.3
"""The share of programs with structs (fuzz.strategies.flow_structs)."""
UNIFORM = ("group_id", "global_size", "local_size", "num_groups", "work_dim")


class Gen:
    """One program being built from ``rnd``."""

    def __init__(self, rnd: random.Random, floats: bool) -> None:
        self.r = rnd
        self.floats = floats
        self.names = 0

    def name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def const(self, t: str) -> Const:
        s = scalar(t)
        if s.is_float:
            return Const(t, self.r.choice((0, 0x3F800000, 0xBF000000, 0x40490FDB, 0x7F7FFFFF, 0x00800000,
                                           self.r.randrange(0x00800000, 0x7F000000))))
        v = self.r.choice((0, 1, 2, 3, -1, s.min, s.max, s.min + 1, s.max - 1, 7, 255, self.r.randint(s.min, s.max)))
        return Const(t, min(max(v, s.min), s.max))

    def edge_pool(self, t: str) -> tuple[int, ...]:
        s = scalar(t)
        if s.is_float:
            return (0, 0x3F800000, 0x80000000, 0x7F800000, 0x00000001, 0x7FC00000, 0x4B800000)
        mask = (1 << s.bits) - 1
        return tuple(sorted({v & mask for v in (0, 1, 2, 3, -1, s.min, s.max, s.min + 1, 15, 16, 64)}))

    # ---- expressions ----

    def index(self, scope: dict, depth: int) -> Expr:
        return self.expr("uint", scope, depth)

    def leaf(self, t: str, scope: dict) -> Expr:
        r = self.r
        choices = [lambda: self.const(t)]
        vars_ = [n for n, vt in scope["scalars"].items() if vt == t]
        if vars_:
            choices += [lambda: Var(r.choice(vars_), t)] * 3
        ins = [i for i in scope["inputs"] if i.type == t]
        if ins:
            choices += [lambda: Load((i := r.choice(ins)).name, t, self.leaf("uint", scope))] * 2
        arrays = [a for a, (at, _) in scope["arrays"].items() if at == t]
        if arrays:
            choices.append(lambda: ALoad(r.choice(arrays), t, self.leaf("uint", scope)))
        if t == "uint":
            choices += [lambda: Item(r.choice(ITEMS), r.randrange(3))] * 2
        return r.choice(choices)()

    def expr(self, t: str, scope: dict, depth: int) -> Expr:
        r = self.r
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(t, scope)
        d = depth - 1
        if t in ("float", "double"):
            form = r.randrange(5)
            if form == 0:
                return Call("fma", tuple(self.expr(t, scope, d) for _ in range(3)), t) if t == "float" else self.leaf(t, scope)
            if form == 1:
                return Cast(t, self.expr(r.choice(("char", "uchar", "short", "ushort")), scope, d))
            if form == 2:
                return Select(self.expr("int", scope, d), self.expr(t, scope, d), self.expr(t, scope, d))
            return Bin(r.choice(("add", "sub", "mul")), self.expr(t, scope, d), self.expr(t, scope, d), t)
        form = r.randrange(8)
        if form == 0:
            return Cast(t, self.expr(r.choice(INT_TYPES), scope, d))
        if form == 1:
            return Select(self.expr("int", scope, d), self.expr(t, scope, d), self.expr(t, scope, d))
        if form in (2, 3):
            return self.builtin(t, scope, d)
        if promoted(t) != t:
            return Cast(t, self.expr(r.choice(("int", "uint")), scope, d))
        return self.arith(t, scope, d)

    def arith(self, t: str, scope: dict, d: int) -> Expr:
        r = self.r
        if t == "int" and r.random() < 0.3:
            s = r.choice(INT_TYPES)
            if r.random() < 0.5:
                return Bin(r.choice(("lt", "le", "gt", "ge", "eq", "ne")), self.expr(s, scope, d), self.expr(s, scope, d), t)
            narrow = r.choice(("char", "uchar", "short", "ushort"))
            ops = ("add", "sub", "and", "xor", "sdiv", "srem") + (() if narrow == "ushort" else ("mul",))
            return Bin(r.choice(ops), self.expr(narrow, scope, d), self.expr(narrow, scope, d), t)
        a, b = self.expr(t, scope, d), self.expr(t, scope, d)
        if scalar(t).signed:
            op = r.choice(("sadd", "ssub", "smul", "sdiv", "srem", "and", "or", "xor"))
        else:
            op = r.choice(("add", "sub", "mul", "and", "or", "xor", "shl", "shr", "sdiv", "srem"))
            if r.random() < 0.15:
                return Un(r.choice(("neg", "not")), a, t)
        return Bin(op, a, b, t)

    def builtin(self, t: str, scope: dict, d: int) -> Expr:
        r = self.r
        fn = r.choice(("min", "max", "clamp", "add_sat", "sub_sat", "hadd", "rhadd", "rotate", "popcount", "clz",
                       "abs", "abs_diff", "mul_hi", "mul24"))
        if fn in ("abs", "abs_diff"):
            if not t.startswith("u"):
                return self.arith(t, scope, d) if promoted(t) == t else Cast(t, self.expr("int", scope, d))
            s = r.choice((t, t[1:]))
            return Call(fn, tuple(self.expr(s, scope, d) for _ in range(1 if fn == "abs" else 2)), unsigned(s))
        if fn == "mul24":
            if t != "uint":
                return Cast(t, self.builtin("uint", scope, d))
            masks = MASK24 if r.random() < 0.5 else MASK24[:2]
            args = tuple(Bin("and", self.expr("uint", scope, d), Const("uint", m), "uint") for m in masks)
            return Call("mad24" if len(args) == 3 else "mul24", args, t)
        if fn == "clamp":
            a, b = self.expr(t, scope, d), self.expr(t, scope, d)
            if r.random() < 0.3:
                lo, hi = sorted((self.const(t).value, self.const(t).value))
                return Call(fn, (self.expr(t, scope, d), Const(t, lo), Const(t, hi)), t)
            return Call(fn, (self.expr(t, scope, d), Call("min", (a, b), t), Call("max", (a, b), t)), t)
        arity = 1 if fn in ("popcount", "clz") else 2
        return Call(fn, tuple(self.expr(t, scope, d) for _ in range(arity)), t)

    def uniform(self) -> Expr:
        r = self.r
        return r.choice((lambda: self.const("uint"), lambda: Item(r.choice(UNIFORM), r.randrange(3)),
                         lambda: Bin("and", Item("group_id", 0), Const("uint", 3), "uint")))()

    # ---- statements ----

    def block(self, scope: dict, depth: int, work: int, loop: tuple[Loop, bool] | None, uniform: bool) -> tuple[Stmt, ...]:
        return tuple(s for _ in range(self.r.randint(1, 4)) if (s := self.stmt(scope, depth, work, loop, uniform)))

    def stmt(self, scope: dict, depth: int, work: int, loop, uniform: bool) -> Stmt | None:
        r = self.r
        kinds = ["assign"] * 4 + ["store"] * bool(scope["arrays"])
        if depth > 0:
            kinds += ["if", "loop", "loop"]
        if loop is not None and (uniform or not loop[1]):
            kinds += ["exit"]  # in a loop whose body is uniform, only where every work-item takes it alike
        if uniform and scope["local"] and not scope["helper"]:
            kinds += ["exchange"] * 2
        if scope["functions"] and not scope["helper"]:
            kinds += ["invoke"]
        kind = r.choice(kinds)
        if kind == "assign":
            names = [n for n in scope["scalars"] if n not in scope["counters"]]
            v = r.choice(names)
            return Assign(v, self.expr(scope["scalars"][v], scope, 3))
        if kind == "store":
            a = r.choice(list(scope["arrays"]))
            return AStore(a, self.index(scope, 2), self.expr(scope["arrays"][a][0], scope, 2))
        if kind == "if":
            cond = self.expr("int", scope, 2) if not uniform or r.random() < 0.5 else Bin(
                "lt", self.uniform(), self.uniform(), "int")
            inner = uniform and _is_uniform(cond)
            return If(cond, self.block(scope, depth - 1, work, loop, inner),
                      self.block(scope, depth - 1, work, loop, inner) if r.random() < 0.5 else ())
        if kind == "loop":
            return self.loop(scope, depth, work, uniform)
        if kind == "exit":
            counter = Cast("uint", Var(loop[0].var, "int"))
            if loop[1]:
                cond = Bin(r.choice(("eq", "gt")), counter, self.const("uint"), "int")
            else:
                cond = Bin(r.choice(("eq", "gt", "lt")), Bin("and", counter, Const("uint", 7), "uint"),
                           self.expr("uint", scope, 1), "int") if r.random() < 0.5 else self.expr("int", scope, 2)
            return Exit(r.choice(("break", "continue")), cond)
        if kind == "exchange":
            (name, t), = scope["local"].items()
            v = r.choice([n for n, vt in scope["scalars"].items() if vt == t and n not in scope["counters"]] or [None])
            if v is None:
                return None
            return Exchange(name, self.expr(t, scope, 2), self.index(scope, 2), v)
        return self.invoke(scope)

    def loop(self, scope: dict, depth: int, work: int, uniform: bool) -> Loop | None:
        r = self.r
        caps = [c for c in CAPS if work * c <= WORK]
        if not caps:
            return None
        cap = r.choice(caps)
        var = self.name("i")
        if uniform and r.random() < 0.6:
            base, trips = self.uniform(), self.uniform()
        else:
            base, trips = self.expr("uint", scope, 2), self.expr("uint", scope, 2)
        shell = Loop(r.choice(("for", "while", "do")), var, base, trips, cap, r.randint(1, 3), r.random() < 0.4, ())
        scope["scalars"][var] = "int"
        scope["counters"].add(var)
        inner = uniform and loop_is_uniform(shell)
        body = self.block(scope, depth - 1, work * cap, (shell, inner), inner)
        del scope["scalars"][var]
        scope["counters"].discard(var)
        return Loop(shell.form, var, base, trips, cap, shell.step, shell.reverse, body)

    def invoke(self, scope: dict) -> Invoke | None:
        f = self.r.choice(scope["functions"])
        pointers = []
        for q in f.pointers:
            if q.length:
                fits = [a for a, (t, n) in scope["arrays"].items() if t == q.type and n >= q.length]
                if not fits:
                    return None
                a = self.r.choice(fits)
                pointers.append(Pointer(a, self.r.randint(0, scope["arrays"][a][1] - q.length), True))
            else:
                fits = [n for n, t in scope["scalars"].items() if t == q.type and n not in scope["counters"]
                        and n not in [p.name for p in pointers]]
                if not fits:
                    return None
                pointers.append(Pointer(self.r.choice(fits)))
        results = [n for n, t in scope["scalars"].items() if t == f.type and n not in scope["counters"]
                   and n not in [p.name for p in pointers]]
        return Invoke(f.name, tuple(self.expr(d.type, scope, 2) for d in f.params), tuple(pointers),
                      self.r.choice(results) if results and self.r.random() < 0.8 else "")

    def function(self, arrays: dict) -> Function:
        r = self.r
        params = tuple(Decl(self.name("a"), r.choice(INT_TYPES)) for _ in range(r.randint(1, 2)))
        pointers = [PointerParam(self.name("p"), r.choice(INT_TYPES))]
        if arrays and r.random() < 0.7:
            a, (t, n) = r.choice(list(arrays.items()))
            pointers.append(PointerParam(self.name("q"), t, r.randint(1, n)))
        variables = tuple(Decl(self.name("t"), t, self.const(t).value) for t in r.sample(INT_TYPES, 2))
        scalars = {d.name: d.type for d in (*params, *variables)} | {q.name: q.type for q in pointers if not q.length}
        scope = _scope(scalars, {q.name: (q.type, q.length) for q in pointers if q.length}, {}, (), (), helper=True)
        body = self.block(scope, 2, 1, None, False)
        result_type = r.choice(INT_TYPES)
        return Function(self.name("h"), params, tuple(pointers), variables, body,
                        self.expr(result_type, scope, 2), r.random() < 0.5)


def _scope(scalars, arrays, local, inputs, functions, helper=False) -> dict:
    return {"scalars": scalars, "arrays": arrays, "local": local, "inputs": inputs, "functions": functions,
            "counters": set(), "helper": helper}


def _is_uniform(e: Expr) -> bool:
    """Whether ``e`` has one value in a work-group (conservatively: no variable, no load)."""
    return all(not isinstance(n, (Var, ALoad, Load)) and not (isinstance(n, Item) and n.fn not in UNIFORM)
               for n in walk(e))


def loop_is_uniform(loop: Loop) -> bool:
    return _is_uniform(loop.base) and _is_uniform(loop.trips)


def generate(rnd: random.Random, floats: bool = True, int64: bool = True, fp64: bool = False,
             cr: bool = False, launches: frozenset[str] = frozenset()) -> FlowProgram:
    """One valid flow program drawn with ``rnd`` (``fp64``, ``cr``: with double, float / and sqrt,
    fuzz.strategies.flow_fp; ``launches``: the launch requirements it may have,
    fuzz.strategies.flow_launch; none of them: the program of the seed as it always was)."""
    g = Gen(rnd, floats)
    types = [t for t in INT_TYPES if int64 or scalar(t).bits < 64]
    dims = rnd.choice((1, 1, 2, 3))
    local = tuple(rnd.choice((1, 2, 4, 8, 16) if dims == 1 else (1, 2, 4)) for _ in range(dims))
    if dims == 1 and rnd.random() < 0.3:
        local = (rnd.choice((32, 64)),)
    glob = tuple(n * rnd.choice((1, 2, 3, 4)) for n in local)
    inputs = tuple(Input(g.name("in"), t, rnd.choice((1, 7, 16, 64)), Fill(rnd.getrandbits(32), g.edge_pool(t)))
                   for t in rnd.sample(types, rnd.randint(1, 3)) + (["float"] if floats and rnd.random() < 0.5 else []))
    variables = [Decl(g.name("v"), t, g.const(t).value) for t in rnd.choices(types, k=rnd.randint(2, 5))]
    if floats:
        variables += [Decl(g.name("f"), "float", g.const("float").value) for _ in range(rnd.randint(0, 2))]
    arrays = [Array(g.name("pa"), t, n, "private", tuple(g.const(t).value for _ in range(n)))
              for t, n in ((rnd.choice(types), rnd.choice((1, 3, 8, 16))) for _ in range(rnd.randint(0, 2)))]
    local_arrays = {}
    items = 1
    for n in local:
        items *= n
    if items > 1 and rnd.random() < 0.5:
        la = Array(g.name("la"), rnd.choice(types), items, "local")
        arrays.append(la)
        local_arrays[la.name] = la.type
    private = {a.name: (a.type, a.length) for a in arrays if a.space == "private"}
    functions = tuple(g.function(private) for _ in range(rnd.randint(0, 2)))
    scope = _scope({d.name: d.type for d in variables}, private, local_arrays, inputs, functions)
    body = g.block(scope, DEPTH, 1, None, True) + g.block(scope, DEPTH, 1, None, True)
    outputs = tuple(Output(g.name("out"), d.name, d.type) for d in variables)
    requires = frozenset({"int64"} if any(scalar(t).bits == 64 for t in types) else ())
    cfg = "unstructured" if rnd.random() < UNSTRUCTURED else "structured"  # drawn last: earlier draws unchanged
    late = random.Random(rnd.getrandbits(64))  # drawn after the rest: a seed's program stays as it was
    offset = tuple(late.choice(OFFSETS) for _ in glob) if late.random() < 0.3 else ()
    g.r = random.Random(late.getrandbits(64))  # the vectors' own stream, after every other draw
    program = with_vectors(FlowProgram(inputs, outputs, tuple(variables), tuple(arrays), functions, body, glob, local,
                                       requires, cfg=cfg, global_offset=offset), g, scope)
    fp_seed = late.getrandbits(64)
    structs = random.Random(f"structs {fp_seed}")  # their own stream, consuming no draw of the others
    if structs.random() < STRUCTS:  # fuzz.strategies.flow_structs
        sg = Gen(random.Random(structs.getrandbits(64)), floats)
        sg.names = g.names
        program = flow_structs.added(program, flow_structs.draw(sg, types, scope, DEPTH - 1))
    program = add_fp(program, random.Random(fp_seed), fp64, cr)  # after the offset: drawn last
    return cl2_launch(program, late, launches)


@st.composite
def flow_programs(draw, floats: bool = True, int64: bool = True, fp64: bool = False, cr: bool = False,
                  launches: frozenset[str] = LAUNCHES) -> FlowProgram:
    """Flow programs (the module docstring): a drawn seed, the program built from it."""
    return generate(random.Random(draw(st.integers(0, 2**64 - 1))), floats, int64, fp64, cr, launches)
