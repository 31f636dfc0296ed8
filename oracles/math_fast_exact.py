"""Vectorized lanes of the math built-ins whose accepted set needs no reference value: the exact
functions with an out-parameter (fract, modf, frexp: OpenCL C 3.0.19 §6.15.2 Table 14, 0 ulp or
correctly rounded in Tables 65, 66, 68, 69) and lgamma and lgamma_r (Table 65: the value is
undefined off its prescribed points; lgamma_r's sign is Γ's sign), for :mod:`oracles.math_fast`.

Each gives, for operands that are finite, normal and nonzero (the filter's candidates: flushing,
§7.5.3, and the edge cases of §7.5.1 and C99 F.9 stay with :mod:`oracles.maths`), the lanes the
exact path (``oracles.maths._lanewise_at``) builds there, bit for bit: the result computed in
numpy where it is exact (checked: a subtraction is kept only where TwoSum's error is 0, so its one
rounding to the lane's type is numpy's cast, round to nearest even), the rule the exact path names
(the function's bound, or its special rule where an operand or a result is zero: C99 F.9 and the
definitions prescribe those values, sign included), and no error scale (none is measured for an
exact function). Lanes whose result is not such a value are left to the exact path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from lang.maths import MathFn
from lang.types import scalar
from oracles import rules
from oracles.expect import Expectation
from oracles.floats import fmt
from oracles.math_bounds import RULE_LGAMMA_SIGN, bound_for, profile_of, rule_for
from oracles.math_references import WIDE_OK

_Lanes = tuple[np.ndarray, list[np.ndarray]]  # which lanes are decided, and each output's values there


def _exact_difference(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x - y`` in a type wider than ``x``'s where there is one (float64 for half and float, the
    x87 long double for double), and where that difference is exact (TwoSum's error 0)."""
    w = np.longdouble if x.dtype == np.float64 and WIDE_OK else np.float64
    a, b = x.astype(w), -y.astype(w)
    s = a + b
    back = s - a
    return s, ((a - (s - back)) + (b - back)) == 0


def _fract(x: np.ndarray, tname: str) -> _Lanes:
    """fract(x) = fmin(x - floor(x), 0x1.fffffep-1f), iptr = floor(x) (§6.15.2; the bound of the
    type's largest value below 1 for every type, as oracles.math_exact._fract has it)."""
    floor = np.floor(x)
    d, ok = _exact_difference(x, floor)
    below_one = x.dtype.type(1 - 2.0 ** -fmt(tname).p)
    return ok, [np.minimum(d.astype(x.dtype), below_one), floor]


def _modf(x: np.ndarray, tname: str) -> _Lanes:
    """modf: the integral part trunc(x) with x's sign, and x minus it (exact in x's type) with x's
    sign (C99 F.9.3.12)."""
    whole = np.trunc(x)
    return np.ones(len(x), bool), [np.copysign(x - whole, x), whole]


def _frexp(x: np.ndarray, tname: str) -> _Lanes:
    """frexp: x = m·2^e with 0.5 <= |m| < 1 (exact for normal x)."""
    m, e = np.frexp(x)
    return np.ones(len(x), bool), [m, e.astype(np.int32)]


_EXACT: dict[str, Callable[[np.ndarray, str], _Lanes]] = {"fract": _fract, "modf": _modf, "frexp": _frexp}


def _lgamma_unprescribed(x: np.ndarray) -> np.ndarray:
    """Finite x where C99 F.9.5.3 prescribes nothing: not 1 or 2 (+0), not a pole (+inf)."""
    return (x != 1) & (x != 2) & ((x > 0) | (x != np.floor(x)))


def exact_lanes(f: MathFn, tname: str, env: frozenset, x: np.ndarray) -> tuple[np.ndarray, list[Expectation]] | None:
    """The lanes of ``f`` (one of :data:`DECIDED`) at operands ``x`` (finite, normal, nonzero,
    of the lane's type) that this module decides, and their expectations per output (module
    docstring); None for another function or a build with -cl-unsafe-math-optimizations."""
    if f.name not in DECIDED or "unsafe" in env:
        return None
    profile = profile_of(tname, env)
    n = len(x)
    if f.name in ("lgamma", "lgamma_r"):
        ok = _lgamma_unprescribed(x)
        m = int(ok.sum())
        value = Expectation(tname, [np.zeros(m, scalar(tname).bits_dtype)], np.zeros(m, bool), np.zeros(m, bool),
                            np.full(m, rules.index("unspecified"), np.int16))  # undefined (Table 65): not judged
        if f.name == "lgamma":
            return ok, [value]
        v = x[ok]
        sign = np.where((v > 0) | (np.floor(v) % 2 == 0), 1, -1).astype(np.int32)  # Γ's sign (§6.15.2 Table 14)
        return ok, [value, Expectation.exact("int", sign, rules.index(RULE_LGAMMA_SIGN))]
    bound, _ = bound_for(f, tname, env)
    bound_rule = rules.index(rule_for(f.name, "cr" if bound.kind == "cr" else "exact", profile))
    special_rule = rules.index(rule_for(f.name, "special", profile))
    with np.errstate(all="ignore"):
        ok, outputs = _EXACT[f.name](x, tname)
        tiny = fmt(tname).tiny
        edge = np.zeros(n, bool)
        for out in outputs:
            if out.dtype.kind == "f":
                ok &= np.isfinite(out) & ((out == 0) | (np.abs(out) >= tiny))  # no flushable result (§7.5.3)
                edge |= out == 0
    rule = np.where(edge, special_rule, bound_rule)[ok].astype(np.int16)
    types = [tname if out.dtype.kind == "f" else "int" for out in outputs]
    return ok, [replace(Expectation.exact(t, out[ok]), rule=rule) for t, out in zip(types, outputs)]


DECIDED = frozenset({*_EXACT, "lgamma", "lgamma_r"})
"""The functions this module decides lanes of."""
