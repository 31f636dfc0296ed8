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
    UNDEFINED_LANES,
    Sweep,
    bits_of,
    by_pass,
    float_representatives,
    int_representatives,
    lanes,
    place,
    sweep_program,
    value_order,
)
from fuzz.strategies.sweeps.operators import GLOBAL_SIZE as OPERATOR_GLOBAL_SIZE
from fuzz.strategies.sweeps.operators import operator_statements, types_of, undefined_lane_statements
from fuzz.strategies.values import mixed_magnitudes
from lang.corners import FLOAT_CLASSES, RESULTS, integer_param_types, integer_types, result_type
from lang.corners.classes import value_rank
from lang.ir import Op, Program, Store
from lang.ops import INTEGER_BUILTINS, RELATIONAL_BUILTINS
from lang.policy import Policy
from lang.types import VECTOR_WIDTHS, Type, scalar, truth_type

INTEGER_GLOBAL_SIZE = 1024  # work-items of an integer sweep program at most (its statements need far fewer)


@lru_cache(maxsize=None)
def integer_operands(name: str, tname: str) -> tuple[list[tuple[int, ...]], int]:
    """One value list (numbers) per operand of an integer built-in: the product of the operand
    classes (first representatives, those of special values first), every representative of each
    class, and for the products operands of mixed magnitudes; clamp's bounds ordered in every lane;
    and how many tuples hold only special values (fuzz.strategies.sweeps.base.value_order)."""
    ptypes = integer_param_types(name, tname)
    limited = name in ("mul24", "mad24")
    reps = [int_representatives(pt, limited and k < 2) for k, pt in enumerate(ptypes)]
    ranks = [{v: value_rank(c) for c, vals in rep.items() for v in vals} for rep in reps]
    combos, special = value_order(itertools.product(*[[r[0] for r in rep.values()] for rep in reps]), ranks)
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
    return [tuple(c[k] for c in combos) for k in range(len(ptypes))], special


def _integer_statement(name: str, tname: str, width: int, scalar_form: bool, where: tuple):
    _, (lo, hi), first, work_items = where

    def build(s: Sweep) -> Store:
        args = []
        for k, (pt, vals) in enumerate(zip(integer_param_types(name, tname), integer_operands(name, tname)[0])):
            t = Type(pt, 1 if scalar_form and k > 0 else width)
            bits = tuple(bits_of(v, pt) for v in vals[lo:hi])
            args.append(s.load(t, lanes(bits, first, width, work_items, t.width < width)))
        op = Op(name, tuple(args), Type(result_type(name, tname), width))
        return Store(s.output(op.type), op)
    return build


def _integer_group(name: str, tname: str) -> list[tuple[int, object]]:
    """The statements of one integer built-in and type, tagged with their pass
    (fuzz.strategies.sweeps.base.place): the two narrowest hold every operand tuple, the wider ones
    and the scalar-bound forms of min/max/clamp are its shapes."""
    shapes = [(w, False) for w in VECTOR_WIDTHS] + [(w, True) for w in VECTOR_WIDTHS[1:] if name in ("min", "max", "clamp")]
    columns, special = integer_operands(name, tname)
    places = place(len(columns[0]), special, [w for w, _ in shapes], len(VECTOR_WIDTHS))
    return [(where[0], _integer_statement(name, tname, w, scalar, where)) for (w, scalar), where in zip(shapes, places)]


@lru_cache(maxsize=None)
def relational_operands(name: str, tname: str) -> tuple[list[tuple[int, ...]], int]:
    """Every class of a unary relational built-in's operand, or every pair of classes of a binary
    one's two (the math sweep's representatives), the special values first, and how many those are."""
    floats = float_representatives(tname)
    if dict((n, a) for n, a, _ in RELATIONAL_BUILTINS)[name] == 2:
        rank = {floats[c][0]: value_rank(c) for c in FLOAT_CLASSES}
        pairs, special = value_order(itertools.product(rank, rank), (rank, rank))
        return [tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)], special
    rank = {v: value_rank(c) for c in FLOAT_CLASSES for v in floats[c]}
    values, special = value_order(((v,) for c in FLOAT_CLASSES for v in floats[c]), (rank,))
    return [tuple(v for v, in values)], special


def _relational_statement(name: str, tname: str, width: int, where: tuple):
    """One statement of a relational built-in (§6.15.6), typed as a relational result is
    (lang.types.truth_type), its lanes where fuzz.strategies.sweeps.base.place puts them."""
    _, (lo, hi), first, work_items = where

    def build(s: Sweep) -> Store:
        t = Type(tname, width)
        result = truth_type(t)
        columns = relational_operands(name, tname)[0]
        op = Op(name, tuple(s.load(t, lanes(values[lo:hi], first, width, work_items)) for values in columns), result)
        return Store(s.output(result), op)
    return build


def _relational_group(name: str, tname: str) -> list[tuple[int, object]]:
    columns, special = relational_operands(name, tname)
    places = place(len(columns[0]), special, list(VECTOR_WIDTHS), len(VECTOR_WIDTHS))
    return [(where[0], _relational_statement(name, tname, w, where)) for w, where in zip(VECTOR_WIDTHS, places)]


def integer_sweep(caps: Caps, policy: Policy) -> list[tuple[int, Program]]:
    """The expressions sweep: the integer built-ins of Table 13, the relational built-ins and the
    operators, a pass at a time (their special values, their other classes, their shapes:
    fuzz.strategies.sweeps.base.by_pass), then the undefined-lane reads apart, handed out last
    (their pass is UNDEFINED_LANES: they crash compilers)."""
    statements = []
    for b in INTEGER_BUILTINS:
        if b.since != "1.0" and "cl2.0" not in caps.versions:
            continue
        for tname in integer_types(b.name):
            if not caps.int64 and "int64" in {scalar(tname).needs, scalar(result_type(b.name, tname)).needs}:
                continue
            statements += _integer_group(b.name, tname)
    floats = ["float"] + ["double"] * caps.fp64 + ["half"] * caps.fp16
    statements += [s for name, _, _ in RELATIONAL_BUILTINS for t in floats for s in _relational_group(name, t)]
    statements += operator_statements(caps)
    return ([(k, sweep_program(c, INTEGER_GLOBAL_SIZE, "expressions")) for k, c in by_pass(statements, policy.statements)]
            + [(UNDEFINED_LANES, sweep_program(undefined_lane_statements(t), OPERATOR_GLOBAL_SIZE, "expressions"))
               for t in types_of(caps)])
