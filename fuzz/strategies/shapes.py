"""Programs of area ``shapes``: a program of another area with a shape around its statements
(:mod:`lang.shapes`: steps that compute the element index, wraps of control flow).

The base program is drawn by its own area's strategy (``policy.shape_statements`` statements,
at most ``policy.shape_global_size`` work-items); then up to ``policy.shape_steps`` steps (none
around atomics, whose operations use their own ids) and up to ``policy.shape_wraps`` wraps (at
least one part in all), kinds and forms uniform. Control words are drawn so that the data takes
the intended path (:attr:`lang.shapes.Kind.valid`): trip counts include 0 and 1 and reach
:data:`lang.shapes.TRIP_CAP`; a loop that runs the statements on every iteration runs at most 4
times. Local-memory steps get a power-of-two local size from ``policy.shape_local_sizes``; a
share ``policy.p_opt_disable`` of the programs is built with ``-cl-opt-disable``, and a share
``policy.p_unstructured`` has its SPIR-V written without merge instructions (lang.shapes.CFGS).
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import strategies as st

from fuzz.strategies import atomics, conversions, expressions, images, maths
from fuzz.strategies.conversions import Caps
from lang.ir import Program
from lang.policy import Policy
from lang.shapes import KINDS, MASK, ROUNDS_CAP, STEPS, TRIP_CAP, WRAPS, Part, Shape, needs

BASES = {"conversions": conversions.conversion_programs, "expressions": expressions.expression_programs,
         "math": maths.math_programs, "images": images.image_programs, "atomics": atomics.atomic_programs}
"""The areas whose statements a shape wraps (``spirv``'s forms have no OpenCL C kernel to compare)."""

OPT_DISABLE = "-cl-opt-disable"
"""A second axis on one driver: the same kind of program with the optimiser off (``p_opt_disable``);
the oracle judges both builds, so a lane the spec fixes that changes with the optimiser is caught."""

TRIPS = (0, 1, 2, 3, 4, 7, 16, 31, 64, 255, TRIP_CAP)
"""Trip counts drawn for loops (0 and 1 first among the corners, the cap last)."""


def _u32(rnd: random.Random) -> int:
    return rnd.choice((0, 1, 2, MASK, rnd.getrandbits(32), rnd.getrandbits(8)))


def _trip(rnd: random.Random, least: int = 0) -> int:
    return rnd.choice([t for t in TRIPS if t >= least])


def words(kind: str, form: str, rnd: random.Random, local_size: int) -> tuple[int, ...]:
    """Control words of one part that take the path it intends (lang.shapes.Kind.valid)."""
    if kind == "carried":
        n = _trip(rnd)
        return n, _u32(rnd), rnd.choice((n, n + 1, rnd.randrange(n + 1), MASK)), rnd.randrange(4)
    if kind in ("exchange", "rounds"):
        odd = rnd.getrandbits(32) | 1
        head = (rnd.randint(0, ROUNDS_CAP),) if kind == "rounds" else ()
        return *head, odd, _u32(rnd)
    if kind in ("tree", "call", "array"):
        return _u32(rnd), _u32(rnd)
    if kind == "select":
        a = rnd.randrange(MASK)
        return a, rnd.randint(a + 1, MASK)
    if kind == "if-uniform":
        v = _u32(rnd)
        return v, v
    if kind == "if-divergent":
        return (rnd.randint(0, max(local_size, 64)),)
    if kind == "loop":
        n = rnd.randint(1, 4) if form.endswith("every") else _trip(rnd, 1)
        return n, rnd.randrange(n)
    if kind == "switch":
        return (_u32(rnd),)
    a = _u32(rnd)
    return a, (a + rnd.randint(1, MASK)) & MASK  # dead: two different words


def _part(kind: str, rnd: random.Random, local_size: int, shared: bool, features: frozenset[str]) -> Part:
    needs, local = dict(KINDS[kind].needs), KINDS[kind].local_forms
    forms = [f for f in KINDS[kind].forms
             if not (shared and f.endswith("every")) and needs.get(f, "") in features | {""}
             and (f not in local or local_size)]  # a local array needs the power-of-two local size drawn
    form = rnd.choice(forms)
    return Part(kind, form, words(kind, form, rnd, local_size))


def shape_of(base: Program, rnd: random.Random, policy: Policy, features: frozenset[str] = frozenset()) -> Program:
    """``base`` with a drawn shape (module docstring); forms that need a device feature
    (lang.shapes.Kind.needs) only where ``features`` has it."""
    shared = bool(base.shared)
    kinds = [rnd.choice(STEPS) for _ in range(0 if shared else rnd.randint(0, policy.shape_steps))]
    local = base.local_size
    if any(KINDS[k].local for k in kinds):
        sizes = [s for s in policy.shape_local_sizes if base.global_size % s == 0]
        local = rnd.choice(sizes) if sizes else 0
        kinds = kinds if local else [k for k in kinds if not KINDS[k].local]
    n_wraps = rnd.randint(0 if kinds else 1, policy.shape_wraps)
    steps = tuple(_part(k, rnd, local, shared, features) for k in kinds)
    wraps = tuple(_part(rnd.choice(WRAPS), rnd, local, shared, features) for _ in range(n_wraps))
    every = [i for i, w in enumerate(wraps) if w.form.endswith("every")]
    for i in every[1:]:  # one loop that repeats the statements at most: nested, they multiply
        wraps = wraps[:i] + (replace(wraps[i], form=wraps[i].form.replace("every", "once")),) + wraps[i + 1:]
    options = " ".join(o for o in (base.options, OPT_DISABLE if rnd.random() < policy.p_opt_disable else "") if o)
    cfg = "unstructured" if rnd.random() < policy.p_unstructured else "structured"
    shape = Shape(base.area, steps, wraps, cfg)
    return replace(base, area="shapes", local_size=local, options=options, shape=shape,
                   requires=base.requires | needs(shape))


@st.composite
def shape_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Programs of area ``shapes`` (see the module docstring)."""
    rnd = draw(st.randoms(use_true_random=True))
    bases = [b for b in BASES if (b != "images" or caps.images) and (b != "atomics" or caps.atomics)]
    base_area = rnd.choice(bases)
    sized = replace(policy, statements=policy.shape_statements, global_size=policy.shape_global_size)
    base = draw(BASES[base_area](caps, sized))
    return shape_of(base, rnd, policy, caps.features)
