"""The shared memory a worker and its parent exchange buffer contents through (see protocol.Run).

One anonymous memory file (``memfd``) per Worker: the parent creates it, grows it when a job needs
more, and hands it to every worker process it starts (an inherited file descriptor, so nothing is
left behind in ``/dev/shm`` when either side is killed). Each side maps it; the worker re-maps
when the parent says the size changed.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

PAGE = mmap.PAGESIZE


class SharedMemory:
    """A memfd mapped into this process."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = os.memfd_create("clfuzz-buffers") if fd is None else fd
        self._map: mmap.mmap | None = None
        self.size = 0

    def reserve(self, size: int) -> None:
        """(Parent) make the file at least ``size`` bytes long (grown in doublings)."""
        if size > self.size:
            new = max(size, 2 * self.size)
            os.ftruncate(self.fd, -(-new // PAGE) * PAGE)
            self.attach(os.fstat(self.fd).st_size)

    def attach(self, size: int) -> None:
        """(Worker) map the first ``size`` bytes (again if the parent grew the file)."""
        if size == self.size and self._map is not None:
            return
        self._unmap()
        self._map = mmap.mmap(self.fd, size) if size else None
        self.size = size

    def bytes_view(self) -> np.ndarray:
        """The mapped bytes as a writable uint8 array (drop it before the next ``reserve``)."""
        if self._map is None:
            return np.empty(0, np.uint8)
        return np.frombuffer(self._map, np.uint8)

    def copy(self, offset: int, nbytes: int) -> bytearray:
        """The ``nbytes`` bytes at ``offset``, copied by numpy, which lets the process's other threads
        run meanwhile: a GPU's extension reads back up to 256 MiB (campaign.widening), and
        ``tobytes`` held the GIL for the whole copy (``py-spy --gil`` on an H200 machine, a 30-s
        conversions campaign of NVIDIA beside PoCL: 5 s of the campaign process's GIL)."""
        out = bytearray(nbytes)
        np.copyto(np.frombuffer(out, np.uint8), self.bytes_view()[offset:offset + nbytes])
        return out

    def close(self) -> None:
        self._unmap()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _unmap(self) -> None:
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a view is still alive somewhere: the GC unmaps it later
                pass
            self._map = None
            self.size = 0
