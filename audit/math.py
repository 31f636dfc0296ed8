"""The audit's floating-point built-ins (triage.audit), from OpenCL C 3.0.19 §6.15.2, §6.15.4,
§7.4 (Tables 65, 67, 68), §7.5 and C99 Annex F.9, with no oracle code.

A lane's result is the value prescribed for its operands where §7.5.1 or C99 F.9 prescribe one
(exact, sign included: "the usual allowances ... shall not apply"; :mod:`audit.specials`),
else the function's bound around its infinitely precise value: computed exactly with Fractions
for the functions that need no rounding or are correctly rounded, and with mpmath at four times
the format's precision plus 64 bits for the others. Where the device may flush denormals
(§7.2, §7.5.3; -cl-denorms-are-zero), subnormal operands are also read as +-0 and a result that
is subnormal before rounding may be +-0. Build options: -cl-finite-math-only (and
-cl-fast-relaxed-math) leave lanes with non-finite operands or results undefined;
-cl-unsafe-math-optimizations applies Table 67 to float on OpenCL C >= 2.0 builds (the
functions it gives a checkable bound) and leaves other builds undefined.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import mpmath

from audit.base import Lanes, Registry, Unsupported
from audit.convert import merge
from audit.exact import EXACT_FUNCTIONS, exact_value
from audit.specials import special
from audit.values import (
    FINITE,
    FORMATS,
    INF,
    NAN,
    AuditLane,
    Real,
    decode,
    encode_inf,
    encode_zero,
    int_value,
    is_float,
    max_finite,
    quiet_nan,
    round_real,
    subnormal,
    tiny,
    ulp,
    undefined_lane,
)
from lang.ir import Op

HANDLERS = Registry()

# Table 65 (float, full profile) and Table 68 (double): the bound in ulp (0: correctly rounded)
ULPS_FLOAT = {
    "fdiv": 2.5, "sqrt": 3, "rsqrt": 2, "cbrt": 2, "exp": 3, "exp2": 3, "exp10": 3, "expm1": 3, "log": 3, "log2": 3,
    "log10": 3, "log1p": 2, "sin": 4, "cos": 4, "sincos": 4, "sinpi": 4, "cospi": 4, "sinh": 4, "cosh": 4,
    "acos": 4, "asin": 4, "acosh": 4, "asinh": 4, "tan": 5, "tanh": 5, "tanpi": 6, "acospi": 5, "asinpi": 5,
    "atan": 5, "atanh": 5, "atanpi": 5, "atan2": 6, "atan2pi": 6, "hypot": 4, "erf": 16, "erfc": 16, "tgamma": 16,
    "pow": 16, "pown": 16, "powr": 16, "rootn": 16, "degrees": 2, "radians": 2,
    **{f"half_{n}": 8192 for n in ("cos", "divide", "exp", "exp2", "exp10", "log", "log2", "log10", "powr", "recip",
                                   "rsqrt", "sin", "sqrt", "tan")},
}
ULPS_DOUBLE = {**{k: v for k, v in ULPS_FLOAT.items() if not k.startswith("half_")}, "fdiv": 0, "sqrt": 0}
# Table 67 (float, -cl-unsafe-math-optimizations, OpenCL C >= 2.0): what it bounds checkably
UNSAFE = {"acos": 4096, "asin": 4096, "atan": 4096, "fdiv": 2.5}
UNSAFE_ABS = {"sin": math.pi, "cos": math.pi, "sincos": math.pi, "sinpi": 1, "cospi": 1}
UNSAFE_DERIVED = {"acosh", "acospi", "asinh", "asinpi", "atanh", "atanpi", "atan2", "atan2pi", "cbrt", "cosh",
                  "exp10", "expm1", "log1p", "pow", "pown", "powr", "rootn", "sinh", "tan", "tanh", "tanpi"}

_MP = {
    "sqrt": mpmath.sqrt, "rsqrt": lambda x: 1 / mpmath.sqrt(x), "cbrt": lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)), "exp": mpmath.exp,
    "exp2": lambda x: mpmath.power(2, x), "exp10": lambda x: mpmath.power(10, x), "expm1": mpmath.expm1,
    "log": mpmath.log, "log2": lambda x: mpmath.log(x, 2), "log10": mpmath.log10, "log1p": mpmath.log1p,
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "sinpi": mpmath.sinpi, "cospi": mpmath.cospi,
    "tanpi": lambda x: mpmath.sinpi(x) / mpmath.cospi(x), "sinh": mpmath.sinh, "cosh": mpmath.cosh,
    "tanh": mpmath.tanh, "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan, "asinh": mpmath.asinh,
    "acosh": mpmath.acosh, "atanh": mpmath.atanh, "asinpi": lambda x: mpmath.asin(x) / mpmath.pi,
    "acospi": lambda x: mpmath.acos(x) / mpmath.pi, "atanpi": lambda x: mpmath.atan(x) / mpmath.pi,
    "atan2": mpmath.atan2, "atan2pi": lambda y, x: mpmath.atan2(y, x) / mpmath.pi, "hypot": mpmath.hypot,
    "erf": mpmath.erf, "erfc": mpmath.erfc, "tgamma": mpmath.gamma, "pow": mpmath.power, "powr": mpmath.power,
    "pown": lambda x, n: mpmath.power(x, n), "rootn": lambda x, n: mpmath.root(x, n) if x >= 0 else
    -mpmath.root(-x, n), "degrees": lambda x: x * 180 / mpmath.pi, "radians": lambda x: x * mpmath.pi / 180,
    "fdiv": lambda x, y: x / y, "half_divide": lambda x, y: x / y, "half_recip": lambda x: 1 / x,
    "half_powr": mpmath.power,
}
for _n in ("cos", "exp", "exp2", "exp10", "log", "log2", "log10", "rsqrt", "sin", "sqrt", "tan"):
    _MP[f"half_{_n}"] = _MP[_n]


class Setting:
    """How one statement's lanes are judged: the type, the flush set, the build flags."""

    def __init__(self, ev, op: Op):
        self.s = op.type.scalar if op.op not in ("ilogb",) else op.args[0].type.scalar
        if self.s not in ("float", "double"):
            raise Unsupported(f"{op.op} on {self.s} (the audit models float and double)")
        fp = getattr(ev, "fingerprint", {}) or {}
        if "EMBEDDED" in str(fp.get("profile", "")):
            raise Unsupported("embedded-profile bounds")
        words = set(ev.program.options.split())
        self.finite = bool(words & {"-cl-fast-relaxed-math", "-cl-finite-math-only"})
        self.unsafe = bool(words & {"-cl-fast-relaxed-math", "-cl-unsafe-math-optimizations"})
        self.cl2 = bool(ev.program.requires & {"cl2.0", "cl3.0"})
        self.cr = "-cl-fp32-correctly-rounded-divide-sqrt" in words
        daz = "-cl-denorms-are-zero" in words
        self.flush = ev.env.flushes(self.s) or op.op.startswith("half_") or (daz and self.s in ("float", "double"))
        self.spirv = ev.spirv
        self.fn = op.op


def _mpf(value: Fraction) -> mpmath.mpf:
    return mpmath.mpf(value.numerator) / value.denominator


def _fraction(x, s: str) -> Fraction:
    """An mpf (a dyadic number) as an exact Fraction; a magnitude beyond 2^(emax+2), or below a
    quarter of the least subnormal, is clamped there (every bound then decides alike: overflow,
    or a result within a quarter ulp of zero of the same sign)."""
    sign, man, exp, bc = mpmath.mpf(x)._mpf_
    p, emin, emax = FORMATS[s]
    top = exp + bc - 1
    if man and top > emax + 2:
        man, exp = 1, emax + 2
    elif man and top < emin - p - 2:
        man, exp = 1, emin - p - 2
    v = Fraction(man) * Fraction(2) ** exp
    return -v if sign else v


def _prec(s: str) -> int:
    return 4 * FORMATS[s][0] + 64


def bounded(ref: Fraction, s: str, k: float) -> AuditLane:
    """Within ``k`` ulp (§7.4) of the exact ``ref``; infinity where the value after MAX (as if the
    exponent range were unbounded) is within the bound ("result overflow ... is permitted")."""
    nearest = round_real(ref, s)
    if k == 0:
        return AuditLane(s, (nearest,))
    w = Fraction(k).limit_denominator(16) * ulp(ref, s)
    lo, hi = ref - w, ref + w
    values = [nearest]
    after_max = max_finite(s) + ulp(max_finite(s), s)
    if hi >= after_max:
        values.append(encode_inf(s, False))
    if lo <= -after_max:
        values.append(encode_inf(s, True))
    return AuditLane(s, tuple(values), ranges=((lo, hi),))


def _absolute(ref: Fraction, s: str, err: Fraction) -> AuditLane:
    return AuditLane(s, (round_real(ref, s),), ranges=((ref - err, ref + err),))


def _real_lane(r: Real, s: str) -> AuditLane:
    """An exactly prescribed value (a NaN: any NaN)."""
    if r.kind == NAN:
        return AuditLane(s, (quiet_nan(s),), nan=True)
    if r.kind == INF:
        return AuditLane(s, (encode_inf(s, r.neg),))
    return AuditLane(s, (round_real(r.value, s, zero_neg=r.neg),))


def _bound(st: Setting, xs: list) -> tuple[str, float] | AuditLane:
    """(kind, value) of the bound for this lane: ('ulp', k) or ('abs', err); or an undefined lane."""
    fn, s = st.fn, st.s
    if st.unsafe and (s != "float" or not st.cl2):
        return undefined_lane(s, "-cl-unsafe-math-optimizations defines accuracy for float on OpenCL C >= 2.0 "
                                 "builds only (§7.4)")
    if st.unsafe:
        x = xs[0].value if xs and isinstance(xs[0], Real) and xs[0].kind == FINITE else None
        if fn in UNSAFE_ABS:
            if x is None or abs(x) > UNSAFE_ABS[fn]:
                return undefined_lane(s, "Table 67: outside the domain its absolute bound holds in")
            return ("abs", 2.0 ** -11)
        if fn in ("exp", "exp2") and x is not None:
            return ("ulp", 3 + math.floor(abs(2 * x)))
        if fn in ("log", "log2", "log10") and x is not None and Fraction(1, 2) <= x <= 2:
            return ("abs", 2.0 ** -21)
        if fn == "fdiv":
            if not all(r.kind == FINITE and Fraction(2) ** -62 <= abs(r.value) <= Fraction(2) ** 62 for r in xs):
                return undefined_lane(s, "Table 67: x / y outside [2^-62, 2^62]")
        if fn in UNSAFE:
            return ("ulp", UNSAFE[fn])
        if fn in UNSAFE_DERIVED:
            return undefined_lane(s, f"Table 67: {fn} may be a derived implementation")
    table = ULPS_FLOAT if s == "float" else ULPS_DOUBLE
    if fn not in table:
        raise Unsupported(f"no bound for {fn} on {s}")
    k = table[fn]
    if st.cr and s == "float" and fn in ("fdiv", "sqrt"):
        k = 0
    return ("ulp", k)


def one_lane(st: Setting, xs: list, second: bool = False) -> AuditLane:
    """The lane (or, with ``second``, the out-parameter's lane) for operand values ``xs`` (Real
    for floats, int for integer operands), with the result-side allowances."""
    floats = [x for x in xs if isinstance(x, Real)]
    if st.finite and any(x.kind != FINITE for x in floats):
        return undefined_lane(st.s, "-cl-finite-math-only: the compiler may assume no NaN or infinity")
    lane, prescribed, exact = _value(st, xs, second)
    if lane.undefined or not is_float(lane.scalar):
        return lane
    s = lane.scalar
    if st.finite and any(decode(v, s).kind != FINITE for v in lane.values[:1]) or (st.finite and lane.nan):
        return undefined_lane(s, "-cl-finite-math-only: a non-finite result")
    zeros = AuditLane(s, (encode_zero(s, False), encode_zero(s, True)))
    ref = decode(lane.values[0], s)
    if st.unsafe and ref.is_zero:  # -cl-no-signed-zeros, implied (API §5.8.4.3)
        lane = merge(s, [lane, zeros])
    if exact is None and ref.kind == FINITE:
        exact = ref.value
    if st.flush and not prescribed and exact is not None and tiny(exact, s):  # §7.5.3 cases 2 and 4
        lane = merge(s, [lane, zeros])
    if st.flush and st.fn == "nextafter":
        lane = merge(s, [lane, *_nextafter_ftz(xs, s)])
    return lane


def _nextafter_ftz(xs: list, s: str) -> list[AuditLane]:
    """§7.5.3's alternative nextafter edge cases where subnormals are flushed."""
    x, y = xs
    if NAN in (x.kind, y.kind) or x.kind != FINITE or y.kind == NAN:
        return []
    least = Fraction(2) ** FORMATS[s][1]
    yv = y.value if y.kind == FINITE else (Fraction(-1) if y.neg else Fraction(1)) * 2 * max_finite(s)
    out = []
    if x.value == least and yv < least:
        out.append(AuditLane(s, (encode_zero(s, False),)))
    if x.value == -least and yv > -least:
        out.append(AuditLane(s, (encode_zero(s, True),)))
    if x.is_zero and x.neg and yv > 0:
        out.append(AuditLane(s, (round_real(least, s),)))
    if x.is_zero and not x.neg and yv < 0:
        out.append(AuditLane(s, (round_real(-least, s),)))
    return out


def _value(st: Setting, xs: list, second: bool) -> tuple[AuditLane, bool, Fraction | None]:
    """The conforming result (and whether it is a prescribed value, which no flush may change)."""
    fn, s = st.fn, st.s
    floats = [x for x in xs if isinstance(x, Real)]
    if fn in EXACT_FUNCTIONS:
        if fn == "mad" and s == "double":
            return undefined_lane(s, "mad on double: any value is allowed (Table 68)"), False, None
        lane = exact_value(fn, xs, s, second)
        return lane, any(x.kind != FINITE or x.is_zero for x in floats), None
    base = fn[5:] if fn.startswith("half_") and fn not in ("half_divide", "half_recip", "half_powr") else fn
    if fn == "sincos":
        base = "cos" if second else "sin"
    if fn.startswith("half_") and base in ("sin", "cos", "tan") and floats[0].kind == FINITE and \
            abs(floats[0].value) > 2 ** 16:
        return undefined_lane(s, "half_sin/cos/tan need |x| <= 2^16 (§6.15.2)"), False, None
    pres = special("recip" if fn == "half_recip" else base.replace("half_", ""), xs, s, st.spirv)
    if isinstance(pres, Real):
        return _real_lane(pres, s), True, None
    bound = _bound(st, xs)
    if isinstance(bound, AuditLane):
        return bound, False, None
    with mpmath.workprec(_prec(s)):
        if pres is not None:  # ("ref", value): an inexact prescribed value, within the bound
            ref = pres[1]
        else:
            args = [_mpf(x.value) if isinstance(x, Real) else x for x in xs]
            ref = _MP[base if base in _MP else fn](*args)
        if isinstance(ref, mpmath.mpc) or not mpmath.isfinite(ref):
            return undefined_lane(s, "the reference is not a finite real at these operands"), False, None
        exact = _fraction(ref, s)
    lane = bounded(exact, s, bound[1]) if bound[0] == "ulp" else _absolute(exact, s, Fraction(bound[1]))
    return lane, False, exact


def _operands(st: Setting, lanes: list) -> list[list]:
    """Per operand, the values a lane may be read as (Real for floats, int for integers)."""
    out = []
    for lane in lanes:
        if lane.undefined or lane.ranges or len(set(lane.values)) > 1 and not is_float(lane.scalar):
            raise _Undefined(lane.undefined or "an operand is not certain")
        if not is_float(lane.scalar):
            out.append([int_value(lane.values[0], lane.scalar)])
            continue
        vals = list(dict.fromkeys(lane.values))
        if lane.nan and not any(decode(v, lane.scalar).kind == NAN for v in vals):
            vals.append(quiet_nan(lane.scalar))
        reals = [decode(v, lane.scalar) for v in vals]
        if lane.nan:  # any NaN: of either sign (§7.5.1); a loaded NaN keeps its own bits
            reals += [Real(NAN, True)]
        if st.flush:
            reals += [Real(FINITE, n) for v in vals if subnormal(v, lane.scalar) for n in (False, True)]
        out.append(reals)
    return out


class _Undefined(Exception):
    pass


def _lanes(ev, op: Op, args: list[Lanes], second: bool) -> Lanes:
    st = Setting(ev, op)
    width = op.type.width  # a scalar operand (ldexp(float4, int), step(float, float4)) serves every lane
    result = (("int" if op.op in ("frexp", "remquo") else st.s) if second else
              ("int" if op.op == "ilogb" else st.s))
    out = []
    for i in range(width):
        lanes = [a[i] if len(a) > 1 else a[0] for a in args]
        try:
            options = _operands(st, lanes)
        except _Undefined as e:
            out.append(undefined_lane(result, str(e)))
            continue
        combos = list(product(*options))
        if len(combos) > 64:
            raise Unsupported("too many alternative operand values to enumerate")
        out.append(merge(result, [one_lane(st, list(c), second) for c in combos]))
    return out


def out_parameter(ev, op: Op, args: list[Lanes]) -> Lanes:
    """The value a math built-in stores through its pointer argument."""
    if op.op not in ("sincos", "fract", "frexp", "modf", "remquo"):
        raise Unsupported(f"the out-parameter of {op.op}")
    return _lanes(ev, op, args, True)


_SUPPORTED = set(_MP) | EXACT_FUNCTIONS | {"sincos"}


@HANDLERS.handles(*sorted(_SUPPORTED))
def _math(ev, op: Op, args: list[Lanes]) -> Lanes:
    return _lanes(ev, op, args, False)
