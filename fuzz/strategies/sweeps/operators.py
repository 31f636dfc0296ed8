"""The operators' corner sweep (lang.corners.operators): one statement per corner shape, whose
operand lanes run through every class the corner table names for it.

Operands are input buffers listing their lanes exactly (``Fill.values``, lane ``i`` takes entry
``i % n``; two operands of one type pair lane by lane):

* arithmetic and comparisons on floats: every pair of the nine operand classes (NaN, ±0, ±inf,
  ±subnormal, ±normal); on integers every pair of class representatives (0, 1, -1, MAX, MIN,
  small and large of each sign), a signed ``+ - *`` only the pairs whose exact result fits (no
  undefined behaviour: C99 §6.5p5), so the results run through in range, at MAX and at MIN (and
  past them for unsigned types, which wrap); ``/`` and ``%`` every pair but a 0 divisor and
  MIN / -1; shifts every sign of the left operand against counts 0, 1, N/2, N-1, N, N+3 and -1;
* truth values, conditions and masks: operands that are 0, -0 and NaN (floats), a lane with its
  MSB set and one nonzero without it, work-items whose lanes have no, some or every MSB set, a
  shuffle mask with bits above the index;
* shapes (swizzles, inserts, vector literals, vloadn/vstoren, shuffles, casts, as_): one
  statement each over ordinary values (as_ of the bits of ordinary numbers of its size, never a
  NaN or subnormal pattern).

A scalar operand beside a vector (``x + s``) gets small values, so no lane can overflow. Casts,
as_ and mixed arithmetic belong to the conversions area (lang.ops), the rest to expressions.
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import (
    CLASSES,
    SHAPES,
    Sweep,
    bits_of,
    float_representatives,
    int_representatives,
    lanes,
    place,
    value_order,
)
from fuzz.strategies.swizzles import selection
from lang.corners.operators import (
    ARITH,
    BITWISE,
    COARSE,
    DIVIDE,
    HALVES,
    LOGIC,
    POW2,
    SHIFTS,
    VECTORS,
    as_targets,
    insert_forms,
    vload_shapes,
    widths,
)
from lang.corners.classes import value_rank
from lang.ir import Load, Op, Store
from lang.ops import COMPARES, half_components
from lang.types import SIGNED_OF_BITS, UNSIGNED_OF_BITS, VECTOR_WIDTHS, Type, scalar, truth_type

Build = Callable[[Sweep], Store]
Tagged = tuple[int, Build]
"""A statement with its pass (fuzz.strategies.sweeps.base.place)."""
GLOBAL_SIZE = 128
"""Work-items of an operator sweep program: 81 class pairs fit one work-item each at width 1."""

_ORDINARY = {"int": (1, 2, 3, 5, 0, 7, 4, 6), "float": (1.5, -2.0, 0.0, 3.25, -0.5, 8.0, 1.25, 2.0)}
_CAST = {"int": (0, 1, 2, 7), "float": (1.5, 0.0, 3.25, 8.0)}
"""Cast operands every scalar type holds exactly (a float cast to an integer type stays in range)."""


def types_of(caps: Caps) -> tuple[str, ...]:
    return caps.scalars(frozenset({"fp64", "fp16"}))


def ordinary(tname: str, table: dict[str, tuple] = _ORDINARY) -> tuple[int, ...]:
    """Bit patterns of small ordinary values of ``tname`` (exact in every floating type)."""
    s = scalar(tname)
    values = table["float" if s.is_float else "int"]
    return tuple(int(b) for b in np.array(values, dtype=s.dtype).view(s.bits_dtype))


def _coarse(tname: str) -> dict[str, int]:
    """One bit pattern of ``tname`` in each class of :data:`lang.corners.operators.COARSE`."""
    reps = float_representatives(tname)
    return {c: reps[c if c[1:] != "normal" else c[0] + "real"][0] for c in COARSE}


def _int_pairs(tname: str, keep: Callable[[int, int], bool] = lambda a, b: True) -> list[tuple[int, int]]:
    reps = [vals[0] for vals in int_representatives(tname).values()]
    return [(a, b) for a, b in itertools.product(reps, reps) if keep(a, b)]


def _fits(tname: str, operator: str) -> Callable[[int, int], bool]:
    """Whether ``a op b`` is defined: always for unsigned types (they wrap), in range for signed."""
    s = scalar(tname)
    exact = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}.get(operator)
    if exact is None or not s.signed:
        return lambda a, b: True
    return lambda a, b: s.min <= exact(a, b) <= s.max


def _binary(name: str, operator: str, t: Type, x: tuple[int, ...], y: tuple[int, ...], result: Type,
            scalar_y: bool = False) -> Build:
    """``x op y`` over the lanes ``x`` and ``y`` (bit patterns), or beside a small scalar."""
    def build(s: Sweep) -> Store:
        if scalar_y:
            a, b = s.load(t, ordinary(t.scalar)), s.load(Type(t.scalar), ordinary(t.scalar))
        else:
            a, b = s.load(t, x), s.load(t, y)
        op = Op(name, (a, b), result, (("operator", operator),))
        return Store(s.output(result), op)
    return build


def packed(pairs: list[tuple[int, int]], widths: tuple[int, ...], ranks: dict[int, int] | None = None
           ) -> list[tuple[int, int, tuple[int, ...], tuple[int, ...]]]:
    """Operand pairs over one statement per width (smallest first, fuzz.strategies.sweeps.base.place:
    the two narrowest hold every pair, those of special values first by ``ranks``, bits -> rank):
    per width, its pass and its lanes of each operand."""
    if ranks is not None:
        pairs, special = value_order(pairs, (ranks, ranks))
    else:
        special = len(pairs)
    xs, ys = tuple(a for a, _ in pairs), tuple(b for _, b in pairs)
    order = sorted(widths)
    out = []
    for w, (p, (lo, hi), first, work_items) in zip(order, place(len(pairs), special, order, len(order))):
        out.append((p, w, lanes(xs[lo:hi], first, w, work_items), lanes(ys[lo:hi], first, w, work_items)))
    return out


def _ranks(tname: str) -> dict[int, int]:
    """The rank (lang.corners.classes.value_rank) of each operand value the pairs of ``tname`` use."""
    if scalar(tname).is_float:
        return {bits: value_rank(c) for c, bits in _coarse(tname).items()}
    return {bits_of(v[0], tname): value_rank(c) for c, v in int_representatives(tname).items()}


def _value_pairs(name: str, operator: str, tname: str) -> list[tuple[int, int]]:
    """The operand pairs (bit patterns) of a ``name`` statement on ``tname``."""
    s = scalar(tname)
    if s.is_float:
        c = _coarse(tname)
        return [(c[a], c[b]) for a in COARSE for b in COARSE]
    if name == "div":
        numbers = _int_pairs(tname, lambda a, b: b != 0 and not (a == s.min and b == -1 and s.signed))
    elif name == "compare":
        numbers = [(0, 5), (5, 5), (5, 0), (-1 if s.signed else s.max, 1)]
    else:
        numbers = _int_pairs(tname, _fits(tname, operator) if name == "arith" else lambda a, b: True)
    return [(bits_of(a, tname), bits_of(b, tname)) for a, b in numbers]


def _operator_statements(name: str, operators: tuple[str, ...], tname: str) -> list[Tagged]:
    """Each operator at every width, its operand pairs spread over them, then beside a scalar at
    every vector width (shapes)."""
    out: list[Tagged] = []
    for o in operators:
        for p, w, x, y in packed(_value_pairs(name, o, tname), widths(tname), _ranks(tname)):
            t = Type(tname, w)
            out.append((p, _binary(name, o, t, x, y, truth_type(t) if name == "compare" else t)))
        for w in VECTORS:
            t = Type(tname, w)
            out.append((SHAPES, _binary(name, o, t, (), (), truth_type(t) if name == "compare" else t, True)))
    return out


def _count_type(tname: str, width: int) -> str:
    """A shift count's type: the operand's, but int beside an unsigned scalar (so that a negative
    count occurs)."""
    return "int" if width == 1 and not scalar(tname).signed else tname


def _shift_pairs(tname: str, count_type: str) -> list[tuple[int, int]]:
    """Every sign of x against counts 0, 1, N/2, N-1, N, N+3 and -1 (N = lane bits), as bits."""
    n = scalar(tname).bits
    counts = [0, 1, n // 2, n - 1, n, n + 3] + ([-1] if scalar(count_type).signed else [])
    xs = [-5, 0, 7] if scalar(tname).signed else [0, 7]
    return [(bits_of(a, tname), bits_of(c, count_type)) for a, c in itertools.product(xs, counts)]


def _shifts(operator: str, tname: str) -> list[Tagged]:
    """``x << n`` / ``x >> n`` at every width, each count type's pairs spread over its widths, then
    beside a scalar count at every vector width."""
    out: list[Tagged] = []
    by_count: dict[str, list[int]] = {}
    for w in widths(tname):
        by_count.setdefault(_count_type(tname, w), []).append(w)
    for count_type, ws in by_count.items():
        for p, w, x, n in packed(_shift_pairs(tname, count_type), tuple(ws)):
            out.append((p, _shift(operator, Type(tname, w), x, Type(count_type, w), n)))
    xs = tuple(a for a, _ in _shift_pairs(tname, tname))
    return out + [(SHAPES, _shift(operator, Type(tname, w), xs, Type(tname), ordinary(tname))) for w in VECTORS]


def _shift(operator: str, t: Type, x: tuple[int, ...], count_type: Type, counts: tuple[int, ...]) -> Build:
    def build(s: Sweep) -> Store:
        a = s.load(t, x)
        return Store(s.output(t), Op("shift", (a, s.load(count_type, counts)), t, (("operator", operator),)))
    return build


def _truth_values(tname: str) -> tuple[int, ...]:
    """0, nonzero, and on floats -0 and NaN."""
    if scalar(tname).is_float:
        c = _coarse(tname)
        return (c["+0"], c["-0"], c["nan"], c["+normal"])
    return (0, 5)


def _logic(operator: str, tname: str, width: int) -> Build:
    def build(s: Sweep) -> Store:
        t = Type(tname, width)
        y_type = Type("float") if width == 1 else t  # a scalar's partner of any type: float has -0 and NaN
        pairs = list(itertools.product(_truth_values(tname), _truth_values(y_type.scalar)))
        x = s.load(t, tuple(a for a, _ in pairs))
        y = s.load(y_type, tuple(b for _, b in pairs))
        result = truth_type(t)
        return Store(s.output(result), Op("logic", (x, y), result, (("operator", operator),)))
    return build


def _not(tname: str, width: int) -> Build:
    def build(s: Sweep) -> Store:
        t = Type(tname, width)
        return Store(s.output(truth_type(t)), Op("not", (s.load(t, _truth_values(tname)),), truth_type(t)))
    return build


def _conditions(bits: int) -> tuple[int, ...]:
    """A condition lane that is 0, has its MSB set, is nonzero without it (signed, ``bits`` wide)."""
    return tuple(bits_of(v, SIGNED_OF_BITS[bits]) for v in (0, -1, 1))


def _select(name: str, tname: str, width: int) -> Build:
    def build(s: Sweep) -> Store:
        t = Type(tname, width)
        bits = scalar(tname).bits if width > 1 or name == "select" else 32
        c = s.load(Type(SIGNED_OF_BITS[bits], width), _conditions(bits))
        a, b = s.load(t, ordinary(tname)), s.load(t, ordinary(tname)[::-1])
        return Store(s.output(t), Op(name, (a, b, c) if name == "select" else (c, a, b), t))
    return build


def _any_all(name: str, tname: str, width: int) -> Build:
    """Work-items whose lanes have no, some and every MSB set."""
    def build(s: Sweep) -> Store:
        t = Type(tname, width)
        k = t.width
        values = [0] * k + [-1] + [0] * (k - 1) + [-1] * k  # no, some and every lane's MSB: a work-item each
        x = s.load(t, tuple(bits_of(v, tname) for v in values))
        return Store(s.output(Type("int")), Op(name, (x,), Type("int")))
    return build


def _single(name: str, args: Callable[[Sweep], tuple], result: Type, attrs: tuple = ()) -> Build:
    return lambda s: Store(s.output(result), Op(name, args(s), result, attrs))


def _load(t: Type) -> Callable[[Sweep], Load]:
    return lambda s: s.load(t, ordinary(t.scalar))


def _rvalue(s: Sweep, tname: str, width: int) -> Op:
    """A ``width``-lane swizzle rvalue (3 included) of a wider input."""
    source = s.load(Type(tname, 4 if width <= 4 else 16), ordinary(tname))
    return selection(source, "s", tuple((width - 1 - k) % source.type.width for k in range(width)))


def _swizzles(tname: str) -> list[Build]:
    out = []
    for w in VECTORS:
        for form in ("xyzw", "s", "S"):
            for n in VECTOR_WIDTHS:
                if form == "xyzw" and (w > 4 or n > 4):
                    continue
                comps = tuple((w - 1 - k) % w for k in range(n))
                out.append(lambda s, w=w, f=form, c=comps: _store(s, selection(s.load(Type(tname, w), ordinary(tname)), f, c)))
        for form in HALVES:
            comps = half_components(form, w)
            out.append(lambda s, w=w, f=form, c=comps: _store(s, selection(s.load(Type(tname, w), ordinary(tname)), f, c)))
            if not _undefined_lane(form, w):
                out.append(lambda s, w=w, f=form, c=comps: _store(s, selection(_rvalue(s, tname, w), f, c)))
    return out


def _undefined_lane(form: str, width: int) -> bool:
    """Whether a half of a ``width``-lane swizzle rvalue holds its undefined w lane (§6.3.7)."""
    return width == 3 and 3 in half_components(form, width)


def undefined_lane_statements(tname: str) -> list[Build]:
    """The halves of a 3-component swizzle rvalue that hold its undefined lane, and that lane
    read alone: the shapes clang 14 and 15 crash on (PoCL 3.1, Oclgrind and rusticl 22.3 through
    OpenCL C), kept apart so that a crash takes no other corner with it."""
    out = [lambda s, f=form: _store(s, selection(_rvalue(s, tname, 3), f, half_components(f, 3)))
           for form in HALVES if _undefined_lane(form, 3)]
    return out + [lambda s: _store(s, selection(selection(_rvalue(s, tname, 3), "hi", half_components("hi", 3)), "s", (1,)))]


def _store(s: Sweep, op: Op) -> Store:
    return Store(s.output(op.type), op)


def _inserts(tname: str) -> list[Build]:
    out = []
    for w in VECTORS:
        t = Type(tname, w)
        for form, k in insert_forms(w):
            comps = half_components(form, w) if form in HALVES else tuple(range(w - 1, w - 1 - k, -1))
            out.append(_single("insert", lambda s, t=t, k=k: (s.load(t, ordinary(tname)), s.load(Type(tname, k), ordinary(tname))),
                               t, (("components", comps), ("form", form))))
    return out


def _parts(width: int) -> tuple[int, ...]:
    """Lane counts of smaller parts adding up to ``width`` (§6.3.6)."""
    return (1, width - 1) if width <= 4 else (width // 2, width // 2)


def _vectors(tname: str) -> list[Build]:
    out = []
    for w in VECTORS:
        t = Type(tname, w)
        out.append(_single("vec", lambda s: (_load(Type(tname))(s),), t))
        out.append(_single("vec", lambda s, w=w: tuple(_load(Type(tname, k))(s) for k in _parts(w)), t))
    for n, m in vload_shapes():
        offset = (("offset", m // n - 1),)
        out.append(_single("vload", lambda s, m=m: (_load(Type(tname, m))(s),), Type(tname, n), offset))
        out.append(_single("vstore", lambda s, n=n: (_load(Type(tname, n))(s),), Type(tname, m), offset))
    mask_type = UNSIGNED_OF_BITS[scalar(tname).bits]
    for name in ("shuffle", "shuffle2"):
        for m in POW2:
            for n in POW2:
                index = 2 * m if name == "shuffle2" else m
                mask = tuple(v & (scalar(mask_type).max) for v in (0, 1, index - 1, index + 1, 0xF0 | 3, index // 2))

                def args(s, m=m, n=n, name=name, mask=mask):
                    x = [_load(Type(tname, m))(s)] * (2 if name == "shuffle2" else 1)
                    return (*x, s.load(Type(mask_type, n), mask))
                out.append(_single(name, args, Type(tname, n)))
    return out


def _first_carries(builds: list[Build]) -> list[Tagged]:
    """Statements whose every width holds all its values: the two narrowest carry its classes (pass
    CLASSES: a scalar's and a vector's, ``select:int:c=0:vector``), the others are shapes."""
    return [(CLASSES if k < 2 else SHAPES, b) for k, b in enumerate(builds)]


def operator_statements(caps: Caps) -> list[Tagged]:
    """The expressions area's operator statements for the types ``caps`` allow, tagged with their
    pass (fuzz.strategies.sweeps.base.place)."""
    out: list[Tagged] = []
    for t in types_of(caps):
        s = scalar(t)
        out += _operator_statements("compare", COMPARES, t)
        out += [tb for o in LOGIC for tb in _first_carries([_logic(o, t, w) for w in VECTOR_WIDTHS])]
        out += _first_carries([_not(t, w) for w in VECTOR_WIDTHS])
        out += _first_carries([_select("select", t, w) for w in VECTOR_WIDTHS])
        out += _first_carries([_select("ternary", t, w) for w in widths(t)])
        shapes = [_single("bitselect", lambda sw, w=w, t=t: tuple(_load(Type(t, w))(sw) for _ in range(3)), Type(t, w))
                  for w in VECTOR_WIDTHS]
        shapes += _swizzles(t) + _inserts(t) + _vectors(t)
        if s.is_int:
            out += _operator_statements("div", DIVIDE, t)
            out += [tb for o in SHIFTS for tb in _shifts(o, t)]
            shapes += [_single("complement", lambda sw, w=w, t=t: (_load(Type(t, w))(sw),), Type(t, w)) for w in widths(t)]
            if s.signed:
                out += [tb for name in ("any", "all") for tb in _first_carries([_any_all(name, t, w) for w in VECTORS])]
        out += [(SHAPES, b) for b in shapes]
    return out


def _as_values(tname: str) -> tuple[int, ...]:
    """Bits of ordinary numbers of ``tname``'s size (a float of that size where there is one), so
    that as_ of them is never a NaN or a subnormal."""
    bits = scalar(tname).bits
    name = {16: "half", 32: "float", 64: "double"}.get(bits)
    return ordinary(name) if name else ordinary(tname)


def conversion_operator_statements(caps: Caps) -> list[Tagged]:
    """The conversions area's operator statements: arithmetic, casts and as_, tagged with their pass."""
    out: list[Tagged] = []
    types = types_of(caps)
    for t in types:
        out += _operator_statements("arith", ARITH + (BITWISE if scalar(t).is_int else ()), t)
        out += [(SHAPES, _single("cast", lambda s, t=t: (s.load(Type(t), ordinary(t, _CAST)),), Type(d, w)))
                for d in types for w in VECTOR_WIDTHS]
        for w in VECTOR_WIDTHS:
            for d, v in as_targets(t, w):
                if d in types:
                    out.append((SHAPES, _single("as", lambda s, t=t, w=w: (s.load(Type(t, w), _as_values(t)),), Type(d, v))))
    return out
