"""Traversal of a flow program's tree (lang.flow): an expression's operands and nodes, a body's
statements nested ones included, and a statement's own expressions. Every reader (emitters,
interpreter, validator, strategies, reducer) walks programs with these, so a new node is taught
to them here once."""

from __future__ import annotations

from lang import flow_vectors
from lang.flow import ALoad, AStore, Assign, Bin, Call, Cast, Exchange, Exit, Expr, If, Load, Loop, Select, Stmt, Un


def children(e: Expr) -> tuple[Expr, ...]:
    """The operands of an expression."""
    if isinstance(e, flow_vectors.EXPRESSIONS):
        return flow_vectors.children(e)
    if isinstance(e, (Load, ALoad)):
        return (e.index,)
    if isinstance(e, Bin):
        return (e.a, e.b)
    if isinstance(e, (Un, Cast)):
        return (e.a,)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Select):
        return (e.cond, e.a, e.b)
    return ()


def walk(e: Expr):
    """Every node of an expression, parents first."""
    yield e
    for c in children(e):
        yield from walk(c)


def statements(body: tuple[Stmt, ...]):
    """Every statement of a body, nested ones included, parents first."""
    for s in body:
        yield s
        if isinstance(s, If):
            yield from statements(s.then)
            yield from statements(s.orelse)
        elif isinstance(s, Loop):
            yield from statements(s.body)


def expressions(s: Stmt) -> tuple[Expr, ...]:
    """A statement's own expressions (not those of the statements nested in it)."""
    if isinstance(s, Assign):
        return (s.value,)
    if isinstance(s, AStore):
        return (s.index, s.value)
    if isinstance(s, (If, Exit)):
        return (s.cond,)
    if isinstance(s, Loop):
        return (s.base, s.trips)
    if isinstance(s, Exchange):
        return (s.value, s.index)
    if isinstance(s, flow_vectors.SwizzleStore):
        return (s.value,)
    return s.args
