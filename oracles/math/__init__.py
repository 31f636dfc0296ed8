"""The oracle of floating-point arithmetic and the math, common and geometric built-ins (area
``math``): :func:`outputs` gives a math operation's expectations (:mod:`oracles.math.engine` says
what the spec allows and how), :func:`flushable` and :func:`relaxed_judged` what the float
environment changes; the filters in front of mpmath (:func:`filtered`, :func:`geometric_filtered`)
and the tables the engine reads (bounds and rules, exact functions, prescribed values) are public
for the tests and the benchmarks.
"""

from oracles.math.bounds import bound_for, profile_of, rule_for
from oracles.math.engine import outputs
from oracles.math.exact import EXACT, cr
from oracles.math.fast import Filtered, filtered
from oracles.math.fast_exact import DECIDED
from oracles.math.fast_geometric import geometric_filtered
from oracles.math.lanes import Lane, pack, unjudged
from oracles.math.lanewise import flushable, relaxed_judged
from oracles.math.specials import prescribed, signaling

__all__ = [
    "DECIDED", "EXACT", "Filtered", "Lane", "bound_for", "cr", "filtered", "flushable", "geometric_filtered",
    "outputs", "pack", "prescribed", "profile_of", "relaxed_judged", "rule_for", "signaling", "unjudged",
]
