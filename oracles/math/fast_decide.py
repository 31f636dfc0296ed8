"""The decision of :mod:`oracles.math.fast`: whether every value the infinitely precise result may
take (a reference and its error bound) gives a lane one accepted set (OpenCL C 3.0.19 §7.4: the
nearest value, the ulp and the ends of the interval within k ulp are monotone in the result), and
that lane.

The general case (:func:`decide`) computes in the working type. A reference of the x87 long double
alone (double lanes, where that arithmetic is several times slower than float64's) whose value lies
more than k + 2 ulps inside its binade (almost every lane) is decided on the grid of the lane's type
instead (:func:`_on_grid`), in float64: ``r`` is its nearest value ``c``
plus ``d = r - c`` (exact: ``d`` is a multiple of ``r``'s last bit no larger than half an ulp of
``c``, at most 11 bits for double in long double and 29 for float in float64), ulp(x) is the ulp
``u`` of ``c``'s binade for every x within the margin, and ``f = d/u`` (exact: a power of two,
scaled in the working type, whose range holds ``d`` where float64's would make it subnormal) is
where x lies between the values of the type around it: the nearest value is ``c`` where ``f`` is
farther than the margin (in ulps) from ±1/2, and the interval's ends ``x ∓ k·u`` have the least
value above and the greatest below, ``c + ceil(f - k)·u`` and ``c + floor(f + k)·u``, where
``f ∓ k`` (exact) is farther than the margin from an integer. The margin and the checks of range
are those of the general case.
"""

from __future__ import annotations

import math

import numpy as np

from lang.types import scalar
from oracles.floats import fmt


def _on_grid(r: np.ndarray, rel: float, tname: str, k: float | None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """:func:`decide` for ``r`` of the working type alone (module docstring): which lanes it decides,
    which lanes lie more than k + 2 ulps inside their binade (the others: :func:`decide`'s general
    case), and the lanes' nearest value, ``lo``, ``hi`` and ulp."""
    fm = fmt(tname)
    dtype = scalar(tname).dtype
    w = r.dtype.type
    with np.errstate(all="ignore"):
        return _grid(r, rel, fm, dtype, w, k)


def _grid(r: np.ndarray, rel: float, fm, dtype: np.dtype, w: type, k: float | None) -> tuple[np.ndarray, np.ndarray, tuple]:
    nearest = r.astype(dtype)
    c = nearest.astype(np.float64)
    mag = np.abs(c)
    _, ex = np.frexp(mag)  # 2^(ex-1) <= |c| < 2^ex
    unit = np.ldexp(np.ones(len(c)), ex - fm.p)
    # (r - c)/u, scaled in the working type (whose range holds it: in float64 it may be subnormal), away from zero
    f = np.where(c < 0, -1.0, 1.0) * np.ldexp(r - nearest.astype(w), fm.p - ex).astype(np.float64)
    margin = (rel + 2.0 ** -(fm.prec - 9)) * (1 + 2.0**-20)
    e = np.ldexp(mag, fm.p - ex) * margin * (1 + 2.0**-30)  # |r|·margin in ulps, |r| <= |c|·(1 + 2^-p)
    kk = 0.0 if k is None else float(k)
    inside = np.isfinite(c) & (mag - (kk + 2) * unit >= np.ldexp(0.5, ex)) & (mag + (kk + 2) * unit < np.ldexp(1.0, ex))
    ok = inside & (0.5 - np.abs(f) > e) & (mag >= 2 * fm.tiny) & (mag + (kk + 1) * unit < fm.max / 2)
    if k is None:
        return ok, inside, (nearest, nearest, nearest, unit)
    a, b = f - kk, f + kk
    up, down = np.ceil(a), np.floor(b)
    ok &= (up - a > e) & (a - (up - 1) > e) & (b - down > e) & ((down + 1) - b > e)
    low, high = (mag + up * unit), (mag + down * unit)
    lo, hi = np.where(c < 0, -high, low).astype(dtype), np.where(c < 0, -low, high).astype(dtype)
    return ok, inside, (nearest, lo, hi, unit)


def decide(r: np.ndarray, rel: float, tname: str, k: float | None, low: np.ndarray | None = None,
           exact: np.ndarray | None = None, err: np.ndarray | None = None,
           half_width: np.ndarray | None = None) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """Which references ``r`` (+ ``low``: the working type, or a double-word with ``low`` far below
    ``r``'s last bit; ``|r + low - x| <= rel·|x|``, plus ``err`` where given: an absolute bound, for
    ``r`` of the working type alone) decide their lane, and the lane's nearest value, ``lo``, ``hi``
    (lanes of ``tname``; for a bound of ``k`` ulp, or of the absolute ``half_width`` (the working
    type, within one ulp of it: two roundings), ``k`` and ``half_width`` None for correct rounding) and ulp
    (float64).

    ``e`` bounds ``|r + low - x|`` and the oracle's slack (``oracles.floats.interval`` widens by
    2^-(prec-8)·|x|); the rounding of ``e`` and of each last addition of ``low`` is covered by the
    factor 1 + 2^-20. Each decision compares ``e`` with a distance whose leading difference is exact
    (two values of one sign within a factor 2 of each other, Sterbenz): ``r`` and the powers of two
    around it (ulp(x) is constant), ``r`` and the midpoints beside its nearest value (cr(x) is),
    ``r ∓ k·ulp`` and the value of the lane's type nearest it (the ends of the interval are);
    ``r ∓ k·ulp`` is rounded: its error is kept exactly (TwoSum) beside a double-word, and added to
    the margin otherwise.

    Where ``exact``, ``r`` is the very value the exact path computes with (``low`` is 0): its
    nearest value and ulp need no margin (at a power of two 2^e the ulp is the gap below, 2^(e-p),
    §7.4), and an end ``r ∓ k·ulp`` that is itself a value of the type is the end, the oracle's
    slack moving it inward by less than a gap; only the slack is a margin."""
    if low is not None or err is not None or half_width is not None or r.dtype == np.float64:
        return _general(r, rel, tname, k, low, exact, err, half_width)
    ok, inside, lanes = _on_grid(r, rel, tname, k)
    rest = np.flatnonzero(~inside)
    if len(rest):
        ok[rest], general = _general(r[rest], rel, tname, k, None, None, None, None)
        for a, b in zip(lanes, general):
            a[rest] = b
    return ok, lanes


def _general(r: np.ndarray, rel: float, tname: str, k: float | None, low: np.ndarray | None,
             exact: np.ndarray | None, err: np.ndarray | None,
             half_width: np.ndarray | None) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """:func:`decide` in the working type."""
    fm = fmt(tname)
    dtype = scalar(tname).dtype
    w = r.dtype.type
    mag = np.abs(r)
    margin = w((rel + 2.0 ** -(fm.prec - 9)) * (1 + 2.0**-20))
    frac, ex = np.frexp(mag)
    if low is None:
        e = mag * margin if err is None else mag * margin + err * w(1 + 2.0**-20)
        ok = ((mag - np.ldexp(np.full(len(r), 0.5, w), ex)) > e) & ((np.ldexp(np.ones(len(r), w), ex) - mag) > e)
    else:
        out = np.where(r < 0, -low, low)  # low's part away from zero
        e = mag * np.where(exact, w(2.0 ** -(fm.prec - 9) * (1 + 2.0**-20)), margin)
        ex = np.where((frac == 0.5) & ((out < 0) | exact), ex - 1, ex)  # below (or at) 2^n: the gap below
        below = np.ldexp(np.full(len(r), 0.5, w), ex)  # 2^floor(log2|x|) <= |x| < 2·below
        ok = exact | ((mag - below) + out > e) & ((2 * below - mag) - out > e)
    ok &= np.isfinite(r) & (mag >= 2 * fm.tiny)
    unit = np.ldexp(np.ones(len(r), w), ex - fm.p)  # ulp(x) = 2^(floor(log2|x|) - (p - 1))
    width = unit * w(k if k is not None else 0) if half_width is None else half_width
    ok &= mag + width + e < w(fm.max / 2)  # no overflow below, no infinity in the interval
    nearest = r.astype(dtype)
    c = nearest.astype(w)
    up, down = np.nextafter(nearest, dtype.type(np.inf)).astype(w), np.nextafter(nearest, dtype.type(-np.inf)).astype(w)
    if low is None:
        ok &= ((c + up) / 2 - r > e) & (r - (c + down) / 2 > e)
    else:
        ok &= exact | ((((c + up) / 2 - r) - low > e) & ((r - (c + down) / 2) + low > e))
    lo = hi = nearest
    if k is not None or half_width is not None:
        if low is None:
            slop = mag + width if half_width is None else mag + 2 * width  # half_width's own error too
            e_end = e + slop * w(np.finfo(w).eps)  # r ∓ width's rounding
            lo, lo_ok = _beside(r - width, None, e_end, dtype, 1, None)
            hi, hi_ok = _beside(r + width, None, e_end, dtype, -1, None)
        else:
            (t_lo, err_lo), (t_hi, err_hi) = _two_sum(r, -width), _two_sum(r, width)
            lo, lo_ok = _beside(t_lo, err_lo + low, e, dtype, 1, exact)
            hi, hi_ok = _beside(t_hi, err_hi + low, e, dtype, -1, exact)
        ok &= lo_ok & hi_ok
    return ok, (nearest, lo, hi, unit.astype(np.float64))


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a + b`` rounded and its rounding error, exactly (Knuth's TwoSum, round to nearest)."""
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


def _beside(t: np.ndarray, low: np.ndarray | None, e: np.ndarray, dtype: np.dtype, direction: int,
            exact: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The least value of ``dtype`` >= every point of ``[t + low - e, t + low + e]`` (``direction``
    1) or the greatest <= every point (-1), and where that is one value (no value of ``dtype``
    within ``e`` of ``t + low``; where ``exact``, ``t + low`` itself may be that value: the end the
    oracle's slack gives)."""
    c = t.astype(dtype)
    gap = c.astype(t.dtype) - t
    step = np.nextafter(c, dtype.type(direction * np.inf))
    if low is None:
        return np.where(gap * direction > 0, c, step), np.abs(gap) > e
    gap = gap - low
    on = exact & (gap == 0)
    return np.where((gap * direction > 0) | on, c, step), (np.abs(gap) > e) | on


def beyond(r: np.ndarray, rel: float, tname: str, k: float | None, overflow: bool,
           underflow: bool) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """:func:`decide` where it does not apply: references ``r`` of the working type (``|r - x| <=
    rel·|x|``) that put the infinitely precise result ``x`` past the type's largest value or within
    twice its least normal value of zero, where no value of their error changes the lane the exact
    path builds (oracles.math.lanewise.bounded, oracles.floats.interval); that lane's nearest value,
    ``lo``, ``hi`` and ulp (``k`` None: correctly rounded).

    ``overflow``: ``|x|`` above MAX + k·ulp (k = 1/2 correctly rounded) by more than the margin, the
    ulp of the top binade: the nearest value is the infinity of ``x``'s sign and no finite value is
    within the bound (``lo > hi``; §7.4: infinity is allowed past MAX + ulp/2). A reference that
    overflowed its working type, whose range is far wider than the lane type's (float64 for half
    and float, the x87 long double for double), puts ``x`` far past the lane type's MAX
    (oracles.math.references.trusted_beyond checks it does so only there). The caller passes it
    only where an infinite result is judged. ``underflow``: :func:`_uniform`; the caller passes it
    only where no flushed or unsigned zero joins the lane (§7.5.3, -cl-no-signed-zeros)."""
    fm = fmt(tname)
    dtype = scalar(tname).dtype
    w = r.dtype.type
    kk = 0.5 if k is None else float(k)
    margin = (rel + 2.0 ** -(fm.prec - 9)) * (1 + 2.0**-20)
    top = math.ldexp(1.0, fm.emax - fm.p + 1)
    with np.errstate(all="ignore"):
        mag = np.abs(r)
        # MAX + k ulp and the oracle's slack, in the working type (past double's MAX for double)
        past = (w(fm.max) + w(kk) * w(top)) * w((1 + 2.0 ** -(fm.prec - 8)) * (1 + 2.0**-20))
        over = np.isfinite(r) & (mag * w(1 - margin) > past) if overflow else np.zeros(len(r), bool)
        if overflow and np.finfo(w).max >= w(fm.max) * w(2.0**64):
            over |= np.isinf(r)
        sign = np.where(np.signbit(r), -1.0, 1.0)
        lanes = (np.where(sign > 0, np.inf, -np.inf).astype(dtype),
                 np.where(sign > 0, np.inf, -fm.max).astype(dtype),
                 np.where(sign > 0, fm.max, -np.inf).astype(dtype), np.full(len(r), top))
        if underflow:
            under, small = _uniform(r, margin, fm, dtype, w, k)
            under &= ~over
            lanes = tuple(np.where(under, b, a) for a, b in zip(lanes, small))
            over |= under
    if k is None:
        lanes = (lanes[0], lanes[0], lanes[0], lanes[3])
    return over, lanes


def _uniform(r: np.ndarray, margin: float, fm, dtype: np.dtype, w: type,
             k: float | None) -> tuple[np.ndarray, tuple]:
    """The lanes of results ``|x| < 2·MIN``, where the type's values are the multiples of its least
    subnormal ``d`` (ulp(x) = d, §7.4), from references that are normal values of the working type
    (where their relative bound holds): ``f = r/d`` (exact) is where ``x`` lies on that grid, ``c``
    its nearest integer and ``g = f - c`` (exact). The nearest value is ``c·d`` (the zero of ``x``'s
    sign for c = 0) where ``|g|`` is farther than the margin from 1/2; the interval's ends are
    ``ceil(f - k)·d`` and ``floor(f + k)·d``, computed as ``c ∓ floor(k)`` plus the ceiling (floor) of
    ``g ∓ (k - floor(k))`` (within 2^-52 of its value), where that is farther than the margin from an
    integer. The exact path computes ``x ∓ k·d`` at ``P`` bits (oracles.floats.interval: the
    format's working precision plus 20), whose rounding, up to ``(|f| + k + 1)·2^-P`` in units of
    ``d``, joins the margin; where ``|f|`` is below ``k·2^-(P+2)`` it rounds ``x ∓ k·d`` to ``∓k·d``
    itself, so the ends are ``∓floor(k)·d``. A reference that underflowed its working type (zero or
    within 2^60 of its least normal value: its relative bound no longer holds) stands for such an
    ``x`` of its sign (oracles.math.references.trusted_beyond checks it does so only there)."""
    d = fm.denorm_min
    bits = fm.prec + 20
    f = np.ldexp(r, -(fm.emin - fm.p + 1)).astype(np.float64)  # r/d, a power-of-two scaling: exact
    mag = np.abs(f)
    vanished = np.abs(r) < w(np.finfo(w).tiny) * w(2.0**60)  # underflowed in the working type
    ok = np.isfinite(r) & (mag * (1 + margin) < 2.0**fm.p)
    kk = 0.5 if k is None else float(k)
    e = mag * margin * (1 + 2.0**-20) + (mag + kk + 1) * 2.0 ** -(bits - 2)
    c = np.rint(f)
    g = f - c
    ok &= np.abs(np.abs(g) - 0.5) > e
    ok |= vanished
    nearest = np.where((c == 0) | vanished, np.copysign(0.0, f), c * d).astype(dtype)
    if k is None:
        return ok, (nearest, nearest, nearest, np.full(len(r), d))
    whole = math.floor(kk)
    part = kk - whole
    below, above = g - part, g + part
    up, down = np.ceil(below), np.floor(above)
    e2 = e + 2.0**-52
    collapse = (mag < kk * 2.0 ** -(bits + 2)) | vanished
    ok &= collapse | ((up - below > e2) & (below - (up - 1) > e2) & (above - down > e2) & ((down + 1) - above > e2))
    lo = np.where(collapse, -whole, c - whole + up)
    hi = np.where(collapse, whole, c + whole + down)
    lo = np.where(lo == 0, -0.0, lo * d)  # the ceiling of a negative end: -0, as the exact path rounds it
    return ok, (nearest, lo.astype(dtype), (hi * d).astype(dtype), np.full(len(r), d))
