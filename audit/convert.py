"""The audit's conversions and floating-point arithmetic (triage.audit), one lane at a time, from
OpenCL C 3.0.19 §6.4 and §7 with exact arithmetic (audit.values); no oracle code.

* ``convert_T[_sat][_rte|_rtz|_rtp|_rtn]`` (§6.4.3): rtz to integers and rte to floats by default;
  integer -> integer keeps a representable value, clamps with _sat, and otherwise wraps modulo
  2^N (C99 §6.3.1.3 for unsigned destinations; two's-complement truncation for signed ones, the
  reading of OpenCL C §6.3.1's two's-complement integers and of SPIR-V OpSConvert); floating ->
  integer rounds in the mode, clamps with _sat (NaN to 0, "should"), and an operand out of the
  destination's range (NaN and +-inf included) without _sat is implementation-defined;
  conversions to floating types are correctly rounded with IEEE 754 overflow (footnote [17]); a
  conversion to the same type has no effect.
* Flush to zero (§7.2, §7.5.3): for a floating type whose denormals the device may flush, a
  subnormal operand may be read as +-0 and a result that is subnormal before rounding may be +-0.
* ``+ - *`` on floating types are correctly rounded in rte (§7.4 Table 65), with the IEEE 754
  special cases (NaN in, NaN out; inf - inf, 0 * inf are NaN; signed zeros).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import Callable, Sequence

from audit.values import (
    FINITE,
    INF,
    NAN,
    NOT_AUDITED,
    AuditLane,
    TooMany,
    decode,
    encode_inf,
    encode_zero,
    int_bits,
    int_range,
    int_value,
    is_float,
    is_nan,
    quiet_nan,
    round_real,
    subnormal,
    tiny,
    undefined_lane,
)

MAX_COMBINATIONS = 4096


class Env:
    """The float environment of one run: the floating types whose denormals may be flushed."""

    def __init__(self, flush: frozenset[str] = frozenset()):
        self.flush = flush

    def flushes(self, s: str) -> bool:
        return s in self.flush


def choices(lane: AuditLane, flush: bool) -> list[int] | None:
    """The bit patterns an operation may read for ``lane`` (None: not specified): its values, a
    NaN where any NaN is allowed, and each subnormal also as +0 and -0 where ``flush``."""
    if lane.undefined or lane.ranges:
        return None
    out = list(dict.fromkeys(lane.values))
    s = lane.scalar
    if lane.nan and not any(is_nan(v, s) for v in out):
        out.append(quiet_nan(s))
    if flush and is_float(s):
        for v in list(out):
            if subnormal(v, s):
                out += [b for b in (encode_zero(s, False), encode_zero(s, True)) if b not in out]
    return out


def merge(s: str, results: Sequence[AuditLane]) -> AuditLane:
    """The union of several lanes' allowed values (the first result's reference first)."""
    for r in results:
        if r.undefined:
            return undefined_lane(s, r.undefined)
    values = tuple(dict.fromkeys(v for r in results for v in r.values))
    ranges = tuple(dict.fromkeys(x for r in results for x in r.ranges))
    checks = [r.check for r in results if r.check is not None]
    check = (lambda bits: any(c(bits) for c in checks)) if checks else None
    return AuditLane(s, values, nan=any(r.nan for r in results), ranges=ranges, check=check)


def compute(fn: Callable[..., AuditLane], lanes: Sequence[AuditLane], out: str, env: Env,
            flush_operands: bool = True) -> AuditLane:
    """``fn`` (bit patterns -> an AuditLane) over every combination of what the operands may be;
    float operands of a flushable type are also read flushed where ``flush_operands``."""
    options = []
    for lane in lanes:
        c = choices(lane, flush_operands and env.flushes(lane.scalar))
        if c is None:
            return undefined_lane(out, lanes_why(lanes))
        options.append(c)
    total = 1
    for o in options:
        total *= len(o)
    if total > MAX_COMBINATIONS:
        raise TooMany("too many alternative operand values to enumerate")
    return merge(out, [fn(*combo) for combo in product(*options)])


def lanes_why(lanes: Sequence[AuditLane]) -> str:
    for lane in lanes:
        if lane.undefined:
            return lane.undefined
        if lane.ranges:
            return f"{NOT_AUDITED}an operand known only within an error bound"
    return ""


# ---- conversions (§6.4.3) --------------------------------------------------------------------------


def _round_integer(q: Fraction, mode: str) -> int:
    """An exact value rounded to an integer in ``mode``."""
    floor = q.numerator // q.denominator
    rest = q - floor
    if rest == 0:
        return floor
    if mode == "rtz":
        return floor if q > 0 else floor + 1
    if mode == "rtn":
        return floor
    if mode == "rtp":
        return floor + 1
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor & 1):
        return floor + 1
    return floor


def convert_bits(bits: int, src: str, dst: str, sat: bool = False, rounding: str | None = None) -> AuditLane:
    """One lane of ``convert_<dst>[_sat][_<rounding>]`` of a ``src`` value (no flushing)."""
    mode = rounding or ("rte" if is_float(dst) else "rtz")
    if src == dst:  # §6.4.3.1: no effect
        return AuditLane(dst, (bits,), nan=is_nan(bits, dst))
    if not is_float(src):
        v = int_value(bits, src)
        if is_float(dst):
            return AuditLane(dst, (round_real(Fraction(v), dst, mode),))
        lo, hi = int_range(dst)
        if sat:
            v = min(max(v, lo), hi)
        return AuditLane(dst, (int_bits(v, dst),))
    r = decode(bits, src)
    if is_float(dst):
        if r.kind == NAN:
            return AuditLane(dst, (quiet_nan(dst),), nan=True)
        if r.kind == INF:
            return AuditLane(dst, (encode_inf(dst, r.neg),))
        return AuditLane(dst, (round_real(r.value, dst, mode, zero_neg=r.neg),))
    lo, hi = int_range(dst)
    if r.kind == NAN:
        if sat:
            return AuditLane(dst, (0,))
        return undefined_lane(dst, "a NaN converted to an integer without _sat is implementation-defined (§6.4.3.3)")
    if r.kind == INF or not lo <= r.value <= hi:
        if not sat:
            return undefined_lane(dst, "an out-of-range floating-point operand converted to an integer without "
                                       "_sat is implementation-defined (§6.4.3.3)")
        if r.kind == INF:
            return AuditLane(dst, (int_bits(lo if r.neg else hi, dst),))
    v = min(max(_round_integer(r.value, mode), lo), hi)
    return AuditLane(dst, (int_bits(v, dst),))


def convert_lane(lane: AuditLane, src: str, dst: str, env: Env, sat: bool = False,
                 rounding: str | None = None) -> AuditLane:
    """A conversion of a lane with the flush-to-zero alternatives of §7.5.3 (operand and result);
    a conversion to the operand's own type has no effect and flushes nothing."""
    if src == dst:
        return lane

    def one(bits: int) -> AuditLane:
        out = convert_bits(bits, src, dst, sat, rounding)
        if is_float(dst) and env.flushes(dst) and not out.undefined:
            exact = _exact_source(bits, src)
            if exact is not None and tiny(exact, dst):
                out = merge(dst, [out, AuditLane(dst, (encode_zero(dst, False), encode_zero(dst, True)))])
        return out

    return compute(one, [lane], dst, env, flush_operands=is_float(src))


def _exact_source(bits: int, src: str) -> Fraction | None:
    if not is_float(src):
        return Fraction(int_value(bits, src))
    r = decode(bits, src)
    return r.value if r.kind == FINITE else None


# ---- + - * on floating types (§7.4 Table 65: correctly rounded) ----------------------------------------


def float_arith(operator: str, a: int, b: int, s: str, env: Env) -> AuditLane:
    """``a op b`` on float type ``s`` rounded to nearest even, with §7.5.3's flushed result."""
    x, y = decode(a, s), decode(b, s)
    if NAN in (x.kind, y.kind):
        return AuditLane(s, (quiet_nan(s),), nan=True)
    if operator == "-":
        y = type(y)(y.kind, not y.neg, -y.value)
        operator = "+"
    if operator == "+":
        if x.kind == INF or y.kind == INF:
            if x.kind == INF and y.kind == INF and x.neg != y.neg:
                return AuditLane(s, (quiet_nan(s),), nan=True)
            return AuditLane(s, (encode_inf(s, (x if x.kind == INF else y).neg),))
        exact = x.value + y.value
        zero_neg = x.neg and y.neg  # an exact zero sum is +0 in rte unless both are -0
    elif operator == "*":
        neg = x.neg != y.neg
        if x.kind == INF or y.kind == INF:
            if x.is_zero or y.is_zero:
                return AuditLane(s, (quiet_nan(s),), nan=True)
            return AuditLane(s, (encode_inf(s, neg),))
        exact = x.value * y.value
        zero_neg = neg
    else:
        raise ValueError(operator)
    out = AuditLane(s, (round_real(exact, s, "rte", zero_neg=zero_neg),))
    if env.flushes(s) and tiny(exact, s):
        out = merge(s, [out, AuditLane(s, (encode_zero(s, False), encode_zero(s, True)))])
    return out


def float_less(a: int, b: int, s: str) -> bool | None:
    """a < b on floats (None when either is NaN)."""
    x, y = decode(a, s), decode(b, s)
    if NAN in (x.kind, y.kind):
        return None
    return _ordered(x) < _ordered(y)


def float_equal(a: int, b: int, s: str) -> bool | None:
    x, y = decode(a, s), decode(b, s)
    if NAN in (x.kind, y.kind):
        return None
    return _ordered(x) == _ordered(y)


def _ordered(r) -> tuple[int, Fraction]:
    if r.kind == INF:
        return (-1, Fraction(0)) if r.neg else (1, Fraction(0))
    return (0, r.value)
