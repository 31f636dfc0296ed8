"""The audit's floating-point built-ins (triage.audit), from OpenCL C 3.0.19 §6.15.2, §6.15.4,
§7.4 (Tables 65, 67, 68), §7.5 and C99 Annex F.9, with no oracle code.

A lane's result is the value prescribed for its operands where §7.5.1 or C99 F.9 prescribe one
(exact, sign included: "the usual allowances ... shall not apply"; :mod:`audit.specials`),
else the function's bound around its infinitely precise value: computed exactly with Fractions
for the functions that need no rounding or are correctly rounded, and with mpmath at four times
the format's precision plus 64 bits for the others; lgamma and lgamma_r have no bound (Table 65:
"Undefined"), so only their prescribed values and lgamma_r's sign judge. The common functions
(mix, smoothstep, min, max, clamp) are :mod:`audit.common`'s. Where the device may flush
denormals (§7.2, §7.5.3; -cl-denorms-are-zero), subnormal operands are also read as +-0 and a
result that is subnormal before rounding may be +-0 (:mod:`audit.floats`). The build options
decide which rules judge (:mod:`audit.build`): none under -cl-finite-math-only, nor under
-cl-unsafe-math-optimizations on double or on OpenCL C 1.x builds; under unsafe math on float
(OpenCL C >= 2.0) Table 67's bounds (the functions it gives a checkable bound) and Table 65's
for the others, on finite operands and results only, with no prescribed value and either zero.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import mpmath

from audit.base import Lanes, Registry, Unsupported
from audit.common import COMMON
from audit.convert import merge
from audit.exact import EXACT_FUNCTIONS, exact_value
from audit.floats import (
    Setting,
    Uncertain,
    absolute,
    bounded,
    fraction,
    mpf,
    precision,
    readings,
    signless,
    zeros,
)
from audit.specials import lgamma_sign, special
from audit.values import (
    FINITE,
    FORMATS,
    NAN,
    AuditLane,
    Real,
    decode,
    encode_zero,
    is_float,
    max_finite,
    real_lane,
    round_real,
    tiny,
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


def _bound(st: Setting, xs: list) -> tuple[str, float] | AuditLane:
    """(kind, value) of the bound for this lane: ('ulp', k) or ('abs', err); or an undefined lane."""
    fn, s = st.fn, st.s
    if fn in ("lgamma", "lgamma_r"):
        return undefined_lane(s, f"the accuracy of {fn} is undefined (§7.4 Tables 65, 68): only its prescribed "
                                 "values are specified")
    if st.build.unsafe:  # float on OpenCL C >= 2.0 or SPIR-V here (Setting.void): Table 67
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
    if st.build.cr and s == "float" and fn in ("fdiv", "sqrt"):
        k = 0
    return ("ulp", k)


def result_scalar(fn: str, s: str, second: bool) -> str:
    """The scalar type of a call's result (or, with ``second``, of its out-parameter)."""
    ints = ("frexp", "remquo", "lgamma_r") if second else ("ilogb",)
    return "int" if fn in ints else s


def one_lane(st: Setting, xs: list, second: bool = False) -> AuditLane:
    """The lane (or, with ``second``, the out-parameter's lane) for operand values ``xs`` (Real
    for floats, int for integer operands), with the result-side allowances and the build's rules
    (audit.build)."""
    result = result_scalar(st.fn, st.s, second)
    why = st.void()
    if why:
        return undefined_lane(result, why)
    if not st.build.edges and _edge_case(st, xs, second):
        return undefined_lane(result, st.build.voids_edges)
    lane, prescribed, exact = _value(st, xs, second)
    if lane.undefined or not is_float(lane.scalar):
        return lane
    s = lane.scalar
    ref = decode(lane.values[0], s)
    if exact is None and ref.kind == FINITE:
        exact = ref.value
    if st.flush and not prescribed and exact is not None and tiny(exact, s):  # §7.5.3 cases 2 and 4
        lane = merge(s, [lane, zeros(s)])
    if st.flush and st.fn == "nextafter":
        lane = merge(s, [lane, *_nextafter_ftz(xs, s)])
    return signless(lane, st)


def _edge_case(st: Setting, xs: list, second: bool) -> bool:
    """Whether a lane is edge-case behaviour, which unsafe math does not require (API §5.8.6.3): a
    NaN or infinite operand or result, a zero operand of ilogb or frexp (whose integer result only
    C99 §7.12.6 and F.9 prescribe there), a pole of lgamma_r (its sign, §7.5.1)."""
    floats = [x for x in xs if isinstance(x, Real)]
    if any(x.kind != FINITE for x in floats):
        return True
    fn = st.fn
    if (fn == "ilogb" or (fn == "frexp" and second)) and floats[0].is_zero:
        return True
    if fn == "lgamma_r" and second and floats[0].value <= 0 and floats[0].value.denominator == 1:
        return True
    lane = _value(st, xs, False)[0] if second or fn == "ilogb" else None
    if lane is None or lane.undefined or not is_float(lane.scalar):
        return False
    return lane.nan or decode(lane.values[0], lane.scalar).kind != FINITE


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
    """The conforming result (and whether it is a prescribed value, which no flush may change);
    a prescribed value only where edge-case rules judge (audit.build)."""
    fn, s = st.fn, st.s
    floats = [x for x in xs if isinstance(x, Real)]
    if fn in EXACT_FUNCTIONS:
        if fn == "mad" and s == "double":
            return undefined_lane(s, "mad on double: any value is allowed (Table 68)"), False, None
        lane = exact_value(fn, xs, s, second)
        return lane, any(x.kind != FINITE or x.is_zero for x in floats), None
    if fn in COMMON:
        return COMMON[fn](st, xs), False, None
    if fn == "lgamma_r" and second:
        return lgamma_sign(floats[0]), True, None
    base = fn[5:] if fn.startswith("half_") and fn not in ("half_divide", "half_recip", "half_powr") else fn
    if fn == "sincos":
        base = "cos" if second else "sin"
    if fn.startswith("half_") and base in ("sin", "cos", "tan") and floats[0].kind == FINITE and \
            abs(floats[0].value) > 2 ** 16:
        return undefined_lane(s, "half_sin/cos/tan need |x| <= 2^16 (§6.15.2)"), False, None
    name = {"half_recip": "recip", "lgamma_r": "lgamma"}.get(fn, base.replace("half_", ""))
    pres = special(name, xs, s, st.spirv) if st.build.edges else None
    if isinstance(pres, Real):
        return real_lane(pres, s), True, None
    bound = _bound(st, xs)
    if isinstance(bound, AuditLane):
        return bound, False, None
    with mpmath.workprec(precision(s)):
        if pres is not None:  # ("ref", value): an inexact prescribed value, within the bound
            ref = pres[1]
        else:
            args = [mpf(x.value) if isinstance(x, Real) else x for x in xs]
            try:
                ref = _MP[base if base in _MP else fn](*args)
            except ZeroDivisionError:  # a pole in exact arithmetic (1/0, tanpi(1/2))
                ref = mpmath.inf
        if isinstance(ref, mpmath.mpc) or not mpmath.isfinite(ref):
            return undefined_lane(s, "the reference is not a finite real at these operands"), False, None
        exact = fraction(ref, s)
    lane = bounded(exact, s, bound[1]) if bound[0] == "ulp" else absolute(exact, s, Fraction(bound[1]))
    return lane, False, exact


def _lanes(ev, op: Op, args: list[Lanes], second: bool) -> Lanes:
    s = op.args[0].type.scalar if op.op == "ilogb" else op.type.scalar
    st = Setting(ev, op.op, s)
    width = op.type.width  # a scalar operand (ldexp(float4, int), step(float, float4)) serves every lane
    result = result_scalar(op.op, s, second)
    out = []
    for i in range(width):
        lanes = [a[i] if len(a) > 1 else a[0] for a in args]
        try:
            options = [readings(st, lane) for lane in lanes]
        except Uncertain as e:
            out.append(undefined_lane(result, str(e)))
            continue
        combos = list(product(*options))
        if len(combos) > 64:
            raise Unsupported("too many alternative operand values to enumerate")
        out.append(merge(result, [one_lane(st, list(c), second) for c in combos]))
    return out


def out_parameter(ev, op: Op, args: list[Lanes]) -> Lanes:
    """The value a math built-in stores through its pointer argument."""
    if op.op not in ("sincos", "fract", "frexp", "modf", "remquo", "lgamma_r"):
        raise Unsupported(f"the out-parameter of {op.op}")
    return _lanes(ev, op, args, True)


_SUPPORTED = set(_MP) | EXACT_FUNCTIONS | set(COMMON) | {"sincos", "lgamma", "lgamma_r"}


@HANDLERS.handles(*sorted(_SUPPORTED))
def _math(ev, op: Op, args: list[Lanes]) -> Lanes:
    return _lanes(ev, op, args, False)
