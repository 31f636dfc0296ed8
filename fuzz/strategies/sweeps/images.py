"""The images area's corner sweep (lang.corners.images): every image kind read without a sampler
and through every sampler configuration the spec defines for it, with every read function, on
the formats the devices report (``Caps.images``, one set per device: never assumed).

For each device's format set (identical sets once), each corner it can run gets one statement: a
read of a small image of that kind in the first format (sorted) whose channel type takes the read
function (one image per coordinate normalization, §6.15.15.1), at coordinates from the images
strategy's pool (texel centres and edges, a hair inside and outside them, the border and beyond,
layer ties; float coordinates through a sampler, int ones without). Texels are PCG64 bits from a
fixed seed (every class of value a channel type holds, NaN and INF included for float data: the
oracle decides what is judged). A program holds ``policy.image_statements`` reads, at most
``policy.image_count`` images and ``policy.image_samplers`` samplers (CL_DEVICE_MAX_SAMPLERS >= 16);
read_imageh only with fp16. Valid by construction as the random programs are
(fuzz.strategies.images; lang.ir validates).
"""

from __future__ import annotations

from fuzz.strategies.conversions import Caps
from fuzz.strategies.images import coordinate_pool
from lang.corners.images import NO_SAMPLER, functions, sampler_forms
from lang.images import CHANNEL_TYPES, DIMS, READ_RESULTS
from lang.ir import Buffer, Fill, Image, Load, Op, Program, Sampler, Store
from lang.policy import Policy
from lang.types import Type

SHAPES = {"1d": (5,), "1d_array": (5, 3), "1d_buffer": (8,), "2d": (4, 3), "2d_array": (4, 3, 2), "3d": (3, 3, 2)}
"""A small image of each kind (spatial sizes, then the layer count): edges and interior alike."""


def _format(formats: frozenset[tuple[str, str]], dim: str, function: str) -> str | None:
    """The first format (sorted) of kind ``dim`` whose channel type takes ``function``."""
    return next((f for d, f in sorted(formats) if d == dim and function in CHANNEL_TYPES[f.split("/")[1]].reads), None)


def _reads(formats: frozenset[tuple[str, str]], fp16: bool) -> list[tuple[str, str, str, str]]:
    """``(dim, form, function, format)`` of every corner a device with ``formats`` can run."""
    out = []
    for dim in DIMS:
        for form in sampler_forms(dim):
            for fn in functions(form):
                fmt = _format(formats, dim, fn)
                if fmt is not None and (fn != "h" or fp16):
                    out.append((dim, form, fn, fmt))
    return out


def _program(reads: list[tuple[str, str, str, str]], policy: Policy) -> Program:
    images: dict[tuple[str, str], Image] = {}
    samplers: dict[str, Sampler] = {}
    buffers, body = [], []
    for dim, form, fn, fmt in reads:
        key = _image_key(dim, form, fmt)
        if key not in images:
            order, channel = fmt.split("/")
            images[key] = Image(f"img{len(images)}", dim, order, channel, SHAPES[dim], Fill(len(images) + 1))
        image = images[key]
        sampler = None
        if form != NO_SAMPLER:
            if form not in samplers:
                coords, filt, mode = form.split("-", 2)
                samplers[form] = Sampler(f"smp{len(samplers)}", coords == "norm", mode, filt, "argument")
            sampler = samplers[form]
        coord_t = Type("int" if sampler is None else "float", DIMS[dim].coord_width)
        pool = coordinate_pool(image, sampler is not None and sampler.normalized, sampler is None)
        name = f"in{len(buffers)}"
        buffers.append(Buffer(name, coord_t, "in", Fill(0, (), values=pool)))
        result = Type(READ_RESULTS[fn][:-1], 4)
        attrs = {"image": image.name, "sampler": sampler.name if sampler else "", "dim": dim,
                 "form": f"{form}:argument" if sampler else NO_SAMPLER}
        out = f"out{len(body)}"
        buffers.append(Buffer(out, result, "out"))
        body.append(Store(out, Op("read_image", (Load(name, coord_t),), result, tuple(sorted(attrs.items())))))
    half = any(fn == "h" for *_, fn, _ in reads)
    return Program(tuple(buffers), tuple(body), policy.image_global_size, requires=frozenset({"fp16"} if half else ()),
                   area="images", images=tuple(images.values()), samplers=tuple(samplers.values()))


def _image_key(dim: str, form: str, fmt: str) -> tuple[str, str, bool]:
    """The image a read uses: one per kind, format and coordinate normalization (§6.15.15.1: every
    sampled read of one image uses the same; a sampler-less read shares the unnormalized one)."""
    return dim, fmt, form.startswith("norm-")


def _batches(reads: list[tuple[str, str, str, str]], policy: Policy) -> list[list[tuple[str, str, str, str]]]:
    """Consecutive reads, as many per program as the statement, image and sampler limits allow."""
    out: list[list] = []
    images: set = set()
    samplers: set = set()
    for r in reads:
        dim, form, _, fmt = r
        new_images = images | {_image_key(dim, form, fmt)}
        new_samplers = samplers | ({form} - {NO_SAMPLER})
        if not out or len(out[-1]) >= policy.image_statements or len(new_images) > policy.image_count or len(
                new_samplers) > policy.image_samplers:
            out.append([])
            new_images, new_samplers = {_image_key(dim, form, fmt)}, {form} - {NO_SAMPLER}
        out[-1].append(r)
        images, samplers = new_images, new_samplers
    return out


def image_sweep(caps: Caps, policy: Policy) -> list[Program]:
    """The images sweep (module docstring): deterministic, one list per distinct format set."""
    programs: list[Program] = []
    seen: set[str] = set()
    for formats in caps.images:
        for batch in _batches(_reads(formats, caps.fp16), policy):
            program = _program(batch, policy)
            if program.id not in seen:
                seen.add(program.id)
                programs.append(program)
    return programs
