"""The oracle of floating-point arithmetic and the math, common and geometric built-ins (area ``math``).

For every output lane it gives the values the spec allows (:class:`Lane`, packed into an
:class:`oracles.expect.Expectation`):

* a value the spec prescribes (OpenCL C 3.0.19 §7.5.1 edge cases, C99 Annex F.9 which §7.5
  incorporates, and each function's definition in §6.15.2/4/5; on a SPIR-V path the SPIR-V
  environment's list, which adds exp10(±0) = 1) is exact, sign included
  (:func:`oracles.math.specials.prescribed`), and so is a limit no line lists but IEC 60559
  arithmetic fixes (C99 F.9 ¶3: rsqrt(-0) = -inf);
* otherwise the infinitely precise result is computed with mpmath at twice the format's precision
  plus 40 bits (``oracles.floats``) and the bound of :mod:`lang.maths` for the type, the
  device's profile and the program's build options decides: correctly rounded (one value), 0 ulp,
  at most k ulp (the interval of floats within k ulp(x) of the reference, §7.4, infinity allowed
  where the next value past MAX is within it), an absolute error, or not judged;
* where the device may flush denormals (no CL_FP_DENORM, §7.2) or the program is built with
  -cl-denorms-are-zero, the four results of §7.5.3: the result from operands with subnormals read
  as zeros of either sign, and a result that is subnormal before rounding flushed to ±0;
* NaN results are "any NaN" (payload and sign unspecified, OpenCL SPIR-V environment §6.7.1).

The float environment ``env`` (a frozenset) holds the flushable type names and flags: of the
device and path (``embedded``: EMBEDDED_PROFILE; ``spirv``: a SPIR-V path) and of how the program
is built (:func:`lang.maths.build_flags`: ``cl2`` for OpenCL C >= 2.0; ``finite``, ``unsafe``,
``nsz``, ``mad``, ``daz``, ``cr`` from its options, each with the options it sets). Where the build
voids edge case behaviour (:func:`oracles.math.bounds.edges_void`) no prescribed value or other
edge rule judges, and where it voids every accuracy rule (:func:`oracles.math.bounds.accuracy_void`)
no lane is judged at all (OpenCL 3.0 API §5.8.6.3).

Every lane also carries its reference and ulp so that the judge can measure the error a driver
made (``Expectation.error``), passing or not.

This module is the engine's entry (:func:`outputs`); a lane-wise function's lanes are computed in
:mod:`oracles.math.lanewise`, a geometric function's in :mod:`oracles.math.geometric`, and the
tables they read live apart: the prescribed values (:mod:`oracles.math.specials`), the exact
functions (:mod:`oracles.math.exact`), the mpmath references (:mod:`oracles.math.precise`), the
bounds and rules (:mod:`oracles.math.bounds`) and the lanes and their packing
(:mod:`oracles.math.lanes`). In front of the mpmath path, :func:`outputs` lets the filter of
:mod:`oracles.math.fast` decide the lanes a vectorized reference fixes bit for bit;
``fast=False`` computes every lane with mpmath. :func:`outputs` holds
``oracles.math.precise.PRECISION`` (mpmath's precision is the process's, not the thread's), and
while ``oracles.math.lanewise.REFERENCE_ONLY`` is set it computes every lane with mpmath, none
from the operand-set cache (the re-derivation of a disagreement: ``oracles.interpreter.rederive``).
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np

from lang.ir import Op
from lang.maths import FUNCTIONS
from lang.types import Type
from oracles.expect import Expectation
from oracles.math.fast import filtered
from oracles.math.geometric import geometric_outputs
from oracles.math.lanes import Lane, operand_values, pack, unjudged
from oracles.math.lanewise import REFERENCE_ONLY, lanewise, union
from oracles.math.precise import PRECISION

# ---- the references of the IR's operations ------------------------------------------------------------


def outputs(op: Op, args: list[Expectation], n: int, env: frozenset, *, fast: bool = True) -> tuple[Expectation, ...]:
    """The expectations of a math operation: its result, and its out-parameter's where it has one.
    With ``fast`` the vectorized filter (:mod:`oracles.math.fast`) decides the lanes it can, bit for
    bit as mpmath would; mpmath computes the others (``fast=False``: every lane, the reference).
    The scalar operand of a scalar-argument overload (lang.maths.MathFn.scalar_form: ``ldexp(float4,
    int)``, ``step(float, float4)``) is the same value in every lane of its work-item (``spread``);
    each lane then follows the rules and bound of the all-vector form, whose lanes are the scalar
    function's (§6.15.2, §6.15.4: "operate component-wise")."""
    with PRECISION:
        return _outputs(op, args, n, env, fast and not REFERENCE_ONLY.get())


def _outputs(op: Op, args: list[Expectation], n: int, env: frozenset, fast: bool) -> tuple[Expectation, ...]:
    f = FUNCTIONS[op.op]
    t = op.args[0].type if op.args else op.type
    tname = op.type.scalar if f.result != "i" else t.scalar
    if f.group == "geometric":
        return (geometric_outputs(f, op, args, n, env, fast),)
    spread = [None if a.type.width == op.type.width or op.type.width == 1 else op.type.width for a in op.args]
    decided = filtered(f, tname, env, args, spread) if fast else None
    slow = np.arange(n * op.type.width) if decided is None else decided.rest
    per_arg = [operand_values(e.select(slow if k is None else slow // k), a.type.scalar)
               for a, e, k in zip(op.args, args, spread)]
    results: list[list[Lane]] = [[] for _ in range(2 if f.out else 1)]
    for i in range(len(slow)):
        operand_sets = [p[i] for p in per_arg]
        if any(s is None for s in operand_sets) or math.prod(len(s) for s in operand_sets) > 16:
            got = (unjudged(),) * len(results)
        else:
            got = union(lanewise(f.name, tname, env, combo) for combo in product(*operand_sets))
        for j, lane in enumerate(got):
            results[j].append(lane)
    types = [op.type.scalar] + ([f.operand_type(f.out, Type(tname)).scalar] if f.out else [])
    if decided is not None:  # the representatives' lanes copied to every lane they stand for
        return decided.merge([pack(lanes, ty) for lanes, ty in zip(results, types)] if len(slow) else None)
    return tuple(pack(lanes, ty) for lanes, ty in zip(results, types))


