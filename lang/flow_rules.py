"""The rules that keep a flow program (:mod:`lang.flow`) defined, and their check.

:func:`check` raises :class:`lang.nodes.InvalidProgram` with one line naming the first rule a
program breaks. The rules (OpenCL C 3.0.19 unless another document is named):

* **integers** (§6.3, §6.5.1; C99 §6.5p5, §6.3.1.1): no signed overflow after the integer
  promotions. Plain ``+ - *`` only where the promoted type is unsigned or the operands are
  narrower than ``int`` (their ``int`` sum or difference cannot overflow; nor their product,
  except ``ushort * ushort``, whose ``int`` product can); signed ``int``/``long`` arithmetic only in
  the guarded forms ``sadd ssub smul``; ``/`` and ``%`` only guarded (``sdiv srem``: no division by
  zero, no MIN / -1); unary minus not on ``int``/``long``; shifts only on ``uint``/``ulong`` with
  the count masked to the width (a left shift of a signed value is done in the unsigned type);
* **built-ins** (§6.15.3): ``clamp`` only with minval <= maxval (constants in order, or
  ``min(a, b)`` and ``max(a, b)`` of the same two operands); ``mul24``/``mad24`` only on ``uint``
  operands masked to 24 bits (the second to 8 bits, so the exact product and sum fit 32 bits);
* **conversions** (§6.4.3): integer to integer (two's complement, §6.3.1); integer to float only
  where the value is exact (at most 16 bits to ``float``, 32 to ``double``); no float to integer;
* **float** (§7.4 Table 65, §6.15.2.1): ``+ - *``, and ``fma`` on ``float``, only, correctly rounded, contraction
  off in the emitted text; a float never decides control flow, an index or an integer (no float
  comparison, no float array, no float in a helper), so a flushed subnormal changes only the
  float outputs it flows into; ``double`` needs ``fp64``, ``long``/``ulong`` need ``int64``;
* **more float** (lang.flow_fp, §7.4 Tables 65 and 68, §7.1, §6.4.3.2): double ``+ - * / sqrt fma``;
  float ``/`` and ``sqrt`` only built with -cl-fp32-correctly-rounded-divide-sqrt on a device that
  reports it (API §5.8.6.2); casts between ``float`` and ``double`` (round to nearest even);
* **loops**: counted (:class:`lang.flow.Loop`: at most ``TRIP_CAP`` iterations, step 1 to
  ``MAX_STEP``), counters read-only; ``break``/``continue`` only inside a loop;
* **memory**: every array index is reduced modulo the length; a local array has one element
  per work-item and is used only through :class:`lang.flow.Exchange`, whose barriers make it
  race-free; pointer arguments of one call name distinct objects, an array pointer's offset
  and length stay inside its array;
* **barriers** (§6.15.8: every work-item of the work-group reaches each barrier): an exchange
  only in the kernel, outside helpers, under uniform control flow: each enclosing ``if`` and loop
  bound and each ``break``/``continue`` of an enclosing loop depends only on constants,
  work-group-uniform work-item functions, inputs at uniform indices and uniform loop counters;
* **the launch**: one to three dimensions, each local size dividing its global size, at most
  256 work-items in a work-group; the SPIR-V control flow form one of lang.shapes.CFGS;
* **OpenCL C 2.0 launches** and non-uniform work-groups: lang.flow_launch;
* **vectors**: lang.flow_vector_rules; **structs** (§6.1, §6.5.2.2): lang.flow_struct_rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lang.flow import (
    CL2_ITEMS,
    FLOAT_TYPES,
    INT_TYPES,
    ITEMS,
    MAX_STEP,
    OFFSET_CAP,
    TRIP_CAP,
    UNIFORM_ITEMS,
    ALoad,
    Assign,
    AStore,
    Bin,
    Call,
    Cast,
    Const,
    Exchange,
    Exit,
    Expr,
    FlowProgram,
    Function,
    If,
    Invoke,
    Item,
    Load,
    Loop,
    Select,
    Stmt,
    Un,
    Var,
    promoted,
)
from lang import flow_struct_rules as struct_rules, flow_vector_rules as vector_rules
from lang.flow_fp import FP_BINARY, FP_CALLS, float_cast, operation_rule
from lang.flow_launch import CL2, launch_problem
from lang.flow_tree import children, expressions, statements, walk
from lang.flow_vectors import EXPRESSIONS as VECTOR_EXPRESSIONS
from lang.flow_vectors import SwizzleStore, element
from lang.nodes import InvalidProgram
from lang.shapes import CFGS
from lang.types import scalar

ARRAY_CAP = 32
GROUP_CAP = 256
ARITH = ("add", "sub", "mul")
BITWISE = ("and", "or", "xor")
SHIFTS = ("shl", "shr")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
GUARDED = ("sadd", "ssub", "smul")
DIVISION = ("sdiv", "srem")
SAME_TYPE = ("min", "max", "clamp", "add_sat", "sub_sat", "hadd", "rhadd", "rotate", "popcount", "clz", "mul_hi")
ARITY = {"min": 2, "max": 2, "clamp": 3, "add_sat": 2, "sub_sat": 2, "hadd": 2, "rhadd": 2, "rotate": 2,
         "popcount": 1, "clz": 1, "abs": 1, "abs_diff": 2, "mul_hi": 2, "mul24": 2, "mad24": 3, "fma": 3, "sqrt": 1}
MASK24 = (0xFFFFFF, 0xFF, 0xFFFFFF)
"""The largest masks of mul24/mad24's operands (x * y + z < 2**32)."""


def unsigned(t: str) -> str:
    return t if t.startswith("u") else "u" + t


def _fail(text: str) -> None:
    raise InvalidProgram(text)


@dataclass
class Scope:
    """What a body sees: scalars (name -> type), read-only ones, private arrays (name -> (type,
    length)), local arrays, and whether it is a helper's body."""

    scalars: dict[str, str]
    arrays: dict[str, tuple[str, int]]
    local: dict[str, tuple[str, int]] = field(default_factory=dict)
    counters: set[str] = field(default_factory=set)
    uniform: set[str] = field(default_factory=set)  # counters of work-group-uniform loops
    helper: bool = False


def check(p: FlowProgram) -> None:
    """Raise InvalidProgram (one line: the rule broken) unless ``p`` keeps every rule above."""
    _check_launch(p)
    names = [d.name for d in (*p.inputs, *p.outputs, *p.variables, *p.arrays, *p.functions)]
    if len(set(names)) != len(names):
        _fail("duplicate names among inputs, outputs, variables, arrays and functions")
    vector_rules.check_declarations(p)
    used = {d.type for d in (*p.inputs, *p.outputs, *p.variables, *p.arrays)}
    for t in {element(t) for t in used | {e.type for s in statements(p.body) for x in expressions(s) for e in walk(x)}}:
        if t not in INT_TYPES + FLOAT_TYPES:
            _fail(f"type {t!r} is not a scalar integer or float type")
        if scalar(t).needs and scalar(t).needs not in p.requires:
            _fail(f"type {t} needs {scalar(t).needs}, which the program does not require")
    for d in p.variables:
        _const(Const(element(d.type), d.init))
    for i in p.inputs:
        if i.count < 1:
            _fail(f"input {i.name} has no elements")
    arrays, local = {}, {}
    for a in p.arrays:
        if a.type not in INT_TYPES:
            _fail(f"array {a.name}: only integer arrays (a float never becomes an index or a branch)")
        if a.space == "local":
            if a.length != p.group_items or a.init:
                _fail(f"local array {a.name}: one element per work-item ({p.group_items}), no initialiser")
            local[a.name] = (a.type, a.length)
        elif a.space == "private":
            if not 1 <= a.length <= ARRAY_CAP or len(a.init) != a.length:
                _fail(f"private array {a.name}: 1 to {ARRAY_CAP} elements, each initialised")
            for v in a.init:
                _const(Const(a.type, v))
            arrays[a.name] = (a.type, a.length)
        else:
            _fail(f"array {a.name}: space {a.space!r} is neither private nor local")
    for f in p.functions:
        _check_function(f, p)
    scope = Scope({d.name: d.type for d in p.variables} | struct_rules.check(p, _body, Scope), arrays, local)
    _body(p.body, scope, p, loops=())
    for o in p.outputs:
        if scope.scalars.get(o.var) != o.type:
            _fail(f"output {o.name} takes {o.var}, which is no {o.type} variable of the kernel")


def _check_launch(p: FlowProgram) -> None:
    if p.cfg not in CFGS:
        _fail(f"unknown control flow form {p.cfg!r} (one of {', '.join(CFGS)})")
    g, l = p.global_size, p.local_size
    if not 1 <= len(g) <= 3 or len(l) != len(g) or any(a < 1 or b < 1 for a, b in zip(g, l)):
        _fail(f"launch {g} / {l}: 1 to 3 dimensions of positive sizes")
    if p.global_offset and (len(p.global_offset) != len(g) or not all(0 <= o <= OFFSET_CAP for o in p.global_offset)):
        _fail(f"global offset {p.global_offset}: one per dimension, each 0 to {OFFSET_CAP}")
    if p.group_items > GROUP_CAP:
        _fail(f"work-groups of {p.group_items} work-items exceed {GROUP_CAP}")
    problem = launch_problem(p)
    if problem:
        _fail(problem)


def _check_function(f: Function, p: FlowProgram) -> None:
    scalars = {d.name: d.type for d in (*f.params, *f.variables)}
    scalars.update({q.name: q.type for q in f.pointers if not q.length})
    arrays = {q.name: (q.type, q.length) for q in f.pointers if q.length}
    names = [*scalars, *arrays]
    if len(names) != len(f.params) + len(f.variables) + len(f.pointers) or len(set(names)) != len(names):
        _fail(f"helper {f.name}: duplicate parameter or variable names")
    if any(t not in INT_TYPES for t in (*scalars.values(), *(t for t, _ in arrays.values()))):
        _fail(f"helper {f.name}: integer parameters and variables only")
    for d in f.variables:
        _const(Const(d.type, d.init))
    scope = Scope(scalars, arrays, helper=True)
    _body(f.body, scope, p, loops=())
    _expr(f.result, scope, p)
    if f.type not in INT_TYPES:
        _fail(f"helper {f.name}: returns an integer")


def _body(body: tuple[Stmt, ...], scope: Scope, p: FlowProgram, loops: tuple[Loop, ...], uniform: bool = True) -> None:
    for s in body:
        if isinstance(s, Assign):
            _assign(s.var, s.value, scope, p)
        elif isinstance(s, AStore):
            t, _ = scope.arrays.get(s.array, (None, 0))
            if t is None:
                _fail(f"store into {s.array}, which is no private array in scope")
            _index(s.index, scope, p)
            if _expr(s.value, scope, p) != t:
                _fail(f"store into {s.array}: value of type {s.value.type}, array of {t}")
        elif isinstance(s, If):
            _condition(s.cond, scope, p)
            inner = uniform and _uniform(s.cond, scope)
            _body(s.then, scope, p, loops, inner)
            _body(s.orelse, scope, p, loops, inner)
        elif isinstance(s, Loop):
            _loop(s, scope, p, loops, uniform)
        elif isinstance(s, Exit):
            if not loops or s.kind not in ("break", "continue"):
                _fail(f"{s.kind} outside a loop (or not break/continue)")
            _condition(s.cond, scope, p)
        elif isinstance(s, Exchange):
            _exchange(s, scope, p, loops, uniform)
        elif isinstance(s, Invoke):
            _invoke(s, scope, p)
        elif isinstance(s, SwizzleStore):
            vector_rules.check_store(s, scope.scalars, lambda x: _expr(x, scope, p))
        elif isinstance(s, struct_rules.SInvoke):
            struct_rules.check_call(s, p, scope.helper, lambda x: _expr(x, scope, p))
        else:
            _fail(f"unknown statement {type(s).__name__}")


def _loop(s: Loop, scope: Scope, p: FlowProgram, loops: tuple[Loop, ...], uniform: bool) -> None:
    if s.form not in ("for", "while", "do") or not 1 <= s.cap <= TRIP_CAP or not 1 <= s.step <= MAX_STEP:
        _fail(f"loop {s.var}: form for/while/do, cap 1..{TRIP_CAP}, step 1..{MAX_STEP}")
    if s.var in scope.scalars or s.var in scope.arrays:
        _fail(f"loop counter {s.var} shadows a name in scope")
    for e in (s.base, s.trips):
        if _expr(e, scope, p) != "uint":
            _fail(f"loop {s.var}: base and trips are uint expressions")
    inner = uniform and _uniform(s.base, scope) and _uniform(s.trips, scope)
    scope.scalars[s.var] = "int"
    scope.counters.add(s.var)
    if inner:
        scope.uniform.add(s.var)
    _body(s.body, scope, p, (*loops, s), inner)
    del scope.scalars[s.var]
    scope.counters.discard(s.var)
    scope.uniform.discard(s.var)


def _exchange(s: Exchange, scope: Scope, p: FlowProgram, loops: tuple[Loop, ...], uniform: bool) -> None:
    if scope.helper or s.array not in scope.local:
        _fail(f"exchange through {s.array}: a local array of the kernel (never in a helper)")
    if not uniform:
        _fail(f"exchange through {s.array} under control flow that is not work-group uniform "
              "(§6.15.8: every work-item must reach the barrier)")
    for loop in loops:
        if not all(_uniform(c, scope) for c in _exit_conditions(loop.body)):
            _fail(f"exchange through {s.array} in loop {loop.var}, which a work-item may leave or skip on its "
                  "own (a break or continue not work-group uniform, §6.15.8)")
    t = scope.local[s.array][0]
    if _expr(s.value, scope, p) != t:
        _fail(f"exchange through {s.array}: value of type {s.value.type}, array of {t}")
    _index(s.index, scope, p)
    _assign(s.var, Var(s.var, t), scope, p)


def _exit_conditions(body: tuple[Stmt, ...]):
    """The conditions under which a work-item takes a break or continue of the loop whose body
    this is: each exit's own and those of the ifs around it."""
    for s in body:
        if isinstance(s, Exit):
            yield s.cond
        elif isinstance(s, If):
            inner = [*_exit_conditions(s.then), *_exit_conditions(s.orelse)]
            if inner:
                yield s.cond
                yield from inner


def _invoke(s: Invoke, scope: Scope, p: FlowProgram) -> None:
    f = next((f for f in p.functions if f.name == s.function), None)
    if f is None or scope.helper:
        _fail(f"call of {s.function}: a helper called from the kernel only")
    if len(s.args) != len(f.params) or len(s.pointers) != len(f.pointers):
        _fail(f"call of {f.name}: {len(f.params)} values and {len(f.pointers)} pointers expected")
    for a, d in zip(s.args, f.params):
        if _expr(a, scope, p) != d.type:
            _fail(f"call of {f.name}: argument {d.name} is a {d.type}")
    names = [q.name for q in s.pointers] + ([s.var] if s.var else [])
    if len(set(names)) != len(names):
        _fail(f"call of {f.name}: pointer arguments and the result name distinct objects")
    for q, d in zip(s.pointers, f.pointers):
        if d.length:
            t, n = scope.arrays.get(q.name, (None, 0))
            if not q.array or t != d.type or q.offset < 0 or q.offset + d.length > n:
                _fail(f"call of {f.name}: {q.name} + {q.offset} is no {d.type} array of {d.length} elements in bounds")
        elif q.array or scope.scalars.get(q.name) != d.type or q.name in scope.counters:
            _fail(f"call of {f.name}: &{q.name} is no {d.type} variable")
    if s.var:
        _assign(s.var, f.result, scope, p, check_value=False)


def _assign(var: str, value: Expr, scope: Scope, p: FlowProgram, check_value: bool = True) -> None:
    if var not in scope.scalars or var in scope.counters:
        _fail(f"assignment to {var}, which is no assignable variable in scope")
    t = _expr(value, scope, p) if check_value else value.type
    if t != scope.scalars[var]:
        _fail(f"assignment of a {t} to {var}, a {scope.scalars[var]}")


def _condition(e: Expr, scope: Scope, p: FlowProgram) -> None:
    if _expr(e, scope, p) not in INT_TYPES:
        _fail("a condition is an integer (a float never decides control flow)")


def _index(e: Expr, scope: Scope, p: FlowProgram) -> None:
    if _expr(e, scope, p) != "uint":
        _fail("an index is a uint expression (reduced modulo the length)")


def _uniform(e: Expr, scope: Scope) -> bool:
    """Whether ``e`` has one value in a work-group (its leaves: constants, uniform work-item
    functions, counters of uniform loops; loads at uniform indices)."""
    for n in walk(e):
        if isinstance(n, Var) and n.name not in scope.uniform:
            return False
        if isinstance(n, Item) and n.fn not in UNIFORM_ITEMS or isinstance(n, ALoad):
            return False
    return True


def _const(c: Const) -> None:
    s = scalar(c.type)
    ok = s.min <= c.value <= s.max if s.is_int else 0 <= c.value < 1 << s.bits
    if not ok:
        _fail(f"constant {c.value} does not fit {c.type}")
    if not s.is_float:
        return
    top = (1 << (s.bits - s.mant_bits)) - 1
    exponent = (c.value >> (s.mant_bits - 1)) & top
    if exponent == top or exponent == 0 and c.value & ~(1 << (s.bits - 1)):
        _fail(f"float constant {c.value:#x}: finite and normal (or zero) only")


def _expr(e: Expr, scope: Scope, p: FlowProgram) -> str:
    """Check ``e`` and return its type."""
    if isinstance(e, VECTOR_EXPRESSIONS):
        return vector_rules.check_expr(e, lambda x: _expr(x, scope, p))
    if not isinstance(e, Var):
        vector_rules.scalar_only(e, children)
    if isinstance(e, Const):
        _const(e)
    elif isinstance(e, Var):
        if scope.scalars.get(e.name) != e.type:
            _fail(f"{e.name} is no {e.type} variable in scope")
    elif isinstance(e, Item):
        if e.fn not in ITEMS + CL2_ITEMS or not 0 <= e.dim <= 2 or e.fn in CL2_ITEMS and CL2 not in p.requires:
            _fail(f"work-item function {e.fn}({e.dim}) is not one of {', '.join(ITEMS)} over dimensions 0-2 "
                  f"(or of {', '.join(CL2_ITEMS)} in a program that requires {CL2})")
    elif isinstance(e, Load):
        i = next((i for i in p.inputs if i.name == e.buffer), None)
        if i is None or i.type != e.type:
            _fail(f"load of {e.buffer}: no {e.type} input of that name")
        _index(e.index, scope, p)
    elif isinstance(e, ALoad):
        if scope.arrays.get(e.array, ("",))[0] != e.type:
            _fail(f"load of {e.array}: no {e.type} private array in scope")
        _index(e.index, scope, p)
    elif isinstance(e, Bin):
        _bin(e, scope, p)
    elif isinstance(e, Un):
        t = _expr(e.a, scope, p)
        want = "int" if e.op == "lnot" else promoted(t)
        if t not in INT_TYPES or e.op not in ("neg", "not", "lnot") or e.type != want or (
                e.op == "neg" and t in ("int", "long")):
            _fail(f"{e.op} of a {t} as {e.type}: integers only, no negation of int/long (overflow of MIN)")
    elif isinstance(e, Call):
        _call(e, scope, p)
    elif isinstance(e, Cast):
        t = _expr(e.a, scope, p)
        if not (t in INT_TYPES and e.type in INT_TYPES or t == e.type
                or e.type in FLOAT_TYPES and t in INT_TYPES and scalar(t).bits <= (16 if e.type == "float" else 32)
                or float_cast(t, e.type)):
            _fail(f"cast of a {t} to {e.type}: integer to integer, or integer to a float that holds it exactly")
    elif isinstance(e, Select):
        _condition(e.cond, scope, p)
        if _expr(e.a, scope, p) != _expr(e.b, scope, p):
            _fail("?: arms of different types")
    else:
        _fail(f"unknown expression {type(e).__name__}")
    return e.type


def _bin(e: Bin, scope: Scope, p: FlowProgram) -> None:
    t = _expr(e.a, scope, p)
    if _expr(e.b, scope, p) != t:
        _fail(f"{e.op} of a {t} and a {e.b.type}: operands of one type")
    want = "int" if e.op in COMPARE else promoted(t)
    if e.type != want:
        _fail(f"{e.op} of two {t} gives a {want}, not {e.type}")
    if t in FLOAT_TYPES:
        if e.op not in ARITH + FP_BINARY:
            _fail(f"{e.op} of floats: float + - * / only (a float never decides control flow)")
        if rule := operation_rule(e.op, t, p.options, p.requires):
            _fail(rule)
        return
    if e.op in ARITH:
        signed = scalar(want).signed
        if signed and (t in ("int", "long") or e.op == "mul" and t == "ushort"):
            _fail(f"{e.op} of two {t} may overflow {want} (§6.5.1, C99 §6.5p5): use the guarded s{e.op}")
    elif e.op in SHIFTS:
        if t not in ("uint", "ulong"):
            _fail(f"{e.op} of a {t}: shifts on uint/ulong only (a signed shift is done in the unsigned type)")
    elif e.op in GUARDED:
        if want not in ("int", "long"):
            _fail(f"{e.op} of a {t}: the guarded forms are for signed arithmetic")
    elif e.op not in BITWISE + COMPARE + DIVISION:
        _fail(f"unknown operator {e.op}")


def _call(e: Call, scope: Scope, p: FlowProgram) -> None:
    types = [_expr(a, scope, p) for a in e.args]
    if ARITY.get(e.fn) != len(types) or len(set(types)) != 1:
        _fail(f"{e.fn} with {len(types)} operands of types {types}: {ARITY.get(e.fn, '?')} operands of one type")
    t = types[0]
    if e.fn in FP_CALLS:
        if t not in FLOAT_TYPES or e.type != t:
            _fail(f"{e.fn} of {t} as {e.type}: a float built-in of a float type")
        if rule := operation_rule(e.fn, t, p.options, p.requires):
            _fail(rule)
        return
    if t not in INT_TYPES:
        _fail(f"{e.fn} of {t}: an integer built-in")
    want = unsigned(t) if e.fn in ("abs", "abs_diff") else t
    if e.type != want:
        _fail(f"{e.fn} of {t} gives a {want}, not {e.type}")
    if e.fn == "clamp":
        lo, hi = e.args[1], e.args[2]
        ordered = isinstance(lo, Const) and isinstance(hi, Const) and lo.value <= hi.value
        paired = (isinstance(lo, Call) and isinstance(hi, Call) and (lo.fn, hi.fn) == ("min", "max")
                  and lo.args == hi.args)
        if not (ordered or paired):
            _fail("clamp needs minval <= maxval (§6.15.3): constants in order, or min(a, b) and max(a, b)")
    if e.fn in ("mul24", "mad24"):
        ok = t == "uint" and all(isinstance(a, Bin) and a.op == "and" and isinstance(a.b, Const) and a.b.value <= m
                                 for a, m in zip(e.args, MASK24))
        if not ok:
            _fail(f"{e.fn} on uint operands masked to 24, 8 (and 24) bits only (§6.15.3: 24-bit operands)")
