"""The exact values of a flow program's vector nodes (lang.flow_vectors) for every work-item at
once: a vector is a numpy array of shape (work-items, components) in its element type's dtype,
and (float) a same-shaped array of the components that saw a value a device without denormals
may flush (§7.2), as oracles.flow keeps for scalars.

OpenCL C 3.0.19: component-wise ``+ - *`` of unsigned components wrap modulo 2**N (§6.3, §6.5);
float ``+ - *`` are correctly rounded (§7.4 Table 65: numpy's IEEE 754 operations); the
built-ins are :func:`oracles.flow_ops.builtin`'s on every component (§6.15.3); ``shuffle`` and
``shuffle2`` take only the low ``log2(m)`` and ``log2(2m)`` bits of each mask component, ``m`` the
inputs' width (§6.15.13); ``select`` takes ``b``'s component where the most significant bit of
``c``'s is set (§6.15.6); a swizzle reads and writes the components it names (§6.3.7).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, VBin, VCall, Vec, VSelect, element, width
from lang.types import scalar
from oracles.flow_ops import builtin, tiny

Value = tuple[np.ndarray, "np.ndarray | None"]
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or,
       "xor": np.bitwise_xor}


def declare(n: int, t: str, init: int) -> Value:
    """A variable of type ``t`` (a scalar or a vector) with every component at ``init`` (bits, for a float)."""
    s = scalar(element(t))
    shape = n if width(t) == 1 else (n, width(t))
    if s.is_float:
        return np.full(shape, init, s.bits_dtype).view(s.dtype), np.zeros(shape, bool)
    return np.full(shape, init, s.dtype), None


def value(e, operand: Callable[[object], Value]) -> Value:
    """The value of vector node ``e``; ``operand`` gives an operand's value."""
    if isinstance(e, Vec):
        parts = [operand(x) for x in e.parts]
        v = np.stack([x for x, _ in parts], axis=1).astype(scalar(element(e.type)).dtype)
        return v, (None if parts[0][1] is None else np.stack([f for _, f in parts], axis=1))
    if isinstance(e, Swizzle):
        a, f = operand(e.a)
        at = list(e.comps) if len(e.comps) > 1 else e.comps[0]
        return a[:, at], (None if f is None else f[:, at])
    if isinstance(e, VSelect):
        (a, fa), (b, fb), (c, _) = operand(e.a), operand(e.b), operand(e.c)
        msb = c.view(np.dtype(f"i{c.dtype.itemsize}")) < 0
        return np.where(msb, b, a), (None if fa is None else np.where(msb, fb, fa))
    if isinstance(e, Shuffle):
        return _shuffle(e, operand)
    if isinstance(e, VCall):
        return builtin(e.fn, [operand(x)[0] for x in e.args], element(e.type)), None
    assert isinstance(e, VBin)
    (a, fa), (b, fb) = operand(e.a), operand(e.b)
    with np.errstate(all="ignore"):
        r = OPS[e.op](a, b).astype(a.dtype)
    return r, (None if fa is None else fa | fb | tiny(r))


def _shuffle(e: Shuffle, operand: Callable[[object], Value]) -> Value:
    """§6.15.13: ``mask``'s low bits select a component of ``x`` (shuffle2: of ``x`` then ``y``)."""
    (x, fx), (mask, _) = operand(e.x), operand(e.mask)
    source, flush = x, fx
    if e.y is not None:
        y, fy = operand(e.y)
        source = np.concatenate([x, y], axis=1)
        flush = None if fx is None else np.concatenate([fx, fy], axis=1)
    low = (mask & mask.dtype.type(source.shape[1] - 1)).astype(np.int64)
    return (np.take_along_axis(source, low, axis=1),
            None if flush is None else np.take_along_axis(flush, low, axis=1))


def store(s: SwizzleStore, old: Value, new: Value, m: np.ndarray) -> Value:
    """Vector ``old`` with the components ``s`` names set to ``new``'s where ``m`` (work-items) holds."""
    (v, fv), (x, fx) = old, new
    v, fv = v.copy(), (None if fv is None else fv.copy())
    x = x.reshape(len(x), -1)
    for j, c in enumerate(s.comps):
        v[:, c] = np.where(m, x[:, j], v[:, c])
        if fv is not None:
            fv[:, c] = np.where(m, fx.reshape(len(x), -1)[:, j], fv[:, c])
    return v, fv
