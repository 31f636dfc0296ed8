"""Hypothesis strategies for image reads (OpenCL C 3.0 §6.15.15, chapter 8).

``image_programs(caps, policy)`` draws programs whose statements each read one of a few small
images through a sampler or without one and store the 4-vector. Formats come from what one of
the campaign's devices reports (``Caps.images``, from ``clGetSupportedImageFormats``; never
assumed), so every program runs at least there. Texels are drawn from each channel type's edge
values (normalized endpoints, SNORM -128, the integer limits, NaN, INF and denormals in float
images); coordinates from pools biased to texel centres and edges, values a hair inside and
outside them, the image's border and beyond, large and negative values, array layers at .5
(ties of the half-even rounding of §8.4), normalized seams for REPEAT and MIRRORED_REPEAT, and
(rarely) NaN and INF, which are never judged.

Valid by construction (lang.ir validates it again): each read function suits its channel type
(§6.15.15.3-6), integer coordinates only with sampler-less reads or unnormalized NEAREST
samplers with CLAMP_TO_EDGE/CLAMP/NONE (§6.15.15.2), REPEAT and MIRRORED_REPEAT only with
normalized coordinates, LINEAR only with read_imagef/h, image1d_buffer_t only without a
sampler, and every read of one image uses the same coordinate normalization (§6.15.15.1).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from fuzz.strategies.conversions import Builder, Caps
from fuzz.strategies.values import pools
from lang.images import ADDRESSING, CHANNEL_TYPES, DIMS, READ_RESULTS, SAMPLER_SCOPES, read_form
from lang.ir import Buffer, Fill, Image, Load, Op, Program, Sampler, Store
from lang.policy import Policy
from lang.types import Type

OPERATIONS = frozenset({"read_image"})
"""The operations this strategy draws (tests/test_ops_table.py)."""

DEFAULT_FORMATS = frozenset((d, f) for d in DIMS for f in ("RGBA/UNORM_INT8", "R/FLOAT", "RGBA/SIGNED_INT32"))
"""Formats drawn when no device reports any (the programs then run nowhere: runnable())."""


def _f32(x: float) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def _around(x: float) -> list[float]:
    """``x`` and the float32 values just below and above it."""
    v = np.float32(x)
    return [float(v), float(np.nextafter(v, np.float32(-np.inf))), float(np.nextafter(v, np.float32(np.inf)))]


def coordinate_pool(image: Image, normalized: bool, integer: bool) -> tuple[int, ...]:
    """Bit patterns for one image's coordinate lanes (every axis and the layer share the pool)."""
    spatial = image.shape[: DIMS[image.dim].spatial]
    layers = image.shape[DIMS[image.dim].spatial :]
    if integer:
        values = {-2, -1, 0, 1, 2**31 - 1, -(2**31), 1000, -1000}
        for size in (*spatial, *layers):
            values |= {size - 2, size - 1, size, size + 1, size // 2}
        return tuple(sorted(v & 0xFFFFFFFF for v in values))
    values: set[float] = {0.0, -0.0, 1e6, -1e6, 3e9, -3e9, math.inf, math.nan}
    for size in spatial:
        for k in {0, 1, size // 2, size - 1, size}:
            if normalized:  # texel edges k/size, centres (k+0.5)/size, seams of REPEAT / MIRRORED
                values |= {*_around(k / size), (k + 0.5) / size, -(k + 0.5) / size}
                values |= {*_around(1 + k / size), 2 + (k + 0.5) / size, *_around(-1 - k / size)}
            else:  # texel edges k, centres k+0.5, a hair inside and outside
                values |= {*_around(float(k)), k + 0.5, k + 0.25, -k - 0.5}
    for count in layers:  # layers: half-way ties (rint to even), beyond both ends
        values |= {*_around(0.5), 1.5, 2.5, *_around(count - 0.5), count + 2.0, -0.5, -1.5, 0.49999997}
    return tuple(sorted(_f32(v) for v in values))


class _Images:
    """State while drawing one images program."""

    def __init__(self, b: Builder, caps: Caps, formats: frozenset[tuple[str, str]]) -> None:
        self.b, self.caps, self.formats = b, caps, formats
        self.images: list[Image] = []
        self.normalized: dict[str, bool] = {}
        self.samplers: list[Sampler] = []

    def image(self) -> Image:
        b, rnd = self.b, self.b.rnd
        dim = rnd.choice(sorted({d for d, _ in self.formats}))
        order, channel = rnd.choice(sorted(f for d, f in self.formats if d == dim)).split("/")
        d = DIMS[dim]
        limit = 64 if dim == "1d_buffer" else 16 if d.spatial == 1 else 9 if d.spatial == 2 else 5
        shape = tuple(rnd.randint(1, limit) for _ in range(d.spatial)) + tuple(rnd.randint(1, 5) for _ in range(d.arrayed))
        storage = CHANNEL_TYPES[channel].storage
        fill = Fill(b.draw(st.integers(0, 2**32 - 1)), b.draw(pools(storage, b.policy.pool_max)), 2)
        image = Image(f"img{len(self.images)}", dim, order, channel, shape, fill)
        self.images.append(image)
        self.normalized[image.name] = rnd.random() < 0.5
        return image

    def sampler(self, image: Image, function: str) -> Sampler | None:
        """A sampler for a read of ``image`` (None: a sampler-less read)."""
        rnd = self.b.rnd
        if not DIMS[image.dim].sampled or rnd.random() < 0.2:
            return None
        normalized = self.normalized[image.name]
        modes = [m for m in ADDRESSING if normalized or m not in ("repeat", "mirrored_repeat")]
        filters = ["nearest", "linear"] if function in ("f", "h") else ["nearest"]
        want = (normalized, rnd.choice(modes), rnd.choice(filters))
        for s in self.samplers:
            if (s.normalized, s.addressing, s.filter) == want:
                return s
        if len(self.samplers) >= self.b.policy.image_samplers:
            same = [s for s in self.samplers if s.normalized == normalized and (s.filter == "nearest" or function in ("f", "h"))]
            if same:
                return rnd.choice(same)
            return None
        s = Sampler(f"smp{len(self.samplers)}", *want, rnd.choice(SAMPLER_SCOPES))
        self.samplers.append(s)
        return s

    def statement(self) -> tuple[Store, bool]:
        """One read and whether it needs fp16 (read_imageh)."""
        b, rnd = self.b, self.b.rnd
        if not self.images or (len(self.images) < self.b.policy.image_count and rnd.random() < 0.3):
            image = self.image()
        else:
            image = rnd.choice(self.images)
        functions = [f for f in CHANNEL_TYPES[image.channel].reads if f != "h" or self.caps.fp16]
        function = rnd.choice(functions)
        sampler = self.sampler(image, function)
        integer = sampler is None or (sampler.exact and rnd.random() < 0.4)
        coord_t = Type("int" if integer else "float", DIMS[image.dim].coord_width)
        pool = coordinate_pool(image, sampler is not None and sampler.normalized, integer)
        fill = Fill(b.draw(st.integers(0, 2**32 - 1)), pool, 3)
        coord = Load(b.name("in"), coord_t)
        b.buffers.append(Buffer(coord.buffer, coord_t, "in", fill))
        result = Type(READ_RESULTS[function][:-1], 4)
        attrs = {"image": image.name, "sampler": sampler.name if sampler else "", "dim": image.dim,
                 "form": read_form(sampler)}
        op = Op("read_image", (coord,), result, tuple(sorted(attrs.items())))
        return Store(b.output(result), op), function == "h"


@st.composite
def image_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Programs of image reads (see the module docstring)."""
    rnd = draw(st.randoms(use_true_random=True))
    b = Builder(draw, rnd, policy, ("float",))
    formats = rnd.choice(caps.images) if caps.images else DEFAULT_FORMATS
    s = _Images(b, caps, formats)
    body, half = [], False
    for _ in range(policy.image_statements):
        stmt, h = s.statement()
        body.append(stmt)
        half |= h
    return Program(tuple(b.buffers), tuple(body), policy.image_global_size, requires=frozenset({"fp16"} if half else ()),
                   area="images", images=tuple(s.images), samplers=tuple(s.samplers))

