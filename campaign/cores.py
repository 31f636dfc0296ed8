"""How a campaign spends the machine's cores: driver workers per target, then the harness's pool.

Each target has one driver worker process (fuzz.drivers.Worker) at least. A target whose device is
not the host's CPU (a GPU: NVIDIA's) spends most of its worker's time in builds, which its driver
compiles on one host core while the device waits (docs/gpu.md: 367 of NVIDIA's 601 s were builds,
61 s runs), so where the machine has cores to spare it gets more workers, each building and running
programs of its own (:func:`default_workers`): the device runs what they build in turn. A CPU
device's runs already use every core (PoCL, rusticl on llvmpipe, Oclgrind), so it keeps one. The
cores left after the driver workers go to the harness's pool (:func:`default_jobs`,
campaign.pool).
"""

from __future__ import annotations

import multiprocessing
import os

from fuzz.drivers import Target

MIN_JOBS = 2
"""The fewest worker processes worth a pool: with fewer free cores (the driver workers take one
each) the campaign's own process is faster (bench/pool.py on 2 cores: docs/campaigns.md)."""

MAX_WORKERS = 3
"""Driver workers per target at most."""

CORES_PER_WORKER = 4
"""Spare cores an added driver worker needs: its driver's compiler takes one, the harness's pool
(drawing, expectations and judging of what it runs) up to three more (on the H200 machine the pool
used 3.1 processes' worth for NVIDIA's one worker: docs/gpu.md)."""


def offloads(target: Target) -> bool:
    """Whether ``target``'s device is not the host's CPU (its cl_device_type names no CPU)."""
    kind = str(target.fingerprint.get("device_type", "CPU"))
    return "CPU" not in kind.split("|")


def default_workers(targets: list[Target], cores: int | None = None) -> dict[str, int]:
    """Driver workers per target on a machine of ``cores`` cores (default: this one's): one each,
    and for the targets whose device is not the CPU (:func:`offloads`) one more for every
    :data:`CORES_PER_WORKER` cores left after one per target, shared among them, up to
    :data:`MAX_WORKERS` each (module docstring); one each in a daemon process (a cluster's worker,
    app.distributed), which has no pool to judge what more workers would run."""
    if multiprocessing.current_process().daemon:
        return {t.name: 1 for t in targets}
    cores = os.cpu_count() or 1 if cores is None else cores
    offloading = [t.name for t in targets if offloads(t)]
    extra = max(0, cores - len(targets)) // CORES_PER_WORKER // max(1, len(offloading))
    return {t.name: 1 + min(MAX_WORKERS - 1, extra) if t.name in offloading else 1 for t in targets}


def default_jobs(workers: int, cores: int | None = None) -> int:
    """Worker processes for a campaign whose targets have ``workers`` driver workers in all, on a
    machine of ``cores`` cores (default: this one's): the cores left after them, or 0 (no pool: the
    campaign's own process) where that is fewer than :data:`MIN_JOBS`, or where this process is a
    daemon (a cluster's worker, app.distributed: a daemon process may start none)."""
    if multiprocessing.current_process().daemon:
        return 0
    free = (os.cpu_count() or 1 if cores is None else cores) - workers
    return free if free >= MIN_JOBS else 0
