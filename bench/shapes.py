"""What a shape costs: shaped programs against their straight-line twins, in one run.

For ``--programs`` programs of area ``shapes`` (fixed seed) and their twins (lang.derive.twin: the same
statements without the shape):
* harness: emitting OpenCL C, the oracle's expectations and judging (the twin's expectations are
  the shaped program's: a shape never changes what the oracle computes);
* driver: build and run time on each ``--drivers`` target (one worker each, the shaped program
  and its twin alternating);
and the agreement: lanes where the shaped program disagrees and its twin does not (wrong code,
triage.reduce.passes.shapes), per target.
and, with ``--modules N``, the spirv-val pass rate of N drawn shaped modules (programs without half).
Run: python3 bench/shapes.py [--programs 30] [--seed 0] [--drivers pocl,rusticl,oclgrind] [--modules 1000]
"""

from __future__ import annotations

import argparse
import collections
import time

import _common  # noqa: F401  (puts the repository on sys.path)

from campaign.expectations import Expectations
from fuzz.drivers import Worker, discover, select
from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import target_env, validate
from fuzz.strategies import Caps, sample, shape_programs
from lang.derive import twin
from lang.policy import Policy
from triage.observe import observe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--drivers", default="pocl,rusticl,oclgrind")
    ap.add_argument("--modules", type=int, default=0)
    args = ap.parse_args()
    if args.modules:
        valid(args.modules, args.seed)
    if args.programs < 1:
        return
    programs = sample(shape_programs(Caps(fp64=True), Policy()), args.programs, args.seed)
    pairs = [(p, twin(p)) for p in programs]
    kinds = collections.Counter(k.kind for p in programs for k in p.shape.parts)
    print(f"{len(programs)} shaped programs; parts: {dict(sorted(kinds.items()))}")
    harness = {"shaped": 0.0, "twin": 0.0}
    for i, (p, t) in enumerate(pairs):
        for name, q in (("shaped", p), ("twin", t))[::1 if i % 2 else -1]:  # alternate who is first
            t0 = time.perf_counter()
            emit(q)
            Expectations(q).get(frozenset())
            harness[name] += time.perf_counter() - t0
    print(f"harness (emit + expectations): shaped {harness['shaped']:.2f} s, twin {harness['twin']:.2f} s, "
          f"ratio {harness['shaped'] / harness['twin']:.2f}")
    for target in select(discover(), args.drivers.split(",")):
        spent = {"shaped": 0.0, "twin": 0.0}
        wrong_code = ran = 0
        with Worker(target) as w:
            for p, t in pairs:
                lanes: dict[str, set] = {"shaped": set(), "twin": set()}
                for name, q in (("shaped", p), ("twin", t)):
                    t0 = time.perf_counter()
                    found = observe(q, target, w, lanes[name])
                    spent[name] += time.perf_counter() - t0
                ran += found is not None
                wrong_code += len(lanes["shaped"] - lanes["twin"])
        print(f"{target.name}: {ran} pairs, run+judge shaped {spent['shaped']:.1f} s, twin {spent['twin']:.1f} s, "
              f"ratio {spent['shaped'] / max(spent['twin'], 1e-9):.2f}; lanes wrong only when shaped: {wrong_code}")


def valid(n: int, seed: int) -> None:
    """spirv-val's verdict on ``n`` drawn shaped modules (half has no valid OpenCL module: skipped)."""
    programs = [p for p in sample(shape_programs(Caps(fp64=True), Policy()), n + n // 2, seed)
                if "fp16" not in p.requires][:n]
    problems = collections.Counter()
    for p in programs:
        problem = validate(spirv.emit(p), target_env(p))
        if problem:
            problems[problem.splitlines()[0][:120]] += 1
    print(f"spirv-val: {len(programs) - sum(problems.values())} of {len(programs)} shaped modules valid"
          + "".join(f"\n  {k}: {v}" for k, v in problems.most_common(5)))


if __name__ == "__main__":
    main()
