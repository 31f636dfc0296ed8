"""The areas a campaign draws from: one Hypothesis strategy of whole programs each.

At import it checks that some strategy builds every operation declared in :data:`lang.ops.OPS`
(a statement builder, an expression-tree node, or an area's own operations), so a declared
operation no strategy draws fails here, not in a campaign that never generates it.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.strategies import atomics, conversions, expressions, flow, images, maths, shapes, spirv_only, trees
from fuzz.strategies.conversions import Caps
from lang.declared import check_reader
from lang.flow import FlowProgram
from lang.ir import Program
from lang.ops import OPS
from lang.policy import Policy

AREAS = {"conversions": conversions.conversion_programs, "spirv": spirv_only.spirv_programs,
         "expressions": expressions.expression_programs, "atomics": atomics.atomic_programs,
         "images": images.image_programs, "math": maths.math_programs, "shapes": shapes.shape_programs,
         "flow": lambda caps, policy: flow.flow_programs(floats=True, int64=caps.int64, fp64=caps.fp64,
                                                         cr=caps.cr_divide_sqrt, launches=caps.launches)}
"""What a campaign can generate: each program is drawn from one of the chosen areas (``flow``:
lang.flow programs, not lang.ir ones)."""

DEFAULT_AREAS = tuple(a for a in AREAS if a != "flow")
"""The areas of a campaign that names none (``flow`` is chosen by name: docs/flow.md)."""

STATEMENT_KINDS = frozenset({"assign", "expression"})  # statement forms that are not operations

check_reader("the strategies", (set(conversions.BUILDERS) | set(expressions.STATEMENTS) | set(spirv_only.SPIRV_BUILDERS)
                                | set(trees.EXPRESSIONS) | atomics.OPERATIONS | images.OPERATIONS
                                | maths.OPERATIONS) - STATEMENT_KINDS, OPS)


def area_strategy(areas: tuple[str, ...], caps: Caps, policy: Policy) -> st.SearchStrategy[Program | FlowProgram]:
    """Programs drawn from one of ``areas`` (names of :data:`AREAS`)."""
    return st.one_of(*[AREAS[a](caps, policy) for a in areas])
