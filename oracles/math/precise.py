"""The infinitely precise value of each math built-in with a rounding bound (OpenCL C 3.0 §7.4),
written with mpmath: the reference its accepted interval is built around (``oracles.math.lanewise``
evaluates it at twice the format's precision plus 40 bits, ``oracles.floats``).

mpmath's working precision is one setting of the whole process (``mpmath.mp.prec``): a thread
entering ``mpmath.workprec`` changes it under every other thread's feet, and mpmath's functions
raise and restore it themselves as they go (expm1 of a tiny x cancels exp(x) - 1 at x's magnitude
plus guard bits: computed at the float working precision of 88 bits instead, -0x1.633df4p-77's
expm1 keeps 88 - 77 = 11 of x's bits and comes out -0x1.634p-77). A campaign computes expectations
on several threads at once (each target's feeder draws and computes, each lane's host thread
judges and classifies), so the oracle's mpmath work holds :data:`PRECISION`.
"""

from __future__ import annotations

import threading
from typing import Callable

import mpmath

PRECISION = threading.RLock()
"""Held by whoever computes with mpmath in the oracle (``oracles.math.engine.outputs``: every
lane of the math built-ins): one thread at a time sets and reads mpmath's precision."""


def _pi_scaled(fn: Callable) -> Callable:
    return lambda *a: fn(*a) / mpmath.pi


def _atan2pi(y, x):
    """atan2pi(y, x) = atan2(y, x)/π, exactly ±1/4 or ±3/4 where |y| = |x| (the diagonals:
    atan2(x, x) = π/4 for x > 0, 3π/4 for the mirrored quadrant, the sign of y), which mpmath's
    quotient of two rounded values misses by a unit of its precision (0.25 - 2^-90 at float's working
    precision: below the power of two, so the lane's ulp was the binade's below)."""
    if abs(y) == abs(x):
        return mpmath.sign(y) * mpmath.mpf(0.25 if x > 0 else 0.75)
    return mpmath.atan2(y, x) / mpmath.pi


def _cbrt(x):
    return mpmath.sign(x) * mpmath.cbrt(abs(x))


def _rootn(x, n):
    r = mpmath.root(abs(x), abs(n))
    r = mpmath.sign(x) * r if n % 2 else r
    return 1 / r if n < 0 else r


def _erfc(x):
    """erfc; beyond x = 1e4 (mpmath's series cannot take it) the asymptotic exp(-x²)/(x√π), far
    below the least subnormal of every format, so its relative error (1/(2x²)) never matters."""
    return mpmath.erfc(x) if x < 10**4 else mpmath.exp(-x * x) / (x * mpmath.sqrt(mpmath.pi))


def _hermite(t):
    return t * t * (3 - 2 * t)


PRECISE: dict[str, Callable] = {
    "fdiv": lambda x, y: x / y, "sqrt": mpmath.sqrt, "rsqrt": lambda x: 1 / mpmath.sqrt(x), "cbrt": _cbrt,
    "exp": mpmath.exp, "exp2": lambda x: mpmath.power(2, x), "exp10": lambda x: mpmath.power(10, x),
    "expm1": mpmath.expm1, "log": mpmath.log, "log2": lambda x: mpmath.log(x, 2), "log10": mpmath.log10,
    "log1p": mpmath.log1p, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan, "sinpi": mpmath.sinpi,
    "cospi": mpmath.cospi, "tanpi": lambda x: mpmath.sinpi(x) / mpmath.cospi(x), "sinh": mpmath.sinh,
    "cosh": mpmath.cosh, "tanh": mpmath.tanh, "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan,
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh, "asinpi": _pi_scaled(mpmath.asin),
    "acospi": _pi_scaled(mpmath.acos), "atanpi": _pi_scaled(mpmath.atan), "atan2": mpmath.atan2,
    "atan2pi": _atan2pi, "hypot": mpmath.hypot, "erf": mpmath.erf, "erfc": _erfc,
    "tgamma": mpmath.gamma, "pow": mpmath.power, "powr": mpmath.power, "pown": lambda x, n: mpmath.power(x, n),
    "rootn": _rootn, "degrees": lambda x: x * 180 / mpmath.pi, "radians": lambda x: x * mpmath.pi / 180,
    "sincos": mpmath.sin,
    "mix": lambda x, y, a: x + (y - x) * a,
    "smoothstep": lambda e0, e1, x: _hermite(min(max((x - e0) / (e1 - e0), 0), 1)),
    **{f"half_{n}": fn for n, fn in (("cos", mpmath.cos), ("exp", mpmath.exp), ("exp2", lambda x: mpmath.power(2, x)),
                                      ("exp10", lambda x: mpmath.power(10, x)), ("log", mpmath.log),
                                      ("log2", lambda x: mpmath.log(x, 2)), ("log10", mpmath.log10),
                                      ("recip", lambda x: 1 / x), ("rsqrt", lambda x: 1 / mpmath.sqrt(x)),
                                      ("sin", mpmath.sin), ("sqrt", mpmath.sqrt), ("tan", mpmath.tan),
                                      ("divide", lambda x, y: x / y), ("powr", mpmath.power))},
}
"""The infinitely precise value of each function with a rounding bound, at finite operands
the special values leave (mpmath at the working precision)."""
