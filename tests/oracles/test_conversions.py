"""Tests of oracles/conversions.py against an independent exact reference.

The reference (``tests/exact.py``) shares no code with the oracle: it decodes values through
Python floats and ``fractions.Fraction``, rounds exact rationals with Python's own rounding and
encodes IEEE bit patterns by hand, from the spec (OpenCL C 3.0.19 §6.4.3, §7.1, §7.4, footnote
[17]; IEEE 754-2008 §4.3, §7.4, §7.5).

Results are compared as bit patterns, never as floats.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from fractions import Fraction
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from oracles import conversions as cv  # noqa: E402
from oracles import rules as R  # noqa: E402
from oracles import Expectation  # noqa: E402

# --- the independent reference (tests/exact.py) ---------------------------------------------

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
from exact import (  # noqa: E402
    FLOATS,
    INTS,
    MODES,
    NP,
    UNSIGNED,
    decode,
    encode,
    float_max,
    int_range,
    round_to_float,
    round_to_int,
)


@lru_cache(maxsize=None)
def reference(bits: int, src: str, dst: str, sat: bool, rounding: str | None):
    """(expected bits or None when implementation-defined, result-is-NaN, rule id)."""
    mode = rounding or ("rte" if dst in FLOATS else "rtz")
    v, neg = decode(bits, src)
    if src == dst and src in INTS:
        return bits, False, "convert.identity"  # §6.4.3.1: no effect, also with _sat
    if dst in INTS:
        lo, hi = int_range(dst)
        mask = (1 << INTS[dst][0]) - 1
        if v == "nan":
            return (0, False, "convert.sat.nan") if sat else (None, False, "convert.float_to_int.out_of_range")
        if v == "inf":
            if sat:
                return (lo if neg else hi) & mask, False, "convert.sat.clamp"
            return None, False, "convert.float_to_int.out_of_range"
        in_range = lo <= v <= hi  # §6.4.3.3: the *operand* is out of range
        if src in INTS:
            if in_range:
                return int(v) & mask, False, "convert.int.exact"
            if sat:
                return min(max(int(v), lo), hi) & mask, False, "convert.sat.clamp"
            return int(v) & mask, False, "convert.int.wrap"  # modulo 2**N
        r = round_to_int(v, mode)
        if in_range:
            return r & mask, False, "convert.float_to_int.round"
        if sat:
            return min(max(r, lo), hi) & mask, False, "convert.sat.clamp"
        return None, False, "convert.float_to_int.out_of_range"
    nbits, p, _, _, ebits = FLOATS[dst]
    if v == "nan":
        return None, True, "convert.nan"
    if src == dst:
        return bits, False, "convert.identity"
    if v == "inf":
        return encode(dst, neg, 2**ebits - 1, 0), False, "convert.inf"
    out, case = round_to_float(v, neg, dst, mode)
    return out, False, {
        "exact": "convert.to_float.exact", "round": "convert.to_float.round",
        "subnormal": "convert.to_float.subnormal", "overflow": "convert.to_float.overflow",
    }[case]


def bits_of(values: np.ndarray) -> list[int]:
    a = np.ascontiguousarray(values)
    return a.view(UNSIGNED[a.dtype.itemsize * 8]).tolist()


def check(values: np.ndarray, src: str, dst: str, sat: bool, rounding: str | None) -> int:
    """Compare convert/defined/rules with the reference lane by lane; return lanes checked."""
    got, dfd, rl = cv.convert_all(values, src, dst, saturate=sat, rounding=rounding)
    assert bits_of(got) == bits_of(cv.convert(values, src, dst, saturate=sat, rounding=rounding))
    assert np.array_equal(dfd, cv.defined(values, src, dst, saturate=sat, rounding=rounding))
    assert np.array_equal(rl, cv.rules(values, src, dst, saturate=sat, rounding=rounding))
    assert got.dtype == np.dtype(NP[dst]) and dfd.dtype == bool and rl.dtype == np.int16
    got_bits = bits_of(got)
    is_nan = np.isnan(got).tolist() if dst in FLOATS else [False] * len(got_bits)
    for i, b in enumerate(bits_of(values)):
        want, want_nan, rule_id = reference(b, src, dst, sat, rounding)
        where = f"convert_{dst}{'_sat' if sat else ''}{'_' + rounding if rounding else ''}({src} bits {b:#x})"
        assert bool(dfd[i]) == (want is not None or want_nan), f"defined wrong for {where}"
        assert R.rule(int(rl[i])).id == rule_id, f"rule {R.rule(int(rl[i])).id} != {rule_id} for {where}"
        if want_nan:
            assert is_nan[i], f"{where}: expected a NaN, got bits {got_bits[i]:#x}"
        elif want is not None:
            assert got_bits[i] == want, f"{where}: got {got_bits[i]:#x}, expected {want:#x}"
    return len(got_bits)


# --- edge-biased value generation ------------------------------------------------------------


def _int_specials(name: str) -> list[int]:
    lo, hi = int_range(name)
    out = {0, 1, -1, 2, -2, lo, lo + 1, lo + 2, hi, hi - 1, hi - 2}
    for k in range(0, 65):
        for d in (-1, 0, 1):
            out |= {2**k + d, -(2**k) + d}
    for lo2, hi2 in map(int_range, INTS):  # every integer type's limits and their neighbours
        out |= {lo2 - 1, lo2, lo2 + 1, hi2 - 1, hi2, hi2 + 1}
    for p in (11, 24, 53):  # rounding ties of int -> half/float/double, and their neighbours
        for sh in range(1, 64 - p + 1):
            for top in ((1 << p) - 1, 1 << (p - 1), (1 << p) - 2, 3 << (p - 2)):
                t = (top << sh) | (1 << (sh - 1))
                out |= {t - 1, t, t + 1, -t - 1, -t, -t + 1}
    return sorted(v for v in out if lo <= v <= hi)


def _int_random(name: str, rng: np.random.Generator, n: int) -> list[int]:
    lo, hi = int_range(name)
    bits = INTS[name][0]
    out = []
    # float-precision ties at random magnitudes and their +-1 neighbours
    for p in (11, 24, 53):
        if bits <= p:
            continue
        ks = rng.integers(p + 1, bits + 1, size=n // 8)
        for L in ks.tolist():
            sh = L - p
            top = int(rng.integers(1 << (p - 1), 1 << p))
            t = (top << sh) | (1 << (sh - 1))
            out += [t + int(rng.integers(-1, 2)), -t + int(rng.integers(-1, 2))]
    raw = rng.integers(0, 2**63, size=n, dtype=np.uint64) << np.uint64(1) | rng.integers(0, 2, size=n, dtype=np.uint64)
    out += [int(x) % (1 << bits) + lo for x in raw.tolist()]  # uniform over the type
    # random magnitudes (log-uniform)
    for L, s in zip(rng.integers(0, bits + 1, size=n).tolist(), rng.integers(0, 2, size=n).tolist()):
        v = int(rng.integers(0, 2**64, dtype=np.uint64)) % (1 << L)
        out.append(-v if s else v)
    return [v for v in out if lo <= v <= hi]


def _from_bits(bits, name: str) -> np.ndarray:
    nb = FLOATS[name][0]
    return np.asarray(bits, dtype=UNSIGNED[nb]).view(NP[name])


def _neighbours(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.concatenate([x, np.nextafter(x, np.array(np.inf, x.dtype)), np.nextafter(x, np.array(-np.inf, x.dtype))])


def _int_core(name: str) -> np.ndarray:
    """Values every sample of an integer type contains: 0, +-1, the limits of every integer type
    and their neighbours, 2**24 +- 1, 2**53 +- 1 (when representable)."""
    lo, hi = int_range(name)
    out = {0, 1, -1, 2**24 + 1, 2**24 - 1, 2**53 + 1, -(2**53) - 1, 2**63 - 2**39 - 1}
    for lo2, hi2 in map(int_range, INTS):
        out |= {lo2 - 1, lo2, lo2 + 1, hi2 - 1, hi2, hi2 + 1}
    return np.array(sorted(v for v in out if lo <= v <= hi), NP[name])


def _float_core(name: str) -> np.ndarray:
    """Values every sample of a floating type contains: +-0, +-inf, NaNs, +-MAX, +-MIN, the least
    and greatest subnormals, the rte examples 0.5 1.5 2.5 3.5 and -0.5, and 2**31, 2**63, 2**64."""
    nb, p, _, _, ebits = FLOATS[name]
    mbits = p - 1
    expall = ((1 << ebits) - 1) << mbits
    sign = 1 << (nb - 1)
    bits = [0, 1, (1 << mbits) - 1, 1 << mbits, expall - 1, expall, expall | 1, expall | (1 << (mbits - 1))]
    with np.errstate(all="ignore"):
        vals = np.array([0.5, 1.5, 2.5, 3.5, 2.0**31, 2.0**63, 2.0**64], np.float64).astype(NP[name])
    return np.concatenate([_from_bits(bits + [b | sign for b in bits], name), vals, -vals])


def _float_specials(name: str) -> np.ndarray:
    dt = NP[name]
    nb, p, emin, emax, ebits = FLOATS[name]
    vals: list[float] = [0.0, 1.0, 0.5, 1.5, 2.5, 3.5, 4.5, 0.25, 0.75]
    for k in range(0, 66):
        vals += [2.0**k, 2.0**k + 0.5, 2.0**-k]
    for lo, hi in map(int_range, INTS):
        vals += [float(lo), float(hi), lo - 0.5, hi + 0.5, lo - 1.0, hi + 1.0, hi - 0.5, lo + 0.5]
    for other in FLOATS:  # boundaries of every floating type (as values of this one)
        _, po, emino, emaxo, _ = FLOATS[other]
        mx = float(float_max(other))
        ulp_top = 2.0 ** (emaxo - po + 1)
        vals += [mx, mx + ulp_top / 2 if emaxo < 1023 else mx, 2.0**emino, 2.0 ** (emino - po + 1),
                 2.0 ** (emino - po), 1.5 * 2.0 ** (emino - po + 1), 2.0**emino - 2.0 ** (emino - po + 1)]
    with np.errstate(all="ignore"):
        a = np.array(vals, dtype=np.float64).astype(dt)
    a = np.concatenate([a, -a])
    a = _neighbours(a)
    # subnormals, NaNs (quiet and signalling, both signs, payloads), infinities, MAX
    mbits = p - 1
    expall = ((1 << ebits) - 1) << mbits
    sign = 1 << (nb - 1)
    special_bits = [1, 2, 3, (1 << mbits) - 1, (1 << mbits) - 2, 1 << (mbits - 1),
                    expall, expall | 1, expall | (1 << (mbits - 1)), expall | ((1 << mbits) - 1),
                    expall | (1 << (mbits - 1)) | 5, expall | 0x2A, expall - 1, 1 << mbits]
    special_bits += [b | sign for b in special_bits]
    return np.concatenate([a, _from_bits(special_bits, name)])


def _float_random(name: str, rng: np.random.Generator, n: int) -> np.ndarray:
    dt = NP[name]
    nb, p, emin, emax, ebits = FLOATS[name]
    parts = []
    # ties k + 0.5 at every magnitude representable in this type, and neighbours
    j = rng.integers(0, p - 1, size=n // 4)
    k = np.floor(rng.random(n // 4) * np.exp2(j)).astype(np.float64)
    ties = (k + 0.5) * np.where(rng.random(n // 4) < 0.5, -1.0, 1.0)
    parts.append(_neighbours(ties.astype(dt)))
    # ties at the precision of each narrower floating type (exact in this one), and neighbours
    for other, (_, po, emino, emaxo, _) in FLOATS.items():
        if po >= p:
            continue
        e = rng.integers(emino - po, emaxo + 1, size=n // 8)
        m = rng.integers(1 << (po - 1), 1 << po, size=n // 8).astype(np.float64)
        base = np.ldexp(m, (e - po + 1).astype(np.int32))
        sub = e < emino  # subnormal-range ties use the fixed subnormal quantum
        q = np.where(sub, 2.0 ** (emino - po + 1), np.ldexp(1.0, (e - po + 1).astype(np.int32)))
        base = np.where(sub, np.floor(rng.random(n // 8) * 2 ** (po - 1)) * q, base)
        t = (base + q / 2) * np.where(rng.random(n // 8) < 0.5, -1.0, 1.0)
        with np.errstate(all="ignore"):
            parts.append(_neighbours(t.astype(dt)))
    # integers near the ranges of the integer types
    e = rng.integers(0, 66, size=n // 8)
    ints = np.floor(rng.random(n // 8) * np.exp2(e)) * np.where(rng.random(n // 8) < 0.5, -1.0, 1.0)
    with np.errstate(all="ignore"):
        parts.append(_neighbours(ints.astype(dt)))
    # random subnormals and uniform bit patterns
    sub = rng.integers(1, 1 << (p - 1), size=n // 16, dtype=np.uint64)
    sub |= rng.integers(0, 2, size=n // 16, dtype=np.uint64) << np.uint64(nb - 1)
    parts.append(_from_bits(sub.astype(UNSIGNED[nb]), name))
    parts.append(_from_bits(rng.integers(0, 2**nb, size=n // 2, dtype=np.uint64).astype(UNSIGNED[nb]), name))
    return np.concatenate(parts)


def sample(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` edge-biased values of type ``name``: its core values, then up to a quarter drawn from
    its special values (limits, powers of two, ties, NaN payloads, ...), the rest from freshly generated structured
    random values (ties and their neighbours at random magnitudes, uniform bit patterns, ...)."""
    if name in FLOATS:
        core, specials, fresh = _float_core(name), _float_specials(name), _float_random(name, rng, n)
    else:
        core = _int_core(name)
        specials, fresh = np.array(_int_specials(name), NP[name]), np.array(_int_random(name, rng, n), NP[name])
    k = min(len(specials), n // 4)
    head = np.concatenate([core, specials[rng.permutation(len(specials))[:k]]])[:n]
    k = len(head)
    return np.concatenate([head, rng.choice(fresh, n - k, replace=len(fresh) < n - k)]).astype(NP[name])


# --- bulk tests: >= 100,000 edge-biased values per family ------------------------------------

PER_FAMILY = 100_000


def _family(srcs, dsts, sats, roundings, seed: int) -> int:
    combos = [(s, d, sat, r) for s in srcs for d in dsts for sat in sats for r in roundings]
    per = -(-PER_FAMILY // len(combos))
    rng = np.random.default_rng(seed)
    total = 0
    for s, d, sat, r in combos:
        total += check(sample(s, per, rng), s, d, sat, r)
    return total


def test_bulk_int_to_int():
    # a rounding suffix on int -> int has no effect: spread the modes over the pairs
    n = _family(INTS, INTS, (False, True), (None, "rte", "rtp"), seed=1)
    assert n >= PER_FAMILY


def test_bulk_int_to_float():
    assert _family(INTS, FLOATS, (False,), (None, *MODES), seed=2) >= PER_FAMILY


def test_bulk_float_to_int():
    assert _family(FLOATS, INTS, (False, True), (None, *MODES), seed=3) >= PER_FAMILY


def test_bulk_float_to_float():
    assert _family(FLOATS, FLOATS, (False,), (None, *MODES), seed=4) >= PER_FAMILY


def test_every_special_value_every_combination():
    """All special values of every source type through every conversion (small, exhaustive)."""
    for s in (*INTS, *FLOATS):
        vals = _float_specials(s) if s in FLOATS else np.array(_int_specials(s), NP[s])
        rng = np.random.default_rng(5)
        vals = vals[rng.permutation(len(vals))[:160]]
        vals = np.concatenate([_float_core(s) if s in FLOATS else _int_core(s), vals])
        for d in (*INTS, *FLOATS):
            for r in (None, *MODES) if (s in FLOATS or d in FLOATS) else (None,):
                for sat in (False, True) if d in INTS else (False,):
                    check(vals, s, d, sat, r)


# --- the spec's worked examples, with literal expected values --------------------------------

INF = float("inf")
NAN = float("nan")
SPEC_EXAMPLES = [
    # (src, value, dst, sat, rounding, expected value) -- OpenCL C §6.4.3.2-4
    ("float", 0.5, "int", False, "rte", 0),
    ("float", 1.5, "int", False, "rte", 2),
    ("float", 2.5, "int", False, "rte", 2),
    ("float", -2.5, "int", False, "rte", -2),
    ("float", 3.5, "int", False, "rte", 4),
    ("float", -1.5, "int", False, "rtp", -1),
    ("float", -1.5, "int", False, "rtn", -2),
    ("float", -1.5, "int", False, None, -1),
    ("float", 2147483520.0, "int", False, None, 2147483520),
    ("int", 16777217, "float", False, None, 16777216.0),
    ("int", 16777217, "float", False, "rtp", 16777218.0),
    ("int", 16777217, "float", False, "rtn", 16777216.0),
    ("int", 16777219, "float", False, "rte", 16777220.0),
    ("long", 2**53 + 1, "double", False, None, 2.0**53),
    ("long", 2**53 + 1, "double", False, "rtp", 2.0**53 + 2),
    ("ulong", 2**64 - 1, "float", False, None, 2.0**64),
    ("ulong", 2**64 - 1, "float", False, "rtz", 2.0**64 - 2.0**40),
    ("long", -(2**63), "float", False, None, -(2.0**63)),
    ("float", -0.5, "uint", True, None, 0),
    ("float", NAN, "int", True, None, 0),
    ("float", INF, "int", True, None, 2**31 - 1),
    ("float", -INF, "int", True, None, -(2**31)),
    ("float", 2.0**63, "long", True, None, 2**63 - 1),
    ("float", 2.0**64, "ulong", True, None, 2**64 - 1),
    ("double", 2.0**64 - 2048, "ulong", False, None, 2**64 - 2048),
    ("float", -(2.0**63), "long", False, None, -(2**63)),
    ("short", 300, "char", True, None, 127),
    ("short", -300, "char", True, None, -128),
    ("short", -5, "ushort", True, None, 0),
    ("short", -32768, "ushort", True, None, 0),
    ("short", 300, "char", False, None, 44),  # two's-complement truncation (convert.int.wrap)
    ("int", -1, "uint", False, None, 2**32 - 1),
    ("double", 1e39, "float", False, "rtz", float(np.finfo(np.float32).max)),
    ("double", 1e39, "float", False, "rtn", float(np.finfo(np.float32).max)),
    ("double", 1e39, "float", False, "rtp", INF),
    ("double", 1e39, "float", False, None, INF),
    ("double", -1e39, "float", False, "rtp", -float(np.finfo(np.float32).max)),
    ("double", -1e39, "float", False, "rtn", -INF),
    ("float", 65520.0, "half", False, None, INF),
    ("float", 65520.0, "half", False, "rtz", 65504.0),
    ("float", 65519.0, "half", False, None, 65504.0),
    ("float", -65520.0, "half", False, "rtp", -65504.0),
    ("half", 65504.0, "float", False, None, 65504.0),
    ("float", 2.0**-25, "half", False, None, 0.0),  # tie between 0 and the least subnormal: even
    ("float", 2.0**-25 * 3, "half", False, None, 2.0**-23),
]


@pytest.mark.parametrize("src,x,dst,sat,rnd,want", SPEC_EXAMPLES)
def test_spec_examples(src, x, dst, sat, rnd, want):
    values = np.array([x], NP[src])
    got = cv.convert(values, src, dst, saturate=sat, rounding=rnd)
    assert bool(cv.defined(values, src, dst, saturate=sat, rounding=rnd)[0])
    if dst in FLOATS:
        assert bits_of(got) == bits_of(np.array([want], NP[dst]))
    else:
        assert int(got[0]) == want
    check(values, src, dst, sat, rnd)  # and the independent reference agrees


def test_spec_example_ushort4_sat_negative_shorts():
    """§6.4.3.4 example 1: convert_ushort4_sat(short4) clamps negative values to 0."""
    s = np.array([-1, -32768, -2, 7], np.int16)
    assert cv.convert(s, "short", "ushort", saturate=True).tolist() == [0, 0, 0, 7]
    c = np.array([300, -300, 127, -128], np.int16)
    assert cv.convert(c, "short", "char", saturate=True).tolist() == [127, -128, 127, -128]


# --- hypothesis: random values and the pinned worked examples --------------------------------

float_values = st.one_of(
    st.tuples(st.just("half"), st.floats(width=16)),
    st.tuples(st.just("float"), st.floats(width=32)),
    st.tuples(st.just("double"), st.floats(width=64)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=float_values, dst=st.sampled_from(list(INTS)), sat=st.booleans(), rnd=st.sampled_from([None, *MODES]))
@example(x=("float", 0.5), dst="int", sat=False, rnd="rte")
@example(x=("float", 1.5), dst="int", sat=False, rnd="rte")
@example(x=("float", 2.5), dst="int", sat=False, rnd="rte")
@example(x=("float", -2.5), dst="int", sat=False, rnd="rte")
@example(x=("float", 3.5), dst="int", sat=False, rnd="rte")
@example(x=("float", -1.5), dst="int", sat=False, rnd="rtp")
@example(x=("float", -1.5), dst="int", sat=False, rnd="rtn")
@example(x=("float", -0.5), dst="uint", sat=True, rnd=None)
@example(x=("float", -0.5), dst="uint", sat=False, rnd=None)
@example(x=("float", NAN), dst="int", sat=True, rnd=None)
@example(x=("float", INF), dst="int", sat=True, rnd=None)
@example(x=("float", 2.0**63), dst="long", sat=True, rnd=None)
@example(x=("float", 2.0**64), dst="ulong", sat=True, rnd=None)
@example(x=("double", 2147483647.5), dst="int", sat=False, rnd=None)
@example(x=("double", 2147483647.5), dst="int", sat=True, rnd="rtp")
@example(x=("double", -0.0), dst="uint", sat=False, rnd="rtn")
def test_hyp_float_to_int(x, dst, sat, rnd):
    src, v = x
    check(np.array([v], NP[src]), src, dst, sat, rnd)


@settings(max_examples=300, deadline=None)
@given(x=float_values, dst=st.sampled_from(list(FLOATS)), rnd=st.sampled_from([None, *MODES]))
@example(x=("double", 1e39), dst="float", rnd="rtz")
@example(x=("double", 1e39), dst="float", rnd="rtn")
@example(x=("double", -1e39), dst="float", rnd="rtp")
@example(x=("float", 65520.0), dst="half", rnd="rte")
@example(x=("float", 65520.0), dst="half", rnd="rtz")
@example(x=("double", 1e-40), dst="float", rnd=None)
@example(x=("double", 1e-320), dst="half", rnd="rtp")
@example(x=("double", -1e-320), dst="float", rnd="rtn")
@example(x=("float", NAN), dst="double", rnd=None)
@example(x=("half", -INF), dst="float", rnd="rtz")
def test_hyp_float_to_float(x, dst, rnd):
    src, v = x
    with np.errstate(all="ignore"):
        check(np.array([v], NP[src]), src, dst, False, rnd)


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    src=st.sampled_from(list(INTS)),
    dst=st.sampled_from([*INTS, *FLOATS]),
    sat=st.booleans(),
    rnd=st.sampled_from([None, *MODES]),
)
def test_hyp_int_sources(data, src, dst, sat, rnd):
    lo, hi = int_range(src)
    v = data.draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 2**24 + 1, 2**53 + 1]).filter(lambda t: lo <= t <= hi)))
    values = np.array([v], NP[src])
    if dst in FLOATS:
        sat = False
    check(values, src, dst, sat, rnd)


# --- defined() against the independent definition -------------------------------------------


def test_defined_is_operand_in_range():
    """§6.4.3.3: float -> int without _sat is defined exactly when min <= x <= max (operand)."""
    rng = np.random.default_rng(6)
    for s in FLOATS:
        for d in INTS:
            lo, hi = int_range(d)
            vals = sample(s, 2000, rng)
            extra = np.array([hi + 0.5, lo - 0.5, -0.5, -0.0, 0.0, float(hi), float(lo)], np.float64)
            with np.errstate(all="ignore"):
                vals = np.concatenate([vals, _neighbours(extra.astype(NP[s]))])
            for rnd in (None, "rtp", "rtn"):
                dfd = cv.defined(vals, s, d, rounding=rnd)
                for x, ok in zip(vals.tolist(), dfd.tolist()):
                    want = not (math.isnan(x) or math.isinf(x)) and lo <= Fraction(x) <= hi
                    assert ok == want, (s, d, x, rnd)
                assert cv.defined(vals, s, d, saturate=True, rounding=rnd).all()
    for s in INTS:
        for d in (*INTS, *FLOATS):
            assert cv.defined(sample(s, 200, rng), s, d).all()


def test_defined_examples():
    f = np.array([2147483647.5, 2147483647.0, -2147483648.0, -2147483648.5, -0.5, -0.0], np.float64)
    assert cv.defined(f, "double", "int").tolist() == [False, True, True, False, True, True]
    assert cv.defined(f, "double", "uint").tolist() == [True, True, False, False, False, True]
    g = np.array([NAN, INF, -INF, 2.0**63, np.nextafter(2.0**63, 0)], np.float64)
    assert cv.defined(g, "double", "long").tolist() == [False, False, False, False, True]
    assert cv.defined(np.array([2.0**64, 2.0**64 - 2048], np.float64), "double", "ulong").tolist() == [False, True]


# --- robustness ---------------------------------------------------------------------------------


def test_no_warnings_and_api_errors():
    rng = np.random.default_rng(7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            for s in (*INTS, *FLOATS):
                vals = sample(s, 300, rng)
                for d in (*INTS, *FLOATS):
                    for sat in (False, True) if d in INTS else (False,):
                        for rnd in (None, *MODES):
                            cv.convert_all(vals, s, d, saturate=sat, rounding=rnd)
                            e = cv.expect_convert(Expectation.exact(s, vals), d, saturate=sat, rounding=rnd, ftz=frozenset(FLOATS))
                            assert len(e) == len(vals)
    with pytest.raises(ValueError):
        cv.convert(np.zeros(1, np.float32), "float", "double", saturate=True)
    with pytest.raises(ValueError):
        cv.convert(np.zeros(1, np.float32), "float", "int", rounding="rtx")
    with pytest.raises(TypeError):
        cv.convert(np.zeros(1, np.float64), "float", "int")
    with pytest.raises(KeyError):
        cv.convert(np.zeros(1, np.float32), "float", "bool")
    assert cv.convert(np.zeros(0, np.float32), "float", "int").shape == (0,)


def test_numpy_rte_casts_agree_with_reference():
    """Other oracles cast with numpy (astype) for rte; check that numpy is correctly rounded for the
    casts they use (float/double -> half, double -> float, integers -> float/double)."""
    rng = np.random.default_rng(8)
    for s, d in [("float", "half"), ("double", "half"), ("double", "float")]:
        vals = sample(s, 3000, rng)
        vals = vals[~np.isnan(vals)]
        with np.errstate(all="ignore"):
            got = bits_of(vals.astype(NP[d]))
        for b, g in zip(bits_of(vals), got):
            assert g == reference(b, s, d, False, None)[0], (s, d, hex(b))
    for s in INTS:
        for d in ("float", "double"):
            vals = sample(s, 1500, rng)
            got = bits_of(vals.astype(NP[d]))
            for b, g in zip(bits_of(vals), got):
                assert g == reference(b, s, d, False, None)[0], (s, d, hex(b))


# --- expect_convert ---------------------------------------------------------------------------

F32_MIN_SUB = np.array([1], np.uint32).view(np.float32)[0]


def allowed_sets(e: Expectation) -> list[set[int]]:
    return [set(col) for col in zip(*(a.tolist() for a in e.allowed))]


def f32bits(x: float) -> int:
    return bits_of(np.array([x], np.float32))[0]


def test_expect_ftz_input_flush_to_int():
    arg = Expectation.exact("float", np.array([F32_MIN_SUB, 1.5], np.float32))
    plain = cv.expect_convert(arg, "int", rounding="rtp")
    assert allowed_sets(plain) == [{1}, {2}]
    flushed = cv.expect_convert(arg, "int", rounding="rtp", ftz=frozenset({"float"}))
    assert allowed_sets(flushed) == [{1, 0}, {2}]
    assert flushed.judged.all() and not flushed.any_nan.any()
    assert R.rule(int(flushed.rule[0])).id == "convert.ftz"
    assert R.rule(int(flushed.rule[1])).id == "convert.float_to_int.round"
    assert flushed.accepts(np.array([0, 2], np.uint32)).all()
    assert not flushed.accepts(np.array([0, 1], np.uint32))[1]
    # flushing of another type does not apply
    assert allowed_sets(cv.expect_convert(arg, "int", rounding="rtp", ftz=frozenset({"half"}))) == [{1}, {2}]


def test_expect_ftz_output_flush_double_to_float():
    x = np.array([1e-40, 1e-50, 1.0, -1e-40, 2.0**-126], np.float64)
    arg = Expectation.exact("double", x)
    want = [f32bits(v) for v in x.astype(np.float32)]
    assert want[0] != 0
    plain = cv.expect_convert(arg, "float")
    assert allowed_sets(plain) == [{w} for w in want]
    fl = cv.expect_convert(arg, "float", ftz=frozenset({"float"}))
    z, nz = 0, 0x80000000
    assert allowed_sets(fl) == [{want[0], z, nz}, {z, nz}, {want[2]}, {want[3], z, nz}, {want[4]}]
    assert len(fl.allowed) == 3  # reference + the two zeros, packed
    # the source is normal in double: ftz of double adds nothing
    assert allowed_sets(cv.expect_convert(arg, "float", ftz=frozenset({"double"}))) == [{w} for w in want]
    # rounds up to FLT_MIN: still subnormal before rounding, so it may be flushed
    just_below = np.array([np.nextafter(2.0**-126, 0)], np.float64)
    e = cv.expect_convert(Expectation.exact("double", just_below), "float", ftz=frozenset({"float"}))
    assert allowed_sets(e) == [{f32bits(2.0**-126), z, nz}]


def test_expect_ftz_input_flush_float_to_double_and_identity():
    x = np.array([F32_MIN_SUB, -F32_MIN_SUB, 1.0], np.float32)
    e = cv.expect_convert(Expectation.exact("float", x), "double", ftz=frozenset({"float"}))
    db = bits_of(x.astype(np.float64))
    assert allowed_sets(e) == [{db[0], 0, 1 << 63}, {db[1], 0, 1 << 63}, {db[2]}]
    # a conversion to the same type has no effect (§6.4.3.1): no flush alternatives
    same = cv.expect_convert(Expectation.exact("float", x), "float", ftz=frozenset({"float"}))
    assert allowed_sets(same) == [{b} for b in bits_of(x)]


def test_expect_any_nan_propagation():
    x = np.array([1.0, 2.5, NAN, -7.0], np.float32)
    arg = Expectation("float", [x.view(np.uint32)], np.ones(4, bool), np.array([False, True, True, False]))
    d = cv.expect_convert(arg, "double")
    assert d.any_nan.tolist() == [False, True, True, False]
    assert d.judged.all()
    s = cv.expect_convert(arg, "int", saturate=True)
    assert allowed_sets(s) == [{1}, {2, 0}, {0}, {(-7) & 0xFFFFFFFF}]
    assert not s.any_nan.any() and s.judged.all()
    assert R.rule(int(s.rule[2])).id == "convert.sat.nan"
    u = cv.expect_convert(arg, "int")
    assert u.judged.tolist() == [True, False, False, True]
    assert R.rule(int(u.rule[1])).id == "convert.float_to_int.out_of_range"
    h = cv.expect_convert(arg, "half", rounding="rtz")
    assert h.any_nan.tolist() == [False, True, True, False]
    # NaN candidates of a judged lane: any NaN is accepted, a number is not
    acc = d.accepts(np.array([0x7FF0000000000001, 0xFFF8000000000000, 0x7FF8000000000000, 0xC01C000000000000], np.uint64))
    assert acc.tolist() == [False, True, True, True]
    assert not d.accepts(np.array([0, 0, 0, 0], np.uint64))[2]


def test_expect_multiple_candidates_and_unjudged():
    a0 = np.array([1.0, 1.0, 5.0, 3e9], np.float32)
    a1 = np.array([1.0, 3e9, 6.0, 3e9], np.float32)
    judged = np.array([True, True, True, False])
    rule_in = np.array([0, 0, 0, 1], np.int16)
    arg = Expectation("float", [a0.view(np.uint32), a1.view(np.uint32)], judged, np.zeros(4, bool), rule_in)
    e = cv.expect_convert(arg, "int")
    assert e.judged.tolist() == [True, False, True, False]  # 3e9 is out of range in lane 1
    assert allowed_sets(e)[0] == {1} and allowed_sets(e)[2] == {5, 6}
    assert int(e.rule[3]) == 1  # the unjudged operand's rule is kept
    assert R.rule(int(e.rule[1])).id == "convert.float_to_int.out_of_range"
    es = cv.expect_convert(arg, "int", saturate=True)
    assert es.judged.tolist() == [True, True, True, False]
    assert allowed_sets(es)[1] == {1, 2**31 - 1}


def test_expect_candidate_arrays_stay_few():
    rng = np.random.default_rng(9)
    x = sample("float", 5000, rng)
    arg = Expectation.exact("float", x).with_alternatives([np.where(np.isnan(x), x, -x).view(np.uint32)])
    for d, r in [("half", None), ("half", "rtp"), ("int", "rtn"), ("double", None)]:
        sat = d == "int"
        e = cv.expect_convert(arg, d, saturate=sat, rounding=r, ftz=frozenset({"float", "half"}))
        assert 1 <= len(e.allowed) <= 5
        # every (candidate, plain conversion) is allowed
        for c in arg.candidates():
            conv, dfd, _ = cv.convert_all(c, "float", d, saturate=sat, rounding=r)
            cb = np.ascontiguousarray(conv).view(UNSIGNED[np.dtype(NP[d]).itemsize * 8])
            ok = e.accepts(cb)
            assert ok.all()
        # a value far from every candidate is rejected somewhere
        assert not e.accepts(np.full(len(x), 0x1234, UNSIGNED[np.dtype(NP[d]).itemsize * 8])).all()
