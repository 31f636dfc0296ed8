"""Harness overhead: campaign wall time against the drivers' own time on the same programs.

For each driver alone, in one run of this script:
1. a campaign (generation, corpus writes, oracle, worker processes, judging: everything) runs
   ``--programs`` programs with a fixed seed; its wall time is W;
2. the same program parts, as OpenCL C source and packed input bytes, run in a bare pyopencl loop
   (build, buffers, enqueue, read back; nothing else) in a fresh process that sees only that
   driver; its time is D.
The overhead is W / D - 1 (target: under 10%). Checks per second are judged lanes / W.
Run: python3 bench/harness_overhead.py [--programs 6] [--drivers pocl]
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  (puts the repository on sys.path)

from corpus.store import Corpus
from fuzz.campaign import run_campaign
from fuzz.drivers import discover, select
from fuzz.emit.opencl_c import KERNEL_NAME, emit
from fuzz.layout import input_bytes, layout

BARE = r"""
import pickle, sys, time
import numpy as np, pyopencl as cl
jobs = pickle.load(open(sys.argv[1], "rb"))
platform = cl.get_platforms()[int(sys.argv[2])]
device = platform.get_devices()[int(sys.argv[3])]
ctx = cl.Context([device]); q = cl.CommandQueue(ctx)
mf = cl.mem_flags
t0 = time.perf_counter()
for src, data, in_bytes, out_bytes, n in jobs:
    prg = cl.Program(ctx, src).build()
    a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.frombuffer(data, np.uint8))
    b = cl.Buffer(ctx, mf.READ_WRITE, out_bytes)
    getattr(prg, "%s")(q, (n,), None, a, b)
    out = np.empty(out_bytes, np.uint8); cl.enqueue_copy(q, out, b); q.finish()
print(time.perf_counter() - t0)
""" % KERNEL_NAME


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=6)
    ap.add_argument("--drivers")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    targets = select(discover(), args.drivers.split(",") if args.drivers else None)
    print(f"{'driver':10} {'programs':>8} {'campaign s':>10} {'bare s':>8} {'overhead':>9} {'checks/s':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for target in targets:
            db = Path(tmp) / f"{target.name}.db"
            corpus = Corpus(db)
            t0 = time.perf_counter()
            result = run_campaign(corpus, [target], minutes=30, seed=args.seed, max_programs=args.programs)
            wall = time.perf_counter() - t0
            programs = [corpus.program(r["id"]) for r in corpus.query(
                "select id from programs where statements > 0 order by created")]
            generated = [p for p in programs if p.id in {r["program_id"] for r in corpus.query(
                "select distinct program_id from runs")}]
            jobs = []
            for p in generated:
                lay = layout(p)
                jobs.append((emit(p), input_bytes(p), lay.in_bytes, lay.out_bytes, p.global_size))
            job_file = Path(tmp) / "jobs.pkl"
            job_file.write_bytes(pickle.dumps(jobs))
            # fresh compiler caches: the campaign compiled these kernels already
            cache = Path(tmp) / f"cache-{target.name}"
            env = {**os.environ, **target.env(), "POCL_CACHE_DIR": str(cache), "MESA_SHADER_CACHE_DIR": str(cache)}
            out = subprocess.run([sys.executable, "-c", BARE, str(job_file), str(target.platform_index),
                                  str(target.device_index)], env=env, capture_output=True, text=True, check=True)
            bare = float(out.stdout.strip().splitlines()[-1])
            s = result.targets[target.name]
            print(f"{target.name:10} {result.programs:8} {wall:10.2f} {bare:8.2f} {wall / bare - 1:9.1%} "
                  f"{s.judged / wall:12,.0f}", flush=True)
            corpus.close()


if __name__ == "__main__":
    main()
