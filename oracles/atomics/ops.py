"""The semantics of the atomic operations, which the atomics oracle replays on histories.

What each operation adds (OpenCL C 3.0 Tables 26-29, §6.15.12.7-9; OpenCL SPIR-V environment §4):
add/sub/inc/dec wrap modulo 2^N; min/max compare signed or unsigned by the type; xchg/exchange
store the operand; legacy cmpxchg stores ``v`` where ``old == cmp``; C11 compare-exchange reports
``(expected after, success)``: a success means ``old == expected`` (expected unchanged), a
failure returns ``old`` in expected, and only the weak form may fail with ``old == expected``
(spuriously, §6.15.12.7.5); a load returns the value without changing it; a flag's test-and-set
returns 0 or 1 (its old state) and sets it; clear clears it.

Values are unsigned bit patterns of the location's width (uint64); :func:`apply` gives what an
operation stores, :func:`combine` the final value of a location whose operations all commute.
"""

from __future__ import annotations

import numpy as np

from lang.ops import ATOMICS

KINDS = tuple(name for name, *_ in ATOMICS)
CODE = {name: i for i, name in enumerate(KINDS)}
COMMUTING = ({"add", "sub", "inc", "dec"}, {"and"}, {"or"}, {"xor"}, {"min"}, {"max"})
STORES = {"store", "flag_clear"}  # no old value returned (no result at all): a jump


def bit_mask(bits: int) -> np.uint64:
    """The mask of the low ``bits`` bits."""
    return np.uint64((1 << bits) - 1)


def _signed(v: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned bit patterns of ``bits`` bits as signed integers (int64)."""
    if bits == 64:
        return v.view(np.int64)
    x = v.astype(np.int64)
    return np.where(x >= 1 << (bits - 1), x - (1 << bits), x)


def apply(kind: str, old: np.ndarray, a: np.ndarray, b: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """What an operation of ``kind`` stores, given the old values it read (unsigned bit patterns of
    ``bits`` bits, uint64); for a flag, 1 is set. Loads and failed exchanges store ``old``. (A C11
    compare-exchange reports its own success: :func:`oracles.atomics.check.check` follows that flag.)"""
    m = bit_mask(bits)
    with np.errstate(over="ignore"):
        if kind == "add":
            return (old + a) & m
        if kind == "sub":
            return (old - a) & m
        if kind == "inc":
            return (old + np.uint64(1)) & m
        if kind == "dec":
            return (old - np.uint64(1)) & m
    if kind in ("xchg", "store"):
        return a.copy()
    if kind == "cmpxchg":
        return np.where(old == a, b, old)
    if kind in ("min", "max"):
        x, y = (_signed(old, bits), _signed(a, bits)) if signed else (old, a)
        pick_a = (y < x) if kind == "min" else (y > x)
        return np.where(pick_a, a, old)
    if kind == "and":
        return old & a
    if kind == "or":
        return old | a
    if kind == "xor":
        return old ^ a
    if kind == "load":
        return old.copy()
    if kind == "flag_test_and_set":
        return np.ones_like(old)
    if kind == "flag_clear":
        return np.zeros_like(old)
    raise ValueError(f"unknown atomic kind {kind!r}")


def combine(kind: str, init: int, operands: np.ndarray, bits: int, signed: bool) -> int:
    """The final value of a location whose operations all commute: ``init`` combined with every
    operand (``operands``: the effect of each, e.g. +v, -v, +1)."""
    m = (1 << bits) - 1
    if kind == "add":
        return (init + int(operands.sum(dtype=np.uint64))) & m
    values = [init] + [int(v) for v in operands]
    if kind in ("min", "max"):
        key = (lambda v: v - (1 << bits) if signed and v >> (bits - 1) else v)
        return (min if kind == "min" else max)(values, key=key)
    out = init
    for v in values[1:]:
        out = out & v if kind == "and" else out | v if kind == "or" else out ^ v
    return out
