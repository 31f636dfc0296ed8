"""More lanes from one build on a device that runs fast: a part's *extension*.

A GPU builds a generated program in a third of a second and runs its 16,384 work-items in a
millisecond or two (docs/gpu.md), so its time is its compiler's, whatever the statements are.
After a whole part (campaign.batching) of an independent program with drawn inputs
(:func:`extensible`) ran on a target that is not a CPU device, the target runs the part's
*extension*: the same statements over the work-items that follow the part's (lang.derive.window:
the inputs go on from where the part's stop). Up to :data:`MAX_LAUNCHES` times the part's
work-items (or any number where a part holds a window's lanes), it runs as launches of the part's
own size, whose kernel is the part's (the worker's build cache serves them); a longer one of a part
of few lanes (images) runs as one launch, whose kernel differs from the part's in its buffers'
offsets in the packed arguments (lang.layout) and is built again (docs/gpu.md: NVIDIA's extension
builds measured). Its inputs are drawn in the harness's pool (campaign.pool.Harness.inputs) into
shared memory (campaign.exchange). It is judged in *windows* of :data:`WINDOW_LANES` lanes or
more: each window is a program of its own (the part's statements over a range of its work-items:
reproducible alone, a part of the program in the corpus) whose expectations and verdict one
harness worker process computes from the window's program and its ranges of the output, which it
reads from shared memory (campaign.pool: no expectation crosses between processes), recorded as a
run of its own with the extension's build and run time shared among the windows by work-items. A CPU device (the local
drivers, PoCL beside a GPU) shares the harness's cores, and a program's own work-items stay those
the campaign drew: it gets no extension.

How many work-items an extension has (:meth:`Widths.items`, per target and area, from what the
campaign measured so far), the fewest of:

- pace: its run takes at most :data:`RUN_SHARE` of the part's build time (``RUN_SHARE * B / r``:
  ``B`` the area's build seconds, ``r`` its run seconds per work-item, from the extensions' runs,
  before the first one from the parts' own runs, which their fixed costs make an overestimate);
- pool: the harness's worker processes keep pace with the target: the CPU seconds of expectations
  and judging (``c`` per lane; ``λ`` lanes per work-item) of the part and its extension fit
  :data:`POOL_USE` of the target's share ``J`` of the pool (its fair share, or what the other
  targets leave of the pool where that is more: campaign.pool.Harness.share) in the time the target spends on them,
  ``c λ (G + n) <= POOL_USE J (B + r (G + n))`` (``G`` the part's work-items; ``2B`` where the
  extension is one launch of a kernel of its own, built too: :func:`extension`). ``c`` is the part's
  own: the CPU seconds a lane of its expectations took (campaign.expectations.Expectations.lane_cpu_s:
  its statements, their inputs' distribution), times what a window of the area took over its
  part's expectations (judging's share, measured on the windows). A math program's lanes cost from
  0.05 µs (``fmin``) to 20 µs (lanes decided by mpmath) of CPU, so an area's average over other
  programs is no estimate of one's: measured on an H100 machine, 33 math windows of 2^21 lanes, sized by
  the area's average, took about as much of the pool's CPU as the 1.5 billion lanes of every other
  area. Where the part's cost is unknown, the area's windows' average; before any window, ``G``;
- memory: its input and output buffers hold at most :data:`MAX_BYTES` each (and a quarter of the
  device's largest allocation).

rounded down to a multiple of the part's work-items; under one part's work-items, none.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from campaign import exchange
from fuzz.drivers import Result, Target
from lang.derive import independent, window
from lang.ir import Program
from lang.layout import input_values, layout

RUN_SHARE = 1.0
"""An extension's run takes at most this share of its part's build time."""

POOL_USE = 0.8
"""The share of the target's part of the harness's pool an extension may keep busy."""

MAX_BYTES = 256 << 20
"""An extension's input and output buffers hold at most this many bytes each. A conversions or
expressions part of 64 statements over 16,384 work-items holds about 21 MiB of output (up to 16
lanes of 8 bytes a statement), so the 32 MiB this was first made an extension of one part at most;
each byte is held several times on the host while an extension is drawn, run and judged (the
shared blocks of campaign.exchange, the worker's shared buffers, the windows' tasks)."""

WINDOW_LANES = 1 << 21
"""Output lanes a window holds at least, where the part has fewer (one window at least)."""

MAX_LAUNCHES = 8
"""An extension of up to this many times its part's work-items runs as launches of the part's own
size (and a longer one too where a part holds a window's lanes: :func:`extension`)."""

WEIGHT = 0.5
"""Each new measurement's weight in the running averages (the older ones share the rest)."""


def extensible(target: Target, program: Program) -> bool:
    """Whether ``target`` runs extensions of ``program``'s parts: not a CPU device, and the
    program is a straight-line one (not a flow program, whose work-items share a launch) whose
    work-items are independent (lang.derive.independent) with an input drawn at random
    (a fill without explicit values: a corner sweep's or a reduced case's lanes would repeat)."""
    return (isinstance(program, Program) and "CPU" not in str(target.fingerprint.get("device_type", "CPU"))
            and independent(program)
            and any(b.fill.values == () for b in program.inputs))


@dataclass
class _Average:
    value: float | None = None

    def add(self, x: float) -> None:
        self.value = x if self.value is None else WEIGHT * x + (1 - WEIGHT) * self.value


@dataclass
class _Area:
    build_s: _Average
    run_item_s: _Average  # from the parts' runs
    extension_item_s: _Average  # from the extensions' runs
    lane_cpu_s: _Average  # harness CPU seconds per lane of a window
    judging: _Average  # a window's CPU seconds over its part's expectations' (Expectations.lane_cpu_s)


class Widths:
    """One target's extension sizes per area (module docstring). ``jobs``: the harness's worker
    processes the target can count on (its share of the pool, or a function that tells it now:
    campaign.pool.Harness.share; 0: no extensions). ``bound``
    counts, per area, which limit decided each extension's size (``pace``, ``pool``, ``memory``,
    or ``measure``: the first, before the harness's cost is known), into the counter given
    (campaign.progress.TargetStats.widened). Thread-safe: the lane's host thread and the pool's
    callbacks report to it."""

    def __init__(self, jobs: float | Callable[[], float], max_alloc: int = 0, bound: Counter | None = None) -> None:
        self.jobs = jobs if callable(jobs) else lambda: jobs
        self.max_bytes = min(MAX_BYTES, max_alloc // 4) if max_alloc else MAX_BYTES
        self.bound: Counter[tuple[str, str]] = Counter() if bound is None else bound
        self._areas: dict[str, _Area] = {}
        self._lock = threading.Lock()

    def _area(self, area: str) -> _Area:
        return self._areas.setdefault(area, _Area(*(_Average() for _ in range(5))))

    def built(self, area: str, build_s: float, run_s: float, items: int) -> None:
        """A whole part of ``area`` over ``items`` work-items was built and run."""
        with self._lock:
            a = self._area(area)
            a.build_s.add(build_s)
            a.run_item_s.add(run_s / items)

    def extended(self, area: str, run_s: float, items: int) -> None:
        """An extension of ``area`` over ``items`` work-items ran in ``run_s`` seconds."""
        with self._lock:
            self._area(area).extension_item_s.add(run_s / items)

    def judged(self, area: str, cpu_s: float, lanes: int, own: float | None = None) -> None:
        """A window of ``area`` with ``lanes`` output lanes took the harness ``cpu_s`` CPU seconds;
        its part's expectations took ``own`` a lane (None: not known)."""
        if lanes:
            with self._lock:
                a = self._area(area)
                a.lane_cpu_s.add(cpu_s / lanes)
                if own:
                    a.judging.add(cpu_s / lanes / own)

    def items(self, area: str, part: Program, own: float | None = None) -> int:
        """The work-items of the extension of ``part`` (a whole part of ``area`` that ran, whose
        expectations took ``own`` CPU seconds a lane; None: not known): a multiple of its own, 0
        for none (module docstring)."""
        g = part.global_size
        lanes = lanes_per_item(part)
        with self._lock:
            a = self._area(area)
            build, judging = a.build_s.value, a.judging.value
            cpu = own * (judging or 1.0) if own else a.lane_cpu_s.value
            run = a.extension_item_s.value if a.extension_item_s.value is not None else a.run_item_s.value
        jobs = self.jobs()
        if not jobs or build is None or run is None:
            return 0
        lay = layout(part)
        caps = {"memory": self.max_bytes * g // max(lay.in_bytes, lay.out_bytes, 1)}
        if run > 0:
            caps["pace"] = RUN_SHARE * build / run
        if cpu is None:  # the first extension: the part's own work-items, to measure the harness on
            caps["measure"] = g
        else:
            need, have = cpu * lanes, POOL_USE * jobs * run  # per work-item: CPU seconds needed, had
            if need > have:
                def pool(builds: float) -> float:
                    return (POOL_USE * jobs * (builds + run * g) - need * g) / (need - have)
                caps["pool"] = pool(build)
                if caps["pool"] > MAX_LAUNCHES * g and g < window_items(part):  # one launch of a kernel
                    caps["pool"] = max(MAX_LAUNCHES * g, pool(2 * build))  # of its own: a build more
        limit = min(caps, key=caps.get)
        with self._lock:
            self.bound[area, limit] += 1
        return max(0, int(caps[limit]) // g * g)


def lanes_per_item(program: Program) -> int:
    """Output lanes a work-item of ``program`` writes (lang.ir.Program.lanes of each output, per
    work-item)."""
    return sum(b.type.mem_lanes for b in program.outputs)


def window_items(program: Program) -> int:
    """The work-items of a window of ``program``'s extensions: the fewest that hold
    :data:`WINDOW_LANES` lanes."""
    return -(-WINDOW_LANES // max(1, lanes_per_item(program)))


def extension(part: Program, items: int) -> list[Program]:
    """The launches of ``part``'s extension over ``items`` work-items after its own (a multiple of
    its own): as many launches of its own size (its kernel: the worker's build of it serves them)
    where that is at most :data:`MAX_LAUNCHES` or each holds a window's lanes (a launch's fixed
    costs, a few milliseconds, are then small beside its lanes'), else one launch of all of them
    (a kernel of other buffer offsets: one more build)."""
    g = part.global_size
    if items // g <= MAX_LAUNCHES or g >= window_items(part):
        return [window(part, g * (i + 1), g) for i in range(items // g)]
    return [window(part, g, items)]


def windows(ext: Program) -> list[tuple[int, Program]]:
    """``ext`` (an extension) cut into windows: (first work-item in ``ext``, the window's program),
    each over :func:`window_items` work-items, the last over the rest."""
    size = window_items(ext)
    return [(start, window(ext, start, min(size, ext.global_size - start)))
            for start in range(0, ext.global_size, size)]


def ranges(ext: Program, cut: list[tuple[int, Program]]) -> list[dict[str, tuple[int, int]]]:
    """For each window of ``cut`` (:func:`windows`), where each output buffer's bytes of its
    work-items lie in ``ext``'s packed ``out`` argument, as (offset, size): what its judging reads
    of the run."""
    regions = layout(ext).outputs
    return [{b.name: (regions[b.name].offset + start * b.type.size, w.global_size * b.type.size) for b in ext.outputs}
            for start, w in cut]


def window_result(program: Program, result: Result, share: float) -> Result:
    """The result of ``program`` (a window) from its output buffers' bytes (``result.outputs``:
    :func:`ranges` of its extension's) packed as its own ``out`` argument, with ``share`` of ``result``'s times."""
    if not result.ok:
        return Result(result.status, log=result.log, build_s=result.build_s * share, run_s=result.run_s * share)
    lay = layout(program)
    out = bytearray(lay.out_bytes)
    for name, data in result.outputs.items():
        offset = lay.outputs[name].offset
        out[offset:offset + len(data)] = data
    return Result("ok", {"out": bytes(out)}, build_s=result.build_s * share, run_s=result.run_s * share)


def input_ranges(ext: Program) -> list[tuple[int, int]]:
    """The ranges of work-items (first, count) of a launch ``ext`` whose inputs the harness draws
    each in a task of its own (campaign.pool.Harness.inputs): a window's work-items each, so that a
    launch of many windows (an image part's extension: one launch) is drawn by several worker
    processes at once rather than by one while the GPU waits."""
    size = window_items(ext)
    return [(start, min(size, ext.global_size - start)) for start in range(0, ext.global_size, size)]


def draw_inputs(ext: Program, path: str, start: int, items: int) -> dict:
    """The inputs of work-items ``start`` to ``start + items`` of ``ext`` (lang.derive.window: the
    same lanes as the whole launch's there) written where they lie in its packed ``in`` argument
    (lang.layout), into the shared block at ``path`` (campaign.exchange: zeros elsewhere until
    written); its images' values returned with the first range (they are not per work-item)."""
    values = input_values(window(ext, start, items))
    regions = layout(ext).inputs
    for b in ext.inputs:
        exchange.write(path, values[b.name].tobytes(), regions[b.name].offset + start * b.type.size)
    return {i.name: values[i.name] for i in ext.images} if start == 0 else {}
