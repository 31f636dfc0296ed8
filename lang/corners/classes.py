"""Operand and result classes: which class of the corner table (lang.corners) each value of an
operand, or each exact result, falls in. The classes are the spec's own distinctions: OpenCL C
3.0.19 §7.5.1 and C99 F.9 prescribe results by floating-point class (±0, ±inf, NaN, subnormals,
integers and their parity, half-integers); §6.15.3 Table 13 and §6.5 by where an integer lies
against its type's range (MIN, MAX, the in-range and overflowing halves of sums and products)."""

from __future__ import annotations

import numpy as np

from lang.types import scalar

FLOAT_KINDS = ("0", "inf", "1", "sub", "frac", "half", "odd", "even", "real")
FLOAT_CLASSES: tuple[str, ...] = ("nan",) + tuple(f"{s}{k}" for k in FLOAT_KINDS for s in "+-")
"""Operand classes of a floating-point operand: NaN (any sign, any payload), and for each sign
zero, infinity, 1, subnormal, a normal non-integer below 1 in magnitude (not 0.5), an odd
integer other than 1, an even integer, a half-integer n + 0.5, and any other value (above 1)."""

EXP_CLASSES: tuple[str, ...] = ("0", "+1", "-1", "+odd", "-odd", "+even", "-even", "max", "min")
"""Classes of an int exponent (pown, rootn, ldexp): the parity rules of §7.5.1 and the limits."""

INT_CLASSES: tuple[str, ...] = ("0", "1", "-1", "max", "min", "+small", "-small", "+large", "-large")
"""Classes of an integer built-in's operand: the named points and magnitudes below or above 2^(N/2)."""

RESULT_CLASSES: tuple[str, ...] = ("in-", "in+", "=max", "=min", ">max", "<min")
"""Where an exact sum or product lies against the type's range: inside (negative, or zero and
positive), exactly at a limit, or beyond it (saturated by the _sat forms, cut by mul_hi)."""


SPECIAL_RANKS: dict[str, int] = {
    "nan": 0, "0": 0, "inf": 0,
    "1": 1, "-1": 1, "sub": 1, "max": 1, "min": 1, "=max": 1, "=min": 1, ">max": 1, "<min": 1,
    "half": 2, "odd": 2, "even": 2, "small": 2,
    "frac": 3, "real": 3, "large": 3, "in-": 3, "in+": 3,
}
"""How special an operand or result class is: the values §7.5.1, C99 F.9 and Table 13 prescribe
results for (NaN, zeros, infinities; 1, subnormals, the integer limits and results at or beyond
them) rank before the integers and half-integers of the pi forms and pown, before ordinary values."""


def value_rank(cls: str) -> int:
    """:data:`SPECIAL_RANKS` of a class name (signed: ``-odd``, ``+small``); 2 for another."""
    return SPECIAL_RANKS.get(cls, SPECIAL_RANKS.get(cls.lstrip("+-"), 2))


def corner_rank(key: str) -> int:
    """How special a corner key is (:func:`value_rank`): the least special of the classes it names
    (``x=+0,y=-real`` ranks as ``real``); a key naming no class (a width, a form) ranks 2."""
    parts = [p.split("=", 1)[1] for p in key.replace(":", ",").split(",") if "=" in p and not p.startswith("to=")]
    return max(map(value_rank, parts), default=2)


def int_classes(tname: str, limited: bool = False) -> tuple[str, ...]:
    """The operand classes a value of ``tname`` can be in (``limited``: mul24's 24-bit operands,
    which are never the type's limits)."""
    s = scalar(tname)
    out = INT_CLASSES if s.signed else ("0", "1", "max", "+small", "+large")
    return tuple(c for c in out if not (limited and c in ("max", "min")))


def float_classes(values: np.ndarray) -> np.ndarray:
    """Index into :data:`FLOAT_CLASSES` of each value of a half, float or double array."""
    tiny = float(np.finfo(values.dtype).tiny)
    with np.errstate(all="ignore"):
        v = values.astype(np.float64)
        a = np.abs(v)
        finite = np.isfinite(v)
        integral = finite & (a == np.floor(a))
        half = finite & ~integral & (2 * a == np.floor(2 * a))
        odd = integral & (np.fmod(a, 2.0) == 1.0)
        kind = np.select([np.isinf(v), a == 0, a == 1, a < tiny, half, odd, integral, a < 1],
                         [1, 0, 2, 3, 5, 6, 7, 4], default=8)
    index = 1 + 2 * kind + np.signbit(v)
    return np.where(np.isnan(v), 0, index)


def exp_classes(values: np.ndarray) -> np.ndarray:
    """Index into :data:`EXP_CLASSES` of each int exponent."""
    v = values.astype(np.int64)
    odd = (v % 2) != 0
    return np.select([v == 0, v == 1, v == -1, v == 2**31 - 1, v == -(2**31), odd & (v > 0), odd, v > 0],
                     [0, 1, 2, 7, 8, 3, 4, 5], default=6)


def _limits(tname: str) -> tuple[int, int]:
    s = scalar(tname)
    return ((1 << (s.bits - 1)) - 1, -(1 << (s.bits - 1))) if s.signed else ((1 << s.bits) - 1, 0)


def int_class_index(values: np.ndarray, tname: str) -> np.ndarray:
    """Index into :data:`INT_CLASSES` of each value of an integer type."""
    maxv, minv = _limits(tname)
    small = 1 << (scalar(tname).bits // 2)
    signed = scalar(tname).signed
    v = values.astype(np.int64 if signed else np.uint64)
    never = np.zeros(v.shape, bool)
    if signed:
        neg, mag = v < 0, np.where(v < 0, -(v + 1), v)  # |v| - 1 for negatives: no overflow at MIN
        big = np.where(neg, mag >= small - 1, mag >= small)
    else:
        neg, big = never, v >= np.uint64(small)
    index = np.select([v == 0, v == 1, (v == -1) if signed else never, v == maxv,
                       (v == minv) if signed else never, neg], [0, 1, 2, 3, 4, 6], default=5)
    return np.where(index >= 5, index + 2 * big, index)


def int_class_names(values: np.ndarray, tname: str) -> set[str]:
    """The :data:`INT_CLASSES` names the values of an integer type fall in."""
    index = int_class_index(values, tname)
    return {INT_CLASSES[i] for i in np.flatnonzero(np.bincount(index.ravel(), minlength=len(INT_CLASSES)))}


def exact_results(expression: str, args: list[np.ndarray], tname: str) -> set[str]:
    """The :data:`RESULT_CLASSES` the exact value of one :data:`RESULTS` expression takes over the
    lanes ``args`` (numbers of ``tname``). Below 64 bits it is computed exactly in 64-bit lanes;
    for 64-bit types in double precision, and exactly (Python integers) on the lanes whose double
    value lies within 2^-40 of a limit, the only ones a double can misplace."""
    maxv, minv = _limits(tname)
    signed = scalar(tname).signed
    exact = scalar(tname).bits < 64
    if exact:
        cols = [a.astype(np.int64 if signed else np.uint64) for a in args]
        if not signed and expression == "a - b":
            cols = [a.astype(np.int64) for a in args]
    else:
        cols = [a.astype(np.float64) for a in args]
    with np.errstate(all="ignore"):
        v = _expression(expression, cols)
    index = np.select([v > maxv, v < minv, v == maxv, v == minv, v < 0], [4, 5, 2, 3, 0], default=1)
    if not exact:
        near = (np.abs(v - float(maxv)) <= 2.0**24) | (np.abs(v - float(minv)) <= 2.0**24)
        rows = np.flatnonzero(near)
        if len(rows):
            values = _expression(expression, [a[rows].astype(object) for a in args])
            index[rows] = [4 if x > maxv else 5 if x < minv else 2 if x == maxv else 3 if x == minv else 0 if x < 0
                           else 1 for x in values]
    return {RESULT_CLASSES[i] for i in np.flatnonzero(np.bincount(index.ravel(), minlength=len(RESULT_CLASSES)))}


def _expression(expression: str, cols: list) -> np.ndarray:
    a, b = cols[0], cols[1]
    c = cols[2] if len(cols) > 2 else 0
    return {"a + b": lambda: a + b, "a - b": lambda: a - b, "a * b": lambda: a * b, "a * b + c": lambda: a * b + c,
            "a + b + 1": lambda: a + b + 1}[expression]()


PARAM_NAMES = "xyz"
"""How an operand is named in a corner key (``x=-0``, ``x=nan,y=+inf``)."""


def class_keys(names: list[tuple[str, ...]]) -> list[str]:
    """The operand-class keys of an operation whose operands take these classes: each class of
    each operand, or every pair of classes of two operands (F.9's pair rules)."""
    if len(names) == 2:
        return [f"x={a},y={b}" for a in names[0] for b in names[1]]
    return [f"{PARAM_NAMES[k]}={c}" for k, classes in enumerate(names) for c in classes]


def reached_class_keys(idx: list[np.ndarray], names: list[tuple[str, ...]]) -> set[str]:
    """The :func:`class_keys` some lane reaches, from each operand's class indices into ``names``."""
    if len(idx) == 2:
        n = len(names[1])
        return {f"x={names[0][pair // n]},y={names[1][pair % n]}" for pair in np.unique(idx[0] * n + idx[1])}
    return {f"{PARAM_NAMES[k]}={names[k][i]}" for k, ix in enumerate(idx) for i in np.unique(ix)}
