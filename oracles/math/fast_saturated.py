"""The saturated lanes of tanh and expm1 for the filter of :mod:`oracles.math.fast`: operands
where the result is ±1 to within far less than an ulp (tanh beyond about 9.4 for float, 19 for
double; expm1 below about -17 and -38), which no reference decides (its value is ±1 exactly, or
within its error bound of ±1, where the ulp changes, OpenCL C 3.0.19 §7.4) and which would
otherwise each need mpmath's value.

There the infinitely precise result is ``s·(1 - δ)`` with ``s`` the sign (tanh: x's; expm1:
-1 for x < 0) and ``0 < δ``: tanh(x) = s·(1 - 2/(e^(2|x|) + 1)) and expm1(x) = -(1 - e^x) never
reach ±1. ``δ`` is estimated in float64 (numpy's exp, within a few ulp) and taken within a factor
2 of that, widened by 2^-(prec-1) (two ulps of mpmath's value near 1) for mpmath's own rounding
at the working precision (the exact path's value is ±1 exactly where δ is below it). The lane the exact path builds
(``oracles.math.lanewise.bounded``, then ``after``) is a monotone function of the value: its
nearest value, ulp (below 1 the gap below, 2^-p, also at 1 itself) and interval ends take one value
over a range of δ where they take the same value at both ends. The ranges checked, by building
the lane at their ends with the exact path's own functions (once per function, type, build and
sign): δ from 0 to 2^-(p+3); where the lanes there differ (the oracle's slack, 2^-(prec-8)·|x|,
moves an interval end across a value of the type: an even ulp bound puts 1 + k·ulp on the grid),
from 0 to 2^-(prec-5) and from 2^-(prec-11) to 2^-(p+3), each side of the slack. A lane whose δ
range lies in one whose ends agree is decided with that lane; the rest go on to mpmath.
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import numpy as np
from mpmath import mpf

from lang.maths import FUNCTIONS
from lang.types import scalar
from oracles.floats import fmt
from oracles.math.bounds import bound_for, profile_of, rule_for
from oracles.math.lanes import Lane
from oracles.math.lanewise import after, bounded

SATURATING = frozenset({"tanh", "expm1"})
"""The functions whose saturated lanes this module decides."""


def _gap(name: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The estimated δ (float64, inf where the function does not approach ±1) and the sign s."""
    if name == "tanh":
        t = np.exp(-2 * np.abs(x))
        return 2 * t / (1 + t), np.where(x < 0, -1.0, 1.0)
    return np.where(x < 0, np.exp(np.minimum(x, 0)), np.inf), np.full(len(x), -1.0)


def _key(lane: Lane) -> tuple:
    return (tuple(lane.values), tuple(lane.ranges), lane.nan, lane.judged, tuple(lane.masks), lane.rule,
            lane.ulp, lane.limit)


@lru_cache(maxsize=256)
def _lanes(name: str, tname: str, env: frozenset, sign: float) -> tuple[tuple[float, float, Lane | None], ...]:
    """Per range of δ (module docstring): its ends and the lane every value in it gives (None where
    the lanes at its ends differ)."""
    f = FUNCTIONS[name]
    fm = fmt(tname)
    bound, kind = bound_for(f, tname, env)
    rid = rule_for(name, kind, profile_of(tname, env), bound)
    out = []
    for lo, hi in ((0.0, 2.0 ** -(fm.p + 3)), (0.0, 2.0 ** -(fm.prec - 5)), (2.0 ** -(fm.prec - 11), 2.0 ** -(fm.p + 3))):
        ends = []
        for delta in (lo, hi):
            with mpmath.workprec(fm.prec):
                value = mpf(sign) * (1 - mpf(delta))  # exact: delta is 0 or a power of two
            ends.append(after((bounded(name, value, bound, fm, rid),), f, tname, env, fm)[0])
        out.append((lo, hi, ends[0] if _key(ends[0]) == _key(ends[1]) else None))
    return tuple(out)


def saturated(name: str, tname: str, env: frozenset, x: np.ndarray,
              cr: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """Which lanes of operands ``x`` (float64) are saturated and decided (module docstring), their
    value as ``top + low`` (±1 and ∓δ, the error scale's reference) and their nearest value,
    interval ends and ulp (as :func:`oracles.math.fast.decide` gives them; ``cr``: no interval)."""
    fm = fmt(tname)
    dtype = scalar(tname).dtype
    with np.errstate(all="ignore"):
        delta, sign = _gap(name, x)
        slop = 2.0 ** -(fm.prec - 1)  # two ulps of mpmath's value near 1
        d_lo, d_hi = np.maximum(delta / 2 - slop, 0), delta * 2 + slop
    decided = np.zeros(len(x), bool)
    nearest, lo_end, hi_end = (np.zeros(len(x), dtype) for _ in range(3))
    unit = np.zeros(len(x))
    for s in (-1.0, 1.0):
        for lo, hi, lane in _lanes(name, tname, env, s):
            if lane is None or len(lane.values) != 1 or lane.nan or not lane.judged or lane.masks or (
                    len(lane.ranges) != (0 if cr else 1)):
                continue
            at = (sign == s) & (d_lo >= lo) & (d_hi <= hi) & ~decided
            decided |= at
            nearest[at] = lane.values[0]
            low, high = lane.ranges[0] if lane.ranges else (lane.values[0], lane.values[0])
            lo_end[at], hi_end[at], unit[at] = low, high, lane.ulp
    return decided, sign, -sign * np.where(np.isfinite(delta), delta, 0), [nearest, lo_end, hi_end, unit]
