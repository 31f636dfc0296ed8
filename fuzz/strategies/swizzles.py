"""Rare swizzle shapes made common (docs/corners.md, "Rare swizzle shapes"): component selections
applied to swizzle rvalues, and reads of a 3-vector's undefined lane alone.

With probability ``Policy.p_swizzle_shapes`` a swizzle node of an expression tree
(:mod:`fuzz.strategies.expressions`) is one of:

* a half (``.lo .hi .even .odd``) of a swizzle rvalue of every width, 3 included (``v.s012.hi``:
  its second lane is the undefined w lane of the 3-component rvalue, §6.3.7), or a selection
  (``.xyzw`` / ``.sN``) of one;
* a read of a 3-vector's undefined lane only (``v.xyz.odd.y``, ``v.s120.hi.s1``): every lane of it
  is undefined, so the statement runs (for crashes and build failures) and is never judged (the
  oracle leaves the lane unjudged, rule ``vector.undefined_lane``).

Whether a node takes the new shape is decided from a hash of the random generator's state,
without drawing from it, so a program where no node takes one is byte-identical to the program
the same seed gave before (only the programs that get a new shape change).
"""

from __future__ import annotations

import zlib

import numpy as np

from lang.ir import Expr, Op
from lang.ops import half_components
from lang.types import VECTOR_WIDTHS, Type

VECTORS = VECTOR_WIDTHS[1:]
HALVES = ("lo", "hi", "even", "odd")


def fires(rnd, p: float) -> bool:
    """True with probability ``p``, from the state of ``rnd`` (a random.Random) without drawing."""
    if p <= 0:
        return False
    words = np.array(rnd.getstate()[1], dtype=np.uint32)
    return zlib.crc32(words.tobytes()) / 2**32 < p


def _components(rnd, source: int, n: int) -> tuple[str, tuple[int, ...]]:
    form = rnd.choice(("xyzw", "s", "S") if source <= 4 and n <= 4 else ("s", "S"))
    return form, tuple(rnd.randrange(source) for _ in range(n))


def _rvalue(g, elem: str, width: int, depth: int) -> Expr:
    """A swizzle rvalue of ``width`` lanes (3 included) of some vector expression."""
    source = g.rnd.choice(VECTORS)
    form, comps = _components(g.rnd, source, width)
    return selection(g.expr(Type(elem, source), depth), form, comps)


def selection(x: Expr, form: str, comps: tuple[int, ...]) -> Op:
    """``x`` with the components ``comps`` selected, spelled ``form`` (§6.3.7)."""
    return Op("swizzle", (x,), Type(x.type.scalar, len(comps)), (("components", comps), ("form", form)))


def undefined_lane(g, t: Type, depth: int) -> Expr:
    """``r.hi.y`` / ``r.odd.s1`` on a 3-component swizzle rvalue ``r``: its undefined w lane alone
    (a scalar; t is scalar)."""
    form = g.rnd.choice(("hi", "odd"))  # (2, 3) and (1, 3) of a 3-vector: lane 1 is the w lane
    half = selection(_rvalue(g, t.scalar, 3, depth), form, half_components(form, 3))
    return selection(half, g.rnd.choice(("xyzw", "s", "S")), (1,))


def swizzle_shape(g, t: Type, depth: int) -> Expr | None:
    """A node of type ``t`` of one of the shapes (module docstring), or None (no shape of ``t``)."""
    if t.width == 1 and g.rnd.random() < 0.5:
        return undefined_lane(g, t, depth)
    sources = [w for w in VECTORS if 2 * t.width == w or (w == 3 and t.width == 2)]
    if sources and g.rnd.random() < 0.75:
        w = 3 if 3 in sources and g.rnd.random() < 0.5 else max(sources)
        form = g.rnd.choice(HALVES)
        return selection(_rvalue(g, t.scalar, w, depth), form, half_components(form, w))
    w = g.rnd.choice(VECTORS)
    form, comps = _components(g.rnd, w, t.width)
    return selection(_rvalue(g, t.scalar, w, depth), form, comps)
