"""Tests of oracles/classes.py: explicit examples and an independent per-value classification."""

from __future__ import annotations

import math
import os
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from oracles.classes import FLOAT_CLASSES, INT_CLASSES, input_class  # noqa: E402

NP = {"half": np.float16, "float": np.float32, "double": np.float64}
MIN_NORMAL = {"half": 2.0**-14, "float": 2.0**-126, "double": 2.0**-1022}


def test_float_examples():
    x = np.array([np.nan, -np.inf, -0.0, 1e-45, 2.5, -0.5, 3.0, 2.0**40, 1.25], np.float32)
    assert input_class(x, "float").tolist() == [
        "nan", "inf", "zero", "subnormal", "tie", "tie", "integral", "huge", "normal",
    ]
    near = np.array([np.nextafter(np.float32(2.5), np.float32(3)), np.nextafter(np.float32(-0.5), np.float32(0))])
    assert input_class(near, "float").tolist() == ["near-tie", "near-tie"]
    d = np.array([2.0**40 + 0.5, 2.0**31, 2.0**31 - 1, np.nextafter(2.0**40 + 0.5, 0)], np.float64)
    assert input_class(d, "double").tolist() == ["tie", "huge", "integral", "near-tie"]
    h = np.array([65504, 6e-8, 0.5, 1000.5], np.float16)
    assert input_class(h, "half").tolist() == ["integral", "subnormal", "tie", "tie"]


def test_int_examples():
    i = np.array([0, -(2**31), 2**31 - 1, -(2**31) + 2, 2**31 - 3, 2**24 + 1, -(2**24), 7], np.int32)
    assert input_class(i, "int").tolist() == ["zero", "min", "max", "near-min", "near-max", "pow2-edge", "pow2-edge", "other"]
    u = np.array([0, 1, 2, 3, 255, 253, 252], np.uint8)
    assert input_class(u, "uchar").tolist() == ["zero", "near-min", "near-min", "other", "max", "near-max", "other"]
    lo = np.array([-(2**63), -(2**63) + 1, 2**63 - 1, 2**53 + 1, -(2**53) - 1, -(2**32), 2**31], np.int64)
    assert input_class(lo, "long").tolist() == ["min", "near-min", "max", "pow2-edge", "pow2-edge", "pow2-edge", "pow2-edge"]
    ul = np.array([2**63, 2**63 + 1, 2**64 - 1, 2**64 - 3, 2**32 - 1], np.uint64)
    assert input_class(ul, "ulong").tolist() == ["pow2-edge", "pow2-edge", "max", "near-max", "pow2-edge"]


def _ref_float(x: float, name: str) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "zero"
    if abs(x) < MIN_NORMAL[name]:
        return "subnormal"
    q = abs(Fraction(x))

    def tie(v: Fraction) -> bool:
        return v - math.floor(v) == Fraction(1, 2)

    if tie(q):
        return "tie"
    dt = NP[name]
    with np.errstate(all="ignore"):
        nbrs = [np.nextafter(dt(x), dt(np.inf)), np.nextafter(dt(x), dt(-np.inf))]
    if any(math.isfinite(float(n)) and tie(abs(Fraction(float(n)))) for n in nbrs):
        return "near-tie"
    if q >= 2**31:
        return "huge"
    if q.denominator == 1:
        return "integral"
    return "normal"


@pytest.mark.parametrize("name", list(NP))
def test_float_against_reference(name):
    rng = np.random.default_rng(1)
    nb = np.dtype(NP[name]).itemsize * 8
    u = {16: np.uint16, 32: np.uint32, 64: np.uint64}[nb]
    bits = rng.integers(0, 2**nb, size=1500, dtype=np.uint64).astype(u).view(NP[name])
    e = rng.integers(0, 12 if name == "half" else 40, size=1500)
    ties = ((np.floor(rng.random(1500) * np.exp2(e)) + 0.5) * np.sign(rng.random(1500) - 0.5)).astype(NP[name])
    with np.errstate(all="ignore"):
        near = np.nextafter(ties, NP[name](np.inf))
    with np.errstate(all="ignore"):
        tiny = np.array([MIN_NORMAL[name], -MIN_NORMAL[name]], NP[name])
        edges = [tiny, np.nextafter(tiny, NP[name](0)), np.nextafter(tiny, NP[name](np.inf))]
        x = np.concatenate([bits, ties, near, *edges, np.array([0, -0.0, np.inf, np.nan, 2.0**31], NP[name])])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = input_class(x, name).tolist()
    with np.errstate(all="ignore"):
        want = [_ref_float(float(v), name) for v in x]
    assert got == want
    assert set(got) <= set(FLOAT_CLASSES)
    assert {"tie", "near-tie", "normal"} <= set(got)


@pytest.mark.parametrize("name,bits,signed", [("char", 8, True), ("ushort", 16, False), ("int", 32, True), ("ulong", 64, False), ("long", 64, True)])
def test_int_against_reference(name, bits, signed):
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    dt = np.dtype(f"{'i' if signed else 'u'}{bits // 8}")
    cand = {lo, lo + 1, lo + 2, lo + 3, hi, hi - 1, hi - 2, hi - 3, 0, 5}
    for k in (24, 31, 32, 53, 63):
        for d in (-2, -1, 0, 1, 2):
            cand |= {2**k + d, -(2**k) + d}
    rng = np.random.default_rng(2)
    cand |= {int(v) for v in rng.integers(lo, hi, size=500, dtype=dt, endpoint=True)}
    vals = sorted(v for v in cand if lo <= v <= hi)

    def ref(v: int) -> str:
        if v == 0:
            return "zero"
        if v == lo:
            return "min"
        if v == hi:
            return "max"
        if v - lo <= 2:
            return "near-min"
        if hi - v <= 2:
            return "near-max"
        if any(abs(abs(v) - 2**k) <= 1 for k in (24, 31, 32, 53, 63)):
            return "pow2-edge"
        return "other"

    got = input_class(np.array(vals, dt), name).tolist()
    assert got == [ref(v) for v in vals]
    assert set(got) <= set(INT_CLASSES)
