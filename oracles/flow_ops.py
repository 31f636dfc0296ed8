"""Exact lane-wise references of the operations of flow programs (lang.flow), over numpy arrays
holding one value per work-item in its type's dtype.

Integer rules (OpenCL C 3.0.19 §6.3, §6.5.1, §6.15.3): operations on unsigned types wrap
modulo 2**N; the guarded forms are exact where representable and give their first operand
otherwise; built-ins as §6.15.3 Table 16 defines them (``hadd`` and ``rhadd`` without overflow,
``rotate`` by the count modulo the width, ``abs`` and ``abs_diff`` as unsigned values).
Float (§7.4 Table 65): ``+ - *`` and ``fma`` are correctly rounded; numpy's binary32 and
binary64 ``+ - *`` are IEEE 754 operations, and a binary32 ``fma`` is the binary64 sum of the
exact product rounded to odd, then rounded to binary32 (exact: 53 >= 2 * 24 + 2 bits, Boldo and
Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd").
"""

from __future__ import annotations

import numpy as np

from lang.flow import promoted
from lang.types import scalar

U64 = np.uint64
MASK32 = U64(0xFFFFFFFF)


def dtype(t: str) -> np.dtype:
    return scalar(t).dtype


def _mul_hi64(a: np.ndarray, b: np.ndarray, signed: bool) -> np.ndarray:
    """The high 64 bits of the 128-bit product (four 32-bit partial products)."""
    ua, ub = a.view(U64) if a.dtype != U64 else a, b.view(U64) if b.dtype != U64 else b
    al, ah, bl, bh = ua & MASK32, ua >> U64(32), ub & MASK32, ub >> U64(32)
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> U64(32)) + (lh & MASK32) + (hl & MASK32)
    hi = hh + (lh >> U64(32)) + (hl >> U64(32)) + (mid >> U64(32))
    if signed:  # from the unsigned product: subtract b where a < 0 and a where b < 0 (mod 2**64)
        hi = hi - np.where(a < 0, ub, U64(0)) - np.where(b < 0, ua, U64(0))
        return hi.view(np.int64)
    return hi


def _overflow_add(a: np.ndarray, b: np.ndarray, r: np.ndarray) -> np.ndarray:
    return ((a ^ r) & (b ^ r)) < 0


def _overflow_sub(a: np.ndarray, b: np.ndarray, r: np.ndarray) -> np.ndarray:
    return ((a ^ b) & (a ^ r)) < 0


def guarded(op: str, a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """``sadd ssub smul`` of two values of the signed type ``t`` (int or long): the exact result
    where it is representable, else ``a``."""
    s = scalar(t)
    if s.bits < 64:
        wide = {"sadd": np.add, "ssub": np.subtract, "smul": np.multiply}[op](a.astype(np.int64), b.astype(np.int64))
        return np.where((wide < s.min) | (wide > s.max), a, wide.astype(s.dtype))
    if op == "sadd":
        r = a + b
        return np.where(_overflow_add(a, b, r), a, r)
    if op == "ssub":
        r = a - b
        return np.where(_overflow_sub(a, b, r), a, r)
    r = a * b
    return np.where(_mul_hi64(a, b, True) != (r >> 63), a, r)


def division(op: str, a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """``sdiv srem``: ``a / b`` and ``a % b`` truncating toward zero (C99 §6.5.5), ``a`` where
    ``b`` is 0 or (signed) ``a`` is MIN and ``b`` is -1."""
    s = scalar(t)
    bad = b == 0
    if s.signed:
        bad |= (a == s.min) & (b == -1)
    d = np.where(bad, np.ones_like(b), b)
    q = a // d
    r = a - q * d
    if s.signed:  # numpy floors; C truncates
        fix = (r != 0) & ((r < 0) != (a < 0))
        q = np.where(fix, q + 1, q)
        r = np.where(fix, r - d, r)
    return np.where(bad, a, q if op == "sdiv" else r)


def binary(op: str, a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    """A :class:`lang.flow.Bin` of two values of type ``t``, in the promoted type."""
    p = promoted(t)
    a, b = a.astype(dtype(p)), b.astype(dtype(p))
    if op in ("lt", "le", "gt", "ge", "eq", "ne"):
        return getattr(np, {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                            "eq": "equal", "ne": "not_equal"}[op])(a, b).astype(np.int32)
    if op in ("add", "sub", "mul", "and", "or", "xor"):
        fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or,
              "xor": np.bitwise_xor}[op]
        return fn(a, b)
    if op in ("shl", "shr"):
        k = b & a.dtype.type(scalar(p).bits - 1)
        return a << k if op == "shl" else a >> k
    if op in ("sadd", "ssub", "smul"):
        return guarded(op, a, b, p)
    return division(op, a, b, p)


def unary(op: str, a: np.ndarray, t: str) -> np.ndarray:
    p = promoted(t)
    a = a.astype(dtype(p))
    if op == "neg":
        return np.zeros_like(a) - a
    if op == "not":
        return ~a
    return (a == 0).astype(np.int32)


def _bit_length(u: np.ndarray, bits: int) -> np.ndarray:
    n = np.zeros(u.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s < bits:
            hi = u >> u.dtype.type(s)
            moved = hi != 0
            n += np.where(moved, s, 0)
            u = np.where(moved, hi, u)
    return n + (u != 0)


def _saturating(fn: str, a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    s = scalar(t)
    if s.bits < 64:
        wide = (np.add if fn == "add_sat" else np.subtract)(a.astype(np.int64), b.astype(np.int64))
        return np.clip(wide, s.min, s.max).astype(s.dtype)
    r = a + b if fn == "add_sat" else a - b
    if not s.signed:
        return np.where(r < a, U64(s.max), r) if fn == "add_sat" else np.where(a < b, U64(0), r)
    over = (_overflow_add if fn == "add_sat" else _overflow_sub)(a, b, r)
    return np.where(over, np.where(a < 0, np.int64(s.min), np.int64(s.max)), r)


def builtin(fn: str, args: list[np.ndarray], t: str) -> np.ndarray:
    """An integer built-in of §6.15.3 on operands of type ``t``."""
    s = scalar(t)
    u = np.dtype(f"u{s.size}")
    a = args[0]
    if fn in ("min", "max"):
        return (np.minimum if fn == "min" else np.maximum)(a, args[1])
    if fn == "clamp":
        return np.minimum(np.maximum(a, args[1]), args[2])
    if fn in ("add_sat", "sub_sat"):
        return _saturating(fn, a, args[1], t)
    if fn in ("hadd", "rhadd"):
        b, one = args[1], s.dtype.type(1)
        carry = (a & b & one) if fn == "hadd" else ((a | b) & one)
        return (a >> one) + (b >> one) + carry
    if fn == "rotate":
        v, k = a.view(u), args[1].view(u) & u.type(s.bits - 1)
        back = u.type(s.bits) - k
        out = np.where(k == 0, v, (v << k) | (v >> np.where(k == 0, u.type(0), back)))
        return out.astype(u).view(s.dtype)
    if fn == "popcount":
        return np.bitwise_count(a.view(u)).astype(s.dtype)
    if fn == "clz":
        return (s.bits - _bit_length(a.view(u), s.bits)).astype(s.dtype)
    if fn == "abs":
        ua = a.view(u)
        return np.where(a < 0, np.zeros_like(ua) - ua, ua) if s.signed else ua
    if fn == "abs_diff":
        wa, wb = a.astype(U64), args[1].astype(U64)
        return np.where(a > args[1], wa - wb, wb - wa).astype(u)
    if fn == "mul_hi":
        if s.bits == 64:
            return _mul_hi64(a, args[1], s.signed)
        wide = a.astype(np.int64 if s.signed else U64) * args[1].astype(np.int64 if s.signed else U64)
        return (wide >> (s.bits if s.signed else U64(s.bits))).astype(s.dtype)
    product = a * args[1]  # mul24 / mad24: uint operands whose exact result fits 32 bits (lang.flow_rules)
    return product if fn == "mul24" else product + args[2]


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded binary32 fused multiply-add (the module docstring says how)."""
    p = a.astype(np.float64) * b.astype(np.float64)  # exact: 48 significant bits
    c64 = c.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)  # s + err == p + c exactly (TwoSum)
        finite = np.isfinite(s) & np.isfinite(err)
        even = (s.view(U64) & U64(1)) == 0
        odd = np.where(finite & (err != 0) & even, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return odd.astype(np.float32)


def tiny(v: np.ndarray) -> np.ndarray:
    """Lanes whose float value a device without denormals may flush or have flushed (§7.2):
    nonzero and at most the least normal value in magnitude."""
    return (v != 0) & (np.abs(v) <= np.finfo(v.dtype).tiny)
