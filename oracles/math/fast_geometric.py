"""The math oracle's filter for the geometric functions (OpenCL C 3.0.19 §6.15.5 Table 17, bounds
of §7.4 Tables 65, 68, 69): the work-items whose lanes a vectorized reference decides, bit for bit
the lanes :func:`oracles.math.geometric.geometric` builds there; the others stay with it.

A work-item is a candidate where every operand lane is one certain value and finite (NaN and
infinity have the prescribed values of §7.5.1), none subnormal where subnormals may be flushed
(§7.5.3: such a work-item is not judged), and, for normalize and fast_normalize, not the zero
vector ("normalize(v) returns v if all elements of v are zero", which oracles.math.geometric applies
to both). Where the build voids edge case behaviour (oracles.math.bounds.edges_void:
-cl-finite-math-only, -cl-unsafe-math-optimizations) a work-item with a NaN or infinite operand is
not judged (API §5.8.6.3).
The reference is evaluated in the working type of :mod:`oracles.math.references` (float64 for half
and float, the x87 long double for double), whose range holds every square and product of the
lane type exactly in exponent, with ``u`` its unit roundoff and ``eps = 2u``:

* ``dot``: the products summed, within ``n·eps·Σ|a_i b_i|`` of the exact dot product (a rounding
  of each product, ``u|a_i b_i|``, then any order of n - 1 additions, γ_{n-1}·Σ|a_i b_i|);
* ``cross``: each component ``p - q`` of two products, within ``2·eps·(|p| + |q|)``;
* ``length``, ``distance``, ``normalize`` and their fast_ forms: the sum of squares (of ``p0 - p1``
  for distance), its square root and each component over it, within ``8·eps`` relative (at most
  one rounding of each difference, three of each square, n - 1 of the sum, sqrt and division
  each half of that and one more: under 16u).

The exact path computes at the format's working precision (mpmath, 2p + 40 bits): its value is
within a few units of that precision of the exact one, inside the slack
``oracles.math.fast.decide`` adds. ``dot`` and ``cross`` accept every value within ``max·max·(2n - 1)·EPSILON`` and
``max·max·3·EPSILON`` (max over every operand lane of the work-item, a float4 cross's w too;
FLT_EPSILON for double, as Table 68 is written; rounded to a float64 as the exact path holds it):
an interval of absolute half-width, decided like a ulp bound's. Where that tolerance alone passes
twice the type's largest value nothing is judged (the exact path's ``|x| + tol > MAX``).
normalize of a scalar is ±1 exactly, decided as an exact value. A work-item is decided where
every lane is (a float4 cross's w is 0.0, §6.15.5) and the reference's error is under 1/128 ulp
(its error scale moves the largest-error search by less than that); the fast_ forms also need
the sum of squares clearly between FLT_MIN and FLT_MAX (beyond, "the result is undefined",
§6.15.5). Where the bound is none (double's and the embedded
profile's fast_ forms) no lane of a candidate is judged but cross's w; where the build voids every
accuracy rule (oracles.math.bounds.accuracy_void) none at all. A float4 cross under
-cl-no-signed-zeros (w: 0.0 or -0.0) stays with the exact path.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from lang.maths import MathFn
from lang.types import scalar
from oracles import rules
from oracles.expect import ErrorScale, Expectation
from oracles.floats import fmt
from oracles.math.bounds import RULE_CROSS_W, accuracy_void, bound_for, edges_void, profile_of, rule_for
from oracles.math.fast import Filtered, decide, representatives_of
from oracles.math.references import working


def _reference(fn: str, a: list[np.ndarray], width: int) -> tuple[np.ndarray, float, np.ndarray | None]:
    """Per candidate (rows of ``a``, the operands in the working type), the reference of each
    output lane, its relative error bound and its absolute one (module docstring)."""
    eps = float(np.finfo(a[0].dtype).eps)
    if fn == "dot":
        t = a[0] * a[1]
        return t.sum(axis=1)[:, None], 0.0, width * eps * np.abs(t).sum(axis=1)[:, None]
    if fn == "cross":
        (x0, x1, x2), (y0, y1, y2) = (v[:, :3].T for v in a)
        p, q = np.stack([x1 * y2, x2 * y0, x0 * y1], 1), np.stack([x2 * y1, x0 * y2, x1 * y0], 1)
        return p - q, 0.0, 2 * eps * (np.abs(p) + np.abs(q))
    c = a[0] - a[1] if fn.endswith("distance") else a[0]
    norm = np.sqrt((c * c).sum(axis=1))[:, None]
    return (c / norm if fn.endswith("normalize") else norm), 8 * eps, None


TINY_TOLERANCE = 2.0**-1022
"""Below the smallest normal float64 an absolute tolerance is held exactly (float64 would round
it, down to 0 under 2^-1075: a double dot of two tiny operands then accepted only the exact
product's own zero, though the tolerance holds both); the filter leaves such lanes to the exact path
(oracles.math.geometric.abs_lane)."""


def _tolerance(top: np.ndarray, factor: int, tname: str) -> np.ndarray:
    """max * max * factor * EPSILON (FLT_EPSILON for double) as the exact path holds it: rounded to
    nearest float64 (``oracles.math.geometric.abs_lane`` makes it a Bound's value). For half and float it
    is exact in float64 (at most 51 bits); for double it is rounded from Python's exact fractions,
    once per distinct max (infinite where it would overflow: past FLT_MAX, nothing is judged)."""
    eps = fmt("float" if tname == "double" else tname).epsilon
    top = top.astype(np.float64)
    if tname != "double":
        return top * top * (factor * eps)
    u, inverse = np.unique(top, return_inverse=True)
    exact = [float(Fraction(v) ** 2 * factor * Fraction(eps)) if v < 2.0**500 else math.inf for v in u.tolist()]
    return np.array(exact, np.float64)[inverse.ravel()]


def geometric_filtered(f: MathFn, tname: str, env: frozenset, args: list[Expectation], width: int,
                       out_width: int, flush: bool) -> Filtered | None:
    """The output lanes of the work-items of a geometric function that the filter decides (module
    docstring), and the others with one work-item per distinct operand set among them (``rest``:
    work-items whose operands are the same certain values, the same bits, have the same lanes, so
    one is computed and copied); None where the filter does not apply to the build. ``args`` are
    the operands' expectations, ``width`` lanes per work-item; ``out_width`` lanes of the result per
    work-item; ``flush``: whether subnormal operands may be flushed here (§7.5.3)."""
    bound, kind = bound_for(f, tname, env)
    void = accuracy_void(tname, env)
    if "nsz" in env and f.name == "cross" and width == 4 and not void:
        return None  # w is 0.0 or -0.0 there (-cl-no-signed-zeros): left to the exact path
    fm = fmt(tname)
    vals, certain, bits = [], None, []
    for e in args:
        v, ok = e.certain()
        vals.append(v.reshape(-1, width))
        bits += list(e.allowed[0].reshape(-1, width).T)
        certain = ok.reshape(-1, width) if certain is None else certain & ok.reshape(-1, width)
    n = len(vals[0])
    sure = np.all(certain, axis=1)
    with np.errstate(all="ignore"):
        finite = np.all([np.all(np.isfinite(v), axis=1) for v in vals], axis=0)
        subnormal = np.any([np.any((v != 0) & (np.abs(v.astype(np.float64)) < fm.tiny), axis=1) for v in vals], axis=0)
    relaxed = sure & ~finite & edges_void(env)  # assumed finite (API §5.8.6.3): not judged
    flushed = sure & finite & subnormal & flush  # "flushed operands change the whole result": not judged
    items = sure & finite & ~flushed
    if f.name.endswith("normalize"):
        items &= np.any(vals[0] != 0, axis=1)
    if void:  # nothing is judged (oracles.math.geometric)
        items[:] = True
    shape = (n, out_width)
    dtype = scalar(tname).dtype
    nearest, judged = np.zeros(shape, dtype), np.zeros(shape, bool)
    rule = np.full(shape, rules.index("unspecified"), np.int16)
    lo, hi = np.full(shape, np.inf, dtype), np.full(shape, -np.inf, dtype)
    ref, low, unit, limit = np.full(shape, np.nan), np.zeros(shape), np.full(shape, np.nan), np.full(shape, np.nan)
    if bound.kind != "none":
        with np.errstate(all="ignore"):
            items &= _judged(f, tname, env, bound, kind, vals, items, (nearest, judged, rule, lo, hi, ref, low, unit,
                                                                        limit))
    items |= relaxed | flushed
    if f.name == "cross" and width == 4 and not void:  # "The w component ... will be 0.0"
        judged[:, 3] = ~relaxed
        rule[:, 3] = np.where(relaxed, rule[:, 3], rules.index(RULE_CROSS_W))

    def spread(rows: np.ndarray) -> np.ndarray:  # work-items -> their output lanes
        return (rows[:, None] * out_width + np.arange(out_width)).ravel()

    left = np.flatnonzero(~items)
    representatives, copies = representatives_of(left, bits, sure)
    lo, hi, unit = lo[items].ravel(), hi[items].ravel(), unit[items].ravel()
    error = ErrorScale(ref[items].ravel(), low[items].ravel(), unit, limit[items].ravel())
    exp = Expectation(tname, [nearest[items].ravel()], judged[items].ravel(), np.zeros(len(lo), bool),
                      rule[items].ravel(), [(lo, hi)] if np.any(lo <= hi) else [],
                      error=error if np.isfinite(unit).any() else None)
    return Filtered(spread(np.flatnonzero(items)), [exp], spread(left), spread(representatives), spread(copies), 0)


def _judged(f: MathFn, tname: str, env: frozenset, bound, kind: str, vals: list[np.ndarray], items: np.ndarray,
            out: tuple[np.ndarray, ...]) -> np.ndarray:
    """Decide the candidates ``items`` under a judged bound, filling ``out`` (nearest, judged, rule,
    lo, hi, and the error scale's reference, low part, ulp and limit, per work-item and output lane)
    where decided; which work-items are."""
    nearest, judged, rule, lo, hi, ref, low, unit, limit = out
    fm = fmt(tname)
    w = working(tname)
    width = vals[0].shape[1]
    sel = np.flatnonzero(items)
    a = [v[sel].astype(w) for v in vals]
    r, rel, err = _reference(f.name.removeprefix("fast_"), a, width)
    lanes = r.shape[1]
    tol, past, exact_only = None, np.zeros(len(sel), bool), np.zeros(len(sel), bool)
    if bound.kind in ("dot", "cross"):
        top = np.max(np.abs(np.concatenate(a, axis=1)), axis=1)
        tol = _tolerance(top, 2 * width - 1 if f.name == "dot" else 3, tname)
        past = tol > 2 * fm.max  # |x| + tol > MAX: not judged (oracles.math.geometric.abs_lane)
        exact_only = tol < TINY_TOLERANCE  # held exactly there, not as a float64
        tol = np.repeat(tol.astype(w), lanes)
    k = bound.ulps(width) if bound.kind == "ulp" else None
    rows = np.repeat(np.arange(len(sel)), lanes)
    if f.name.endswith("normalize") and width == 1:  # v / |v| = ±1 exactly: decided as an exact value
        r = np.sign(a[0])
        ok, (near, end_lo, end_hi, ulps) = decide(r.ravel(), 0.0, tname, k, np.zeros(len(sel), w),
                                                 np.ones(len(sel), bool))
    else:
        e = np.abs(r) * w(rel) + (0 if err is None else err)
        ok, (near, end_lo, end_hi, ulps) = decide(r.ravel(), rel, tname, k, err=None if err is None else err.ravel(),
                                                 half_width=tol)
        ok &= e.ravel() * 128 < ulps  # the error scale moves by under 1/128 ulp
    decided = ~exact_only
    np.logical_and.at(decided, rows, ok)
    if f.name.startswith("fast_"):  # the sum of squares within [FLT_MIN, FLT_MAX] (§6.15.5), with room
        c = a[0] - a[1] if f.name == "fast_distance" else a[0]
        squares = (c * c).sum(axis=1)
        decided &= (squares >= 2 * fm.tiny) & (squares <= fm.max / 2)
    got = sel[decided]
    keep = decided[rows]
    rid = rules.index(rule_for(f.name, kind, profile_of(tname, env), bound))
    head = r[decided].astype(np.float64)
    nearest[got, :lanes] = near[keep].reshape(-1, lanes)
    judged[got, :lanes], rule[got, :lanes] = True, rid
    lo[got, :lanes], hi[got, :lanes] = end_lo[keep].reshape(-1, lanes), end_hi[keep].reshape(-1, lanes)
    ref[got, :lanes], low[got, :lanes] = head, (r[decided] - head.astype(w)).astype(np.float64)
    unit[got, :lanes] = ulps[keep].reshape(-1, lanes)
    limit[got, :lanes] = np.nan if k is None else k
    out_items = np.zeros(len(items), bool)
    out_items[got] = True
    out_items[sel[past]] = True  # their lanes stay unjudged
    return out_items
