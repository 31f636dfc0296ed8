"""Conservative value ranges of integer expressions, for every input value (YARPGen-style).

``bounds(e)`` is an interval that holds every lane of ``e`` for *any* contents of the input
buffers, so a program kept free of undefined behaviour by it stays free of it whatever inputs a
reducer or a user puts in. An operation not listed here may take any value of its type; a lane
the spec leaves undefined (a 3-vector's w read through .hi/.odd) may hold any value too.
``narrow`` wraps an expression so that its range fits an interval, with constructs that are under
test themselves: ``x >> k`` with a literal count, or ``clamp(x, lo, hi)`` with literal bounds
(OpenCL C 3.0 §6.5.10, §6.15.3).
"""

from __future__ import annotations

import random
from typing import Callable

import numpy as np

from lang.ir import Expr, Literal, Load, Op
from lang.ops import INTEGER_BUILTINS, RELATIONAL_BUILTINS, Interval, interval_union
from lang.types import Type, scalar


def type_range(t: Type) -> Interval:
    return t.elem.min, t.elem.max


def literal_values(lit: Literal) -> list[int]:
    elem = lit.type.elem
    return [int(v) for v in np.array(lit.bits, dtype=np.uint64).astype(elem.bits_dtype).view(elem.dtype)]


def _within(i: Interval, t: Type) -> bool:
    return t.elem.min <= i[0] and i[1] <= t.elem.max


def _arith(op: Op, args: list[Interval]) -> Interval | None:
    (a0, a1), (b0, b1) = args
    operator = op.attr("operator")
    if operator == "+":
        return a0 + b0, a1 + b1
    if operator == "-":
        return a0 - b1, a1 - b0
    if operator == "*":
        products = [x * y for x in (a0, a1) for y in (b0, b1)]
        return min(products), max(products)
    if operator == "&" and (a0 >= 0 or b0 >= 0):  # x & m with m >= 0 lies in [0, m]
        return 0, min(x for x in (a1 if a0 >= 0 else None, b1 if b0 >= 0 else None) if x is not None)
    return None


def _shift(op: Op, args: list[Interval]) -> Interval | None:
    count = op.args[1]
    if op.attr("operator") != ">>" or not isinstance(count, Literal):
        return None
    ks = {v & (op.type.elem.bits - 1) for v in literal_values(count)}
    lo, hi = args[0]
    return min(lo >> k for k in ks), max(hi >> k for k in ks)


def _convert(op: Op, args: list[Interval]) -> Interval | None:
    if not op.args[0].type.elem.is_int:
        return None
    if op.attr("sat"):
        lo, hi = type_range(op.type)
        return max(args[0][0], lo), min(args[0][1], hi)
    return args[0]  # kept only when within the destination's range (checked by bounds())


_RULES: dict[str, Callable[[Op, list[Interval]], Interval | None]] = {
    "arith": _arith,
    "shift": _shift,
    "convert": _convert,
    "cast": _convert,
    "swizzle": lambda op, a: a[0],
    "insert": lambda op, a: interval_union(*a),
    "vec": lambda op, a: interval_union(*a),
    "select": lambda op, a: interval_union(a[0], a[1]),
    "ternary": lambda op, a: interval_union(a[1], a[2]),
    **{b.name: b.bounds for b in INTEGER_BUILTINS if b.bounds is not None},  # declared with each built-in
}
for _truth in ("compare", "logic", "not", "any", "all"):
    _RULES[_truth] = lambda op, a: (-1, 1)


def bounds(e: Expr) -> Interval:
    """An interval holding every lane of the integer expression ``e`` for any input values."""
    t = e.type
    if isinstance(e, Literal):
        values = literal_values(e)
        return min(values), max(values)
    if isinstance(e, Load) or not isinstance(e, Op):
        return type_range(t)
    if e.op == "swizzle" and max(e.attr("components")) >= e.args[0].type.width:
        return type_range(t)  # an undefined lane can hold anything
    if e.op in RELATIONAL:
        return -1, 1
    rule = _RULES.get(e.op)
    if rule is None:
        return type_range(t)
    out = rule(e, [bounds(a) if a.type.elem.is_int else (0, 0) for a in e.args])
    return out if out is not None and _within(out, t) else type_range(t)


RELATIONAL = frozenset(name for name, _, _ in RELATIONAL_BUILTINS)


def may_overflow(op: Op) -> bool:
    """Whether a + - * can leave the range of its (signed) type for some input values."""
    out = _arith(op, [bounds(a) for a in op.args])
    return out is None or not _within(out, op.type)


def fits(e: Expr, lo: int, hi: int) -> bool:
    b = bounds(e)
    return lo <= b[0] and b[1] <= hi


def narrow(e: Expr, lo: int, hi: int, rnd: random.Random) -> Expr:
    """``e`` wrapped so that every lane lies in [lo, hi] (an interval within e's type containing 0):
    ``e >> k`` (the least k that fits), or ``clamp(e, lo', hi')`` with literal bounds inside
    [lo, hi]. Scalars of char and short are clamped (a shift would promote them to int)."""
    if fits(e, lo, hi):
        return e
    t = e.type
    s = t.elem
    lo, hi = max(lo, s.min), min(hi, s.max)
    if (t.is_vector or s.bits >= 32) and rnd.random() < 0.5:
        e_lo, e_hi = bounds(e)
        for k in range(1, s.bits):
            if lo <= e_lo >> k and e_hi >> k <= hi:
                count = Literal(Type(t.scalar), (k,))
                return Op("shift", (e, count), t, (("operator", ">>"),))
    bound_t = Type(t.scalar) if rnd.random() < 0.5 else t
    a, b = sorted((rnd.randint(lo, 0) if rnd.random() < 0.5 else lo, rnd.randint(0, hi) if rnd.random() < 0.5 else hi))
    return Op("clamp", (e, _splat(bound_t, a), _splat(bound_t, b)), t)


def _splat(t: Type, value: int) -> Literal:
    s = scalar(t.scalar)
    bits = int(np.array(value, dtype=s.dtype).view(s.bits_dtype))
    return Literal(t, (bits,) * t.width)
