"""What every reference shares: how operands reach an operation.

Implicit conversions and the widening of a scalar beside a vector (OpenCL C 3.0 §6.4.1, §6.5),
the operands a device that flushes denormals may read (§7.2, §7.5.3), the cap on alternative
results, and the error a reference raises when the program reached undefined behaviour.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from lang.ir import Op
from lang.types import Scalar, Type, scalar
from oracles import conversions
from oracles.expect import Expectation


class UndefinedBehaviour(AssertionError):
    """The program reached a case the spec leaves undefined: a generator bug, never a report."""


Reference = Callable[[Op, list[Expectation], int, frozenset], Expectation]

MAX_CANDIDATES = 16


def broadcast(e: Expectation, width: int) -> Expectation:
    """A scalar expectation replicated into ``width`` lanes per work-item."""
    if width == 1:
        return e
    return e.select(np.repeat(np.arange(len(e)), width))



def flush_variants(values: np.ndarray, s: Scalar) -> list[np.ndarray]:
    """A float operand as a device that flushes denormals may read it (004 §7.2, §7.5.3): each
    subnormal as +0 and as -0 (the sign of a flushed zero is unspecified, DIGEST §11.1 item 6)."""
    with np.errstate(all="ignore"):
        tiny = (np.abs(values.astype(np.float64)) < 2.0**s.min_exp) & (values != 0)
    if not tiny.any():
        return []
    return [np.where(tiny, np.array(z, s.dtype), values) for z in (0.0, -0.0)]


def flush_result(values: np.ndarray, name: str, exact: np.ndarray | None = None) -> list[np.ndarray]:
    """The ±0 alternatives for lanes whose result is subnormal before rounding (§7.5.3 case 2/4)."""
    s = scalar(name)
    probe = values if exact is None else exact
    with np.errstate(all="ignore"):
        tiny = (np.abs(probe.astype(np.float64)) < 2.0**s.min_exp) & (probe != 0)
    if not tiny.any():
        return []
    return [np.where(tiny, np.array(z, s.dtype), values) for z in (0.0, -0.0)]



def converted_operands(op: Op, args: list[Expectation], t: Type, ftz: frozenset) -> list[Expectation]:
    """The operands of a binary operator brought to type ``t``: converted to its element type as
    implicit conversions do (rte to floats, §6.4.3.2) and, a scalar beside a vector, widened."""
    return [widen(conversions.expect_convert(e, t.scalar, ftz=ftz), a.type, t) for a, e in zip(op.args, args)]


def widen(e: Expectation, t: Type, target: Type) -> Expectation:
    """An operand of type ``t`` as lanes of ``target``: a scalar beside a vector is replicated
    (OpenCL C 3.0 §6.5.1 and the other binary operators: "widened to a vector that has the same
    number of components")."""
    return broadcast(e, target.width) if t.width == 1 and target.width > 1 else e



def convert_to(value: Expectation, value_t: Type, target_t: Type, ftz: frozenset) -> Expectation:
    """A value converted as by a cast or an assignment (§6.4.1, §6.4.2, §6.5.15): default
    rounding, and a scalar replicated into every lane of a vector target."""
    converted = conversions.expect_convert(value, target_t.scalar, ftz=ftz)
    return converted if value_t.width == target_t.width else broadcast(converted, target_t.width)

