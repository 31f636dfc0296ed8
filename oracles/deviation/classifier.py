"""The deviation classifier: what a wrong lane's value *is*, and so which rule it breaks.

The judge (fuzz.judge) finds a lane wrong; this module explains it. The actual value is matched
against the recognisable wrong alternatives, most specific first (the order of
:data:`CLASSES`): for an image read, the read as if a denormal coordinate were 0, another array
layer's texel at the same coordinates, the border colour, another texel; then a NaN or a number
where the other was expected, another NaN's bits, the opposite signed zero, another rounding of
the exact result (before a flush: no integer result is a flushed value), a flushed denormal
(result or operand), the smallest normal where a denormal was expected, a missing channel's 0 or
1, the wrapped value where saturation was expected, an operand's value, another lane's expected
value, a type limit, a few ulps off, another work-item's expected value; else ``other``.

Where the value identifies the rule it breaks, the :class:`Deviation` names it (another layer's
texel breaks ``image.layer`` whichever rule the lane was judged under; a flushed denormal
coordinate breaks ``image.coordinate.denormal``, severity letter; a NEAREST read's value that no
texel reads as breaks the channel conversion's rule, :func:`oracles.deviation.images.deciding_rule`);
otherwise the lane's rule stays. A class that needs something the context does not hold (an out-parameter, shared
locations, a statement the oracle cannot evaluate again) is not tried. The classifier never
changes whether a lane is judged or accepted.

Usage: ``Classifier(program, stmt, buffer, expectation, actual_bits, inputs).classify(pos)``;
the classifier is lazy (nothing is computed until a lane is classified) and caches per statement
what every lane of it shares (the image's texel table).
"""

from __future__ import annotations

import numpy as np

from lang.ir import Program, Store
from oracles.deviation.context import CLASSES, MAX_ULPS, Context, Deviation
from oracles.deviation.images import FIRST, deciding_rule, missing_channel
from oracles.deviation.values import CHECKS, LATER
from oracles.expect import Expectation

__all__ = ["CLASSES", "MAX_ULPS", "ORDER", "Classifier", "Deviation", "classify"]

ORDER = (*FIRST, *CHECKS, missing_channel, *LATER)
"""Every check, most specific first; the first that recognises the value decides."""


class Classifier:
    """The deviations of the wrong lanes of one statement's output buffer (module docstring)."""

    def __init__(self, program: Program, stmt: Store, buffer: str, exp: Expectation, actual: np.ndarray,
                 inputs: dict[str, np.ndarray]):
        self.ctx = Context(program, stmt, buffer, exp, actual, inputs)

    def classify(self, pos: int) -> Deviation:
        """The deviation of the lane at memory position ``pos`` (a lane the judge found wrong)."""
        for check in ORDER:
            try:
                found = check(self.ctx, pos)
            except Exception as e:  # noqa: BLE001  an explanation must never cost a verdict
                return Deviation("other", f"unclassified: the {check.__name__} check failed ({type(e).__name__}: {e})")
            if found is not None:
                return deciding_rule(self.ctx, pos, found)
        return deciding_rule(self.ctx, pos, Deviation("other", "none of the recognisable wrong values"))


def classify(program: Program, stmt: Store, buffer: str, exp: Expectation, actual: np.ndarray,
             inputs: dict[str, np.ndarray], pos: int) -> Deviation:
    """One lane's deviation (a :class:`Classifier` for one lane)."""
    return Classifier(program, stmt, buffer, exp, actual, inputs).classify(pos)


_declared = [c for c in CLASSES if c != "other"]
if _declared != [check.__name__.replace("_", "-") for check in ORDER]:  # one check per class, in order
    raise ImportError(f"deviation classes {_declared} and checks {[c.__name__ for c in ORDER]} differ")
