"""The values the specification prescribes for the math built-ins at their edge cases: OpenCL C
3.0.19 §7.5.1 and C99 Annex F.9, which §7.5 incorporates ("The edge case behavior of the math
functions shall conform to sections F.9 and G.6 of the C99 Specification"; G.6 is complex
arithmetic, which OpenCL C does not have), and the SPIR-V environment's list (OpenCL SPIR-V
environment §6.7.1 "Additional Requirements Beyond ISO/IEC 9899:TC2") on SPIR-V paths. NaN results
are any NaN (payload and sign unspecified, the environment's §6.7.1).

:func:`prescribed` gives the value for one operand set and the kind of rule behind it;
:data:`SOURCES` says where each function's cases are written. The predicates on float operands
are shared with the exact functions and the engine.

Where the published text of OpenCL C 3.0.19 §7.5.1 differs from its source (KhronosGroup/OpenCL-Docs,
tag v3.0.19, OpenCL_C.txt "Additional Requirements Beyond C99 TC2"), the source is followed: it
reads ``pown``/``rootn``(±0, n) "is +0 for even n > 0", ``powr``(±0, y) "is +0 for y > 0",
``powr``(+1, ±∞) and ``rint``(-0.5 <= x < 0) where the published text shows ±0, ±0, ±1 and
x <= 0; the OpenCL SPIR-V environment §6.7.1 reads the same, so both paths have one value.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Callable

import mpmath

from lang.maths import FUNCTIONS
from oracles import rules

NAN = math.nan
INF = math.inf


@dataclass(frozen=True)
class Undefined:
    """A result the specification leaves undefined at these operands (the lane is not judged, under
    ``rule``, whose ``leaves`` is "undefined": ``oracles.undefined``), unlike ``"skip"``, a lane
    left unjudged for another reason (nothing prescribed and no finite reference)."""

    rule: str


def _undefined(fn: str, sentence: str) -> Undefined:
    """The rule ``math.<fn>.undefined``, registered with ``sentence``, the words of Table 16 that leave
    ``fn``'s result undefined."""
    rid = f"math.{fn}.undefined"
    rules.register(rid, f"{fn}: the result is undefined at these operands (not judged)",
                   f"OpenCL C 3.0.19 §6.15.4 Table 16 ({fn}: {sentence}; neither shall nor should)",
                   leaves="undefined")
    return Undefined(rid)


CLAMP_UNDEFINED = _undefined("clamp", "'Results are undefined if minval > maxval'")
MIN_UNDEFINED = _undefined("min", "'If x or y are infinite or NaN, the return values are undefined'")
MAX_UNDEFINED = _undefined("max", "'If x or y are infinite or NaN, the return values are undefined'")
MIX_UNDEFINED = _undefined("mix", "'If a is not in the range [0.0, 1.0], the return values are undefined' "
                                  "(a NaN a is not in it)")
SMOOTHSTEP_UNDEFINED = _undefined("smoothstep", "'Results are undefined if edge0 >= edge1 or if x, edge0 or "
                                                "edge1 is a NaN'")


def is_negative(x: float) -> bool:
    """The sign bit of ``x`` is set (-0.0 and a negative NaN included)."""
    return math.copysign(1.0, x) < 0


def is_signaling(x: float) -> bool:
    """``x`` is a signaling NaN (its quiet bit, the top fraction bit of the double, is clear: the
    oracle keeps an operand's signaling NaN as a double one, ``oracles.math.lanewise``)."""
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    return math.isnan(x) and not bits & (1 << 51)


def signaling(negative: bool) -> float:
    """A signaling NaN double of the given sign."""
    return struct.unpack("<d", struct.pack("<Q", (negative << 63) | (0x7FF << 52) | 1))[0]


def is_int(x: float) -> bool:
    """``x`` is a finite integral value."""
    return math.isfinite(x) and x == math.floor(x)


def _half_int(x: float) -> bool:
    """x is n + 0.5 for an integer n (2x is exact for every float here and odd)."""
    return is_int(2 * x) and not is_int(x)


def _odd(x: float) -> bool:
    return is_int(x) and math.fmod(x, 2.0) != 0


def _zero_pole(x: float, n_neg: bool, n_odd: bool) -> float:
    """pown/rootn/pow at ±0: ±inf for odd negative powers, +inf for even negative, ±0 for odd
    positive and +0 for even positive (§7.5.1 as its source reads; as published it shows '±0 for
    even n > 0')."""
    if n_neg:
        return math.copysign(math.inf, x) if n_odd else math.inf
    return x if n_odd else 0.0


def _pow_special(x: float, y: float):
    """C99 F.9.4.4 pow."""
    if y == 0:
        return 1.0
    if x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == 0:
        return _zero_pole(x, y < 0, _odd(y)) if math.isfinite(y) else (math.inf if y < 0 else 0.0)
    if math.isinf(y):
        if x == -1:
            return 1.0
        return (math.inf if y < 0 else 0.0) if abs(x) < 1 else (0.0 if y < 0 else math.inf)
    if math.isinf(x):
        if x > 0:
            return 0.0 if y < 0 else math.inf
        if y < 0:
            return -0.0 if _odd(y) else 0.0
        return -math.inf if _odd(y) else math.inf
    if x < 0 and not is_int(y):
        return NAN
    return None


def _powr_special(x: float, y: float):
    """§7.5.1 powr (the listed cases; its other edges are not prescribed). powr(±0, y > 0) is +0 on
    both paths: "powr(±0, y) is +0 for y > 0" in OpenCL C 3.0.19's source and in the SPIR-V
    environment's §6.7.1 (the published §7.5.1 shows "±0", an error like its pown line)."""
    if math.isnan(x) or math.isnan(y) or x < 0 or is_negative(x) and x != 0:
        return NAN
    if x == 0:
        if y == 0:
            return NAN
        return math.inf if y < 0 else 0.0
    if math.isinf(x):
        return NAN if y == 0 else None
    if x == 1:
        return NAN if math.isinf(y) else 1.0
    if y == 0:
        return 1.0
    return None if math.isfinite(y) else "skip"


def _pown_special(x: float, n: int):
    if n == 0:
        return 1.0
    if math.isnan(x):
        return NAN
    if x == 0:
        return _zero_pole(x, n < 0, n % 2 == 1)
    if math.isinf(x):
        odd = n % 2 == 1
        if n > 0:
            return x if odd else math.inf
        return math.copysign(0.0, x) if odd else 0.0
    return None


def _rootn_special(x: float, n: int):
    if n == 0 or math.isnan(x):
        return NAN
    odd = n % 2 == 1
    if x < 0 and not odd:
        return NAN
    if x == 0:
        return _zero_pole(x, n < 0, odd)
    if math.isinf(x):
        return x if n > 0 else math.copysign(0.0, x)
    return None


def _tanpi_special(x: float):
    if math.isnan(x) or math.isinf(x):
        return NAN
    if x == 0:
        return x
    if is_int(x):
        return math.copysign(0.0, x) if not _odd(x) else math.copysign(0.0, -x)
    if _half_int(x):
        n = x - 0.5  # exact: a half-integer float is below 2^(p-1)
        return math.inf if not _odd(n) else -math.inf
    return None


def _atan2_special(y: float, x: float, pi: bool):
    """C99 F.9.1.4 atan2 and §7.5.1 atan2pi; the π multiples of atan2 are references, not exact."""
    if math.isnan(x) or math.isnan(y):
        return NAN
    unit = 1.0 if pi else mpmath.pi
    if y == 0:
        if x < 0 or (x == 0 and is_negative(x)):
            return ("ref", unit if not is_negative(y) else -unit) if not pi else math.copysign(1.0, y)
        return y
    if math.isinf(y):
        frac = 0.75 if x == -math.inf else 0.25 if x == math.inf else 0.5
        return math.copysign(frac, y) if pi else ("ref", _signed(unit * frac, y))
    if x == 0:
        return math.copysign(0.5, y) if pi else ("ref", _signed(unit / 2, y))
    if math.isinf(x):
        if x > 0:
            return math.copysign(0.0, y)
        return math.copysign(1.0, y) if pi else ("ref", _signed(unit, y))
    return None


def _signed(value, sign_of: float):
    """|value| with the sign of the float ``sign_of`` (a limit value of atan and atan2)."""
    return -abs(value) if is_negative(sign_of) else abs(value)


def _unary(nan_for: Callable[[float], bool] = lambda x: False, at: dict | None = None,
           inf: tuple | None = None, zero: str = "keep") -> Callable:
    """A unary function's edge cases: NaN in NaN out, NaN on a domain error, exact values at some
    points, its limits at -inf and +inf, and at ±0 either the operand itself (``keep``), a value,
    or nothing prescribed."""
    def special(x: float):
        if math.isnan(x) or nan_for(x):
            return NAN
        if x == 0 and zero == "keep":
            return x
        if math.isinf(x) and inf is not None:
            return inf[x > 0]
        if at:
            for point, value in at.items():
                if x == point and (point != 0 or zero != "keep"):
                    return value
        return None
    return special


SPECIALS: dict[str, Callable] = {
    "acos": _unary(lambda x: abs(x) > 1, {1.0: 0.0}, None, zero="none"),
    "acospi": _unary(lambda x: abs(x) > 1, {1.0: 0.0}, None, zero="none"),
    "asin": _unary(lambda x: abs(x) > 1), "asinpi": _unary(lambda x: abs(x) > 1),
    "atan": lambda x: NAN if math.isnan(x) else x if x == 0 else (
        ("ref", _signed(mpmath.pi / 2, x)) if math.isinf(x) else None),
    "atanpi": _unary(inf=(-0.5, 0.5)),
    "acosh": _unary(lambda x: x < 1, {1.0: 0.0}, (NAN, INF), zero="none"),
    "asinh": _unary(inf=(-INF, INF)),
    "atanh": _unary(lambda x: abs(x) > 1, {1.0: INF, -1.0: -INF}),
    "sin": _unary(math.isinf), "tan": _unary(math.isinf), "cos": _unary(math.isinf, {0.0: 1.0}, zero="none"),
    "sincos": _unary(math.isinf),
    "sinpi": lambda x: NAN if math.isnan(x) or math.isinf(x) else x if x == 0 else (
        math.copysign(0.0, x) if is_int(x) else None),
    "cospi": lambda x: NAN if math.isnan(x) or math.isinf(x) else 1.0 if x == 0 else (
        0.0 if _half_int(x) else None),
    "tanpi": _tanpi_special,
    "sinh": _unary(inf=(-INF, INF)), "cosh": _unary(at={0.0: 1.0}, inf=(INF, INF), zero="none"),
    "tanh": _unary(inf=(-1.0, 1.0)),
    "exp": _unary(at={0.0: 1.0}, inf=(0.0, INF), zero="none"),
    "exp2": _unary(at={0.0: 1.0}, inf=(0.0, INF), zero="none"),
    "exp10": _unary(inf=(0.0, INF), zero="none"),  # exp10(±0) = 1: SPIR-V only (SPIRV_SPECIALS)
    "expm1": _unary(inf=(-1.0, INF)),
    **{n: _unary(lambda x: x < 0, {0.0: -INF, 1.0: 0.0}, (NAN, INF), zero="none") for n in ("log", "log2", "log10")},
    "log1p": _unary(lambda x: x < -1, {-1.0: -INF}, (NAN, INF)),
    "cbrt": _unary(inf=(-INF, INF)),
    "sqrt": _unary(lambda x: x < 0, inf=(NAN, INF)),
    "rsqrt": lambda x: NAN if math.isnan(x) or x < 0 else math.copysign(INF, x) if x == 0 else (
        0.0 if math.isinf(x) else None),
    "erf": _unary(inf=(-1.0, 1.0)),
    "erfc": _unary(inf=(2.0, 0.0), zero="none"),
    "tgamma": lambda x: NAN if math.isnan(x) or x == -INF or (x < 0 and is_int(x)) else (
        math.copysign(INF, x) if x == 0 else INF if x == INF else None),
    "lgamma": lambda x: NAN if math.isnan(x) else INF if math.isinf(x) or (x <= 0 and is_int(x)) else (
        0.0 if x in (1.0, 2.0) else None),
    "hypot": lambda x, y: INF if math.isinf(x) or math.isinf(y) else NAN if math.isnan(x) or math.isnan(y) else (
        abs(x) if y == 0 else abs(y) if x == 0 else None),
    "pow": _pow_special, "powr": _powr_special, "pown": _pown_special, "rootn": _rootn_special,
    "atan2": lambda y, x: _atan2_special(y, x, False), "atan2pi": lambda y, x: _atan2_special(y, x, True),
    "fdiv": lambda x, y: (NAN if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0) or (
        math.isinf(x) and math.isinf(y)) else math.copysign(INF, x) * math.copysign(1, y) if y == 0 or math.isinf(x)
        else math.copysign(0.0, x) * math.copysign(1, y) if x == 0 or math.isinf(y) else None),
    "degrees": _unary(inf=(-INF, INF)), "radians": _unary(inf=(-INF, INF)),
    # undefined results (§6.15.4): mix with a outside [0, 1], smoothstep with edge0 >= edge1 or a NaN;
    # an infinite operand otherwise: no prescribed value and no finite reference
    "mix": lambda x, y, a: MIX_UNDEFINED if not 0 <= a <= 1 else None if math.isfinite(x) and math.isfinite(y)
    else "skip",
    "smoothstep": lambda e0, e1, x: SMOOTHSTEP_UNDEFINED if not e0 < e1 or math.isnan(x) else None if all(
        map(math.isfinite, (e0, e1, x))) else "skip",
}
"""Edge cases with a prescribed result: a float (exact, NaN for any NaN), ``("ref", v)`` (a
reference the function's bound applies to: the π multiples of C99's atan2), ``"skip"`` (no
prescribed value and no finite reference: not judged), :class:`Undefined` (a result §6.15.4 leaves
undefined: not judged) or None (the general rule)."""
for _n, _base in (("half_cos", "cos"), ("half_exp", "exp"), ("half_exp2", "exp2"), ("half_exp10", "exp10"),
                  ("half_log", "log"), ("half_log2", "log2"), ("half_log10", "log10"), ("half_rsqrt", "rsqrt"),
                  ("half_sin", "sin"), ("half_sqrt", "sqrt"), ("half_tan", "tan"), ("half_divide", "fdiv"),
                  ("half_powr", "powr")):
    SPECIALS[_n] = SPECIALS[_base]  # §7.5.1: half_ functions have the same edge cases
SPECIALS["half_recip"] = lambda x: SPECIALS["fdiv"](1.0, x)
SPECIALS["lgamma_r"] = SPECIALS["lgamma"]


SPIRV_SPECIALS: dict[str, Callable] = {
    "exp10": lambda x: 1.0 if x == 0 else None,
}
"""Cases only the SPIR-V environment prescribes (§6.7.1, OpExtInst exp10: "exp10( ±0 ) returns 1.";
OpenCL C 3.0.19 §7.5.1 lists exp10(-∞) and exp10(+∞) only, and exp10 is not a C99 function, so on
the OpenCL C path exp10(±0) is bounded like any operand: within 3 ulp of 1)."""

LIMITS: dict[str, Callable] = {
    "rsqrt": lambda x: not math.isnan(x), "half_rsqrt": lambda x: not math.isnan(x),
    "degrees": lambda x: not math.isnan(x), "radians": lambda x: not math.isnan(x),
    "pown": lambda x, n: math.isinf(x) and n != 0,
    "rootn": lambda x, n: math.isinf(x) and n != 0 and not (x < 0 and n % 2 == 0),
}
"""Operands at which a function's value here is not a listed case but the limit signed as IEC
60559 arithmetic gives it (C99 F.9 ¶3: the functions "treat infinities, NaNs, signed zeros,
subnormals ... in a manner consistent with the basic arithmetic operations covered by IEC 60559"):
rsqrt(±0) = ±∞ (1/sqrt(-0) = 1/-0), rsqrt(+∞) = +0, rsqrt(x < 0) = NaN, degrees/radians(±0) = ±0
and (±∞) = ±∞, pown(±∞, n) and rootn(±∞, n) as pow(x, n) and pow(x, 1/n) give them (C99 F.9.4.4:
pown(-∞, -3) = -0). Their rule (math.<fn>.limit) says so."""

_C99 = {
    "acos": "F.9.1.1", "asin": "F.9.1.2", "atan": "F.9.1.3", "atan2": "F.9.1.4", "cos": "F.9.1.5",
    "sin": "F.9.1.6", "tan": "F.9.1.7", "sincos": "F.9.1.5-6", "acosh": "F.9.2.1", "asinh": "F.9.2.2",
    "atanh": "F.9.2.3", "cosh": "F.9.2.4", "sinh": "F.9.2.5", "tanh": "F.9.2.6", "exp": "F.9.3.1",
    "exp2": "F.9.3.2", "expm1": "F.9.3.3", "frexp": "F.9.3.4", "ilogb": "F.9.3.5, 7.12.6.5", "ldexp": "F.9.3.6",
    "log": "F.9.3.7", "log10": "F.9.3.8", "log1p": "F.9.3.9", "log2": "F.9.3.10", "logb": "F.9.3.11",
    "modf": "F.9.3.12", "cbrt": "F.9.4.1", "fabs": "F.9.4.2", "hypot": "F.9.4.3", "pow": "F.9.4.4",
    "sqrt": "F.9.4.5", "erf": "F.9.5.1", "erfc": "F.9.5.2", "lgamma": "F.9.5.3", "lgamma_r": "F.9.5.3",
    "tgamma": "F.9.5.4", "ceil": "F.9.6.1", "floor": "F.9.6.2", "rint": "F.9.6.4", "round": "F.9.6.6",
    "trunc": "F.9.6.8", "fmod": "F.9.7.1", "remainder": "F.9.7.2", "remquo": "F.9.7.3", "copysign": "F.9.8.1",
    "nan": "F.9.8.2", "nextafter": "F.9.8.3, 7.12.11.3", "fdim": "F.9.9.1, 7.12.12.1", "fmax": "F.9.9.2",
    "fmin": "F.9.9.3", "fma": "F.9.10.1", "fdiv": "F.3 (the / operator is IEC 60559 division)",
}
_LISTED = {  # the functions §7.5.1 (and the SPIR-V environment's §6.7.1) list cases for
    "acospi", "asinpi", "atanpi", "atan2pi", "ceil", "cospi", "exp10", "distance", "fdim", "fmod", "frexp", "fract",
    "length", "lgamma_r", "nextafter", "normalize", "pow", "pown", "powr", "rint", "remquo", "rootn", "round", "sinpi",
    "tanpi", "trunc",
}
_DEFINED = {  # functions whose edge values follow from their definition (§6.15.2 Table 14, §6.15.4, §6.15.5)
    "fract": "§6.15.2 (fmin(x - floor(x), 0x1.fffffep-1f))", "minmag": "§6.15.2", "maxmag": "§6.15.2",
    "mad": "§6.15.2", "rsqrt": "§6.15.2", "sign": "§6.15.4", "step": "§6.15.4", "degrees": "§6.15.4",
    "radians": "§6.15.4", "mix": "§6.15.4", "smoothstep": "§6.15.4", "cross": "§6.15.5 Table 17",
    "dot": "§6.15.5 Table 17",
    "fmin_common": "§6.15.4 (min)", "fmax_common": "§6.15.4 (max)",
    "fclamp": "§6.15.4 (clamp: fmin(fmax(x, minval), maxval))",
    "length": "§6.15.5 Table 17", "distance": "§6.15.5 Table 17", "normalize": "§6.15.5 Table 17",
    "fast_length": "§6.15.5 Table 17", "fast_distance": "§6.15.5 Table 17", "fast_normalize": "§6.15.5 Table 17",
    "half_divide": "§6.15.2 (x / y)",
    "half_recip": "§6.15.2 (1 / x)",
}
SHALL = "'Those values shall produce exactly the prescribed answers, and no other'"
_GEOMETRIC = frozenset(name for name, f in FUNCTIONS.items() if f.group == "geometric")
"""The geometric functions (§6.15.5): not math functions, so §7.5's C99 F.9 does not reach them;
their edge values follow from Table 17's definitions (and §7.5.1's normalize lines)."""


def source(fn: str) -> str:
    """Where ``fn``'s prescribed values are written, and that the text is a 'shall' (rule section)."""
    base = fn[5:] if fn.startswith("half_") and fn not in ("half_divide", "half_recip") else fn
    parts = []
    if base in _LISTED:
        parts.append(f"OpenCL C 3.0.19 §7.5.1 ({fn if base == fn else base} lines; {SHALL})")
    if base == "fdiv":
        parts.append(f"C99 {_C99[base]}; OpenCL C 3.0.19 §7.4 relaxes its rounding only")
    elif base in _C99:
        parts.append(f"C99 {_C99[base]}, incorporated by OpenCL C 3.0.19 §7.5 ('shall conform to sections F.9')")
    if fn in _DEFINED or base in _DEFINED:
        parts.append(f"OpenCL C 3.0.19 {_DEFINED.get(fn) or _DEFINED[base]} definition")
    if base in _GEOMETRIC:
        parts.append("in IEEE 754 arithmetic (OpenCL C 3.0.19 §7: 'must be supported'; §7.2: 'INF and NaNs must "
                     "be supported'); §7.5's C99 F.9 covers the math functions, not the geometric ones")
    elif not parts or base not in _C99:
        parts.append("C99 F.9 ¶11 ('Functions with a NaN argument return a NaN result'), "
                     "incorporated by OpenCL C 3.0.19 §7.5")
    if fn.startswith("half_"):
        parts.append("§7.5.1: half_ functions 'must conform to the same edge case requirements'")
    return "; ".join(parts)


def prescribed(fn: str, args: tuple, env: frozenset):
    """The value prescribed for ``fn`` at ``args`` (a float, NaN for any NaN, a list of allowed
    values, ``("ref", v)`` for a reference the bound applies to, ``"skip"``) and the kind of its
    rule: ``special`` (a listed case, :func:`source`), ``limit`` (:data:`LIMITS`) or ``spirv``
    (:data:`SPIRV_SPECIALS`, on a SPIR-V path only); None where nothing is prescribed."""
    value = SPECIALS.get(fn, lambda *a: None)(*args)
    if value is None:
        if "spirv" in env and fn in SPIRV_SPECIALS:
            value = SPIRV_SPECIALS[fn](*args)
            return None if value is None else (value, "spirv")
        return None
    if fn in LIMITS and LIMITS[fn](*args):
        return value, "limit"
    return value, "special"
