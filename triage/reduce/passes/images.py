"""The reducer's image passes (triage.reduce.passes PASSES): a smaller image, a simpler sampler, a
simpler format and simpler texels for the images the failing statements read.

What a read selects is the spec's addressing (OpenCL C 3.0 §8.2 Table 70, the layer of an array
§8.4), computed as the oracle computes it (:mod:`oracles.images.addressing`): for each work-item,
each axis, the texel indices the read may touch, its LINEAR neighbours and, where §8.2 leaves the
precision undefined, the texels within the oracle's tolerance of the coordinate. Every candidate
is a valid program (lang.ir.validate: §6.15.15.1-6's rules on samplers, coordinates and read
functions) and is judged anew from its own program; the Reducer keeps it only when it still shows
the goal (triage.reduce.Reducer.accepted).

1. ``image_size``: the image cropped to the box of texels its reads touch (coordinates shifted by
   the box's corner, normalized ones rescaled to the new size, so each read keeps selecting the
   same texel under CLAMP_TO_EDGE, CLAMP and NONE: Table 70's ``address_mode`` clamps to an edge
   the box keeps, and a border stays outside it), else cropped at the far end only (coordinates
   unchanged), else halved along every axis. REPEAT and MIRRORED_REPEAT depend on the size
   (§8.2): such a shrink changes the meaning, and is kept only if judged anew it still fails.
2. ``sampler``: NEAREST for LINEAR, unnormalized coordinates (scaled by the size, §8.2
   ``u = s * w_t``) for normalized ones, CLAMP_TO_EDGE, NONE, and a sampler-less read
   (§6.15.15.2: integer coordinates with an unnormalized NEAREST sampler, whose sampler-less form
   is NEAREST, unnormalized, ADDRESS_NONE: SPIR-V env §7.7).
3. ``format``: fewer channels or a smaller channel type (UNORM_INT8 first), among the formats the
   target reports (``clGetSupportedImageFormats``, OpenCL API 3.0 §5.3.2, in its fingerprint) that
   clfuzz models and the read function is defined on (§6.15.15.3-6); texels re-encoded by value
   (§8.3: c / (2^n - 1) for UNORM and the like).
4. ``texels``: every texel no read touches becomes 0; the touched ones the simplest value of their
   input class (triage.reduce.base.simplest), all at once, then one texel at a time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from lang.derive import restrict
from lang.images import CHANNEL_TYPES, DIMS, ORDERS, modelled, read_form, read_function
from lang.ir import Expr, Image, Load, Op, Program, Sampler, Store, walk
from lang.layout import input_values
from lang.types import scalar
from oracles import address, array_layer, axis_candidates, int_floor
from triage.reduce.base import Candidates, Reducing, explicit, simplest

ADDRESSING_ORDER = ("clamp_to_edge", "none", "clamp", "repeat", "mirrored_repeat")
"""Addressing modes, simplest first (the ``sampler`` pass only moves down this list): Table 70's
clamp to an edge texel, no addressing (a coordinate outside the image is then undefined and its
lane not judged), the border colour, then the modes that wrap (normalized coordinates only)."""
MAX_FORMATS = 6
"""Formats the ``format`` pass tries per image, simplest first (each is a run on the target)."""
MAX_TEXELS = 16
"""Texels the ``texels`` pass simplifies one at a time (after all of them at once)."""


def _reads(program: Program, image: str) -> list[Op]:
    return [n for s in program.body for n in walk(s.value)
            if isinstance(n, Op) and n.op == "read_image" and n.attr("image") == image]


def failing_images(program: Program, rows: list[dict]) -> list[Image]:
    """The images the statements of ``rows`` read, in program order."""
    buffers = {r["buffer"] for r in rows}
    names = {n.attr("image") for s in program.body if s.buffer in buffers for n in walk(s.value)
             if isinstance(n, Op) and n.op == "read_image"}
    return [i for i in program.images if i.name in names]


def _coordinates(program: Program, op: Op, inputs: dict[str, np.ndarray]) -> np.ndarray | None:
    """Each work-item's coordinate lanes, (n, width) typed values; None unless a load."""
    coord = op.args[0]
    if not isinstance(coord, Load):
        return None
    t = coord.type
    return inputs[coord.buffer].reshape(program.global_size, t.mem_lanes)[:, :t.width].copy()


def _axis_indices(image: Image, sampler: Sampler | None, c: np.ndarray) -> list[np.ndarray]:
    """Per axis (the spatial ones, then the layer), the (n, K) texel indices a read may select:
    Table 70 for the exact samplers and sampler-less reads, the oracle's tolerance candidates (with
    LINEAR's two neighbours) for the others, §8.4 for the layer."""
    dim = DIMS[image.dim]
    out = []
    for a in range(dim.spatial):
        size = image.shape[a]
        if sampler is None or sampler.exact:
            i = c[:, a].astype(np.int64) if c.dtype.kind == "i" else int_floor(c[:, a].astype(np.float64))[0]
            out.append(address(i, size, sampler.addressing if sampler else "none")[0][:, None])
        else:
            out.append(axis_candidates(c[:, a], size, sampler)[0])
    if dim.arrayed:
        out.append(array_layer(c[:, dim.spatial], image.shape[dim.spatial], sampler is not None)[0][:, None])
    return out


def _selections(program: Program, image: Image, inputs: dict[str, np.ndarray]) -> list[list[np.ndarray]] | None:
    """:func:`_axis_indices` of every read of ``image``; None where a coordinate is not a load."""
    out = []
    for op in _reads(program, image.name):
        c = _coordinates(program, op, inputs)
        if c is None:
            return None
        out.append(_axis_indices(image, program.sampler(op.attr("sampler")) if op.attr("sampler") else None, c))
    return out


def texels_read(program: Program, image: Image, inputs: dict[str, np.ndarray]) -> set[int] | None:
    """The texels (flat index: x fastest, then y, z or layer) inside ``image`` that its reads may
    touch, on any work-item; None where a coordinate is not a load."""
    selections = _selections(program, image, inputs)
    if selections is None:
        return None
    out: set[int] = set()
    for axes in selections:
        n = axes[0].shape[0]
        flat, inside, stride = np.zeros((n, 1), np.int64), np.ones((n, 1), bool), 1
        for size, cand in zip(image.shape, axes, strict=True):
            flat = (flat[:, :, None] + (np.clip(cand, 0, size - 1) * stride)[:, None, :]).reshape(n, -1)
            inside = (inside[:, :, None] & ((cand >= 0) & (cand < size))[:, None, :]).reshape(n, -1)
            stride *= size
        out.update(int(t) for t in flat[inside])
    return out


def _box(image: Image, selections: list[list[np.ndarray]]) -> list[tuple[int, int]]:
    """Per axis, the least and greatest index inside the image any read touches ((0, 0) if none)."""
    box = []
    for a, size in enumerate(image.shape):
        inside = np.concatenate([axes[a][(axes[a] >= 0) & (axes[a] < size)] for axes in selections])
        box.append((int(inside.min()), int(inside.max())) if inside.size else (0, 0))
    return box


def _texel_array(image: Image, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The stored channels as an array indexed [layer or z][y][x][channel]."""
    return inputs[image.name].reshape(*reversed(image.shape), image.channels)


def _with_coordinates(program: Program, image: Image, move: Callable[[np.ndarray, bool], np.ndarray],
                      inputs: dict[str, np.ndarray]) -> Program:
    """``program`` with each read of ``image`` taking ``move(coordinates, normalized)`` (the
    coordinate buffers written as explicit values)."""
    buffers = {}
    for op in _reads(program, image.name):
        load = op.args[0]
        assert isinstance(load, Load)  # _selections checked it
        sampler = program.sampler(op.attr("sampler")) if op.attr("sampler") else None
        t = load.type
        lanes = inputs[load.buffer].reshape(program.global_size, t.mem_lanes).copy()
        lanes[:, :t.width] = move(lanes[:, :t.width], bool(sampler and sampler.normalized))
        buffers[load.buffer] = replace(program.buffer(load.buffer), fill=explicit(lanes.ravel()))
    return replace(program, buffers=tuple(buffers.get(b.name, b) for b in program.buffers))


def _cropped(program: Program, image: Image, box: list[tuple[int, int]], inputs: dict[str, np.ndarray]) -> Program:
    """The image cut to ``box`` (its texels kept where they were relative to the box's corner) and
    its reads' coordinates moved by the corner (normalized ones rescaled: §8.2 ``u = s * w_t``)."""
    shape = tuple(hi - lo + 1 for lo, hi in box)
    texels = _texel_array(image, inputs)[tuple(slice(lo, hi + 1) for lo, hi in reversed(box))]
    new = replace(image, shape=shape, fill=explicit(texels.ravel()))
    spatial = DIMS[image.dim].spatial

    def move(c: np.ndarray, normalized: bool) -> np.ndarray:
        out = c.astype(np.float64) if c.dtype.kind == "f" else c.astype(np.int64)
        for a, (lo, _) in enumerate(box):
            if normalized and a < spatial:
                out[:, a] = (out[:, a] * image.shape[a] - lo) / shape[a]
            else:
                out[:, a] -= lo
        return out.astype(c.dtype)

    moved = _with_coordinates(program, image, move, inputs)
    return replace(moved, images=tuple(new if i.name == image.name else i for i in moved.images))


def image_size_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    inputs = input_values(program)
    for image in failing_images(program, rows):
        selections = _selections(program, image, inputs)
        if selections is None or image.texels == 1:
            continue
        box = _box(image, selections)
        tried = set()
        for crop in (box, [(0, hi) for _, hi in box], [(0, (size + 1) // 2 - 1) for size in image.shape]):
            key = tuple(crop)
            if key not in tried and tuple(hi - lo + 1 for lo, hi in crop) != image.shape:
                tried.add(key)
                yield _cropped(program, image, crop, inputs)


def _with_attrs(op: Op, **changes: object) -> Op:
    return replace(op, attrs=tuple(sorted({**dict(op.attrs), **changes}.items())))


def _map_reads(program: Program, change: Callable[[Op], Op]) -> Program:
    """``program`` with every read_image node ``op`` replaced by ``change(op)``, unused samplers
    dropped (lang.derive.restrict)."""

    def walk_change(e: Expr) -> Expr:
        if not isinstance(e, Op):
            return e
        e = replace(e, args=tuple(walk_change(a) for a in e.args))
        return change(e) if e.op == "read_image" else e

    body = tuple(Store(s.buffer, walk_change(s.value)) for s in program.body)
    return restrict(replace(program, body=body), list(range(len(body))))


def _with_sampler(program: Program, old: Sampler, new: Sampler | None) -> Program:
    """Every read through ``old`` reads through ``new`` (None: sampler-less) and records its form."""
    samplers = tuple(s for s in program.samplers if s.name != old.name) + ((new,) if new else ())
    p = replace(program, samplers=samplers)
    return _map_reads(p, lambda op: _with_attrs(op, sampler=new.name if new else "", form=read_form(new))
                      if op.attr("sampler") == old.name else op)


def sampler_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    inputs = input_values(program)
    for image in failing_images(program, rows):
        reads = _reads(program, image.name)
        if any(not isinstance(op.args[0], Load) for op in reads):
            continue
        for name in dict.fromkeys(op.attr("sampler") for op in reads if op.attr("sampler")):
            s = program.sampler(name)
            if s.filter == "linear":
                yield _with_sampler(program, s, replace(s, filter="nearest"))
            if s.normalized:
                mode = "clamp_to_edge" if s.addressing in ("repeat", "mirrored_repeat") else s.addressing
                scaled = _unnormalized(program, image, inputs)
                yield _with_sampler(scaled, s, replace(s, normalized=False, addressing=mode))
            for mode in ADDRESSING_ORDER[:ADDRESSING_ORDER.index(s.addressing)]:
                yield _with_sampler(program, s, replace(s, addressing=mode))
            if s.exact and all(op.args[0].type.scalar == "int" for op in reads):
                yield _with_sampler(program, s, None)


def _unnormalized(program: Program, image: Image, inputs: dict[str, np.ndarray]) -> Program:
    """The reads of ``image`` with their normalized spatial coordinates scaled by the size
    (§8.2: ``u = s * w_t``; the layer is never normalized, §8.1)."""
    spatial = DIMS[image.dim].spatial

    def move(c: np.ndarray, normalized: bool) -> np.ndarray:
        out = c.astype(np.float64)
        if normalized:
            out[:, :spatial] *= np.array(image.shape[:spatial], np.float64)
        return out.astype(c.dtype)

    return _with_coordinates(program, image, move, inputs)


def _rank(order: str, channel: str) -> tuple:
    """Simpler first: fewer channels, a smaller channel type, UNORM_INT8 before the others."""
    bits = scalar(CHANNEL_TYPES[channel].storage).bits
    return len(ORDERS[order].memory), bits, channel != "UNORM_INT8", order, channel


def _decoded(values: np.ndarray, channel: str) -> np.ndarray:
    """Stored channel values as what a read makes of them (§8.3), as float64."""
    kind = CHANNEL_TYPES[channel].kind
    x = values.astype(np.float64)
    if kind in ("unorm", "snorm"):
        top = float(np.iinfo(values.dtype).max)
        return np.maximum(x / top, -1.0)
    return x


def _encoded(x: np.ndarray, channel: str) -> np.ndarray:
    """Float64 values stored in ``channel`` (§8.3's conversions read backwards, saturating)."""
    t = CHANNEL_TYPES[channel]
    dtype = scalar(t.storage).dtype
    if t.kind in ("half", "float"):
        with np.errstate(over="ignore"):
            return x.astype(dtype)
    x = np.nan_to_num(x)
    if t.kind in ("unorm", "snorm"):
        top = np.iinfo(dtype).max
        return np.rint(np.clip(x, -1.0 if t.kind == "snorm" else 0.0, 1.0) * top).astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.rint(x), info.min, info.max).astype(dtype)


def format_pass(program: Program, rows: list[dict], reducer: Reducing) -> Candidates:
    inputs = input_values(program)
    reported = reducer.target.fingerprint.get("image_formats", {})
    for image in failing_images(program, rows):
        functions = {read_function(op.type.c_name) for op in _reads(program, image.name)}
        reported_formats = (f.split("/") for f in reported.get(image.dim, ()))  # NVIDIA's include unnamed orders
        options = sorted(((o, c) for o, c in reported_formats if modelled(o, c)), key=lambda f: _rank(*f))
        simpler = [(o, c) for o, c in options if _rank(o, c) < _rank(image.order, image.channel)
                   and functions <= set(CHANNEL_TYPES[c].reads)]
        old = ORDERS[image.order].memory
        texels = _texel_array(image, inputs).reshape(image.texels, image.channels)
        for order, channel in simpler[:MAX_FORMATS]:
            source = [old.index(ch) if ch in old else old.index("r") if "r" in old else 0
                      for ch in ORDERS[order].memory]  # a channel of the same name, else red, else the first
            stored = _encoded(_decoded(texels[:, source], image.channel), channel)
            new = replace(image, order=order, channel=channel, fill=explicit(stored.ravel()))
            yield replace(program, images=tuple(new if i.name == image.name else i for i in program.images))


def texels_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    inputs = input_values(program)
    for image in failing_images(program, rows):
        read = texels_read(program, image, inputs)
        if read is None:
            continue
        values = _texel_array(image, inputs).reshape(image.texels, image.channels)
        bits = values.view(np.dtype(f"u{values.dtype.itemsize}"))
        kept = sorted(read)
        zeroed = np.zeros_like(bits)
        zeroed[kept] = bits[kept]
        plain = zeroed.copy()
        for t in kept:
            plain[t] = [simplest(int(b), image.storage.scalar) for b in bits[t]]
        singles = (np.where(np.arange(image.texels)[:, None] == t, plain, zeroed) for t in kept[:MAX_TEXELS])
        for new in (zeroed, plain, *singles):
            if not np.array_equal(new, bits):
                fill = explicit(new.view(values.dtype).ravel())
                yield replace(program, images=tuple(replace(i, fill=fill) if i.name == image.name else i
                                                    for i in program.images))


def why(program: Program, rows: list[dict]) -> str:
    """Why the failing reads need more than one texel, or more than the texels they read: the
    filter or the tolerance touches several (§8.2), or no smaller image showed it."""
    inputs = input_values(program)
    out = []
    for image in failing_images(program, rows):
        read = texels_read(program, image, inputs)
        if image.texels == 1 or read is None:
            continue
        samplers = {program.sampler(op.attr("sampler")) for op in _reads(program, image.name) if op.attr("sampler")}
        if len(read) > 1:
            how = "filters" if any(s.filter == "linear" for s in samplers) else "may select"
            out.append(f"image: the failing read {how} {len(read)} texels of {image.name}")
        else:
            out.append(f"image: {image.name} keeps {'x'.join(map(str, image.shape))} texels; no smaller image shows it")
    return "; ".join(out)
