"""Image kinds, formats and sampler modes, each declared once (OpenCL C 3.0 §6.15.15,
chapter 8; the OpenCL API's cl_image_format codes).

Every reader takes what it needs from these tables: the IR validates images and samplers
against them, the host creates images and samplers from their codes, the emitters spell their
types and constants, the oracle decodes texels and picks border colours, and the strategies
draw from the formats a device reports (``clGetSupportedImageFormats``: never assumed).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dim:
    """An image type (§6.3.3, §6.15.15.2 coordinate types)."""

    name: str
    c_type: str  # image2d_t
    spatial: int  # coordinates that address texels (u, v, w)
    arrayed: bool  # one more coordinate: the layer (never normalized, §8.1)
    coord_width: int  # lanes of the coordinate vector (int2 for 1D arrays, int4 for 2D arrays and 3D)
    cl_type: int  # CL_MEM_OBJECT_IMAGE*
    sampled: bool  # read through a sampler at all (image1d_buffer_t: sampler-less only, §6.15.15.2 [83])
    spirv_dim: str  # SPIR-V Dim operand of OpTypeImage

    @property
    def axes(self) -> int:
        """Entries of an image's shape: the spatial sizes, then the layer count."""
        return self.spatial + self.arrayed


DIMS: dict[str, Dim] = {
    d.name: d
    for d in (
        Dim("1d", "image1d_t", 1, False, 1, 0x10F4, True, "1D"),
        Dim("1d_array", "image1d_array_t", 1, True, 2, 0x10F5, True, "1D"),
        Dim("1d_buffer", "image1d_buffer_t", 1, False, 1, 0x10F6, False, "Buffer"),
        Dim("2d", "image2d_t", 2, False, 2, 0x10F1, True, "2D"),
        Dim("2d_array", "image2d_array_t", 2, True, 4, 0x10F3, True, "2D"),
        Dim("3d", "image3d_t", 3, False, 4, 0x10F2, True, "3D"),
    )
}


@dataclass(frozen=True)
class Order:
    """A channel order: the channels in memory, the vector a read returns (a memory channel, or the
    constants 0 and 1 for missing ones) and the border colour of CLK_ADDRESS_CLAMP."""

    name: str
    code: int
    memory: str  # channels per texel in memory order: "bgra"; Rx/RGx pad nothing (element size of R/RG)
    returned: tuple[str, str, str, str]  # per x, y, z, w: a memory channel or "0"/"1"
    border: tuple[int, int, int, int]


ORDERS: dict[str, Order] = {
    o.name: o
    for o in (
        # returned vectors: §6.15.15.7 / SPIR-V env §7.6; borders: §6.15.15.1.1 (its "CL_ARGBA" is
        # RGBA; ABGR is not listed and takes the four-channel rule)
        Order("R", 0x10B0, "r", ("r", "0", "0", "1"), (0, 0, 0, 1)),
        Order("A", 0x10B1, "a", ("0", "0", "0", "a"), (0, 0, 0, 0)),
        Order("RG", 0x10B2, "rg", ("r", "g", "0", "1"), (0, 0, 0, 1)),
        Order("RA", 0x10B3, "ra", ("r", "0", "0", "a"), (0, 0, 0, 0)),
        Order("RGBA", 0x10B5, "rgba", ("r", "g", "b", "a"), (0, 0, 0, 0)),
        Order("BGRA", 0x10B6, "bgra", ("r", "g", "b", "a"), (0, 0, 0, 0)),
        Order("ARGB", 0x10B7, "argb", ("r", "g", "b", "a"), (0, 0, 0, 0)),
        Order("INTENSITY", 0x10B8, "i", ("i", "i", "i", "i"), (0, 0, 0, 0)),
        Order("LUMINANCE", 0x10B9, "l", ("l", "l", "l", "1"), (0, 0, 0, 1)),
        Order("Rx", 0x10BA, "r", ("r", "0", "0", "1"), (0, 0, 0, 0)),
        Order("RGx", 0x10BB, "rg", ("r", "g", "0", "1"), (0, 0, 0, 0)),
        Order("ABGR", 0x10C3, "abgr", ("r", "g", "b", "a"), (0, 0, 0, 0)),
    )
}


@dataclass(frozen=True)
class ChannelType:
    """A channel data type: how one channel is stored and what a read makes of it (§8.3)."""

    name: str
    code: int
    kind: str  # unorm, snorm, sint, uint, half, float
    storage: str  # the scalar type of one stored channel

    @property
    def reads(self) -> tuple[str, ...]:
        """The read functions defined on it (§6.15.15.3-6, Tables 33-34): read_imagef and
        read_imageh for normalized and float data (h not for FLOAT), i for signed, ui for
        unsigned integers; any other pairing is undefined and never generated."""
        return {"unorm": ("f", "h"), "snorm": ("f", "h"), "half": ("f", "h"), "float": ("f",),
                "sint": ("i",), "uint": ("ui",)}[self.kind]


CHANNEL_TYPES: dict[str, ChannelType] = {
    t.name: t
    for t in (
        ChannelType("SNORM_INT8", 0x10D0, "snorm", "char"),
        ChannelType("SNORM_INT16", 0x10D1, "snorm", "short"),
        ChannelType("UNORM_INT8", 0x10D2, "unorm", "uchar"),
        ChannelType("UNORM_INT16", 0x10D3, "unorm", "ushort"),
        ChannelType("SIGNED_INT8", 0x10D7, "sint", "char"),
        ChannelType("SIGNED_INT16", 0x10D8, "sint", "short"),
        ChannelType("SIGNED_INT32", 0x10D9, "sint", "int"),
        ChannelType("UNSIGNED_INT8", 0x10DA, "uint", "uchar"),
        ChannelType("UNSIGNED_INT16", 0x10DB, "uint", "ushort"),
        ChannelType("UNSIGNED_INT32", 0x10DC, "uint", "uint"),
        ChannelType("HALF_FLOAT", 0x10DD, "half", "half"),
        ChannelType("FLOAT", 0x10DE, "float", "float"),
    )
}
"""The channel types clfuzz models. Not modelled (never generated, even where a device lists
them): the packed types (UNORM_SHORT_565/555, UNORM_INT_101010[_2]: no local device lists them,
and §8.3.1 gives no formula for 565/555), UNORM_INT24 (depth images), the sRGB and depth orders."""

# INTENSITY and LUMINANCE exist for normalized and float data only (the API's format table).
NORM_AND_FLOAT_ONLY = frozenset({"INTENSITY", "LUMINANCE"})

READ_RESULTS = {"f": "float4", "h": "half4", "i": "int4", "ui": "uint4"}
"""The vector each read function returns (§6.15.15.3)."""


def read_function(result_c_name: str) -> str:
    """``f``, ``h``, ``i`` or ``ui`` for a read's result type."""
    return next(f for f, t in READ_RESULTS.items() if t == result_c_name)


def format_key(order: str, channel: str) -> str:
    """``RGBA/UNORM_INT8``: how formats are named in fingerprints and requirements."""
    return f"{order}/{channel}"


def modelled(order: str, channel: str) -> bool:
    """Whether clfuzz generates and judges this format."""
    if order not in ORDERS or channel not in CHANNEL_TYPES:
        return False
    return not (order in NORM_AND_FLOAT_ONLY and CHANNEL_TYPES[channel].kind in ("sint", "uint"))


ADDRESSING: dict[str, tuple[int, str, int]] = {
    # name: (cl_addressing_mode code, OpenCL C constant, SPIR-V Sampler Addressing Mode)
    "none": (0x1130, "CLK_ADDRESS_NONE", 0),
    "clamp_to_edge": (0x1131, "CLK_ADDRESS_CLAMP_TO_EDGE", 1),
    "clamp": (0x1132, "CLK_ADDRESS_CLAMP", 2),
    "repeat": (0x1133, "CLK_ADDRESS_REPEAT", 3),
    "mirrored_repeat": (0x1134, "CLK_ADDRESS_MIRRORED_REPEAT", 4),
}
FILTERS: dict[str, tuple[int, str, int]] = {
    "nearest": (0x1140, "CLK_FILTER_NEAREST", 0),
    "linear": (0x1141, "CLK_FILTER_LINEAR", 1),
}
NORMALIZED_ONLY = frozenset({"repeat", "mirrored_repeat"})
"""Addressing modes defined with normalized coordinates only (§6.15.15.1: otherwise undefined)."""

SAMPLER_SCOPES: tuple[str, ...] = ("argument", "program", "kernel")
"""Where a sampler is declared (§6.15.15.1): a kernel argument, a program-scope ``constant
sampler_t``, or a ``const sampler_t`` in the kernel's outermost scope (SPIR-V: an
OpTypeSampler parameter, or OpConstantSampler for both declared forms)."""


def read_form(sampler) -> str:
    """The ``form`` attribute a read records for its sampler (a lang.ir.Sampler, or None):
    ``norm-linear-repeat:argument``, ``no-sampler``."""
    if sampler is None:
        return "no-sampler"
    coords = "norm" if sampler.normalized else "unnorm"
    return f"{coords}-{sampler.filter}-{sampler.addressing}:{sampler.scope}"
