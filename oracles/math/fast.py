"""The math oracle's filter: lanes whose accepted set a vectorized reference decides;
mpmath (:mod:`oracles.math.lanewise`) stays the arbiter of every other lane.

A lane under a ulp bound of OpenCL C 3.0.19 §7.4 (Tables 65, 66, 68, 69) accepts the infinitely
precise result ``x`` rounded to nearest and every value in ``[lo, hi]``: those within ``k ulp(x)``
of ``x``, widened by the oracle's slack of 2^-(prec-8)·|x| (``oracles.floats.interval``); a
correctly rounded lane accepts ``cr(x)`` alone. ``cr(x)``, ``lo(x)`` and ``hi(x)`` are monotone in
``x`` and ``ulp(x)`` is constant between powers of two. The reference of
:mod:`oracles.math.references` gives ``r`` with ``|r - x| <= e`` (its stated bound, checked at
start-up), so where each of them takes one value over ``[r - e, r + e]`` it takes that value at
``x``: the lane is *decided*, bit for bit the lane the exact path would build (allowed value,
interval, rule, ulp), before any driver's result is seen. Every comparison is of an exact
difference against a margin that covers the rest's rounding, so an ambiguity only sends a lane on.

An ambiguous lane of tanh or expm1 saturated at ±1 gets the lane the exact path builds there
(:mod:`oracles.math.fast_saturated`); where the reference has a cheap closer value
(``Reference.refine``: a double-word, or the exact path's own value) that decides it; an operand
with a prescribed value off the general rule (``Reference.fixed``, pown(x, 0) = 1) gets that
value, exact. Any other ambiguous lane gets mpmath's value, computed as the exact path computes it (same reference,
operands and precision, hence the same number), as a double-word ``hi + lo`` of the working type,
and is decided again with the slack as the only margin; a value exactly on the type's grid is
then decided exactly (its ulp at a power of two is the gap below; an interval end on the grid is
the end). What is still ambiguous goes to the exact path.

Lanes the filter never decides (they keep the exact path unchanged): an operand that is not one
certain value, is NaN, infinite, zero or subnormal (the flush-to-zero alternatives of §7.5.3, the
edge cases of §7.5.1 and C99 F.9), an operand outside the function's general rule
(``Reference.domain``: a prescribed value or a domain error), a result within 2·MIN of zero (a
result subnormal before rounding may be flushed, §7.5.3) or near the largest value (infinity may
be accepted, §7.4) unless beyond doubt (``oracles.math.fast_decide.beyond``: past MAX by more than
the bound, or within 2·MIN of zero where no flushed or unsigned zero is allowed, for a reference
that meets its bound there too, ``oracles.math.references.trusted_beyond``), half_sin/cos/tan
beyond 2^16 (§7.4), a build with -cl-unsafe-math-optimizations (Table 67's domains and absolute
bounds), and functions without a reference or whose reference fails its start-up check (sincos:
sin's and cos's references, each result under sincos's bound and rule; the geometric functions:
:mod:`oracles.math.fast_geometric`).
The exact functions (fmin, fmax, min, max, clamp, minmag, maxmag, fabs, copysign, fmod, remainder,
remquo, nextafter, ceil, floor, trunc, rint, round, sign, step, fdim, ldexp, logb, ilogb, fract,
modf, frexp; fma on half and float), mad, lgamma and lgamma_r need no reference:
:mod:`oracles.math.fast_exact` gives their lanes (both results) where numpy computes them exactly,
and every lane of a function the build leaves unjudged (``fast_exact.never_judged``: every function
where the build voids every accuracy rule, ``oracles.math.bounds.accuracy_void``, and an exact
function whose bound is none); the functions defined by a formula (mix, smoothstep) are decided by
:mod:`oracles.math.fast_formula` (numpy's float32 operations are their in-type evaluations). Where
the build voids edge case behaviour
(``oracles.math.bounds.edges_void``: -cl-finite-math-only, -cl-unsafe-math-optimizations) a lane
with a NaN or infinite operand is not judged (API §5.8.6.3: the compiler may assume there is
none), whatever the function.

The lanes left to the exact path are computed once per distinct operand set: lanes whose
operands are the same certain values (the same bits: a NaN's payload, a zero's sign) get the same
lanes there (``oracles.math.lanewise.lanewise_at`` is a function of those bits), so one lane of each set
is evaluated and copied to the others (a program's operands come from small edge pools, most of
them values no reference decides).

The error scale (``Expectation.error``) of a decided lane holds ``r`` (or mpmath's double-word)
instead of mpmath's value rounded to a double-double: the error in ulps the judge measures from it
(``clfuzz stats``, the largest-error search) moves by at most the reference's bound, under 2^-20
ulp for float and half and under 0.01 ulp for double (past the largest value, in an overflow, by
a far smaller share of an error of astronomical ulps). It is a search score: no verdict depends on
it.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np
from mpmath import mpf

from lang.maths import MathFn
from lang.types import scalar
from oracles import rules
from oracles.expect import ErrorScale, Expectation, concat
from oracles.floats import fmt
from oracles.math.bounds import bound_for, edges_void, profile_of, rule_for
from oracles.math.fast_decide import beyond, decide
from oracles.math.fast_exact import DECIDED, exact_lanes, never_judged, unjudged
from oracles.math.fast_formula import FORMULA_FUNCTIONS, formula_lanes
from oracles.math.fast_saturated import SATURATING, saturated
from oracles.math.lanewise import flushable
from oracles.math.precise import PRECISE
from oracles.math.references import REFERENCES, trusted, trusted_beyond, working


@dataclass
class Filtered:
    """The lanes the filter decided (``index``, with their ``expectations``, one per output), the
    others (``undecided``, in lane order) and, of those, one lane per distinct operand set
    (``rest``: what the exact path computes; ``copies[i]`` the position in ``rest`` of the lane
    that stands for ``undecided[i]``)."""

    index: np.ndarray
    expectations: list[Expectation] | None
    undecided: np.ndarray
    rest: np.ndarray
    copies: np.ndarray
    refined: int  # lanes whose reference was ambiguous, evaluated with mpmath

    def merge(self, slow: list[Expectation] | None) -> tuple[Expectation, ...]:
        """Every output in lane order, from the decided lanes and the exact path's lanes of ``rest``
        (one expectation per output; None when ``rest`` is empty)."""
        if slow is not None:
            slow = [s.select(self.copies) for s in slow]
            if not len(self.index):
                return tuple(slow)
        if slow is None and np.all(self.index[1:] > self.index[:-1]):
            return tuple(self.expectations)  # every lane, in order
        order = np.concatenate([self.index, self.undecided])
        inverse = np.empty(len(order), np.intp)
        inverse[order] = np.arange(len(order))
        return tuple((e if s is None else concat([e, s])).select(inverse)
                     for e, s in zip(self.expectations, slow or [None] * len(self.expectations)))


def filtered(f: MathFn, tname: str, env: frozenset, args: list[Expectation], spread: list[int | None]) -> Filtered:
    """The lanes of ``f``'s results that a vectorized reference (:mod:`oracles.math.references`) or
    an exact vectorized evaluation (:mod:`oracles.math.fast_exact`) decides (module docstring),
    and one representative of each distinct operand set among the others: lanes whose operands
    are the same certain values (the same bits) get the same lanes from the exact path. ``args``
    are the operands' expectations; ``spread[i]`` is the vector width a scalar operand is widened
    to (None: lane for lane)."""
    values, bits, certain, relaxed = [], [], None, None
    for e, k, p in zip(args, spread, f.inputs):
        v, ok = e.certain()
        b = e.allowed[0]
        v, b, ok = (v, b, ok) if k is None else (np.repeat(v, k), np.repeat(b, k), np.repeat(ok, k))
        values.append(v)
        bits.append(b)
        certain = ok if certain is None else certain & ok
        if p in "gs" and edges_void(env):  # assumed finite (API §5.8.6.3): not judged
            nonfinite = ok & ~np.isfinite(v)
            relaxed = nonfinite if relaxed is None else relaxed | nonfinite
    fm = fmt(tname)
    with np.errstate(all="ignore"):
        candidate = certain.copy()
        for v, p in zip(values, f.inputs):
            if p in "gs":
                candidate &= np.isfinite(v) & (np.abs(v.astype(np.float64)) >= fm.tiny)
        index, expectations, refined = np.zeros(0, np.intp), None, 0
        if never_judged(f, tname, env):
            index, expectations, relaxed = np.arange(len(certain)), unjudged(f, tname, len(certain)), None
        elif f.name in DECIDED:
            cand = np.flatnonzero(candidate)
            got = exact_lanes(f, tname, env, [v[cand] for v in values])
            if got is not None:
                index, expectations = cand[got[0]], got[1]
        elif f.name in FORMULA_FUNCTIONS:
            got = formula_lanes(f, tname, env, values, candidate)
            if got is not None:
                index, expectations = got
        else:
            got = _by_reference(f, tname, env, values, candidate)
            if got is not None:
                index, expectations, refined = got
    if relaxed is not None and relaxed.any():  # disjoint from the candidates, which are finite
        more = np.flatnonzero(relaxed)
        extra = unjudged(f, tname, len(more))
        index = np.concatenate([index, more])
        expectations = extra if expectations is None else [concat([e, u]) for e, u in zip(expectations, extra)]
    undecided = np.ones(len(certain), bool)
    undecided[index] = False
    undecided = np.flatnonzero(undecided)
    rest, copies = representatives_of(undecided, bits, certain)
    return Filtered(index, expectations, undecided, rest, copies, refined)


def representatives_of(lanes: np.ndarray, bits: list[np.ndarray], certain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One of ``lanes`` per distinct operand set (the operands' bits, where every operand is
    certain; every other lane stands for itself), and for each lane the position of its
    representative among them."""
    if not len(lanes):
        return lanes, lanes
    keys = np.stack([b[lanes].astype(np.uint64) for b in bits]
                    + [np.where(certain[lanes], 0, np.arange(1, len(lanes) + 1)).astype(np.uint64)], axis=1)
    rows = np.ascontiguousarray(keys).view(np.dtype((np.void, keys.itemsize * keys.shape[1]))).ravel()
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    return lanes[first], inverse.ravel()


def _by_reference(f: MathFn, tname: str, env: frozenset, values: list[np.ndarray],
                  candidate: np.ndarray) -> tuple[np.ndarray, list[Expectation], int] | None:
    """The lanes among ``candidate`` (certain, finite, normal, nonzero operands) that ``f``'s
    reference decides, their expectation per output and how many needed mpmath's value; None where
    the filter does not apply to the function, type or build. sincos's two results are sin's and
    cos's (§6.15.2 Table 14), each under sincos's bound and rule: a lane is decided where both are."""
    names = ("sin", "cos") if f.name == "sincos" else (f.name,)
    if any(n not in REFERENCES for n in names) or (f.out and f.name != "sincos") or "unsafe" in env:
        return None
    bound, kind = bound_for(f, tname, env)
    if bound.kind not in ("cr", "ulp") or not all(trusted(n, tname) for n in names):
        return None
    got = [_reference_lanes(n, f, tname, env, values, candidate, bound, kind) for n in names]
    if len(got) == 1:
        return got[0][0], [got[0][1]], got[0][2]
    both = np.intersect1d(got[0][0], got[1][0])
    pick = [np.argsort(i)[np.searchsorted(np.sort(i), both)] for i, _, _ in got]
    return both, [e.select(p) for (_, e, _), p in zip(got, pick)], got[0][2] + got[1][2]


def _reference_lanes(name: str, f: MathFn, tname: str, env: frozenset, values: list[np.ndarray],
                     candidate: np.ndarray, bound, kind: str) -> tuple[np.ndarray, Expectation, int]:
    """The lanes among ``candidate`` that the reference ``name`` decides under ``f``'s ``bound``
    and rule, their expectation and how many needed mpmath's value (computed as
    ``oracles.math.lanewise.lanewise_at`` computes ``name``'s)."""
    ref = REFERENCES[name]
    fm = fmt(tname)
    w = working(tname)
    k = bound.ulps() if bound.kind == "ulp" else None
    ops = [v.astype(np.float64) if v.dtype.kind == "f" else v.astype(np.int64) for v in values]
    ok = candidate.copy()
    if f.name in ("half_sin", "half_cos", "half_tan"):
        ok &= np.abs(ops[0]) <= 2.0**16
    ok &= ref.domain(*ops)
    candidates = np.flatnonzero(ok)
    r = ref.evaluate(*(np.ascontiguousarray(v[candidates].astype(w) if v.dtype.kind == "f" else
                                            v[candidates].astype(np.int64)) for v in values)).astype(w)
    decided, lanes = decide(r, ref.bound(tname), tname, k)
    parts = [(candidates[decided], r[decided], None, [a[decided] for a in lanes])]
    rest = np.flatnonzero(~decided)
    if len(rest):  # an overflow or an underflow beyond any doubt, from a reference checked there
        out, lanes = beyond(r[rest], ref.bound(tname), tname, k, not edges_void(env),
                            not flushable(tname, env, f.name) and "nsz" not in env)
        if out.any() and trusted_beyond(name, tname):
            parts.append((candidates[rest[out]], r[rest[out]], None, [a[out] for a in lanes]))
            decided[rest[out]] = True
    again = candidates[~decided & np.isfinite(r) & (np.abs(r) >= 2 * fm.tiny) & (np.abs(r) < fm.max / 4)]
    # the reference's ambiguous lanes: saturated at ±1, a closer value where one is cheap, else mpmath's
    if name in SATURATING and len(again):
        decided, top, low, lanes = saturated(name, tname, env, ops[0][again], bound.kind == "cr")
        parts.append((again[decided], top[decided].astype(w), low[decided].astype(w), [a[decided] for a in lanes]))
        again = again[~decided]
    if ref.refine is not None and len(again):
        where, hi, lo, rel = ref.refine(fm.prec, *(v[again].astype(w) if v.dtype.kind == "f" else
                                                   v[again].astype(np.int64) for v in values))
        left = [again[~where]]
        for at in (where & (rel == 0), where & (rel > 0)):  # rel 0: hi is the exact path's own value
            decided, lanes = decide(hi[at], float(rel[at].max(initial=0)), tname, k, lo[at], rel[at] == 0)
            parts.append((again[at][decided], hi[at][decided], lo[at][decided], [a[decided] for a in lanes]))
            left.append(again[at][~decided])
        again = np.sort(np.concatenate(left))
    where, hi, lo = _precise(name, tname, [v[again] for v in values], w)
    if len(where):
        decided, lanes = decide(hi, 2.0 ** -(2 * np.finfo(w).nmant - 2), tname, k, lo, lo == 0)
        parts.append((again[where][decided], hi[decided], lo[decided], [a[decided] for a in lanes]))
    index = np.concatenate([p[0] for p in parts])
    top = np.concatenate([p[1] for p in parts])
    low = np.concatenate([np.zeros(len(p[1]), w) if p[2] is None else p[2] for p in parts])
    nearest, lo_end, hi_end, unit = (np.concatenate([p[3][i] for p in parts]) for i in range(4))
    m = len(index)
    head = top.astype(np.float64)
    with np.errstate(invalid="ignore"):  # beyond float64's range (an overflow): no low part, as the exact path
        tail = np.where(np.isfinite(head), ((top - head.astype(w)) + low).astype(np.float64), 0.0)
    error = ErrorScale(head, tail, unit,
                       np.full(m, 0.5 if bound.kind == "cr" else bound.ulps()))
    s = scalar(tname)
    rid = rule_for(f.name, kind, profile_of(tname, env), bound)
    exp = Expectation(tname, [nearest.view(s.bits_dtype)], np.ones(m, bool), np.zeros(m, bool),
                      np.full(m, rules.index(rid), np.int16), [] if bound.kind == "cr" else [(lo_end, hi_end)],
                      error=error)
    if ref.fixed is not None:  # a value prescribed off the general rule (§7.5.1), exact (a NaN: any NaN):
        at, value = ref.fixed(*ops)  # not judged where the build voids edge case behaviour (API §5.8.6.3)
        at = np.flatnonzero(candidate & at)
        if len(at):
            value = np.broadcast_to(np.asarray(value, s.dtype), candidate.shape)[at]
            prescribed = (unjudged(f, tname, len(at))[0] if edges_void(env) else Expectation.exact(
                tname, value, rules.index(rule_for(f.name, "special", profile_of(tname, env)))))
            prescribed.any_nan[:] = np.isnan(value) & prescribed.judged
            index, exp = np.concatenate([index, at]), concat([exp, prescribed]) if m else prescribed
    return index, exp, len(again)


def _precise(name: str, tname: str, cols: list[np.ndarray], w: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """mpmath's value at each operand set, computed as the exact path computes it (the same
    reference, operands and precision, so the same mpf), as ``hi + lo`` in the working type (each
    the leading bits of what is left, so ``|value - hi - lo| <= 2^-(2m-2)·|value|``): the lanes
    where there is such a finite nonzero value, and ``hi``, ``lo`` there."""
    bits = np.finfo(w).nmant + 1
    fn = PRECISE[name]
    lists = [c.tolist() for c in cols]  # Python floats (exact) and ints
    floats = [c.dtype.kind == "f" for c in cols]
    where, parts = [], []
    with mpmath.workprec(fmt(tname).prec):
        for j, operands in enumerate(zip(*lists)):
            try:
                x = fn(*[mpf(v) if f else v for v, f in zip(operands, floats)])
            except (OverflowError, ZeroDivisionError, ValueError):
                continue
            if type(x) is not mpf:
                if isinstance(x, mpmath.mpc):
                    continue
                x = mpf(x)
            sign, man, exp, bc = x._mpf_
            if not man:  # zero, infinite or NaN
                continue
            cut = max(bc - bits, 0)
            head = man >> cut
            rest = man - (head << cut)
            drop = max(rest.bit_length() - bits, 0)
            rest >>= drop
            where.append(j)
            parts.append((-1.0 if sign else 1.0, head >> 32, head & 0xFFFFFFFF, exp + cut,
                          rest >> 32, rest & 0xFFFFFFFF, exp + drop))
    if not parts:
        return np.zeros(0, np.intp), np.zeros(0, w), np.zeros(0, w)
    sign, h1, h0, e_head, r1, r0, e_rest = (np.array(c, np.float64) for c in zip(*parts))

    def value(top: np.ndarray, bottom: np.ndarray, e: np.ndarray) -> np.ndarray:  # two exact 32-bit halves
        return np.ldexp(top.astype(w) * w(2.0**32) + bottom.astype(w), e.astype(np.int64))

    signs = sign.astype(w)
    return np.array(where, np.intp), signs * value(h1, h0, e_head), signs * value(r1, r0, e_rest)
