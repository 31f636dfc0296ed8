"""Exact float and double operations of flow programs (lang.flow_fp), lane-wise over numpy arrays.

numpy's binary32 and binary64 ``+ - * /`` and ``sqrt`` are the IEEE 754 operations, correctly
rounded to nearest even (OpenCL C 3.0.19 §7.4 Tables 65 and 68, §7.1); a conversion between them
(``astype``) is exact widening or round-to-nearest-even narrowing (§6.4.3.2). A binary32 ``fma``
is oracles.flow_ops.fma32. A binary64 ``fma`` (:func:`fma64`) is Boldo and Melquiond's emulation
("Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE
Trans. Computers 57(4), 2008, Algorithm 5): the product split exactly by Dekker's TwoProduct, the
high part added to ``c`` by TwoSum, the two low parts added rounded to odd, the whole rounded to
nearest. The algorithm is proved where no operation underflows or overflows; the lanes outside
a safe range (:data:`SAFE`) are computed from exact rationals instead.

Flushing (§7.2): only single precision denormals may be flushed, so only a ``float`` value marks
its lanes :func:`flushable`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from oracles.flow_ops import fma32, tiny

SAFE = (2.0 ** -900, 2.0 ** 900)
"""Magnitudes within which every step of :func:`fma64` neither underflows nor overflows: the
operands, the product and the result (or exact zeros)."""
SPLIT = float(2 ** 27 + 1)
"""Veltkamp's constant for binary64 (53 bits = 26 + 27)."""


def flushable(v: np.ndarray) -> np.ndarray:
    """Lanes of ``v`` a device without CL_FP_DENORM may flush: a float's subnormals (oracles.flow_ops.tiny,
    §7.2); none of a double."""
    return tiny(v) if v.dtype == np.float32 else np.zeros(v.shape, bool)


def operation(op: str, xs: list[np.ndarray]) -> np.ndarray:
    """``op`` (``add sub mul div``, ``sqrt``, ``fma``) of operands of one float type."""
    with np.errstate(all="ignore"):
        if op == "fma":
            return fma32(*xs) if xs[0].dtype == np.float32 else fma64(*xs)
        if op == "sqrt":
            return np.sqrt(xs[0])
        return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](xs[0], xs[1])


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s + e == a + b`` exactly, ``s`` the rounded sum (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``p + e == a * b`` exactly, ``p`` the rounded product (Dekker)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` rounded to odd: the rounded sum, moved one step towards the exact one where it is
    inexact and its last bit even."""
    s, e = _two_sum(a, b)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    return np.where((e != 0) & even, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def _safe(v: np.ndarray) -> np.ndarray:
    m = np.abs(v)
    return (v == 0) | ((m >= SAFE[0]) & (m <= SAFE[1]))


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded binary64 ``a * b + c`` (the module docstring says how)."""
    with np.errstate(all="ignore"):
        uh, ul = _two_product(a, b)
        th, tl = _two_sum(c, uh)
        r = th + _odd_sum(tl, ul)
        finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
        special = np.where(np.isfinite(a) & np.isfinite(b), c, a * b + c)  # an infinity or NaN: IEEE 754 §6
        r = np.where(finite, r, special)
        exact = finite & ~(_safe(a) & _safe(b) & _safe(a * b) & _safe(c) & _safe(r) & (r != 0))
    for i in np.nonzero(exact)[0]:
        r[i] = _fma_rational(float(a[i]), float(b[i]), float(c[i]))
    return r


def _fma_rational(a: float, b: float, c: float) -> float:
    """``a * b + c`` of finite values from exact rationals, rounded to nearest even (Python's
    int / int is correctly rounded); an exact zero is -0 only when the product is a -0 and ``c``
    is -0 (IEEE 754 §6.3: a sum of opposite signs that is exactly zero is +0)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        negative = (a == 0 or b == 0) and bool(np.signbit(a) != np.signbit(b)) and bool(np.signbit(c))
        return -0.0 if negative else 0.0
    try:
        return exact.numerator / exact.denominator
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")
