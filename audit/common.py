"""The audit's common functions of floating type (audit.math): mix, smoothstep and min, max and
clamp on floats (IR ``fmin_common``, ``fmax_common``, ``fclamp``), from OpenCL C 3.0.19 §6.15.4
Table 16 and §7.4 Tables 65 and 68, with no oracle code.

* ``mix(x, y, a)``: "the linear blend of x and y implemented as: x + (y - x) * a"; undefined if
  ``a`` is not in [0.0, 1.0]; within an absolute error of 1e-3 of the infinitely precise value on
  float (Table 65), implementation-defined on double (Table 68). With an infinite or NaN ``x`` or
  ``y`` the formula's own IEEE 754 arithmetic decides (a NaN, or an infinity).
* ``smoothstep(edge0, edge1, x)``: 0.0 if ``x <= edge0``, 1.0 if ``x >= edge1``, else ``t * t *
  (3 - 2 * t)`` with ``t = clamp((x - edge0) / (edge1 - edge0), 0, 1)``; undefined if ``edge0 >=
  edge1`` or an operand is a NaN; within 1e-5 of the exact value on float, implementation-defined
  on double.
* ``max(x, y)``: "y if x < y, otherwise ... x"; ``min``: "y if y < x, otherwise ... x"; undefined
  if x or y is infinite or NaN; 0 ulp, so either zero where x and y are zeros.
* ``clamp(x, minval, maxval)``: ``fmin(fmax(x, minval), maxval)`` (the math functions, §6.15.2);
  undefined if ``minval > maxval``.
"""

from __future__ import annotations

from fractions import Fraction

from audit.convert import merge
from audit.exact import exact_value
from audit.floats import Setting, absolute, zeros
from audit.values import (
    FINITE,
    INF,
    NAN,
    NOT_AUDITED,
    AuditLane,
    Real,
    decode,
    real_lane,
    undefined_lane,
)

MIX_ERROR = Fraction(1, 1000)
"""Table 65: mix's absolute error tolerance, 1e-3."""
SMOOTHSTEP_ERROR = Fraction(1, 100000)
"""Table 65: smoothstep's absolute error tolerance, 1e-5."""


def _order(r: Real) -> tuple[int, Fraction]:
    """A key that orders non-NaN values (infinities at the ends)."""
    if r.kind == INF:
        return (-1 if r.neg else 1, Fraction(0))
    return (0, r.value)


def _mix(st: Setting, xs: list) -> AuditLane:
    x, y, a = xs
    s = st.s
    if s != "float":
        return undefined_lane(s, "mix on double is implementation-defined (Table 68)")
    if a.kind != FINITE or not 0 <= a.value <= 1:
        return undefined_lane(s, "mix with a outside [0.0, 1.0]: the return values are undefined (§6.15.4)")
    if x.kind == FINITE and y.kind == FINITE:
        return absolute(x.value + (y.value - x.value) * a.value, s, MIX_ERROR)
    return real_lane(_mix_special(x, y, a), s)


def _mix_special(x: Real, y: Real, a: Real) -> Real:
    """x + (y - x) * a in IEEE 754 arithmetic where x or y is infinite or NaN."""
    nan = Real(NAN, False)
    if NAN in (x.kind, y.kind) or (x.kind == INF and y.kind == INF and x.neg == y.neg):
        return nan
    d_neg = y.neg if y.kind == INF else not x.neg  # y - x is an infinity of this sign
    if a.is_zero:  # inf * 0
        return nan
    if x.kind == INF and x.neg != d_neg:  # inf + -inf
        return nan
    return Real(INF, d_neg)


def _smoothstep(st: Setting, xs: list) -> AuditLane:
    e0, e1, x = xs
    s = st.s
    if s != "float":
        return undefined_lane(s, "smoothstep on double is implementation-defined (Table 68)")
    if NAN in (e0.kind, e1.kind, x.kind) or _order(e0) >= _order(e1):
        return undefined_lane(s, "smoothstep with edge0 >= edge1 or a NaN operand: results are undefined (§6.15.4)")
    if _order(x) <= _order(e0):
        return absolute(Fraction(0), s, SMOOTHSTEP_ERROR)
    if _order(x) >= _order(e1):
        return absolute(Fraction(1), s, SMOOTHSTEP_ERROR)
    if INF in (e0.kind, e1.kind):
        return undefined_lane(s, f"{NOT_AUDITED}smoothstep between an infinite edge and a finite x")
    t = (x.value - e0.value) / (e1.value - e0.value)
    return absolute(t * t * (3 - 2 * t), s, SMOOTHSTEP_ERROR)


def _min_max(is_max: bool):
    def f(st: Setting, xs: list) -> AuditLane:
        x, y = xs
        s = st.s
        if x.kind != FINITE or y.kind != FINITE:
            return undefined_lane(s, f"{'max' if is_max else 'min'} of an infinite or NaN operand: the return "
                                     "values are undefined (§6.15.4)")
        if x.value == y.value and x.neg != y.neg:  # +0 and -0: 0 ulp either way
            return zeros(s)
        pick = y if (x.value < y.value if is_max else y.value < x.value) else x
        return real_lane(pick, s)
    return f


def _clamp(st: Setting, xs: list) -> AuditLane:
    x, lo, hi = xs
    s = st.s
    if NAN not in (lo.kind, hi.kind) and _order(lo) > _order(hi):
        return undefined_lane(s, "clamp with minval > maxval: results are undefined (§6.15.4)")
    inner = exact_value("fmax", [x, lo], s, False)
    values = [decode(v, s) for v in inner.values] + ([Real(NAN, False)] if inner.nan else [])
    return merge(s, [exact_value("fmin", [v, hi], s, False) for v in values])


COMMON = {"mix": _mix, "smoothstep": _smoothstep, "fmin_common": _min_max(False), "fmax_common": _min_max(True),
          "fclamp": _clamp}
"""The common functions of floating type, by IR operation: (setting, operand values) -> lane."""
