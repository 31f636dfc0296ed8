"""What every reference shares: how operands reach an operation.

Implicit conversions and the widening of a scalar beside a vector (OpenCL C 3.0 §6.4.1, §6.5),
the type an operator's result has (integer promotion of scalars, none for vectors:
:func:`operator_type`), the operands a device that flushes denormals may read (§7.2, §7.5.3), the
cap on alternative results, and the error a reference raises when the program reached undefined
behaviour.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from lang.ir import InvalidProgram, Op
from lang.types import Scalar, Type, common_type, operand_type, promoted, scalar
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
    """A float operand as a device that flushes denormals may read it (OpenCL C 3.0.19 §7.2, §7.5.3):
    each subnormal as +0 and as -0 ("the sign of the zero is undefined", §7.5.3)."""
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
    implicit conversions do (rte to floats, §6.4.3.2) and, a scalar beside a vector, widened.
    ``t`` must be the type the usual arithmetic conversions give the operands (§6.4.6: C99
    §6.3.1.8 with its integer promotions for two scalars, the vector's type beside a vector), else
    the program is not well formed (:func:`operator_type`)."""
    usual = operand_type(*(a.type for a in op.args))
    if t != usual:
        raise InvalidProgram(f"{op.op} {op.attr('operator') or ''} on {', '.join(str(a.type) for a in op.args)} "
                             f"is computed in {usual}, not {t} (OpenCL C 3.0 §6.4.6, C99 §6.3.1.1, §6.3.1.8)")
    return [widen(conversions.expect_convert(e, t.scalar, ftz=ftz), a.type, t) for a, e in zip(op.args, args)]


OPERATORS = frozenset({"arith", "div", "shift", "complement"})
"""The operators of the IR whose result type follows from their operands' types by the usual
arithmetic conversions or the integer promotions (+ - * / % & | ^, << >>, ~). The built-ins of
§6.15.3 are not among them: "the actual type has to be the same for all arguments and the return
type" (gentype), so add_sat(char, char) is a char, computed in char."""


def operator_type(op: Op) -> Type:
    """The type OpenCL C gives the result of operator ``op`` (one of :data:`OPERATORS`):

    - ``<<``, ``>>``, ``~``: the type of the (left) operand after integer promotion for a scalar
      (C99 §6.3.1.1, §6.5.3.3, §6.5.7: char, uchar, short and ushort become int), the operand's own
      type for a vector (OpenCL C §6.5.6, §6.5.10: "the number of bits used to represent the data type of
      E1 after integer promotion, if E1 is a scalar, or [...] of E1 elements, if E1 is a vector");
    - ``+ - * / % & | ^``: the usual arithmetic conversions (OpenCL C §6.4.6 "shall"; for two scalars C99
      §6.3.1.8, integer promotions included, so char + char is an int; a vector's type beside a
      scalar, which is converted to its element type: vectors never promote, "short8 + char" is a
      short8, §6.4.6's note)."""
    if op.op in ("shift", "complement"):
        left = op.args[0].type
        return left if left.is_vector else Type(promoted(left.scalar))
    return operand_type(op.args[0].type, op.args[1].type)


def check_operator_type(op: Op) -> None:
    """Raise :class:`~lang.ir.InvalidProgram` when an operator's IR type is not the type OpenCL C
    gives it (:func:`operator_type`): the OpenCL C text of such a node (``a << b`` of two shorts
    stored as a short) computes in the promoted type, while a SPIR-V module and the IR compute in
    the narrow one, so no verdict on it would be one a vendor cannot argue with. A scalar shift's
    count must be a scalar (OpenCL C §6.5.10: "the rightmost operand must be a scalar if the first
    operand is a scalar")."""
    want = operator_type(op)
    if op.type != want:
        raise InvalidProgram(f"{op.op} {op.attr('operator') or '~'} on {', '.join(str(a.type) for a in op.args)} "
                             f"has type {want} in OpenCL C, not {op.type} (C99 §6.3.1.1 integer promotions; "
                             "OpenCL C 3.0 §6.4.6, §6.5.6, §6.5.10)")
    if op.op == "shift" and not op.args[0].type.is_vector and op.args[1].type.is_vector:
        raise InvalidProgram("a scalar shifted by a vector count (OpenCL C 3.0 §6.5.10: the count must be a scalar)")


def ternary_type(x: Type, y: Type) -> Type:
    """The type of ``c ? x : y`` on two scalar values: the usual arithmetic conversions (C99
    §6.5.15p5, which OpenCL C §6.5.9 follows for scalars), so char ? char : char is an int."""
    return Type(common_type(x.scalar, y.scalar))


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

