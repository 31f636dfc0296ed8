"""Structs of flow programs (lang.flow_structs) in the OpenCL C text (fuzz.emit.opencl_flow).

A struct type is ``struct name { ... };`` before every helper (OpenCL C 3.0.19 §6.1; C99
§6.7.2.1), a struct variable ``struct S s = {c, ...};`` with each member's constant, a member the
member access ``s.m`` (through a pointer parameter ``(*p).m``, C99 §6.5.2.3), a struct helper
``static struct S name(..., struct S x, private struct S *y)`` returning one of its struct
variables, and its call ``s = name(..., x, &y);``.
"""

from __future__ import annotations

from lang.flow import Const, FlowProgram
from lang.flow_structs import SInvoke, StructFunction, StructVar, struct


def spelled(name: str, pointers: frozenset[str]) -> str:
    """The text of scalar ``name``: a member ``p.m`` of a pointer parameter ``p`` is ``(*p).m``."""
    var, dot, rest = name.partition(".")
    return f"(*{var}).{rest}" if dot and var in pointers else name


def definitions(p: FlowProgram) -> list[str]:
    """Every struct type's definition."""
    return [f"struct {s.name} {{ {' '.join(f'{d.type} {d.name};' for d in s.members)} }};" for s in p.structs]


def declarations(p: FlowProgram, variables: tuple[StructVar, ...], const) -> list[str]:
    """``struct S s = {...};`` of each variable (``const``: a Const's text)."""
    lines = []
    for v in variables:
        values = ", ".join(const(Const(d.type, c)) for d, c in zip(struct(p, v.struct).members, v.init))
        lines.append(f"    struct {v.struct} {v.name} = {{{values}}};")
    return lines


def function_text(f: StructFunction, p: FlowProgram, writer, const) -> list[str]:
    """A struct helper's text; ``writer`` a fuzz.emit.opencl_flow.Writer for its body, whose
    pointers are the helper's struct pointer parameters."""
    w = writer
    params = [f"{d.type} {d.name}" for d in f.params]
    params += [f"{w.d.private}struct {q.struct} *{q.name}" if q.pointer else f"struct {q.struct} {q.name}"
               for q in f.structs]
    head = "__attribute__((noinline)) " if f.noinline else ""
    w.lines.append(f"{head}static struct {f.type} {f.name}({', '.join(params) or 'void'}) {{")
    w.lines += [f"    {v.type} {v.name} = {const(Const(v.type, v.init))};" for v in f.variables]
    w.lines += declarations(p, f.locals, const)
    w.body(f.body, 1)
    w.lines += [f"    return {f.result};", "}"]
    return w.lines


def call_text(s: SInvoke, p: FlowProgram, args: list[str]) -> str:
    """The statement of a struct helper's call, ``args`` the text of its scalar arguments."""
    f = next(f for f in p.struct_functions if f.name == s.function)
    args = args + [f"&{name}" if q.pointer else name for name, q in zip(s.structs, f.structs)]
    call = f"{f.name}({', '.join(args)})"
    return f"{s.var} = {call};" if s.var else f"(void){call};"
