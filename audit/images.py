"""The audit's image reads (triage.audit): a plain texel walk, from OpenCL C 3.0.19 §6.15.15,
§8.1-§8.4, with no oracle code.

The texel location is computed exactly (Fractions) with §8.2's formulas: ``i =
address_mode((int)floor(u))`` (Table 70) for unnormalized NEAREST reads and sampler-less reads
(NEAREST, unnormalized, ADDRESS_NONE); the array layer is ``clamp(rint(w), 0, d - 1)`` through a
sampler and ``w`` without one (§8.4). Every other sampler (normalized coordinates, REPEAT,
MIRRORED_REPEAT, LINEAR) has a precision "not defined by this revision" (end of §8.2): §8.2's
formulas are evaluated at the exact coordinate (``s * w_t`` for a normalized one) and 1/16 texel
(plus float32's relative rounding) either side of it. A NEAREST read may return any texel selected
there; a LINEAR read blends the texels ``i0``, ``i1`` (and ``j``, ``k``) selected there with weights
``frac(u - 0.5)`` in [0, 1], so it lies within their least and greatest values, widened by
``2 * axes + 1`` units in the last place of the largest for the weighted sum's arithmetic (the
tolerance clfuzz states for it) and to 0 where the result may be a flushed denormal; over an INF
or NaN texel of float data LINEAR is undefined. Integer coordinates through any sampler but an
unnormalized NEAREST one with CLAMP_TO_EDGE, CLAMP or NONE read undefined values (§6.15.15.2).

The texel's channels are mapped as §6.15.15.7 says (missing R, G, B read 0, a missing A reads 1)
and converted as §8.3 says: normalized integers within 1.5 ulp of c/(2^n - 1) (SNORM: max(-1,
c/(2^(n-1) - 1))) with the pinned endpoints exact; HALF_FLOAT exactly; FLOAT as stored (a NaN any
NaN, a denormal possibly flushed, §8.3.3); integers sign- or zero-extended. CLK_ADDRESS_CLAMP
outside the image gives the order's border colour (§6.15.15.1.1; for integer reads of a 1.0
alpha, 1 or the bits of 1.0f: the spec gives the colour as floats only).
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

from audit.base import Lanes, Registry, Unsupported
from audit.convert import merge
from audit.values import (
    FINITE,
    NOT_AUDITED,
    AuditLane,
    decode,
    encode_finite,
    encode_inf,
    encode_zero,
    int_bits,
    int_value,
    quiet_nan,
    round_real,
    subnormal,
    ulp,
    undefined_lane,
    width,
)
from lang.images import CHANNEL_TYPES, DIMS, ORDERS
from lang.ir import Op

HANDLERS = Registry()

# §6.15.15.7: what each component of the returned vector is, per channel order
RETURNED = {"R": "r001", "Rx": "r001", "A": "000a", "RG": "rg01", "RGx": "rg01", "RA": "r00a", "RGBA": "rgba",
            "BGRA": "rgba", "ARGB": "rgba", "ABGR": "rgba", "INTENSITY": "iiii", "LUMINANCE": "lll1"}
# §6.15.15.1.1: the border colour (ABGR is not listed)
BORDER = {**{o: (0, 0, 0, 0) for o in ("A", "INTENSITY", "Rx", "RA", "RGx", "ARGB", "BGRA", "RGBA")},
          **{o: (0, 0, 0, 1) for o in ("R", "RG", "LUMINANCE")}}
# §8.3: how each channel type is read (kind, stored bits, signed)
CHANNELS = {"UNORM_INT8": ("unorm", 8, False), "UNORM_INT16": ("unorm", 16, False),
            "SNORM_INT8": ("unorm", 8, True), "SNORM_INT16": ("unorm", 16, True),
            "SIGNED_INT8": ("int", 8, True), "SIGNED_INT16": ("int", 16, True), "SIGNED_INT32": ("int", 32, True),
            "UNSIGNED_INT8": ("int", 8, False), "UNSIGNED_INT16": ("int", 16, False),
            "UNSIGNED_INT32": ("int", 32, False), "HALF_FLOAT": ("half", 16, True), "FLOAT": ("float", 32, True)}
MARGIN = Fraction(1, 16)


def _floor(q: Fraction) -> int:
    return q.numerator // q.denominator


def _rint(q: Fraction) -> int:
    f = _floor(q)
    rest = q - f
    return f + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and f & 1))


def _coordinate(lane: AuditLane) -> Fraction | int | str | None:
    """A coordinate's value (None: NaN, infinite or not specified; ``UNCERTAIN``: one of several)."""
    s = lane.scalar
    if lane.undefined:
        return None
    if len(set(lane.values)) > 1 or lane.ranges:
        return UNCERTAIN
    if s == "int":
        return int_value(lane.values[0], s)
    r = decode(lane.values[0], s)
    return r.value if r.kind == FINITE else None


def _address(i: int, size: int, addressing: str) -> int | None:
    """Table 70's address_mode on a texel index: the index, -1 or size for the border (CLAMP),
    None where the read is undefined (NONE outside the image, (int) overflow)."""
    if abs(i) >= 2**31:
        return None
    if addressing == "clamp_to_edge":
        return min(max(i, 0), size - 1)
    if addressing == "clamp":
        return min(max(i, -1), size)
    return i if 0 <= i < size else None


def _nearest(u: Fraction | int, size: int, addressing: str) -> int | None:
    """NEAREST on an unnormalized coordinate: ``address_mode((int)floor(u))``."""
    return _address(_floor(Fraction(u)), size, addressing)


def _normalized(s: Fraction, size: int, addressing: str) -> int | None:
    """§8.2's NEAREST formulas for a normalized coordinate."""
    if addressing == "repeat":
        i = _floor((s - _floor(s)) * size)
        return i - size if i > size - 1 else i
    if addressing == "mirrored_repeat":
        i = _floor(abs(s - 2 * _rint(s / 2)) * size)
        return min(i, size - 1)
    return _nearest(s * size, size, addressing)


def _linear(c: Fraction, size: int, sampler) -> tuple[int | None, int | None]:
    """§8.2's LINEAR formulas: the two texel indices (i0, i1) blended along one axis."""
    if sampler.addressing == "repeat":
        i0 = _floor((c - _floor(c)) * size - Fraction(1, 2))
        return (i0 + size if i0 < 0 else i0), (i0 + 1 - size if i0 + 1 > size - 1 else i0 + 1)
    if sampler.addressing == "mirrored_repeat":
        i0 = _floor(abs(c - 2 * _rint(c / 2)) * size - Fraction(1, 2))
        return max(i0, 0), min(i0 + 1, size - 1)
    i0 = _floor((c * size if sampler.normalized else c) - Fraction(1, 2))
    return _address(i0, size, sampler.addressing), _address(i0 + 1, size, sampler.addressing)


UNCERTAIN = "uncertain"
"""A coordinate the audit knows only as one of several values (a flushed alternative, a bound)."""
WIDE = "wide"
"""An axis whose undefined precision spans half a texel or more (the audit samples the
coordinate at its ends and middle, which finds every texel only below that)."""


def _axis(u, size: int, sampler) -> set | str:
    """The texel indices §8.2 selects along one axis (None among them: undefined): one where the
    location is computed "without any loss of precision" (unnormalized NEAREST), else every index
    the formulas select within the undefined precision around the coordinate (MARGIN texels plus
    float32's relative rounding), both of LINEAR's."""
    if sampler is None:
        return {_nearest(u, size, "none")}
    if not sampler.normalized and sampler.filter == "nearest":
        return {_nearest(u, size, sampler.addressing)}
    scale = size if sampler.normalized else 1
    spread = MARGIN / scale + abs(Fraction(u)) * Fraction(1, 2**22)
    if spread * scale >= Fraction(1, 2):
        return WIDE
    points = [Fraction(u) + d for d in (-spread, 0, spread)]
    if sampler.filter == "linear":
        return {i for c in points for i in _linear(c, size, sampler)}
    return {_normalized(c, size, sampler.addressing) for c in points}


def _channel(raw: int, channel: str, result: str) -> AuditLane:
    kind, bits, is_signed = CHANNELS[channel]
    if kind == "int":
        v = raw - (1 << bits) if is_signed and raw >> (bits - 1) else raw
        return AuditLane(result, (int_bits(v, result),))
    if kind in ("half", "float"):
        src = "half" if kind == "half" else "float"
        r = decode(raw, src)
        if r.kind == "nan":
            return AuditLane(result, (quiet_nan(result),), nan=True)
        if r.kind != FINITE:
            return AuditLane(result, (encode_inf(result, r.neg),))
        value = round_real(r.value, result, zero_neg=r.neg)
        out = (value,)
        if kind == "float" and subnormal(raw, "float"):  # §8.3.3: "Denorms can be flushed to zero"
            out += (encode_zero(result, False), encode_zero(result, True))
        return AuditLane(result, out)
    top = (1 << (bits - 1)) - 1 if is_signed else (1 << bits) - 1
    c = raw - (1 << bits) if is_signed and raw >> (bits - 1) else raw
    exact = max(Fraction(-1), Fraction(c, top))
    ref = round_real(exact, result)
    if c in (0, top) or (is_signed and c <= -top):
        return AuditLane(result, (ref,))
    width_ = Fraction(3, 2) * ulp(exact, result)
    return AuditLane(result, (ref,), ranges=((exact - width_, exact + width_),))


def _constant(value: int, result: str, border: bool) -> AuditLane:
    if result in ("int", "uint"):
        if border and value == 1:
            return AuditLane(result, (1, 0x3F800000))
        return AuditLane(result, (value,))
    return AuditLane(result, (encode_finite(Fraction(value), result),))


@HANDLERS.handles("read_image")
def _read_image(ev, op: Op, args: list[Lanes]) -> Lanes:
    program = ev.program
    image = program.image(op.attr("image"))
    sampler = program.sampler(op.attr("sampler")) if op.attr("sampler") else None
    result = {"float4": "float", "int4": "int", "uint4": "uint"}.get(op.type.c_name)
    if result is None:
        raise Unsupported(f"read returning {op.type.c_name}")
    linear = sampler is not None and sampler.filter == "linear"
    if linear and result != "float":
        raise Unsupported("a LINEAR read_image{i,ui}")
    if sampler is not None and op.args[0].type.scalar == "int" and not sampler.exact:
        return [undefined_lane(result, "integer coordinates with a sampler other than unnormalized, NEAREST and "
                                       "CLAMP_TO_EDGE, CLAMP or NONE: the values returned are undefined "
                                       "(§6.15.15.2)")] * 4
    dim = DIMS[image.dim]
    coords = [_coordinate(lane) for lane in args[0]]
    if UNCERTAIN in coords[: dim.spatial + dim.arrayed]:
        return [undefined_lane(result, f"{NOT_AUDITED}a coordinate known only as one of several values")] * 4
    if any(c is None for c in coords[: dim.spatial + dim.arrayed]):
        return [undefined_lane(result, "a coordinate that is NaN, infinite or not specified (§8.2)")] * 4
    axes = [_axis(coords[a], image.shape[a], sampler) for a in range(dim.spatial)]
    if WIDE in axes:
        return [undefined_lane(result, f"{NOT_AUDITED}a coordinate whose undefined precision spans half a "
                                       "texel")] * 4
    if any(None in picks for picks in axes):
        return [undefined_lane(result, "a coordinate outside the image under ADDRESS_NONE (Table 70)")] * 4
    layer = 0
    if dim.arrayed:
        w, count = coords[dim.spatial], image.shape[dim.spatial]
        if sampler is None:
            if not 0 <= w < count:
                return [undefined_lane(result, "a layer outside the array without a sampler (§8.4)")] * 4
            layer = w
        else:
            layer = min(max(_rint(Fraction(w)), 0), count - 1)
    reads = [_at(image, location, layer, result) for location in product(*(sorted(p) for p in axes))]
    if linear:
        return [_hull([r[k] for r in reads], dim.spatial) for k in range(4)]
    return [merge(result, [r[k] for r in reads]) for k in range(4)]  # any texel selected within the precision


def _hull(lanes: list[AuditLane], axes: int) -> AuditLane:
    """A LINEAR component: a weighted mean of the candidate texels' values with weights in [0, 1]
    that sum to 1 (§8.2), so within their least and greatest values, widened by 2 * axes + 1 units
    in the last place of the largest magnitude for the arithmetic of the weighted sum (the rule's
    tolerance: the filter's precision is not defined), and to 0 where the result may be a
    denormal (§8.3.3, a denormal may be flushed)."""
    for lane in lanes:
        if lane.undefined:
            return undefined_lane("float", lane.undefined)
        if lane.nan or any(decode(v, "float").kind != FINITE for v in lane.values):
            return undefined_lane("float", "LINEAR over an INF or NaN texel: the behaviour is undefined (§8.2)")
    points = [decode(v, "float").value for lane in lanes for v in lane.values]
    points += [x for lane in lanes for r in lane.ranges for x in r]
    lo, hi = min(points), max(points)
    slack = (2 * axes + 1) * _quantum(max(abs(lo), abs(hi)))
    lo, hi = lo - slack, hi + slack
    least = Fraction(2) ** -126
    if lo < least and hi > -least:
        lo, hi = min(lo, Fraction(0)), max(hi, Fraction(0))
    return AuditLane("float", (round_real((lo + hi) / 2, "float"),), ranges=((lo, hi),))


def _quantum(top: Fraction) -> Fraction:
    """The spacing of floats in the binade of ``top`` (at least the subnormals')."""
    e = -126
    while top >= Fraction(2) ** (e + 1):
        e += 1
    return Fraction(2) ** (e - 23)


def _at(image, location: tuple, layer: int, result: str) -> tuple:
    """What a read at texel ``location`` (indices per axis; -1 or size: the border) of ``layer``
    returns."""
    index, stride = 0, 1
    for i, size in zip(location, image.shape):
        if not 0 <= i < size:
            if image.order not in BORDER:
                return tuple([undefined_lane(result, f"no border colour is listed for {image.order} "
                                                     "(§6.15.15.1.1)")] * 4)
            return tuple(_constant(v, result, True) for v in BORDER[image.order])
        index += i * stride
        stride *= size
    return tuple(_texel(image, index + layer * stride, result))


def _texel(image, index: int, result: str) -> Lanes:
    memory = ORDERS[image.order].memory  # how the host laid the texel's channels out
    kind = CHANNELS.get(image.channel)
    if kind is None:
        raise Unsupported(f"channel type {image.channel}")
    storage = width(CHANNEL_TYPES[image.channel].storage)
    n = image.texels * len(memory)
    raw = image.fill.bits(n, storage)[index * len(memory):(index + 1) * len(memory)]
    out = []
    for c in RETURNED[image.order]:
        if c in "01":
            out.append(_constant(int(c), result, False))
        else:
            out.append(_channel(int(raw[memory.index(c)]), image.channel, result))
    return out
