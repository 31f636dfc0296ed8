"""The lanes of a geometric built-in (§6.15.5, bounds of §7.4): one work-item's vectors at a time
(:func:`geometric`), and a statement's result work-item by work-item where the filter of
:mod:`oracles.math.fast_geometric` does not decide it (:func:`geometric_outputs`).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from mpmath import mpf

from lang.ir import Op
from lang.maths import FUNCTIONS, Bound, MathFn
from lang.types import scalar
from oracles.expect import Expectation
from oracles.floats import Format, fmt
from oracles.math.bounds import (
    RULE_CROSS_W,
    RULE_NORMALIZE_INF,
    accuracy_void,
    bound_for,
    edges_void,
    nonfinite_length_rule,
    profile_of,
    rule_for,
)
from oracles.math.fast_geometric import TINY_TOLERANCE, geometric_filtered
from oracles.math.lanes import Lane, nan_lane, operand_values, pack, unjudged
from oracles.math.lanewise import after, bounded, flushable
from oracles.math.specials import INF

# ---- geometric functions (whole vectors) ------------------------------------------------------------


def geometric(fn: str, tname: str, env: frozenset, args: tuple[tuple[float, ...], ...]) -> list[Lane]:
    """The lanes of one work-item's geometric function (§6.15.5, bounds of §7.4): a scalar for
    dot, length, distance and their fast_ forms, a vector for cross and normalize. Nothing is
    judged where the build voids every accuracy rule (oracles.math.bounds.accuracy_void) or, where
    it voids edge case behaviour (``edges_void``), at a NaN or infinite operand."""
    f = FUNCTIONS[fn]
    n = len(args[0])
    outputs = n if f.result == "g" else 1
    fm = fmt(tname)
    flat = [a for v in args for a in v]
    bound, kind = bound_for(f, tname, env)
    finite = all(math.isfinite(a) for a in flat)
    if accuracy_void(tname, env) or (edges_void(env) and not finite):  # no NaN or INF assumed (API §5.8.6.3)
        return [unjudged() for _ in range(outputs)]
    if fn == "cross" and n == 4:  # "The w component of float4 result returned will be 0.0" (§6.15.5)
        w = after((Lane([0.0], rule=RULE_CROSS_W),), f, tname, env, fm)[0]
        return _geometric_lanes(f, tname, env, args, bound, kind, finite)[:3] + [w]
    return _geometric_lanes(f, tname, env, args, bound, kind, finite)


def _geometric_lanes(f: MathFn, tname: str, env: frozenset, args: tuple, bound: Bound, kind: str,
                     finite: bool) -> list[Lane]:
    """The lanes of a geometric function other than cross's w (:func:`geometric`); the tolerance
    of dot and cross takes max over every operand lane given (a float4 cross's w lanes too)."""
    fn = f.name
    n = len(args[0])
    outputs = n if f.result == "g" else 1
    fm = fmt(tname)
    flat = [a for v in args for a in v]
    profile = profile_of(tname, env)
    if not finite:
        return _geometric_nonfinite(fn, tname, env, args, bound, outputs)
    if flushable(tname, env, fn) and any(a != 0 and abs(a) < fm.tiny for a in flat):
        return [unjudged() for _ in range(outputs)]  # flushed operands change the whole result: not judged
    mp = [[mpf(a) for a in v] for v in args]
    with mpmath.workprec(fm.prec):
        vector = [a - b for a, b in zip(*mp)] if fn.endswith("distance") else mp[0]
        squares = mpmath.fsum(c * c for c in vector)
        if fn.endswith("normalize") and squares == 0:  # "normalize(v) returns v if all elements of v are zero"
            if edges_void(env):  # an edge case (§7.5.1)
                return [unjudged() for _ in range(outputs)]
            return list(after(tuple(Lane([a], rule=rule_for(fn, "special", profile)) for a in args[0]),
                              f, tname, env, fm))
        if bound.kind == "none":
            return [unjudged() for _ in range(outputs)]
        rid = rule_for(fn, kind, profile, bound)
        if fn == "dot":
            exact = mpmath.fsum(a * b for a, b in zip(*mp))
            tol = _abs_tolerance(flat, fm, 2 * n - 1, tname)
            return [abs_lane(exact, tol, fm, rid)]
        if fn == "cross":
            (a0, a1, a2), (b0, b1, b2) = mp[0][:3], mp[1][:3]
            comps = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
            tol = _abs_tolerance(flat, fm, 3, tname)
            return [abs_lane(c, tol, fm, rid) for c in comps] + [unjudged()] * (n - 3)  # w: geometric()
        if fn.startswith("fast_") and not (fm.tiny <= squares <= fm.max) and squares != 0:
            # the fast_ forms are defined by half_sqrt of the float sum of squares (§6.15.5):
            # where that sum overflows or underflows the result is undefined (fast_normalize: §7.4)
            return [unjudged() for _ in range(outputs)]
        norm = mpmath.sqrt(squares)
        if fn.endswith("normalize"):
            return list(after(tuple(bounded(fn, c / norm, bound, fm, rid, n) for c in vector), f, tname, env, fm))
        return list(after((bounded(fn, norm, bound, fm, rid, n),), f, tname, env, fm))


def _geometric_nonfinite(fn: str, tname: str, env: frozenset, args: tuple, bound: Bound,
                         outputs: int) -> list[Lane]:
    """A geometric function with a NaN or infinite operand: what §7.5.1 and the definitions of
    §6.15.5 prescribe, the rest not judged (dot and cross: the absolute bound, max²·k·ε, is
    infinite; fast_normalize: "If the sum of squares is greater than FLT_MAX then the value of the
    floating-point values in the result vector are undefined", and nothing is said of a NaN)."""
    f = FUNCTIONS[fn]
    fm = fmt(tname)
    profile = profile_of(tname, env)
    if fn == "normalize":
        v = args[0]
        if any(math.isnan(a) for a in v):  # "normalize(v) returns a vector full of NaNs if any element is a NaN"
            return [nan_lane(rule_for(fn, "special", profile)) for _ in v]
        if bound.kind == "none":
            return [unjudged() for _ in v]
        # "normalize(v) for which any element in v is infinite shall proceed as if the elements in v were
        # replaced as follows: v[i] = isinf(v[i]) ? copysign(1.0, v[i]) : 0.0 * v[i]"
        replaced = [math.copysign(1.0, a) if math.isinf(a) else math.copysign(0.0, a) for a in v]
        with mpmath.workprec(fm.prec):
            norm = mpmath.sqrt(sum(1 for a in replaced if a != 0))
            lanes = [bounded(fn, mpf(a) / norm, bound, fm, RULE_NORMALIZE_INF, len(v)) for a in replaced]
        return list(after(tuple(lanes), f, tname, env, fm))
    if fn in ("length", "fast_length", "distance", "fast_distance"):
        dtype = scalar(tname).dtype
        with np.errstate(all="ignore"):  # the components as the definition forms them (distance: p0 - p1)
            comps = (np.array(args[0], dtype) - np.array(args[1], dtype)) if "distance" in fn else np.array(args[0], dtype)
        has_nan, has_inf = bool(np.isnan(comps).any()), bool(np.isinf(comps).any())
        rid = nonfinite_length_rule(fn)
        if has_nan and not has_inf:
            return [nan_lane(rid)]
        if has_inf and not has_nan:
            return [Lane([INF], rule=rid)]
    return [unjudged() for _ in range(outputs)]


def _abs_tolerance(values: list[float], fm: Format, factor: int, tname: str) -> mpf:
    """max * max * factor * EPSILON (Tables 65, 68, 69: FLT_EPSILON for float and, as written,
    for double too; HALF_EPSILON for half)."""
    eps = fmt("float" if tname == "double" else tname).epsilon
    top = max(abs(a) for a in values)
    return mpf(top) * mpf(top) * factor * mpf(eps)


def abs_lane(exact: mpf, tol: mpf, fm: Format, rule: str) -> Lane:
    """The lane of a dot or cross component: within ``tol`` (absolute) of ``exact``."""
    if abs(exact) + tol > fm.max:
        return unjudged()  # the tolerance reaches past the largest float: nothing to decide
    return bounded("", exact, Bound("abs", float(tol)), fm, rule, width=tol if tol < TINY_TOLERANCE else None)


def geometric_outputs(f: MathFn, op: Op, args: list[Expectation], n: int, env: frozenset,
                      fast: bool = True) -> Expectation:
    """The result of a geometric function, work-item by work-item (:func:`geometric`) where the
    filter (:mod:`oracles.math.fast_geometric`; with ``fast``) does not decide the work-item."""
    tname = op.args[0].type.scalar
    width = op.args[0].type.width
    out_width = op.type.width
    flush = flushable(tname, env, f.name)
    decided = geometric_filtered(f, tname, env, args, width, out_width, flush) if fast else None
    items = np.arange(n) if decided is None else decided.rest[::out_width] // out_width
    per_arg = [operand_values(e.select((items[:, None] * width + np.arange(width)).ravel()), tname) for e in args]
    lanes: list[Lane] = []
    for item in range(len(items)):
        vectors = []
        ok = True
        for p in per_arg:
            vals = p[item * width:(item + 1) * width]
            vals = [v[:1] if v is not None and all(math.isnan(c) for c in v) else v for v in vals]  # NaN's sign: moot
            if any(v is None or len(v) != 1 for v in vals):
                ok = False
                break
            vectors.append(tuple(v[0] for v in vals))
        lanes += geometric(f.name, tname, env, tuple(vectors)) if ok else [unjudged() for _ in range(out_width)]
    if decided is None:
        return pack(lanes, tname)
    return decided.merge([pack(lanes, tname)] if lanes else None)[0]
