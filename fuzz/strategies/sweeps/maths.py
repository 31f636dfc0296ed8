"""The math area's corner sweep (lang.corners): for every function of :data:`lang.maths.FUNCTIONS`,
every type the capabilities allow (float; double with fp64; half with fp16; half_/fast_ float
only) and every width it takes, one statement, and at every vector width a second one calling the
scalar-argument overload where there is one (:attr:`lang.maths.MathFn.scalar_form`). The
function's operand tuples, every operand class (unary), every pair of classes (binary: 19 x 19, or
19 x the exponents) or every class of each operand (ternary), several representatives of each
class (least and largest subnormal, 0.5 and 2.5, 3 and a large odd integer, 2 and the type's MAX
...), the prescribed special values first, are packed into its statements' lanes
(:func:`fuzz.strategies.sweeps.base.place`): its scalar statement carries the special ones, its
2-lane statement the others, the wider ones share them; the sweep is handed out a pass at a time.
Programs hold ``policy.math_statements`` statements, as the random math programs (sixteen float16
math statements took rusticl 22.3 over the 60 s timeout to build).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import (
    BUILT_IN_SHAPES,
    EXP_REPRESENTATIVES,
    SHAPES,
    Sweep,
    bits_of,
    by_pass,
    float_representatives,
    lanes,
    place,
    sweep_program,
    value_order,
)
from lang.corners import EXP_CLASSES, FLOAT_CLASSES, math_types, math_widths
from lang.corners.classes import value_rank
from lang.ir import Op, Program, Store
from lang.maths import FUNCTIONS
from lang.policy import Policy
from lang.types import Type


@lru_cache(maxsize=None)
def math_operands(name: str, tname: str) -> tuple[list[tuple[int, ...]], int]:
    """One value list per input of a math function (equal lengths: tuple ``i`` is entry ``i`` of
    each): every class of each operand, every pair of classes of two, those of prescribed special
    values first; and how many those are (fuzz.strategies.sweeps.base.value_order)."""
    f = FUNCTIONS[name]
    floats = float_representatives(tname)
    rank = {v: value_rank(c) for c in FLOAT_CLASSES for v in floats[c]}
    first = tuple(floats[c][0] for c in FLOAT_CLASSES)
    if f.inputs == "u":  # nan's code: 0 and others (lang.corners.table.CODE_CLASSES)
        codes = {bits_of(v, f.operand_type("u", Type(tname)).scalar): value_rank("0" if v == 0 else "other")
                 for v in (0, 1, 0x155, -1)}
        values, special = value_order(((v,) for v in codes), (codes,))
        return [tuple(v for v, in values)], special
    if len(f.inputs) == 2:
        exps = {bits_of(v, "int"): value_rank(c) for c in EXP_CLASSES for v in EXP_REPRESENTATIVES[c]}
        ys, y_rank = (tuple(exps), exps) if f.inputs[1] == "i" else (first, rank)
        pairs, special = value_order(itertools.product(first, ys), (rank, y_rank))
        return [tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)], special
    every, special = value_order(((v,) for c in FLOAT_CLASSES for v in floats[c]), (rank,))
    rows = []  # each operand runs through every value, rotated apart; special values beside special ones
    for part in (every[:special], every[special:]):
        n = len(part)
        rows += [tuple(part[(i + 7 * k) % n][0] for k in range(len(f.inputs))) for i in range(n)]
    return [tuple(r[k] for r in rows) for k in range(len(f.inputs))], special


def _math_statement(name: str, tname: str, width: int, params: str, where: tuple):
    """One statement of ``name`` at ``tname``/``width`` calling the overload ``params`` (the
    declared letters or :attr:`lang.maths.MathFn.scalar_form`), its lanes where
    :func:`fuzz.strategies.sweeps.base.place` puts them among the function's operand tuples."""
    _, (lo, hi), first, work_items = where

    def build(s: Sweep) -> Store:
        f = FUNCTIONS[name]
        t = Type(tname, width)
        types = [f.operand_type(p, t) for p in params if p not in "GI"]
        args = tuple(s.load(at, lanes(values[lo:hi], first, width, work_items, at.width < width))
                     for at, values in zip(types, math_operands(name, tname)[0]))
        attrs = (("out", s.output(f.operand_type(f.out, t))),) if f.out else ()
        op = Op(name, args, f.result_type(t), attrs)
        return Store(s.output(op.type), op)
    return build


def _group(name: str, tname: str) -> list[tuple[int, object]]:
    """The statements of one function and type, tagged with their pass (fuzz.strategies.sweeps.base.place):
    one per width and overload, the two narrowest holding every operand tuple (its special values,
    then the others), the wider ones and the scalar-argument forms its shapes."""
    f = FUNCTIONS[name]
    widths = sorted(math_widths(name))
    shapes = [(w, f.params) for w in widths] + [(w, f.scalar_form) for w in widths if f.scalar_form and w > 1]
    columns, special = math_operands(name, tname)
    places = place(len(columns[0]), special, [w for w, _ in shapes], len(widths))
    return [(where[0], _math_statement(name, tname, w, params, where)) for (w, params), where in zip(shapes, places)]


def math_sweep(caps: Caps, policy: Policy) -> list[tuple[int, Program]]:
    """Every function's special values, then its other classes, then its shapes
    (fuzz.strategies.sweeps.base.by_pass), in programs of ``policy.math_statements``; the shapes
    are handed out after every other area's sweep (their pass is BUILT_IN_SHAPES)."""
    types = ["float"] + ["double"] * caps.fp64 + ["half"] * caps.fp16
    statements = [(BUILT_IN_SHAPES if p == SHAPES else p, s)
                  for tname in types for name in FUNCTIONS if tname in math_types(name) for p, s in _group(name, tname)]
    return [(k, sweep_program(c, policy.math_global_size, "math")) for k, c in by_pass(statements, policy.math_statements)]
