"""Input classes: a short label per lane for bucketing test cases and reports.

Floating-point labels, first match wins:

``nan``, ``inf``, ``zero`` (either sign), ``subnormal`` (0 < |x| < TYPE_MIN, OpenCL C 3.0.19
§7.5.3), ``tie`` (fractional part exactly 0.5: the rounding-mode cases of §6.4.3.2),
``near-tie`` (one ulp of its own type from a tie), ``huge`` (|x| >= 2**31: beyond the 32-bit integer
ranges, the out-of-range cases of §6.4.3.3), ``integral``, ``normal``.

``huge`` is placed after ``tie``/``near-tie`` so that a double such as 2**40 + 0.5 is still a tie
(it matters for conversions to long), and before ``integral`` because every half/float of
magnitude >= 2**24 is integral and the label would otherwise never occur.

Integer labels, first match wins: ``zero``, ``min``, ``max``, ``near-min`` / ``near-max`` (within 2
of the type's limit), ``pow2-edge`` (|x| within 1 of 2**24, 2**31, 2**32, 2**53 or 2**63: where
int -> float rounding and the 32/64-bit ranges change), ``other``.
"""

from __future__ import annotations

import numpy as np

from lang.types import scalar

FLOAT_CLASSES: tuple[str, ...] = (
    "nan", "inf", "zero", "subnormal", "tie", "near-tie", "huge", "integral", "normal",
)
INT_CLASSES: tuple[str, ...] = ("zero", "min", "max", "near-min", "near-max", "pow2-edge", "other")
POW2_EDGES: tuple[int, ...] = (24, 31, 32, 53, 63)


def _is_tie(x: np.ndarray) -> np.ndarray:
    """Fractional part exactly 0.5 (x finite, as float64: exact for every source type)."""
    a = np.abs(x)
    return (a - np.floor(a)) == 0.5


def _float_classes(values: np.ndarray, name: str) -> np.ndarray:
    s = scalar(name)
    with np.errstate(all="ignore"):
        x = values.astype(np.float64)  # exact; a signalling NaN may set 'invalid'
        finite = np.isfinite(x)
        xf = np.where(finite, x, 0.0)
        up = np.nextafter(values, np.array(np.inf, s.dtype)).astype(np.float64)
        down = np.nextafter(values, np.array(-np.inf, s.dtype)).astype(np.float64)
        up = np.where(np.isfinite(up), up, 0.0)
        down = np.where(np.isfinite(down), down, 0.0)
        tiny = float(np.finfo(s.dtype).tiny)
        conds = [
            np.isnan(x),
            np.isinf(x),
            x == 0,
            finite & (np.abs(xf) < tiny),
            finite & _is_tie(xf),
            finite & (_is_tie(up) | _is_tie(down)),
            finite & (np.abs(xf) >= 2.0**31),
            finite & (np.floor(xf) == xf),
        ]
    out = np.full(values.shape, "normal", dtype="<U9")
    for label, cond in reversed(list(zip(FLOAT_CLASSES, conds))):
        out[cond] = label
    return out


def _int_classes(values: np.ndarray, name: str) -> np.ndarray:
    s = scalar(name)
    if s.signed:
        v = values.astype(np.int64)
        neg = v < 0
        u = v.view(np.uint64)
        mag = np.where(neg, np.uint64(0) - u, u)  # |x| exactly, also for LONG_MIN
    else:
        mag = values.astype(np.uint64)
    lo, hi = s.dtype.type(s.min), s.dtype.type(s.max)
    # distance to the limits without overflow: compare against limit +- 1, +- 2 in the type
    near_min = np.zeros(values.shape, bool)
    near_max = np.zeros(values.shape, bool)
    for d in (1, 2):
        near_min |= values == s.dtype.type(s.min + d)
        near_max |= values == s.dtype.type(s.max - d)
    pow2 = np.zeros(values.shape, bool)
    for k in POW2_EDGES:
        c = np.uint64(1 << k)
        pow2 |= (mag == c) | (mag == c - np.uint64(1)) | (mag == c + np.uint64(1))
    conds = [values == 0, values == lo, values == hi, near_min, near_max, pow2]
    out = np.full(values.shape, "other", dtype="<U9")
    for label, cond in reversed(list(zip(INT_CLASSES, conds))):
        out[cond] = label
    return out


def input_class(values: np.ndarray, scalar_name: str) -> np.ndarray:
    """Per lane the class label of ``values`` (a 1-D array of ``scalar_name``'s dtype), as a numpy
    unicode array (see the module docstring for the labels and their precedence)."""
    values = np.asarray(values)
    if scalar(scalar_name).is_float:
        return _float_classes(values, scalar_name)
    return _int_classes(values, scalar_name)
