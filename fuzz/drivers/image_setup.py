"""Image set-up on the host: the one piece of the worker that reproducers carry along.

This module imports nothing: the worker (fuzz.drivers.worker) imports it, and every repro.py
that triage.report writes embeds its text, so a reproducer creates its images exactly as the
campaign did (the same descriptor, pitches and layer count).
"""


def make_image(cl, ctx, arg, region, owned: list):
    """A read-only image (``arg``: an ImageArg, or any object with its fields) holding the texels
    in ``region``; an image1d_buffer over a new buffer, appended to ``owned``. Needs nothing but
    ``cl`` (pyopencl), so the reproducers embed it (module docstring)."""
    fmt = cl.ImageFormat(arg.order, arg.channel)
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    if arg.kind == cl.mem_object_type.IMAGE1D_BUFFER:
        buf = cl.Buffer(ctx, flags, hostbuf=region)
        owned.append(buf)
        return cl.Image(ctx, cl.mem_flags.READ_ONLY, fmt, shape=tuple(arg.shape), buffer=buf)
    # An explicit descriptor: pyopencl's shape= form makes a 1D array of one layer whose height
    # is the layer count (rusticl then reads layer 0 only).
    arrayed = arg.kind in (cl.mem_object_type.IMAGE1D_ARRAY, cl.mem_object_type.IMAGE2D_ARRAY)
    spatial = tuple(arg.shape[:-1] if arrayed else arg.shape)
    desc = cl.ImageDescriptor()
    desc.image_type = arg.kind
    desc.shape = spatial + (1,) * (3 - len(spatial))
    desc.array_size = arg.shape[-1] if arrayed else 0
    desc.pitches = (0, 0)
    desc.num_mip_levels = desc.num_samples = 0
    desc.buffer = None
    return cl.Image(ctx, flags, fmt, desc=desc, hostbuf=region)
