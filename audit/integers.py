"""The audit's integer operations (triage.audit) with Python integers, from OpenCL C 3.0.19
§6.5.1 (/ %), §6.5.6 (~), §6.5.10 (shifts), §6.15.3 Table 13 (the integer built-ins) and the
SPIR-V instructions clfuzz emits only there (OpBitcast, OpVectorShuffle, OpSRem/OpSMod/OpUMod,
OpFRem/OpFMod, OpIAddCarry, OpISubBorrow, OpU/SMulExtended, OpSelect, OpAny/OpAll), with no
oracle code.

Results are computed exactly and then wrapped (unsigned), saturated (_sat) or, for a signed
result that does not fit, reported as undefined (C99 §6.5p5).
"""

from __future__ import annotations

from fractions import Fraction

from audit.base import Lanes, Registry, atype, check, implicit, relation
from audit.convert import compute, merge
from audit.types import NotOpenCL, promoted, unsigned_of
from audit.values import (
    FINITE,
    NAN,
    AuditLane,
    Real,
    decode,
    encode_zero,
    int_bits,
    int_range,
    int_value,
    is_float,
    quiet_nan,
    round_real,
    signed,
    undefined_lane,
    width,
)
from lang.ir import Op

HANDLERS = Registry()
handles = HANDLERS.handles


def exact_result(v: int, s: str, what: str = "signed overflow is undefined (C99 §6.5p5)") -> AuditLane:
    """An exact integer result in type ``s``: wrapped for unsigned types, undefined for a signed
    type it does not fit."""
    lo, hi = int_range(s)
    if signed(s) and not lo <= v <= hi:
        return undefined_lane(s, what)
    return AuditLane(s, (int_bits(v, s),))


def integer_arith(operator: str, a: int, b: int, s: str) -> AuditLane:
    """``a op b`` (+ - * & | ^) on integer type ``s`` (§6.5.1, §6.5.6)."""
    if operator in "&|^":
        return AuditLane(s, ({"&": a & b, "|": a | b, "^": a ^ b}[operator] & ((1 << width(s)) - 1),))
    x, y = int_value(a, s), int_value(b, s)
    return exact_result({"+": x + y, "-": x - y, "*": x * y}[operator], s)


def _trunc_div(x: int, y: int) -> tuple[int, int]:
    """C99 §6.5.5: the quotient truncates toward zero; x == (x / y) * y + x % y."""
    q = abs(x) // abs(y)
    q = -q if (x < 0) != (y < 0) else q
    return q, x - q * y


@handles("div")
def _div(ev, op: Op, args: list[Lanes]) -> Lanes:
    """``x / y`` or ``x % y`` where the program divides by 1 instead of 0, and instead of -1
    under MIN (clfuzz's emitted guard); operands are assigned to temporaries of the result type."""
    t = atype(op.type)
    if is_float(t[0]):
        raise NotOpenCL("div is the integer operator")
    x, y = implicit(ev, args[0], atype(op.args[0].type), t), implicit(ev, args[1], atype(op.args[1].type), t)
    lo, _ = int_range(t[0])

    def one(a: int, b: int) -> AuditLane:
        p, q = int_value(a, t[0]), int_value(b, t[0])
        if q == 0 or (signed(t[0]) and p == lo and q == -1):
            q = 1
        quotient, remainder = _trunc_div(p, q)
        return AuditLane(t[0], (int_bits(quotient if op.attr("operator") == "/" else remainder, t[0]),))

    return [compute(one, [p, q], t[0], ev.env) for p, q in zip(x, y)]


@handles("shift")
def _shift(ev, op: Op, args: list[Lanes]) -> Lanes:
    """§6.5.10: the count is the low log2(N) bits of E2 viewed as unsigned, N the width of E1's
    type after integer promotion (scalars) or of its lanes (vectors); >> of a negative signed
    value fills with ones."""
    e1, e2 = atype(op.args[0].type), atype(op.args[1].type)
    if e1[1] == 1 and e2[1] > 1:
        raise NotOpenCL("a scalar shifted by a vector")
    if e2[1] > 1 and e2[1] != e1[1]:
        raise NotOpenCL("shift operands of different lane counts")
    t = (promoted(e1[0]), 1) if e1[1] == 1 else e1
    check(op, t)
    x = implicit(ev, args[0], e1, t)
    counts = args[1] * t[1] if e2[1] == 1 else args[1]
    s, n = t[0], width(t[0])

    def one(a: int, c: int) -> AuditLane:
        k = c & (n - 1)
        if op.attr("operator") == "<<":
            return AuditLane(s, ((a << k) & ((1 << n) - 1),))
        return AuditLane(s, (int_bits(int_value(a, s) >> k, s),))

    return [compute(one, [p, q], s, ev.env) for p, q in zip(x, counts)]


@handles("complement")
def _complement(ev, op: Op, args: list[Lanes]) -> Lanes:
    e = atype(op.args[0].type)
    t = (promoted(e[0]), 1) if e[1] == 1 else e
    check(op, t)
    return [compute(lambda a: AuditLane(t[0], (~a & ((1 << width(t[0])) - 1),)), [p], t[0], ev.env)
            for p in implicit(ev, args[0], e, t)]


# ---- Table 13 --------------------------------------------------------------------------------------


def builtin(name: str, s: str, xs: list[int]) -> tuple[int, str] | AuditLane:
    """The built-in ``name`` on values (not bits) of type ``s``: (exact result, result type), or
    a lane where the result is not specified."""
    lo, hi = int_range(s)
    sat = lambda v: min(max(v, lo), hi)  # noqa: E731
    u = unsigned_of(s)
    n = width(s)
    if name == "abs":
        return abs(xs[0]), u
    if name == "abs_diff":
        return abs(xs[0] - xs[1]), u
    if name in ("add_sat", "sub_sat"):
        return sat(xs[0] + xs[1] if name == "add_sat" else xs[0] - xs[1]), s
    if name == "mad_sat":
        return sat(xs[0] * xs[1] + xs[2]), s
    if name == "hadd":
        return (xs[0] + xs[1]) >> 1, s
    if name == "rhadd":
        return (xs[0] + xs[1] + 1) >> 1, s
    if name == "mul_hi":
        return (xs[0] * xs[1]) >> n, s
    if name == "mad_hi":
        return ((xs[0] * xs[1]) >> n) + xs[2], s
    if name in ("mul24", "mad24"):
        r24 = (-(1 << 23), (1 << 23) - 1) if signed(s) else (0, (1 << 24) - 1)
        if width(s) != 32 or not all(r24[0] <= x <= r24[1] for x in xs[:2]):
            return undefined_lane(s, f"{name} is implementation-defined outside 24-bit operands (Table 13)")
        v = xs[0] * xs[1] + (xs[2] if name == "mad24" else 0)
        if not lo <= v <= hi:
            return undefined_lane(s, f"{name}'s 24-bit product does not fit the 32-bit result")
        return v, s
    if name == "rotate":
        k = xs[1] & (n - 1)
        b = xs[0] & ((1 << n) - 1)
        return ((b << k) | (b >> (n - k))) & ((1 << n) - 1), u
    if name == "clz":
        return n - (xs[0] & ((1 << n) - 1)).bit_length(), s
    if name == "ctz":
        b = xs[0] & ((1 << n) - 1)
        return (n if b == 0 else (b & -b).bit_length() - 1), s
    if name == "popcount":
        return bin(xs[0] & ((1 << n) - 1)).count("1"), s
    if name == "min":
        return (xs[1] if xs[1] < xs[0] else xs[0]), s
    if name == "max":
        return (xs[1] if xs[0] < xs[1] else xs[0]), s
    if name == "clamp":
        if xs[1] > xs[2]:
            return undefined_lane(s, "clamp with minval > maxval is undefined (Table 13)")
        return min(max(xs[0], xs[1]), xs[2]), s
    raise KeyError(name)


_BUILTINS = ("abs", "abs_diff", "add_sat", "sub_sat", "mad_sat", "hadd", "rhadd", "mul_hi", "mad_hi", "mul24",
             "mad24", "rotate", "clz", "ctz", "popcount", "min", "max", "clamp")


@handles(*_BUILTINS)
def _builtin(ev, op: Op, args: list[Lanes]) -> Lanes:
    g = atype(op.args[0].type)
    if is_float(g[0]):
        raise NotOpenCL(f"{op.op} takes integer operands here")
    operands = [implicit(ev, a, atype(e.type), g) if e.type.width == 1 or e.type != op.args[0].type else a
                for a, e in zip(args, op.args)]
    result_t = unsigned_of(g[0]) if op.op in ("abs", "abs_diff") else g[0]
    check(op, (result_t, g[1]))
    out_t = result_t

    def one(*bits: int) -> AuditLane:
        r = builtin(op.op, g[0], [int_value(b, g[0]) for b in bits])
        if isinstance(r, AuditLane):
            return r
        v, s = r
        if op.op == "mad_hi":
            return exact_result(v, s, "mad_hi's sum overflows a signed type (C99 §6.5p5)")
        return AuditLane(out_t, (int_bits(v, s),))

    return [compute(one, list(lanes), out_t, ev.env) for lanes in zip(*operands)]


@handles("upsample")
def _upsample(ev, op: Op, args: list[Lanes]) -> Lanes:
    """((T2)hi << N) | lo: signed iff hi is (char -> short, short -> int, int -> long)."""
    hi_t, lo_t = atype(op.args[0].type), atype(op.args[1].type)
    if lo_t[0] != unsigned_of(hi_t[0]) or lo_t[1] != hi_t[1] or width(hi_t[0]) == 64:
        raise NotOpenCL("upsample(hi, lo) takes gentype hi and ugentype lo of one size")
    n = width(hi_t[0])
    wide = {8: "short", 16: "int", 32: "long"}[n]
    result = wide if signed(hi_t[0]) else unsigned_of(wide)
    check(op, (result, hi_t[1]))
    return [compute(lambda h, lo_: AuditLane(result, ((h << n) | lo_,)), [p, q], result, ev.env)
            for p, q in zip(*args)]


# ---- SPIR-V only (SPIR-V 1.6 §3.42.11-15) ----------------------------------------------------------


@handles("bitcast")
def _bitcast(ev, op: Op, args: list[Lanes]) -> Lanes:
    """OpBitcast: lower-ordered bits of the wider components go to lower-numbered components."""
    src, dst = op.args[0].type, op.type
    if src.width * width(src.scalar) != dst.width * width(dst.scalar):
        raise NotOpenCL("OpBitcast between types of different sizes")
    total, why = 0, ""
    for i, lane in enumerate(args[0]):
        if lane.undefined or lane.nan or len(set(lane.values)) > 1:
            why = lane.undefined or "an operand component's bits are not certain"
        else:
            total |= lane.values[0] << (i * width(src.scalar))
    k = width(dst.scalar)
    if why:
        return [undefined_lane(dst.scalar, why)] * dst.width
    return [AuditLane(dst.scalar, ((total >> (i * k)) & ((1 << k) - 1),)) for i in range(dst.width)]


@handles("vector_shuffle")
def _vector_shuffle(ev, op: Op, args: list[Lanes]) -> Lanes:
    both = args[0] + args[1]
    return [both[c] if c >= 0 else undefined_lane(op.type.scalar, "OpVectorShuffle component 0xFFFFFFFF is "
                                                                    "undefined")
            for c in op.attr("components")]


@handles("rem")
def _rem(ev, op: Op, args: list[Lanes]) -> Lanes:
    """OpSRem (sign of Operand 1), OpSMod (sign of Operand 2), OpUMod, with the divisor replaced
    by 1 where it is 0 or -1 under MIN; OpFRem / OpFMod: the exact remainder with the sign of x /
    of y where it is a float of the type (a zero of either sign)."""
    s = op.type.scalar
    mod = op.attr("mode") == "mod"

    def one(a: int, b: int) -> AuditLane:
        if is_float(s):
            return _float_rem(a, b, s, mod)
        x, y = int_value(a, s), int_value(b, s)
        if y == 0 or (signed(s) and x == int_range(s)[0] and y == -1):
            y = 1
        r = _trunc_div(x, y)[1]
        if mod and r != 0 and (r < 0) != (y < 0):
            r += y
        return AuditLane(s, (int_bits(r, s),))

    return [compute(one, [p, q], s, ev.env) for p, q in zip(*args)]


def _float_rem(a: int, b: int, s: str, mod: bool) -> AuditLane:
    x, y = decode(a, s), decode(b, s)
    if y.is_zero:  # the emitted guard: a divisor equal to 0.0 is replaced by 1.0
        y = Real(FINITE, False, Fraction(1))
    if NAN in (x.kind, y.kind) or x.kind != FINITE:
        return AuditLane(s, (quiet_nan(s),), nan=True)
    if y.kind != FINITE:
        return undefined_lane(s, "OpFRem/OpFMod by an infinity: no value in the environment's rules")
    q = x.value / y.value
    r = x.value - y.value * (q.numerator // q.denominator if q >= 0 else -((-q.numerator) // q.denominator))
    if mod and r != 0 and (r < 0) != (y.value < 0):
        r += y.value
    bits = round_real(r, s)
    if Fraction(decode(bits, s).value) != r:
        return undefined_lane(s, "the SPIR-V environment gives OpFMod no accuracy where the remainder is inexact")
    if r == 0:
        return AuditLane(s, (encode_zero(s, x.neg), encode_zero(s, not x.neg)))
    return AuditLane(s, (bits,))


@handles("extended")
def _extended(ev, op: Op, args: list[Lanes]) -> Lanes:
    s, member, opcode = op.type.scalar, op.attr("member"), op.attr("opcode")
    n = width(s)
    full = (1 << n) - 1

    def one(a: int, b: int) -> AuditLane:
        if opcode == "IAddCarry":
            v = (a + b) & full if member == 0 else int(a + b > full)
        elif opcode == "ISubBorrow":
            v = (a - b) & full if member == 0 else int(a < b)
        else:
            x, y = (int_value(a, s), int_value(b, s)) if opcode == "SMulExtended" else (a, b)
            v = ((x * y) >> (n * member)) & full
        return AuditLane(s, (v,))

    return [compute(one, [p, q], s, ev.env) for p, q in zip(*args)]


def _spirv_relation(op: Op, a: int, b: int, s: str) -> bool:
    return relation(op.attr("compare"), a, b, s, nan=not op.attr("ordered", True))


@handles("op_select")
def _op_select(ev, op: Op, args: list[Lanes]) -> Lanes:
    s = op.args[0].type.scalar
    out = []
    for a, b, x, y in zip(*args):
        flags = compute(lambda p, q: AuditLane("int", (int(_spirv_relation(op, p, q, s)),)), [a, b], "int", ev.env)
        if flags.undefined:
            out.append(undefined_lane(op.type.scalar, flags.undefined))
        else:
            out.append(merge(op.type.scalar, [x if v else y for v in dict.fromkeys(flags.values)]))
    return out


@handles("reduce")
def _reduce(ev, op: Op, args: list[Lanes]) -> Lanes:
    s = op.args[0].type.scalar
    per_lane = [compute(lambda p, q: AuditLane("int", (int(_spirv_relation(op, p, q, s)),)), [a, b], "int", ev.env)
                for a, b in zip(*args)]
    for lane in per_lane:
        if lane.undefined:
            return [undefined_lane("int", lane.undefined)]
    fold = any if op.attr("reduce") == "any" else all
    # every lane may take any of its values: the fold of the reference choices first
    ref = fold(bool(lane.values[0]) for lane in per_lane)
    others = {fold(bool(v) for v in combo) for combo in _combos([lane.values for lane in per_lane])}
    return [AuditLane("int", tuple(dict.fromkeys([int(ref), *sorted(int(o) for o in others)])))]


def _combos(options: list[tuple[int, ...]]):
    from itertools import product

    if all(len(o) == 1 for o in options):
        return [tuple(o[0] for o in options)]
    return product(*options)
