"""The worker process: serves one device, one Job at a time.

``python -m fuzz.drivers.worker --platform I --device J --fd-in N --fd-out M``

The message channel is two inherited pipes (fds N and M), never stdin/stdout, because drivers
print to stdout; the parent points this process's stdout and stderr at a log file. Messages are
framed pickles (``protocol.pack``). The conversation:

    worker -> ("ready", {"platform": ..., "device": ..., "pid": ...})   or ("error", text)
    parent -> Run (a Job whose buffers are in the shared memory, protocol.Run)
                                   worker -> ("result", Result, healthy)
    ...
    parent closes its end          worker exits

``healthy`` is False after an error once the kernel was enqueued (finish, read back): a driver may
leave its context unusable then (NVIDIA does after a fault), so the parent replaces the worker.
Errors before that (kernel name, arguments, work sizes rejected at enqueue) leave it healthy.
"""

from __future__ import annotations

import argparse
import ctypes
import mmap
import os
import sys
import threading
import time
import traceback
from collections import OrderedDict

from .image_setup import make_image
from .protocol import (
    HEADER_BYTES,
    BufferArg,
    ImageArg,
    Job,
    LocalArg,
    Result,
    Run,
    SamplerArg,
    ScalarArg,
    clip_log,
    pack,
    unpack_length,
)
from .shared import SharedMemory

PROGRAM_CACHE_SIZE = 8  # built programs kept per worker, keyed by (kind, program, options)
MAPPINGS_KEPT = 8  # mappings of Mapped arguments' memfds kept per worker (campaign.exchange.Blocks)

try:
    _libc: ctypes.CDLL | None = ctypes.CDLL(None)
except OSError:
    _libc = None


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _recv(fd: int):
    import pickle

    header = _read_exact(fd, HEADER_BYTES)
    if header is None:
        return None
    body = _read_exact(fd, unpack_length(header))
    return None if body is None else pickle.loads(body)


def _send(fd: int, message: object) -> None:
    data = memoryview(pack(message))
    while data:
        data = data[os.write(fd, data) :]


def _flush_output() -> None:
    """Flush Python's and C's stdio, so a kernel's printf reaches the log before the Result."""
    sys.stdout.flush()
    sys.stderr.flush()
    if _libc is not None:
        _libc.fflush(None)


def _watch_parent() -> None:
    """Exit when the parent dies (the pipe EOF covers it too, unless a kernel never returns)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


class Server:
    """The OpenCL side: one context and one in-order queue, built once."""

    def __init__(self, platform_index: int, device_index: int) -> None:
        import pyopencl as cl

        self.cl = cl
        self.platform = cl.get_platforms()[platform_index]
        self.device = self.platform.get_devices()[device_index]
        self.ctx = cl.Context([self.device])
        self.queue = cl.CommandQueue(self.ctx)
        self.programs: OrderedDict[tuple, object] = OrderedDict()
        self.mappings: OrderedDict[str, tuple[tuple, memoryview]] = OrderedDict()  # by path: (inode, size), mapping

    def info(self) -> dict:
        return {
            "platform": self.platform.name,
            "device": self.device.name.strip(),
            "pid": os.getpid(),
        }

    # -- one job ------------------------------------------------------------------------------

    def _build(self, job: Job):
        """The built program, or raise cl.Error (the caller turns it into build_error)."""
        cl, _cl = self.cl, self.cl._cl
        key = (job.kind, job.program, job.options)
        prg = self.programs.get(key)
        if prg is not None:
            self.programs.move_to_end(key)
            return prg
        if job.kind == "source":
            prg = _cl._Program(self.ctx, job.program.decode("utf-8"))
        elif job.kind == "binary":
            prg = _cl._Program(self.ctx, [self.device], [job.program])
        else:  # "il"
            prg = _cl._create_program_with_il(self.ctx, job.program)
        try:
            prg._build(options=job.options.encode(), devices=[self.device])
        except cl.Error as e:
            e.build_log = self._build_log(prg)
            raise
        self.programs[key] = prg
        while len(self.programs) > PROGRAM_CACHE_SIZE:
            self.programs.popitem(last=False)
        return prg

    def _build_log(self, prg) -> str:
        try:
            return prg.get_build_info(self.device, self.cl.program_build_info.LOG) or ""
        except Exception:  # noqa: BLE001
            return ""

    def _mapped(self, path: str) -> memoryview:
        """The shared memory at ``path`` (a memfd of the worker's parent, by its /proc path), mapped
        read-write: a Mapped argument's bytes. The campaign uses its blocks again
        (campaign.exchange.Blocks): a mapping is kept while ``path`` names the same memfd, so that a
        buffer made from it or read back into it finds its pages mapped in this process."""
        fd = os.open(path, os.O_RDWR)
        try:
            stat = os.fstat(fd)
            key = (stat.st_ino, stat.st_size)  # an inode is unique while the kept mapping holds its memfd
            kept = self.mappings.get(path)
            if kept is not None and kept[0] == key:
                self.mappings.move_to_end(path)
                return kept[1]
            view = memoryview(mmap.mmap(fd, 0))
        finally:
            os.close(fd)
        self.mappings[path] = (key, view)
        while len(self.mappings) > MAPPINGS_KEPT:
            self.mappings.popitem(last=False)
        return view

    def run(self, message: Run, shared: SharedMemory) -> tuple[Result, bool]:
        """Build and run ``message.job``; its buffers' bytes are in ``shared`` (protocol.Run)."""
        cl, job = self.cl, message.job
        shared.attach(message.shared_bytes)
        memory = shared.bytes_view()
        t0 = time.perf_counter()
        try:
            prg = self._build(job)
        except cl.Error as e:
            log = getattr(e, "build_log", "")
            text = f"{e}\n{log}" if log else str(e)
            return Result("build_error", log=clip_log(text), build_s=time.perf_counter() - t0), True

        buffers: list = []
        stage = "setup"
        build_s = run_s = 0.0
        try:
            try:  # some drivers compile here (clCreateKernel): it counts as build time
                kernel = cl._cl.Kernel(prg, job.kernel)
            finally:
                build_s = time.perf_counter() - t0
            reads = []
            for i, (arg, place) in enumerate(zip(job.args, message.places)):
                if isinstance(arg, BufferArg):
                    region = (memory if place.path is None else self._mapped(place.path))[
                        place.offset : place.offset + place.nbytes]
                    if place.zeroed:  # zeros filled on the device (OpenCL 1.2 clEnqueueFillBuffer)
                        buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, size=place.nbytes)
                        pattern = next(n for n in (128, 16, 4, 1) if place.nbytes % n == 0)  # few, wide stores
                        cl.enqueue_fill_buffer(self.queue, buf, bytes(pattern), 0, place.nbytes)
                    else:  # a Mapped input the kernel only reads (an extension's): the driver takes it from
                        # the mapping when the kernel needs it (USE_HOST_PTR), not in a copy at creation
                        lent = place.path is not None and not arg.read_back
                        host = cl.mem_flags.USE_HOST_PTR if lent else cl.mem_flags.COPY_HOST_PTR
                        buf = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE | host, hostbuf=region)
                    buffers.append(buf)
                    kernel.set_arg(i, buf)
                    if arg.read_back:
                        reads.append((buf, region))
                elif isinstance(arg, ImageArg):
                    image = make_image(cl, self.ctx, arg, memory[place.offset : place.offset + place.nbytes], buffers)
                    buffers.append(image)
                    kernel.set_arg(i, image)
                elif isinstance(arg, SamplerArg):
                    sampler = cl.Sampler(self.ctx, arg.normalized, arg.addressing, arg.filter)
                    buffers.append(sampler)
                    kernel.set_arg(i, sampler)
                elif isinstance(arg, ScalarArg):
                    kernel.set_arg(i, arg.data)
                elif isinstance(arg, LocalArg):
                    kernel.set_arg(i, cl.LocalMemory(arg.nbytes))
            stage = "enqueue"
            t1 = time.perf_counter()
            cl.enqueue_nd_range_kernel(self.queue, kernel, job.global_size, job.local_size, job.global_offset)
            stage = "execution"
            for buf, region in reads:  # back into the shared memory: the parent reads it there
                cl.enqueue_copy(self.queue, region, buf, is_blocking=False)
            self.queue.finish()
            run_s = time.perf_counter() - t1
            return Result("ok", build_s=build_s, run_s=run_s), True
        except cl.Error as e:
            if stage != "setup":
                run_s = time.perf_counter() - t1
            text = f"{stage}: {type(e).__name__}: {e}"
            return Result("runtime_error", log=clip_log(text), build_s=build_s, run_s=run_s), (
                stage != "execution"
            )
        finally:
            for buf in buffers:
                try:
                    buf.release()
                except Exception:  # noqa: BLE001
                    pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fuzz.drivers.worker")
    parser.add_argument("--platform", type=int, required=True)
    parser.add_argument("--device", type=int, required=True)
    parser.add_argument("--fd-in", type=int, required=True)
    parser.add_argument("--fd-out", type=int, required=True)
    parser.add_argument("--fd-shared", type=int, required=True)
    args = parser.parse_args(argv)
    fd_in, fd_out = args.fd_in, args.fd_out
    shared = SharedMemory(args.fd_shared)
    _watch_parent()

    try:
        server = Server(args.platform, args.device)
    except Exception:  # noqa: BLE001
        _send(fd_out, ("error", clip_log(traceback.format_exc())))
        os._exit(3)
    _send(fd_out, ("ready", server.info()))

    while True:
        message = _recv(fd_in)
        if message is None:  # the parent closed the channel
            break
        try:
            result, healthy = server.run(message, shared)
        except Exception:  # noqa: BLE001 - a bug on our side, not the driver's
            result, healthy = Result("worker_error", log=clip_log(traceback.format_exc())), True
        _flush_output()
        _send(fd_out, ("result", result, healthy))
        if not healthy:
            break
    _flush_output()
    os._exit(0)  # skip driver teardown: some drivers hang or crash at exit


if __name__ == "__main__":
    main()
