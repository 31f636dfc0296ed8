"""Driver settings a target also runs under: PoCL's work-group method, as variant targets.

PoCL turns a kernel into a work-group function by one of several methods, chosen when a kernel is
compiled for a local size (PoCL's lib/llvmopencl/WorkitemHandlerChooser.cc, from the environment
variable POCL_WORK_GROUP_METHOD): ``auto``, the default (every work-item's code replicated for
local sizes of at most 2 work-items, loops otherwise), ``repl`` (replication), ``loops`` (a loop
over the work-items around each region between barriers: where barrier-in-loop code is generated)
and, in releases that have it, ``cbs`` (continuation-based barriers). A value a release does not
know is replaced by ``auto``, with nothing but "Unknown work group generation method" on stderr,
so each variant is checked on its driver before it is offered (:func:`problem`: a kernel with
barriers in a loop, run under the setting, its results and stderr read).

A variant is a target of its own (``pocl+wg-loops``; :func:`fuzz.drivers.discovery.select` takes
it when it is named), on the OpenCL C path, with the setting in its fingerprint, so its
disagreements are its own and a lane that changes with the method is judged like any other.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from . import _proc

VARIANTS: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    "pocl": {f"wg-{method}": (("POCL_WORK_GROUP_METHOD", method),) for method in ("repl", "loops", "cbs")},
}
"""Per driver lineage: each variant's name suffix and the environment it sets."""

_UNKNOWN = b"Unknown work group generation method"
_KERNEL = """kernel void k(global uint *out) {
    local uint s[4];
    uint l = get_local_id(0);
    for (uint r = 0; r < 3; r++) {
        s[l] = l * 16 + r;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0) * 3 + r] = s[(l + 1) & 3];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}"""
_WANT = [((lid + 1) % 4) * 16 + r for gid in range(8) for lid in (gid % 4,) for r in range(3)]


def problem(argv: list[str], env: dict[str, str], settings: tuple[tuple[str, str], ...],
            timeout_s: float = 60) -> str | None:
    """Why ``settings`` is not honoured by the driver ``env`` shows (None when it is): the probe
    kernel (``argv`` runs this module) must compute its values with no "unknown method" on stderr."""
    with tempfile.TemporaryDirectory(prefix="clfuzz-variant-") as cache:
        try:
            rc, out, err = _proc.run(argv, {**env, **dict(settings), "POCL_CACHE_DIR": cache}, timeout_s)
        except subprocess.TimeoutExpired:
            return f"the probe kernel timed out after {timeout_s:g} s"
    if _UNKNOWN in err:
        return f"{' '.join(f'{k}={v}' for k, v in settings)}: the driver does not know this value (it uses 'auto')"
    if rc != 0 or out.strip() != b"ok":
        tail = (err.decode(errors="replace").strip() or out.decode(errors="replace").strip())[-300:]
        return f"the probe kernel failed ({_proc.describe_exit(rc)}): {tail}"
    return None


def _main() -> None:  # pragma: no cover - runs in the probe subprocess
    import numpy as np
    import pyopencl as cl

    platform, device = int(sys.argv[1]), int(sys.argv[2])
    dev = cl.get_platforms()[platform].get_devices()[device]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    out = np.zeros(24, np.uint32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Program(ctx, _KERNEL).build().k(queue, (8,), (4,), buf)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    os.write(1, b"ok" if out.tolist() == _WANT else f"wrong values {out.tolist()}".encode())


if __name__ == "__main__":
    _main()
