"""The rules of structs in flow programs (lang.flow_structs), which lang.flow_rules checks with
the rest: declarations, a struct helper's scope, a struct helper's call (OpenCL C 3.0.19 §6.1
and C99 §6.7.2.1 for struct types, §6.5.2.2 for calls)."""

from __future__ import annotations

import re

from lang.flow import FLOAT_TYPES, INT_TYPES, FlowProgram
from lang.flow_structs import SInvoke, StructFunction, StructVar, members, struct

__all__ = ["SInvoke", "check", "check_call"]  # SInvoke: lang.flow_rules dispatches on it here
from lang.nodes import InvalidProgram
from lang.types import scalar

IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*$")
RESERVED = frozenset({"wi", "arg"})
"""Struct tags the host C evaluation of the tests uses itself."""


def _fail(text: str) -> None:
    raise InvalidProgram(text)


def check(p: FlowProgram, body, scope) -> dict[str, str]:
    """Check the program's structs and return the kernel's member scalars: the declarations
    (:func:`kernel_members`), each struct helper's body in its scope (:func:`helper_members`;
    ``body`` and ``scope``: lang.flow_rules' body check and Scope class)."""
    found = kernel_members(p)
    for f in p.struct_functions:
        body(f.body, scope(helper_members(f, p), {}, helper=True), p, loops=())
    return found


def check_call(s: SInvoke, p: FlowProgram, helper: bool, expr) -> None:
    """Check a struct helper's call (:func:`call_types`), its scalar arguments by ``expr`` (the
    type of a checked expression)."""
    for a, t in zip(s.args, call_types(s, p, helper)):
        if expr(a) != t:
            _fail(f"call of {s.function}: an argument of type {a.type}, its parameter a {t}")


def kernel_members(p: FlowProgram) -> dict[str, str]:
    """The kernel's member scalars, once the struct declarations keep their rules: each type has
    one or more members of distinct names, each an integer or float type the program may use
    (§6.1: ``double`` needs fp64, ``long`` int64); each variable names a declared struct and
    initialises every member with a constant of its type."""
    names = [s.name for s in p.structs]
    if len(set(names)) != len(names) or any(not IDENTIFIER.match(n) or n in RESERVED for n in names):
        _fail(f"struct types {names}: distinct identifiers (not {', '.join(sorted(RESERVED))})")
    for s in p.structs:
        ms = [d.name for d in s.members]
        if not ms or len(set(ms)) != len(ms) or not all(IDENTIFIER.match(m) for m in ms):
            _fail(f"struct {s.name}: one or more members of distinct identifier names")
        for d in s.members:
            if d.type not in INT_TYPES + FLOAT_TYPES:
                _fail(f"struct {s.name}: member {d.name} of type {d.type!r}, no integer or float type")
            needs = scalar(d.type).needs
            if needs and needs not in p.requires:
                _fail(f"struct {s.name}: member {d.name} of type {d.type} needs {needs}, which the program does not require")
    taken = {d.name for d in (*p.inputs, *p.outputs, *p.variables, *p.arrays, *p.functions)}
    helpers = [f.name for f in p.struct_functions]
    if len(set(helpers)) != len(helpers) or taken & set(helpers) or not all(IDENTIFIER.match(n) for n in helpers):
        _fail(f"struct helpers {helpers}: distinct identifiers, no other name of the program")
    taken |= set(helpers)
    return _variables(p, p.struct_vars, taken, "the kernel")


def _variables(p: FlowProgram, variables: tuple[StructVar, ...], taken: set[str], where: str) -> dict[str, str]:
    scalars: dict[str, str] = {}
    for v in variables:
        if v.name in taken or not IDENTIFIER.match(v.name) or v.struct not in {s.name for s in p.structs}:
            _fail(f"struct variable {v.name} of {where}: a new identifier of a declared struct type")
        taken.add(v.name)
        ms = members(p, v.name, v.struct)
        if len(v.init) != len(ms):
            _fail(f"struct variable {v.name}: one initial constant per member ({len(ms)})")
        for value, t in zip(v.init, ms.values()):
            s = scalar(t)
            ok = s.min <= value <= s.max if s.is_int else 0 <= value < 1 << s.bits
            if not ok:
                _fail(f"struct variable {v.name}: initial constant {value} does not fit {t}")
        scalars |= ms
    return scalars


def helper_members(f: StructFunction, p: FlowProgram) -> dict[str, str]:
    """The scalars a struct helper's body sees: its integer parameters and variables, and the
    integer members of its struct parameters and locals. A helper computes no float (the SPIR-V
    module's ContractionOff is the kernel's, lang.flow_rules): its float members pass through
    unread. It returns one of its by-value parameters or locals."""
    scalars = {d.name: d.type for d in (*f.params, *f.variables)}
    if len(scalars) != len(f.params) + len(f.variables) or any(t not in INT_TYPES for t in scalars.values()):
        _fail(f"helper {f.name}: distinct integer parameters and variables")
    for d in f.variables:
        if not scalar(d.type).min <= d.init <= scalar(d.type).max:
            _fail(f"helper {f.name}: initial constant {d.init} does not fit {d.type}")
    taken = set(scalars)
    params = tuple(StructVar(q.name, q.struct, tuple(0 for _ in struct(p, q.struct).members))
                   for q in f.structs if q.struct in {s.name for s in p.structs})
    if len(params) != len(f.structs):
        _fail(f"helper {f.name}: struct parameters of declared struct types")
    members_ = _variables(p, params + f.locals, taken, f"helper {f.name}")
    if f.result not in {q.name for q in f.structs if not q.pointer} | {v.name for v in f.locals}:
        _fail(f"helper {f.name}: returns a by-value struct parameter or a local struct variable")
    return scalars | {n: t for n, t in members_.items() if t in INT_TYPES}


def call_types(s: SInvoke, p: FlowProgram, helper: bool) -> tuple[str, ...]:
    """The types of the call's scalar arguments, once its struct arguments keep their rules: a
    struct helper called from the kernel, each struct argument a kernel struct variable of the
    parameter's type (§6.5.2.2: the argument's type is the parameter's), all of them and the
    result's variable distinct objects, the result's variable of the returned type."""
    f = next((f for f in p.struct_functions if f.name == s.function), None)
    if f is None or helper:
        _fail(f"call of {s.function}: a struct helper called from the kernel only")
    kinds = {v.name: v.struct for v in p.struct_vars}
    if len(s.args) != len(f.params) or len(s.structs) != len(f.structs):
        _fail(f"call of {f.name}: {len(f.params)} values and {len(f.structs)} structs expected")
    for name, q in zip(s.structs, f.structs):
        if kinds.get(name) != q.struct:
            _fail(f"call of {f.name}: {name} is no struct {q.struct} variable of the kernel")
    names = [*s.structs, *([s.var] if s.var else [])]
    if len(set(names)) != len(names):
        _fail(f"call of {f.name}: struct arguments and the result name distinct variables")
    if s.var and kinds.get(s.var) != f.type:
        _fail(f"call of {f.name}: its struct {f.type} result goes to {s.var}, no struct {f.type} variable")
    return tuple(d.type for d in f.params)
