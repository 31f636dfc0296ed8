"""The deviation classifier: what a wrong lane's value *is*, and so which rule it breaks
(:class:`Classifier`; :mod:`oracles.deviation.classifier` says how). The checks live by what they
compare: image reads (:mod:`oracles.deviation.images`) and values (:mod:`oracles.deviation.values`),
on the statement's context (:mod:`oracles.deviation.context`).
"""

from oracles.deviation.classifier import CLASSES, MAX_ULPS, ORDER, Classifier, Deviation, classify

__all__ = ["CLASSES", "MAX_ULPS", "ORDER", "Classifier", "Deviation", "classify"]
