"""The lanes of a lane-wise math built-in (and / on floats) at one set of operand values
(:func:`lanewise`), and the float environment's part in them (:func:`flushable`,
:func:`relaxed_judged`): the engine of :mod:`oracles.math.engine` (its docstring says what the
spec allows) for every function but the geometric ones (:mod:`oracles.math.geometric`).
"""

from __future__ import annotations

import math
import struct
from contextvars import ContextVar
from dataclasses import replace
from functools import lru_cache
from itertools import product

import mpmath
import numpy as np
from mpmath import mpf

from lang.maths import FUNCTIONS, Bound, MathFn
from oracles.floats import Format, fmt, interval, ulp
from oracles.math.bounds import (
    RULE_LGAMMA_SIGN,
    RULE_LGAMMA_SIGN_POLE,
    RULE_NEXTAFTER_FTZ,
    accuracy_void,
    bound_for,
    edges_void,
    profile_of,
    rule_for,
    unsafe_domain,
)
from oracles.math.exact import EXACT, cr
from oracles.math.formulas import FORMULAS, formula_values
from oracles.math.lanes import Lane, nan_lane, same, unjudged
from oracles.math.precise import PRECISE
from oracles.math.specials import INF, NAN, Undefined, is_int, prescribed

# ---- the environment -------------------------------------------------------------------------------


def flushable(tname: str, env: frozenset, fn: str = "") -> bool:
    """Whether denormals of ``tname`` may be flushed (§7.2; ``daz``: -cl-denorms-are-zero, alone or
    set by -cl-unsafe-math-optimizations, for float and double: "the single precision denormalized
    numbers may be flushed to zero; double precision denormalized numbers may also be flushed to
    zero", OpenCL 3.0 API §5.8.6.2; half_ functions may flush, §7.5.3)."""
    return tname in env or ("daz" in env and tname in ("float", "double")) or fn.startswith("half_")


def relaxed_judged(tname: str, env: frozenset, operands: list[np.ndarray], result: np.ndarray,
                   any_nan: np.ndarray) -> np.ndarray:
    """Which lanes of + - * on ``tname`` the build options leave judged: none where they void every
    accuracy rule (oracles.math.bounds.accuracy_void: -cl-finite-math-only; unsafe math except on
    float in OpenCL C >= 2.0, where + - * keep Table 65's correct rounding), and under unsafe math
    only lanes whose operands and result are finite (API §5.8.6.3: "assume that arguments and
    results are valid", and edge case behaviour is void: oracles.math.bounds.edges_void)."""
    ok = np.ones(len(result), bool)
    if accuracy_void(tname, env):
        return ~ok
    if edges_void(env):
        with np.errstate(invalid="ignore"):
            for o in operands:
                ok &= np.isfinite(o)
            ok &= np.isfinite(result) & ~any_nan
    return ok


# ---- one lane ------------------------------------------------------------------------------------------


def bounded(fn: str, x: mpf, bound: Bound, f: Format, rule: str, n: int = 1, operand: float = 0.0,
            width: mpf | None = None) -> Lane:
    """The lane for a reference ``x`` (finite mpf, or ±inf) under ``bound``; an absolute bound's
    half-width is ``width`` where given (exact: a float64 would round a tiny one to 0), else its
    value."""
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
        width = mpf(bound.value) if width is None else width
        lane.limit = math.nan
    else:
        raise ValueError(bound.kind)
    lo, hi, pos_inf, neg_inf = interval(x, width, f)
    lane.ranges.append((lo, hi))
    lane.values += [v for v, ok in ((INF, pos_inf), (-INF, neg_inf)) if ok and v != nearest]
    return lane


def _prescribed_lane(value, rule: str, env: frozenset) -> Lane:
    """A prescribed value's lane (:func:`_as_lane`): an edge case, not judged where the build voids
    edge case behaviour (oracles.math.bounds.edges_void); a result the spec leaves undefined keeps
    its rule whatever the build."""
    return unjudged() if edges_void(env) and not isinstance(value, Undefined) else _as_lane(value, rule)


def _as_lane(value, rule: str) -> Lane:
    """An exact result: one value, several allowed values (a list), NaN, 'skip' or a result the
    spec leaves undefined (specials.Undefined: not judged, under its rule)."""
    if isinstance(value, Undefined):
        return unjudged(value.rule)
    if isinstance(value, str):
        return unjudged()
    if isinstance(value, list):
        return Lane(list(value), rule=rule, nan=any(isinstance(v, float) and math.isnan(v) for v in value))
    if isinstance(value, float) and math.isnan(value):
        return nan_lane(rule)
    return Lane([value], rule=rule)


def quotient_lane(q: int, rule: str) -> Lane:
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
    return union(lanes_at(f, tname, env, tuple(struct.pack("<d", a) if isinstance(a, float) else a for a in v))
                 for v in variants)


def union(alternatives) -> tuple[Lane, ...]:
    """Lane by lane, the results any of the alternatives (operand values) allows."""
    lanes = None
    for got in alternatives:
        lanes = got if lanes is None else tuple(a.merge(b) for a, b in zip(lanes, got))
    return lanes


_SIGNALING_AWARE = frozenset({"fmin", "fmax", "minmag", "maxmag"})

REFERENCE_ONLY: ContextVar[bool] = ContextVar("reference_only", default=False)
"""True while the oracle re-derives an expectation (``oracles.interpreter.rederive``): no filter
in front of mpmath (``oracles.math.engine.outputs``) and no operand-set cache (:func:`lanes_at`).
Each thread has its own value."""


def lanes_at(f: MathFn, tname: str, env: frozenset, key: tuple) -> tuple[Lane, ...]:
    """One operand set's lanes (:func:`lanewise_at`): from its cache, or computed anew while
    :data:`REFERENCE_ONLY`."""
    return (lanewise_at.__wrapped__ if REFERENCE_ONLY.get() else lanewise_at)(f, tname, env, key)


@lru_cache(maxsize=200_000)
def lanewise_at(f: MathFn, tname: str, env: frozenset, key: tuple) -> tuple[Lane, ...]:
    """One operand set's lanes; floats come as their bytes so that the cache tells -0.0 from +0.0
    and keeps a NaN's sign (copysign reads it)."""
    args = tuple(struct.unpack("<d", a)[0] if isinstance(a, bytes) else a for a in key)
    if f.name not in _SIGNALING_AWARE:  # a signaling NaN matters to fmin/fmax only (footnote 46)
        args = tuple(math.copysign(NAN, a) if isinstance(a, float) and math.isnan(a) else a for a in args)
    fm = fmt(tname)
    outputs = 2 if f.out else 1
    floats = [a for a, p in zip(args, f.params) if p in "gs"]
    if accuracy_void(tname, env) or (edges_void(env) and not all(math.isfinite(a) for a in floats)):
        return (unjudged(),) * outputs  # no rule left, or NaN and INF operands assumed away (API §5.8.6.3)
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
            if edges_void(env):
                return (unjudged(),) * outputs
        out = tuple(_as_lane(v, rid) for v in (value if outputs == 2 else (value,)))
        if f.name == "remquo":
            # "returns a NaN and 0 in quo" (§7.5.1) where the remainder is a NaN: exactly 0
            quo = Lane([0], rule=rid) if math.isnan(value[0]) else quotient_lane(value[1], rid)
            out = (out[0], quo)
        if f.name == "nextafter" and flushable(tname, env) and args[0] == 0 and not math.isnan(args[1]) and (
                args[1] > 0 if math.copysign(1.0, args[0]) < 0 else args[1] < 0):
            out = (replace(out[0].merge(Lane([math.copysign(fm.tiny, args[1])])), rule=RULE_NEXTAFTER_FTZ),)
        return after(out, f, tname, env, fm)
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
                general = lanes_at(FUNCTIONS["sin" if special is None else "cos"], tname, env, key)[0]
                lanes = (general, _prescribed_lane(cos, special_rule, env)) if special is None else (
                    _prescribed_lane(special, special_rule, env), general)
                return after(lanes, f, tname, env, fm)
            lanes = (_prescribed_lane(special, special_rule, env), _prescribed_lane(cos, special_rule, env))
            return after(lanes, f, tname, env, fm)
    if f.name in ("lgamma", "lgamma_r"):
        return after(_lgamma(args[0], special, special_rule, outputs, env), f, tname, env, fm)
    if isinstance(special, tuple):  # ("ref", value): the function's bound around a limit value
        x = special[1]
        if bound.kind == "none" or edges_void(env):
            return (unjudged(),) * outputs
        return after((bounded(f.name, x, bound, fm, rule_for(f.name, kind, profile, bound)),), f, tname, env, fm)
    if special is not None:
        return after((_prescribed_lane(special, special_rule, env),), f, tname, env, fm)
    if bound.kind == "none":
        return (unjudged(),) * outputs
    if f.name.startswith(("half_sin", "half_cos", "half_tan")) and abs(args[0]) > 2.0**16:
        return (unjudged(),) * outputs  # §7.4: half_sin/cos/tan need |x| <= 2^16
    if f.name in FORMULAS and bound.kind == "abs":
        values = formula_values(f.name, args, fm, flushable(tname, env, f.name))
        if values is None:
            return (unjudged(),) * outputs
        rid = rule_for(f.name, "formula", profile, bound)
        lanes = [bounded(f.name, v, bound, fm, rid) for v in values]
        return after((union((lane,) for lane in lanes)), f, tname, env, fm)
    rid = rule_for(f.name, kind, profile, bound)
    with mpmath.workprec(fm.prec):
        mp_args = [mpf(a) if p in "gs" else int(a) for a, p in zip(args, f.inputs)]
        try:
            x = PRECISE[f.name](*mp_args)
        except (OverflowError, ZeroDivisionError, ValueError):  # an operand mpmath cannot take: not judged
            return (unjudged(),) * outputs
        if f.name == "sincos":
            lanes = (bounded("sin", x, bound, fm, rid), bounded("cos", mpmath.cos(mp_args[0]), bound, fm, rid))
            return after(lanes, f, tname, env, fm)
        if isinstance(x, mpmath.mpc):  # a domain the special values did not cover: not judged
            return (unjudged(),) * outputs
        x = mpf(x)
        return after((bounded(f.name, x, bound, fm, rid, operand=args[0]),), f, tname, env, fm)


def _lgamma(x: float, special, rule: str, outputs: int, env: frozenset) -> tuple[Lane, ...]:
    """lgamma's value has no bound (Table 65: undefined): only its prescribed values are judged.
    lgamma_r's sign is Γ's sign (§6.15.2: 1 or -1), and 0 at zero and the negative integers
    (§7.5.1 and the SPIR-V environment alike: "lgamma_r(x, signp) returns 0 in signp if x is zero
    or a negative integer"; an edge case, void where the build voids them); at NaN and -∞ nothing
    is prescribed (Γ has no sign there)."""
    value = _prescribed_lane(special, rule, env) if special is not None else unjudged()
    if outputs == 1:
        return (value,)
    if math.isnan(x) or x == -INF or ((x == 0 or (x < 0 and is_int(x))) and edges_void(env)):
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


def after(lanes: tuple[Lane, ...], f: MathFn, tname: str, env: frozenset, fm: Format) -> tuple[Lane, ...]:
    """The result-side allowances: a result subnormal before rounding may be flushed to ±0
    (§7.5.3), where the build voids edge case behaviour (oracles.math.bounds.edges_void) an INF or
    NaN result is not judged, and under -cl-no-signed-zeros (``nsz``, alone or set by
    -cl-unsafe-math-optimizations) "the sign of a zero result is not significant" (OpenCL 3.0 API
    §5.8.6.3): a zero of either sign is accepted."""
    out = []
    for i, lane in enumerate(lanes):
        is_float = (f.out != "I" or i == 0) and f.result != "i"
        if not lane.judged or not is_float:
            out.append(lane)
            continue
        if edges_void(env) and (lane.nan or any(
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
        if "nsz" in env:
            extra += [-v for v in lane.values if isinstance(v, float) and v == 0]
        out.append(replace(lane, values=lane.values + [v for v in extra if not any(same(v, w) for w in lane.values)]))
    return tuple(out)
