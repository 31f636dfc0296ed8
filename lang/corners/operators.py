"""The operators' and vector operations' rows of the corner table (lang.corners), from the
OpSpecs of lang.ops (areas ``expressions`` and ``conversions``), for every scalar type each takes.

* ``arith`` (OpenCL C 3.0.19 §6.5.1, §6.5.6, §6.4.1): each operator (``+ - *`` on every type,
  ``& | ^`` on integers) at every width, and with a scalar operand beside a vector (widened,
  §6.4.1): ``arith:float:+:w4``, ``arith:float:+:w4:scalar``; on floats every pair of operand
  classes (NaN, ±0, ±inf, ±subnormal, ±normal: IEEE 754 §6-§7 define inf - inf, 0 * inf and the
  sign of a zero sum by them, §7.4 requires correct rounding): ``arith:float:*:x=+0,y=-inf``; on
  integers each operand's class and, for ``+ - *``, where the exact result lies against the type
  (signed results stay in range by construction, C99 §6.5p5; unsigned ones wrap, C99 §6.2.5p9):
  ``arith:uint:*:result=>max``;
* ``div`` (§6.5.1, C99 §6.5.5): ``/`` and ``%`` on integers, every pair of operand classes a
  program can divide (a divisor 0, or -1 under MIN, is made 1 by the program: undefined in C99);
* ``shift`` (§6.5.10): ``<<`` and ``>>`` by the left operand's sign and the count against the
  lane size N (0, 1, inside, N-1, N, beyond, negative: only the low log2(N) bits count);
* ``compare`` (§6.5.4-§6.5.5): each operator; on floats every pair of classes (NaN is unordered,
  ±0 are equal), on integers x < y, x == y, x > y in the type they are compared in;
* ``logic``, ``not`` (§6.5.7-§6.5.8): each operand's truth (0; on floats -0 and NaN too);
* ``select``, ``ternary`` (§6.15.6, §6.5.9): a condition lane that is 0, has its MSB set, or is
  nonzero without it (vectors choose by the MSB, scalars by nonzero); ``any``/``all``: no, some
  or every lane with its MSB set; ``bitselect``, ``complement``: every width;
* ``swizzle``, ``insert`` (§6.3.7): every spelling (``.xyzw``, ``.sN``, ``.SN``, ``.lo .hi .even
  .odd``) from every source width to every result width (``swizzle:int:s:w8:n3``), a half of a
  swizzle rvalue (3 lanes included: ``swizzle:int:hi:of-swizzle:w3``) and a read of a
  3-vector's undefined lane alone (``swizzle:int:undefined-lane``, run, never judged);
* ``vec`` (§6.3.6): a splat and parts at every width; ``vload``/``vstore`` (§6.15.7): every n
  from or into an element of m lanes (``vload:float:w3:m8``); ``shuffle``/``shuffle2``
  (§6.15.13): every pair of source and result widths, and a mask with bits above the index;
* ``cast`` (§6.4.2): every scalar type to every scalar type, and a scalar to every vector width;
  ``as`` (§6.4.4): every pair of types of one size at every width, and 4 lanes to 3.

A scalar operator whose operands promote (char + char is int, C99 §6.3.1.1) is an int operator:
the scalar corners of char, uchar, short and ushort are those of their vectors only.
"""

from __future__ import annotations

import numpy as np

from lang.corners.classes import (
    FLOAT_CLASSES,
    INT_CLASSES,
    class_keys,
    exact_results,
    float_classes,
    int_class_index,
    int_class_names,
    int_classes,
    reached_class_keys,
)
from lang.ir import Op
from lang.ops import COMPARES, SWIZZLE_FORMS, half_components
from lang.types import SCALARS, VECTOR_WIDTHS, Type, needs_of, operand_type, promoted, scalar

TYPES = tuple(SCALARS)
VECTORS = VECTOR_WIDTHS[1:]
POW2 = (2, 4, 8, 16)
HALVES = SWIZZLE_FORMS[3:]
ARITH = ("+", "-", "*")
BITWISE = ("&", "|", "^")
DIVIDE = ("/", "%")
SHIFTS = ("<<", ">>")
LOGIC = ("&&", "||")

COARSE: tuple[str, ...] = ("nan", "+0", "-0", "+inf", "-inf", "+sub", "-sub", "+normal", "-normal")
"""Floating-point operand classes of the operators (IEEE 754 §6: NaN, zeros, infinities,
subnormals and normal numbers of each sign)."""
_COARSE_OF = np.array([COARSE.index(c if c in COARSE else c[0] + "normal") for c in FLOAT_CLASSES])

TRUTHS = ("0", "-0", "nan", "nz")
"""An operand's truth (§6.5.7-§6.5.8: zero is false, -0 too, NaN is true)."""
SIGNS = ("-", "0", "+")
COUNTS = ("0", "1", "mid", "N-1", "N", "beyond", "neg")
"""A shift count against the lane size N (§6.5.10: the count is taken modulo N)."""
RELATIONS = ("lt", "eq", "gt")
CONDITIONS = ("0", "msb", "low")
"""A condition lane: zero, MSB set, nonzero with the MSB clear (§6.15.6 select, §6.5.9)."""
MSB_LANES = ("none", "some", "all")


def scalar_ok(tname: str) -> bool:
    """Whether an operator's scalar form can have type ``tname`` (char + char is int)."""
    return promoted(tname) == tname


def widths(tname: str) -> tuple[int, ...]:
    return VECTOR_WIDTHS if scalar_ok(tname) else VECTORS


def truths(tname: str) -> tuple[str, ...]:
    """The truth classes (:data:`TRUTHS`) of an operand of ``tname``."""
    return TRUTHS if scalar(tname).is_float else ("0", "nz")


def int_results(tname: str, operator: str) -> tuple[str, ...]:
    """Where the exact result of an integer + - * can lie: in range for a signed type (the
    programs never overflow one), also wrapped past a limit for an unsigned one."""
    if scalar(tname).signed:
        return ("in-", "in+", "=max", "=min")
    return ("in+", "=max", "=min", "<min" if operator == "-" else ">max")


def divisions(tname: str) -> list[tuple[str, str]]:
    """The (dividend, divisor) class pairs a program divides (no 0 divisor, no MIN / -1)."""
    classes = int_classes(tname)
    return [(a, b) for a in classes for b in classes if b != "0" and (a, b) != ("min", "-1")]


def counts(tname: str) -> tuple[str, ...]:
    """Shift-count classes a ``tname`` shift can get (a negative count needs a signed count type:
    the count of a uchar or ushort vector is unsigned)."""
    return tuple(c for c in COUNTS if c != "neg" or scalar(tname).signed or scalar_ok(tname))


def signs(tname: str) -> tuple[str, ...]:
    return SIGNS if scalar(tname).signed else SIGNS[1:]


def swizzle_keys() -> list[str]:
    """Every selection's spelling, source width and result width, halves of swizzle rvalues and
    the undefined lane read alone."""
    out = [f"xyzw:w{w}:n{n}" for w in VECTORS if w <= 4 for n in VECTOR_WIDTHS if n <= 4]
    out += [f"{form}:w{w}:n{n}" for form in ("s", "S") for w in VECTORS for n in VECTOR_WIDTHS]
    out += [f"{form}:w{w}" for form in HALVES for w in VECTORS]
    out += [f"{form}:of-swizzle:w{w}" for form in HALVES for w in VECTORS]
    return out + ["undefined-lane"]


def insert_forms(width: int) -> list[tuple[str, int]]:
    """(spelling, component count) of every assignment to a swizzle of a ``width``-vector (a
    3-vector has no .hi/.odd l-value: its w lane does not exist)."""
    out = [(form, k) for form in ("s", "S") for k in VECTOR_WIDTHS if k <= width]
    out += [("xyzw", k) for k in VECTOR_WIDTHS if width <= 4 and k <= width]
    halves = ("lo", "even") if width == 3 else HALVES
    return out + [(form, len(half_components(form, width))) for form in halves]


def vload_shapes() -> list[tuple[int, int]]:
    """(n, m): vloadn / vstoren from or into an element of m lanes (m a power of two, m >= n)."""
    return [(n, m) for n in VECTORS for m in POW2 if m >= n]


def as_targets(tname: str, width: int) -> list[tuple[str, int]]:
    """as_T destinations of a ``tname``/``width`` operand: every type of its lane size at its
    width, and at 3 lanes from 4 (§6.4.4)."""
    same = [d for d in TYPES if scalar(d).bits == scalar(tname).bits]
    return [(d, width) for d in same] + ([(d, 3) for d in same] if width == 4 else [])


def rows() -> list[tuple[str, str, str, frozenset[str]]]:
    """``(operation, type, key, needs)`` of every corner of this module (module docstring)."""
    out = []
    for t in TYPES:
        s, need = scalar(t), needs_of(t)
        ws = widths(t)
        shapes = [f"w{w}" for w in ws] + [f"w{w}:scalar" for w in VECTORS]
        for o in ARITH + (BITWISE if s.is_int else ()):
            out += [("arith", t, f"{o}:{k}", need) for k in shapes]
            if s.is_float:
                out += [("arith", t, f"{o}:{k}", need) for k in class_keys([COARSE, COARSE])]
            else:
                out += [("arith", t, f"{o}:{p}={c}", need) for p in "xy" for c in int_classes(t)]
                if o in ARITH:
                    out += [("arith", t, f"{o}:result={c}", need) for c in int_results(t, o)]
        for o in COMPARES:
            out += [("compare", t, f"{o}:{k}", need) for k in shapes]
            pairs = class_keys([COARSE, COARSE]) if s.is_float else RELATIONS
            out += [("compare", t, f"{o}:{k}", need) for k in pairs]
        for o in LOGIC:
            out += [("logic", t, f"{o}:w{w}", need) for w in VECTOR_WIDTHS]
            out += [("logic", t, f"{o}:x={c}", need) for c in truths(t)]
            out += [("logic", t, f"{o}:y={c}", need) for c in TRUTHS]  # y of any type beside a scalar x
        out += [("not", t, f"w{w}", need) for w in VECTOR_WIDTHS] + [("not", t, f"x={c}", need) for c in truths(t)]
        for op in ("select", "ternary"):
            out += [(op, t, f"w{w}", need) for w in (VECTOR_WIDTHS if op == "select" else ws)]
            out += [(op, t, f"c={c}:{'vector' if v else 'scalar'}", need) for c in CONDITIONS for v in (0, 1)
                    if v or op == "select" or scalar_ok(t)]
        out += [("bitselect", t, f"w{w}", need) for w in VECTOR_WIDTHS]
        out += [("swizzle", t, k, need) for k in swizzle_keys()]
        out += [("insert", t, f"{form}:w{w}:n{k}", need) for w in VECTORS for form, k in insert_forms(w)]
        out += [("vec", t, f"{kind}:w{w}", need) for kind in ("splat", "parts") for w in VECTORS]
        out += [(op, t, f"w{n}:m{m}", need) for op in ("vload", "vstore") for n, m in vload_shapes()]
        for op in ("shuffle", "shuffle2"):
            out += [(op, t, f"w{m}:n{n}", need) for m in POW2 for n in POW2] + [(op, t, "mask=high", need)]
        out += [("cast", t, f"to={d}:w{w}", needs_of(t, d)) for d in TYPES for w in VECTOR_WIDTHS]
        out += [("as", t, f"w{w}:to={d}{v}", needs_of(t, d)) for w in VECTOR_WIDTHS for d, v in as_targets(t, w)]
        if s.is_int:
            for o in DIVIDE:
                out += [("div", t, f"{o}:{k}", need) for k in shapes]
                out += [("div", t, f"{o}:x={a},y={b}", need) for a, b in divisions(t)]
            for o in SHIFTS:
                out += [("shift", t, f"{o}:{k}", need) for k in shapes]
                out += [("shift", t, f"{o}:x={x},n={c}", need) for x in signs(t) for c in counts(t)]
            out += [("complement", t, f"w{w}", need) for w in ws]
            if s.signed:
                out += [(op, t, f"w{w}", need) for op in ("any", "all") for w in VECTORS]
                out += [(op, t, f"msb={m}", need) for op in ("any", "all") for m in MSB_LANES]
    return out


OPERATIONS = frozenset(op for op, _, _, _ in rows())
BY_VALUE = frozenset({"arith", "div", "shift", "compare", "logic", "not", "select", "ternary"})
"""Lane-wise operations whose corners depend on their operands' values (a scalar operand is read
widened to the operation's lanes)."""
BY_OWN_VALUE = frozenset({"any", "all", "shuffle", "shuffle2"})
"""Operations whose corners depend on values read at each operand's own width."""


# ---- what one operation reaches ------------------------------------------------------------------


def coarse_classes(values: np.ndarray) -> np.ndarray:
    """Index into :data:`COARSE` of each value of a floating-point array."""
    return _COARSE_OF[float_classes(values)]


def _as_type(values: np.ndarray, tname: str) -> np.ndarray:
    """Lanes brought to ``tname`` as the usual arithmetic conversions do (C99 §6.3.1.8)."""
    with np.errstate(all="ignore"):
        return values.astype(scalar(tname).dtype)


def _pairs(x: np.ndarray, y: np.ndarray, prefix: str) -> set[str]:
    """The class-pair keys (:data:`COARSE`) of two floating-point operands' lanes."""
    return {prefix + k for k in reached_class_keys([coarse_classes(x), coarse_classes(y)], [COARSE, COARSE])}


def _truth(values: np.ndarray) -> set[str]:
    if values.dtype.kind != "f":
        return {("0", "nz")[int(b)] for b in np.unique(values != 0)}
    with np.errstate(invalid="ignore"):
        cls = np.where(np.isnan(values), 2, np.where(values == 0, np.signbit(values).astype(int), 3))
    return {TRUTHS[c] for c in np.unique(cls)}


def _msb(values: np.ndarray) -> np.ndarray:
    """Each lane's most significant bit (§6.15.6: what a vector select, any and all read)."""
    bits = values.view(f"u{values.dtype.itemsize}")
    return (bits >> (8 * values.dtype.itemsize - 1)).astype(bool)


def _condition(values: np.ndarray) -> set[str]:
    return {CONDITIONS[c] for c in np.unique(np.where(values == 0, 0, np.where(_msb(values), 1, 2)))}


def _relations(x: np.ndarray, y: np.ndarray) -> set[str]:
    return {r for r, m in zip(RELATIONS, (x < y, x == y, x > y)) if m.any()}


def _sign(x: np.ndarray) -> set[str]:
    return {c for c, m in zip(SIGNS, (x < 0, x == 0, x > 0)) if m.any()}


def _count_classes(values: np.ndarray, n: int) -> set[str]:
    return {"neg" if c < 0 else "0" if c == 0 else "1" if c == 1 else "N-1" if c == n - 1 else "N" if c == n
            else "beyond" if c > n else "mid" for c in np.unique(values).tolist()}


def _divisions(x: np.ndarray, y: np.ndarray, t: Type) -> set[str]:
    """The (dividend, divisor) class pairs of the lanes, the divisor as the program makes it (1
    for 0, and for -1 under MIN)."""
    made_one = (y == 0) | ((x == t.elem.min) & (y == -1)) if t.elem.signed else y == 0
    a = int_class_index(x, t.scalar)
    b = int_class_index(np.where(made_one, y.dtype.type(1), y), t.scalar)
    n = len(INT_CLASSES)
    return {f"x={INT_CLASSES[p // n]},y={INT_CLASSES[p % n]}" for p in np.unique(a * n + b)}


def _swizzle_key(op: Op) -> str:
    form, source = op.attr("form"), op.args[0]
    if form in HALVES:
        inner = isinstance(source, Op) and source.op == "swizzle"
        return f"{form}:{'of-swizzle:' if inner else ''}w{source.type.width}"
    if op.attr("components") == (1,) and isinstance(source, Op) and source.op == "swizzle" \
            and source.attr("form") in ("hi", "odd") and source.args[0].type.width == 3:
        return "undefined-lane"
    return f"{form}:w{source.type.width}:n{op.type.width}"


def _shape(op: Op, t: Type) -> str:
    scalar_operand = t.is_vector and any(not a.type.is_vector for a in op.args)
    return f"{op.attr('operator')}:w{t.width}{':scalar' if scalar_operand else ''}"


def keys(op: Op, lanes: list[np.ndarray | None]) -> tuple[str, set[str]]:
    """The type and keys of the corners one operation reaches; ``lanes``: each operand's values
    over the work-items (a scalar widened to the operation's lanes; None where an operand is
    itself an operation, whose values are not read)."""
    known = all(v is not None for v in lanes)
    name, t = op.op, op.type
    if name in ("arith", "div", "shift", "complement"):
        tname = t.scalar
        out = {_shape(op, t)} if name != "complement" else {f"w{t.width}"}
        if not known or name == "complement":
            return tname, out
        x, y = (_as_type(v, tname) for v in lanes)
        o = op.attr("operator")
        if name == "shift":
            return tname, out | {f"{o}:x={a},n={c}" for a in _sign(x) for c in _count_classes(lanes[1], t.elem.bits)}
        if t.elem.is_float:
            return tname, out | _pairs(x, y, f"{o}:")
        if name == "div":
            return tname, out | {f"{o}:{k}" for k in _divisions(x, y, t)}
        out |= {f"{o}:{p}={c}" for p, v in zip("xy", (x, y)) for c in int_class_names(v, tname)}
        if o in ARITH:
            out |= {f"{o}:result={c}" for c in exact_results(f"a {o} b", [x, y], tname)}
        return tname, out
    if name == "compare":
        common = operand_type(op.args[0].type, op.args[1].type)
        tname = common.scalar
        out = {_shape(op, common)}
        if known:
            x, y = (_as_type(v, tname) for v in lanes)
            out |= _pairs(x, y, f"{op.attr('operator')}:") if common.elem.is_float else {
                f"{op.attr('operator')}:{r}" for r in _relations(x, y)}
        return tname, out
    if name in ("logic", "not"):
        tname = op.args[0].type.scalar
        prefix = f"{op.attr('operator')}:" if name == "logic" else ""
        out = {f"{prefix}w{op.args[0].type.width}"}
        if known:
            out |= {f"{prefix}{p}={c}" for p, v in zip("xy", lanes) for c in _truth(v)}
        return tname, out
    if name in ("select", "ternary"):
        cond = lanes[2 if name == "select" else 0]
        shape = "vector" if t.is_vector else "scalar"
        return t.scalar, {f"w{t.width}"} | ({f"c={c}:{shape}" for c in _condition(cond)} if cond is not None else set())
    if name in ("any", "all"):
        w = op.args[0].type.width
        out = {f"w{w}"}
        if known:
            set_lanes = _msb(lanes[0]).reshape(-1, w).sum(axis=1)
            out |= {f"msb={MSB_LANES[0 if m == 0 else 2 if m == w else 1]}" for m in np.unique(set_lanes)}
        return op.args[0].type.scalar, out
    if name == "bitselect":
        return t.scalar, {f"w{t.width}"}
    if name == "swizzle":
        return t.scalar, {_swizzle_key(op)}
    if name == "insert":
        return t.scalar, {f"{op.attr('form')}:w{t.width}:n{len(op.attr('components'))}"}
    if name == "vec":
        return t.scalar, {f"{'splat' if len(op.args) == 1 else 'parts'}:w{t.width}"}
    if name == "vload":
        return t.scalar, {f"w{t.width}:m{op.args[0].type.width}"}
    if name == "vstore":
        return t.scalar, {f"w{op.args[0].type.width}:m{t.width}"}
    if name in ("shuffle", "shuffle2"):
        m = op.args[0].type.width
        out = {f"w{m}:n{t.width}"}
        if lanes[-1] is not None:
            index_bits = (2 * m if name == "shuffle2" else m).bit_length() - 1
            if (lanes[-1].view(f"u{lanes[-1].dtype.itemsize}") >> index_bits).any():
                out.add("mask=high")
        return t.scalar, out
    if name == "cast":
        return op.args[0].type.scalar, {f"to={t.scalar}:w{t.width}"}
    if name == "as":
        a = op.args[0].type
        return a.scalar, {f"w{a.width}:to={t.scalar}{t.width}"}
    return "", set()
