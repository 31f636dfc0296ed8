"""Every operation's reference, assembled by declaration from the modules that define them.

Each oracle module declares its own ``REFERENCES`` table (operation name -> reference); this
module merges them into the one table :func:`oracles.interpreter.evaluate` reads and checks, at
import, that every operation of :data:`lang.ops.OPS` has exactly one reference.
"""

from __future__ import annotations

from lang.ir import Op
from lang.maths import FUNCTIONS
from lang.ops import OPS
from oracles import arith, expressions, integers, rules, spirv_only
from oracles.atomics import references as atomics
from oracles.images import reads as images
from oracles.math import engine
from oracles.expect import Expectation
from oracles.operands import Reference


def _math(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """A math, common or geometric built-in, or / on floats (oracles.math): its result."""
    return engine.outputs(op, args, n, ftz)[0]


def _merge(*tables: dict[str, Reference]) -> dict[str, Reference]:
    out: dict[str, Reference] = {}
    for table in tables:
        twice = out.keys() & table.keys()
        if twice:
            raise ImportError(f"operations with two references: {', '.join(sorted(twice))}")
        out.update(table)
    return out


REFERENCES: dict[str, Reference] = _merge(
    arith.REFERENCES, expressions.REFERENCES, integers.REFERENCES, spirv_only.REFERENCES, atomics.REFERENCES,
    images.REFERENCES,
    {name: _math for name in FUNCTIONS},
)
"""The reference of every operation of lang.ops.OPS, by name."""

def severity_of(rule_id: str) -> str:
    """The severity of a rule of any oracle module (all registered once this module is imported)."""
    return rules.severity_of(rule_id)


_missing = OPS.keys() - REFERENCES.keys()
if _missing:
    raise ImportError(f"operations without a reference in the oracle: {', '.join(sorted(_missing))}")
_unknown = REFERENCES.keys() - OPS.keys()
if _unknown:
    raise ImportError(f"references of undeclared operations: {', '.join(sorted(_unknown))}")
