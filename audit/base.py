"""What the audit's operation modules share (triage.audit): the lanes of a value, the registry
of handlers, the error for an operation without an independent reference, implicit conversions
(OpenCL C 3.0.19 §6.4.1, §6.4.6) and truth values (§6.5.4).

A handler takes the evaluator (its ``env``, ``program``, ``item`` and ``spirv``), the IR
operation and its operands' lanes, and returns the operation's lanes.
"""

from __future__ import annotations

from typing import Any, Callable

from audit.convert import convert_lane, float_equal, float_less
from audit.types import AType, NotOpenCL, truth_type
from audit.values import AuditLane, int_bits, int_value, is_float, width
from lang.ir import Op

Lanes = list[AuditLane]
Handler = Callable[[Any, Op, list[Lanes]], Lanes]


class Unsupported(Exception):
    """An operation the audit has no independent reference for (the message says which)."""


class Registry(dict[str, Handler]):
    def handles(self, *names: str) -> Callable[[Handler], Handler]:
        def add(fn: Handler) -> Handler:
            for n in names:
                self[n] = fn
            return fn
        return add


def atype(t) -> AType:
    return (t.scalar, t.width)


def implicit(ev, lanes: Lanes, src: AType, dst: AType) -> Lanes:
    """A value converted as by assignment or as an operand (§6.4.1, §6.4.6): default rounding,
    a scalar replicated into a vector; no implicit conversion between vector types."""
    if src[1] > 1 and src != dst:
        raise NotOpenCL(f"no implicit conversion from {src[0]}{src[1]} to {dst[0]}{dst[1]} (§6.4.1)")
    out = [convert_lane(lane, src[0], dst[0], ev.env) for lane in lanes]
    return out * dst[1] if src[1] == 1 and dst[1] > 1 else out


def check(op: Op, want: AType) -> None:
    """The IR's result type must be the one C gives (else the expression is not what the IR says)."""
    if atype(op.type) != want:
        raise NotOpenCL(f"C gives {want[0]}{want[1] if want[1] > 1 else ''}, the IR says {op.type.c_name}")


def truth(flag: bool, t: AType) -> AuditLane:
    """A relational result (§6.5.4): 1/0 for scalars, -1/0 per lane for vectors."""
    result = truth_type(t)
    return AuditLane(result[0], (int_bits((-1 if t[1] > 1 else 1) if flag else 0, result[0]),))


def nonzero(bits: int, s: str) -> bool:
    """Whether a value compares unequal to 0 (a NaN does)."""
    if is_float(s):
        return not float_equal(bits, 0, s)
    return int_value(bits, s) != 0


def msb(bits: int, s: str) -> bool:
    return bool(bits >> (width(s) - 1) & 1)


_ORDER = {"==": lambda lt, eq: eq, "!=": lambda lt, eq: not eq, "<": lambda lt, eq: lt,
          "<=": lambda lt, eq: lt or eq, ">": lambda lt, eq: not lt and not eq, ">=": lambda lt, eq: not lt}


def relation(operator: str, a: int, b: int, s: str, nan: bool | None = None) -> bool:
    """``a operator b`` in type ``s``. With a NaN operand the result is ``nan``, or where that
    is None OpenCL C's: false for every relation except != (§6.5.4, §6.5.5)."""
    if is_float(s):
        lt, eq = float_less(a, b, s), float_equal(a, b, s)
        if lt is None:
            return operator == "!=" if nan is None else nan
    else:
        x, y = int_value(a, s), int_value(b, s)
        lt, eq = x < y, x == y
    return _ORDER[operator](lt, eq)
