"""Conformance of every discovered driver through a Worker: results, errors, crashes, hangs.

``target`` is parametrized over ``discover()`` (conftest.py) and ``worker`` is one Worker per
target, shared by this module's tests: every test leaves it ready for the next job.
"""

from __future__ import annotations

import gc
import os
import time

import numpy as np
import pytest

from campaign.exchange import Block
from fuzz.drivers import BufferArg, Job, LocalArg, Mapped, ScalarArg, Target, Worker
from fuzz.drivers.protocol import LOG_LIMIT

from .conftest import skip_without_icd, target_named

skip_without_icd()
pytestmark = pytest.mark.drivers

N = 64
ADD = b"""
kernel void add(global const int* a, global const int* b, global int* c, int k) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i] + k;
}
"""
REVERSE = b"""
kernel void reverse(global const uint* in, global uint* out, local uint* tmp) {
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    tmp[l] = in[g * n + l];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g * n + l] = tmp[n - 1 - l];
}
"""
# A write 4 GiB past the buffer: SIGSEGV on PoCL and rusticl. (A store to address 0 and
# __builtin_trap() do not work for rusticl: llvmpipe drops both and returns ok.)
FAR_WRITE = b"""
kernel void far(global int* p) {
    volatile global int* q = p + 0x40000000L;
    *q = 1;
    p[0] = 2;
}
"""
HANG = b"""
kernel void hang(global int* p) {
    volatile int x = 0;
    while (1) { x++; }
    p[0] = x;
}
"""
A = np.arange(N, dtype=np.int32)
B = np.full(N, 1000, dtype=np.int32)


def add_job(k: int = 7) -> Job:
    return Job(
        kind="source",
        program=ADD,
        options="",
        kernel="add",
        args=(
            BufferArg("a", A.tobytes(), A.nbytes, read_back=False),
            BufferArg("b", B.tobytes(), B.nbytes, read_back=False),
            BufferArg("c", None, A.nbytes, read_back=True),
            ScalarArg("k", np.int32(k).tobytes()),
        ),
        global_size=(N,),
        local_size=None,
    )


def one_buffer_job(source: bytes, kernel: str) -> Job:
    return Job("source", source, "", kernel, (BufferArg("p", None, 64, True),), (1,), None)


def assert_add_ok(w: Worker, k: int = 7) -> None:
    r = w.run(add_job(k))
    assert r.status == "ok", r.log
    np.testing.assert_array_equal(np.frombuffer(r.outputs["c"], np.int32), A + B + k)


def test_add(worker):
    r = worker.run(add_job())
    assert r.status == "ok", r.log
    assert set(r.outputs) == {"c"}
    np.testing.assert_array_equal(np.frombuffer(r.outputs["c"], np.int32), A + B + 7)
    assert r.build_s >= 0 and r.run_s > 0
    assert_add_ok(worker, k=-5)  # the same program again, another scalar


COPY = b"""
kernel void copy(global const uint* in, global uint* out) {
    size_t i = get_global_id(0);
    out[i] = in[i] ^ 0xffffffffu;
}
"""


def test_buffers_of_growing_and_shrinking_size(worker):
    """Buffers travel through the shared memory: it grows for a large job, and a later small
    job sees its own (zeroed) output, not what the large one left there."""
    for n in (16, 1 << 22, 8):
        data = np.arange(n, dtype=np.uint32) * np.uint32(2654435761)
        job = Job("source", COPY, "", "copy",
                  (BufferArg("in", data.tobytes(), data.nbytes, False),
                   BufferArg("out", None, data.nbytes + 64, True)), (n,), None)  # fmt: skip
        r = worker.run(job)
        assert r.status == "ok", r.log
        out = np.frombuffer(r.outputs["out"], np.uint32)
        np.testing.assert_array_equal(out[:n], ~data)
        assert not out[n:].any()  # never written: the zeroed initial contents


def test_mapped_buffers_are_read_from_and_back_into_their_mapping(worker):
    """A Mapped argument's bytes are those of another process's memfd (a campaign.exchange block: a
    GPU's extension); the output is read back into its own block, zeros at first whatever that
    block held (filled on the device), and the result names the mapping."""
    n = 1 << 16
    data = np.arange(n, dtype=np.uint32) * np.uint32(2654435761)
    source, sink = Block(data.nbytes), Block(data.nbytes + 64)
    try:
        source.write(data.tobytes())
        sink.write(b"\xa5" * sink.size)  # not the buffer's initial contents: zeros=True
        job = Job("source", COPY, "", "copy", (BufferArg("in", Mapped(source.path), data.nbytes, False),
                                               BufferArg("out", Mapped(sink.path, zeros=True), sink.size, True)),
                  (n,), None)
        r = worker.run(job)
        assert r.status == "ok", r.log
        assert r.outputs == {"out": Mapped(sink.path, zeros=True)}
        out = np.frombuffer(sink.read(), np.uint32)
        np.testing.assert_array_equal(out[:n], ~data)
        assert not out[n:].any()
        assert_add_ok(worker)  # the shared memory's own buffers after it
    finally:
        source.close()
        sink.close()


def _copied_into(worker, sink: Block, seed: int) -> None:
    """Run the copy kernel with its output read back into ``sink`` and check what it holds."""
    data = np.random.default_rng(seed).integers(0, 1 << 32, 1 << 14, dtype=np.uint32)
    job = Job("source", COPY, "", "copy", (BufferArg("in", data.tobytes(), data.nbytes, False),
                                           BufferArg("out", Mapped(sink.path, zeros=True), sink.size, True)),
              (data.size,), None)
    r = worker.run(job)
    assert r.status == "ok", r.log
    np.testing.assert_array_equal(np.frombuffer(sink.read(), np.uint32), ~data)


def test_a_kept_mapping_follows_its_memfd(worker):
    """The worker keeps its mapping of a zero-started buffer's block, which the campaign uses again
    (campaign.exchange.Blocks): a second run reads back into the same block, and a new memfd under
    the same /proc path (its descriptor's number given out again) is mapped anew, not written
    through the old mapping."""
    sink = Block(4 << 14)
    _copied_into(worker, sink, 1)
    _copied_into(worker, sink, 2)
    path = sink.path
    sink.close()
    sink = Block(4 << 14)
    try:
        assert sink.path == path  # the lowest free descriptor: the same number, another memfd
        _copied_into(worker, sink, 3)
    finally:
        sink.close()


def test_local_memory(worker):
    data = np.arange(N, dtype=np.uint32)
    job = Job(
        "source", REVERSE, "-cl-std=CL1.2", "reverse",
        (BufferArg("in", data.tobytes(), data.nbytes, False),
         BufferArg("out", None, data.nbytes, True),
         LocalArg("tmp", 16 * 4)),
        (N,), (16,),
    )  # fmt: skip
    r = worker.run(job)
    assert r.status == "ok", r.log
    expected = data.reshape(-1, 16)[:, ::-1].ravel()
    np.testing.assert_array_equal(np.frombuffer(r.outputs["out"], np.uint32), expected)


def test_build_error(worker):
    bad = b"kernel void k(global int* p) { p[0] = undefined_thing; }"
    r = worker.run(one_buffer_job(bad, "k"))
    assert r.status == "build_error"
    assert "undefined_thing" in r.log
    assert len(r.log.encode()) <= LOG_LIMIT
    assert_add_ok(worker)


def test_unknown_kernel_is_a_runtime_error(worker):
    r = worker.run(one_buffer_job(FAR_WRITE, "no_such_kernel"))
    assert r.status == "runtime_error"
    assert "INVALID_KERNEL_NAME" in r.log
    assert_add_ok(worker)


def test_printf_reaches_the_log(worker):
    src = b'kernel void k(global int* p) { printf("hello from kernel %d\\n", 42); p[0] = 1; }'
    r = worker.run(one_buffer_job(src, "k"))
    assert r.status == "ok", r.log
    assert "hello from kernel 42" in r.log


def test_crash_then_next_job_succeeds(worker, target):
    r = worker.run(one_buffer_job(FAR_WRITE, "far"))
    if target.family in ("pocl", "rusticl"):
        assert r.status == "crash", r.log
        assert r.log.startswith("killed by SIG")
    elif target.family == "oclgrind":  # reports the invalid write on stderr and carries on
        assert r.status in ("ok", "crash"), r.log
        if r.status == "ok":
            assert "Invalid write" in r.log
    else:  # a GPU reports the fault as an error (and its context may be gone)
        assert r.status in ("crash", "runtime_error"), r.log
    assert_add_ok(worker)


def test_timeout_then_next_job_succeeds(worker, target):
    worker.timeout_s = 3
    try:
        t0 = time.monotonic()
        r = worker.run(one_buffer_job(HANG, "hang"))
        elapsed = time.monotonic() - t0
    finally:
        worker.timeout_s = 30
    if target.family == "rusticl":  # llvmpipe stops loops after about 65535 iterations
        assert r.status in ("ok", "timeout"), r.log
    else:
        assert r.status == "timeout", r.log
        assert 3 <= elapsed < 10
    assert_add_ok(worker)


def _gone(pid: int) -> bool:
    """The process no longer exists: not running, not a zombie."""
    return not os.path.exists(f"/proc/{pid}")


def test_no_leftover_processes(target):
    pids = []
    with Worker(target, timeout_s=30) as w:
        assert w.pid is None  # started lazily
        assert_add_ok(w)
        pids.append(w.pid)
        assert w.start_s is not None and w.start_s > 0
        w.restart()  # a fresh process
        pids.append(w.pid)
        assert pids[0] != pids[1] and _gone(pids[0])
        if target.family in ("pocl", "rusticl"):
            assert w.run(one_buffer_job(FAR_WRITE, "far")).status == "crash"
            assert w.pid is None and _gone(pids[1])
            assert_add_ok(w)
            pids.append(w.pid)
        assert w.starts == len(pids)
    assert w.pid is None
    assert all(_gone(pid) for pid in pids)
    assert not w.log_path.exists()


def test_dropped_worker_is_cleaned_up(target):
    w = Worker(target, timeout_s=30)
    assert_add_ok(w)
    pid, log = w.pid, w.log_path
    assert log.exists()
    del w
    gc.collect()
    assert _gone(pid)
    assert not log.exists()


def test_worker_that_cannot_start(target):
    bad = Target(target.name, target.fingerprint, target.fingerprint_id, target.icd_folder,
                 target.platform_index, 99)  # fmt: skip
    with Worker(bad, timeout_s=30) as w:
        r = w.run(add_job())
        assert r.status == "worker_error"
        assert "IndexError" in r.log
        assert w.pid is None


def test_bad_work_group_size_is_a_runtime_error(worker):
    job = Job("source", ADD, "", "add", add_job().args, (N,), (N + 1,))
    pid = worker.pid
    r = worker.run(job)
    assert r.status == "runtime_error"
    assert "enqueue" in r.log
    assert worker.pid == pid  # rejected before it ran: the worker stays
    assert_add_ok(worker)


def test_garbage_binary(worker, target):
    job = Job("binary", b"\x00garbage, not a program binary", "", "k",
              (BufferArg("p", None, 64, True),), (1,), None)  # fmt: skip
    r = worker.run(job)
    if target.family in ("pocl", "oclgrind"):
        assert r.status == "build_error", r.log
    else:  # rusticl 22.3 aborts the process on a binary it does not know
        assert r.status in ("build_error", "crash"), r.log
    assert_add_ok(worker)


MODF_CL2 = b"""
kernel void k(global const float* in, global float* out) {
    size_t i = get_global_id(0);
    out[2 * i] = modf(in[i], &out[2 * i + 1]);
}
"""


def test_a_kernel_the_driver_stopped_executing_is_a_runtime_error():
    """Oclgrind 21.10 cannot simulate addrspacecast (a built-in's out-parameter pointing to global
    memory under -cl-std=CL2.0): it prints a fatal error, the work-item stops, and every OpenCL call
    still succeeds. The run is a runtime_error with that message, not outputs to judge."""
    target = target_named("oclgrind")
    data = np.array([1.5], np.float32)
    with Worker(target, timeout_s=60) as w:
        for options, status in (("-cl-std=CL2.0", "runtime_error"), ("-cl-std=CL1.2", "ok")):
            job = Job("source", MODF_CL2, options, "k", (BufferArg("in", data.tobytes(), 4, False),
                                                         BufferArg("out", None, 8, True)), (1,), None)
            r = w.run(job)
            assert r.status == status, r.log
            if status == "ok":
                assert np.frombuffer(r.outputs["out"], np.float32).tolist() == [0.5, 1.0]
            else:
                assert "Unsupported instruction: addrspacecast" in r.log and not r.outputs
