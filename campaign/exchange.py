"""Bulk bytes between the campaign's process and the harness's worker processes (campaign.pool)
beside their pipes: a :class:`Block` of anonymous shared memory (``memfd``) that the campaign's
process creates and a worker process opens by its ``/proc`` path to read or write ranges of it.

A GPU's extensions (campaign.widening) move their inputs and outputs between the pool and the
driver's worker through the campaign's process: tens of megabytes a launch, hundreds a second. Sent
through the pool's pipes, each was pickled, written, read and unpickled by that one process:
measured on a 2-core machine (PoCL taken for a GPU, a campaign of conversions:
``bench/stand_in_gpu.py``), the pipes' threads took most of its CPU, which became what the GPU
waited for. The driver's worker maps an extension's blocks itself (fuzz.drivers.protocol.Mapped): its
inputs go from the block the pool wrote to the device, its output from the device into the block
the windows' judging reads, with no copy in the campaign's process. Like the driver workers' shared memory
(fuzz.drivers.shared), a block leaves nothing behind when a process is killed: the memory goes
when the last descriptor and mapping of it close.
"""

from __future__ import annotations

import mmap
import os
import pickle
import threading
from dataclasses import dataclass

ALIGN = 64
"""Each buffer :func:`put` writes starts at a multiple of this many bytes."""


class Block:
    """``size`` bytes of shared memory in the campaign's process (zeros until written; a write past
    the end grows it, so a block for another process's result starts empty), closed once
    :meth:`release` was called as many times as :meth:`hold` said (or at once by :meth:`close`).
    A block taken from :class:`Blocks` goes back there when closed, its pages still allocated."""

    def __init__(self, size: int, home: Blocks | None = None) -> None:
        self.size = self.capacity = size
        self._fd = os.memfd_create("clfuzz-exchange")
        os.ftruncate(self._fd, size)
        self.path = f"/proc/{os.getpid()}/fd/{self._fd}"
        self._holders = 0
        self._lock = threading.Lock()
        self._home = home

    def write(self, data: bytes | memoryview, offset: int = 0) -> None:
        _pwrite(self._fd, data, offset)

    def read(self) -> bytes:
        return _pread(self._fd, self.size, 0)

    def hold(self, n: int) -> None:
        """``n`` readers (none: closed now); the last one's :meth:`release` closes the block."""
        with self._lock:
            self._holders = n
        if n <= 0:
            self.close()

    def release(self, *_: object) -> None:
        """One reader is done (a Future's callback: its argument is ignored)."""
        with self._lock:
            self._holders -= 1
            last = self._holders == 0
        if last:
            self.close()

    def close(self) -> None:
        """Done with: back to its :class:`Blocks` if it has room, else the memory is freed (a second
        close of the same use does nothing)."""
        if self._home is not None and self._home.back(self):
            return
        with self._lock:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)


class Blocks:
    """The blocks of a GPU's extensions, used again (campaign.pipeline: one set per target).

    Measured on an H200 (NVIDIA beside PoCL 5.0, ``bench/pace.py``): reading a 256-MiB extension's
    output back into a fresh block allocated and zeroed 65,536 pages inside the run (the driver's
    copy touches them first), which more than doubled the run column of a 5-minute campaign; the
    inputs' block, drawn fresh, was paged in by the driver's worker as it made the input buffer. A
    block whose readers are done keeps its pages here for the next launch, and the driver's worker
    keeps its mapping of it (fuzz.drivers.worker). Its next user overwrites every byte that is read:
    an ``out`` argument is read back whole; an ``in`` argument's regions are drawn whole
    (campaign.widening.draw_inputs), and the alignment padding between them is read by no kernel."""

    KEEP = 8
    """Idle blocks kept at most: a lane's extension running and one queued (inputs and output each),
    the windows of one or two being judged, the next one's inputs being drawn."""

    def __init__(self) -> None:
        self._idle: list[Block] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self, size: int) -> Block:
        """A block of at least ``size`` bytes (the smallest idle one that fits, else a new one) whose
        :attr:`Block.size` is ``size``; its bytes are what its last user left."""
        with self._lock:
            fits = [b for b in self._idle if b.capacity >= size]
            block = min(fits, key=lambda b: b.capacity) if fits else None
            if block is not None:
                self._idle.remove(block)
        if block is None:
            return Block(size, self)
        block.size, block._holders = size, 0
        return block

    def back(self, block: Block) -> bool:
        """Keep ``block`` for a later :meth:`take` (True where it is kept already; False: no room,
        or closed: free it)."""
        with self._lock:
            if any(b is block for b in self._idle):
                return True
            if self._closed or len(self._idle) >= self.KEEP:
                block._home = None
                return False
            self._idle.append(block)
            return True

    def close(self) -> None:
        """Free the idle blocks; those in use are freed when they are closed."""
        with self._lock:
            self._closed, idle, self._idle = True, self._idle, []
        for block in idle:
            block.close()


def write(path: str, data: bytes | memoryview, offset: int = 0) -> None:
    """Write ``data`` into the block at ``path`` from ``offset`` (in any process)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        _pwrite(fd, data, offset)
    finally:
        os.close(fd)


def _pwrite(fd: int, data: bytes | memoryview, offset: int) -> None:
    view = memoryview(data).cast("B")
    while view:  # a write may take less than given (large sizes)
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def read(path: str, ranges: dict[str, tuple[int, int]]) -> dict[str, bytes]:
    """Each named ``(offset, size)`` range of the block at ``path`` (in any process)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return {name: _pread(fd, size, offset) for name, (offset, size) in ranges.items()}
    finally:
        os.close(fd)


def _pread(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    while len(data) < size:  # a read may return less than asked (large sizes)
        more = os.pread(fd, size - len(data), offset + len(data))
        if not more:
            raise EOFError(f"a shared block ended at {offset + len(data)} bytes; {offset + size} expected")
        data += more
    return data


@dataclass(frozen=True)
class Packed:
    """An object pickled (protocol 5) with its large buffers (numpy arrays' memory) written into a
    block apart from the pickle: ``spans`` (offset, size) of each, in order."""

    pickle: bytes
    spans: tuple[tuple[int, int], ...]


def put(obj: object, path: str) -> Packed:
    """``obj`` pickled, its out-of-band buffers written into the block at ``path`` (in any process)."""
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    spans, offset = [], 0
    fd = os.open(path, os.O_WRONLY)
    try:
        for b in buffers:
            view = b.raw()
            spans.append((offset, view.nbytes))
            _pwrite(fd, view, offset)
            offset = -(-(offset + view.nbytes) // ALIGN) * ALIGN
    finally:
        os.close(fd)
    return Packed(data, tuple(spans))


def take(packed: Packed, path: str) -> object:
    """:func:`put`'s object again, its arrays on a private mapping of the block at ``path`` (no copy
    until written; the block may be closed once this returns)."""
    end = max((o + n for o, n in packed.spans), default=0)
    if not end:
        return pickle.loads(packed.pickle, buffers=[memoryview(b"")[:0] for _ in packed.spans])
    fd = os.open(path, os.O_RDONLY)
    try:
        view = memoryview(mmap.mmap(fd, end, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE))
    finally:
        os.close(fd)
    return pickle.loads(packed.pickle, buffers=[view[o:o + n] for o, n in packed.spans])
