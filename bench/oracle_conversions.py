"""Throughput of the conversion oracle (oracles/conversions.py).

For each conversion family and a few representative type pairs, times ``convert`` + ``defined`` +
``rules`` (three separate public calls, as a caller that needs all three would make them) and the
one-pass ``convert_all`` on 1,000,000 edge-biased values, and prints conversions per second.

    python3 bench/oracle_conversions.py [--n 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import best  # (and the repository on sys.path)

from lang.types import SCALARS, scalar
from oracles import conversions as cv

CASES: dict[str, list[tuple[str, str, bool, str | None]]] = {
    "int->int": [("int", "char", True, None), ("long", "ulong", False, None), ("ushort", "int", False, None)],
    "int->float": [("long", "float", False, "rtp"), ("uint", "half", False, None), ("ulong", "double", False, "rtn")],
    "float->int": [("float", "int", True, "rte"), ("double", "ulong", False, None), ("half", "short", True, "rtn")],
    "float->float": [("double", "float", False, "rtn"), ("float", "half", False, None), ("half", "double", False, "rtz")],
}


def edge_values(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values of ``name``: half uniform bit patterns, half edge cases (ties and their
    neighbours, limits, powers of two, subnormals, NaN, inf)."""
    s = scalar(name)
    u = rng.integers(0, 2**s.bits, size=n, dtype=np.uint64).astype(s.bits_dtype).view(s.dtype)
    k = n // 2
    if s.is_float:
        e = rng.integers(0, s.mant_bits, size=k)
        ties = (np.floor(rng.random(k) * np.exp2(e)) + 0.5) * np.where(rng.random(k) < 0.5, -1, 1)
        with np.errstate(all="ignore"):
            ties = ties.astype(s.dtype)
            inf = np.array(np.inf, s.dtype)
            step = rng.integers(-1, 2, size=k)
            ties = np.where(step > 0, np.nextafter(ties, inf), np.where(step < 0, np.nextafter(ties, -inf), ties))
            fixed = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0**31, 2.0**63, 2.0**64, 65520.0, 1e-40],
                             np.float64).astype(s.dtype)
        sub = (rng.integers(1, 1 << (s.mant_bits - 1), size=k // 8, dtype=np.uint64)).astype(s.bits_dtype).view(s.dtype)
        edge = np.concatenate([ties, fixed, sub])
    else:
        lim = np.array([s.min, s.min + 1, s.max - 1, s.max, 0, 1], dtype=object)
        lim = lim[(lim >= s.min) & (lim <= s.max)].astype(s.dtype)
        shifts = rng.integers(0, s.bits, size=k).astype(np.uint64)
        pw = (np.uint64(1) << shifts) + rng.integers(-1, 2, size=k).astype(np.uint64)  # 2**k +- 1 (wraps)
        edge = np.concatenate([pw.astype(s.dtype), lim])
    out = np.concatenate([u, edge])[:n]
    return out[rng.permutation(len(out))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, {args.n:,} values per case, best of {args.repeat}")
    print(f"{'family':13s} {'conversion':34s} {'3 calls':>12s} {'convert_all':>12s}   (conversions/s)")
    for family, cases in CASES.items():
        total_n, total_t = 0, 0.0
        for src, dst, sat, rnd in cases:
            assert src in SCALARS and dst in SCALARS
            v = edge_values(src, args.n, rng)
            kw = dict(saturate=sat, rounding=rnd)

            def three():
                cv.convert(v, src, dst, **kw)
                cv.defined(v, src, dst, **kw)
                cv.rules(v, src, dst, **kw)

            t3 = best(three, args.repeat)
            t1 = best(lambda: cv.convert_all(v, src, dst, **kw), args.repeat)
            name = f"convert_{dst}{'_sat' if sat else ''}{'_' + rnd if rnd else ''}({src})"
            print(f"{family:13s} {name:34s} {args.n / t3:12,.0f} {args.n / t1:12,.0f}")
            total_n += args.n
            total_t += t3
        print(f"{family:13s} {'(family, 3 calls)':34s} {total_n / total_t:12,.0f}")


if __name__ == "__main__":
    main()
