"""Throughput of the math oracle (oracles.maths.outputs): the filter of oracles.math_fast in front
of mpmath, against mpmath alone (``fast=False``), per function and type, on ordinary operands.

Ordinary operands are drawn where each function is defined and its result is a normal value of
the type (exp over ±0.9·ln(MAX), log over positive magnitudes 2^-20..2^20, asin in [-1, 1], sin in
[-100, 100] ...); every lane is one certain operand set, as a program's input buffers give. For
each function and type one run prints lanes per second with the filter, lanes per second with
mpmath only (its lane cache cleared first), their ratio, and the share of lanes the filter leaves
to mpmath: ``mpmath value`` (the reference was ambiguous there, mpmath's value decided the lane or
sent it on) and ``exact path`` (the lanes the filter leaves to the mpmath oracle: prescribed
values, overflow and subnormal results, values no margin decides). Both rates come from the same
run and process.

    python3 bench/oracle_maths.py [--lanes 200000] [--mp-lanes 1500] [--types half,float,double]
        [--functions sin,exp] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import oracles.evaluate  # noqa: F401  (registers every reference)
from lang.ir import Load, Op
from lang.maths import FUNCTIONS
from lang.types import Type, scalar
from oracles import maths
from oracles.expect import Expectation
from oracles.floats import fmt
from oracles.math_fast import filtered
from oracles.math_references import REFERENCES

_EXP = {"exp": math.e, "exp2": 2.0, "exp10": 10.0, "expm1": math.e, "sinh": math.e, "cosh": math.e}
_UNIT = ("asin", "acos", "atanh", "asinpi", "acospi")
_TRIG = ("sin", "cos", "tan", "sinpi", "cospi", "tanpi")
_POSITIVE = ("log", "log2", "log10", "sqrt", "rsqrt", "powr", "pow", "rootn")


def ordinary(fn: str, tname: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` ordinary operand sets of ``fn`` on ``tname`` (module docstring)."""
    base = fn[5:] if fn.startswith("half_") and fn not in ("half_divide", "half_recip") else fn
    fm = fmt(tname)
    span = min(20.0, fm.emax / 4)  # magnitudes 2^-span .. 2^span

    def mag(positive: bool = False) -> np.ndarray:
        v = np.exp2(rng.uniform(-span, span, n))
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
        maths._lanewise_at.cache_clear()
        t0 = time.perf_counter()
        maths.outputs(op, args, len(cols[0]), frozenset(), fast=fast)
        best = min(best, time.perf_counter() - t0)
    return len(cols[0]) / best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lanes", type=int, default=200_000)
    ap.add_argument("--mp-lanes", type=int, default=1500)
    ap.add_argument("--types", default="half,float,double")
    ap.add_argument("--functions", default=",".join([*REFERENCES, "erf", "erfc", "tgamma"]))
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(25)
    head = ("function", "type", "filter lanes/s", "mpmath lanes/s", "ratio", "mpmath value", "exact path")
    print("| " + " | ".join(head) + " |\n|---|---|---:|---:|---:|---:|---:|" if args.markdown else
          f"{head[0]:12} {head[1]:7} {head[2]:>15} {head[3]:>15} {head[4]:>7} {head[5]:>13} {head[6]:>10}")
    for tname in args.types.split(","):
        for fn in args.functions.split(","):
            if tname != "float" and fn.startswith("half_") or FUNCTIONS[fn].bound(tname).kind == "none":
                continue
            op = _op(fn, tname)
            cols = ordinary(fn, tname, args.lanes, rng)
            _rate(op, [c[:64] for c in cols], tname, True, 1)  # the start-up check, outside the timing
            exp = [Expectation.exact(tname if c.dtype.kind == "f" else "int", c) for c in cols]
            decided = filtered(FUNCTIONS[fn], tname, frozenset(), exp, [None] * len(cols))
            share = 1.0 if decided is None else len(decided.rest) / args.lanes
            refined = 0.0 if decided is None else decided.refined / args.lanes
            fast = _rate(op, cols, tname, True, 2) if share < 0.5 else _rate(op, [c[:args.mp_lanes] for c in cols],
                                                                            tname, True, 1)
            slow = _rate(op, [c[:args.mp_lanes] for c in cols], tname, False, 1)
            row = (fn, tname, f"{fast:,.0f}", f"{slow:,.0f}", f"{fast / slow:,.0f}x", f"{refined:.2%}", f"{share:.2%}")
            print("| " + " | ".join(row) + " |" if args.markdown else
                  f"{row[0]:12} {row[1]:7} {row[2]:>15} {row[3]:>15} {row[4]:>7} {row[5]:>13} {row[6]:>10}", flush=True)


if __name__ == "__main__":
    main()
