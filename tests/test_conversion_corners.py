"""Float-to-float conversion corners (lang.corners.conversions, OpenCL C 3.0.19 §6.4.3.2, §7.4,
footnote [17]): the classes against an independent classifier in exact rational arithmetic, the
sweep's representatives, and the oracle's results on them against exact rounding
(``tests.exact``: ``fractions``, no code shared with the oracle), with a few worked by hand."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from fuzz.strategies import sweep_programs
from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.conversions import float_conversion_representatives
from lang.corners import table
from lang.corners.conversions import classes, forms, value_classes
from lang.ir import Op, walk
from lang.policy import Policy
from oracles.conversions import convert
from tests import exact

PAIRS = [(s, d) for s in ("half", "float", "double") for d in ("half", "float", "double") if s != d]
MODES = (None, "rte", "rtz", "rtp", "rtn")


def _bits(values: np.ndarray, name: str) -> list[int]:
    return [int(b) for b in values.view(exact.UNSIGNED[exact.FLOATS[name][0]])]


def independent_class(bits: int, src: str, dst: str) -> str:
    """The class of a ``src`` value against ``dst`` by the definitions of lang.corners.conversions."""
    q, neg = exact.decode(bits, src)
    if q == "nan":
        return "nan"
    sign = "-" if neg else "+"
    if q == "inf" or q == 0:
        return sign + ("inf" if q == "inf" else "0")
    a = abs(q)
    _, ps, emin_s, _, _ = exact.FLOATS[src]
    _, pd, emin, emax, _ = exact.FLOATS[dst]
    e = math.floor(math.log2(a)) if a < 2**1000 else 1000
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    if exact.FLOATS[src][0] < exact.FLOATS[dst][0]:
        return sign + ("sub" if e < emin_s else "normal")
    least, top, top_half = Fraction(2) ** (emin - pd + 1), exact.float_max(dst), Fraction(2) ** (emax - pd)
    edges = [(a > top + top_half, "overflow"), (a == top + top_half, "max-tie"), (a > top, "above-max"),
             (a < least / 2, "below-half-least"), (a == least / 2, "half-least"), (a < least, "above-half-least")]
    for hit, kind in edges:
        if hit:
            return sign + kind
    quantum = Fraction(2) ** (max(e, emin) - pd + 1)
    own = Fraction(2) ** (max(e, emin_s) - ps + 1)
    tie = (math.floor(a / quantum) + Fraction(1, 2)) * quantum
    position = ("exact" if (a / quantum).denominator == 1 else "tie" if a == tie
                else "near-tie" if abs(a - tie) == own else "other")
    return sign + ("sub-" if e < emin else "") + position


def _sample(src: str, dst: str) -> list[int]:
    """Every representative, and values around random ``dst`` numbers: each, the midpoint above
    it and that midpoint's ``src`` neighbours, and random ``src`` bit patterns."""
    s, d = exact.NP[src], exact.NP[dst]
    rng = np.random.default_rng(7)
    nd, ns = exact.FLOATS[dst][0], exact.FLOATS[src][0]
    with np.errstate(all="ignore"):
        y = rng.integers(0, 1 << nd, 400, dtype=np.uint64).astype(exact.UNSIGNED[nd]).view(d)
        y = y[np.isfinite(y) & np.isfinite(np.nextafter(y, d(np.inf)))]
        mid = (y.astype(s) + np.nextafter(y, d(np.inf)).astype(s)) / s(2)  # exact: p_dst + 1 <= p_src bits
        values = np.concatenate([y.astype(s), mid, np.nextafter(mid, s(np.inf)), np.nextafter(mid, s(-np.inf))])
        rand = rng.integers(0, 1 << ns, 400, dtype=np.uint64).astype(exact.UNSIGNED[ns])
    reps = [b for v in float_conversion_representatives(src, dst).values() for b in v]
    return reps + _bits(values, src) + [int(b) for b in rand]


@pytest.mark.parametrize("src,dst", PAIRS)
def test_classes_agree_with_exact_arithmetic(src, dst):
    reps = float_conversion_representatives(src, dst)
    assert set(reps) == set(classes(src, dst)) and all(reps.values())
    dtype = exact.NP[src]
    for b in _sample(src, dst):
        value = np.array([b], exact.UNSIGNED[exact.FLOATS[src][0]]).view(dtype)
        assert value_classes(value, src, dst) == {independent_class(b, src, dst)}, (src, dst, hex(b))


@pytest.mark.parametrize("src,dst", PAIRS)
def test_oracle_rounds_every_class_exactly_in_every_mode(src, dst):
    bits = _sample(src, dst)
    values = np.array(bits, exact.UNSIGNED[exact.FLOATS[src][0]]).view(exact.NP[src])
    for mode in MODES:
        got = _bits(convert(values, src, dst, rounding=mode), dst)
        for b, g in zip(bits, got):
            q, neg = exact.decode(b, src)
            if q == "nan":
                assert exact.decode(g, dst)[0] == "nan"
                continue
            want = exact.encode(dst, neg, 2 ** exact.FLOATS[dst][4] - 1, 0) if q == "inf" else \
                exact.round_to_float(q, neg, dst, mode or "rte")[0]
            assert g == want, (src, dst, mode, hex(b), hex(g), hex(want))


HAND = [  # (src, value, dst, rounding, expected): worked from §6.4.3.2, footnote [17], IEEE 754 §4.3
    ("double", 65520.0, "half", None, math.inf),  # MAX + half an ulp: the tie goes to even, past MAX
    ("double", 65520.0, "half", "rtz", 65504.0),
    ("double", -65520.0, "half", "rtn", -math.inf),
    ("double", -65520.0, "half", "rtp", -65504.0),
    ("double", 65519.0, "half", None, 65504.0),  # beyond MAX but below the tie
    ("float", 65505.0, "half", "rtp", math.inf),
    ("double", 2.0**-25, "half", None, 0.0),  # half the least subnormal: tie to even, 0
    ("double", 2.0**-25, "half", "rtp", 2.0**-24),
    ("float", 2.0**-25 + 2.0**-40, "half", None, 2.0**-24),
    ("float", -(2.0**-26), "half", "rtn", -(2.0**-24)),
    ("float", -(2.0**-26), "half", "rtz", -0.0),
    ("double", 1 + 2.0**-24, "float", None, 1.0),
    ("double", 1 + 3 * 2.0**-24, "float", None, 1 + 2.0**-22),
    ("double", 1 + 2.0**-24, "float", "rtp", 1 + 2.0**-23),
    ("double", 1.5 * 2.0**-149, "float", None, 2.0**-148),  # a subnormal tie: to the even multiple
    ("double", 2.5 * 2.0**-149, "float", None, 2.0**-148),
    ("double", 2.0**128 - 2.0**103, "float", "rtz", float(np.finfo(np.float32).max)),
    ("float", 2.0**-149, "double", "rtn", 2.0**-149),  # widening: exact
    ("half", -(2.0**-24), "float", None, -(2.0**-24)),
]


@pytest.mark.parametrize("src,value,dst,rounding,want", HAND)
def test_hand_worked_conversions(src, value, dst, rounding, want):
    want_bits = _bits(np.array([want], exact.NP[dst]), dst)
    assert _bits(convert(np.array([value], exact.NP[src]), src, dst, rounding=rounding), dst) == want_bits
    assert [exact.round_to_float(Fraction(value), value < 0, dst, rounding or "rte")[0]] == want_bits


def test_table_and_sweep_cover_every_pair_and_mode_without_sat():
    names = {c.name for c in table()}
    for src, dst in PAIRS:
        assert forms(src, dst) == [f"to={dst}"] + [f"to={dst}:{r}" for r in ("rte", "rtz", "rtp", "rtn")]
        assert all(f"convert:{src}:{f}:x={c}" in names for f in forms(src, dst) for c in classes(src, dst))
    assert not any(":sat" in n for n in names if n.startswith("convert:") and n.split(":")[2] in (
        "to=half", "to=float", "to=double"))
    seen = set()
    for p in sweep_programs("conversions", Caps(fp64=True, fp16=True, versions=frozenset({"cl2.0"})), Policy()):
        for s in p.body:
            for n in walk(s.value):
                if isinstance(n, Op) and n.op == "convert" and n.type.elem.is_float and n.args[0].type.elem.is_float:
                    assert not n.attr("sat")
                    seen.add((n.args[0].type.scalar, n.type.scalar, n.attr("rounding")))
                    needs = {"double": "fp64", "half": "fp16"}
                    assert {needs[t] for t in (n.type.scalar, n.args[0].type.scalar) if t in needs} <= p.requires
    assert {(s, d, m) for s, d in PAIRS for m in MODES} <= seen
    without = sweep_programs("conversions", Caps(), Policy())
    assert not any('"half' in p.to_json() or '"double' in p.to_json() for p in without)
