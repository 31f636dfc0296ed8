"""The parent side of a worker: one subprocess per device, a deadline per job, restart on crash.

    with Worker(target, timeout_s=60) as w:
        result = w.run(job)

Whatever the worker does (segfault, abort, hang, garbage on its pipe), ``run`` returns a
``Result``; the process is killed with its whole group and reaped, and the next ``run`` starts a
fresh one. A Worker is not thread-safe: use one per thread.
"""

from __future__ import annotations

import itertools
import os
import pickle
import select
import shutil
import subprocess
import time
import weakref
from dataclasses import replace
from pathlib import Path

import numpy as np

from . import _proc
from .discovery import Target
from .icd import state_dir
from .protocol import (HEADER_BYTES, MEMORY_ARGS, BufferArg, Job, Mapped, Placement, Result, Run, aborted, clip_log,
                       no_result, pack, unpack_length)
from .shared import PAGE, SharedMemory

LOG_TRUNCATE_BYTES = 64 << 20  # a worker log above this is emptied between jobs
_counter = itertools.count()


class WorkerStartError(RuntimeError):
    """The worker process could not open its device."""


class _Timeout(Exception):
    pass


class _Closed(Exception):
    pass


class _Process:
    """The live subprocess and our ends of its pipes (held apart from Worker for the finalizer)."""

    def __init__(self, proc: subprocess.Popen, rfd: int, wfd: int) -> None:
        self.proc, self.rfd, self.wfd = proc, rfd, wfd

    def close_fds(self) -> None:
        for fd in (self.rfd, self.wfd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.rfd = self.wfd = -1

    def kill(self) -> None:
        """SIGKILL the group, reap, close the pipes."""
        _proc.kill_group(self.proc)
        self.proc.wait()
        self.close_fds()

    def stop(self, grace_s: float = 2.0) -> None:
        """Ask the worker to exit (EOF on its input), then kill whatever is left, and reap."""
        if self.wfd >= 0:
            os.close(self.wfd)
            self.wfd = -1
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def wait_exit(self, grace_s: float) -> int:
        """The exit status of a worker that closed its pipe (killed if it lingers), reaped."""
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            # WNOWAIT: leave it a zombie, so its group id stays reserved until kill_group ran.
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if info is not None:
                break
            time.sleep(0.005)
        self.kill()
        return self.proc.returncode


_swept = False


def _sweep_stale(folders: tuple[Path, ...]) -> None:
    """Remove logs and compiler caches (``NAME-PID-N``) left by parents that died without closing
    their workers (once per process)."""
    global _swept
    if _swept:
        return
    _swept = True
    for entry in (e for folder in folders for e in folder.glob("*-*-*")):
        try:
            pid = int(entry.stem.split("-")[-2])
            os.kill(pid, 0)
        except (ValueError, IndexError):
            continue
        except ProcessLookupError:
            _remove(entry)
        except PermissionError:
            pass


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


class _Resources:
    """What a Worker owns outside Python: its process, its log file and its compiler cache
    (apart from the Worker, for finalize)."""

    def __init__(self, log_path: Path, cache: Path) -> None:
        self.log_path = log_path
        self.cache = cache
        self.shared: SharedMemory | None = None
        self.process: _Process | None = None

    def release(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None
        if self.shared is not None:
            self.shared.close()
            self.shared = None
        _remove(self.log_path)
        _remove(self.cache)


class Worker:
    """A worker subprocess serving one Target."""

    def __init__(self, target: Target, timeout_s: float = 60, start_timeout_s: float = 30) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.start_timeout_s = start_timeout_s
        self.start_s: float | None = None  # seconds the latest start took (spawn to "ready")
        self.starts = 0  # processes started so far
        self.last_wall_s: float | None = None  # parent-side seconds of the latest run()
        stem = f"{target.name}-{os.getpid()}-{next(_counter)}"
        self._res = _Resources(state_dir() / "logs" / f"{stem}.log", state_dir() / "cache" / stem)
        # Kills the process and removes the log if the Worker is dropped without close().
        self._finalizer = weakref.finalize(self, self._res.release)

    @property
    def log_path(self) -> Path:
        """This worker's stdout and stderr (removed by close())."""
        return self._res.log_path

    @property
    def _p(self) -> _Process | None:
        return self._res.process

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._p is not None

    @property
    def pid(self) -> int | None:
        return self._p.proc.pid if self._p else None

    def start(self) -> None:
        """Start the process now (``run`` does it lazily). Raises WorkerStartError."""
        if self._p is not None:
            return
        t0 = time.perf_counter()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        _sweep_stale((self.log_path.parent, self._res.cache.parent))
        # The drivers' compiler caches live as long as this process: kernels built more than once
        # within it (rusticl recompiles at each enqueue without one) come from the cache, a new
        # process (restart, replay, the next campaign) compiles afresh, and disk use is bounded.
        # (NVIDIA's ComputeCache, CUDA_CACHE_PATH, would otherwise persist in ~/.nv across campaigns.)
        _remove(self._res.cache)
        self._res.cache.mkdir(parents=True)
        env = {**self.target.env(), "POCL_CACHE_DIR": str(self._res.cache),
               "MESA_SHADER_CACHE_DIR": str(self._res.cache), "CUDA_CACHE_PATH": str(self._res.cache)}
        if self._res.shared is None:
            self._res.shared = SharedMemory()
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        argv = [
            *self.target.command("fuzz.drivers.worker"),  # inside its release's root for a release target
            "--platform", str(self.target.platform_index),
            "--device", str(self.target.device_index),
            "--fd-in", str(to_child_r),
            "--fd-out", str(from_child_w),
            "--fd-shared", str(self._res.shared.fd),
        ]  # fmt: skip
        try:
            with open(self.log_path, "wb") as log:  # a fresh log per process
                proc = subprocess.Popen(
                    argv,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    pass_fds=(to_child_r, from_child_w, self._res.shared.fd),
                    start_new_session=True,
                )
        except BaseException:
            for fd in (to_child_r, to_child_w, from_child_r, from_child_w):
                os.close(fd)
            raise
        os.close(to_child_r)
        os.close(from_child_w)
        os.set_blocking(to_child_w, False)
        os.set_blocking(from_child_r, False)
        self._res.process = _Process(proc, from_child_r, to_child_w)
        if not self._finalizer.alive:  # started again after close()
            self._finalizer = weakref.finalize(self, self._res.release)
        self.starts += 1

        try:
            message = self._recv(time.monotonic() + self.start_timeout_s)
        except Exception as e:  # noqa: BLE001 - timeout, EOF or garbage on the pipe
            what = {_Timeout: "did not start in time", _Closed: "died while starting"}.get(
                type(e), f"sent a bad message ({e!r})"
            )
            status = self._kill()
            raise WorkerStartError(
                f"{self.target.name}: worker {what} ({status})\n{self._log_tail(0)}"
            ) from None
        if not (isinstance(message, tuple) and message and message[0] == "ready"):
            self._kill()
            detail = message[1] if isinstance(message, tuple) and len(message) > 1 else message
            raise WorkerStartError(f"{self.target.name}: worker could not start:\n{detail}")
        expected = (self.target.fingerprint.get("device_name") or "").strip()
        if expected and message[1].get("device") != expected:
            self._kill()
            raise WorkerStartError(
                f"{self.target.name}: worker opened device {message[1].get('device')!r}, "
                f"expected {expected!r}"
            )
        self.start_s = time.perf_counter() - t0

    def restart(self) -> None:
        """A fresh process (caches cold, the compiler's included)."""
        self._stop()
        self.start()

    def close(self) -> None:
        """Stop the process (if any) and remove its log."""
        self._stop()
        self._finalizer()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Worker({self.target.name!r}, timeout_s={self.timeout_s:g}, pid={self.pid})"

    def _forget(self) -> None:
        self._res.process = None

    def _stop(self) -> None:
        if self._p is not None:
            self._p.stop()
            self._forget()

    def _kill(self) -> str:
        """Kill at once; describe how it ended."""
        p = self._p
        if p is None:
            return "not running"
        p.kill()
        self._forget()
        return _proc.describe_exit(p.proc.returncode)

    # -- the channel --------------------------------------------------------------------------

    def _send(self, message: object, deadline: float) -> None:
        data = memoryview(pack(message))
        fd = self._p.wfd
        while data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout
            ready = select.poll()
            ready.register(fd, select.POLLOUT)
            events = ready.poll(left * 1000)
            if not events:
                raise _Timeout
            if events[0][1] & (select.POLLERR | select.POLLHUP):
                raise _Closed
            try:
                data = data[os.write(fd, data) :]
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _Closed from None

    def _read(self, n: int, deadline: float) -> bytes:
        fd, chunks, left = self._p.rfd, [], n
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0 or not poller.poll(wait * 1000):
                raise _Timeout
            try:
                chunk = os.read(fd, min(left, 1 << 20))
            except BlockingIOError:
                continue
            if not chunk:
                raise _Closed
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _recv(self, deadline: float):
        length = unpack_length(self._read(HEADER_BYTES, deadline))
        return pickle.loads(self._read(length, deadline))

    # -- logs ---------------------------------------------------------------------------------

    def _log_size(self) -> int:
        try:
            size = self.log_path.stat().st_size
        except OSError:
            return 0
        if size > LOG_TRUNCATE_BYTES:  # between jobs: the worker writes with O_APPEND semantics
            os.truncate(self.log_path, 0)
            return 0
        return size

    def _log_tail(self, offset: int) -> str:
        """What the worker wrote to stdout/stderr since ``offset`` (its last 8 KiB)."""
        try:
            if self.log_path.stat().st_size == offset:  # the usual case: nothing new
                return ""
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                end = f.tell()
                start = max(offset if end >= offset else 0, end - 8192)
                f.seek(start)
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return text.strip()

    # -- jobs ---------------------------------------------------------------------------------

    def _place(self, job: Job) -> Run:
        """Lay the job's buffers out in the shared memory (initial contents written; a zero-filled
        buffer's are not: the worker fills it on the device) and strip their bytes from the message."""
        places: list[Placement | None] = []
        end = 0
        for arg in job.args:
            if isinstance(arg.data if isinstance(arg, BufferArg) else None, Mapped):
                places.append(Placement(0, arg.nbytes, arg.data.zeros, arg.data.path))
            elif isinstance(arg, MEMORY_ARGS):
                places.append(Placement(end, arg.nbytes, isinstance(arg, BufferArg) and arg.data is None))
                end += -(-arg.nbytes // PAGE) * PAGE
            else:
                places.append(None)
        shared = self._res.shared
        shared.reserve(end)
        view = shared.bytes_view()
        for arg, p in zip(job.args, places):
            if p is not None and not p.zeroed and p.path is None:
                view[p.offset : p.offset + p.nbytes] = np.frombuffer(arg.data, np.uint8)
        del view
        stripped = tuple(replace(a, data=None) if isinstance(a, MEMORY_ARGS) else a for a in job.args)
        return Run(replace(job, args=stripped), shared.size, tuple(places))

    def run(self, job: Job, timeout_s: float | None = None) -> Result:
        """Run one job within ``timeout_s`` (default: the worker's ``timeout_s``); never raises
        for anything the driver does. A read-back buffer's bytes are copied out of the shared
        memory into the result's ``outputs``; a Mapped one's are in its mapping (``outputs`` holds
        the Mapped)."""
        t0 = time.perf_counter()
        try:
            return self._run(job, self.timeout_s if timeout_s is None else timeout_s)
        finally:
            self.last_wall_s = time.perf_counter() - t0

    def _run(self, job: Job, timeout_s: float) -> Result:
        if self._p is None:
            try:
                self.start()
            except WorkerStartError as e:
                return Result("worker_error", log=clip_log(str(e)))
        offset = self._log_size()
        deadline = time.monotonic() + timeout_s
        run = self._place(job)
        try:
            self._send(run, deadline)
            message = self._recv(deadline)
        except _Timeout:
            self._kill()
            tail = self._log_tail(offset)
            text = no_result(timeout_s)
            return Result("timeout", log=clip_log(text + (f"\n{tail}" if tail else "")))
        except _Closed:
            p = self._p
            returncode = p.wait_exit(grace_s=5.0)
            self._forget()
            tail = self._log_tail(offset)
            text = _proc.describe_exit(returncode)
            return Result("crash", log=clip_log(text + (f"\n{tail}" if tail else "")))
        except Exception as e:  # noqa: BLE001 - garbage on the pipe
            self._kill()
            return Result("worker_error", log=clip_log(f"bad message from worker: {e!r}"))

        if not (isinstance(message, tuple) and len(message) == 3 and message[0] == "result"):
            self._kill()
            return Result("worker_error", log=clip_log(f"unexpected message: {message!r}"))
        _, result, healthy = message
        if result.ok:
            result.outputs = {
                arg.name: arg.data if p.path is not None else self._res.shared.copy(p.offset, p.nbytes)
                for arg, p in zip(job.args, run.places)
                if isinstance(arg, BufferArg) and arg.read_back
            }
        tail = self._log_tail(offset)
        if result.ok and aborted(tail):  # the calls succeeded, but the kernel did not run to its end
            result = Result("runtime_error", build_s=result.build_s, run_s=result.run_s)
        if tail:
            result.log = clip_log(f"{result.log}\n{tail}" if result.log else tail)
        if not healthy:  # its context may be broken: replace it before the next job
            self._stop()
        return result


__all__ = ["Worker", "WorkerStartError"]
