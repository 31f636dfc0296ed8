"""The deviation checks that hold for every statement: NaNs, zeros, flushing, saturation,
rounding, operands, other lanes and work-items, type limits and ulps (:mod:`oracles.deviation`
runs them in :data:`oracles.deviation.context.CLASSES` order). Each takes the context and a
failing lane's position and returns a :class:`Deviation` or None (not this class, or not
decidable from what the context holds)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np

from lang.ir import Literal, Load, Op
from lang.types import format_value
from oracles import rules
from oracles.deviation.context import (
    MAX_ULPS,
    Context,
    Deviation,
    lane_name,
    limit_name,
)
from oracles.math.bounds import RULE_NEXTAFTER_LETTER

ROUNDINGS = ("rte", "rtz", "rtp", "rtn")
ROUNDING_NAMES = {"rte": "to nearest even", "rtz": "toward zero", "rtp": "toward +infinity",
                  "rtn": "toward -infinity"}
SATURATING = ("add_sat", "sub_sat", "mad_sat")


def hexfloat(f: float) -> str:
    """A float in C's hex notation, without trailing zero digits (``0x1.8p+0``)."""
    return re.sub(r"\.?0+p", "p", float(f).hex())


# ---- NaNs and zeros -------------------------------------------------------------------------------


def nan(ctx: Context, pos: int) -> Deviation | None:
    a = ctx.actual(pos)
    if not ctx.is_nan(a):
        return None
    if ctx.exp.any_nan[pos] or any(ctx.is_nan(c) for c in ctx.candidates(pos)):
        return None  # a NaN was allowed: another NaN is nan-payload's
    expected = format_value(ctx.candidates(pos)[0], ctx.s.name)
    return Deviation("nan", f"NaN ({format_value(a, ctx.s.name)}) where {expected} was expected")


def number_for_nan(ctx: Context, pos: int) -> Deviation | None:
    a, ref = ctx.actual(pos), ctx.candidates(pos)[0]
    if ctx.is_nan(a) or not ctx.is_nan(ref):
        return None
    return Deviation("number-for-nan", f"{format_value(a, ctx.s.name)} where a NaN was expected")


def nan_payload(ctx: Context, pos: int) -> Deviation | None:
    a = ctx.actual(pos)
    nans = [c for c in ctx.candidates(pos) if ctx.is_nan(c)]
    if not ctx.is_nan(a) or not nans or ctx.exp.any_nan[pos]:
        return None
    return Deviation("nan-payload", f"NaN 0x{a:x} where NaN {' or '.join(f'0x{c:x}' for c in nans)} is required "
                                    "bit for bit")


def signed_zero(ctx: Context, pos: int) -> Deviation | None:
    a = ctx.actual(pos)
    if not ctx.zero(a):
        return None
    other = a ^ (1 << (ctx.s.bits - 1))
    if other not in ctx.candidates(pos):
        return None
    return Deviation("signed-zero", f"{'-' if a else '+'}0 where {'+' if a else '-'}0 was expected")


def flushed(ctx: Context, pos: int) -> Deviation | None:
    """A denormal result read as zero, or the result with the lane's denormal operands as zero."""
    a = ctx.actual(pos)
    ref = ctx.candidates(pos)[0]
    if ctx.zero(a) and ctx.denormal(ref):
        return Deviation("flushed", f"the denormal result {format_value(ref, ctx.s.name)} flushed to {'-' if a else '+'}0")
    if not ctx.reevaluable:
        return None
    item, j = ctx.where(pos)
    inputs, flushed_names = ctx.item_inputs(item), []
    for node in {n for n in _nodes(ctx.stmt.value) if isinstance(n, Load) and n.type.elem.is_float}:
        values = inputs[node.buffer]
        with np.errstate(invalid="ignore"):
            tiny = (values != 0) & (np.abs(values.astype(np.float64)) < 2.0 ** node.type.elem.min_exp)
        if tiny.any():
            inputs[node.buffer] = np.where(tiny, np.copysign(np.zeros((), values.dtype), values), values)
            flushed_names += [f"{node.buffer}{lane_name(k, node.type.width)} = {hexfloat(values[k])}"
                              for k in np.flatnonzero(tiny)]
    if not flushed_names:
        return None
    e = ctx.statement(item, inputs)
    if e is None or not ctx.accepted(e, j, a):
        return None
    return Deviation("flushed", f"the result with the denormal operand(s) {', '.join(flushed_names)} read as 0")


def _nodes(expr):
    yield expr
    if isinstance(expr, Op):
        for arg in expr.args:
            yield from _nodes(arg)


# ---- saturation and rounding ----------------------------------------------------------------------


def _operands(ctx: Context, op: Op, item: int, j: int) -> list | None:
    """The exact value of each operand of ``op`` in lane ``j`` of one work-item (a scalar
    operand beside vectors: its one lane), or None where one is not certain."""
    out = []
    for arg in op.args:
        e = ctx.evaluate(arg, item)
        if e is None:
            return None
        k = j if arg.type.width > 1 else 0
        ref, certain = e.certain()
        if k >= len(e) or not certain[k]:
            return None
        v = ref[k]
        if arg.type.elem.is_int:
            out.append(int(v))
        elif np.isfinite(v):
            out.append(Fraction(float(v)))
        else:
            return None
    return out


def _rounded(x: Fraction, mode: str) -> int:
    if mode == "rtz":
        return math.trunc(x)
    if mode == "rtp":
        return math.ceil(x)
    if mode == "rtn":
        return math.floor(x)
    return round(x)  # Fraction rounds half to even


def unsaturated(ctx: Context, pos: int) -> Deviation | None:
    """``convert_T_sat`` or ``add_sat``/``sub_sat``/``mad_sat``: the exact result wrapped modulo 2^N."""
    op = ctx.stmt.value
    if not (ctx.reevaluable and ctx.s.is_int and isinstance(op, Op) and op.type == ctx.type):
        return None
    if not ((op.op == "convert" and op.attr("sat")) or op.op in SATURATING):
        return None
    item, j = ctx.where(pos)
    xs = _operands(ctx, op, item, j)
    if xs is None:
        return None
    if op.op == "convert":
        exact = _rounded(Fraction(xs[0]), op.attr("rounding") or "rtz")
    else:
        exact = xs[0] + xs[1] if op.op == "add_sat" else xs[0] - xs[1] if op.op == "sub_sat" else xs[0] * xs[1] + xs[2]
    s = ctx.s
    if s.min <= exact <= s.max:
        return None
    wrapped = exact % (1 << s.bits)
    if s.signed and wrapped > s.max:
        wrapped -= 1 << s.bits
    if wrapped != ctx.number(ctx.actual(pos)):
        return None
    return Deviation("unsaturated", f"{wrapped}: the exact result {exact} modulo 2^{s.bits}, not saturated to "
                                    f"{s.max if exact > s.max else s.min}")


def wrong_rounding(ctx: Context, pos: int) -> Deviation | None:
    """Another rounding of the exact result: a correctly rounded reference (``exp.error``: the
    infinitely precise result) rounded in another direction, or a conversion's operand rounded
    in another mode than its own (the representable neighbour on the other side of the exact
    value). Run before :func:`flushed`: a conversion to an integer type is never a flush (no
    integer is a denormal; ``convert_short_rtn(-0x1p-149f)`` is -1, and 0 is the value rounding
    toward zero gives, however a flushed operand would also give it); a float zero where a
    denormal was expected, which a flush explains as well, is left to :func:`flushed` (§7.2 may
    allow that one, never this)."""
    a = ctx.actual(pos)
    if ctx.s.is_float and ctx.zero(a) and flushed(ctx, pos) is not None:
        return None
    if ctx.exp.error is not None and np.isfinite(ctx.exp.error.hi[pos]) and ctx.s.is_float:
        exact = Fraction(float(ctx.exp.error.hi[pos])) + Fraction(float(ctx.exp.error.lo[pos]))
        for mode, bits in _directed(ctx.s, exact).items():
            if bits == a and a not in ctx.candidates(pos):
                return Deviation("wrong-rounding", f"the exact result {float(exact)!r} rounded "
                                                   f"{ROUNDING_NAMES[mode]} ({mode})")
    if not ctx.reevaluable:
        return None
    value, conversion = ctx.stmt.value, None
    if value.type != ctx.type and value.type.width == ctx.type.width:  # the assignment's conversion
        conversion = (value, ctx.type, False, None)
    elif isinstance(value, Op) and value.op in ("convert", "cast") and value.args[0].type.width == value.type.width:
        conversion = (value.args[0], value.type, bool(value.attr("sat")), value.attr("rounding"))
    if conversion is None:
        return None
    arg, dst, sat, rounding = conversion
    if arg.type.elem.is_int and dst.elem.is_int:
        return None  # nothing is inexact
    effective = rounding or ("rtz" if dst.elem.is_int else "rte")
    item, j = ctx.where(pos)
    modes = []
    for mode in ROUNDINGS:
        if mode == effective:
            continue
        attrs = tuple(sorted({"rounding": mode, **({"sat": True} if sat else {})}.items()))
        e = ctx.statement(item, expr=Op("convert", (arg,), dst, attrs))
        if e is not None and ctx.accepted(e, j, a):
            modes.append(mode)
    if not modes:
        return None
    operand = _operands(ctx, Op("convert", (arg,), dst), item, j)
    x = None if operand is None else hexfloat(float(operand[0])) if isinstance(operand[0], Fraction) else operand[0]
    of = "" if x is None else f" of the exact value {x}"
    how = ", ".join(f"{ROUNDING_NAMES[m]} ({m})" for m in modes)
    return Deviation("wrong-rounding", f"{format_value(a, ctx.s.name)}: the conversion to {dst.c_name}{of} rounded "
                                       f"{how}, where {effective} applies")


def smallest_normal(ctx: Context, pos: int) -> Deviation | None:
    """The smallest normal value of the sign of an expected denormal, where the lane allows a
    flushed zero (the device may flush denormals: §7.5.3): a number line without denormals
    stepped over them. ``nextafter`` at a zero names :data:`RULE_NEXTAFTER_LETTER` (severity
    letter): §7.5.3 lets such a device return the smallest normal for nextafter(+0, y < 0) and
    nextafter(-0, y > 0) and names no value for the other zero (rusticl's nextafter(-0, y < 0) =
    -FLT_MIN); elsewhere the lane's rule stays."""
    a = ctx.actual(pos)
    if not ctx.s.is_float or ctx.zero(a) or ctx.is_nan(a):
        return None
    tiny = float(np.ldexp(1.0, ctx.s.min_exp))
    value = float(ctx.value(a))
    candidates = ctx.candidates(pos)
    denormals = [c for c in candidates if ctx.denormal(c) and math.copysign(1.0, float(ctx.value(c))) * tiny == value]
    if abs(value) != tiny or not denormals or not any(ctx.zero(c) for c in candidates):
        return None
    detail = (f"{format_value(a, ctx.s.name)}, the smallest normal value, where the denormal "
              f"{format_value(denormals[0], ctx.s.name)} (or, flushed, a zero) was expected")
    op = ctx.stmt.value
    if not (ctx.reevaluable and isinstance(op, Op) and op.op == "nextafter" and op.type == ctx.type):
        return Deviation("smallest-normal", detail)
    item, j = ctx.where(pos)
    x = ctx.evaluate(op.args[0], item)
    k = j if op.args[0].type.width > 1 else 0
    if x is None or not x.certain()[1][k] or not ctx.zero(int(x.allowed[0][k])):
        return Deviation("smallest-normal", detail)
    return Deviation("smallest-normal", f"{detail}: nextafter({format_value(int(x.allowed[0][k]), ctx.s.name)}, y) "
                                        "as §7.5.3 lets a device without denormals return it for the other zero",
                     rules.index(RULE_NEXTAFTER_LETTER))


def _directed(s, exact: Fraction) -> dict[str, int]:
    """The exact value rounded to the float type ``s`` in each mode (bits), where finite."""
    with np.errstate(over="ignore"):
        y = np.array(float(exact), np.float64).astype(s.dtype)
    if not np.isfinite(y):
        return {}
    near = [np.nextafter(y, s.dtype.type(-np.inf)), y, np.nextafter(y, s.dtype.type(np.inf))]
    near = [v for v in near if np.isfinite(v)]
    below = max((v for v in near if Fraction(float(v)) <= exact), key=lambda v: float(v), default=None)
    above = min((v for v in near if Fraction(float(v)) >= exact), key=lambda v: float(v), default=None)
    if below is None or above is None:
        return {}
    bits = lambda v: int(np.array(v, s.dtype).view(s.bits_dtype))
    out = {"rtn": bits(below), "rtp": bits(above), "rtz": bits(below if exact >= 0 else above)}
    return out


# ---- other values of the program ------------------------------------------------------------------


def operand(ctx: Context, pos: int) -> Deviation | None:
    """The value of an operand of the statement's operation in the same lane (the operation skipped)."""
    op, a = ctx.stmt.value, ctx.actual(pos)
    if not (ctx.reevaluable and isinstance(op, Op)) or ctx.common(a):
        return None
    item, j = ctx.where(pos)
    for k, arg in enumerate(op.args):
        if arg.type.scalar != ctx.s.name:
            continue
        e = ctx.evaluate(arg, item)
        lane = j if arg.type.width > 1 else 0
        if e is not None and lane < len(e) and e.judged[lane] and int(e.allowed[0][lane]) == a:
            name = arg.buffer if isinstance(arg, Load) else "a literal" if isinstance(arg, Literal) else f"operand {k}"
            return Deviation("operand", f"the value of {name}{lane_name(lane, arg.type.width)}, as if the operation "
                                        "were not applied")
    return None


def other_lane(ctx: Context, pos: int) -> Deviation | None:
    item, j = ctx.where(pos)
    a = ctx.actual(pos)
    if ctx.mem == 1 or ctx.common(a):
        return None
    for k in sorted(range(ctx.mem), key=lambda k: abs(k - j)):
        p = item * ctx.mem + k
        if k != j and ctx.exp.judged[p] and a in ctx.candidates(p):
            w = ctx.type.width
            return Deviation("other-lane", f"the expected value of lane {lane_name(k, w)} of the same work-item "
                                           f"(this is lane {lane_name(j, w)})")
    return None


def type_limit(ctx: Context, pos: int) -> Deviation | None:
    name = limit_name(ctx.s, ctx.actual(pos))
    if name is None:
        return None
    return Deviation("type-limit", f"{name}, a limit of {ctx.s.name}, where {format_value(ctx.candidates(pos)[0], ctx.s.name)} "
                                   "was expected")


def _key(s, bits: int) -> int:
    """A float's bits as an integer that orders like the values (adjacent floats differ by 1)."""
    sign = 1 << (s.bits - 1)
    return bits if not bits & sign else -(bits & ~sign)


def off_by_ulps(ctx: Context, pos: int) -> Deviation | None:
    a = ctx.actual(pos)
    s = ctx.s
    if s.is_int:
        x = ctx.number(a)
        points = [ctx.number(c) for c in ctx.candidates(pos)]
        points += [int(v) for lo, hi in ctx.intervals(pos) for v in (lo, hi)]
        k = min(abs(x - p) for p in points)
        unit = ""
    else:
        if not np.isfinite(ctx.value(a)):
            return None
        bits_of = lambda v: int(np.array(v, s.dtype).view(s.bits_dtype))
        points = [_key(s, c) for c in ctx.candidates(pos) if np.isfinite(ctx.value(c))]
        points += [_key(s, bits_of(v)) for lo, hi in ctx.intervals(pos) for v in (lo, hi) if np.isfinite(v)]
        if not points:
            return None
        k = min(abs(_key(s, a) - p) for p in points)
        unit = " ulp"
    if not 0 < k <= MAX_ULPS:
        return None
    where = "outside the allowed interval" if ctx.intervals(pos) else "from the expected value"
    detail = f"{k}{unit} {where}"
    if ctx.exp.error is not None and s.is_float:
        e = ctx.exp.error.select(slice(pos, pos + 1))
        err = float(e.ulps(np.array([ctx.value(a)], s.dtype))[0])
        if np.isfinite(err):
            detail += f" ({err:.3g} ulp from the exact result; the bound is {float(e.limit[0]):g})"
    return Deviation("off-by-ulps", detail)


def other_item(ctx: Context, pos: int) -> Deviation | None:
    item, j = ctx.where(pos)
    a = ctx.actual(pos)
    if ctx.items < 2 or ctx.common(a):
        return None
    index = np.arange(ctx.items) * ctx.mem + j
    hit = np.zeros(ctx.items, bool)
    for cand in ctx.exp.allowed:
        hit |= cand[index] == a
    hit &= ctx.exp.judged[index]
    hit[item] = False
    found = np.flatnonzero(hit)
    if not len(found):
        return None
    k = int(found[np.argmin(np.abs(found - item))])
    others = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return Deviation("other-item", f"the expected value of work-item {k}{others} in the same lane (this is "
                                   f"work-item {item}, {k - item:+d})")


CHECKS = (nan, number_for_nan, nan_payload, signed_zero, wrong_rounding, flushed, smallest_normal)
"""Checks run before the image checks' missing channel (a zero that has a better reason)."""
LATER = (unsaturated, operand, other_lane, type_limit, off_by_ulps, other_item)
"""Checks run last, in this order."""
