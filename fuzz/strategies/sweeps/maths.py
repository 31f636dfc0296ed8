"""The math area's corner sweep (lang.corners): for every function of :data:`lang.maths.FUNCTIONS`,
every type the capabilities allow (float; double with fp64; half with fp16; half_/fast_ float
only) and every width it takes, one statement whose lanes run through every operand class (unary),
every pair of classes (binary: 19 x 19 lanes, or 19 x the exponents), or every class of each
operand (ternary), several representatives of each class (least and largest subnormal, 0.5 and
2.5, 3 and a large odd integer, 2 and the type's MAX ...); at every vector width a second
statement calls the scalar-argument overload where there is one
(:attr:`lang.maths.MathFn.scalar_form`), its scalar operand taking the same list of values
work-item by work-item. Programs hold ``policy.math_statements`` statements, as the random math
programs (a 64-statement math program on 1,024 work-items took rusticl 22.3 over the 60 s
timeout, and each timeout is isolated by halving).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import (
    EXP_REPRESENTATIVES,
    Sweep,
    bits_of,
    chunks,
    float_representatives,
    sweep_program,
)
from lang.corners import EXP_CLASSES, FLOAT_CLASSES, math_types, math_widths
from lang.ir import Op, Program, Store
from lang.maths import FUNCTIONS
from lang.policy import Policy
from lang.types import Type


@lru_cache(maxsize=None)
def math_operands(name: str, tname: str) -> list[tuple[int, ...]]:
    """One value list per input of a math function (equal lengths, lane ``i`` takes entry
    ``i % n`` of each): every class of each operand, every pair of classes of two."""
    f = FUNCTIONS[name]
    floats = float_representatives(tname)
    every = tuple(v for c in FLOAT_CLASSES for v in floats[c])
    first = tuple(floats[c][0] for c in FLOAT_CLASSES)
    exps = tuple(bits_of(v, "int") for c in EXP_CLASSES for v in EXP_REPRESENTATIVES[c])
    codes = tuple(bits_of(v, f.operand_type("u", Type(tname)).scalar) for v in (0, 1, 0x155, -1))
    if f.inputs == "g":
        return [every]
    if f.inputs == "u":
        return [codes]
    if len(f.inputs) == 2:
        ys = exps if f.inputs[1] == "i" else first
        pairs = list(itertools.product(first, ys))
        return [tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)]
    n = len(every)
    return [tuple(every[(i + 7 * k) % n] for i in range(n)) for k in range(len(f.inputs))]


def _math_statement(name: str, tname: str, width: int, params: str):
    """One statement of ``name`` at ``tname``/``width`` calling the overload ``params`` (the
    declared letters or :attr:`lang.maths.MathFn.scalar_form`)."""
    def build(s: Sweep) -> Store:
        f = FUNCTIONS[name]
        t = Type(tname, width)
        inputs = [p for p in params if p not in "GI"]
        args = tuple(s.load(f.operand_type(p, t), values) for p, values in zip(inputs, math_operands(name, tname)))
        attrs = (("out", s.output(f.operand_type(f.out, t))),) if f.out else ()
        op = Op(name, args, f.result_type(t), attrs)
        return Store(s.output(op.type), op)
    return build


def math_sweep(caps: Caps, policy: Policy) -> list[Program]:
    types = ["float"] + ["double"] * caps.fp64 + ["half"] * caps.fp16
    out = []
    for tname in types:
        statements = [_math_statement(name, tname, w, params) for name in FUNCTIONS if tname in math_types(name)
                      for w in math_widths(name) for params in FUNCTIONS[name].forms(Type(tname, w))]
        out += [sweep_program(c, policy.math_global_size, "math") for c in chunks(statements, policy.math_statements)]
    return out
