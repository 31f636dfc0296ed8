"""The reducer's passes, one module per pass or per small family of passes, and their order
(:data:`PASSES`, the one place it is written; triage.reduce.engine runs them in this order until
none changes the program; cheaper candidates first: fewer statements and work-items):

0. ``alone`` (:mod:`.alone`) first of all: the failing statement alone on its failing work-item,
   narrowed to its failing lane where it narrows (one build: most buckets are one built-in on
   one operand).
1. shaped programs (area ``shapes``): :mod:`.shapes` (``twin``: the straight-line twin,
   kept when it shows the disagreement; ``shape_parts``; ``work_group``). A reduction that ends on
   a shaped program is *wrong code* (triage.reduce.Reduction.blame): its twin does not show it.
2. ``work_items`` (:mod:`.work_items`): keep only the failing work-item, its inputs written as
   explicit values (:class:`lang.ir.Fill` ``values``), else the fewest first work-items that show
   it; not for programs with shared (atomic) locations, whose histories need their own passes
   (:mod:`.atomics`: ``atomic_statements``, ``work_groups``, ``locations``, run after ``statements``).
   Before ``statements``: one work-item's candidates are the cheapest to judge.
3. ``defined`` (:mod:`.defined`), once the program is one work-item (its check of every lane is
   cheap there): a statement with an operation whose result the
   specification leaves undefined or implementation-defined on some lane is removed, or else the
   operation is put in its defined form (``convert_T_sat`` with the same rounding for an
   out-of-range conversion without ``_sat``, OpenCL C 3.0.19 §6.4.3.3); a reduction that still holds
   one could not show the disagreement without it (triage.reduce.Reduction.undefined: severity
   ``letter``).
4. ``statements`` (:mod:`.statements`): keep the statement the disagreement is in alone, else with
   one other, else halve the body (delta debugging), then drop the others one at a time.
5. ``subexpressions`` (:mod:`.subexpressions`): replace an operation below the statement's root by
   a literal, or else an input buffer, holding the value the oracle computes for it (only where
   that value is certain: one allowed bit pattern on every lane), outermost first.
6. ``culprit`` (:mod:`.culprit`): an operation below the root of the one failing statement that the
   driver gets wrong on its own becomes the statement, and the goal moves to it (the faulty
   operation, not the outer one: a nested ``convert_long_sat`` of NaN under
   ``as_double(hadd(...))``), deepest first; the bug is then keyed on it (triage.session).
7. ``narrow`` (:mod:`.narrow`): a statement of lane-wise operations over ``n``-vectors becomes the
   scalar statement of the failing lane, unless an operator of it would then be promoted: a scalar
   char or short operand of + - * / % & | ^ << >> ~ is computed in int (C99 §6.3.1.1, OpenCL C 3.0
   §6.4.6, §6.5.10) while a vector lane is not, so ``short4 << short4`` (count masked by 15) has no
   scalar form of the same meaning (``short << short`` masks by 31 and is an int).
8. ``values`` (:mod:`.values`): each input or literal lane becomes the simplest value of its input
   class (:mod:`oracles.classes`: 1.0 for an integral float, -1 for a negative integer, ...).
9. ``requirements`` (:mod:`.requirements`): fp64 or fp16 is no longer required once no type needs
   it.

Images programs also go through :mod:`.images` (``image_size``, ``sampler``, ``format``,
``texels``, before ``values``).
"""

from __future__ import annotations

from triage.reduce.base import Pass
from triage.reduce.passes.alone import alone_pass
from triage.reduce.passes.atomics import atomic_statements_pass, locations_pass, work_groups_pass
from triage.reduce.passes.culprit import culprit_pass
from triage.reduce.passes.defined import defined_pass
from triage.reduce.passes.images import format_pass, image_size_pass, sampler_pass, texels_pass
from triage.reduce.passes.narrow import narrow_pass
from triage.reduce.passes.requirements import requirements_pass
from triage.reduce.passes.shapes import shape_parts_pass, twin_pass, work_group_pass
from triage.reduce.passes.statements import statements_pass
from triage.reduce.passes.subexpressions import subexpressions_pass
from triage.reduce.passes.values import values_pass
from triage.reduce.passes.work_items import work_items_pass

__all__ = ["PASSES"]

PASSES: tuple[tuple[str, Pass], ...] = (
    ("alone", alone_pass),
    ("twin", twin_pass),
    ("shape_parts", shape_parts_pass),
    ("work_group", work_group_pass),
    ("work_items", work_items_pass),
    ("defined", defined_pass),
    ("statements", statements_pass),
    ("atomic_statements", atomic_statements_pass),
    ("work_groups", work_groups_pass),
    ("locations", locations_pass),
    ("subexpressions", subexpressions_pass),
    ("culprit", culprit_pass),
    ("narrow", narrow_pass),
    ("image_size", image_size_pass),
    ("sampler", sampler_pass),
    ("format", format_pass),
    ("texels", texels_pass),
    ("values", values_pass),
    ("requirements", requirements_pass),
)
"""Every pass with its name, in the order the engine runs them (the name counts the candidates
kept, triage.reduce.Reduction.passes)."""
