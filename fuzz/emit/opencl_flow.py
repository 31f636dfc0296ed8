"""Flow programs (lang.flow) -> OpenCL C.

The kernel takes the packed ``in`` and ``out`` arguments (:func:`lang.flow.regions`) and is
named ``clfuzz`` like every kernel of clfuzz; contraction is off (``#pragma OPENCL FP_CONTRACT
OFF``, §6.15.2.1: the default is on). The text of each node is what gives it its meaning
(lang.flow): indices reduced modulo the length, shift counts masked to the width, the guarded
arithmetic as helper functions (``flow_sadd_int`` ...) that test before they compute, loops
counted as :class:`lang.flow.Loop` says in each form, the counter moved at the top of a ``while``
or ``do`` body so that ``continue`` still steps it.

A :class:`Dialect` says how a few things are spelled: the OpenCL C one (:data:`OPENCL`) is
this module's; the tests' host-C dialect (tests/flow_host.py) writes the same body as C99 for
one work-item at a time, which a host C compiler builds as an independent evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from fuzz.emit import opencl_flow_structs as structs
from fuzz.emit.opencl_c import KERNEL_NAME, literal
from fuzz.emit.opencl_flow_vectors import OPENCL_VECTORS, VectorText
from lang.flow import (
    BASE_MASK,
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
    regions,
)
from lang.flow_launch import CL2, LINEAR, is_non_uniform
from lang.flow_structs import SInvoke
from lang.flow_tree import expressions, statements, walk
from lang.flow_vectors import EXPRESSIONS as VECTOR_EXPRESSIONS
from lang.flow_vectors import SwizzleStore, element
from lang.nodes import Literal
from lang.types import Type, scalar

SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^", "lt": "<", "le": "<=",
           "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "shl": "<<", "shr": ">>", "div": "/"}
HELPERS = ("sadd", "ssub", "smul", "sdiv", "srem")


@dataclass(frozen=True)
class Dialect:
    """How a dialect spells a work-item function, a built-in call, a global and a local
    declaration, a barrier, a private pointer parameter and vectors."""

    item: Callable[[str, int], str]
    builtin: Callable[[str, str, list[str]], str]
    global_: str
    local: Callable[[str, str, int], str]
    barrier: str
    private: str
    vectors: VectorText = OPENCL_VECTORS


def _cl_item(fn: str, dim: int) -> str:
    if fn == "work_dim":
        return "((uint)get_work_dim())"
    if fn == "global_linear_id":
        d = [f"(get_global_id({k}) - get_global_offset({k}))" for k in range(3)]
        return f"((uint)({d[0]} + get_global_size(0) * ({d[1]} + get_global_size(1) * {d[2]})))"
    if fn == "local_linear_id":
        return "((uint)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2))))"
    return f"((uint)get_{fn}({dim}))"


OPENCL = Dialect(item=_cl_item, builtin=lambda fn, t, args: f"{fn}({', '.join(args)})", global_="__global ",
                 local=lambda name, t, n: f"__local {t} {name}[{n}];", barrier="barrier(CLK_LOCAL_MEM_FENCE);",
                 private="private ")
OPENCL_20 = replace(OPENCL, item=lambda fn, dim: f"((uint)get_{fn}())" if fn in LINEAR else _cl_item(fn, dim))
"""The dialect of a program that requires ``cl2.0`` (lang.flow_launch): the linear ids are the
OpenCL C 2.0 built-ins (§6.15.1)."""


def group_size_text(d: Dialect) -> str:
    """The actual work-group's work-items (a partial group's fewer, lang.flow_launch): what a local
    array's exchange reads modulo in a non-uniform launch."""
    return f"({' * '.join(d.item('local_size', k) for k in range(3))})"


def const(c: Const) -> str:
    s = scalar(c.type)
    return literal(Literal(Type(c.type), (c.value & ((1 << s.bits) - 1),)))


def _limits(t: str) -> tuple[str, str]:
    s = scalar(t)
    suffix = "L" if s.bits == 64 else ""
    return f"({s.max}{suffix})", f"(-{s.max}{suffix} - 1)"


def helper_text(op: str, t: str) -> str:
    """The guarded operation ``op`` on the promoted type ``t`` as a C function (valid OpenCL C and C99)."""
    top, bottom = _limits(t) if scalar(t).signed else ("", "")
    guard = {
        "sadd": f"(b > 0 && a > {top} - b) || (b < 0 && a < {bottom} - b)",
        "ssub": f"(b < 0 && a > {top} + b) || (b > 0 && a < {bottom} + b)",
        "smul": f"(a > 0 && b > 0 && a > {top} / b) || (a > 0 && b <= 0 && b < {bottom} / a) || "
                f"(a <= 0 && b > 0 && a < {bottom} / b) || (a <= 0 && b <= 0 && a != 0 && b < {top} / a)",
    }.get(op)
    if guard is None:
        guard = f"b == 0 || (a == {bottom} && b == -1)" if scalar(t).signed else "b == 0"
    symbol = {"sadd": "+", "ssub": "-", "smul": "*", "sdiv": "/", "srem": "%"}[op]
    return f"static {t} flow_{op}_{t}({t} a, {t} b) {{ return ({guard}) ? a : a {symbol} b; }}"


class Writer:
    """The text of one body (the kernel's or a helper's)."""

    def __init__(self, dialect: Dialect, pointers: frozenset[str] = frozenset(), p: FlowProgram | None = None) -> None:
        self.d = dialect
        self.pointers = pointers  # a helper's scalar pointer parameters: spelled (*p)
        self.lines: list[str] = []
        self.p = p  # the program (for its struct helpers)

    def expr(self, e: Expr) -> str:
        if isinstance(e, VECTOR_EXPRESSIONS):
            return self.d.vectors.expr(self, e)
        if isinstance(e, Const):
            return const(e)
        if isinstance(e, Var):
            return f"(*{e.name})" if e.name in self.pointers else structs.spelled(e.name, self.pointers)
        if isinstance(e, Item):
            return self.d.item(e.fn, e.dim)
        if isinstance(e, (Load, ALoad)):
            name = e.buffer if isinstance(e, Load) else e.array
            return f"{name}[({self.expr(e.index)}) % {name}_n]"
        if isinstance(e, Bin):
            a, b = self.expr(e.a), self.expr(e.b)
            if e.op in HELPERS:
                return f"flow_{e.op}_{promoted(e.a.type)}({a}, {b})"
            if e.op in ("shl", "shr"):
                b = f"({b} & {scalar(e.a.type).bits - 1}u)"
            return f"({a} {SYMBOLS[e.op]} {b})"
        if isinstance(e, Un):
            return f"({ {'neg': '-', 'not': '~', 'lnot': '!'}[e.op]}{self.expr(e.a)})"
        if isinstance(e, Call):
            return self.d.builtin(e.fn, e.args[0].type, [self.expr(a) for a in e.args])
        if isinstance(e, Cast):
            return f"(({e.type})({self.expr(e.a)}))"
        assert isinstance(e, Select)
        # cast: the usual arithmetic conversions give (c ? uchar : uchar) the type int (C99 §6.5.15)
        return f"(({e.type})(({self.expr(e.cond)}) ? {self.expr(e.a)} : {self.expr(e.b)}))"

    def body(self, body: tuple[Stmt, ...], depth: int) -> None:
        pad = "    " * depth
        for s in body:
            if isinstance(s, Assign):
                self.lines.append(f"{pad}{self.expr(Var(s.var, ''))} = {self.expr(s.value)};")
            elif isinstance(s, AStore):
                self.lines.append(f"{pad}{s.array}[({self.expr(s.index)}) % {s.array}_n] = {self.expr(s.value)};")
            elif isinstance(s, If):
                self.lines.append(f"{pad}if ({self.expr(s.cond)}) {{")
                self.body(s.then, depth + 1)
                if s.orelse:
                    self.lines.append(f"{pad}}} else {{")
                    self.body(s.orelse, depth + 1)
                self.lines.append(f"{pad}}}")
            elif isinstance(s, Loop):
                self.loop(s, depth)
            elif isinstance(s, Exit):
                self.lines.append(f"{pad}if ({self.expr(s.cond)}) {s.kind};")
            elif isinstance(s, Exchange):
                self.lines += [f"{pad}{s.array}[lin_l] = {self.expr(s.value)};", f"{pad}{self.d.barrier}",
                               f"{pad}{s.var} = {s.array}[({self.expr(s.index)}) % {s.array}_n];",
                               f"{pad}{self.d.barrier}"]
            elif isinstance(s, SwizzleStore):
                self.lines.append(pad + self.d.vectors.store(self, s))
            elif isinstance(s, SInvoke):
                self.lines.append(pad + structs.call_text(s, self.p, [self.expr(a) for a in s.args]))
            else:
                self.invoke(s, pad)

    def loop(self, s: Loop, depth: int) -> None:
        """``b + k * step`` for ``k < n`` (reverse: last first) in the text of each form."""
        pad, inner, v, st = "    " * depth, "    " * (depth + 1), s.var, s.step
        n, b = f"n_{v}", f"b_{v}"
        trips = self.d.builtin("min", "uint", [f"(uint)({self.expr(s.trips)})", f"{s.cap}u"])
        if s.form == "do":
            trips = self.d.builtin("max", "uint", ["1u", trips])
        end = f"{b} + {n} * {st}"
        self.lines += [f"{pad}{{", f"{pad}    int {n} = (int){trips};",
                       f"{pad}    int {b} = (int)(({self.expr(s.base)}) & {BASE_MASK}u);"]
        step = f"{v} -= {st}" if s.reverse else f"{v} += {st}"
        if s.form == "for":
            first, more = (f"{b} + ({n} - 1) * {st}", f"{v} >= {b}") if s.reverse else (b, f"{v} < {end}")
            self.lines.append(f"{inner}for (int {v} = {first}; {more}; {step}) {{")
            self.body(s.body, depth + 2)
            self.lines.append(f"{inner}}}")
        else:  # the counter moves first in the body, so that continue moves it too
            before, test = (end, f"{v} - {st} >= {b}") if s.reverse else (f"{b} - {st}", f"{v} + {st} < {end}")
            self.lines.append(f"{inner}int {v} = {before};")
            self.lines.append(f"{inner}while ({test}) {{" if s.form == "while" else f"{inner}do {{")
            self.lines.append(f"{inner}    {step};")
            self.body(s.body, depth + 2)
            self.lines.append(f"{inner}}} while ({test});" if s.form == "do" else f"{inner}}}")
        self.lines.append(f"{pad}}}")

    def invoke(self, s: Invoke, pad: str) -> None:
        args = [self.expr(a) for a in s.args]
        args += [f"{q.name} + {q.offset}" if q.array else f"&{q.name}" for q in s.pointers]
        call = f"{s.function}({', '.join(args)})"
        self.lines.append(f"{pad}{s.var} = {call};" if s.var else f"{pad}(void){call};")


def _uses(p: FlowProgram) -> list[tuple[str, str]]:
    """The guarded helpers (operation, promoted type) the program's text calls, in a stable order."""
    bodies = [p.body, *(f.body for f in p.functions), *(f.body for f in p.struct_functions)]
    roots = [x for body in bodies for s in statements(body) for x in expressions(s)]
    roots += [f.result for f in p.functions]
    found = {(n.op, promoted(n.a.type)) for r in roots for n in walk(r) if isinstance(n, Bin) and n.op in HELPERS}
    return sorted(found)


def function_text(f: Function, d: Dialect) -> list[str]:
    w = Writer(d, frozenset(q.name for q in f.pointers if not q.length))
    params = [f"{p.type} {p.name}" for p in f.params]
    params += [f"{d.private}{q.type} *{q.name}" for q in f.pointers]
    head = "__attribute__((noinline)) " if f.noinline else ""
    w.lines.append(f"{head}static {f.type} {f.name}({', '.join(params) or 'void'}) {{")
    w.lines += [f"    const uint {q.name}_n = {q.length}u;" for q in f.pointers if q.length]
    w.lines += [f"    {v.type} {v.name} = {const(Const(v.type, v.init))};" for v in f.variables]
    w.body(f.body, 1)
    w.lines += [f"    return {w.expr(f.result)};", "}"]
    return w.lines


def prelude(p: FlowProgram, d: Dialect) -> list[str]:
    """The guarded helpers and the program's helper functions."""
    lines = d.vectors.header() + [helper_text(op, t) for op, t in _uses(p)]
    for f in p.functions:
        lines += function_text(f, d)
    lines += structs.definitions(p)
    for sf in p.struct_functions:
        lines += structs.function_text(sf, p, Writer(d, frozenset(q.name for q in sf.structs if q.pointer), p), const)
    return lines


def kernel_body(p: FlowProgram, d: Dialect) -> list[str]:
    """The kernel's statements: typed views of ``in`` and ``out``, arrays, variables, the body,
    the outputs at the global linear id."""
    ins, _, outs, _ = regions(p)
    w = Writer(d, p=p)
    g = d.global_
    w.lines += [f"    {g}const {i.type} *{i.name} = ({g}const {i.type} *)(in + {ins[i.name]});" for i in p.inputs]
    w.lines += [f"    const uint {i.name}_n = {i.count}u;" for i in p.inputs]
    w.lines += [f"    {g}{o.type} *{o.name} = ({g}{o.type} *)(out + {outs[o.name]});" for o in p.outputs]
    w.lines += [f"    const uint lin_g = {d.item('global_linear_id', 0)};",
                f"    const uint lin_l = {d.item('local_linear_id', 0)};"]
    for a in p.arrays:
        if a.space == "local":
            w.lines.append("    " + d.local(a.name, a.type, a.length))
        else:
            values = ", ".join(const(Const(a.type, v)) for v in a.init)
            w.lines.append(f"    {a.type} {a.name}[{a.length}] = {{{values}}};")
        n = group_size_text(d) if a.space == "local" and is_non_uniform(p) else f"{a.length}u"  # lang.flow_launch
        w.lines.append(f"    const uint {a.name}_n = {n};")
    w.lines += [f"    {v.type} {v.name} = {d.vectors.init(v.type, const(Const(element(v.type), v.init)))};"
                for v in p.variables]
    w.lines += structs.declarations(p, p.struct_vars, const)
    w.body(p.body, 1)
    w.lines += [f"    {o.name}[lin_g] = {o.var};" for o in p.outputs]
    return w.lines


def emit(p: FlowProgram) -> str:
    """The OpenCL C kernel of ``p``."""
    lines = ["#pragma OPENCL FP_CONTRACT OFF"]  # the default is ON (§6.15.2.1): never fuse a*b+c
    if "fp64" in p.requires:
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    d = OPENCL_20 if CL2 in p.requires else OPENCL
    lines += prelude(p, d)
    lines.append(f"__kernel void {KERNEL_NAME}(__global const uchar *in, __global uchar *out) {{")
    lines += kernel_body(p, d)
    lines.append("}")
    return "\n".join(lines) + "\n"
