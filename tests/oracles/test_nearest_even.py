"""oracles.rounding.nearest_even (numpy's casts, rounding to nearest even) gives what the integer
rounding oracles.rounding.round_binary gives in mode "rte", for every pair of an integer or
floating type and a floating type, on edge-biased values (rounding ties and their neighbours,
limits, subnormals, overflows: tests.oracles.test_conversions.sample). The conversions to
floating types by default use it (OpenCL C 3.0.19 §6.4.3.2: round to nearest even);
tests/oracles/test_conversions.py checks them against exact fractions."""

from __future__ import annotations

import numpy as np
import pytest

from lang.types import scalar
from oracles import conversions as cv
from oracles import rounding
from oracles.rounding import ieee_casts, nearest_even, round_exactly
from tests.exact import FLOATS, INTS
from tests.oracles.test_conversions import sample

PAIRS = [(s, d) for s in (*INTS, *FLOATS) for d in FLOATS if s != d]


@pytest.mark.parametrize("src, dst", PAIRS)
def test_the_casts_round_as_the_integer_rounding_does(src, dst):
    s, d = scalar(src), scalar(dst)
    values = sample(src, 20_000, np.random.default_rng(len(src) * 7 + len(dst)))
    finite = np.ones(values.shape, bool) if s.is_int else np.isfinite(values)
    exact, fast = round_exactly(values, s, d, "rte"), nearest_even(values, s, d)
    assert np.array_equal(fast.value[finite].view(np.uint64), exact.value[finite].view(np.uint64))
    assert np.array_equal(fast.overflow[finite], exact.overflow[finite])
    assert np.array_equal(fast.tiny[finite], exact.tiny[finite])
    kept = finite & ~exact.overflow  # an overflow's rule is the overflow's, whether or not it was exact
    assert np.array_equal(fast.exact[kept], exact.exact[kept])
    assert exact.tiny.any() or s.is_int or d.min_exp <= s.min_exp  # the sample reaches the subnormals


def test_where_the_casts_do_not_round_to_nearest_even_the_integer_rounding_does(monkeypatch):
    """The process's casts are probed on every call (a library loaded later may set flush-to-zero
    or another rounding mode); where the probe fails, the conversions round as integers, with the
    same results."""
    assert ieee_casts()  # this process's casts are IEEE's
    values = sample("long", 5_000, np.random.default_rng(3))
    fast = cv.convert_all(values, "long", "float")
    monkeypatch.setattr(rounding, "ieee_casts", lambda: False)
    slow = cv.convert_all(values, "long", "float")
    assert all(np.array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8)) for a, b in zip(fast, slow))


def test_the_probe_tells_a_flushed_or_directed_cast(monkeypatch):
    """ieee_casts() fails where a cast flushes the subnormal or rounds the ties another way
    (simulated: the probe's float bits as flush-to-zero and round-toward-zero give them)."""
    flushed = rounding._PROBE_BITS.copy()
    flushed[3] = 0
    toward_zero = np.array([0x3F800000, 0x3F800000, 0xBF800000, 0x00000200], np.uint32)
    for bits in (flushed, toward_zero):
        monkeypatch.setattr(rounding, "_PROBE", bits.view(np.float32).astype(np.float64))
        assert not ieee_casts()
