"""Expectations: what the specification allows an output lane to hold, with the rule that says so.

An oracle never returns a bare value. For every lane it returns

* ``allowed``: one or more candidate bit patterns (``allowed[0]`` is the reference result; the
  others are what a spec rule also permits, e.g. a zero of either sign where denormals may be
  flushed, OpenCL C 3.0 §7.5.3);
* ``any_nan``: the lane may hold any NaN of its type (NaN payload and sign are not specified,
  SPIR-V environment §6.7.1 / OpenCL C §7.5.1);
* ``ranges``: intervals ``(lo, hi)`` of values (typed arrays; an empty interval has lo > hi) a
  lane may also hold, for rules that bound an error instead of pinning bits (the ULP bound of
  normalized image data, OpenCL C 3.0 §8.3.1; a filtered read's hull, chapter 8);
* ``masks``: ``(mask, value)`` pairs: a lane is also accepted where ``actual & mask == value``
  (remquo's quotient: only its sign and low 7 bits are specified, OpenCL C 3.0 §6.15.2);
* ``judged``: False where the result is implementation-defined or undefined (e.g. OpenCL C
  §6.4.3.3): such a lane is never compared;
* ``rule``: the index into :data:`oracles.rules.RULES` of the rule that decides the lane.

Bits are compared as raw unsigned integers of the lane's width, never as floats.

``error`` (:class:`ErrorScale`), where an oracle bounds an error in ulps, holds each lane's
infinitely precise reference and ulp, so the judge can measure the error a result has (OpenCL C
3.0 §7.4) whether or not it is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from lang.types import scalar


def as_bits(values: np.ndarray) -> np.ndarray:
    """The raw bit patterns of ``values`` as unsigned integers of the same width."""
    values = np.ascontiguousarray(values)
    return values.view(np.dtype(f"u{values.dtype.itemsize}"))


def is_nan_bits(bits: np.ndarray, scalar_name: str) -> np.ndarray:
    """Which bit patterns encode a NaN of the floating-point type ``scalar_name``."""
    s = scalar(scalar_name)
    return np.isnan(np.ascontiguousarray(bits).astype(s.bits_dtype, copy=False).view(s.dtype))


def _bits_of(a: np.ndarray, scalar_name: str) -> np.ndarray:
    """Candidate bit patterns: a float array is reinterpreted (never converted by value)."""
    a = np.ascontiguousarray(a)
    bits = scalar(scalar_name).bits_dtype
    if a.dtype.kind == "f":
        a = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a.astype(bits, copy=False)


@dataclass
class ErrorScale:
    """Per lane: the infinitely precise reference as a double-double ``hi + lo``, its ulp in the
    lane's type and the bound in ulps the rule allows (NaN where no error is measured, or the
    bound is not in ulps)."""

    hi: np.ndarray
    lo: np.ndarray
    ulp: np.ndarray
    limit: np.ndarray

    def select(self, index: np.ndarray | slice) -> "ErrorScale":
        return ErrorScale(self.hi[index], self.lo[index], self.ulp[index], self.limit[index])

    @classmethod
    def none(cls, n: int) -> "ErrorScale":
        return cls(np.full(n, np.nan), np.zeros(n), np.full(n, np.nan), np.full(n, np.nan))

    def ulps(self, actual: np.ndarray) -> np.ndarray:
        """|actual - reference| / ulp(reference) per lane (NaN where not measured or not finite)."""
        with np.errstate(all="ignore"):
            a = actual.astype(np.float64)
            err = np.abs((a - self.hi) - self.lo) / self.ulp
        return np.where(np.isfinite(a) & np.isfinite(self.hi), err, np.nan)


@dataclass
class Expectation:
    """Allowed results for each lane of one typed array (see the module docstring)."""

    scalar: str
    allowed: list[np.ndarray]
    judged: np.ndarray
    any_nan: np.ndarray
    rule: np.ndarray = field(default=None)  # type: ignore[assignment]
    ranges: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    masks: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    error: ErrorScale | None = None

    def __post_init__(self) -> None:
        n = self.judged.shape[0]
        if self.rule is None:
            self.rule = np.zeros(n, dtype=np.int16)
        self.allowed = [_bits_of(a, self.scalar) for a in self.allowed]
        assert all(a.shape == (n,) for a in self.allowed)
        assert all(lo.shape == hi.shape == (n,) for lo, hi in self.ranges)

    @classmethod
    def exact(cls, scalar_name: str, values: np.ndarray, rule: int = 0) -> "Expectation":
        """Exactly ``values`` (a typed numpy array) in every lane, judged everywhere."""
        n = values.shape[0]
        return cls(
            scalar_name,
            [as_bits(values.astype(scalar(scalar_name).dtype, copy=False))],
            np.ones(n, bool),
            np.zeros(n, bool),
            np.full(n, rule, np.int16),
        )

    def __len__(self) -> int:
        return int(self.judged.shape[0])

    @property
    def reference(self) -> np.ndarray:
        """The reference result as values of the lane type."""
        return self.allowed[0].view(scalar(self.scalar).dtype)

    def certain(self) -> tuple[np.ndarray, np.ndarray]:
        """The reference values and the lanes where they are the only allowed result (judged, not
        any NaN, no other candidate): what an operation may compute with as exact operands."""
        ok = self.judged & ~self.any_nan
        for a in self.allowed[1:]:
            ok = ok & (a == self.allowed[0])
        for lo, hi in self.ranges:
            ok = ok & ~(lo <= hi)
        for mask, _ in self.masks:
            ok = ok & (mask == 0)
        return self.reference, ok

    def candidates(self) -> list[np.ndarray]:
        """Each allowed candidate as typed values (for an oracle to apply its next operation)."""
        dtype = scalar(self.scalar).dtype
        return [a.view(dtype) for a in self.allowed]

    def with_alternatives(self, extra: list[np.ndarray]) -> "Expectation":
        """The same expectation with more allowed candidates; exact duplicates are dropped."""
        out = list(self.allowed)
        for a in extra:
            a = _bits_of(a, self.scalar)
            if not any(np.array_equal(a, b) for b in out):
                out.append(a)
        return replace(self, allowed=out)

    def select(self, index: np.ndarray | slice) -> "Expectation":
        """The expectation restricted (or gathered) to the lanes ``index`` (a slice: no copy)."""
        return Expectation(
            self.scalar,
            [a[index] for a in self.allowed],
            self.judged[index],
            self.any_nan[index],
            self.rule[index],
            [(lo[index], hi[index]) for lo, hi in self.ranges],
            [(m[index], v[index]) for m, v in self.masks],
            None if self.error is None else self.error.select(index),
        )

    def accepts(self, actual_bits: np.ndarray) -> np.ndarray:
        """Per lane: True where ``actual_bits`` is allowed or the lane is not judged."""
        actual = np.ascontiguousarray(actual_bits).astype(scalar(self.scalar).bits_dtype, copy=False)
        ok = ~self.judged
        for a in self.allowed:
            ok = ok | (actual == a)
        if self.any_nan.any():
            ok = ok | (self.any_nan & is_nan_bits(actual, self.scalar))
        if self.ranges:
            values = actual.view(scalar(self.scalar).dtype)
            with np.errstate(invalid="ignore"):
                for lo, hi in self.ranges:
                    ok = ok | ((values >= lo) & (values <= hi))
        for mask, value in self.masks:
            ok = ok | ((actual & mask) == value)
        return ok


def empty_ranges(scalar_name: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` empty intervals of a type's values (nothing in them)."""
    dtype = scalar(scalar_name).dtype
    top, bottom = (np.inf, -np.inf) if dtype.kind == "f" else (np.iinfo(dtype).max, np.iinfo(dtype).min)
    return np.full(n, top, dtype), np.full(n, bottom, dtype)


def concat(parts: list[Expectation]) -> Expectation:
    """Lanes of several expectations of one type, one after another."""
    assert parts and all(p.scalar == parts[0].scalar for p in parts)
    k = max(len(p.allowed) for p in parts)
    allowed = [
        np.concatenate([p.allowed[min(i, len(p.allowed) - 1)] for p in parts]) for i in range(k)
    ]
    r = max(len(p.ranges) for p in parts)
    ranges = []
    for i in range(r):
        pieces = [p.ranges[i] if i < len(p.ranges) else empty_ranges(p.scalar, len(p)) for p in parts]
        ranges.append((np.concatenate([lo for lo, _ in pieces]), np.concatenate([hi for _, hi in pieces])))
    bits = scalar(parts[0].scalar).bits_dtype
    masks = []
    for i in range(max(len(p.masks) for p in parts)):  # a lane without a mask: one that never matches
        pieces = [p.masks[i] if i < len(p.masks) else (np.zeros(len(p), bits), np.ones(len(p), bits)) for p in parts]
        masks.append((np.concatenate([m for m, _ in pieces]), np.concatenate([v for _, v in pieces])))
    error = None
    if any(p.error is not None for p in parts):
        scales = [p.error if p.error is not None else ErrorScale.none(len(p)) for p in parts]
        error = ErrorScale(*(np.concatenate([getattr(e, k) for e in scales]) for k in ("hi", "lo", "ulp", "limit")))
    return Expectation(
        parts[0].scalar,
        allowed,
        np.concatenate([p.judged for p in parts]),
        np.concatenate([p.any_nan for p in parts]),
        np.concatenate([p.rule for p in parts]),
        ranges,
        masks,
        error,
    )
