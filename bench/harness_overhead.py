"""Harness overhead: campaign wall time against the drivers' own time on the same programs.

For each driver alone, in one run of this script:
1. a campaign (generation, corpus writes, oracle, worker processes, judging: everything) runs
   ``--programs`` programs with a fixed seed; its wall time is W;
2. the same program parts, as OpenCL C source and packed input bytes, run in a bare pyopencl
   script (open the device; then build, buffers, enqueue, read back; nothing else) in a fresh
   process that sees only that driver; its time, from starting that process to its exit, is D
   (both sides pay for starting Python, loading the driver and opening a context once).
Both start with empty compiler caches.
The overhead is W / D - 1 (target: under 10%). Checks per second are judged lanes / W.
Each side runs ``--repeat`` times, alternating; the medians are reported.
Run: python3 bench/harness_overhead.py [--programs 20] [--repeat 3] [--drivers pocl] [--areas expressions]
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.campaign import run_campaign
from corpus.reads import programs_run, stored_programs
from corpus.store import Corpus
from fuzz.drivers import discover, select
from fuzz.drivers.routes import PATH_OPENCL_C
from fuzz.emit.opencl_c import KERNEL_NAME, emit
from lang.layout import input_bytes, layout

BARE = r"""
import pickle, sys
import numpy as np, pyopencl as cl
jobs = pickle.load(open(sys.argv[1], "rb"))
platform = cl.get_platforms()[int(sys.argv[2])]
device = platform.get_devices()[int(sys.argv[3])]
ctx = cl.Context([device]); q = cl.CommandQueue(ctx)
mf = cl.mem_flags
for src, data, in_bytes, out_bytes, n in jobs:
    prg = cl.Program(ctx, src).build()
    a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.frombuffer(data, np.uint8))
    b = cl.Buffer(ctx, mf.READ_WRITE, out_bytes)
    getattr(prg, "%s")(q, (n,), None, a, b)
    out = np.empty(out_bytes, np.uint8); cl.enqueue_copy(q, out, b); q.finish()
""" % KERNEL_NAME


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=20)
    ap.add_argument("--drivers")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; medians are reported")
    ap.add_argument("--areas", default="conversions,spirv",
                    help="comma-separated areas the programs are drawn from (the README numbers: the default)")
    args = ap.parse_args()
    # the bare loop builds OpenCL C source: the SPIR-V paths have no bare counterpart here
    targets = [t for t in select(discover(), args.drivers.split(",") if args.drivers else None)
               if t.path == PATH_OPENCL_C]
    print(f"{'driver':10} {'programs':>8} {'campaign s':>10} {'bare s':>8} {'overhead':>9} {'checks/s':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for target in targets:
            walls, bares, judged, programs = [], [], 0, 0
            for r in range(args.repeat):  # alternating, so background load hits both sides alike
                wall, bare, result = _once(target, args, Path(tmp) / f"{target.name}-{r}")
                walls.append(wall)
                bares.append(bare)
                judged, programs = result.targets[target.name].judged, result.programs
            wall, bare = statistics.median(walls), statistics.median(bares)
            print(f"{target.name:10} {programs:8} {wall:10.2f} {bare:8.2f} {wall / bare - 1:9.1%} "
                  f"{judged / wall:12,.0f}", flush=True)


def _once(target, args, folder: Path):
    """One campaign and one bare run of the same program parts: (W, D, campaign result)."""
    folder.mkdir()
    corpus = Corpus(folder / "corpus.db")
    t0 = time.perf_counter()
    result = run_campaign(corpus, [target], minutes=30, seed=args.seed, max_programs=args.programs,
                          areas=tuple(args.areas.split(",")))
    wall = time.perf_counter() - t0
    # the parts that ran to the end (a part that crashed the driver would kill the bare loop)
    ran = programs_run(corpus, status="ok")
    jobs = []
    for row in stored_programs(corpus):
        if row["statements"] > 0 and row["id"] in ran:
            p = corpus.program(row["id"])
            lay = layout(p)
            jobs.append((emit(p), input_bytes(p), lay.in_bytes, lay.out_bytes, p.global_size))
    corpus.close()
    job_file = folder / "jobs.pkl"
    job_file.write_bytes(pickle.dumps(jobs))
    cache = folder / "cache"  # empty, like the campaign worker's
    env = {**os.environ, **target.env(), "POCL_CACHE_DIR": str(cache), "MESA_SHADER_CACHE_DIR": str(cache)}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", BARE, str(job_file), str(target.platform_index),
                    str(target.device_index)], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return wall, time.perf_counter() - t0, result


if __name__ == "__main__":
    main()
