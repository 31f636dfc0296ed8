"""Run as ``python -m tests.drivers.loop_limit`` beside one driver (its environment): for each trip
count, a kernel loop's carried sum, printed as ``n iterations_done`` (the number of iterations the
sum shows; n when the driver ran them all)."""

import numpy as np
import pyopencl as cl

SOURCE = """kernel void k(global const uint* n, global uint* out) {
    uint s = 0;
    for (uint j = 0; j < n[0]; j++) s += 1u + (j & 1u);
    out[get_global_id(0)] = s;
}"""
COUNTS = (1024, 65535, 65536, 70000)


def iterations(total: int) -> int:
    """The iterations a sum of 1, 2, 1, 2, ... stands for."""
    pairs, rest = divmod(total, 3)
    return 2 * pairs + (1 if rest else 0)


def main() -> None:
    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    kernel = cl.Kernel(cl.Program(ctx, SOURCE).build(), "k")
    for n in COUNTS:
        nb = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.array([n], np.uint32))
        out = np.zeros(2, np.uint32)
        ob = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
        kernel(queue, (2,), None, nb, ob)
        cl.enqueue_copy(queue, out, ob)
        queue.finish()
        print(n, iterations(int(out[0])), flush=True)


if __name__ == "__main__":
    main()
