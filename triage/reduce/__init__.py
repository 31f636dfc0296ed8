"""The reducer: a disagreeing program reduced inside the IR until no smaller program shows the
same disagreement (:mod:`.engine`: the goal, the interestingness test, the fixpoint of the
passes), the passes' interface (:mod:`.base`) and the passes with their order
(:mod:`.passes`, ``PASSES``).
"""

from triage.reduce.base import Candidate, simplest
from triage.reduce.engine import Goal, Reducer, Reduction, reduce_program, why_not_minimal
from triage.reduce.passes import PASSES

__all__ = ["PASSES", "Candidate", "Goal", "Reducer", "Reduction", "reduce_program", "simplest", "why_not_minimal"]
