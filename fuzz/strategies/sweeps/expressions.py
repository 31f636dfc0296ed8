"""The expressions area's corner sweep (lang.corners): for every integer built-in of Table 13 with
every operand type and width (and the scalar-bound forms of min/max/clamp), one statement whose
lanes run through the product of the operand classes (0, 1, -1, MAX, MIN, small and large of each
sign), beside operands of every magnitude for the products
(:func:`fuzz.strategies.values.mixed_magnitudes`) so that in-range negative products and
overflowing ones both occur; mul24/mad24 operands stay within 24 bits and clamp's bounds are
ordered lane by lane (defined by construction); the relational built-ins; then the operators and
vector operations (:mod:`fuzz.strategies.sweeps.operators`). A statement using ``ctz`` requires
OpenCL C 2.0, as the random programs do.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import (
    Sweep,
    bits_of,
    chunks,
    float_representatives,
    int_representatives,
    sweep_program,
)
from fuzz.strategies.sweeps.operators import GLOBAL_SIZE as OPERATOR_GLOBAL_SIZE
from fuzz.strategies.sweeps.operators import operator_statements, types_of, undefined_lane_statements
from fuzz.strategies.values import mixed_magnitudes
from lang.corners import FLOAT_CLASSES, RESULTS, integer_param_types, integer_types, result_type
from lang.ir import Op, Program, Store
from lang.ops import INTEGER_BUILTINS, RELATIONAL_BUILTINS
from lang.policy import Policy
from lang.types import VECTOR_WIDTHS, Type, scalar, truth_type

INTEGER_GLOBAL_SIZE = 1024  # work-items of an integer sweep program: 9^3 operand triples fit one lane each


@lru_cache(maxsize=None)
def integer_operands(name: str, tname: str) -> list[tuple[int, ...]]:
    """One value list (numbers) per operand of an integer built-in: the product of the operand
    classes (first representatives), every representative of each class, and for the products
    operands of mixed magnitudes; clamp's bounds ordered in every lane."""
    ptypes = integer_param_types(name, tname)
    limited = name in ("mul24", "mad24")
    reps = [int_representatives(pt, limited and k < 2) for k, pt in enumerate(ptypes)]
    combos = list(itertools.product(*[[r[0] for r in rep.values()] for rep in reps]))
    longest = max(len([v for r in rep.values() for v in r]) for rep in reps)
    for i in range(longest):  # every representative of every class in each position
        combos.append(tuple((vals := [v for r in rep.values() for v in r])[i % len(vals)] for rep in reps))
    if name in ("mad_sat", "mul_hi", "mad_hi"):
        s = scalar(tname)
        mixed = [v - (1 << s.bits) if s.signed and v >> (s.bits - 1) else v for v in mixed_magnitudes(tname)]
        for i, a in enumerate(mixed):
            for b in (mixed[-1 - i], mixed[(i + 3) % len(mixed)], mixed[(i * 7 + 1) % len(mixed)]):
                combos.append((a, b, mixed[i // 2]) if len(ptypes) == 3 else (a, b))
    if name in RESULTS:  # a sum one below a limit (rhadd's x + y + 1 reaching MAX)
        s = scalar(tname)
        combos += [(s.max - 1, 0, 0)[:len(ptypes)], (s.min + 1, -1 if s.signed else 0, 0)[:len(ptypes)]]
    if name == "clamp":
        combos = [(x, min(lo, hi), max(lo, hi)) for x, lo, hi in combos]
    return [tuple(c[k] for c in combos) for k in range(len(ptypes))]


def _integer_statement(name: str, tname: str, width: int, scalar_form: bool):
    def build(s: Sweep) -> Store:
        values = integer_operands(name, tname)
        args = []
        for k, (pt, vals) in enumerate(zip(integer_param_types(name, tname), values)):
            t = Type(pt, 1 if scalar_form and k > 0 else width)
            args.append(s.load(t, tuple(bits_of(v, pt) for v in vals)))
        op = Op(name, tuple(args), Type(result_type(name, tname), width))
        return Store(s.output(op.type), op)
    return build


def _relational_statement(name: str, arity: int, tname: str, width: int):
    """One statement of a relational built-in (§6.15.6) whose lanes run through every class of its
    operand, or every pair of classes of its two (the math sweep's representatives), typed as a
    relational result is (lang.types.truth_type)."""
    def build(s: Sweep) -> Store:
        t = Type(tname, width)
        floats = float_representatives(tname)
        if arity == 2:
            first = tuple(floats[c][0] for c in FLOAT_CLASSES)
            pairs = list(itertools.product(first, first))
            columns = [tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)]
        else:
            columns = [tuple(v for c in FLOAT_CLASSES for v in floats[c])]
        result = truth_type(t)
        op = Op(name, tuple(s.load(t, values) for values in columns), result)
        return Store(s.output(result), op)
    return build


def integer_sweep(caps: Caps, policy: Policy) -> list[Program]:
    """The expressions sweep: the integer built-ins of Table 13 and the relational built-ins."""
    statements = []
    for b in INTEGER_BUILTINS:
        if b.since != "1.0" and "cl2.0" not in caps.versions:
            continue
        for tname in integer_types(b.name):
            if not caps.int64 and "int64" in {scalar(tname).needs, scalar(result_type(b.name, tname)).needs}:
                continue
            for w in VECTOR_WIDTHS:
                statements.append(_integer_statement(b.name, tname, w, False))
                if b.name in ("min", "max", "clamp") and w > 1:
                    statements.append(_integer_statement(b.name, tname, w, True))
    floats = ["float"] + ["double"] * caps.fp64 + ["half"] * caps.fp16
    statements += [_relational_statement(name, arity, t, w) for name, arity, _ in RELATIONAL_BUILTINS
                   for t in floats for w in VECTOR_WIDTHS]
    return ([sweep_program(c, INTEGER_GLOBAL_SIZE, "expressions") for c in chunks(statements, policy.statements)]
            + [sweep_program(c, OPERATOR_GLOBAL_SIZE, "expressions")
               for c in chunks(operator_statements(caps), policy.statements)]
            + [sweep_program(undefined_lane_statements(t), OPERATOR_GLOBAL_SIZE, "expressions") for t in types_of(caps)])
