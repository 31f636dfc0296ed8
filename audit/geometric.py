"""The audit's geometric functions (triage.audit): dot, cross, length, distance, normalize and the
fast_ forms, from their definitions in OpenCL C 3.0.19 §6.15.5 Table 17, their bounds in §7.4
Tables 65 (float) and 68 (double) and §7.5.1's requirements, with no oracle code (C99 F.9 covers
the math functions, not these).

* ``length(p)`` is ``sqrt(p.x^2 + p.y^2 + ...)``, ``distance(p0, p1)`` is ``length(p0 - p1)`` and
  ``normalize(p)`` is ``p`` over its length: within 2.75 + 0.5n, 2.5 + 2n and 2 + n ulp (float;
  double: 5.5 + n, 5.5 + 2n, 4.5 + n) of the infinitely precise value, "without overflow or
  extraordinary precision loss due to underflow" (§7.5.1). A NaN element makes the definition's
  result a NaN; an infinite one (no NaN) makes the length +inf; normalize "returns v if all
  elements of v are zero", "a vector full of NaNs if any element is a NaN", and with infinite
  elements proceeds as if each were replaced by ``isinf(v[i]) ? copysign(1.0, v[i]) : 0.0 *
  v[i]`` (§7.5.1). These are edge-case rules: under unsafe or finite math (audit.build) a lane
  with a non-finite operand or result, an all-zero normalize, and a sum of squares that overflows
  or underflows are not specified.
* ``fast_length(p)`` is ``half_sqrt(p.x^2 + ...)`` and ``fast_distance(p0, p1)`` is
  ``fast_length(p0 - p1)``: within 8191.5 + n and 8191.5 + 2n ulp of the exact length; as they
  are computed from the squares in float, a sum of squares over FLT_MAX, or under FLT_MIN * 2^24
  (where squares lost to underflow weigh more than an ulp), is not specified. ``fast_normalize``
  is within 8192 + n ulp of ``p / sqrt(p.x^2 + ...)`` (``p`` if all elements are zero), with
  Table 17's exceptions: a sum of squares over FLT_MAX leaves the result undefined, one under
  FLT_MIN may return ``p``, and with denormals flushed an element under sqrt(FLT_MIN) may be
  read as zero.
* ``dot(p0, p1)`` is within ``max * max * (2n - 1) * FLT_EPSILON`` of the exact sum of products,
  ``cross(p0, p1)``'s x, y, z within ``max * max * 3 * FLT_EPSILON`` of the exact components
  (``max``: the largest operand magnitude; Table 68 states the same tolerances, in FLT_EPSILON),
  and a float4 cross's w "will be 0.0". With a NaN or infinite operand the tolerance is not
  finite: such lanes are not specified.

Operands are read as audit.floats reads them (flushed denormals, either zero); a result subnormal
before rounding may be flushed (§7.5.3).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from math import prod

import mpmath

from audit.base import Lanes, Registry, Unsupported
from audit.convert import merge
from audit.floats import Setting, Uncertain, absolute, bounded, fraction, mpf, precision, readings, signless, zeros
from audit.values import (
    FINITE,
    FORMATS,
    INF,
    NAN,
    AuditLane,
    Real,
    encode_inf,
    encode_zero,
    max_finite,
    quiet_nan,
    real_lane,
    tiny,
    undefined_lane,
)
from lang.ir import Op

HANDLERS = Registry()

ULPS = {  # (k, per lane): k + per * n ulp
    "float": {"length": (2.75, 0.5), "distance": (2.5, 2), "normalize": (2, 1), "fast_length": (8191.5, 1),
              "fast_distance": (8191.5, 2), "fast_normalize": (8192, 1)},
    "double": {"length": (5.5, 1), "distance": (5.5, 2), "normalize": (4.5, 1)},
}
FLT_EPSILON = Fraction(1, 2**23)
LENGTHS = ("length", "distance", "fast_length", "fast_distance")


@HANDLERS.handles("dot", "cross", "length", "distance", "normalize", "fast_length", "fast_distance",
                  "fast_normalize")
def _geometric(ev, op: Op, args: list[Lanes]) -> Lanes:
    fn, s, n = op.op, op.args[0].type.scalar, op.args[0].type.width
    st = Setting(ev, fn, s)
    width = op.type.width
    why = st.void() or ("" if fn in ULPS[s] or fn in ("dot", "cross") else f"{fn} takes float only (§6.15.5)")
    if why:
        return [undefined_lane(s, why)] * width
    try:
        options = [readings(st, lane) for a in args for lane in a]
    except Uncertain as e:
        return [undefined_lane(s, str(e))] * width
    if prod(len(o) for o in options) > 256:
        raise Unsupported("too many alternative operand values to enumerate")
    results = []
    for combo in product(*options):
        if not st.build.edges and any(x.kind != FINITE for x in combo):
            results.append([undefined_lane(s, st.build.voids_edges)] * width)
            continue
        vectors = [list(combo[i * n:(i + 1) * n]) for i in range(len(args))]
        results.append(_cross(st, *vectors) if fn == "cross" else _dot(st, *vectors) if fn == "dot" else
                       _normalize(st, vectors[0]) if fn.endswith("normalize") else [_length(st, vectors)])
    return [signless(merge(s, [r[i] for r in results]), st) for i in range(width)]


def _flushed(lane: AuditLane, exact: Fraction, st: Setting) -> AuditLane:
    """§7.5.3 case 2: a result subnormal before rounding may be flushed to zero."""
    return merge(st.s, [lane, zeros(st.s)]) if st.flush and tiny(exact, st.s) else lane


def _bound(st: Setting, n: int) -> float:
    k, per = ULPS[st.s][st.fn]
    return k + per * n


def _difference(a: Real, b: Real) -> Real:
    """a - b exactly (IEEE 754's special cases: NaN in, NaN out; inf - inf is a NaN)."""
    if NAN in (a.kind, b.kind) or (a.kind == INF and b.kind == INF and a.neg == b.neg):
        return Real(NAN, False)
    if a.kind == INF or b.kind == INF:
        return Real(INF, a.neg if a.kind == INF else not b.neg)
    v = a.value - b.value
    return Real(FINITE, v < 0, v)


def _squares(st: Setting, p: list[Real]) -> Fraction | str:
    """The exact sum of squares, or why the lane is not specified."""
    total = sum((x.value * x.value for x in p), Fraction(0))
    p_bits, emin, _ = FORMATS[st.s]
    fast = st.fn.startswith("fast_")
    if (fast or not st.build.edges) and total > max_finite(st.s):
        return "the sum of squares overflows" + (" (Table 17)" if fast else f": {st.build.voids_edges}")
    small = total < Fraction(2) ** (emin + p_bits) and any(x.value for x in p)
    if small and not st.build.edges:
        return f"the squares underflow: {st.build.voids_edges}"
    if small and st.fn in ("fast_length", "fast_distance"):
        return "computed as half_sqrt(p.x^2 + ...), whose squares underflow (Table 17)"
    return total


def _length(st: Setting, vectors: list[list[Real]]) -> AuditLane:
    s = st.s
    p = vectors[0] if len(vectors) == 1 else [_difference(a, b) for a, b in zip(*vectors)]
    if any(x.kind == NAN for x in p):
        return AuditLane(s, (quiet_nan(s),), nan=True)
    if any(x.kind == INF for x in p):
        return AuditLane(s, (encode_inf(s, False),))
    total = _squares(st, p)
    if isinstance(total, str):
        return undefined_lane(s, total)
    with mpmath.workprec(precision(s)):
        exact = fraction(mpmath.sqrt(mpf(total)), s)
    return _flushed(bounded(exact, s, _bound(st, len(vectors[0]))), exact, st)


def _normalize(st: Setting, p: list[Real]) -> list[AuditLane]:
    s, n, fast = st.s, len(p), st.fn == "fast_normalize"
    if any(x.kind == NAN for x in p):
        return [AuditLane(s, (quiet_nan(s),), nan=True)] * n
    if any(x.kind == INF for x in p):
        if fast:
            return [undefined_lane(s, "fast_normalize: the sum of squares is over FLT_MAX (Table 17)")] * n
        p = [Real(FINITE, x.neg, Fraction(-1 if x.neg else 1)) if x.kind == INF else Real(FINITE, x.neg, Fraction(0))
             for x in p]
    if all(x.value == 0 for x in p):
        if not st.build.edges and not fast:
            return [undefined_lane(s, f"normalize of a zero vector: {st.build.voids_edges}")] * n
        return [real_lane(x, s) for x in p]
    alternatives = [p]
    if fast and st.flush:  # Table 17 exception 3: elements under sqrt(FLT_MIN) may be flushed first
        root_min = Fraction(2) ** (FORMATS[s][1] // 2)
        alternatives = [list(c) for c in product(*[[x, Real(FINITE, x.neg)] if abs(x.value) < root_min else [x]
                                                     for x in p])]
    outs = [_unit(st, q) for q in alternatives]
    return [merge(s, [o[i] for o in outs]) for i in range(n)]


def _unit(st: Setting, p: list[Real]) -> list[AuditLane]:
    """p / sqrt(p.x^2 + ...) within the bound (and fast_normalize's exceptions)."""
    s, n = st.s, len(p)
    if all(x.value == 0 for x in p):  # every element flushed (Table 17 exception 3): the result is p
        return [real_lane(x, s) for x in p]
    total = _squares(st, p)
    if isinstance(total, str):
        return [undefined_lane(s, total)] * n
    with mpmath.workprec(precision(s)):
        root = mpmath.sqrt(mpf(total))
        exacts = [fraction(mpf(x.value) / root, s) for x in p]
    out = [_flushed(bounded(e, s, _bound(st, n)), e, st) for e in exacts]
    if st.fn == "fast_normalize" and total < Fraction(2) ** FORMATS[s][1]:  # exception 2: may return p
        out = [merge(s, [lane, real_lane(x, s)]) for lane, x in zip(out, p)]
    return out


def _largest(st: Setting, vectors: list[list[Real]]) -> Fraction | None:
    """The largest operand magnitude (None where an operand is a NaN or infinite)."""
    reals = [x for v in vectors for x in v]
    if any(x.kind != FINITE for x in reals):
        return None
    return max(abs(x.value) for x in reals)


def _tolerance_lane(st: Setting, exact: Fraction, top: Fraction, terms: int) -> AuditLane:
    return _flushed(absolute(exact, st.s, top * top * terms * FLT_EPSILON), exact, st)


def _dot(st: Setting, p0: list[Real], p1: list[Real]) -> list[AuditLane]:
    top = _largest(st, [p0, p1])
    if top is None:
        return [undefined_lane(st.s, "dot of a NaN or infinite operand: the tolerance is not finite (Table 65)")]
    exact = sum((a.value * b.value for a, b in zip(p0, p1)), Fraction(0))
    return [_tolerance_lane(st, exact, top, 2 * len(p0) - 1)]


def _cross(st: Setting, p0: list[Real], p1: list[Real]) -> list[AuditLane]:
    s = st.s
    w = [AuditLane(s, (encode_zero(s, False),))] if len(p0) == 4 else []  # "will be 0.0"
    top = _largest(st, [p0, p1])
    if top is None:
        why = "cross of a NaN or infinite operand: the tolerance is not finite (Table 65)"
        return [undefined_lane(s, why)] * 3 + w
    (x1, y1, z1), (x2, y2, z2) = [[x.value for x in v[:3]] for v in (p0, p1)]
    exacts = (y1 * z2 - z1 * y2, z1 * x2 - x1 * z2, x1 * y2 - y1 * x2)
    return [_tolerance_lane(st, e, top, 3) for e in exacts] + w
