"""The corner sweeps: each area's first programs in a campaign, covering its rows of the corner
table (:mod:`lang.corners`) systematically before and beside the random draws.

``sweep_programs(area, caps, policy)`` is a deterministic list (no Hypothesis, no seed): the same
capabilities and policy give the same programs, byte for byte, so a campaign that stores them
and is resumed finds them already run (:func:`sweep_key` names a finished sweep). Every operand
is an input buffer whose lanes are listed exactly (``Fill.values``: lane ``i`` takes value
``i % n``), so one statement tests many corners on many work-items:

* ``math``: for every function of :data:`lang.maths.FUNCTIONS`, every type the capabilities
  allow (float; double with fp64; half with fp16; half_/fast_ float only) and every width it
  takes, one statement whose lanes run through every operand class (unary), every pair of
  classes (binary: 19 x 19 lanes, or 19 x the exponents), or every class of each operand
  (ternary), several representatives of each class (least and largest subnormal, 0.5 and 2.5,
  3 and a large odd integer, 2 and the type's MAX ...); at every vector width a second statement
  calls the scalar-argument overload where there is one (:attr:`lang.maths.MathFn.scalar_form`),
  its scalar operand taking the same list of values work-item by work-item;
* ``expressions``: for every integer built-in of Table 13 with every operand type and width
  (and the scalar-bound forms of min/max/clamp), one statement whose lanes run through the
  product of the operand classes (0, 1, -1, MAX, MIN, small and large of each sign), beside
  operands of every magnitude for the products (:func:`fuzz.strategies.values.mixed_magnitudes`)
  so that in-range negative products and overflowing ones both occur; mul24/mad24 operands stay
  within 24 bits and clamp's bounds are ordered lane by lane (defined by construction); the
  relational built-ins; then the operators and vector operations (:mod:`fuzz.strategies.operator_sweep`);
* ``conversions``: every explicit conversion with corners (:mod:`lang.corners.conversions`: float
  to integer, integer to a narrower significand, integer to a narrower integer, floating to
  another floating type), with and without _sat (integer destinations only, §6.4.3.3) and with
  each rounding mode, of operands in every class (:func:`conversion_sources`; long and ulong at
  and next to the float and double rounding midpoints above 2^53,
  :func:`fuzz.strategies.values.midpoint_integers`; a floating operand at and next to the ties,
  overflow and underflow edges of each narrower floating type,
  :func:`float_conversion_representatives`), and long/ulong to float through double; then
  arithmetic, casts and as_ (:mod:`fuzz.strategies.operator_sweep`).

Programs hold ``policy.statements`` statements each (math: ``policy.math_statements``, as the random
math programs: a 64-statement math program on 1,024 work-items took rusticl 22.3 over the 60 s
timeout, and each timeout is isolated by halving); a statement over double requires fp64
(``requires``), one using ``ctz`` OpenCL C 2.0, as the random programs do.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from functools import lru_cache

import numpy as np

from fuzz.strategies.atomic_sweep import atomic_sweep
from fuzz.strategies.conversions import Caps
from fuzz.strategies.image_sweep import image_sweep
from fuzz.strategies.operator_sweep import GLOBAL_SIZE as OPERATOR_GLOBAL_SIZE
from fuzz.strategies.operator_sweep import (
    conversion_operator_statements,
    operator_statements,
    types_of,
    undefined_lane_statements,
)
from fuzz.strategies.spirv_sweep import spirv_sweep
from fuzz.strategies.sweep_base import (
    EXP_REPRESENTATIVES,
    Sweep,
    bits_of,
    chunks,
    float_representatives,
    int_representatives,
    sweep_program,
)
from fuzz.strategies.values import midpoint_integers, mixed_magnitudes
from lang.corners import conversions as conversion_corners
from lang.corners import (
    EXP_CLASSES,
    FLOAT_CLASSES,
    INTS,
    RESULTS,
    integer_param_types,
    integer_types,
    math_types,
    math_widths,
    result_type,
)
from lang.ir import Load, Op, Program, Store
from lang.maths import FUNCTIONS
from lang.ops import INTEGER_BUILTINS, RELATIONAL_BUILTINS, ROUNDINGS
from lang.policy import Policy
from lang.types import VECTOR_WIDTHS, Type, scalar, truth_type

INTEGER_GLOBAL_SIZE = 1024  # work-items of an integer sweep program: 9^3 operand triples fit one lane each

# ---- math --------------------------------------------------------------------------------------


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


# ---- integer built-ins (area expressions) ---------------------------------------------------------


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


# ---- conversions: 64-bit integers at float and double rounding midpoints -------------------------------


def _float_magnitudes(src: str, dst: str) -> dict[str, list[float]]:
    """Magnitudes of ``src`` in each kind (:data:`lang.corners.conversions.NARROWING_KINDS` or
    ``WIDENING_KINDS`` by the pair) against the floating type ``dst``, built from the two formats'
    parameters: ties are halfway between two ``dst`` numbers, their neighbours one ``src`` ulp off
    (``nextafter`` in ``src``), the overflow edges MAX and MAX + half its ulp."""
    s, d = scalar(src), scalar(dst)
    sinfo, dinfo = np.finfo(s.dtype), np.finfo(d.dtype)
    if s.bits < d.bits:
        return {"0": [0.0], "inf": [math.inf], "sub": [float(sinfo.smallest_subnormal), float(sinfo.tiny - sinfo.smallest_subnormal)],
                "normal": [1.0, float(sinfo.tiny), float(sinfo.max)]}

    def step(v: float, toward: float) -> float:  # the next number of src
        return float(np.nextafter(s.dtype.type(v), s.dtype.type(toward)))

    ulp1, least, tiny, top = 2.0 ** (1 - d.mant_bits), float(dinfo.smallest_subnormal), float(dinfo.tiny), float(dinfo.max)
    top_half = 2.0 ** (dinfo.maxexp - d.mant_bits - 1)  # half the ulp of MAX
    tie, sub_tie = 1 + ulp1 / 2, 1.5 * least
    return {
        "0": [0.0], "inf": [math.inf],
        "exact": [1.0, 1 + ulp1, top, tiny], "tie": [tie, 1 + 1.5 * ulp1, top - top_half],
        "near-tie": [step(tie, 2), step(tie, 0)], "other": [1 + ulp1 / 4, 1 + 0.75 * ulp1],
        "sub-exact": [least, 3 * least, tiny - least], "sub-tie": [sub_tie, 2.5 * least, tiny - least / 2],
        "sub-near-tie": [step(sub_tie, 1), step(sub_tie, 0)], "sub-other": [1.25 * least, tiny - least / 4],
        "below-half-least": [least / 4, step(least / 2, 0), float(sinfo.smallest_subnormal)],
        "half-least": [least / 2], "above-half-least": [0.75 * least, step(least, 0)],
        "above-max": [step(top, math.inf), top + top_half / 2], "max-tie": [top + top_half],
        "overflow": [step(top + top_half, math.inf), top + 2 * top_half, float(sinfo.max)],
    }


@lru_cache(maxsize=None)
def float_conversion_representatives(src: str, dst: str) -> dict[str, tuple[int, ...]]:
    """Bit patterns of ``src`` in each class of :func:`lang.corners.conversions.classes` against
    the floating type ``dst`` (both signs, NaNs quiet and signalling); each is checked to lie in
    its class."""
    s = scalar(src)
    out = {"nan": float_representatives(src)["nan"]}
    for kind, magnitudes in _float_magnitudes(src, dst).items():
        for sign in "+-":
            values = np.array([m if sign == "+" else -m for m in magnitudes], np.float64)
            bits = values.astype(s.dtype).view(s.bits_dtype)
            assert np.array_equal(bits.view(s.dtype).astype(np.float64), values), (src, dst, kind)  # exact in src
            assert all(conversion_corners.value_classes(bits[i:i + 1].view(s.dtype), src, dst) == {sign + kind}
                       for i in range(len(bits))), (src, dst, kind)
            out[sign + kind] = tuple(int(b) for b in bits)
    return out


@lru_cache(maxsize=None)
def conversion_sources(src: str) -> tuple[int, ...]:
    """Bit patterns of ``src`` in every class of :mod:`lang.corners.conversions` against every
    destination: for a float, NaN, the infinities, ties and values beyond each integer range, and
    every class against each other floating type (:func:`float_conversion_representatives`);
    for an integer, its limits and the values at, one next to and two past the rounding
    midpoints of half, float and double (64-bit ones: :func:`midpoint_integers`)."""
    s = scalar(src)
    if s.is_float:
        values = [math.nan, math.inf, -math.inf, 0.5, -2.5, 3.0, 100.5, -0.0, -1.0]
        for bits in (8, 16, 32, 64):
            values += [1.5 * 2.0 ** (bits - 1), -1.5 * 2.0 ** (bits - 1), 1.5 * 2.0**bits]
        with np.errstate(all="ignore"):
            own = [int(b) for b in np.array(values).astype(s.dtype).view(s.bits_dtype)]
        others = [b for dst in conversion_corners.FLOAT_TYPES if conversion_corners.classes(src, dst)
                  for reps in float_conversion_representatives(src, dst).values() for b in reps]
        return tuple(dict.fromkeys(own + others))
    values = [0, 1, s.max, s.min] + [s.max >> 1, s.min >> 1]
    for mant in (11, 24, 53):
        top = s.bits - 1 if s.signed else s.bits
        for k in sorted({*range(mant, min(top, mant + 3)), top - 1} - {mant - 1}):
            if k < mant or k >= top:
                continue
            step = 1 << (k + 1 - mant)
            for mid in ((1 << k) + step // 2, (1 << k) + step + step // 2):
                values += [mid - 1, mid, mid + 1, mid + 2]
    if s.bits == 64:
        values += [v - (1 << 64) if s.signed and v >> 63 else v for v in midpoint_integers(src)]
    values += [-v for v in values if s.signed and -v >= s.min]
    return tuple(dict.fromkeys(bits_of(v, src) for v in values if s.min <= v <= s.max))


def _convert_statement(src: str, dst: str, form: str, through_double: bool = False, width: int = 4):
    def build(s: Sweep) -> Store:
        parts = form.split(":")[1:]
        attrs = tuple(sorted((("sat", True),) * ("sat" in parts) + tuple(("rounding", p) for p in parts
                                                                         if p in ROUNDINGS)))
        x: Load | Op = s.load(Type(src, width), conversion_sources(src))
        if through_double:
            x = Op("convert", (x,), Type("double", width), attrs)
        op = Op("convert", (x,), Type(dst, width), attrs)
        return Store(s.output(op.type), op)
    return build


def conversion_sweep(caps: Caps, policy: Policy) -> list[Program]:
    types = [t for t in ("half", "float", "double", *INTS) if (t != "double" or caps.fp64)
             and (t != "half" or caps.fp16) and (t not in ("long", "ulong") or caps.int64)]
    statements = [_convert_statement(src, dst, form) for src in types for dst in types
                  if conversion_corners.classes(src, dst) for form in conversion_corners.forms(src, dst)]
    if caps.fp64 and caps.int64:  # long -> double -> float rounds twice (a value next to a float midpoint)
        statements += [_convert_statement(src, "float", f"to=float{r}", True, 1)
                       for src in ("long", "ulong") for r in ("", *(f":{x}" for x in ROUNDINGS))]
    return ([sweep_program(c, policy.math_global_size, "conversions") for c in chunks(statements, policy.statements)]
            + [sweep_program(c, OPERATOR_GLOBAL_SIZE, "conversions")
               for c in chunks(conversion_operator_statements(caps), policy.statements)])


SWEEPS = {"math": math_sweep, "expressions": integer_sweep, "conversions": conversion_sweep, "images": image_sweep,
          "atomics": atomic_sweep, "spirv": spirv_sweep}
"""The areas with a corner sweep (images: :mod:`fuzz.strategies.image_sweep`, atomics:
:mod:`fuzz.strategies.atomic_sweep`, spirv: :mod:`fuzz.strategies.spirv_sweep`); shapes has none
(its statements are the other areas')."""


def sweep_programs(area: str, caps: Caps = Caps(), policy: Policy = Policy()) -> list[Program]:
    """The corner sweep of one area: the programs a campaign runs first in that area, on every
    target, before its random draws (see the module docstring); [] for an area without one."""
    sweep = SWEEPS.get(area)
    return sweep(caps, policy) if sweep else []


def sweep_key(area: str, caps: Caps = Caps(), policy: Policy = Policy()) -> str:
    """A name for one area's sweep under these capabilities and policy (its programs' ids
    hashed): the marker a campaign stores once the sweep has run, so that a resumed campaign does
    not repeat it (and runs a new sweep when the table or the capabilities changed)."""
    ids = ",".join(p.id for p in sweep_programs(area, caps, policy))
    return f"{area}:{hashlib.sha256(ids.encode()).hexdigest()[:16]}"
