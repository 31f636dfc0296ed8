"""The image reads' rows of the corner table (lang.corners), derived from lang.images.

OpenCL C 3.0.19 §6.15.15 and chapter 8 define a read by the image's kind, the sampler's three
settings and the read function: every image type (§6.15.15.2: 1D, 1D array, 1D buffer, 2D, 2D
array, 3D) read without a sampler, and, for the kinds that take one (not image1d_buffer_t), with
every sampler the spec defines for it (§6.15.15.1: normalized or unnormalized coordinates, each
addressing mode, REPEAT and MIRRORED_REPEAT with normalized coordinates only, NEAREST or LINEAR);
each read function its channel types take (§6.15.15.3-6: read_imagef and read_imageh for
normalized and float data, read_imagei for signed, read_imageui for unsigned integers; LINEAR
with read_imagef and read_imageh only). A corner is ``read_image:<type>:<kind>:<sampler>``
(``read_image:float:2d_array:norm-linear-mirrored_repeat``), its type the read's result type.

A device can run a corner where it reports a format of that kind whose channel type takes the
read function (``clGetSupportedImageFormats``, the fingerprint's ``image_formats``; never assumed):
:func:`capabilities` names those as ``image:<kind>:<function>``, what each corner needs.
"""

from __future__ import annotations

from lang.images import ADDRESSING, CHANNEL_TYPES, DIMS, FILTERS, NORMALIZED_ONLY, READ_RESULTS, modelled

NO_SAMPLER = "no-sampler"


def sampler_forms(dim: str) -> tuple[str, ...]:
    """Every way an image of kind ``dim`` is read: without a sampler, and through each sampler
    configuration the spec defines for it (lang.images.read_form's spelling, without the scope)."""
    if not DIMS[dim].sampled:
        return (NO_SAMPLER,)
    return (NO_SAMPLER,) + tuple(f"{coords}-{f}-{mode}" for coords in ("norm", "unnorm") for mode in ADDRESSING
                                 if coords == "norm" or mode not in NORMALIZED_ONLY for f in FILTERS)


def functions(form: str) -> tuple[str, ...]:
    """The read functions a sampler form takes (LINEAR: read_imagef and read_imageh only)."""
    return ("f", "h") if "-linear-" in form else ("f", "h", "i", "ui")


def needs(dim: str, function: str) -> frozenset[str]:
    """What a device must have to run a read of ``dim`` with ``function``."""
    return frozenset({f"image:{dim}:{function}"} | ({"fp16"} if function == "h" else set()))


def rows() -> list[tuple[str, str, frozenset[str]]]:
    """``(type, key, needs)`` of every image corner."""
    return [(READ_RESULTS[fn][:-1], f"{dim}:{form}", needs(dim, fn))
            for dim in DIMS for form in sampler_forms(dim) for fn in functions(form)]


def key_of(attrs: dict) -> str:
    """The corner key of one ``read_image`` operation from its attributes (``dim``, ``form``)."""
    return f"{attrs['dim']}:{attrs['form'].split(':')[0]}"


def capabilities(fingerprint: dict) -> frozenset[str]:
    """The ``image:<kind>:<function>`` a device can run: a modelled format of that kind whose
    channel type takes the function (none without image support)."""
    if not fingerprint.get("image_support"):
        return frozenset()
    out = set()
    for dim, keys in (fingerprint.get("image_formats") or {}).items():
        for key in keys:
            order, _, channel = key.partition("/")
            if dim in DIMS and channel in CHANNEL_TYPES and modelled(order, channel):
                out |= {f"image:{dim}:{fn}" for fn in CHANNEL_TYPES[channel].reads}
    return frozenset(out)
