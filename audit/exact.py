"""The audit's math built-ins that need no approximation (audit.math): 0 ulp or correctly
rounded by OpenCL C 3.0.19 §7.4 Tables 65 and 68 (fabs, copysign, fmin/fmax, minmag/maxmag, fdim,
ceil, floor, trunc, rint, round, fma, mad, fmod, remainder, remquo, ldexp, frexp, modf, fract,
ilogb, logb, nextafter, sign, step, nan), computed exactly with Fractions from their definitions
(§6.15.2, §6.15.4), §7.5.1-§7.5.2 and C99 F.9. No oracle code.
"""

from __future__ import annotations

from fractions import Fraction

from audit.specials import NAN_R, ONE, finite, infinity, signed_zero
from audit.values import (
    FINITE,
    FORMATS,
    INF,
    NAN,
    AuditLane,
    Real,
    decode,
    encode_inf,
    int_bits,
    max_finite,
    quiet_nan,
    round_real,
    undefined_lane,
)


EXACT_FUNCTIONS = frozenset({"fabs", "copysign", "fmin", "fmax", "minmag", "maxmag", "fdim", "ceil", "floor",
                             "trunc", "rint", "round", "fma", "mad", "fmod", "remainder", "remquo", "ldexp",
                             "frexp", "modf", "fract", "ilogb", "logb", "nextafter", "sign", "step", "nan"})


def _floor(q: Fraction) -> int:
    return q.numerator // q.denominator


def _round_int(q: Fraction, how: str) -> int:
    f = _floor(q)
    rest = q - f
    if how == "floor" or rest == 0:
        return f
    if how == "ceil":
        return f + 1
    if how == "trunc":
        return f if q >= 0 else f + 1
    if how == "round":  # half away from zero
        return f + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and q > 0))
    return f + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and f % 2 == 1))  # rint: ties to even


def exact_value(fn: str, xs: list, s: str, second: bool) -> AuditLane:
    """The lane of a function that needs no approximation (its result or, with ``second``, its
    out-parameter's), from its definition (§6.15.2, §6.15.4, §7.5)."""
    out = _EXACT[fn](xs, s)
    if isinstance(out, AuditLane):
        return out
    results = out if isinstance(out, tuple) else (out,)
    value = results[1] if second else results[0]
    target = "int" if isinstance(value, (int, list)) else s
    if isinstance(value, list):  # int alternatives (ilogb's FP_ILOGB0 and FP_ILOGBNAN)
        return AuditLane("int", tuple(int_bits(v, "int") for v in value))
    if isinstance(value, int):
        return AuditLane("int", (int_bits(value, "int"),))
    return _as_lane(value, target)


def _as_lane(r, s: str) -> AuditLane:
    if isinstance(r, AuditLane):
        return r
    if isinstance(r, set):  # several exact values allowed
        lanes = [_as_lane(v, s) for v in sorted(r, key=repr)]
        return AuditLane(s, tuple(v for lane in lanes for v in lane.values), nan=any(lane.nan for lane in lanes))
    if r.kind == NAN:
        return AuditLane(s, (quiet_nan(s),), nan=True)
    if r.kind == INF:
        return AuditLane(s, (encode_inf(s, r.neg),))
    return AuditLane(s, (round_real(r.value, s, zero_neg=r.neg),))


def _nan_any(xs) -> bool:
    return any(isinstance(x, Real) and x.kind == NAN for x in xs)


def _rounded(v: Fraction, s: str, zero_neg: bool = False) -> Real:
    bits = round_real(v, s, zero_neg=zero_neg)
    return decode(bits, s)


def _fmin_max(xs, s, is_max: bool):
    a, b = xs
    if a.kind == NAN:
        return b
    if b.kind == NAN:
        return a
    ka, kb = _key(a), _key(b)
    if ka == kb and a.neg != b.neg:  # +0 and -0: C99 leaves the sign of the zero free
        return {a, b}
    return (b if kb > ka else a) if is_max else (b if kb < ka else a)


def _key(r: Real):
    return (1 if not r.neg else -1, Fraction(0)) if r.kind == INF else (0, r.value)


def _mag(r: Real):
    return (1, Fraction(0)) if r.kind == INF else (0, abs(r.value))


def _minmag(xs, s, is_max: bool):
    a, b = xs
    if NAN not in (a.kind, b.kind) and _mag(a) != _mag(b):
        return (a if _mag(a) > _mag(b) else b) if is_max else (a if _mag(a) < _mag(b) else b)
    return _fmin_max(xs, s, is_max)


def _integral(how):
    def f(xs, s):
        x = xs[0]
        if x.kind != FINITE or x.is_zero:
            return x
        return signed_zero(x.neg) if _round_int(x.value, how) == 0 else finite(Fraction(_round_int(x.value, how)))
    return f


def _fdim(xs, s):
    a, b = xs
    if _nan_any(xs):
        return NAN_R
    if _key(a) > _key(b):
        if a.kind == INF or b.kind == INF:
            return a if a.kind == INF else infinity(False)
        return _rounded(a.value - b.value, s)
    return signed_zero(False)


def _fma(xs, s, mad=False):
    a, b, c = xs
    if _nan_any(xs):
        return NAN_R
    if (a.kind == INF and b.is_zero) or (b.kind == INF and a.is_zero):
        return NAN_R
    pneg = a.neg != b.neg
    if a.kind == INF or b.kind == INF:
        if c.kind == INF and c.neg != pneg:
            return NAN_R
        return infinity(pneg)
    if c.kind == INF:
        return c
    exact = a.value * b.value + c.value
    zero_neg = pneg and c.neg if exact == 0 else False
    fused = _rounded(exact, s, zero_neg)
    if not mad:
        return fused
    prod = _rounded(a.value * b.value, s, pneg)
    if prod.kind == INF:
        second = NAN_R if c.kind == INF and c.neg != prod.neg else prod
    else:
        total = prod.value + c.value
        second = _rounded(total, s, prod.neg and c.neg if total == 0 else False)
    return {fused, second}


def _remainder(xs, s, mode: str):
    x, y = xs
    if _nan_any(xs) or x.kind == INF or y.is_zero:
        return (NAN_R, 0) if mode == "remquo" else NAN_R
    if y.kind == INF:  # the integral quotient is 0
        return (x, _quotient(0, x.neg != y.neg)) if mode == "remquo" else x
    q = x.value / y.value
    k = _round_int(q, "trunc" if mode == "fmod" else "rint")
    r = x.value - k * y.value
    value = signed_zero(x.neg) if r == 0 else finite(r)
    if mode != "remquo":
        return value
    return value, _quotient(k, q < 0)


def _quotient(k: int, negative: bool) -> AuditLane:
    """remquo's quo: the sign of x/y, and the magnitude congruent to |k| modulo 2^7 (§6.15.2)."""
    low = abs(k) % 128

    def ok(bits: int) -> bool:
        v = bits - (1 << 32) if bits >> 31 else bits
        if abs(v) % 128 != low:
            return False
        return v == 0 or low == 0 or (v < 0) == negative

    ref = -low if negative else low
    return AuditLane("int", (int_bits(ref, "int"),), check=ok)


def _ldexp(xs, s):
    x, n = xs
    if x.kind != FINITE or x.is_zero:
        return x
    span = FORMATS[s][2] - FORMATS[s][1] + 2 * FORMATS[s][0] + 4  # beyond it: overflow or underflow alike
    return _rounded(x.value * Fraction(2) ** max(-span, min(span, n)), s, x.neg)


def _exponent(v: Fraction) -> int:
    e = v.numerator.bit_length() - v.denominator.bit_length()
    while Fraction(2) ** e > v:
        e -= 1
    while Fraction(2) ** (e + 1) <= v:
        e += 1
    return e


def _frexp(xs, s):
    x = xs[0]
    if x.kind != FINITE or x.is_zero:
        return x, 0
    e = _exponent(abs(x.value)) + 1
    return finite(x.value / Fraction(2) ** e), e


def _modf(xs, s):
    x = xs[0]
    if x.kind == NAN:
        return NAN_R, NAN_R
    if x.kind == INF:
        return signed_zero(x.neg), x
    t = _round_int(x.value, "trunc")
    frac = x.value - t
    return (signed_zero(x.neg) if frac == 0 else finite(frac)), (signed_zero(x.neg) if t == 0 else finite(Fraction(t)))


def _fract(xs, s):
    x = xs[0]
    if x.kind == NAN:
        return NAN_R, NAN_R
    if x.kind == INF:
        return signed_zero(x.neg), x
    if x.is_zero:
        return x, x
    f = _floor(x.value)
    below_one = Fraction((1 << FORMATS[s][0]) - 1, 1 << FORMATS[s][0])
    frac = _rounded(x.value - f, s)
    if frac.kind == FINITE and frac.value >= 1:
        frac = finite(below_one)
    return frac, (signed_zero(x.neg) if f == 0 else finite(Fraction(f)))


def _ilogb(xs, s):
    x = xs[0]
    if x.kind == NAN:
        return [2**31 - 1, -2**31]
    if x.kind == INF:
        return 2**31 - 1
    if x.is_zero:
        return [-2**31, -(2**31 - 1)]
    return _exponent(abs(x.value))


def _logb(xs, s):
    x = xs[0]
    if x.kind == NAN:
        return NAN_R
    if x.kind == INF:
        return infinity(False)
    if x.is_zero:
        return infinity(True)
    e = _exponent(abs(x.value))
    return signed_zero(False) if e == 0 else finite(Fraction(e))


def _nextafter(xs, s):
    x, y = xs
    if _nan_any(xs):
        return NAN_R
    if _key(x) == _key(y):
        return y
    up = _key(y) > _key(x)
    if x.kind == INF:
        return finite(max_finite(s) if not x.neg else -max_finite(s))
    step = Fraction(2) ** (FORMATS[s][1] - FORMATS[s][0] + 1)
    v = x.value
    mode = "rtp" if up else "rtn"
    nxt = decode(round_real(v + (step / 2 if up else -step / 2), s, mode), s)
    if nxt.kind == FINITE and nxt.value == v:  # the half-step did not reach: step by the ulp of v
        nxt = decode(round_real(v + (step if up else -step), s, mode), s)
    return nxt


def _sign(xs, s):
    x = xs[0]
    if x.kind == NAN:
        return signed_zero(False)
    if x.is_zero:
        return x
    return finite(Fraction(-1 if x.neg else 1))


def _step(xs, s):
    edge, x = xs
    if _nan_any(xs):
        return undefined_lane(s, "step with a NaN operand is not defined (§6.15.4)")
    return signed_zero(False) if _key(x) < _key(edge) else ONE


def _copysign(xs, s):
    a, b = xs
    if a.kind == NAN:
        return NAN_R
    return Real(a.kind, b.neg, -abs(a.value) if b.neg else abs(a.value))


_EXACT = {
    "fabs": lambda xs, s: xs[0] if xs[0].kind == NAN else Real(xs[0].kind, False, abs(xs[0].value)),
    "copysign": _copysign,
    "fmin": lambda xs, s: _fmin_max(xs, s, False), "fmax": lambda xs, s: _fmin_max(xs, s, True),
    "minmag": lambda xs, s: _minmag(xs, s, False), "maxmag": lambda xs, s: _minmag(xs, s, True),
    "fdim": _fdim, "ceil": _integral("ceil"), "floor": _integral("floor"), "trunc": _integral("trunc"),
    "rint": _integral("rint"), "round": _integral("round"),
    "fma": lambda xs, s: _fma(xs, s), "mad": lambda xs, s: _fma(xs, s, mad=True),
    "fmod": lambda xs, s: _remainder(xs, s, "fmod"), "remainder": lambda xs, s: _remainder(xs, s, "remainder"),
    "remquo": lambda xs, s: _remainder(xs, s, "remquo"), "ldexp": _ldexp, "frexp": _frexp, "modf": _modf,
    "fract": _fract, "ilogb": _ilogb, "logb": _logb, "nextafter": _nextafter, "sign": _sign, "step": _step,
    "nan": lambda xs, s: NAN_R,
}

