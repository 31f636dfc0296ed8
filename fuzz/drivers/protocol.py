"""Messages between the parent and a worker process: plain, picklable dataclasses.

The parent sends a ``Job``; the worker answers a ``Result``. Statuses:

- ``ok``: the kernel ran; ``outputs`` holds every ``read_back`` buffer.
- ``build_error``: program creation or clBuildProgram failed; ``log`` is the build log.
- ``runtime_error``: any other OpenCL error (kernel creation, arguments, enqueue, read back), or a
  run whose calls all succeeded but whose driver said on its output that it stopped executing the
  kernel (:func:`aborted`).
- ``crash``: the worker died (signal or exit); ``log`` names it and ends with its stderr tail.
- ``timeout``: the worker overran the deadline and was killed; ``log`` begins with
  :func:`no_result`, which states the seconds it was given (:func:`time_given` reads them back).
- ``worker_error``: a bug on our side (bad job, protocol failure, worker could not start).
- ``invalid_module``: the SPIR-V emitter wrote a module spirv-val rejects (our bug; never run).
"""

from __future__ import annotations

import pickle
import re
from dataclasses import dataclass, field

STATUSES = ("ok", "build_error", "runtime_error", "crash", "timeout", "worker_error", "invalid_module")
JOB_KINDS = ("source", "binary", "il")
LOG_LIMIT = 8 * 1024  # bytes of log a Result carries at most

ABORTS = (
    # Oclgrind 21.10 (src/core/WorkItem.cpp) on an instruction it cannot simulate, e.g.
    # "Unsupported instruction: addrspacecast" for a built-in's out-parameter that points to global
    # memory under -cl-std=CL2.0 (the generic address space): the work-item stops there, its later
    # statements never run, and clEnqueueNDRangeKernel and clFinish still return CL_SUCCESS. Judged
    # as a run, its unwritten outputs were reported as other built-ins' wrong values ("modf + tanpi:
    # interaction", a 3-minute math campaign of 2026-11-28).
    "OCLGRIND FATAL ERROR",
)
"""What a driver writes to its process's output when it stopped executing a kernel whose OpenCL
calls succeeded."""


def aborted(output: str) -> bool:
    """Whether ``output`` (what the worker wrote during one run) says the driver stopped executing
    the kernel (:data:`ABORTS`): its outputs are not the kernel's, the run is a ``runtime_error``."""
    return any(marker in output for marker in ABORTS)


@dataclass(frozen=True)
class Mapped:
    """A buffer's bytes in shared memory another process of the same user made (a memfd, opened by
    its ``/proc`` path): the worker maps it and creates the buffer from it, or reads the buffer back
    into it, instead of the bytes travelling through its own shared memory (a GPU's extensions:
    campaign.exchange blocks of up to 256 MiB, each copy of them a GPU's wait). ``zeros``: the buffer
    starts as zeros whatever the mapping holds (filled on the device)."""

    path: str
    zeros: bool = False


@dataclass(frozen=True)
class BufferArg:
    """One kernel argument: a global buffer."""

    name: str
    data: bytes | Mapped | None  # initial contents (None: zero-filled; Mapped: those of a mapping)
    nbytes: int
    read_back: bool  # copy back after the run (into the mapping where ``data`` is one)

    def __post_init__(self) -> None:
        if self.nbytes <= 0:
            raise ValueError(f"buffer {self.name!r}: nbytes must be positive, not {self.nbytes}")
        if isinstance(self.data, bytes) and len(self.data) != self.nbytes:
            raise ValueError(
                f"buffer {self.name!r}: {len(self.data)} bytes of data for nbytes={self.nbytes}"
            )


@dataclass(frozen=True)
class ImageArg:
    """A read-only image: ``cl_mem_object_type`` ``kind``, format codes ``order`` and
    ``channel``, ``shape`` (width, then height, depth or layer count) and its texels, tightly
    packed (an image1d_buffer is created over a buffer of these bytes)."""

    name: str
    kind: int
    order: int
    channel: int
    shape: tuple[int, ...]
    data: bytes | None
    nbytes: int

    read_back = False


@dataclass(frozen=True)
class SamplerArg:
    """A sampler created on the host (cl_addressing_mode and cl_filter_mode codes)."""

    name: str
    normalized: bool
    addressing: int
    filter: int


@dataclass(frozen=True)
class ScalarArg:
    """A by-value argument."""

    name: str
    data: bytes  # raw little-endian bytes of the value


@dataclass(frozen=True)
class LocalArg:
    """A ``__local`` buffer of nbytes."""

    name: str
    nbytes: int


MEMORY_ARGS = (BufferArg, ImageArg)  # arguments whose bytes travel through the shared memory
ARG_TYPES = (BufferArg, ImageArg, SamplerArg, ScalarArg, LocalArg)


@dataclass(frozen=True)
class Job:
    """One program to build and one NDRange to run."""

    kind: str  # "source" (OpenCL C text), "binary" (clCreateProgramWithBinary), "il" (SPIR-V)
    program: bytes  # source text (utf-8) or binary
    options: str  # build options
    kernel: str
    args: tuple  # of BufferArg | ImageArg | SamplerArg | ScalarArg | LocalArg, in kernel-parameter order
    global_size: tuple[int, ...]
    local_size: tuple[int, ...] | None
    global_offset: tuple[int, ...] | None = None  # clEnqueueNDRangeKernel's global_work_offset

    def __post_init__(self) -> None:
        if self.kind not in JOB_KINDS:
            raise ValueError(f"job kind must be one of {JOB_KINDS}, not {self.kind!r}")
        if not 1 <= len(self.global_size) <= 3:
            raise ValueError(f"global_size must have 1 to 3 dimensions: {self.global_size}")
        if self.local_size is not None and len(self.local_size) != len(self.global_size):
            raise ValueError(f"local_size {self.local_size} does not match {self.global_size}")
        for arg in self.args:
            if not isinstance(arg, ARG_TYPES):
                raise TypeError(f"kernel argument of unknown type: {arg!r}")


@dataclass
class Result:
    """What came of a Job."""

    status: str  # one of STATUSES
    # read-back buffers (status ok): their bytes, or a Mapped argument's mapping, which holds them
    outputs: dict[str, bytes | bytearray | Mapped] = field(default_factory=dict)
    log: str = ""  # build log, exception text, signal name, or the worker's stderr tail
    build_s: float = 0.0  # seconds in program creation + clBuildProgram
    run_s: float = 0.0  # seconds from first enqueue to finish + read back

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def no_result(seconds: float) -> str:
    """The line a run cut at its limit of ``seconds`` begins its log with."""
    return f"no result after {seconds:g} s; worker killed"


_GIVEN = re.compile(r"no result after ([0-9.]+(?:e[+-]?[0-9]+)?) s")


def time_given(text: str) -> float | None:
    """The seconds a run cut at its limit was given, read from its :func:`no_result` line in a log
    or a disagreement row's ``actual_value``; None when the text has none."""
    found = _GIVEN.search(text or "")
    return float(found.group(1)) if found else None


def clip_log(text: str, limit: int = LOG_LIMIT) -> str:
    """A log of at most about ``limit`` bytes: its first quarter and its end, ``[...]`` between.
    A crash's error is at the end; a build error can be at the start, followed by pages of
    optimisation remarks (PoCL's missing kernel-library symbols): corpus.buckets.first_error finds
    it in either part."""
    raw = text.encode("utf-8", errors="replace")
    if len(raw) <= limit:
        return text
    head = limit // 4
    return (raw[:head].decode("utf-8", errors="replace") + "\n[...]\n"
            + raw[-(limit - head - 7):].decode("utf-8", errors="replace"))


# ---- the wire ------------------------------------------------------------------------------------
#
# Buffer contents do not travel through the pipe: a program's buffers are tens of megabytes, and
# pickling them through a pipe cost more than some drivers' own run time. The parent owns one
# shared memory file (a memfd the worker inherits); it writes each buffer's initial contents
# there and sends the Job with ``data=None`` plus a Placement per buffer argument; the worker
# creates the OpenCL buffers from those bytes and reads the results back into the same places.


@dataclass(frozen=True)
class Placement:
    """Where one buffer argument's bytes lie in the shared memory (or in a :class:`Mapped` one's
    memory: ``path``); ``zeroed``: a buffer that starts as zeros (its initial contents None), whose
    bytes there are not written: the worker fills it on the device (no transfer of zeros)."""

    offset: int
    nbytes: int
    zeroed: bool = False
    path: str | None = None  # at ``offset`` of this mapping instead (a Mapped argument)


@dataclass(frozen=True)
class Run:
    """The message that asks a worker to run ``job`` (whose buffers are in the shared memory,
    ``shared_bytes`` long, at ``places``; ``None`` for an argument that is not a buffer)."""

    job: Job
    shared_bytes: int
    places: tuple[Placement | None, ...]


# ---- framing: an 8-byte big-endian length, then a pickle ----------------------------------------

HEADER_BYTES = 8


def pack(message: object) -> bytes:
    """One framed message (the channel is a private pipe between our own processes)."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(HEADER_BYTES, "big") + body


def unpack_length(header: bytes) -> int:
    return int.from_bytes(header, "big")
