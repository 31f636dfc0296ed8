"""What an image read returns for each texel: the channel order's mapping, with 0 and 1 for
missing channels (SPIR-V env §7.6, OpenCL C 3.0 §6.15.15.7), the channel conversion of §8.3, and
the border colour of the order (§6.15.15.1.1), as one :class:`Table` per image and result type
that :func:`oracles.images.expect_read` selects rows of.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lang.images import CHANNEL_TYPES, ORDERS
from lang.ir import Image
from lang.types import scalar
from oracles import rules
from oracles.expect import as_bits

RULE_TEXEL = rules.register(
    "image.texel",
    "unnormalized coordinates with NEAREST and CLAMP_TO_EDGE, CLAMP or NONE (and sampler-less reads) select "
    "texel address_mode((int)floor(u)) without loss of precision; the read returns that texel's channels "
    "as the channel order maps them (missing R, G, B are 0, a missing A is 1)",
    "OpenCL C 3.0 §8.2 Table 70 and end of §8.2, §6.15.15.7; SPIR-V env §7.6-7.7",
)
RULE_BORDER = rules.register(
    "image.border",
    "CLK_ADDRESS_CLAMP returns the border colour of the channel order for a texel outside the image: "
    "(0,0,0,1) for R, RG, RGB, LUMINANCE and (0,0,0,0) for the others (integer images: 0 and 1, or the "
    "bits of 1.0f, which the spec's float-only table leaves open)",
    "OpenCL C 3.0 §6.15.15.1.1, §8.2",
)
RULE_UNORM = rules.register(
    "image.unorm",
    "normalized integer data read as float or half: c / (2^n - 1), or max(-1, c / (2^(n-1) - 1)) for SNORM, "
    "within 1.5 ulp; 0, the maximum code and (SNORM) the two least codes convert exactly",
    "OpenCL C 3.0 §8.3.1.1-8.3.1.2",
)
RULE_HALF = rules.register(
    "image.half",
    "HALF_FLOAT data read as float or half is converted without loss (a NaN may be any NaN)",
    "OpenCL C 3.0.19 §8.3.2 ('the conversions from half to float are lossless', a definition; §6.3.1.2 "
    "'The half data type')",
)
RULE_FLOAT = rules.register(
    "image.float",
    "FLOAT data is returned as stored; a NaN may be any NaN and a sampled read may flush a denormal to "
    "zero (a sampler-less read only where the device flushes float denormals)",
    "OpenCL C 3.0 §8.3.3; SPIR-V env §7.7",
)
RULE_INT = rules.register(
    "image.int",
    "SIGNED_INT data is sign-extended by read_imagei, UNSIGNED_INT data zero-extended by read_imageui",
    "OpenCL C 3.0 §8.3.4, §6.15.15.4-5",
)

_CONVERSION_RULE = {"unorm": RULE_UNORM, "snorm": RULE_UNORM, "half": RULE_HALF, "float": RULE_FLOAT,
                    "sint": RULE_INT, "uint": RULE_INT}


@dataclass
class Table:
    """What a read returns for each texel (rows ``0 .. texels-1``) and for the border colour (row
    ``texels``), per component: ``bits`` (with ``alt`` a second allowed pattern), the interval
    ``lo..hi`` of values (equal to the value where exact; ``ranged`` marks a real interval),
    ``nan`` (any NaN), ``flush`` (may read as ±0), ``special`` (INF or NaN: LINEAR over it is
    undefined) and the rule."""

    result: str  # float, half, int or uint
    bits: np.ndarray
    alt: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    ranged: np.ndarray
    nan: np.ndarray
    flush: np.ndarray
    special: np.ndarray
    rule: np.ndarray

    def __post_init__(self) -> None:
        self.has_alt = not np.array_equal(self.alt, self.bits)  # a second pattern somewhere
        self.ranged_any, self.nan_any, self.flush_any = self.ranged.any(), self.nan.any(), self.flush.any()
        self.special_any = self.special.any()


# ---- channel conversions (§8.3) -------------------------------------------------------------------


def norm_interval(codes: np.ndarray, signed: bool, bits: int, result: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalized integer ``codes`` read as ``result`` (float or half), §8.3.1: the correctly
    rounded value of ``c/M`` (``M = 2^bits - 1``; SNORM: ``2^(bits-1) - 1`` and at least -1), and
    the least and greatest ``result`` values ``y`` with ``|y - c/M| <= 1.5 ulp(c/M)`` (§7.4's ulp:
    the gap between the two floats around ``c/M``); the codes the spec pins (0, the maximum, the
    SNORM minimum and minimum + 1) have a one-value interval.

    The test is done in integers: with ``y = m * 2^q`` (``q`` the exponent of y's last bit) and
    ``ulp = 2^(E - p + 1)``, ``|m * M * 2^(q+S) - c * 2^S| <= 3 * M * 2^(E - p + S)`` for a scale
    ``2^S`` that makes every term an integer below 2^63. The reference ``float(c) / M`` rounded
    once more to ``result`` is correctly rounded: binary64 has at least 2p + 2 bits (Figueroa 1995)."""
    f = scalar(result)
    p = f.mant_bits
    M = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    c = codes.astype(np.int64)
    mag = np.minimum(np.abs(c), M)  # SNORM -2^(n-1) reads as -1, like -M
    neg = c < 0
    with np.errstate(all="ignore"):
        ref = (mag.astype(np.float64) / M).astype(f.dtype)
    pinned = (mag == 0) | (mag == M)
    # E: the binade of c/M (c/M is never a power of two unless pinned, and never within 2^-40 of
    # one, so the float64 logarithm decides it), no lower than the least normal exponent.
    E = np.maximum(np.floor(np.log2(np.where(pinned, M, mag) / M)), f.min_exp).astype(np.int64)
    S = p + bits + 8
    rhs = 3 * M * np.left_shift(np.int64(1), E - p + S)
    ref_bits = as_bits(ref).astype(np.int64)
    lo_bits, hi_bits = ref_bits.copy(), ref_bits.copy()
    for d in range(-3, 4):
        cand_bits = ref_bits + d
        cand = cand_bits.astype(f.bits_dtype).view(f.dtype).astype(np.float64)
        _, k = np.frexp(cand)  # cand in [2^(k-1), 2^k)
        q = np.maximum(k - 1, f.min_exp) - p + 1
        with np.errstate(invalid="ignore"):
            m = np.round(np.where(np.isfinite(cand), cand, 0) * np.exp2(-q)).astype(np.int64)
        lhs = np.abs(m * M * np.left_shift(np.int64(1), np.maximum(q + S, 0)) - mag * (np.int64(1) << S))
        ok = (lhs <= rhs) & (cand > 0) & np.isfinite(cand) & (q + S >= 0)
        lo_bits = np.where(ok & (cand_bits < lo_bits), cand_bits, lo_bits)
        hi_bits = np.where(ok & (cand_bits > hi_bits), cand_bits, hi_bits)
    lo = np.where(pinned, ref_bits, lo_bits).astype(f.bits_dtype).view(f.dtype)
    hi = np.where(pinned, ref_bits, hi_bits).astype(f.bits_dtype).view(f.dtype)
    ref, lo, hi = np.where(neg, -ref, ref), np.where(neg, -hi, lo), np.where(neg, -lo, hi)
    return ref.astype(f.dtype), lo.astype(f.dtype), hi.astype(f.dtype)


def _component(values: np.ndarray, kind: str, bits: int, result: str, may_flush: bool):
    """One channel of every texel as the read returns it: (bits, lo, hi, ranged, nan, flush, special)."""
    n = len(values)
    false = np.zeros(n, bool)
    if kind in ("unorm", "snorm"):
        ref, lo, hi = norm_interval(values, kind == "snorm", bits, result)
        return as_bits(ref), lo, hi, lo != hi, false, false, false
    if kind in ("sint", "uint"):
        wide = values.astype(np.int64).astype(scalar(result).dtype)  # sign- or zero-extension
        return as_bits(wide), wide, wide, false, false, false, false
    f = scalar(result)
    with np.errstate(all="ignore"):
        value = values.astype(f.dtype)  # half -> float and float -> float are exact
        nan = np.isnan(value)
        special = ~np.isfinite(value)
        tiny = (np.abs(value.astype(np.float64)) < 2.0**f.min_exp) & (value != 0) if may_flush else false
    return as_bits(value), value, value, false, nan, tiny, special


def may_flush(image: Image, sampled: bool, ftz: frozenset) -> bool:
    """Whether a read may return a denormal texel as zero: a CL_FLOAT image's always (OpenCL C 3.0.19 §8.3.3
    "Denorms can be flushed to zero", for reading and writing; the sampler-less read "may return
    the denormalized data", §6.15.15, a permission), another float channel's through a sampler
    (SPIR-V environment §7.7) or on a device that flushes float denormals (§7.2)."""
    return image.channel == "FLOAT" or sampled or "float" in ftz


def texel_table(image: Image, stored: np.ndarray, result: str, may_flush: bool) -> Table:
    """The vector every texel reads as (a read returning ``result`` lanes), plus the border row."""
    order, channel = ORDERS[image.order], CHANNEL_TYPES[image.channel]
    f = scalar(result)
    data = stored.reshape(image.texels, image.channels)
    bits_of = scalar(channel.storage).bits
    one = np.array(1, f.dtype)
    cols = []
    for src in order.returned:
        if src in "01":
            v = np.full(image.texels, one if src == "1" else np.zeros((), f.dtype), f.dtype)
            z = np.zeros(image.texels, bool)
            cols.append((as_bits(v), v, v, z, z, z, z, RULE_TEXEL))
        else:
            raw = data[:, order.memory.index(src)]
            cols.append((*_component(raw, channel.kind, bits_of, result, may_flush), _CONVERSION_RULE[channel.kind]))
    border = np.array(order.border, f.dtype)
    rows = {}
    for i, name in enumerate(("bits", "lo", "hi", "ranged", "nan", "flush", "special")):
        body = np.stack([c[i] for c in cols], axis=1)
        if name == "bits":
            extra = as_bits(border)
        elif name in ("lo", "hi"):
            extra = border
        else:
            extra = np.zeros(4, bool)
        rows[name] = np.concatenate([body, extra[None, :].astype(body.dtype)])
    alt = rows["bits"].copy()
    if f.is_int and order.border[3] == 1:  # §6.15.15.1.1 gives float colours only: 1 or the bits of 1.0f
        alt[-1, 3] = np.array(1.0, np.float32).view(np.uint32)
    rule = np.concatenate([np.stack([np.full(image.texels, c[7], np.int16) for c in cols], axis=1),
                           np.full((1, 4), RULE_BORDER, np.int16)])
    return Table(result, rows["bits"], alt, rows["lo"], rows["hi"], rows["ranged"], rows["nan"], rows["flush"],
                 rows["special"], rule)
