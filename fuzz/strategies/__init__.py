"""Program generation: one Hypothesis strategy of whole programs per area (:data:`AREAS`, each
area's strategy in its module: conversions, expressions, maths, atomics, images, spirv_only,
shapes, flow; a campaign that names none draws from :data:`DEFAULT_AREAS`), independent draws from
one (:class:`Draws`, :func:`sample`), the capabilities of a campaign's targets they draw for
(:class:`Caps`), and each area's corner sweep, the programs a campaign runs first
(:mod:`fuzz.strategies.sweeps`).
"""

from fuzz.strategies.areas import AREAS, DEFAULT_AREAS, area_strategy
from fuzz.strategies.atomics import atomic_programs
from fuzz.strategies.conversions import Caps, conversion_programs
from fuzz.strategies.draws import Draws, sample
from fuzz.strategies.expressions import expression_programs
from fuzz.strategies.images import image_programs
from fuzz.strategies.maths import math_programs
from fuzz.strategies.shapes import shape_programs
from fuzz.strategies.spirv_only import spirv_programs
from fuzz.strategies.sweeps import sweep_key, sweep_key_of, sweep_plan, sweep_programs

__all__ = ["AREAS", "Caps", "DEFAULT_AREAS", "Draws", "area_strategy", "atomic_programs", "conversion_programs", "expression_programs",
           "image_programs", "math_programs", "sample", "shape_programs", "spirv_programs", "sweep_key",
           "sweep_key_of", "sweep_plan", "sweep_programs"]
