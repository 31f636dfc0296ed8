"""The math filter's cheaper paths (docs/math-filter.md, "At a million lanes a second") against
mpmath alone, on the operands each one decides and around its edges: tanh and expm1 saturated at
±1 (oracles.math.fast_saturated; both sides of the oracle's slack, where an even ulp bound moves
an interval end), remquo of large quotients and at halfway quotients, fract of negative operands
near 0 (the correctly rounded difference), pown at n = 0 (a prescribed 1), n = 1 and powers of two
(exact), hypot of operands far apart (a double-word), each near overflow and near the least normal
value too. Every lane must be bit for bit the lane mpmath alone builds (OpenCL C 3.0.19 §7.4,
§7.5.1, §6.15.2), and the path must decide the lanes it is for."""

from __future__ import annotations

import numpy as np
import pytest

from lang.maths import FUNCTIONS
from lang.types import scalar
from oracles import Expectation, fmt
from oracles.math import engine, filtered
from oracles.math.fast import decide
from tests.oracles.test_math_fast import ENVS, _op, assert_same

TYPES = ("half", "float", "double")


def same_as_mpmath(fn: str, tname: str, cols: list[np.ndarray], env: frozenset = frozenset()) -> float:
    """Assert the filter's expectations are mpmath's on ``cols``; the share of lanes it decided."""
    args = [Expectation.exact(tname if c.dtype.kind == "f" else "int", c) for c in cols]
    n = len(cols[0])
    fast = engine.outputs(_op(fn, tname, 1), args, n, env)
    slow = engine.outputs(_op(fn, tname, 1), args, n, env, fast=False)
    for a, b in zip(fast, slow):
        assert_same(a, b)
    return len(filtered(FUNCTIONS[fn], tname, env, args, [None] * len(cols)).index) / n


def _signed(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return v * np.where(rng.random(len(v)) < 0.5, -1, 1).astype(v.dtype)


@pytest.mark.parametrize("tname", TYPES)
@pytest.mark.parametrize("fn", ["tanh", "expm1"])
def test_saturated_lanes_as_mpmath(fn, tname):
    """tanh of |x| from where δ = 1 - |tanh x| is an eighth of an ulp to far beyond the slack
    (2^-(prec-8): tanh 19 for half, 28 for float, 48 for double), and expm1 of the same negative x;
    every build of the other tests' list (the embedded profile's bounds, even for half)."""
    rng = np.random.default_rng(7)
    dtype = scalar(tname).dtype
    top = min(fmt(tname).max, 800.0)
    x = np.concatenate([rng.uniform(4, 70, 600), np.exp2(rng.uniform(2, np.log2(top), 200))]).astype(dtype)
    x = np.concatenate([x, np.nextafter(x, dtype.type(np.inf))])
    x = _signed(x, rng) if fn == "tanh" else -x
    for env in ENVS[1:6]:
        same_as_mpmath(fn, tname, [x], env)
    assert same_as_mpmath(fn, tname, [x]) > 0.9  # the saturated lanes no longer need mpmath


@pytest.mark.parametrize("tname", TYPES)
def test_remquo_large_and_halfway_quotients_as_mpmath(tname):
    """Quotients up to the type's range (n = 128·M + n'), exactly halfway quotients (x = (j + 1/2)·y:
    n even either way), quotients next to multiples of 128, and either sign of each operand."""
    rng = np.random.default_rng(11)
    s = scalar(tname)
    fm = fmt(tname)
    n = 800
    y = np.exp2(rng.uniform(fm.emin + 2, 0, n)).astype(s.dtype)
    with np.errstate(over="ignore"):
        big = np.exp2(rng.uniform(0, fm.emax - 1, n)).astype(s.dtype) * y
        half = ((rng.integers(0, 2**min(fm.p - 2, 30), n) + 0.5) * y.astype(np.float64)).astype(s.dtype)
        near = (rng.integers(1, 64, n) * 128 * y.astype(np.float64)).astype(s.dtype)
    x = np.concatenate([big, half, near, np.nextafter(near, s.dtype.type(0))])
    y = np.tile(y, 4)
    keep = np.isfinite(x) & (x != 0)
    x, y = _signed(x[keep], rng), _signed(y[keep], rng)
    assert same_as_mpmath("remquo", tname, [x, y]) > 0.8


@pytest.mark.parametrize("tname", TYPES)
def test_fract_negative_near_zero_as_mpmath(tname):
    """fract of -2^-k down to the least normal value (1 - 2^-k rounds to 1, then fmin to the value
    below 1), of negative values next to integers and of ordinary ones."""
    rng = np.random.default_rng(3)
    s = scalar(tname)
    fm = fmt(tname)
    tiny = -np.exp2(rng.uniform(fm.emin, 0, 600)).astype(s.dtype)
    ints = np.arange(-300, 300, dtype=np.float64).astype(s.dtype)
    x = np.concatenate([tiny, np.nextafter(ints, s.dtype.type(np.inf)), np.nextafter(ints, s.dtype.type(-np.inf)),
                        -np.exp2(-np.arange(1, -fm.emin, dtype=np.float64)).astype(s.dtype)])
    x = x[(x != 0) & (np.abs(x.astype(np.float64)) >= fm.tiny)]
    for env in ENVS[1:6]:
        same_as_mpmath("fract", tname, [x], env)
    assert same_as_mpmath("fract", tname, [x]) > (0.6 if tname == "half" else 0.99)


@pytest.mark.parametrize("tname", TYPES)
def test_pown_prescribed_and_exact_as_mpmath(tname):
    """pown(x, 0) = 1 (§7.5.1: not judged where the build voids edge cases), pown(x, 1) = x and
    powers of two to every n that stays in range or overflows or underflows by one (exact values,
    an odd n keeping x's sign), besides ordinary x."""
    rng = np.random.default_rng(5)
    s = scalar(tname)
    fm = fmt(tname)
    m = 900
    x = np.where(rng.random(m) < 0.5, np.exp2(rng.integers(fm.emin, fm.emax, m).astype(np.float64)),
                 np.exp2(rng.uniform(-12, 12, m))).astype(s.dtype)
    x = _signed(x, rng)
    n = rng.choice(np.array([0, 1, -1, 2, 3, -3, 7, -8, 300, -300]), m).astype(np.int32)
    for env in ENVS[:6]:
        same_as_mpmath("pown", tname, [x, n], env)
    mag = np.abs(x.astype(np.float64))
    unit = (n == 0) | (n == 1) & (mag < fm.max / 8) & (mag >= 2 * fm.tiny)  # else near overflow or flushing
    assert same_as_mpmath("pown", tname, [x[unit], n[unit]]) == 1


@pytest.mark.parametrize("tname", TYPES)
def test_hypot_far_apart_as_mpmath(tname):
    """hypot of operands 2^10 to 2^60 apart (and 2^200 for double), the larger near overflow, near
    the least normal value, ordinary or a power of two (where the ulp changes), both orders and
    signs."""
    rng = np.random.default_rng(9)
    s = scalar(tname)
    fm = fmt(tname)
    m = 900
    big = np.exp2(np.where(rng.random(m) < 0.3, rng.uniform(fm.emax - 3, fm.emax, m), rng.uniform(fm.emin + 1, fm.emax, m)))
    big = np.where(rng.random(m) < 0.3, np.exp2(np.floor(np.log2(big))), big)  # powers of two: the ulp above
    ratio = np.exp2(-rng.uniform(10, 60 if tname != "double" else 200, m))
    with np.errstate(over="ignore", under="ignore"):
        x, y = big.astype(s.dtype), (big * ratio).astype(s.dtype)
    keep = np.isfinite(x) & (np.abs(y.astype(np.float64)) >= fm.tiny)
    x, y = _signed(x[keep], rng), _signed(y[keep], rng)
    swap = rng.random(len(x)) < 0.5
    x, y = np.where(swap, y, x), np.where(swap, x, y)
    for env in ENVS[1:6]:
        same_as_mpmath("hypot", tname, [x, y], env)
    inside = np.maximum(np.abs(x), np.abs(y)).astype(np.float64) < fm.max / 8  # near overflow: the exact path
    # left to mpmath: t²/2 between 2^-(prec+6) and about twice the oracle's slack (2^-(prec-8))
    assert same_as_mpmath("hypot", tname, [x[inside], y[inside]]) > 0.85


@pytest.mark.parametrize("k", [None, 2.0, 3.0, 2.5, 16.0])
def test_grid_decision_as_the_general_one(k):
    """decide's grid path (a long double reference alone, far inside its binade) against its
    general path (the same reference given as a double-word with a zero low part): references at,
    next to and within a few units of the last place of the values of the type, the midpoints
    between them and the powers of two, of either sign, from the least normal value to the
    largest (where the ulp is subnormal in float64); where both decide they give the same lane,
    and the grid path decides nearly every lane the general one does."""
    rng = np.random.default_rng(17)
    tname, working = "double", np.longdouble
    s = scalar(tname)
    fm = fmt(tname)
    m = 4000
    grid = np.exp2(rng.uniform(fm.emin + 2, fm.emax - 2, m)).astype(s.dtype).astype(working)
    grid = np.where(rng.random(m) < 0.1, np.exp2(np.round(np.log2(grid))), grid)
    unit = np.ldexp(np.ones(m, working), np.frexp(grid)[1] - fm.p)
    last = float(np.finfo(working).eps) * 2.0 ** (fm.p - 1)  # the working type's last place, in ulps of the type
    offset = np.where(rng.random(m) < 0.2, rng.random(m), rng.choice(np.array([0, 0.5, 1, 2, 3]), m)
                      + rng.integers(-40, 40, m) * last)
    r = _signed((grid + offset * unit).astype(working), rng)
    rel = 8 * float(np.finfo(working).eps)
    ok, lanes = decide(r, rel, tname, k)
    general, expected = decide(r, rel, tname, k, np.zeros(m, working), np.zeros(m, bool))
    assert ok.mean() > 0.5 and (general & ~ok).sum() < 0.01 * m  # near a power of two: the general path
    both = ok & general
    for a, b in zip(lanes, expected):
        assert np.array_equal(a[both].view(np.uint8), b[both].view(np.uint8))
