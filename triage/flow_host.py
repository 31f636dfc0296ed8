"""An independent evaluation of flow programs: the program as C for the host, built with the
system's C compiler and run one work-item at a time (a work-group's work-items as threads when
the program exchanges through local memory, its barriers a pthread barrier). A partial last
work-group of a non-uniform launch (lang.flow_launch) has fewer work-items, its own local size.

The body is the OpenCL C emitter's text in its host dialect (fuzz.emit.opencl_flow.Dialect);
what the two languages spell differently is written here, independently of the interpreter:
the built-ins as C functions on ``__int128``, the work-item functions as fields the launch
fills in. It is built with ``-fsanitize=undefined`` (no recovery), so a program whose C
evaluation meets undefined behaviour (a signed overflow, a shift too far, a division by zero, an
index out of bounds) fails instead of giving a value: the run checks the validator's rules too.

The inputs are the program's fills (lang.nodes.Fill) read here, not the interpreter's: nothing of
``oracles`` is imported, so ``clfuzz audit`` (triage.audit, its contract
``audit-reader-independent``) re-derives a flow row's verdict with it (triage.flow_audit); the
tests check the interpreter against it (tests/test_flow.py).
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np

from fuzz.emit.opencl_flow import Dialect, kernel_body, prelude
from lang.flow import FlowProgram, regions
from lang.types import scalar
from triage.flow_host_vectors import HOST_VECTORS

TYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")
HEADER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
typedef uint8_t uchar; typedef uint16_t ushort; typedef uint32_t uint; typedef uint64_t ulong;
struct wi { uint global_id[3], local_id[3], group_id[3], global_size[3], local_size[3], num_groups[3],
            enqueued_local_size[3],
            global_offset[3], work_dim, global_linear_id, local_linear_id; uchar *local; pthread_barrier_t *bar; };
static __thread struct wi *w;  /* this thread's work-item: helpers read work-item functions too */
#define DEF(T, UT, W, BITS, LO, HI) \
static T min_##T(T a, T b) { return a < b ? a : b; } \
static T max_##T(T a, T b) { return a > b ? a : b; } \
static T clamp_##T(T x, T lo, T hi) { return min_##T(max_##T(x, lo), hi); } \
static T sat_##T(__int128 v) { return v < (__int128)(LO) ? (T)(LO) : v > (__int128)(HI) ? (T)(HI) : (T)v; } \
static T add_sat_##T(T a, T b) { return sat_##T((__int128)a + b); } \
static T sub_sat_##T(T a, T b) { return sat_##T((__int128)a - b); } \
static T hadd_##T(T a, T b) { return (T)(((__int128)a + b) >> 1); } \
static T rhadd_##T(T a, T b) { return (T)(((__int128)a + b + 1) >> 1); } \
static T rotate_##T(T v, T k) { UT u = (UT)v; unsigned s = (unsigned)((UT)k % BITS); \
    return (T)(s ? (UT)((UT)(u << s) | (UT)(u >> (BITS - s))) : u); } \
static T popcount_##T(T v) { return (T)__builtin_popcountll((unsigned long long)(UT)v); } \
static T clz_##T(T v) { UT u = (UT)v; return (T)(u ? __builtin_clzll((unsigned long long)u) - (64 - BITS) : BITS); } \
static UT abs_##T(T v) { return v < 0 ? (UT)((UT)0 - (UT)v) : (UT)v; } \
static UT abs_diff_##T(T a, T b) { __int128 d = (__int128)a - b; return (UT)(d < 0 ? -d : d); } \
static T mul_hi_##T(T a, T b) { return (T)(((W)a * (W)b) >> BITS); }
DEF(char, uchar, __int128, 8, -128, 127)
DEF(uchar, uchar, unsigned __int128, 8, 0, 255)
DEF(short, ushort, __int128, 16, -32768, 32767)
DEF(ushort, ushort, unsigned __int128, 16, 0, 65535)
DEF(int, uint, __int128, 32, -2147483647 - 1, 2147483647)
DEF(uint, uint, unsigned __int128, 32, 0, 4294967295u)
DEF(long, ulong, __int128, 64, -9223372036854775807L - 1, 9223372036854775807L)
DEF(ulong, ulong, unsigned __int128, 64, 0, 18446744073709551615ul)
static uint mul24_uint(uint a, uint b) { return a * b; }
static uint mad24_uint(uint a, uint b, uint c) { return a * b + c; }
"""

MAIN = r"""
struct arg { const uchar *in; uchar *out; struct wi w; };
static void *thread(void *p) { struct arg *a = p; item(a->in, a->out, &a->w); return 0; }
int main(void) {
    static uchar in[IN_BYTES], out[OUT_BYTES];
    if (fread(in, 1, IN_BYTES, stdin) != IN_BYTES) return 3;
    uint G[3] = {GS0, GS1, GS2}, L[3] = {LS0, LS1, LS2};
    uint N[3] = {(GS0 + LS0 - 1) / LS0, (GS1 + LS1 - 1) / LS1, (GS2 + LS2 - 1) / LS2};  /* partial groups count */
    uint O[3] = {GO0, GO1, GO2};
    struct arg *args = calloc(LS0 * LS1 * LS2, sizeof *args);
    pthread_t *threads = calloc(LS0 * LS1 * LS2, sizeof *threads);
    uchar *local = calloc(LOCAL_BYTES + 8, 1);
    for (uint g = 0; g < N[0] * N[1] * N[2]; g++) {
        uint grp[3] = {g % N[0], (g / N[0]) % N[1], g / (N[0] * N[1])}, A[3];  /* A: this group's size */
        for (int d = 0; d < 3; d++) A[d] = G[d] - grp[d] * L[d] < L[d] ? G[d] - grp[d] * L[d] : L[d];
        pthread_barrier_t bar;
        pthread_barrier_init(&bar, 0, A[0] * A[1] * A[2]);
        for (uint l = 0; l < A[0] * A[1] * A[2]; l++) {
            struct wi *w = &args[l].w;
            uint lid[3] = {l % A[0], (l / A[0]) % A[1], l / (A[0] * A[1])};
            memset(w, 0, sizeof *w);
            for (int d = 0; d < 3; d++) {
                w->local_id[d] = lid[d]; w->group_id[d] = grp[d]; w->global_id[d] = grp[d] * L[d] + lid[d] + O[d];
                w->global_offset[d] = O[d];
                w->global_size[d] = G[d]; w->local_size[d] = A[d]; w->num_groups[d] = N[d];
                w->enqueued_local_size[d] = L[d];
            }
            w->work_dim = DIMS; w->local_linear_id = l; w->local = local; w->bar = &bar;
            w->global_linear_id = (w->global_id[0] - O[0]) + GS0 * ((w->global_id[1] - O[1]) + GS1 * (w->global_id[2] - O[2]));
            args[l].in = in; args[l].out = out;
            if (THREADS) pthread_create(&threads[l], 0, thread, &args[l]); else thread(&args[l]);
        }
        if (THREADS) for (uint l = 0; l < A[0] * A[1] * A[2]; l++) pthread_join(threads[l], 0);
        pthread_barrier_destroy(&bar);
    }
    fwrite(out, 1, OUT_BYTES, stdout);
    return 0;
}
"""


def host_source(p: FlowProgram) -> str:
    """The C program: reads ``in`` on stdin, writes ``out`` on stdout."""
    offsets, at = {}, 0
    for a in p.arrays:
        if a.space == "local":
            offsets[a.name], at = at, at + 8 * a.length

    def builtin(fn: str, t: str, args: list[str]) -> str:
        if fn in ("fma", "sqrt"):  # C99 §7.12: fmaf, fma, sqrtf, sqrt (correctly rounded in glibc and SSE2)
            return f"{fn}{'f' * (t == 'float')}({', '.join(args)})"
        return f"{fn}_{t}({', '.join(args)})"

    def item(fn: str, dim: int) -> str:
        return f"w->{fn}" if fn in ("work_dim", "global_linear_id", "local_linear_id") else f"w->{fn}[{dim}]"

    dialect = Dialect(item=item, builtin=builtin, global_="", barrier="pthread_barrier_wait(w->bar);", private="",
                      local=lambda name, t, n: f"{t} *{name} = ({t} *)(w->local + {offsets[name]});",
                      vectors=HOST_VECTORS)
    _, in_bytes, _, out_bytes = regions(p)
    g = (*p.global_size, 1, 1)[:3]
    l = (*p.local_size, 1, 1)[:3]
    defines = {"IN_BYTES": in_bytes, "OUT_BYTES": out_bytes, "LOCAL_BYTES": at, "DIMS": len(p.global_size),
               "THREADS": int(bool(offsets)), **{f"GS{d}": g[d] for d in range(3)}, **{f"LS{d}": l[d] for d in range(3)},
               **{f"GO{d}": o for d, o in enumerate((*p.global_offset, 0, 0, 0)[:3])}}
    lines = [HEADER, *(f"#define {k} {v}" for k, v in defines.items()), *prelude(p, dialect),
             "static void item(const uchar *in, uchar *out, struct wi *self) {", "    w = self;", *kernel_body(p, dialect), "}", MAIN]
    return "\n".join(lines)


def run_host(p: FlowProgram, folder: Path | None = None) -> dict[str, np.ndarray]:
    """Each output's bits per work-item, from the host C build of ``p`` (raises on a failed
    build, or a run that meets undefined behaviour)."""
    ins, in_bytes, outs, _ = regions(p)
    buf = bytearray(in_bytes)
    for i in p.inputs:
        raw = i.fill.bits(i.count, scalar(i.type).bits).tobytes()
        buf[ins[i.name]:ins[i.name] + len(raw)] = raw
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src, exe = Path(tmp, "flow.c"), Path(tmp, "flow")
        src.write_text(host_source(p))
        cc = ["gcc", "-std=gnu11", "-O1", "-ffp-contract=off", "-fsigned-char", "-fsanitize=undefined,bounds",
              "-fno-sanitize-recover=all", "-w", "-o", str(exe), str(src), "-lm", "-lpthread"]
        subprocess.run(cc, check=True, capture_output=True, text=True)
        run = subprocess.run([str(exe)], input=bytes(buf), capture_output=True, timeout=60)
        if run.returncode:
            raise RuntimeError(f"host run failed ({run.returncode}): {run.stderr.decode()[-2000:]}")
    out = {}
    for o in p.outputs:
        s = scalar(o.type)
        out[o.name] = np.frombuffer(run.stdout, s.bits_dtype, p.work_items, outs[o.name])
    return out
