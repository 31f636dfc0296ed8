"""Where each IR buffer lives in the two packed kernel arguments.

Inputs are packed into one ``global const uchar *in`` and outputs into one ``global uchar *out``
so that a program can hold hundreds of statements (the number of kernel parameters is limited,
CL_DEVICE_MAX_PARAMETER_SIZE may be as small as 1024 bytes). Shared buffers of atomics programs
(:mod:`lang.ir`) live in the same two: a global one is a region of ``out`` that starts with its
initial values and ends with the final ones; a local one has its initial values in ``in`` and
a region of ``out`` its work-groups copy their final values to (a flag has neither); a shaped
program's control words (lang.shapes) are the region ``ctl`` of ``in``, after the buffers. Each buffer starts at a multiple of
128 bytes, the alignment of the largest built-in type (double16, §6.3.5), so that typed pointers
into the packed bytes are correctly aligned. The emitter and the host side both read this.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lang.ir import Program

ALIGN = 128


@dataclass(frozen=True)
class Region:
    name: str
    offset: int
    nbytes: int


@dataclass(frozen=True)
class Layout:
    inputs: dict[str, Region]
    outputs: dict[str, Region]
    in_bytes: int
    out_bytes: int


_ROLES_IN = {"in": ("in", "local"), "out": ("out", "global", "local")}  # which buffers each packs


def _pack(program: Program, role: str) -> tuple[dict[str, Region], int]:
    regions: dict[str, Region] = {}
    offset = 0
    for b in program.buffers:
        if b.role not in _ROLES_IN[role] or b.kind == "flag":
            continue
        nbytes = program.lanes(b.name) * b.type.elem.size if b.shared else program.global_size * b.type.size
        regions[b.name] = Region(b.name, offset, nbytes)
        offset += -(-nbytes // ALIGN) * ALIGN
    if role == "in" and program.shape is not None:  # a shape's control words (lang.shapes)
        nbytes = 4 * len(program.shape.controls)
        regions["ctl"] = Region("ctl", offset, nbytes)
        offset += -(-nbytes // ALIGN) * ALIGN
    return regions, max(offset, ALIGN)


def layout(program: Program) -> Layout:
    ins, in_bytes = _pack(program, "in")
    outs, out_bytes = _pack(program, "out")
    return Layout(ins, outs, in_bytes, out_bytes)


def sampler_arguments(program: Program) -> tuple:
    """The samplers passed as kernel arguments. The kernel's parameters are ``in``, ``out``, then
    every image (program order), then these samplers (program order); the other samplers are
    declared in the program (lang.images.SAMPLER_SCOPES)."""
    return tuple(s for s in program.samplers if s.scope == "argument")


def input_values(program: Program) -> dict[str, np.ndarray]:
    """Each input buffer's contents, each shared buffer's initial values and each image's stored
    channels, as typed values, one entry per scalar lane in memory."""
    out = {}
    for image in program.images:
        elem = image.storage.elem
        out[image.name] = image.fill.bits(image.texels * image.channels, elem.bits).view(elem.dtype)
    for b in program.buffers:
        if b.fill is None:
            continue
        elem = b.type.elem
        bits = b.fill.bits(program.lanes(b.name), elem.bits)
        out[b.name] = bits.view(elem.dtype)
    if program.shape is not None:
        out["ctl"] = np.array(program.shape.controls, dtype=np.uint32)
    return out


def input_bytes(program: Program, values: dict[str, np.ndarray] | None = None) -> bytes:
    """The packed ``in`` argument."""
    lay = layout(program)
    values = input_values(program) if values is None else values
    buf = np.zeros(lay.in_bytes, np.uint8)
    for name, region in lay.inputs.items():
        raw = np.ascontiguousarray(values[name]).reshape(-1).view(np.uint8)
        buf[region.offset : region.offset + raw.size] = raw
    return buf.tobytes()


def output_bytes(program: Program, values: dict[str, np.ndarray] | None = None) -> bytes | None:
    """The initial ``out`` argument: the initial values of global shared buffers (zeros
    elsewhere); None when the program has none (the driver zero-fills it)."""
    shared = [b for b in program.buffers if b.role == "global"]
    if not shared:
        return None
    lay = layout(program)
    values = input_values(program) if values is None else values
    buf = bytearray(lay.out_bytes)
    for b in shared:
        region = lay.outputs[b.name]
        raw = values[b.name].tobytes()
        buf[region.offset : region.offset + len(raw)] = raw
    return bytes(buf)


def split_outputs(program: Program, raw: bytes) -> dict[str, np.ndarray]:
    """The packed ``out`` argument cut into typed output arrays (one entry per lane in memory)."""
    lay = layout(program)
    out = {}
    for name, region in lay.outputs.items():
        elem = program.buffer(name).type.elem
        out[name] = np.frombuffer(raw, dtype=elem.dtype, count=region.nbytes // elem.size, offset=region.offset)
    return out
