"""The deviation checks of image reads (:mod:`oracles.deviation`): what a wrong read returned,
as the image oracle itself computes it elsewhere. A read is re-evaluated by
:func:`oracles.images.expect_read` at changed coordinates (a denormal component as 0, another
array layer), and the read's 4-vector is matched against every texel of the image and the
border colours (:func:`oracles.images.texels.texel_table`). A texel-valued class must explain
every lane of the work-item that reads a stored channel (both judge), not the failing lane alone;
the border colour, the whole vector; a missing channel is a lane's.

Rules named: ``image.coordinate.denormal`` (a flushed denormal coordinate, severity letter),
``image.layer`` (another layer's texel: the layer is never uncertain, §8.4, so also under a
tolerance sampler, unless the value is within a few ulps of the tolerance's bound),
``image.texel`` (another texel or the border colour read where a texel was selected exactly; a
missing channel's constant; a stored channel read as 0 or 1) and ``image.border`` (a texel, or
another order's border colour, where the border colour was selected exactly); where a sampled
read's layer coordinate is outside the array, a border colour or a stored channel read as 0 or
1 breaks ``image.layer`` (the array index is always addressed CLAMP_TO_EDGE, §6.15.15.1). Under a
tolerance rule a texel-valued class keeps the lane's rule: a miss of the bound is not made a
violation; a NEAREST read's value that no texel of the image reads as breaks the rule an exact
read names for it (:func:`deciding_rule`: the channel conversion's, e.g. ``image.half``).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from lang.images import DIMS, ORDERS
from lang.ir import Op
from lang.types import format_value, scalar
from oracles import rules
from oracles.deviation.context import Context, Deviation
from oracles.deviation.values import hexfloat, off_by_ulps
from oracles.expect import Expectation
from oracles.images.addressing import address, array_layer
from oracles.images.reads import RULE_COORDINATE_DENORMAL, RULE_LAYER, RULE_NEAREST_TOLERANCE, expect_read
from oracles.images.texels import RULE_BORDER, RULE_TEXEL, Table, may_flush, texel_table

COMPONENTS = "xyzw"


class Read:
    """One image-read statement: its image, sampler, texel table and per work-item coordinates."""

    def __init__(self, ctx: Context):
        op = ctx.stmt.value
        self.ctx, self.op = ctx, op
        self.image = ctx.program.image(op.attr("image"))
        self.sampler = ctx.program.sampler(op.attr("sampler")) if op.attr("sampler") else None
        self.dim = DIMS[self.image.dim]
        self.order = ORDERS[self.image.order]
        self.exact = self.sampler is None or self.sampler.exact
        self.coord = op.args[0].type
        self.stored = np.array([src not in "01" for src in self.order.returned])
        """The lanes that read a stored channel: what identifies a texel (a missing channel's
        constant is every texel's, and a wrong one is missing-channel's, e.g. PoCL's alpha 0)."""
        self.table: Table = texel_table(self.image, ctx.inputs[self.image.name], op.type.scalar,
                                        may_flush(self.image, self.sampler is not None, ctx.env))

    @staticmethod
    def of(ctx: Context) -> Read | None:
        """The read behind the context's lanes, if its statement is an image read stored as is."""
        op = ctx.stmt.value
        if not (ctx.reevaluable and isinstance(op, Op) and op.op == "read_image" and op.type == ctx.type):
            return None
        if "read" not in ctx.cache:
            ctx.cache["read"] = Read(ctx)
        return ctx.cache["read"]

    def coordinates(self, item: int) -> np.ndarray | None:
        """The work-item's coordinate vector (typed), None where the oracle is unsure of it."""
        e = self.ctx.evaluate(self.op.args[0], item)
        if e is None:
            return None
        ref, certain = e.certain()
        return ref.copy() if certain.all() else None

    def at(self, coords: np.ndarray) -> Expectation | None:
        """What the read returns at ``coords`` (the 4 lanes of one work-item)."""
        try:
            with np.errstate(all="ignore"):
                return expect_read(self.op, Expectation.exact(self.coord.scalar, coords),
                                   self.ctx.item_program, self.ctx.inputs, self.ctx.env)
        except (ValueError, IndexError, ArithmeticError):
            return None

    def explains(self, alt: Expectation | None, pos: int) -> bool:
        """Whether ``alt`` accepts the work-item's actual vector in every stored channel's lane
        both judge, and judges the failing lane (a stored channel's)."""
        if alt is None:
            return False
        item, j = self.ctx.where(pos)
        base = item * 4
        actual = self.ctx.bits[base:base + 4]
        ok = alt.accepts(actual) | ~alt.judged | ~self.ctx.exp.judged[base:base + 4] | ~self.stored
        return bool(self.stored[j]) and bool(alt.judged[j]) and bool(ok.all())

    def names(self) -> list[str]:
        """The coordinate lanes for people: u, v, w, the layer, and unused lanes."""
        spatial = ["u", "v", "w"][: self.dim.spatial] + (["layer"] if self.dim.arrayed else [])
        return spatial + ["(unused)"] * (self.coord.width - len(spatial))

    def location(self, coords: np.ndarray) -> tuple[tuple[int, ...], int | None, bool]:
        """Where the coordinates point (approximately where the spec leaves precision undefined):
        the texel's spatial indices, its layer, and whether that is outside (the border)."""
        out, outside = [], False
        mode = self.sampler.addressing if self.sampler else "none"
        for a in range(self.dim.spatial):
            size = self.image.shape[a]
            u = float(coords[a])
            if self.sampler is not None and self.sampler.normalized:
                u = u * size if mode not in ("repeat", "mirrored_repeat") else (u - math.floor(u)) * size
            i = math.floor(u) if math.isfinite(u) else 0
            if mode in ("repeat", "mirrored_repeat"):
                i = min(max(i, 0), size - 1)
            else:
                i = int(address(np.array([i]), size, mode)[0][0])
            outside |= not 0 <= i < size
            out.append(i)
        layer = None
        if self.dim.arrayed:
            w = coords[self.dim.spatial: self.dim.spatial + 1]
            layer = int(array_layer(w, self.image.shape[self.dim.spatial], self.sampler is not None)[0][0])
        return tuple(out), layer, outside

    def layer_outside(self, coords: np.ndarray) -> bool:
        """Whether a sampled read's layer coordinate is outside the array: what the read returns
        is then decided by the layer's clamp (§8.4; the array index is always addressed
        CLAMP_TO_EDGE, §6.15.15.1), a read of nothing (zeros, a border colour) breaks it."""
        if not self.dim.arrayed or self.sampler is None:
            return False
        w = float(coords[self.dim.spatial])
        return math.isfinite(w) and not 0 <= float(np.rint(w)) <= self.image.shape[self.dim.spatial] - 1

    def any_texel(self, pos: int) -> bool:
        """Whether the lane's actual value is what some texel of the image reads as in that lane
        (the table's column, flushes and NaNs included), or, through CLAMP, the border colour's:
        a value no texel reads as is wrong whichever texel an uncertain coordinate selects."""
        j = self.ctx.where(pos)[1]
        t = self.table
        rows = slice(0, t.bits.shape[0] if self.sampler is not None and self.sampler.addressing == "clamp"
                     else self.image.texels)
        a = self.ctx.actual(pos)
        f = scalar(t.result)
        ok = (t.bits[rows, j] == a) | (t.alt[rows, j] == a)
        if f.is_float:
            v = self.ctx.value(a)
            with np.errstate(invalid="ignore"):
                ok |= t.ranged[rows, j] & (t.lo[rows, j] <= v) & (v <= t.hi[rows, j])
                ok |= t.nan[rows, j] & np.isnan(v)
                ok |= t.flush[rows, j] & (v == 0)
        return bool(ok.any())

    def texel_location(self, row: int) -> tuple[tuple[int, ...], int | None]:
        index = [int(x) for x in reversed(np.unravel_index(row, tuple(reversed(self.image.shape))))]
        return tuple(index[: self.dim.spatial]), (index[self.dim.spatial] if self.dim.arrayed else None)

    def where(self, spatial: tuple[int, ...], layer: int | None) -> str:
        return f"({', '.join(map(str, spatial))})" + (f" of layer {layer}" if layer is not None else "")

    def vector_bits(self, values) -> tuple[np.ndarray, np.ndarray]:
        """A colour in the result type (bits), and its alternative (integer reads: 1 or 1.0f's bits)."""
        f = scalar(self.op.type.scalar)
        bits = np.array(values, f.dtype).view(f.bits_dtype)
        alt = bits.copy()
        if f.is_int and values[3] == 1:
            alt[3] = np.array(1.0, np.float32).view(np.uint32)
        return bits, alt


def _lanewise(read: Read, pos: int) -> bool:
    """Whether every wrong stored lane of the work-item has a lane-wise explanation that a texel
    match must not override: a zero where a denormal or the other zero was expected (flushed,
    signed-zero), or, under a tolerance rule, a value a few ulps outside the bound (off-by-ulps:
    naming another layer or texel there would turn an imprecise result into a wrong one on a
    coincidence of nearby texel values)."""
    ctx = read.ctx
    item, _ = ctx.where(pos)
    lanes = range(item * 4, item * 4 + 4)
    wrong = [p for p in lanes if read.stored[p - item * 4] and ctx.exp.judged[p]
             and not ctx.accepted(ctx.exp, p, ctx.actual(p))]

    def explained(p: int) -> bool:
        if ctx.zero(ctx.actual(p)) and any(ctx.denormal(c) or ctx.zero(c) for c in ctx.candidates(p)):
            return True
        return rules.rule(int(ctx.exp.rule[p])).severity == "tolerance" and off_by_ulps(ctx, p) is not None

    return bool(wrong) and all(explained(p) for p in wrong)


def _matches(read: Read, pos: int, colour: tuple[np.ndarray, np.ndarray]) -> bool:
    item, j = read.ctx.where(pos)
    actual = read.ctx.bits[item * 4:item * 4 + 4]
    judged = read.ctx.exp.judged[item * 4:item * 4 + 4]
    ok = (actual == colour[0]) | (actual == colour[1]) | ~judged
    return bool(ok.all()) and bool(judged[j])


# ---- the checks -----------------------------------------------------------------------------------


def flushed_coordinate(ctx: Context, pos: int) -> Deviation | None:
    read = Read.of(ctx)
    if read is None or read.coord.scalar != "float":
        return None
    coords = read.coordinates(ctx.where(pos)[0])
    if coords is None:
        return None
    names = read.names()
    used = np.array([n != "(unused)" for n in names])
    tiny = np.flatnonzero(used & (coords != 0) & (np.abs(coords.astype(np.float64)) < 2.0**-126))
    tries = [tiny] + ([np.array([k]) for k in tiny] if len(tiny) > 1 else [])
    for ks in tries if len(tiny) else ():
        flushed = coords.copy()
        flushed[ks] = 0
        if read.explains(read.at(flushed), pos):
            which = ", ".join(f"{names[k]} = {float(coords[k]):.9g} ({hexfloat(coords[k])})" for k in ks)
            here, layer, outside = read.location(coords)
            there, layer0, _ = read.location(flushed)
            return Deviation("flushed-coordinate",
                             f"the read as if the denormal coordinate {which} were 0: texel "
                             f"{read.where(there, layer0)}, where the coordinate selects "
                             f"{'the border colour' if outside else 'texel ' + read.where(here, layer)}",
                             RULE_COORDINATE_DENORMAL)
    return None


def other_layer(ctx: Context, pos: int) -> Deviation | None:
    read = Read.of(ctx)
    if read is None or not read.dim.arrayed or _lanewise(read, pos):
        return None
    coords = read.coordinates(ctx.where(pos)[0])
    if coords is None:
        return None
    k = read.dim.spatial
    count = read.image.shape[k]
    _, selected, _ = read.location(coords)
    for layer in sorted(range(count), key=lambda L: abs(L - selected)):
        if layer == selected:
            continue
        moved = coords.copy()
        moved[k] = layer
        if read.explains(read.at(moved), pos):
            how = "clamp(rint(layer), 0, count - 1)" if read.sampler is not None else "the layer itself"
            return Deviation("other-layer", f"the texel of layer {layer} at the same coordinates; the layer "
                                            f"coordinate {float(coords[k]):g} selects layer {selected} ({how}, "
                                            f"{count} layers)", RULE_LAYER)
    return None


def border_colour(ctx: Context, pos: int) -> Deviation | None:
    """Only through a CLAMP sampler, the one addressing mode with a border colour (§8.2 Table 70),
    or NONE, which a driver may implement as CLAMP (Oclgrind reads RG's (0,0,0,1) inside the
    image); elsewhere (0,0,0,1) is as likely a missing or flushed channel."""
    read = Read.of(ctx)
    if read is None or read.sampler is None or read.sampler.addressing not in ("clamp", "none"):
        return None
    if _lanewise(read, pos):
        return None
    item, _ = ctx.where(pos)
    coords = read.coordinates(item)
    if coords is None:
        return None
    own = tuple(read.order.border)
    other = (0, 0, 0, 1) if own[3] == 0 else (0, 0, 0, 0)
    spatial, layer, _ = read.location(coords)
    expected_border = _matches_expected(read, pos, read.vector_bits(own))
    if not expected_border and _matches(read, pos, read.vector_bits(own)):
        none = " (ADDRESS_NONE has no border colour)" if read.sampler.addressing == "none" else ""
        where = (f"texel {read.where(spatial, layer)} inside the image was expected" if read.exact else
                 f"the coordinate is inside the image, near texel {read.where(spatial, layer)}")
        if read.layer_outside(coords):
            return Deviation("border-colour", f"the border colour {own} of {read.order.name} where {where}: the "
                                              f"layer coordinate {float(coords[read.dim.spatial]):g} is outside the "
                                              f"array, and the layer is clamped (CLAMP_TO_EDGE){none}", RULE_LAYER)
        return Deviation("border-colour", f"the border colour {own} of {read.order.name} where {where}{none}",
                         RULE_TEXEL if read.exact else None)
    if expected_border and _matches(read, pos, read.vector_bits(other)):
        return Deviation("border-colour", f"the border colour {other} where {read.order.name}'s is {own}",
                         RULE_BORDER)
    return None


def _matches_expected(read: Read, pos: int, colour: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether the lane's expectation is the border colour ``colour`` on every judged lane."""
    item, _ = read.ctx.where(pos)
    e = read.ctx.exp.select(slice(item * 4, item * 4 + 4))
    ok = e.accepts(colour[0]) | e.accepts(colour[1]) | ~e.judged
    return bool(ok.all()) and bool(e.judged.any())


def other_texel(ctx: Context, pos: int) -> Deviation | None:
    read = Read.of(ctx)
    if read is None or _lanewise(read, pos):
        return None
    item, j = ctx.where(pos)
    coords = read.coordinates(item)
    if coords is None:
        return None
    t = read.table
    f = scalar(t.result)
    actual = ctx.bits[item * 4:item * 4 + 4]
    judged = ctx.exp.judged[item * 4:item * 4 + 4]
    body = slice(0, read.image.texels)
    ok = (t.bits[body] == actual) | (t.alt[body] == actual)
    if f.is_float:
        values = actual.view(f.dtype)
        with np.errstate(invalid="ignore"):
            ok |= t.ranged[body] & (values >= t.lo[body]) & (values <= t.hi[body])
        # the failing lane: the texel's own value (not any NaN, a flushed zero, nor a NaN's bits:
        # a computed NaN is the nan class's, however a texel stores it)
        own = ok[:, j] & ~np.isnan(values[j])
        with np.errstate(invalid="ignore"):
            ok |= t.nan[body] & np.isnan(values)
            ok |= t.flush[body] & (values == 0)
    else:
        own = ok[:, j]
    rows = np.flatnonzero((ok | ~judged | ~read.stored).all(axis=1) & own) if read.stored[j] else []
    if not len(rows):
        return None
    spatial, layer, outside = read.location(coords)
    def distance(row):
        s, L = read.texel_location(int(row))
        return sum(abs(a - b) for a, b in zip(s, spatial)) + (abs(L - layer) if L is not None else 0)
    row = int(min(rows, key=distance))
    there, layer2 = read.texel_location(row)
    alike = f" (one of {len(rows)} texels that read alike)" if len(rows) > 1 else ""
    if outside:
        clamped = tuple(min(max(i, 0), n - 1) for i, n in zip(spatial, read.image.shape))
        edge = ", the edge texel CLAMP_TO_EDGE would read" if (there, layer2) == (clamped, layer) else ""
        return Deviation("other-texel", f"texel {read.where(there, layer2)}{alike}{edge} where the coordinate "
                                        "is outside the image (the border colour)",
                         RULE_BORDER if read.exact else None)
    selects = "selects" if read.exact else "is near"
    return Deviation("other-texel", f"texel {read.where(there, layer2)}{alike} where the coordinate {selects} texel "
                                    f"{read.where(spatial, layer)}", RULE_TEXEL if read.exact else None)


def missing_channel(ctx: Context, pos: int) -> Deviation | None:
    read = Read.of(ctx)
    if read is None:
        return None
    j = ctx.where(pos)[1]
    own = read.vector_bits(tuple(read.order.border))
    if _matches_expected(read, pos, own):
        return None  # the border colour's lanes are not channels
    f = scalar(read.op.type.scalar)
    a = ctx.actual(pos)
    zero, one = 0, int(np.array(1, f.dtype).view(f.bits_dtype))
    ones = {one, int(np.array(1.0, np.float32).view(np.uint32))} if f.is_int else {one}
    src, lane = read.order.returned[j], COMPONENTS[j]
    if src in "01":
        if (src == "1" and a == zero) or (src == "0" and a in ones):
            return Deviation("missing-channel", f"{format_value(a, f.name)} in lane {lane}, a channel {read.order.name} does not "
                                                f"store, which reads {src} (missing R, G, B read 0, a missing A 1)",
                             RULE_TEXEL)
        return None
    if (a == zero or a in ones) and off_by_ulps(ctx, pos) is None:
        coords = read.coordinates(ctx.where(pos)[0])
        if coords is not None and read.layer_outside(coords):
            return Deviation("missing-channel", f"{format_value(a, f.name)} in lane {lane}, which {read.order.name} "
                                                f"stores (channel {src}), at layer coordinate "
                                                f"{float(coords[read.dim.spatial]):g} outside the array: read as if "
                                                "there were no layer there (the layer is clamped)", RULE_LAYER)
        tolerance = rules.rule(int(ctx.exp.rule[pos])).severity == "tolerance"  # a miss, maybe: keep it
        return Deviation("missing-channel", f"{format_value(a, f.name)} in lane {lane}, which {read.order.name} stores "
                                            f"(channel {src}): read as if the channel were missing",
                         None if tolerance else RULE_TEXEL)
    return None


def deciding_rule(ctx: Context, pos: int, found: Deviation) -> Deviation:
    """The rule a wrong NEAREST read breaks whichever texel its uncertain coordinate selects
    (lanes judged under ``image.nearest.tolerance``): where the value is what no texel of the
    image reads as in that lane (:meth:`Read.any_texel`), the rule an exact read names for the
    deviation: ``image.texel`` for a border colour or a missing channel's constant (§6.15.15.7),
    else the channel's conversion rule (``image.half``: half data read as float is lossless,
    §8.3.2; ``image.unorm``, ``image.float``, ``image.int``). PoCL's 234.0 for every texel of a
    HALF_FLOAT image is then a violation of §8.3.2 through every sampler, as through an exact one.
    A deviation that names its rule, or a value some texel reads as, keeps it."""
    if found.rule is not None or int(ctx.exp.rule[pos]) != RULE_NEAREST_TOLERANCE:
        return found
    read = Read.of(ctx)
    if read is None or read.any_texel(pos):
        return found
    j = ctx.where(pos)[1]
    rule = RULE_TEXEL if found.cls in ("border-colour", "missing-channel") else int(read.table.rule[0, j])
    return replace(found, rule=rule)


FIRST = (flushed_coordinate, other_layer, border_colour, other_texel)
"""The whole-vector checks, run before every other."""
