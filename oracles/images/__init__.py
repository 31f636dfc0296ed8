"""The oracle of image reads (area ``images``): what a read returns (:func:`expect_read`,
:mod:`oracles.images.reads`), from the table of every texel's value (:func:`texel_table`,
:mod:`oracles.images.texels`) at the coordinates the spec's addressing selects
(:mod:`oracles.images.addressing`, which triage's image reduction computes with too).
"""

from oracles.images.addressing import DELTA, FLOAT_EXACT, address, array_layer, axis_candidates, int_floor
from oracles.images.reads import (
    RULE_COORDINATE_DENORMAL,
    RULE_LAYER,
    RULE_LINEAR_TOLERANCE,
    RULE_NEAREST_TOLERANCE,
    expect_read,
)
from oracles.images.texels import RULE_BORDER, RULE_TEXEL, Table, may_flush, norm_interval, texel_table

__all__ = [
    "DELTA", "FLOAT_EXACT", "RULE_BORDER", "RULE_COORDINATE_DENORMAL", "RULE_LAYER", "RULE_LINEAR_TOLERANCE",
    "RULE_NEAREST_TOLERANCE", "RULE_TEXEL", "Table", "address", "array_layer", "axis_candidates", "expect_read",
    "int_floor", "may_flush", "norm_interval", "texel_table",
]
