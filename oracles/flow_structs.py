"""Structs in the exact interpreter of flow programs (oracles.flow; lang.flow_structs).

A member is a scalar of the machine named ``var.member`` (one value per work-item, as every
scalar). A struct helper's call runs its body in a machine of its own under the caller's mask:
a by-value parameter is a copy of the caller's members (C99 §6.5.2.2: the argument's value), a
pointer parameter's members are copied back after the body (its writes land in the caller's
struct; a call's struct arguments are distinct objects, lang.flow_struct_rules), and the
returned struct's members are assigned to the result's variable on the mask's work-items.
"""

from __future__ import annotations

import numpy as np

from lang.flow import FlowProgram
from lang.flow_structs import SInvoke, StructVar, member, struct, struct_function


def declare(machine, p: FlowProgram, variables: tuple[StructVar, ...]) -> None:
    """Every member of ``variables`` at its initial constant (``machine``: an oracles.flow.Machine)."""
    for v in variables:
        for d, init in zip(struct(p, v.struct).members, v.init):
            machine.declare(member(v.name, d.name), d.type, init)


def _copy(source, target, p: FlowProgram, struct_name: str, a: str, b: str) -> None:
    """The members of ``a`` in ``source`` as those of ``b`` in ``target`` (values and flush marks)."""
    for d in struct(p, struct_name).members:
        x, y = member(a, d.name), member(b, d.name)
        target.scalars[y] = source.scalars[x].copy()
        if x in source.flush:
            target.flush[y] = source.flush[x].copy()


def invoke(machine, s: SInvoke, m: np.ndarray) -> None:
    """``s.var = function(args..., structs...)`` on the work-items of ``m``."""
    p = machine.p
    f = struct_function(p, s.function)
    callee = type(machine)(p, machine.launch, machine.inputs)
    for d, a in zip(f.params, s.args):
        callee.scalars[d.name] = machine.int(a).copy()
    for d in f.variables:
        callee.declare(d.name, d.type, d.init)
    for name, q in zip(s.structs, f.structs):
        _copy(machine, callee, p, q.struct, name, q.name)
    declare(callee, p, f.locals)
    callee.run(f.body, m, None)
    for name, q in zip(s.structs, f.structs):
        if q.pointer:
            _copy(callee, machine, p, q.struct, q.name, name)
    if s.var:
        for d in struct(p, f.type).members:
            x = member(f.result, d.name)
            machine.assign(member(s.var, d.name), (callee.scalars[x], callee.flush.get(x)), m)
