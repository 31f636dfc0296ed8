"""The built-ins defined by a formula (``mix``, ``smoothstep``: :mod:`oracles.math.formulas`) decided
in numpy, bit for bit the lanes the exact path builds.

On float's full profile (OpenCL C 3.0.19 §7.4 Table 65: within an absolute error, 1e-3 for mix and
1e-5 for smoothstep) the exact path accepts, around each of the formula's references, the floats
within the bound (``oracles.math.lanewise.bounded``, ``oracles.floats.interval``), merged: the
exact value E of the formula (at the working precision), then its values with each operation
rounded to float (for ``mix`` the multiply and add apart and fused), each kept where it is not E.
numpy's float32 operations are those in-type evaluations, each correctly rounded (IEEE 754 round
to nearest even); the fused one is the double sum of the exact product, a float32 midpoint
reached by an inexact double sum being the one case where two roundings differ. E is computed in
float64 with a bound on its error, and :func:`oracles.math.fast_decide.decide` decides each
reference's nearest value, interval and ulp with that margin (an in-type value exactly: it is the
number the exact path computes with). A lane is decided where every decision holds and where
each in-type value is E or certainly not E (the exact path keeps a reference apart only then).

Lanes left to the exact path: any other type, profile or build with unsafe math; operands the
general rule does not take (``mix``'s ``a`` outside [0, 1] and ``smoothstep``'s ``edge0 >= edge1``
are undefined, §6.15.4; zero, subnormal or non-finite operands: the filter's candidates only);
an in-type step that overflows or is subnormal (the exact path leaves the lane unjudged, or
flushes it); a reference within 2·MIN of zero or beyond MAX/2.
"""

from __future__ import annotations

import numpy as np

from lang.maths import MathFn
from oracles import rules
from lang.types import scalar
from oracles.expect import ErrorScale, Expectation, concat, empty_ranges
from oracles.floats import fmt
from oracles.math.bounds import bound_for, profile_of, rule_for
from oracles.math.fast_decide import decide
from oracles.math.specials import MIX_UNDEFINED, SMOOTHSTEP_UNDEFINED

UNDEFINED = {"mix": MIX_UNDEFINED, "smoothstep": SMOOTHSTEP_UNDEFINED}
"""Each function's operands outside the general rule (§6.15.4): mix's a outside [0, 1],
smoothstep's edge0 >= edge1."""
FORMULA_FUNCTIONS = frozenset(UNDEFINED)

REL = 2.0**-48
"""Relative error bound of E in float64: a few roundings of 2^-53 each, with room (the mix's
cancellation, ``x + (y - x)·a`` near 0, is an absolute bound beside it)."""


def formula_lanes(f: MathFn, tname: str, env: frozenset, values: list[np.ndarray],
                  candidate: np.ndarray) -> tuple[np.ndarray, list[Expectation]] | None:
    """The lanes among ``candidate`` (certain, finite, normal, nonzero operands) that are decided,
    and their expectation; None where the function, type or build is not one this path takes."""
    if f.name not in FORMULA_FUNCTIONS or "unsafe" in env:
        return None
    bound, _ = bound_for(f, tname, env)
    at = np.flatnonzero(candidate)
    first, second, third = (v[at].astype(np.float64) for v in values)
    undefined = ~((third >= 0) & (third <= 1)) if f.name == "mix" else ~(first < second)
    if bound.kind == "none":  # half, double, the embedded profile: no bound (Table 65)
        return at, [_unjudged(tname, np.where(undefined, rules.index(UNDEFINED[f.name].rule),
                                                rules.index("unspecified")))]
    if bound.kind != "abs" or tname != "float":
        return None
    unjudged = at[undefined]  # §6.15.4: a result the spec leaves undefined
    at = at[~undefined]
    fm = fmt(tname)
    f32 = [v[at].astype(np.float32) for v in values]
    f64 = [v.astype(np.float64) for v in f32]
    with np.errstate(all="ignore"):
        if f.name == "mix":
            ok, exact, err, steps, in_type = _mix(*f32, *f64)
        else:
            ok, exact, err, steps, in_type = _smoothstep(*f32, *f64)
        for s in steps:  # the exact path's in-type evaluation: no overflow, no subnormal step
            ok &= np.isfinite(s) & ((s == 0) | (np.abs(s) >= fm.tiny))
        width = np.full(len(at), bound.value)
        e_ok, (nearest, lo, hi, unit) = _decide_exact(exact, err, width, tname)
        ok &= e_ok
        kept, ends = [], []  # formula_values: each distinct in-type value that is not E, in order
        for t, value in enumerate(in_type):
            twin = value == in_type[0] if t else np.zeros(len(at), bool)  # mix's fused value equal to the other
            wide = value.astype(np.float64)
            differs = np.abs(wide - exact) > err + np.abs(exact) * REL
            ok &= differs | ((wide == exact) & (err == 0)) | twin
            t_ok, (_, t_lo, t_hi, _) = decide(wide, 0.0, tname, None, np.zeros(len(at)), np.ones(len(at), bool),
                                              None, width)
            keep = differs & ~twin
            ok &= t_ok | ~keep
            kept.append(keep)
            ends.append((t_lo, t_hi))
    index = np.flatnonzero(ok)
    kept, nearest, in_type = [k[ok] for k in kept], nearest[ok], [v[ok] for v in in_type]
    # Lane.merge: E's nearest, then each kept value not yet listed; pack repeats a lane's last value
    listed = []
    for k, v in zip(kept, in_type):
        listed.append(k & (v != nearest))
        for earlier, w in zip(listed[:-1], in_type):
            listed[-1] &= ~(earlier & (v == w))
    slots, count = _in_order(listed, in_type, np.float32(np.nan))
    allowed = [nearest]
    for j, slot in enumerate(slots):
        allowed.append(np.where(count > j, slot, allowed[-1]))
    # one interval a reference, E's first, then each kept value's; pack leaves the rest empty
    empty_lo, empty_hi = empty_ranges(tname, len(index))
    los, _ = _in_order(kept, [a[ok] for a, _ in ends], empty_lo)
    his, _ = _in_order(kept, [b[ok] for _, b in ends], empty_hi)
    ranges = [(lo[ok], hi[ok]), *zip(los, his)]
    m = len(index)
    rid = rules.index(rule_for(f.name, "formula", profile_of(tname, env), bound))
    error = ErrorScale(exact[ok], np.zeros(m), unit[ok], np.full(m, np.nan))
    exp = Expectation(tname, [a.view(np.uint32) for a in allowed], np.ones(m, bool), np.zeros(m, bool),
                      np.full(m, rid, np.int16), ranges, error=error)
    rule = np.full(len(unjudged), rules.index(UNDEFINED[f.name].rule), np.int16)
    parts = [p for p in (exp, _unjudged(tname, rule)) if len(p)]  # (a part of no lane would add its arrays)
    return np.concatenate([at[index], unjudged]), [concat(parts) if parts else exp]


def _unjudged(tname: str, rule: np.ndarray) -> Expectation:
    """Lanes not judged, each under its rule (as ``oracles.math.lanes.unjudged`` packs them)."""
    n = len(rule)
    return Expectation(tname, [np.zeros(n, scalar(tname).bits_dtype)], np.zeros(n, bool), np.zeros(n, bool),
                       rule.astype(np.int16))


def _decide_exact(exact: np.ndarray, err: np.ndarray, width: np.ndarray, tname: str):
    """:func:`oracles.math.fast_decide.decide` for E: with its error bound, or as the very value
    the exact path computes with where that is E itself (``err`` 0: at a power of two its ulp is
    the gap below)."""
    ok, lanes = decide(exact, REL, tname, None, None, None, err, width)
    on = np.flatnonzero(err == 0)
    if len(on):
        ok_on, lanes_on = decide(exact[on], 0.0, tname, None, np.zeros(len(on)), np.ones(len(on), bool), None,
                                 width[on])
        ok[on] = ok_on
        for a, b in zip(lanes, lanes_on):
            a[on] = b
    return ok, lanes


def _in_order(present: list[np.ndarray], items: list[np.ndarray], fill) -> tuple[list[np.ndarray], np.ndarray]:
    """Per lane, the ``items`` ``present`` there, in order from the first slot on and ``fill`` after
    them, as many slots as the lanes need; and how many each lane has."""
    count = np.zeros(len(present[0]) if present else 0, np.int64)
    slots: list[np.ndarray] = []
    for p, x in zip(present, items):
        for j in range(int((count + p).max(initial=0))):
            if j == len(slots):
                slots.append(np.full(len(count), fill))
            slots[j] = np.where(p & (count == j), x, slots[j])
        count += p
    return slots, count


def _mix(x32, y32, a32, x, y, a):
    """``mix(x, y, a)`` = x + (y - x)·a (§6.15.4 Table 16): the lanes this path takes, E and its
    absolute error beside REL, the in-type steps, and the in-type values (apart, then fused)."""
    d32 = y32 - x32
    m32 = d32 * a32
    apart = x32 + m32
    p = d32.astype(np.float64) * a  # exact: two 24-bit significands
    s = p + x
    back = s - p
    inexact = (p - (s - back)) + (x - back) != 0
    midpoint = (s.view(np.uint64) & np.uint64((1 << 29) - 1)) == np.uint64(1 << 28)
    ok = ~(inexact & midpoint)
    fused = s.astype(np.float32)
    d = y - x
    product = d * a
    exact = x + product
    err = np.abs(product) * REL  # the cancellation of x + (y - x)·a
    return ok, exact, err, [d32, m32, apart, fused], [apart, fused]


def _smoothstep(e0_32, e1_32, x32, e0, e1, x):
    """``smoothstep(edge0, edge1, x)``: t = clamp((x - edge0) / (edge1 - edge0), 0, 1), then
    t·t·(3 - 2·t) (§6.15.4 Table 16): as :func:`_mix`; t is 1 exactly from ``x >= edge1``."""
    ok = x > e0  # x <= edge0: E = 0, left to the exact path
    num32, den32 = x32 - e0_32, e1_32 - e0_32
    q32 = num32 / den32
    t32 = np.minimum(np.maximum(q32, np.float32(0)), np.float32(1))
    sq32, two32 = t32 * t32, np.float32(2) * t32
    three32 = np.float32(3) - two32
    value = sq32 * three32
    t = np.where(x >= e1, 1.0, (x - e0) / (e1 - e0))
    exact = t * t * (3 - 2 * t)
    err = np.where(x >= e1, 0.0, np.abs(exact) * REL)  # E is 1 exactly there
    return ok, exact, err, [num32, den32, q32, sq32, two32, three32, value], [value]
