"""Structs of flow programs (lang.flow_structs) in SPIR-V (fuzz.emit.spirv.flow_kernel).

A struct type is an OpTypeStruct of its members' types; a struct variable a Function-storage
OpVariable of it, initialised by one OpStore of an OpConstantComposite. Each member ``s.m`` is a
variable in memory (:attr:`fuzz.emit.spirv.flow_values.Values.memory`): an OpInBoundsAccessChain
to member ``m``, made in the function's first block, which every read (OpLoad) and write
(OpStore) of the member uses, and which a helper's scalar pointer parameter may take. A struct
helper is an OpFunction returning the struct (OpLoad of the returned variable, OpReturnValue):
a by-value parameter is copied into a variable of its own at the helper's start (the caller's
struct is unchanged, C99 §6.5.2.2), a pointer parameter is a Function-storage pointer to the
caller's struct, and its members are access chains from it. A call (OpFunctionCall) passes an
OpLoad of a by-value argument and the variable of a pointer argument, and stores the result into
its variable.
"""

from __future__ import annotations

from fuzz.emit.spirv.flow_values import Shared, ty
from lang.flow import FlowProgram
from lang.flow_structs import SInvoke, StructFunction, StructVar, member, struct


def struct_type(shared: Shared, name: str) -> int:
    """The OpTypeStruct of struct ``name``."""
    m = shared.m
    return m.struct(*(m.type(ty(d.type)) for d in struct(shared.p, name).members))


def place(w, name: str, struct_name: str, pointer: int) -> None:
    """Struct variable ``name`` at ``pointer``: its members' access chains in ``w.memory`` (``w``:
    a flow_kernel.Writer)."""
    m = w.m
    w.memory[name] = pointer
    for i, d in enumerate(struct(w.shared.p, struct_name).members):
        at = w.op("OpInBoundsAccessChain", m.pointer("Function", m.type(ty(d.type))), pointer, w.const("uint", i))
        w.memory[member(name, d.name)] = at
        w.types[member(name, d.name)] = d.type


def declare(w, variables: tuple[StructVar, ...]) -> None:
    """Each variable in a new OpVariable, stored its initial constants."""
    m, p = w.m, w.shared.p
    for v in variables:
        stype = struct_type(w.shared, v.struct)
        init = m.id()
        consts = [w.const(d.type, c) for d, c in zip(struct(p, v.struct).members, v.init)]
        m.inst("global", "OpConstantComposite", stype, init, *consts)
        var = m.variable(stype)
        w.store(var, init)
        place(w, v.name, v.struct, var)


def helper(shared: Shared, f: StructFunction, writer) -> int:
    """The OpFunction of struct helper ``f`` (its id); ``writer``: the flow_kernel.Writer class."""
    m = shared.m
    ret = struct_type(shared, f.type)
    types = [m.type(ty(d.type)) for d in f.params]
    types += [m.pointer("Function", struct_type(shared, q.struct)) if q.pointer else struct_type(shared, q.struct)
              for q in f.structs]
    fn = m.id()
    control = m.g.enum("FunctionControl", "DontInline" if f.noinline else "None")
    m.inst("function", "OpFunction", ret, fn, control, m.function_type(ret, *types))
    m.inst("debug", "OpName", fn, f.name)
    w = writer(shared)
    params = []
    for t in types:
        params.append(m.id())
        m.inst("function", "OpFunctionParameter", t, params[-1])
    w.start()
    for d, param in zip(f.params, params):
        w.types[d.name] = d.type
        w.values[d.name] = param
    for q, param in zip(f.structs, params[len(f.params):]):
        if q.pointer:
            place(w, q.name, q.struct, param)
        else:
            var = m.variable(struct_type(shared, q.struct))
            w.store(var, param)
            place(w, q.name, q.struct, var)
    for d in f.variables:
        w.types[d.name] = d.type
        w.values[d.name] = w.const(d.type, d.init)
    declare(w, f.locals)
    w.body(f.body)
    m.inst("function", "OpReturnValue", w.op("OpLoad", ret, w.memory[f.result]))
    w.finish()
    m.end_function()
    return fn


def invoke(w, s: SInvoke) -> None:
    """``var = function(args..., structs...)``."""
    p: FlowProgram = w.shared.p
    f = next(f for f in p.struct_functions if f.name == s.function)
    args = [w.value(a) for a in s.args]
    for name, q in zip(s.structs, f.structs):
        args.append(w.memory[name] if q.pointer else w.op("OpLoad", struct_type(w.shared, q.struct), w.memory[name]))
    result = w.op("OpFunctionCall", struct_type(w.shared, f.type), w.shared.functions[f.name], *args)
    if s.var:
        w.store(w.memory[s.var], result)
