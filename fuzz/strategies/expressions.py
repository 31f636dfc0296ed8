"""Strategies for programs of random typed expression trees over scalars and vectors (area
``expressions``).

``expression_programs(caps, policy)`` draws programs whose statements store a depth-limited
expression tree (``policy.expr_depth``; the trees: :mod:`fuzz.strategies.trees`) into an output
buffer, or write part of an output element with vstoren.
"""

from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

from fuzz.strategies.conversions import Builder, Caps, program_of
from fuzz.strategies.trees import POW2, VECTORS, Gen
from lang.ir import Op, Program, Store
from lang.ops import Handlers
from lang.policy import Policy
from lang.types import Type

STATEMENTS: Handlers[Callable[[Builder], Store]] = Handlers()
"""The statement builders of the expressions area, by statement kind."""
statement = STATEMENTS.register


def _result_type(b: Builder) -> Type:
    return Type(b.scalar_type(), b.width())


@statement("expression")
def _expression_statement(b: Builder) -> Store:
    t = _result_type(b)
    return Store(b.output(t), Gen(b).expr(t, b.policy.expr_depth))


@statement("vstore")
def _vstore(b: Builder) -> Store:
    """vstoren(value, offset, p) into the scalars of an output element of m >= n lanes (m not 3)."""
    n = b.rnd.choice(VECTORS)
    m = b.rnd.choice([m for m in POW2 if m >= n])
    elem = b.scalar_type()
    value = Gen(b).expr(Type(elem, n), b.policy.expr_depth - 1)
    op = Op("vstore", (value,), Type(elem, m), (("offset", b.rnd.randrange(m // n)),))
    return Store(b.output(op.type), op)


def expression_kinds(policy: Policy) -> list[tuple[str, int]]:
    return [("expression", policy.w_expression), ("vstore", policy.w_vstore)]


@st.composite
def expression_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Programs of expression trees (see the module docstring)."""
    return program_of(draw, caps, policy, expression_kinds(policy), "expressions", STATEMENTS)
