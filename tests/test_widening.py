"""Extensions (campaign.widening): a fill's skipped lanes, windows of a program's work-items, the
sizes of an extension against hand-worked numbers, and a lane that runs a part's extension on a
stand-in GPU and judges it in windows."""

from __future__ import annotations

import os
import threading
from dataclasses import replace

import numpy as np
import pytest

from campaign import exchange, widening
from campaign.expectations import Expectations
from campaign.pipeline import Lane
from campaign.pool import Harness
from campaign.progress import TargetStats
from campaign.timeouts import Timeouts
from campaign.exchange import Block
from campaign.widening import (Widths, draw_inputs, extensible, extension, input_ranges, ranges, window_result,
                               windows)
from fuzz.drivers import Mapped, Result, Target
from fuzz.emit.opencl_c import emit
from fuzz.strategies import AREAS, Caps, Draws
from lang.derive import window
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.layout import input_bytes, input_values, layout
from lang.policy import Policy
from lang.types import Type

GPU = Target("gpu", {"device_type": "GPU"}, "fp-gpu", "", 0, 0)
CPU = Target("cpu", {"device_type": "CPU"}, "fp-cpu", "", 0, 0)
G = 1024


def _program(fill: Fill = Fill(7, (0x7FC00000, 0x4F000000, 0x3F000000)), items: int = G) -> Program:
    """``out0 = convert_int_sat_rte(in0)`` over float operands: 4 bytes in, 4 bytes out per work-item."""
    f, i = Type("float"), Type("int")
    return Program((Buffer("in0", f, "in", fill), Buffer("out0", i, "out")),
                   (Store("out0", Op("convert", (Load("in0", f),), i, (("rounding", "rte"), ("sat", True)))),), items)


@pytest.mark.parametrize("fill", [Fill(11, (1, 2, 3), 2), Fill(0, values=(5, 6, 7, 8, 9))])
def test_a_skipped_fill_is_the_rest_of_the_same_lanes(fill):
    whole = fill.bits(1000, 32)
    assert np.array_equal(replace(fill, skip=300).bits(700, 32), whole[300:])
    assert replace(fill, skip=3).to_data()["skip"] == 3 and "skip" not in fill.to_data()  # old ids unchanged
    assert Fill.from_data(replace(fill, skip=3).to_data()) == replace(fill, skip=3)


def test_a_window_is_those_work_items_of_the_program_with_the_same_kernel():
    p = _program()
    wide = replace(p, global_size=5 * G)  # a fill goes on past the program's work-items
    w = window(p, 3 * G, 2 * G)
    assert w.global_size == 2 * G
    assert np.array_equal(input_values(w)["in0"].view(np.uint32), input_values(wide)["in0"][3 * G:].view(np.uint32))
    assert emit(window(p, 3 * G, G)) == emit(p)  # on as many work-items, the part's own kernel
    assert window(w, G, G) == window(p, 4 * G, G)


def test_what_gets_extensions():
    assert extensible(GPU, _program())
    assert not extensible(CPU, _program())  # shares the harness's cores
    assert not extensible(Target("oclgrind", {"device_type": "CPU|GPU|ACCELERATOR"}, "f", "", 0, 0), _program())
    assert not extensible(GPU, _program(Fill(0, values=(1, 2))))  # listed lanes would repeat
    assert not extensible(GPU, replace(_program(), local_size=64))


def test_the_first_extension_is_the_parts_own_size_and_paced_by_the_build():
    w = Widths(jobs=4)
    assert w.items("conversions", _program()) == 0  # nothing measured
    w.built("conversions", build_s=0.4, run_s=0.001, items=G)
    assert w.items("conversions", _program()) == G  # the harness not yet measured
    slow = Widths(jobs=4)
    slow.built("conversions", build_s=0.4, run_s=0.8, items=G)  # pace: 1.0 * 0.4 s / (0.8 s / 1024) = 512
    assert slow.items("conversions", _program()) == 0  # under one part's work-items: none
    assert Widths(jobs=0).items("conversions", _program()) == 0  # no pool: no extension


def test_the_pool_caps_an_extension_once_its_windows_are_measured(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 1)  # the part holds a window: launches on its build
    w = Widths(jobs=4)
    w.built("conversions", build_s=0.4, run_s=0.001, items=G)
    w.extended("conversions", run_s=0.05, items=409_600)  # r = 1.220703125e-7 s a work-item
    w.judged("conversions", cpu_s=0.5, lanes=409_600)  # c = 1.220703125e-6 s a lane
    # pace: 0.4 / r = 3,276,800; memory: 32 MiB * 1024 / 4096 = 8,388,608; pool:
    # (0.8 * 4 * (0.4 + r * 1024) - c * 1024) / (c - 0.8 * 4 * r) = 1.27915 / 8.30078125e-7 = 1,540,998.8
    assert w.items("conversions", _program()) == 1504 * G
    w.built("conversions", build_s=0.8, run_s=0.001, items=G)  # the build's average: 0.6 s
    assert w.items("conversions", _program()) == int((3.2 * (0.6 + 0.000125) - 0.00125) / 8.30078125e-7) // G * G
    small = Widths(jobs=4, max_alloc=4 << 20)  # a quarter of 4 MiB: 1 MiB * 1024 / 4096
    small.built("conversions", build_s=0.4, run_s=0.001, items=G)
    small.judged("conversions", cpu_s=1e-6, lanes=1_000)  # a pool that keeps pace: the memory decides
    assert small.items("conversions", _program()) == 262_144


def test_the_pool_caps_an_extension_by_the_share_the_target_has_now(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 1)
    share = [4.0]
    w = Widths(jobs=lambda: share[0])  # campaign.pool.Harness.share: what the other targets leave
    w.built("conversions", build_s=0.4, run_s=0.001, items=G)
    w.extended("conversions", run_s=0.05, items=409_600)
    w.judged("conversions", cpu_s=0.5, lanes=409_600)
    assert w.items("conversions", _program()) == 1504 * G  # as with jobs=4 above
    share[0] = 8.0  # the other target left half the pool idle:
    # (0.8 * 8 * (0.4 + r * 1024) - c * 1024) / (c - 0.8 * 8 * r) = 2.5588 / 4.3945e-7 = 5,822,720, pace 3,276,800
    assert w.items("conversions", _program()) == 3_276_800 and w.bound["conversions", "pace"] == 1


def test_windows_cut_an_extension_and_judge_their_own_bytes(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 100_000)
    p = _program()
    [ext] = extension(p, 250 * G)  # over MAX_LAUNCHES of its part's size: one launch
    cut = windows(ext)
    assert [(s, w.global_size) for s, w in cut] == [(0, 100_000), (100_000, 100_000), (200_000, 56_000)]
    assert cut[1][1] == window(p, G + 100_000, 100_000)
    out = _outputs(ext)
    block = Block(len(out))  # shared with the harness's worker processes (campaign.exchange)
    block.write(out)
    where = ranges(ext, cut)[1]
    assert where == {"out0": (layout(ext).outputs["out0"].offset + 400_000, 400_000)}
    got = exchange.read(block.path, where)["out0"]
    assert got == out[layout(ext).outputs["out0"].offset + 400_000:][:400_000] and block.read() == out
    block.hold(2)
    block.release(None)
    assert os.path.exists(block.path)
    block.release(None)  # the last reader: the block is closed
    assert not os.path.exists(block.path)
    own = window_result(cut[1][1], Result("ok", {"out0": got}, build_s=0.0, run_s=1.0), 0.25)
    assert own.run_s == 0.25 and own.outputs["out"][:400_000] == got


def test_a_short_extension_is_launches_of_its_parts_own_kernel(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 1 << 40)  # a part short of a window's lanes
    p = Draws(AREAS["conversions"](Caps(fp64=True), Policy()), 7)[3]  # several buffers: offsets in the source
    launches = extension(p, 3 * p.global_size)
    assert launches == [window(p, p.global_size * i, p.global_size) for i in (1, 2, 3)]
    assert {emit(e) for e in launches} == {emit(p)}  # the worker's build of the part serves them
    [wide] = extension(p, (widening.MAX_LAUNCHES + 1) * p.global_size)
    assert wide.global_size == 9 * p.global_size and emit(wide) != emit(p)  # a build of its own
    assert extension(p, 0) == []


def _outputs(program: Program, wrong: int | None = None) -> bytes:
    """The packed ``out`` argument the oracle expects (lane ``wrong`` off by one)."""
    bits = Expectations(program).get(frozenset())["out0"].allowed[0].copy()
    if wrong is not None:
        bits[wrong] += 1
    out = bytearray(layout(program).out_bytes)
    out[: bits.nbytes] = bits.tobytes()
    return bytes(out)


class _Gpu:
    """Builds a kernel in 0.4 s (once: the worker's build cache), runs the part in ``part_s``, an
    extension's launch in 50 ms; its results are the oracle's, but for lane ``wrong`` of the
    work-items after the part's. Records each job's work-items."""

    timeout_s = 60.0
    pid = None

    def __init__(self, program: Program, wrong: int, part_s: float = 0.001, crash: bool = False) -> None:
        self.program, self.wrong, self.part_s, self.runs, self.built = program, wrong, part_s, [], set()
        self.crash = crash  # an extension's launch crashes the worker

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def run(self, job, timeout_s):
        """As fuzz.drivers.pool.Worker.run: an extension's input is read from its mapping (a block of
        campaign.exchange) and its output written into the out argument's."""
        if isinstance(job.args[0].data, Mapped):
            size = job.args[0].nbytes
            job = replace(job, args=(replace(job.args[0], data=exchange.read(job.args[0].data.path, {"in": (0, size)})["in"]),
                                     *job.args[1:]))
        result = self._run(job)
        if result.ok and isinstance(job.args[1].data, Mapped):
            exchange.write(job.args[1].data.path, result.outputs["out"])
            result.outputs = {"out": job.args[1].data}
        return result

    def _run(self, job):
        n = job.global_size[0]
        self.runs.append(n)
        build_s = 0.0 if job.program in self.built else 0.4
        self.built.add(job.program)
        if job.args[0].data == input_bytes(self.program):
            return Result("ok", {"out": _outputs(self.program)}, build_s=build_s, run_s=self.part_s)
        if self.crash:
            return Result("crash", log="killed by signal SIGSEGV", build_s=build_s, run_s=0.0)
        launched = _launched(self.program, n, job.args[0].data)
        first = launched.inputs[0].fill.skip  # its first work-item (one lane a work-item)
        wrong = self.wrong - first if 0 <= self.wrong - first < n else None
        return Result("ok", {"out": _outputs(launched, wrong)}, build_s=build_s, run_s=0.05)


def _launched(p: Program, n: int, data: bytes) -> Program:
    """Which launch of ``p``'s extensions of ``n`` work-items has these input bytes."""
    return next(w for start in range(G, 500 * G, G) if input_bytes(w := window(p, start, n)) == data)


def _exchange_fds() -> list[str]:
    """This process's descriptors of campaign.exchange blocks (one closed as it is read is not)."""
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "clfuzz-exchange" in os.readlink(f"/proc/self/fd/{fd}"):
                fds.append(fd)
        except FileNotFoundError:
            pass
    return fds


def _run_lane(p: Program, gpu: _Gpu, widths: Widths, jobs: int = 0) -> tuple[list, TargetStats]:
    stats = TargetStats()
    harness = Harness(jobs, [GPU])
    lane = Lane(GPU, gpu, None, "c", stats, Timeouts(60.0), harness=harness, widths=widths)
    try:
        done = threading.Event()
        got = []
        lane.submit(p, Expectations(p), lambda outcomes: (got.extend(outcomes), done.set()))
        assert done.wait(30)
    finally:
        lane.close()
        harness.close()
    return got, stats


@pytest.mark.parametrize("jobs", [0, 1])  # the harness in this process, or a worker process of its own
def test_a_lane_runs_a_parts_extension_and_judges_it_in_windows(monkeypatch, jobs):
    monkeypatch.setattr(widening, "WINDOW_LANES", 100_000)
    p = _program()
    gpu = _Gpu(p, wrong=G + 250_123)
    widths = Widths(jobs=4)
    widths.judged("conversions", cpu_s=1e-6, lanes=1_000)  # as if measured: the pool keeps pace
    got, stats = _run_lane(p, gpu, widths, jobs)
    assert not _exchange_fds()  # every shared block closed, the lane's idle ones too (campaign.exchange)
    assert gpu.runs == [G, 409_600]  # the part, then its extension (pace: 0.4 s of runs after a 0.4-s build)
    assert len(got) == 1 + 5  # the part and five windows of 100,000 work-items (the last of 9,600)
    assert stats.judged == G + 409_600 and stats.mismatches == 1
    [row] = [r for o in got for r in o.verdict.rows]
    assert row["lane"] == 50_123  # in the third window, from work-item 200,000 of the extension
    assert stats.build_s == pytest.approx(0.4) and stats.run_s == pytest.approx(0.051)  # (one buffer each way:
    # the wide launch's offsets are the part's, so is its kernel)
    assert stats.statuses == {"ok": 1}  # the part; the windows are runs, not parts


def test_a_short_extension_runs_on_the_parts_build():
    p = _program()
    gpu = _Gpu(p, wrong=G + 2 * G + 5, part_s=0.4 / 3.5)  # pace: 0.4 s / (0.4 / 3.5 / 1024 s) = 3.5 parts
    widths = Widths(jobs=4)
    widths.judged("conversions", cpu_s=1e-6, lanes=1_000)
    got, stats = _run_lane(p, gpu, widths)
    assert gpu.runs == [G, G, G, G]  # the part, then three launches of its own kernel
    assert stats.build_s == pytest.approx(0.4)  # one build
    [row] = [r for o in got for r in o.verdict.rows]
    assert row["lane"] == 5 and stats.mismatches == 1  # the third launch's sixth work-item


def test_the_parts_own_cost_sizes_its_extension(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 1)  # the part holds a window: launches on its build
    w = Widths(jobs=4)
    w.built("math", build_s=0.4, run_s=0.001, items=G)  # r = 0.001 / 1024 s a work-item
    w.judged("math", cpu_s=1e-3, lanes=10_000)  # a cheap window: 1e-7 s a lane (no part's cost told)
    cheap = w.items("math", _program())
    assert cheap > 100 * G and w.bound["math", "pace"] == 1  # 0.4 s / r = 409,600 work-items
    # an expensive part (2e-5 s a lane: mpmath's lanes) is sized by its own cost, not the area's:
    # (0.8 * 4 * (0.4 + 0.001) - 2e-5 * 1024) / (2e-5 - 0.8 * 4 * 0.001 / 1024) = 1.2627 / 1.6875e-5 = 74,827
    assert w.items("math", _program(), own=2e-5) == 73 * G and w.bound["math", "pool"] == 1
    w.judged("math", cpu_s=0.5, lanes=10_000, own=2.5e-5)  # a window took twice its part's cost a lane
    # c = 2e-5 * 2: (1.2832 - 0.04096) / (4e-5 - 3.125e-6) = 33,690
    assert w.items("math", _program(), own=2e-5) == 32 * G
    assert w.items("math", _program(), own=1e-3) == 0  # 1.024 s of CPU for the part alone: none


def test_memory_allows_a_wide_part_many_times_its_work_items():
    # 64 statements of int16 out: 4 KiB of output a work-item, 64 MiB over 16,384 work-items
    i16 = Type("int", 16)
    p = Program((Buffer("in0", i16, "in", Fill(3)), *(Buffer(f"out{k}", i16, "out") for k in range(64))),
                tuple(Store(f"out{k}", Load("in0", i16)) for k in range(64)), 16_384)
    w = Widths(jobs=64)
    w.built("conversions", build_s=100.0, run_s=1e-3, items=p.global_size)
    w.judged("conversions", cpu_s=1e-9, lanes=1_000)
    assert w.items("conversions", p) == 4 * p.global_size and w.bound["conversions", "memory"] == 1  # 256 / 64


def test_expectations_tell_their_cost_a_lane_to_their_parts_and_other_processes():
    p = _program(items=4096)
    e = Expectations(p)
    assert e.lane_cpu_s is None  # nothing computed yet
    e.get(frozenset())
    cost = e.lane_cpu_s
    assert cost is not None and 0 < cost < 1e-3
    assert Expectations.unpacked(p, *e.packed(), cost).lane_cpu_s == cost
    assert Expectations.unpacked(p, *e.packed()).lane_cpu_s is None
    assert e.view(replace(p, global_size=1024)).lane_cpu_s == cost


def test_a_part_of_a_windows_lanes_extends_as_launches_of_its_own_kernel(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", G)  # one lane a work-item: the part holds a window
    p = _program()
    launches = extension(p, 20 * G)
    assert len(launches) == 20 and {emit(e) for e in launches} == {emit(p)}
    monkeypatch.setattr(widening, "WINDOW_LANES", G + 1)  # a part short of a window: one wide launch
    assert len(extension(p, 20 * G)) == 1


def test_an_extension_built_for_itself_counts_its_build_in_the_pools_time(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 1 << 40)  # a part short of a window: one launch of its own
    w = Widths(jobs=4)
    w.built("images", build_s=0.4, run_s=0.001, items=G)
    w.judged("images", cpu_s=0.5, lanes=409_600)  # c = 1.220703125e-6 s a lane, r = 0.001 / 1024 s
    f, i = Type("float"), Type("int")  # 10 lanes a work-item: the pool is the limit
    ten = Program((Buffer("in0", f, "in", Fill(7)),
                   *(Buffer(f"out{k}", Type("int"), "out") for k in range(10))),
                  tuple(Store(f"out{k}", Op("convert", (Load("in0", f),), i, (("rounding", "rte"), ("sat", True))))
                        for k in range(10)), G)
    # need = 1.220703125e-5, have = 3.125e-6: one build (3.2 * 0.401 - 0.0125) / 9.08203125e-6 = 139,913;
    # over 8 launches, so built for itself: (3.2 * 0.801 - 0.0125) / 9.08203125e-6 = 280,851
    assert w.items("images", ten) == 274 * G
    monkeypatch.setattr(widening, "WINDOW_LANES", 1)  # a part that holds a window: launches, one build
    assert w.items("images", ten) == 136 * G


@pytest.mark.parametrize("jobs", [0, 1])
def test_an_extension_that_crashes_is_one_failure_of_its_own(monkeypatch, jobs):
    monkeypatch.setattr(widening, "WINDOW_LANES", 100_000)
    p = _program()
    widths = Widths(jobs=4)
    widths.judged("conversions", cpu_s=1e-6, lanes=1_000)
    got, stats = _run_lane(p, _Gpu(p, wrong=-1, crash=True), widths, jobs)
    assert [o.status for o in got] == ["ok", "crash"]  # the part judged; the extension's launch, whole
    [row] = [r for o in got for r in o.failures]
    assert row["kind"] == "crash" and stats.mismatches == 0


def test_an_extensions_inputs_drawn_by_ranges_of_work_items_are_the_whole_launchs(monkeypatch):
    monkeypatch.setattr(widening, "WINDOW_LANES", 3 * G + 5)  # ranges of 3,077 work-items, the last shorter
    ext = window(_program(Fill(5)), G, 10 * G)
    assert [items for _, items in input_ranges(ext)] == [3 * G + 5] * 3 + [10 * G - 3 * (3 * G + 5)]
    block = Block(layout(ext).in_bytes)
    try:
        images = [draw_inputs(ext, block.path, start, items) for start, items in reversed(input_ranges(ext))]
        assert block.read() == input_bytes(ext) and images[-1] == {}
    finally:
        block.close()
    harness = Harness(2, [GPU])  # the same through the pool's worker processes, a task per range
    try:
        block = Block(layout(ext).in_bytes)
        assert harness.inputs(ext, "gpu", block).result(60) == {} and block.read() == input_bytes(ext)
        assert harness.tasks["gpu"]["draw"] == 4
    finally:
        block.close()
        harness.close()


def test_the_summary_shows_which_limit_sized_each_targets_extensions():
    """The campaign's summary has a table of the extensions per target and area, and the count
    of each limit that sized them (what a GPU's lanes are bound by); none without extensions."""
    from rich.console import Console

    from app.display import extensions_table
    from campaign.progress import TargetStats

    gpu, cpu = TargetStats(), TargetStats()
    gpu.widened.update({("conversions", "pool"): 7, ("conversions", "memory"): 2, ("images", "pace"): 3})
    assert extensions_table({"pocl": cpu}) is None
    console = Console(width=200, record=True)
    console.print(extensions_table({"nvidia": gpu, "pocl": cpu}))
    rows = [line.split() for line in console.export_text().splitlines() if "nvidia" in line]
    assert [[c for c in r if c not in "│┃|"] for r in rows] == [["nvidia", "conversions", "9", "0", "7", "2", "0"],
                                                              ["nvidia", "images", "3", "3", "0", "0", "0"]]
