"""The built-ins OpenCL C defines by a formula: mix and smoothstep, and what a result may be.

OpenCL C 3.0.19 §6.15.4 Table 16 defines ``mix`` as "the linear blend of x and y implemented as:
x + (y - x) * a" and ``smoothstep`` as "equivalent to: t = clamp((x - edge0) / (edge1 - edge0), 0,
1); return t * t * (3 - 2 * t)"; §7.4 Table 65 (declarative: "the minimum accuracy", measured from
"the infinitely precise result") bounds them by an absolute error (1e-3 and 1e-5, float, full
profile). The two texts differ where the formula loses precision in the argument type:
``mix(FLT_MAX, 1.0001f, 1.0f)`` is 1.0001 as a real number and 0 when each operation rounds to
float (``y - x`` rounds to ``-FLT_MAX``). A conforming implementation may return either, so both
are accepted, each within the tolerance:

* the formula's infinitely precise value (exact rational arithmetic), and
* the formula evaluated in the argument type with each operation correctly rounded (§7.4: + - * are
  correctly rounded; smoothstep's / is within 2.5 ulp there, far inside the tolerance), and for
  ``mix`` also with the multiply and add fused (§6.15.4 allows ``mad`` or ``fma`` contractions for
  half; accepted for every type, since FP_CONTRACT is on by default, §6.10 and C99 §7.12.2).

Where that in-type evaluation overflows (``y - x`` past FLT_MAX; for ``mix``, ``a = 0`` then gives
inf * 0), or passes through a subnormal on a build that may flush denormals (§7.2, §7.5.3), the
result depends on choices the spec leaves to the implementation and the lane is not judged.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import mpmath
from mpmath import mpf

from oracles.floats import Format, round_to


class _Open(Exception):
    """The in-type evaluation left what the spec prescribes (module docstring)."""


class _InType:
    """Each operation of a formula rounded to the format, as the spec's ``implemented as`` reads."""

    def __init__(self, f: Format, flush: bool):
        self.f, self.flush = f, flush

    def round(self, v: mpf) -> float:
        r = round_to(v, self.f)
        if r in (mpmath.inf, -mpmath.inf) or (self.flush and r != 0 and abs(r) < self.f.tiny):
            raise _Open
        return r

    def sub(self, a: float, b: float) -> float:
        return self.round(mpmath.fsub(a, b, exact=True))

    def mul(self, a: float, b: float) -> float:
        return self.round(mpmath.fmul(a, b, exact=True))

    def add(self, a: float, b: float) -> float:
        return self.round(mpmath.fadd(a, b, exact=True))

    def fma(self, a: float, b: float, c: float) -> float:
        return self.round(mpmath.fadd(mpmath.fmul(a, b, exact=True), c, exact=True))

    def div(self, a: float, b: float) -> float:
        # 2p + 40 bits before the rounding to p: double rounding is innocuous from 2p + 2 (Figueroa)
        return self.round(mpmath.fdiv(a, b, prec=self.f.prec))


def _mix(x: float, y: float, a: float, it: _InType) -> tuple[Fraction, list[float]]:
    X, Y, A = Fraction(x), Fraction(y), Fraction(a)
    d = it.sub(y, x)
    return X + (Y - X) * A, [it.add(x, it.mul(d, a)), it.fma(d, a, x)]


def _smoothstep(e0: float, e1: float, x: float, it: _InType) -> tuple[Fraction, list[float]]:
    t = min(max((Fraction(x) - Fraction(e0)) / (Fraction(e1) - Fraction(e0)), Fraction(0)), Fraction(1))
    q = it.div(it.sub(x, e0), it.sub(e1, e0))
    tf = min(max(q, 0.0), 1.0)
    return t * t * (3 - 2 * t), [it.mul(it.mul(tf, tf), it.sub(3.0, it.mul(2.0, tf)))]


FORMULAS: dict[str, Callable] = {"mix": _mix, "smoothstep": _smoothstep}
"""Each formula-defined function: (operands, in-type evaluator) -> (exact value, in-type values)."""


def formula_values(fn: str, args: tuple, f: Format, flush: bool) -> list[mpf] | None:
    """The references a result of ``fn`` at finite ``args`` may be within the tolerance of (the
    exact value first), at the working precision; None where the lane is not judged."""
    try:
        exact, in_type = FORMULAS[fn](*args, _InType(f, flush))
    except _Open:
        return None
    with mpmath.workprec(f.prec):
        values = [mpf(exact.numerator) / exact.denominator]
    return values + [mpf(v) for v in dict.fromkeys(in_type) if mpf(v) != values[0]]

