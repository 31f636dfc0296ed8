"""Structs in flow programs (lang.flow): struct types of mixed members, struct variables, helpers
that take structs by value and by pointer and return one.

A member of a struct variable is a scalar named ``var.member`` (:func:`member`): it is read as a
:class:`lang.flow.Var` and written by a :class:`lang.flow.Assign` of that name, so a member carries
values through loops, branches, pointer arguments (``&s.m``) and outputs exactly as a scalar does,
in every reader. In the OpenCL C text the name is the member access itself (``s.m``, OpenCL C
3.0.19 §6.1 and C99 §6.5.2.3; through a struct pointer parameter ``(*p).m``); in SPIR-V it is an
OpAccessChain into the struct's Function-storage OpVariable.

* :class:`Struct` is a type ``struct name { members }``: integer members of any width and
  signedness, ``float`` members (``double`` where the program requires fp64).
* :class:`StructVar` is a struct variable with each member's initial constant (the kernel's in
  :attr:`lang.flow.FlowProgram.struct_vars`, a helper's own in :attr:`StructFunction.locals`).
* :class:`StructFunction` is a helper ``static struct S name(scalars..., struct S x, private
  struct S *y, ...)`` that returns one of its struct variables (a by-value parameter or a local):
  by-value parameters are the callee's copies (the caller's struct is unchanged), writes through
  a pointer parameter land in the caller's struct (C99 §6.5.2.2, §6.7.5.3).
* :class:`SInvoke` calls one from the kernel: ``var = name(args..., s, &t, ...)``.

Their rules are :mod:`lang.flow_struct_rules`'s, which :mod:`lang.flow_rules` checks.
"""

from __future__ import annotations

from dataclasses import dataclass

# Decl, Expr, Stmt and FlowProgram in the annotations are lang.flow's; lang.flow imports this
# module for its nodes, so this one imports nothing of lang.flow (annotations are not evaluated).


@dataclass(frozen=True)
class Struct:
    """``struct name { type member; ... }`` (each :class:`lang.flow.Decl`'s ``init`` unused)."""

    name: str
    members: tuple[Decl, ...]


@dataclass(frozen=True)
class StructVar:
    """A variable of struct type ``struct``; ``init`` holds each member's initial constant."""

    name: str
    struct: str
    init: tuple[int, ...]


@dataclass(frozen=True)
class StructParam:
    """A helper's struct parameter: ``struct S name`` (by value) or ``private struct S *name``."""

    name: str
    struct: str
    pointer: bool = False


@dataclass(frozen=True)
class StructFunction:
    """``static struct S name(params..., structs...)``: its own scalars and struct variables,
    its body, then ``return result`` (the name of a by-value parameter or a local)."""

    name: str
    params: tuple[Decl, ...]
    structs: tuple[StructParam, ...]
    variables: tuple[Decl, ...]
    locals: tuple[StructVar, ...]
    body: tuple[Stmt, ...]
    result: str
    noinline: bool = False

    @property
    def type(self) -> str:
        """The struct this helper returns."""
        return next(v.struct for v in (*self.structs, *self.locals) if v.name == self.result)


@dataclass(frozen=True)
class SInvoke:
    """``var = function(args..., structs...)``: ``structs`` names the kernel's struct variables
    for the helper's struct parameters in order (passed as the parameter says: by value, or
    ``&name``); ``var`` empty: the result is dropped."""

    function: str
    args: tuple[Expr, ...]
    structs: tuple[str, ...]
    var: str = ""


NODES = (Struct, StructVar, StructParam, StructFunction, SInvoke)


def member(var: str, name: str) -> str:
    """The scalar name of member ``name`` of struct variable ``var``."""
    return f"{var}.{name}"


def struct(p: FlowProgram, name: str) -> Struct:
    return next(s for s in p.structs if s.name == name)


def struct_function(p: FlowProgram, name: str) -> StructFunction:
    return next(f for f in p.struct_functions if f.name == name)


def members(p: FlowProgram, var: str, struct_name: str) -> dict[str, str]:
    """The scalars of struct variable ``var`` (``var.member`` -> type), in member order."""
    return {member(var, d.name): d.type for d in struct(p, struct_name).members}
