"""One output lane of a math built-in (:class:`Lane`: what the spec allows it to hold, with its
rule and error scale), the packing of lanes into an :class:`oracles.expect.Expectation`, and the
operand values a lane-wise function may see (:func:`operand_values`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from mpmath import mpf

from lang.types import scalar
from oracles import rules
from oracles.expect import ErrorScale, Expectation
from oracles.floats import fmt
from oracles.math.specials import NAN, signaling


@dataclass
class Lane:
    """What one output lane may hold."""

    values: list = field(default_factory=list)  # exact candidates (floats, or ints for int results); [0] the reference
    ranges: list = field(default_factory=list)  # (lo, hi) inclusive intervals of values
    nan: bool = False  # any NaN
    judged: bool = True
    masks: list = field(default_factory=list)  # (mask, value): accepted where actual & mask == value
    rule: str = "unspecified"
    exact: mpf | None = None  # the infinitely precise result, for the error measure
    ulp: float = math.nan
    limit: float = math.nan  # the bound in ulps (0.5 for a correctly rounded result)

    def merge(self, other: "Lane") -> "Lane":
        """Either lane's results (a flushed operand's alternative, §7.5.3); not judged where either
        is not, under the rule both name if they name one."""
        if not (self.judged and other.judged):
            return unjudged(self.rule if not (self.judged or other.judged) and self.rule == other.rule
                            else "unspecified")
        values = self.values + [v for v in other.values if not any(same(v, w) for w in self.values)]
        return Lane(values, self.ranges + other.ranges, self.nan or other.nan, True, self.masks + other.masks,
                    self.rule, self.exact, self.ulp, self.limit)


def same(a, b) -> bool:
    """The same result: equal with the same sign (floats), or both NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b) or (math.isnan(a) and math.isnan(b))
    return a == b


def unjudged(rule: str = "unspecified") -> Lane:
    """A lane that is not compared (``rule``: why, where a rule says so, e.g. a result the spec
    leaves undefined)."""
    return Lane([0.0], judged=False, rule=rule)


def nan_lane(rule: str) -> Lane:
    """A lane that may hold any NaN."""
    return Lane([NAN], nan=True, rule=rule)


def pack(lanes: list[Lane], tname: str) -> Expectation:
    """Lanes as an Expectation of ``tname`` (a float type, or int for ilogb/frexp/remquo/lgamma_r)."""
    s = scalar(tname)
    n = len(lanes)
    k = max(1, max(len(lane.values) for lane in lanes))
    r = max((len(lane.ranges) for lane in lanes), default=0)
    m = max((len(lane.masks) for lane in lanes), default=0)
    values = np.zeros((k, n), s.dtype)
    ranges = [(np.full(n, np.inf if s.is_float else s.max, s.dtype), np.full(n, -np.inf if s.is_float else s.min,
                                                                               s.dtype)) for _ in range(r)]
    masks = [(np.zeros(n, s.bits_dtype), np.ones(n, s.bits_dtype)) for _ in range(m)]
    judged, nan = np.zeros(n, bool), np.zeros(n, bool)
    rule = np.zeros(n, np.int16)
    hi, lo, unit, limit = np.full(n, np.nan), np.zeros(n), np.full(n, np.nan), np.full(n, np.nan)
    with np.errstate(over="ignore"):
        for i, lane in enumerate(lanes):
            vals = lane.values or [0.0]
            for j in range(k):
                values[j, i] = vals[min(j, len(vals) - 1)]
            for j, (a, b) in enumerate(lane.ranges):
                ranges[j][0][i], ranges[j][1][i] = a, b
            for j, (mask, value) in enumerate(lane.masks):
                masks[j][0][i], masks[j][1][i] = mask, value
            judged[i], nan[i] = lane.judged, lane.nan
            rule[i] = rules.index(lane.rule)
            if lane.exact is not None and lane.judged:
                hi[i] = float(lane.exact)
                lo[i] = float(lane.exact - mpf(hi[i])) if math.isfinite(hi[i]) else 0.0
                unit[i], limit[i] = lane.ulp, lane.limit
    allowed = values.view(s.bits_dtype) if s.is_float else values.astype(s.bits_dtype)
    return Expectation(tname, list(allowed), judged, nan, rule, ranges, masks=masks,
                       error=ErrorScale(hi, lo, unit, limit) if s.is_float and np.isfinite(unit).any() else None)


def operand_values(e: Expectation, tname: str) -> list[list | None]:
    """Per lane, the operand values a lane-wise function may see: the allowed candidates of a
    decided lane (a NaN of each sign for an any-NaN lane: its sign is not specified either), or
    None where the operand is not pinned (not judged, or only bounded)."""
    s = scalar(tname)
    n = len(e)
    decided = e.judged.copy()
    for lo, hi in e.ranges:
        decided &= ~(lo <= hi)
    for mask, _ in e.masks:
        decided &= mask == 0
    cands = [a.view(s.dtype) if s.is_float else a.astype(s.bits_dtype).view(s.dtype) for a in e.allowed]
    quiet = 1 << (fmt(tname).p - 2) if s.is_float else 0  # the quiet bit: the top fraction bit
    out: list[list | None] = []
    for i in range(n):
        if not decided[i]:
            out.append(None)
            continue
        vals = []
        for a, c in zip(e.allowed, cands):
            v = float(c[i]) if s.is_float else int(c[i])
            if s.is_float and math.isnan(v) and not int(a[i]) & quiet:  # widening quiets it: keep it signaling
                v = signaling(bool(int(a[i]) >> (s.bits - 1)))
            if not any(same(v, w) for w in vals):
                vals.append(v)
        if e.any_nan[i]:  # any NaN, of either sign (copysign and signbit read it)
            vals = [v for v in vals if not (isinstance(v, float) and math.isnan(v))] + [NAN, -NAN]
        out.append(vals)
    return out
