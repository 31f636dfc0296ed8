"""The oracle of floating-point arithmetic and the math, common and geometric built-ins (area ``math``).

For every output lane it gives the values the spec allows (:class:`Lane`, packed into an
:class:`oracles.expect.Expectation`):

* a value the spec prescribes (OpenCL C 3.0.19 §7.5.1 edge cases, C99 Annex F.9 which §7.5
  incorporates, and each function's definition in §6.15.2/4/5; on a SPIR-V path the SPIR-V
  environment's list, which adds exp10(±0) = 1) is exact, sign included
  (:func:`oracles.math_specials.prescribed`), and so is a limit no line lists but IEC 60559
  arithmetic fixes (C99 F.9 ¶3: rsqrt(-0) = -inf);
* otherwise the infinitely precise result is computed with mpmath at twice the format's precision
  plus 40 bits (``oracles.floats``) and the bound of :mod:`lang.maths` for the type, the
  device's profile and the program's build options decides: correctly rounded (one value), 0 ulp,
  at most k ulp (the interval of floats within k ulp(x) of the reference, §7.4, infinity allowed
  where the next value past MAX is within it), an absolute error, or not judged;
* where the device may flush denormals (no CL_FP_DENORM, §7.2) or the program is built with
  -cl-denorms-are-zero, the four results of §7.5.3: the result from operands with subnormals read
  as zeros of either sign, and a result that is subnormal before rounding flushed to ±0;
* NaN results are "any NaN" (payload and sign unspecified, DIGEST §5.2).

The float environment ``env`` (a frozenset) holds the flushable type names and flags: of the
device and path (``embedded``: EMBEDDED_PROFILE; ``spirv``: a SPIR-V path) and of how the program
is built (:func:`lang.maths.build_flags`: ``cl2`` for OpenCL C >= 2.0; ``finite``, ``unsafe``,
``mad``, ``daz``, ``cr`` from its options).

Every lane also carries its reference and ulp so that the judge can measure the error a driver
made (``Expectation.error``), passing or not.

This module is the engine; the tables it reads live apart: the prescribed values
(:mod:`oracles.math_specials`), the exact functions (:mod:`oracles.math_exact`), the mpmath
references (:mod:`oracles.math_precise`), the bounds and rules (:mod:`oracles.math_bounds`) and
the lanes and their packing (:mod:`oracles.math_lanes`). In front of the mpmath path,
:func:`outputs` lets the filter of :mod:`oracles.math_fast` decide the lanes a vectorized reference
fixes bit for bit (issue 25); ``fast=False`` computes every lane here.
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from functools import lru_cache
from itertools import product

import mpmath
import numpy as np
from mpmath import mpf

from lang.ir import Op
from lang.maths import FUNCTIONS, Bound, MathFn
from lang.types import Type, scalar
from oracles.expect import Expectation
from oracles.floats import Format, fmt, interval, ulp
from oracles.math_bounds import (
    RULE_CROSS_W,
    RULE_LGAMMA_SIGN,
    RULE_LGAMMA_SIGN_POLE,
    RULE_NEXTAFTER_FTZ,
    RULE_NORMALIZE_INF,
    bound_for,
    nonfinite_length_rule,
    profile_of,
    rule_for,
    unsafe_domain,
)
from oracles.math_exact import EXACT, cr
from oracles.math_fast import filtered
from oracles.math_fast_geometric import geometric_filtered
from oracles.math_formulas import FORMULAS, formula_values
from oracles.math_lanes import Lane, nan_lane, operand_values, pack, same, unjudged
from oracles.math_precise import PRECISE
from oracles.math_specials import INF, NAN, is_int, prescribed

# ---- the environment -------------------------------------------------------------------------------


def flushable(tname: str, env: frozenset, fn: str = "") -> bool:
    """Whether denormals of ``tname`` may be flushed (§7.2; -cl-denorms-are-zero for float and
    double, API §5.8.4.2; half_ functions may flush, §7.5.3)."""
    return tname in env or ("daz" in env and tname in ("float", "double")) or fn.startswith("half_")


def relaxed_judged(tname: str, env: frozenset, operands: list[np.ndarray], result: np.ndarray,
                   any_nan: np.ndarray) -> np.ndarray:
    """Which lanes of + - * on ``tname`` the build options leave judged: none under
    -cl-unsafe-math-optimizations except float on OpenCL C >= 2.0 (Table 67; + - * keep Table 65's
    correct rounding there), and under it or -cl-finite-math-only only lanes whose operands and
    result are finite (API §5.8.4.3: the compiler may assume no NaN or INF)."""
    ok = np.ones(len(result), bool)
    if "unsafe" in env and (tname != "float" or "cl2" not in env):
        return ~ok
    if {"finite", "unsafe"} & env:
        with np.errstate(invalid="ignore"):
            for o in operands:
                ok &= np.isfinite(o)
            ok &= np.isfinite(result) & ~any_nan
    return ok


# ---- one lane ------------------------------------------------------------------------------------------


def _bounded(fn: str, x: mpf, bound: Bound, f: Format, rule: str, n: int = 1, operand: float = 0.0) -> Lane:
    """The lane for a reference ``x`` (finite mpf, or ±inf) under ``bound``."""
    if mpmath.isinf(x):
        return Lane([float(x)], rule=rule)
    u = ulp(x, f)
    nearest = cr(x, f)
    lane = Lane([nearest], rule=rule, exact=x, ulp=float(u), limit=0.5)
    if bound.kind in ("cr", "exact"):
        return lane
    if bound.kind == "ulp":
        k = bound.ulps(n)
        if ".unsafe." in rule and fn in ("exp", "exp2"):
            k += math.floor(abs(2 * operand))  # Table 67: 3 + floor(fabs(2x))
        width = mpf(k) * u
        lane.limit = k
    elif bound.kind == "abs":
        width = mpf(bound.value)
        lane.limit = math.nan
    else:
        raise ValueError(bound.kind)
    lo, hi, pos_inf, neg_inf = interval(x, width, f)
    lane.ranges.append((lo, hi))
    lane.values += [v for v, ok in ((INF, pos_inf), (-INF, neg_inf)) if ok and v != nearest]
    return lane


def _as_lane(value, rule: str) -> Lane:
    """A prescribed result: one value, several allowed values (a list), NaN or 'skip'."""
    if isinstance(value, str):
        return unjudged()
    if isinstance(value, list):
        return Lane(list(value), rule=rule, nan=any(isinstance(v, float) and math.isnan(v) for v in value))
    if isinstance(value, float) and math.isnan(value):
        return nan_lane(rule)
    return Lane([value], rule=rule)


def _quotient_lane(q: int, rule: str) -> Lane:
    """remquo's quo: only its sign and its low 7 bits are specified (§6.15.2 Table 14), so any
    int whose bits agree there is accepted (the sign is free when those bits are 0)."""
    low = abs(q) % 128
    mask = 0x7F | (0x80000000 if low else 0)
    return Lane([q], rule=rule, masks=[(mask, ((-low) & 0xFFFFFFFF if q < 0 else low) & mask)])


def lanewise(fn: str, tname: str, env: frozenset, args: tuple) -> tuple[Lane, ...]:
    """The lanes (result, and the out-parameter's where there is one) of a lane-wise function at
    one set of operand values, with every flush-to-zero alternative (§7.5.3)."""
    f = FUNCTIONS[fn]
    variants = [args]
    if flushable(tname, env, fn):
        tiny = fmt(tname).tiny
        options = [[a, 0.0, -0.0] if isinstance(a, float) and a != 0 and abs(a) < tiny and p in "gs" else [a]
                   for a, p in zip(args, f.params)]
        variants = list(product(*options))
    return _union(_lanewise_at(f, tname, env, tuple(struct.pack("<d", a) if isinstance(a, float) else a for a in v))
                  for v in variants)


def _union(alternatives) -> tuple[Lane, ...]:
    """Lane by lane, the results any of the alternatives (operand values) allows."""
    lanes = None
    for got in alternatives:
        lanes = got if lanes is None else tuple(a.merge(b) for a, b in zip(lanes, got))
    return lanes


_SIGNALING_AWARE = frozenset({"fmin", "fmax", "minmag", "maxmag"})


@lru_cache(maxsize=200_000)
def _lanewise_at(f: MathFn, tname: str, env: frozenset, key: tuple) -> tuple[Lane, ...]:
    """One operand set's lanes; floats come as their bytes so that the cache tells -0.0 from +0.0
    and keeps a NaN's sign (copysign reads it)."""
    args = tuple(struct.unpack("<d", a)[0] if isinstance(a, bytes) else a for a in key)
    if f.name not in _SIGNALING_AWARE:  # a signaling NaN matters to fmin/fmax only (footnote 46)
        args = tuple(math.copysign(NAN, a) if isinstance(a, float) and math.isnan(a) else a for a in args)
    fm = fmt(tname)
    outputs = 2 if f.out else 1
    floats = [a for a, p in zip(args, f.params) if p in "gs"]
    if ("finite" in env or "unsafe" in env) and not all(math.isfinite(a) for a in floats):
        return (unjudged(),) * outputs  # the options assume no NaN or INF operands (API §5.8.4.3)
    bound, kind = bound_for(f, tname, env)
    profile = profile_of(tname, env)
    if kind == "unsafe" and bound.kind != "none":
        domain = unsafe_domain(f.name, args)
        if domain is None:
            return (unjudged(),) * outputs
        if isinstance(domain, Bound):
            bound = domain
    special_rule = rule_for(f.name, "special", profile)
    if f.name in EXACT:
        if bound.kind == "none":
            return (unjudged(),) * outputs
        value = EXACT[f.name](*args, fm, tname)
        rid = rule_for(f.name, "mad" if bound.kind == "mad" else "cr" if bound.kind == "cr" else "exact", profile)
        if f.name != "mad" and _at_edge(floats, value):
            rid = special_rule  # an edge case: the value C99 F.9, §7.5.1 or the definition prescribes
        out = tuple(_as_lane(v, rid) for v in (value if outputs == 2 else (value,)))
        if f.name == "remquo":
            # "returns a NaN and 0 in quo" (§7.5.1) where the remainder is a NaN: exactly 0
            quo = Lane([0], rule=rid) if math.isnan(value[0]) else _quotient_lane(value[1], rid)
            out = (out[0], quo)
        if f.name == "nextafter" and flushable(tname, env) and args[0] == 0 and not math.isnan(args[1]) and (
                args[1] > 0 if math.copysign(1.0, args[0]) < 0 else args[1] < 0):
            out = (replace(out[0].merge(Lane([math.copysign(fm.tiny, args[1])])), rule=RULE_NEXTAFTER_FTZ),)
        return _after(out, f, tname, env, fm)
    with mpmath.workprec(fm.prec):  # a limit value (π multiples) at the working precision
        found = prescribed(f.name, args, env)
    special, special_kind = found if found is not None else (None, "special")
    if special_kind != "special":
        special_rule = rule_for(f.name, special_kind, profile)
    if f.name == "sincos":
        cos_found = prescribed("cos", args, env)
        cos = cos_found[0] if cos_found is not None else None
        if special is not None or cos is not None:
            if special is None or cos is None:  # one prescribed, the other from the general rule
                general = _lanewise_at(FUNCTIONS["sin" if special is None else "cos"], tname, env, key)[0]
                lanes = (general, _as_lane(cos, special_rule)) if special is None else (
                    _as_lane(special, special_rule), general)
                return _after(lanes, f, tname, env, fm)
            return _after((_as_lane(special, special_rule), _as_lane(cos, special_rule)), f, tname, env, fm)
    if f.name in ("lgamma", "lgamma_r"):
        return _after(_lgamma(args[0], special, special_rule, outputs), f, tname, env, fm)
    if isinstance(special, tuple):  # ("ref", value): the function's bound around a limit value
        x = special[1]
        if bound.kind == "none":
            return (unjudged(),) * outputs
        return _after((_bounded(f.name, x, bound, fm, rule_for(f.name, kind, profile, bound)),), f, tname, env, fm)
    if special is not None:
        return _after((_as_lane(special, special_rule),), f, tname, env, fm)
    if bound.kind == "none":
        return (unjudged(),) * outputs
    if f.name.startswith(("half_sin", "half_cos", "half_tan")) and abs(args[0]) > 2.0**16:
        return (unjudged(),) * outputs  # §7.4: half_sin/cos/tan need |x| <= 2^16
    if f.name in FORMULAS and bound.kind == "abs":
        values = formula_values(f.name, args, fm, flushable(tname, env, f.name))
        if values is None:
            return (unjudged(),) * outputs
        rid = rule_for(f.name, "formula", profile, bound)
        lanes = [_bounded(f.name, v, bound, fm, rid) for v in values]
        return _after((_union((lane,) for lane in lanes)), f, tname, env, fm)
    rid = rule_for(f.name, kind, profile, bound)
    with mpmath.workprec(fm.prec):
        mp_args = [mpf(a) if p in "gs" else int(a) for a, p in zip(args, f.inputs)]
        try:
            x = PRECISE[f.name](*mp_args)
        except (OverflowError, ZeroDivisionError, ValueError):  # an operand mpmath cannot take: not judged
            return (unjudged(),) * outputs
        if f.name == "sincos":
            lanes = (_bounded("sin", x, bound, fm, rid), _bounded("cos", mpmath.cos(mp_args[0]), bound, fm, rid))
            return _after(lanes, f, tname, env, fm)
        if isinstance(x, mpmath.mpc):  # a domain the special values did not cover: not judged
            return (unjudged(),) * outputs
        x = mpf(x)
        return _after((_bounded(f.name, x, bound, fm, rid, operand=args[0]),), f, tname, env, fm)


def _lgamma(x: float, special, rule: str, outputs: int) -> tuple[Lane, ...]:
    """lgamma's value has no bound (Table 65: undefined): only its prescribed values are judged.
    lgamma_r's sign is Γ's sign (§6.15.2: 1 or -1), and 0 at zero and the negative integers
    (§7.5.1 and the SPIR-V environment alike: "lgamma_r(x, signp) returns 0 in signp if x is zero
    or a negative integer"); at NaN and -∞ nothing is prescribed (Γ has no sign there)."""
    value = _as_lane(special, rule) if special is not None else unjudged()
    if outputs == 1:
        return (value,)
    if math.isnan(x) or x == -INF:
        sign = unjudged()
    elif x == 0 or (x < 0 and is_int(x)):
        sign = Lane([0], rule=RULE_LGAMMA_SIGN_POLE)
    elif x > 0:
        sign = Lane([1], rule=RULE_LGAMMA_SIGN)
    else:
        sign = Lane([1 if math.floor(x) % 2 == 0 else -1], rule=RULE_LGAMMA_SIGN)
    return value, sign


def _at_edge(floats: list[float], value) -> bool:
    """Whether an exact function's lane is one of its edge cases (a NaN, infinite or zero operand or
    result: the values C99 F.9, §7.5.1 or the function's definition prescribe, sign included),
    so that it names the special rule rather than the bound's."""
    results = value if isinstance(value, (tuple, list)) else (value,)
    return any(isinstance(v, float) and (not math.isfinite(v) or v == 0) for v in (*floats, *results))


def _after(lanes: tuple[Lane, ...], f: MathFn, tname: str, env: frozenset, fm: Format) -> tuple[Lane, ...]:
    """The result-side allowances: a result subnormal before rounding may be flushed to ±0
    (§7.5.3), and under -cl-unsafe-math-optimizations or -cl-finite-math-only an INF or NaN result
    is not judged and (unsafe) a zero's sign is not significant (-cl-no-signed-zeros, implied)."""
    out = []
    for i, lane in enumerate(lanes):
        is_float = (f.out != "I" or i == 0) and f.result != "i"
        if not lane.judged or not is_float:
            out.append(lane)
            continue
        if ("finite" in env or "unsafe" in env) and (lane.nan or any(
                isinstance(v, float) and not math.isfinite(v) for v in lane.values[:1])):
            out.append(unjudged())
            continue
        extra = []
        if flushable(tname, env, f.name):
            probe = lane.exact if lane.exact is not None else (mpf(lane.values[0]) if math.isfinite(lane.values[0])
                                                                else None)
            if probe is not None and probe != 0 and abs(probe) < fm.tiny:
                extra += [0.0, -0.0]
            extra += [math.copysign(0.0, v) for v in lane.values if isinstance(v, float) and v != 0
                      and math.isfinite(v) and abs(v) < fm.tiny]
        if "unsafe" in env:
            extra += [-v for v in lane.values if isinstance(v, float) and v == 0]
        out.append(replace(lane, values=lane.values + [v for v in extra if not any(same(v, w) for w in lane.values)]))
    return tuple(out)


# ---- geometric functions (whole vectors) ------------------------------------------------------------


def geometric(fn: str, tname: str, env: frozenset, args: tuple[tuple[float, ...], ...]) -> list[Lane]:
    """The lanes of one work-item's geometric function (§6.15.5, bounds of §7.4): a scalar for
    dot, length, distance and their fast_ forms, a vector for cross and normalize."""
    f = FUNCTIONS[fn]
    n = len(args[0])
    outputs = n if f.result == "g" else 1
    fm = fmt(tname)
    flat = [a for v in args for a in v]
    bound, kind = bound_for(f, tname, env)
    finite = all(math.isfinite(a) for a in flat)
    relaxed = ("finite" in env or "unsafe" in env) and not finite  # no NaN or INF assumed (API §5.8.4.3)
    if relaxed or (kind == "unsafe" and bound.kind == "none"):
        return [unjudged() for _ in range(outputs)]
    if fn == "cross" and n == 4:  # "The w component of float4 result returned will be 0.0" (§6.15.5)
        w = _after((Lane([0.0], rule=RULE_CROSS_W),), f, tname, env, fm)[0]
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
            return list(_after(tuple(Lane([a], rule=rule_for(fn, "special", profile)) for a in args[0]),
                               f, tname, env, fm))
        if bound.kind == "none":
            return [unjudged() for _ in range(outputs)]
        rid = rule_for(fn, kind, profile, bound)
        if fn == "dot":
            exact = mpmath.fsum(a * b for a, b in zip(*mp))
            tol = _abs_tolerance(flat, fm, 2 * n - 1, tname)
            return [_abs_lane(exact, tol, fm, rid)]
        if fn == "cross":
            (a0, a1, a2), (b0, b1, b2) = mp[0][:3], mp[1][:3]
            comps = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
            tol = _abs_tolerance(flat, fm, 3, tname)
            return [_abs_lane(c, tol, fm, rid) for c in comps] + [unjudged()] * (n - 3)  # w: geometric()
        if fn.startswith("fast_") and not (fm.tiny <= squares <= fm.max) and squares != 0:
            # the fast_ forms are defined by half_sqrt of the float sum of squares (§6.15.5):
            # where that sum overflows or underflows the result is undefined (fast_normalize: §7.4)
            return [unjudged() for _ in range(outputs)]
        norm = mpmath.sqrt(squares)
        if fn.endswith("normalize"):
            return list(_after(tuple(_bounded(fn, c / norm, bound, fm, rid, n) for c in vector), f, tname, env, fm))
        return list(_after((_bounded(fn, norm, bound, fm, rid, n),), f, tname, env, fm))


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
            lanes = [_bounded(fn, mpf(a) / norm, bound, fm, RULE_NORMALIZE_INF, len(v)) for a in replaced]
        return list(_after(tuple(lanes), f, tname, env, fm))
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


def _abs_lane(exact: mpf, tol: mpf, fm: Format, rule: str) -> Lane:
    if abs(exact) + tol > fm.max:
        return unjudged()  # the tolerance reaches past the largest float: nothing to decide
    return _bounded("", exact, Bound("abs", float(tol)), fm, rule)


# ---- the references of the IR's operations ------------------------------------------------------------


def outputs(op: Op, args: list[Expectation], n: int, env: frozenset, *, fast: bool = True) -> tuple[Expectation, ...]:
    """The expectations of a math operation: its result, and its out-parameter's where it has one.
    With ``fast`` the vectorized filter (:mod:`oracles.math_fast`) decides the lanes it can, bit for
    bit as mpmath would; mpmath computes the others (``fast=False``: every lane, the reference).
    The scalar operand of a scalar-argument overload (lang.maths.MathFn.scalar_form: ``ldexp(float4,
    int)``, ``step(float, float4)``) is the same value in every lane of its work-item (``spread``);
    each lane then follows the rules and bound of the all-vector form, whose lanes are the scalar
    function's (§6.15.2, §6.15.4: "operate component-wise")."""
    f = FUNCTIONS[op.op]
    t = op.args[0].type if op.args else op.type
    tname = op.type.scalar if f.result != "i" else t.scalar
    if f.group == "geometric":
        return (_geometric_outputs(f, op, args, n, env, fast),)
    spread = [None if a.type.width == op.type.width or op.type.width == 1 else op.type.width for a in op.args]
    decided = filtered(f, tname, env, args, spread) if fast else None
    slow = np.arange(n * op.type.width) if decided is None else decided.rest
    per_arg = [operand_values(e.select(slow if k is None else slow // k), a.type.scalar)
               for a, e, k in zip(op.args, args, spread)]
    results: list[list[Lane]] = [[] for _ in range(2 if f.out else 1)]
    for i in range(len(slow)):
        operand_sets = [p[i] for p in per_arg]
        if any(s is None for s in operand_sets) or math.prod(len(s) for s in operand_sets) > 16:
            got = (unjudged(),) * len(results)
        else:
            got = _union(lanewise(f.name, tname, env, combo) for combo in product(*operand_sets))
        for j, lane in enumerate(got):
            results[j].append(lane)
    types = [op.type.scalar] + ([f.operand_type(f.out, Type(tname)).scalar] if f.out else [])
    if decided is not None:  # the representatives' lanes copied to every lane they stand for
        return decided.merge([pack(lanes, ty) for lanes, ty in zip(results, types)] if len(slow) else None)
    return tuple(pack(lanes, ty) for lanes, ty in zip(results, types))


def _geometric_outputs(f: MathFn, op: Op, args: list[Expectation], n: int, env: frozenset,
                       fast: bool = True) -> Expectation:
    """The result of a geometric function, work-item by work-item (:func:`geometric`) where the
    filter (:mod:`oracles.math_fast_geometric`; with ``fast``) does not decide the work-item."""
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
