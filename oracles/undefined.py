"""The operations of a program whose result the specification leaves undefined or
implementation-defined on some lane: what makes a program not a defined one.

An oracle marks such a lane unjudged with a rule that says why (``Rule.leaves``,
:data:`oracles.rules.LEAVES`): a float -> integer conversion without ``_sat`` of an operand out of
range (OpenCL C 3.0.19 §6.4.3.3: "the behavior is implementation-defined"), the w lane of a
3-component vector read through .hi or .odd (§6.3.7: "undefined"), a component 0xFFFFFFFF of
OpVectorShuffle (SPIR-V §3.42.12: "undefined"), §6.15.4's common functions at the operands Table 16
calls undefined (``math.<fn>.undefined``: clamp, min, max, mix, smoothstep), an image read at an INF or
NaN coordinate (§8.2) or outside the image under CLK_ADDRESS_NONE (§6.15.15.1). A lane left unjudged for another reason (a
bound the spec leaves open, a build option's relaxation, a flushed denormal, an operand the
oracle cannot pin) belongs to a defined program and is not one of them.

Every operation of every statement is evaluated (:func:`oracles.interpreter.evaluate`, keeping
each node's expectation), and so is the conversion by assignment of a value stored into a buffer of
another type (§6.4.1). An operation is named where the undefined lanes start: it has such a lane and
no operation among its arguments has one (an operation above it inherits the lane from it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lang.ir import Expr, Op, Program
from lang.layout import input_values
from lang.types import format_value
from oracles.expect import Expectation
from oracles.interpreter import environment, evaluate
from oracles.operands import convert_to
from oracles.rules import RULES, Rule

__all__ = ["UndefinedResult", "undefined_results"]


@dataclass(frozen=True)
class UndefinedResult:
    """An operation of a program with lanes whose result the spec leaves undefined or
    implementation-defined (see the module docstring)."""

    statement: int  # index into the program's body
    path: tuple[int, ...]  # argument indices from the statement's value to the operation (its root: ())
    rule: Rule  # the rule that marks the lanes, with ``leaves`` and the section that says so
    lanes: tuple[int, ...]  # the lanes (work-item major, the operation's own width) so marked
    width: int  # lanes per work-item of the operation's result
    operands: tuple[str, ...]  # the arguments' values at the first such lane (those of the same width)
    assignment: bool = False  # the conversion by assignment of the statement's value to its buffer's type


def _marked(e: Expectation) -> np.ndarray:
    """The lanes of ``e`` unjudged by a rule that leaves their result undefined or
    implementation-defined."""
    leaving = np.array([bool(r.leaves) for r in RULES])
    return ~e.judged & leaving[e.rule]


def _value(e: Expectation, lane: int) -> str:
    return format_value(int(e.allowed[0][lane]), e.scalar)


def _found(statement: int, path: tuple[int, ...], e: Expectation, width: int, args: list[Expectation],
           assignment: bool = False) -> UndefinedResult:
    lanes = np.flatnonzero(_marked(e))
    first = int(lanes[0])
    operands = tuple(_value(a, first) for a in args if len(a) == len(e))
    if assignment and not operands:  # a scalar stored into every lane of a vector
        operands = tuple(_value(a, first // width) for a in args)
    return UndefinedResult(statement, path, RULES[int(e.rule[first])], tuple(int(i) for i in lanes), width,
                           operands, assignment)


def _origins(statement: int, node: Expr, path: tuple[int, ...], seen: dict[int, Expectation],
             inputs: dict[str, np.ndarray], program: Program, env: frozenset) -> list[UndefinedResult]:
    """The operations of ``node``'s tree where undefined lanes start, deepest first."""
    if not isinstance(node, Op):
        return []
    out = [found for i, a in enumerate(node.args)
           for found in _origins(statement, a, path + (i,), seen, inputs, program, env)]
    e = seen[id(node)]
    below = any(isinstance(a, Op) and _marked(seen[id(a)]).any() for a in node.args)
    if not below and _marked(e).any():
        args = [seen[id(a)] if isinstance(a, Op) else evaluate(a, program, inputs, env) for a in node.args]
        out.append(_found(statement, path, e, node.type.width, args))
    return out


def undefined_results(program: Program, ftz: frozenset = frozenset()) -> list[UndefinedResult]:
    """Every operation of ``program`` (on a device whose float environment is ``ftz``, as
    :func:`oracles.expected` takes it) some lane of whose result the spec leaves undefined or
    implementation-defined; empty for a defined program. Programs with shared (atomic) locations
    are judged as histories (oracles.atomics) and have none."""
    if program.shared:
        return []
    inputs = input_values(program)
    env = environment(program, ftz)
    out: list[UndefinedResult] = []
    for i, s in enumerate(program.body):
        seen: dict[int, Expectation] = {}
        value = evaluate(s.value, program, inputs, env, seen)
        out += _origins(i, s.value, (), seen, inputs, program, env)
        target = program.buffer(s.buffer).type
        if s.value.type != target and not _marked(value).any():
            stored = convert_to(value, s.value.type, target, env)
            if _marked(stored).any():
                out.append(_found(i, (), stored, target.width, [value], assignment=True))
    return out

