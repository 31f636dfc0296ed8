"""The corner sweeps: each area's first programs in a campaign, covering its rows of the corner
table (:mod:`lang.corners`) systematically before and beside the random draws.

``sweep_programs(area, caps, policy)`` is a deterministic list (no Hypothesis, no seed): the same
capabilities and policy give the same programs, byte for byte, so a campaign that stores them
and is resumed finds them already run (:func:`sweep_key` names a finished sweep). Every operand
is an input buffer whose lanes are listed exactly (``Fill.values``: lane ``i`` takes value
``i % n``), so one statement tests many corners on many work-items. Each area's sweep is in its
module: ``math`` (:mod:`~fuzz.strategies.sweeps.maths`), ``expressions`` (the integer and
relational built-ins, :mod:`~fuzz.strategies.sweeps.expressions`, then the operators and vector
operations, :mod:`~fuzz.strategies.sweeps.operators`), ``conversions``
(:mod:`~fuzz.strategies.sweeps.conversions`, then arithmetic, casts and as_ of the operators'
sweep), ``images``, ``atomics`` and ``spirv`` (:mod:`~fuzz.strategies.sweeps.images`,
:mod:`~fuzz.strategies.sweeps.atomics`, :mod:`~fuzz.strategies.sweeps.spirv`); what they build
with is in :mod:`fuzz.strategies.sweeps.base`.

Programs hold ``policy.statements`` statements each (math: ``policy.math_statements``, as the
random math programs); a statement over double requires fp64 (``requires``), one using ``ctz``
OpenCL C 2.0, as the random programs do. An operation's operand tuples are packed into the lanes
of its statements, the prescribed special values first, and a sweep is handed out a pass at a
time: every operation's special values, its other classes, its shapes
(:func:`fuzz.strategies.sweeps.base.place`).
"""

from __future__ import annotations

import hashlib

from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.atomics import atomic_sweep
from fuzz.strategies.sweeps.base import SPARSE
from fuzz.strategies.sweeps.conversions import conversion_sweep
from fuzz.strategies.sweeps.expressions import integer_sweep
from fuzz.strategies.sweeps.images import image_sweep
from fuzz.strategies.sweeps.maths import math_sweep
from fuzz.strategies.sweeps.spirv import spirv_sweep
from lang.ir import Program
from lang.policy import Policy

__all__ = ["SWEEPS", "sweep_key", "sweep_key_of", "sweep_plan", "sweep_programs"]

SWEEPS = {"math": math_sweep, "expressions": integer_sweep, "conversions": conversion_sweep, "images": image_sweep,
          "atomics": atomic_sweep, "spirv": spirv_sweep}
"""The areas with a corner sweep, each in its module (see the package docstring); shapes has none
(its statements are the other areas')."""


def sweep_plan(area: str, caps: Caps = Caps(), policy: Policy = Policy()) -> list[tuple[int, Program]]:
    """:func:`sweep_programs`, each with its pass (fuzz.strategies.sweeps.base.SPECIALS, CLASSES,
    SHAPES; the image, atomic and SPIR-V sweeps, sparse, SPARSE): a campaign hands out the sweeps of
    its areas a pass at a time (campaign.scheduler)."""
    sweep = SWEEPS.get(area)
    out = sweep(caps, policy) if sweep else []
    return [x if isinstance(x, tuple) else (SPARSE, x) for x in out]  # a sweep without passes


def sweep_programs(area: str, caps: Caps = Caps(), policy: Policy = Policy()) -> list[Program]:
    """The corner sweep of one area: the programs a campaign runs first in that area, on every
    target, before its random draws (see the module docstring); [] for an area without one."""
    return [p for _, p in sweep_plan(area, caps, policy)]


def sweep_key(area: str, caps: Caps = Caps(), policy: Policy = Policy()) -> str:
    """A name for one area's sweep under these capabilities and policy (its programs' ids
    hashed): the marker a campaign stores once the sweep has run, so that a resumed campaign does
    not repeat it (and runs a new sweep when the table or the capabilities changed)."""
    return sweep_key_of(area, sweep_programs(area, caps, policy))


def sweep_key_of(area: str, programs: list[Program]) -> str:
    """:func:`sweep_key` of an area's sweep programs."""
    ids = ",".join(p.id for p in programs)
    return f"{area}:{hashlib.sha256(ids.encode()).hexdigest()[:16]}"
