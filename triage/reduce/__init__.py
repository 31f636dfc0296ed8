"""The reducer: a disagreeing program reduced inside the IR until no smaller program shows the
same disagreement (:mod:`.engine`: the goal, the interestingness test, the fixpoint of the
passes), the passes' interface (:mod:`.base`) and the passes with their order
(:mod:`.passes`, ``PASSES``); :func:`sentence` says what of a reduced program the spec leaves
undefined or implementation-defined (the ``defined`` pass).
"""

from triage.reduce.base import Candidate, simplest
from triage.reduce.engine import STOPPED, Goal, Reducer, Reduction, composite_of, reduce_program, why_not_minimal
from triage.reduce.passes import PASSES
from triage.reduce.passes.defined import sentence

__all__ = ["PASSES", "STOPPED", "Candidate", "Goal", "Reducer", "Reduction", "composite_of", "reduce_program", "sentence",
           "simplest", "why_not_minimal"]
