"""The audit's prescribed values of the math built-ins (audit.math): OpenCL C 3.0.19 §7.5.1
and C99 Annex F.9 (which §7.5 incorporates), and lgamma_r's sign. No oracle code.

``special`` returns a :class:`~audit.values.Real` where a value is prescribed exactly,
``("ref", mpf)`` where the prescribed value is not a float (atan(inf) = pi/2: the function's
bound applies around it), or None. The functions computed exactly are in
:mod:`audit.exact`.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from audit.values import (
    FINITE,
    INF,
    NAN,
    AuditLane,
    Real,
    int_bits,
    undefined_lane,
)

NAN_R = Real(NAN, False)
ONE = Real(FINITE, False, Fraction(1))


def infinity(neg: bool) -> Real:
    """The infinity of sign ``neg``."""
    return Real(INF, neg)


def signed_zero(neg: bool) -> Real:
    """The zero of sign ``neg``."""
    return Real(FINITE, neg, Fraction(0))


def finite(v: Fraction) -> Real:
    """The finite value ``v`` (a zero ``v`` is +0)."""
    return Real(FINITE, v < 0, v)


def _is_int(r: Real) -> bool:
    return r.kind == FINITE and r.value.denominator == 1


def _odd(r: Real) -> bool:
    return _is_int(r) and r.value.numerator % 2 == 1


def special(fn: str, xs: list, s: str, spirv: bool):
    """The prescribed value of ``fn`` at ``xs`` (module docstring)."""
    reals = [x for x in xs if isinstance(x, Real)]
    x = reals[0] if reals else None
    if fn in _NAN_EXEMPT and (r := _NAN_EXEMPT[fn](xs)) is not None:
        return r
    if any(r.kind == NAN for r in reals):
        return NAN_R
    table = _SPECIALS.get(fn)
    if table is None:
        return None
    return table(x, xs, s, spirv)


def _pow_nan(xs):  # C99 F.9.4.4: pow(+1, y) = 1 and pow(x, +-0) = 1 even for NaN
    x, y = xs
    if x.kind == FINITE and x.value == 1 or (y.kind == FINITE and y.value == 0):
        return ONE
    return None


_NAN_EXEMPT = {
    "pow": _pow_nan,
    "pown": lambda xs: ONE if xs[1] == 0 else None,  # §7.5.1: pown(x, 0) is 1 for any x
    "hypot": lambda xs: infinity(False) if any(r.kind == INF for r in xs) else None,  # F.9.4.3
}


def _sin(x, xs, s, spirv):
    return x if x.is_zero else NAN_R if x.kind == INF else None


def _cos(x, xs, s, spirv):
    return ONE if x.is_zero else NAN_R if x.kind == INF else None


def _exp_like(limit_neg):
    def f(x, xs, s, spirv):
        if x.is_zero:
            return ONE
        if x.kind == INF:
            return infinity(False) if not x.neg else limit_neg
        return None
    return f


def _exp10(x, xs, s, spirv):
    if x.kind == INF:
        return infinity(False) if not x.neg else signed_zero(False)
    if x.is_zero:  # not listed by §7.5.1 for OpenCL C; the SPIR-V environment prescribes 1
        return ONE if spirv else ("ref", mpmath.mpf(1))
    return None


def _log_like(one_value):
    def f(x, xs, s, spirv):
        if x.is_zero:
            return infinity(True)
        if x.neg:
            return NAN_R
        if x.kind == INF:
            return infinity(False)
        if x.value == 1 and one_value:
            return signed_zero(False)
        return None
    return f


def _log1p(x, xs, s, spirv):
    if x.is_zero:
        return x
    if x.kind == INF:
        return NAN_R if x.neg else infinity(False)
    if x.value == -1:
        return infinity(True)
    return NAN_R if x.value < -1 else None


def _expm1(x, xs, s, spirv):
    if x.is_zero:
        return x
    if x.kind == INF:
        return finite(Fraction(-1)) if x.neg else infinity(False)
    return None


def _odd_fn(at_inf):
    """sinh, asinh, tanh, cbrt, erf, atan, asinpi, atanpi: f(+-0) = +-0, f(+-inf) given."""
    def f(x, xs, s, spirv):
        if x.is_zero:
            return x
        if x.kind == INF:
            v = at_inf(x.neg)
            return v
        return None
    return f


def _sinpi(x, xs, s, spirv):
    if x.is_zero:
        return x
    if x.kind == INF:
        return NAN_R
    if _is_int(x):
        return signed_zero(x.neg)
    return None


def _cospi(x, xs, s, spirv):
    if x.kind == INF:
        return NAN_R
    if x.is_zero:
        return ONE
    if (x.value * 2).denominator == 1 and not _is_int(x):
        return signed_zero(False)
    return None


def _tanpi(x, xs, s, spirv):
    if x.is_zero:
        return x
    if x.kind == INF:
        return NAN_R
    if _is_int(x):
        return signed_zero(x.neg if not _odd(x) else not x.neg)
    if (x.value * 2).denominator == 1:
        n = (x.value - Fraction(1, 2)).numerator
        return infinity(n % 2 == 1)
    return None


def _tan(x, xs, s, spirv):
    return x if x.is_zero else NAN_R if x.kind == INF else None


def _asin(x, xs, s, spirv):
    if x.is_zero:
        return x
    return NAN_R if x.kind == INF or abs(x.value) > 1 else None


def _acos(x, xs, s, spirv):
    if x.kind == INF or abs(x.value) > 1:
        return NAN_R
    return signed_zero(False) if x.value == 1 else None


def _acosh(x, xs, s, spirv):
    if x.kind == INF:
        return NaN_or(x.neg, infinity(False))
    if x.value < 1:
        return NAN_R
    return signed_zero(False) if x.value == 1 else None


def NaN_or(neg, value):  # noqa: N802
    return NAN_R if neg else value


def _atanh(x, xs, s, spirv):
    if x.is_zero:
        return x
    if x.kind == INF or abs(x.value) > 1:
        return NAN_R
    return infinity(x.neg) if abs(x.value) == 1 else None


def _cosh(x, xs, s, spirv):
    return ONE if x.is_zero else infinity(False) if x.kind == INF else None


def _sqrt(x, xs, s, spirv):
    if x.is_zero:
        return x
    if x.neg:
        return NAN_R
    return infinity(False) if x.kind == INF else None


def _rsqrt(x, xs, s, spirv):
    if x.is_zero:
        return infinity(x.neg)
    if x.neg:
        return NAN_R
    return signed_zero(False) if x.kind == INF else None


def _recip(x, xs, s, spirv):
    if x.is_zero:
        return infinity(x.neg)
    return signed_zero(x.neg) if x.kind == INF else None


def _divide(x, xs, s, spirv):
    """IEEE 754 division's special cases (C99 F.9 para. 3)."""
    a, b = xs
    neg = a.neg != b.neg
    if (a.kind == INF and b.kind == INF) or (a.is_zero and b.is_zero):
        return NAN_R
    if a.kind == INF or b.is_zero:
        return infinity(neg)
    if b.kind == INF or a.is_zero:
        return signed_zero(neg)
    return None


def _erfc(x, xs, s, spirv):
    if x.kind == INF:
        return finite(Fraction(2)) if x.neg else signed_zero(False)
    return None


def _tgamma(x, xs, s, spirv):
    if x.is_zero:
        return infinity(x.neg)
    if x.kind == INF:
        return NAN_R if x.neg else infinity(False)
    if x.value < 0 and _is_int(x):
        return NAN_R
    return None


def _hypot(x, xs, s, spirv):
    a, b = xs
    if a.is_zero:
        return finite(abs(b.value))
    if b.is_zero:
        return finite(abs(a.value))
    return None


def _atan2(scaled: bool):
    """C99 F.9.1.4 (atan2) and §7.5.1 (atan2pi, the same values over pi, exact)."""
    def f(_, xs, s, spirv):
        y, x = xs
        if y.is_zero:
            v = Fraction(1) if x.neg else Fraction(0)
        elif y.kind == INF:
            v = (Fraction(3, 4) if x.neg else Fraction(1, 4)) if x.kind == INF else Fraction(1, 2)
        elif x.is_zero:
            v = Fraction(1, 2)
        elif x.kind == INF:
            v = Fraction(1) if x.neg else Fraction(0)
        else:
            return None
        if v == 0:
            return signed_zero(y.neg)
        v = -v if y.neg else v
        if scaled:
            return finite(v)
        return ("ref", mpmath.mpf(v.numerator) / v.denominator * mpmath.pi)
    return f


def _pow(x, xs, s, spirv):
    """C99 F.9.4.4 and §7.5.1's pow(+-0, -inf) = +inf."""
    a, b = xs
    if a.is_zero:
        if b.kind == INF:
            return infinity(False) if b.neg else signed_zero(False)
        if b.value < 0:
            return infinity(a.neg and _odd(b))
        return signed_zero(a.neg and _odd(b))
    if a.kind == FINITE and a.value == -1 and b.kind == INF:
        return ONE
    if b.kind == INF:
        bigger = abs(a.value) > 1 if a.kind == FINITE else True
        return infinity(False) if bigger != b.neg else signed_zero(False)
    if a.kind == INF:
        if a.neg:
            if b.value < 0:
                return signed_zero(_odd(b))
            return infinity(_odd(b))
        return signed_zero(False) if b.value < 0 else infinity(False)
    if a.neg and not _is_int(b):
        return NAN_R
    return None


def _pown(x, xs, s, spirv):
    a, n = xs
    if a.is_zero:
        odd = n % 2 == 1
        return infinity(a.neg and odd) if n < 0 else signed_zero(a.neg and odd)
    if a.kind == INF:
        odd = n % 2 == 1
        return signed_zero(a.neg and odd) if n < 0 else infinity(a.neg and odd)
    return None


def _rootn(x, xs, s, spirv):
    a, n = xs
    if n == 0 or (a.neg and not a.is_zero and n % 2 == 0):
        return NAN_R
    if a.is_zero:
        odd = n % 2 == 1
        return infinity(a.neg and odd) if n < 0 else signed_zero(a.neg and odd)
    if a.kind == INF:
        odd = n % 2 == 1
        if a.neg and not odd:
            return NAN_R
        return signed_zero(a.neg) if n < 0 else infinity(a.neg)
    return None


def _powr(x, xs, s, spirv):
    a, b = xs
    if a.neg and not a.is_zero:
        return NAN_R
    if a.is_zero:
        if b.is_zero:
            return NAN_R
        if b.neg:
            return infinity(False)
        return signed_zero(False) if b.kind == FINITE else (signed_zero(False) if not b.neg else infinity(False))
    if a.kind == INF:
        if b.is_zero:
            return NAN_R
        return signed_zero(False) if b.neg else infinity(False)
    if a.value == 1:
        return NAN_R if b.kind == INF else ONE
    if b.is_zero:
        return ONE
    if b.kind == INF:
        return infinity(False) if (a.value > 1) != b.neg else signed_zero(False)
    return None


def _lgamma(x, xs, s, spirv):
    """C99 F.9.5.3: lgamma(1) = lgamma(2) = +0; +inf at zero, negative integers and +-inf."""
    if x.kind == INF or (x.value <= 0 and _is_int(x)):
        return infinity(False)
    return signed_zero(False) if x.value in (1, 2) else None


def lgamma_sign(x: Real) -> AuditLane:
    """What lgamma_r stores in ``signp``: "the sign of the gamma function" (§6.15.2), read as +1 or -1
    (as C's signgam), and 0 "if x is zero or a negative integer" (§7.5.1); at a NaN or -inf, where the
    gamma function has no sign, nothing is specified."""
    if x.kind == NAN or (x.kind == INF and x.neg):
        return undefined_lane("int", "lgamma_r's sign at a NaN or -inf: the gamma function has no sign there")
    if x.kind == INF or x.value > 0:
        return AuditLane("int", (1,))
    if _is_int(x):
        return AuditLane("int", (0,))
    floor = x.value.numerator // x.value.denominator
    return AuditLane("int", (int_bits(-1 if floor % 2 else 1, "int"),))


def _pi_ref(v):
    return lambda neg: ("ref", (-1 if neg else 1) * v())


_SPECIALS = {
    "sin": _sin, "cos": _cos, "tan": _tan, "exp": _exp_like(signed_zero(False)), "exp2": _exp_like(signed_zero(False)),
    "exp10": _exp10, "expm1": _expm1, "log": _log_like(True), "log2": _log_like(True), "log10": _log_like(True),
    "log1p": _log1p, "sinh": _odd_fn(infinity), "asinh": _odd_fn(infinity), "cbrt": _odd_fn(infinity),
    "tanh": _odd_fn(lambda neg: finite(Fraction(-1 if neg else 1))), "erf": _odd_fn(lambda neg: finite(Fraction(-1 if neg else 1))),
    "atan": _odd_fn(_pi_ref(lambda: mpmath.pi / 2)), "atanpi": _odd_fn(lambda neg: finite(Fraction(-1 if neg else 1, 2))),
    "asinpi": _asin, "acospi": _acos, "asin": _asin, "acos": _acos, "acosh": _acosh, "atanh": _atanh,
    "cosh": _cosh, "sinpi": _sinpi, "cospi": _cospi, "tanpi": _tanpi, "sqrt": _sqrt, "rsqrt": _rsqrt,
    "recip": _recip, "fdiv": _divide, "divide": _divide, "erfc": _erfc, "tgamma": _tgamma, "hypot": _hypot,
    "atan2": _atan2(False), "atan2pi": _atan2(True), "pow": _pow, "pown": _pown, "rootn": _rootn,
    "powr": _powr, "degrees": lambda x, xs, s, sp: x if x.kind != FINITE or x.is_zero else None,
    "radians": lambda x, xs, s, sp: x if x.kind != FINITE or x.is_zero else None, "lgamma": _lgamma,
}
"""F.9 cases for acos/asin at +-1 and the like are the general formula's exact value (pi/2 is not
a float: such lanes keep the bound); the ``acospi(1) = +0`` of §7.5.1 is listed."""
