"""Throughput of the math oracle (oracles.math.outputs): the filter of oracles.math.fast in front
of mpmath, against mpmath alone (``fast=False``), per function and type on ordinary operands, and
on whole drawn math programs.

Ordinary operands are drawn where each function is defined and its result is a normal value of
the type (exp over ±0.9·ln(MAX), log over positive magnitudes 2^-20..2^20 with a uniform
significand, asin in [-1, 1], sin in [-100, 100] ...); every lane is one certain operand set, as a program's input buffers give. For
each function and type one run prints lanes per second with the filter, lanes per second with
mpmath only (its lane cache cleared first), their ratio, and the share of lanes the filter leaves
to mpmath: ``mpmath value`` (the reference was ambiguous there, mpmath's value decided the lane or
sent it on) and ``exact path`` (the lanes the filter leaves to the mpmath oracle: prescribed
values, overflow and subnormal results, values no margin decides). Both rates come from the same
run and process.

``--programs N`` draws N math programs (fuzz.strategies.maths, every type, the strategy's edge
pools and build options) of each size of ``--sizes`` (statements x work-items) and prints, per
size, the oracle's lanes per second with the filter, with mpmath alone on the first
``--mp-programs`` of them, and the ratio of the two on those programs and, per function over every size, its lanes, the share the filter
decided, the share left to the exact path, the share that reached it as distinct operand sets
(``evaluated``: the lanes the exact path computes, the others are copies) and its share of the
oracle's time. The lane cache is kept between programs, as in a campaign.

Times are the process's CPU time (``time.process_time``: the oracle is one thread), so that a
measurement on a machine shared with other work still compares; on an idle machine it is the
wall time.

    python3 bench/oracle_maths.py [--lanes 200000] [--mp-lanes 1500] [--types half,float,double]
        [--functions sin,exp] [--markdown]
    python3 bench/oracle_maths.py --programs 40 [--sizes 16x256,64x1024] [--mp-programs 4]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from fuzz.strategies import Caps, math_programs, sample
from lang.ir import Load, Op
from lang.maths import FUNCTIONS
from lang.policy import Policy
from lang.types import Type, scalar
from oracles import Expectation, expected, fmt
from oracles.math import DECIDED, engine, filtered, geometric, lanewise
from oracles.math.references import REFERENCES, trusted, trusted_beyond

_EXP = {"exp": math.e, "exp2": 2.0, "exp10": 10.0, "expm1": math.e, "sinh": math.e, "cosh": math.e}
_UNIT = ("asin", "acos", "atanh", "asinpi", "acospi")
_TRIG = ("sin", "cos", "tan", "sinpi", "cospi", "tanpi")
_POSITIVE = ("log", "log2", "log10", "sqrt", "rsqrt", "powr", "pow", "rootn")
_GAMMA_TOP = {"half": 8.0, "float": 34.0, "double": 170.0}  # tgamma overflows beyond


def ordinary(fn: str, tname: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` ordinary operand sets of ``fn`` on ``tname`` (module docstring)."""
    base = fn[5:] if fn.startswith("half_") and fn not in ("half_divide", "half_recip") else fn
    fm = fmt(tname)
    span = min(20.0, fm.emax / 4)  # magnitudes 2^-span .. 2^span

    def mag(positive: bool = False) -> np.ndarray:  # a uniform significand: exp2 of a double would give log2 that double
        v = np.ldexp(rng.uniform(1, 2, n), rng.integers(-int(span), int(span), n))
        return v if positive else v * np.where(rng.random(n) < 0.5, -1, 1)

    cols = []
    for i, p in enumerate(FUNCTIONS[fn].inputs):
        if p == "i":
            cols.append(rng.integers(-8, 9, n).astype(np.int32))
            continue
        if base in _EXP and i == 0:
            top = 0.9 * math.log(fm.max) / math.log(_EXP[base])
            v = rng.uniform(-top, top, n)
        elif base in _UNIT:
            v = rng.uniform(-1, 1, n)
        elif base == "acosh":
            v = 1 + mag(True)
        elif base == "log1p":
            v = rng.uniform(-0.9, 10, n)
        elif base in _TRIG:
            v = rng.uniform(-100, 100, n)
        elif base == "tgamma":
            v = rng.uniform(-_GAMMA_TOP[tname], _GAMMA_TOP[tname], n)
        elif base in ("erf", "erfc"):
            v = rng.uniform(-5, 5, n)
        elif base in ("pow", "powr") and i == 1:
            v = rng.uniform(-8, 8, n) * (0.9 * fm.emax / 8 / span)
        else:
            v = mag(base in _POSITIVE)
        cols.append(v.astype(scalar(tname).dtype))
    return cols


def _op(fn: str, tname: str) -> Op:
    t = Type(tname)
    return Op(fn, tuple(Load(f"in{i}", t if p in "gs" else Type("int")) for i, p in enumerate(FUNCTIONS[fn].inputs)), t)


def _rate(op: Op, cols: list[np.ndarray], tname: str, fast: bool, repeat: int) -> float:
    args = [Expectation.exact(tname if c.dtype.kind == "f" else "int", c) for c in cols]
    best = math.inf
    for _ in range(repeat):
        lanewise.lanewise_at.cache_clear()
        t0 = time.process_time()
        engine.outputs(op, args, len(cols[0]), frozenset(), fast=fast)
        best = min(best, time.process_time() - t0)
    return len(cols[0]) / best


def _functions(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(25)
    head = ("function", "type", "filter lanes/s", "mpmath lanes/s", "ratio", "mpmath value", "exact path")
    print("| " + " | ".join(head) + " |\n|---|---|---:|---:|---:|---:|---:|" if args.markdown else
          f"{head[0]:12} {head[1]:7} {head[2]:>15} {head[3]:>15} {head[4]:>7} {head[5]:>13} {head[6]:>10}")
    for tname in args.types.split(","):
        for fn in args.functions.split(","):
            if tname != "float" and fn.startswith("half_") or (FUNCTIONS[fn].bound(tname).kind == "none"
                                                                and fn not in DECIDED):
                continue
            op = _op(fn, tname)
            cols = ordinary(fn, tname, args.lanes, rng)
            _rate(op, [c[:64] for c in cols], tname, True, 1)  # the start-up check, outside the timing
            exp = [Expectation.exact(tname if c.dtype.kind == "f" else "int", c) for c in cols]
            decided = filtered(FUNCTIONS[fn], tname, frozenset(), exp, [None] * len(cols))
            share = len(decided.undecided) / args.lanes
            refined = decided.refined / args.lanes
            fast = _rate(op, cols, tname, True, 2) if share < 0.5 else _rate(op, [c[:args.mp_lanes] for c in cols],
                                                                            tname, True, 1)
            slow = _rate(op, [c[:args.mp_lanes] for c in cols], tname, False, 1)
            row = (fn, tname, f"{fast:,.0f}", f"{slow:,.0f}", f"{fast / slow:,.0f}x", f"{refined:.2%}", f"{share:.2%}")
            print("| " + " | ".join(row) + " |" if args.markdown else
                  f"{row[0]:12} {row[1]:7} {row[2]:>15} {row[3]:>15} {row[4]:>7} {row[5]:>13} {row[6]:>10}", flush=True)


def _programs(args: argparse.Namespace) -> None:
    """Whole drawn programs per size, fast and mpmath-only, and the per-function shares (module docstring)."""
    caps = Caps(fp64=True, fp16=True, cr_divide_sqrt=True, versions=frozenset({"cl2.0"}))
    per_fn: dict[str, list[float]] = {}  # lanes, decided, left to the exact path, evaluated there, seconds
    outputs, original, original_geometric = engine.outputs, engine.filtered, geometric.geometric_filtered
    fast = [True]

    def count(name: str, out, lanes: int) -> None:
        row = per_fn.setdefault(name, [0, 0, 0, 0, 0.0])
        row[1] += 0 if out is None else len(out.index)
        row[2] += lanes if out is None else len(out.undecided)
        row[3] += lanes if out is None else len(out.rest)

    def counting(f, tname, env, a, spread):
        out = original(f, tname, env, a, spread)
        count(f.name, out, 0)
        return out

    def counting_geometric(f, tname, env, a, width, out_width, flush):
        out = original_geometric(f, tname, env, a, width, out_width, flush)
        count(f.name, out, len(a[0]) // width * out_width)
        return out

    def timed(op, a, n, env, fast_=None):
        row = per_fn.setdefault(op.op, [0, 0, 0, 0, 0.0])
        t0 = time.process_time()
        got = outputs(op, a, n, env, fast=fast[0])
        row[4] += time.process_time() - t0 if fast[0] else 0.0
        if fast[0]:
            row[0] += n * op.type.width
        return got

    for fn in REFERENCES:  # the start-up checks, outside the timing
        for tname in ("half", "float", "double"):
            trusted(fn, tname)
            trusted_beyond(fn, tname)
    engine.filtered, engine.outputs, geometric.geometric_filtered = counting, timed, counting_geometric
    print("| statements x work-items | programs | lanes | filter lanes/s | mpmath lanes/s | ratio |\n"
          "|---|---:|---:|---:|---:|---:|")
    try:
        for size in args.sizes.split(","):
            statements, work_items = (int(v) for v in size.split("x"))
            programs = sample(math_programs(caps, Policy(math_statements=statements, math_global_size=work_items)),
                              args.programs, seed=25)
            rates = []  # every program with the filter; the first ones with it and with mpmath alone
            for on, subset in ((True, programs), (True, programs[:args.mp_programs]),
                               (False, programs[:args.mp_programs])):
                fast[0] = on
                lanewise.lanewise_at.cache_clear()
                lanes, t0 = 0, time.process_time()
                for p in subset:
                    lanes += sum(len(e) for e in expected(p, frozenset({"half"})).values())
                rates.append((lanes, lanes / (time.process_time() - t0)))
            print(f"| {size} | {len(programs)} | {rates[0][0]:,} | {rates[0][1]:,.0f} | {rates[2][1]:,.0f} | "
                  f"{rates[1][1] / rates[2][1]:.1f}x |", flush=True)
    finally:
        engine.filtered, engine.outputs, geometric.geometric_filtered = original, outputs, original_geometric
    total = sum(r[4] for r in per_fn.values())
    print("\n| function | lanes | decided | exact path | evaluated | oracle time |\n|---|---:|---:|---:|---:|---:|")
    for fn, (lanes, decided, rest, evaluated, seconds) in sorted(per_fn.items(), key=lambda kv: -kv[1][4]):
        print(f"| `{fn}` | {lanes:,} | {decided / lanes:.1%} | {rest / lanes:.1%} | {evaluated / lanes:.1%} | "
              f"{seconds / total:.1%} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanes", type=int, default=200_000)
    ap.add_argument("--mp-lanes", type=int, default=1500)
    ap.add_argument("--types", default="half,float,double")
    ap.add_argument("--functions", default=",".join([*REFERENCES, *sorted(DECIDED)]))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--programs", type=int, default=0, help="draw this many programs per size instead")
    ap.add_argument("--sizes", default="16x256,32x1024,64x1024,64x4096")
    ap.add_argument("--mp-programs", type=int, default=3)
    args = ap.parse_args()
    (_programs if args.programs else _functions)(args)


if __name__ == "__main__":
    main()
