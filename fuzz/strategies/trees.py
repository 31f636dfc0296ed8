"""Random typed expression trees over scalars and vectors (area ``expressions``, whose statements
:mod:`fuzz.strategies.expressions` draws).

Trees are built top-down from the type a node must have: each operation's builder
(:data:`EXPRESSIONS`) returns a node of that type, or None where the operation cannot produce it,
and draws its operands' types as the spec's typing rules allow (OpenCL C 3.0 §6.3.6-7, §6.4.6,
§6.5); a tree is depth-limited (``policy.expr_depth``).

Only defined programs are built, for *every* input value (:mod:`fuzz.strategies.ranges`): signed
+ - * get operands whose ranges cannot overflow, mul24/mad24 operands within 24 bits, clamp
bounds that are ordered, divisors guarded in the program itself (the ``div`` operation), shift
counts masked by the language. Values the spec leaves undefined but whose reading is valid (the w
lane of a 3-vector seen through .hi/.odd) are generated and never judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from fuzz.strategies.conversions import Builder
from fuzz.strategies.ranges import may_overflow, narrow
from fuzz.strategies.swizzles import fires, swizzle_shape
from lang.ir import Expr, Literal, Op
from lang.ops import INTEGER_BUILTINS, OPS, RELATIONAL_BUILTINS, ROUNDINGS, Handlers, half_components
from lang.types import SIGNED_OF_BITS, UNSIGNED_OF_BITS, VECTOR_WIDTHS, Type, common_type, promoted, scalar, truth_type

VECTORS = VECTOR_WIDTHS[1:]
POW2 = (2, 4, 8, 16)  # shuffle and vloadn sources (no 3-vectors)


@dataclass
class Gen:
    """Tree-building state: the program's :class:`Builder` (types, operands, buffers) and policy."""

    b: Builder

    @property
    def rnd(self):
        return self.b.rnd

    def expr(self, t: Type, depth: int) -> Expr:
        """A node of type ``t``: a leaf (buffer load or literal) at depth 0 or by chance, else an
        operation drawn by weight among those that can produce ``t`` and that some target's
        OpenCL C version has (Caps.versions)."""
        policy = self.b.policy
        allowed = [(n, w) for n, w in policy.expression_weights.items() if OPS[n].requires <= self.b.versions]
        if depth > 0 and allowed and not self.b.chance(policy.p_leaf):
            names, weights = zip(*allowed)
            for _ in range(8):
                node = EXPRESSIONS[self.rnd.choices(names, weights)[0]](self, t, depth - 1)
                if node is not None:
                    return node
        return self.b.operand(t)

    def ints(self, signed: bool | None = None, bits: int | None = None) -> tuple[str, ...]:
        return tuple(n for n in self.b.types if scalar(n).is_int and (signed is None or scalar(n).signed == signed)
                     and (bits is None or scalar(n).bits == bits))

    def int_type(self, bits: int, width: int) -> Type | None:
        """An integer type (either signedness) of ``bits``-bit lanes, if the program may use it."""
        names = self.ints(bits=bits)
        return Type(self.rnd.choice(names), width) if names else None

    def maybe_scalar(self, t: Type) -> Type:
        """``t``, or its element type beside a vector (the scalar is widened, §6.5)."""
        return Type(t.scalar) if t.is_vector and self.b.chance(self.b.policy.p_scalar_operand) else t


EXPRESSIONS: Handlers[Callable[[Gen, Type, int], Expr | None]] = Handlers()
expression = EXPRESSIONS.register


# ---- vector components (§6.3.6, §6.3.7, §6.15.7, §6.15.13) ------------------------------------


@expression("swizzle")
def _swizzle(g: Gen, t: Type, depth: int) -> Expr | None:
    if fires(g.rnd, g.b.policy.p_swizzle_shapes):  # rare shapes: halves of swizzle rvalues, undefined lanes
        node = swizzle_shape(g, t, depth)
        if node is not None:
            return node
    forms = []
    if t.width <= 4:
        forms.append("xyzw")
    forms += ["s", "S"]
    halves = [w for w in VECTORS if (2 * t.width == w) or (w == 3 and t.width == 2)]
    if halves:  # twice as likely for two lanes: a 3-vector's .hi/.odd read its undefined w lane
        forms += ["lo", "hi", "even", "odd"] * (2 if t.width == 2 else 1)
    form = g.rnd.choice(forms)
    if form in ("lo", "hi", "even", "odd"):
        w = g.rnd.choice(halves)
        comps = half_components(form, w)
    else:
        w = g.rnd.choice([w for w in VECTORS if form != "xyzw" or w <= 4])
        comps = tuple(g.rnd.randrange(w) for _ in range(t.width))
    source = g.expr(Type(t.scalar, w), depth)
    return Op("swizzle", (source,), t, (("components", comps), ("form", form)))


@expression("insert")
def _insert(g: Gen, t: Type, depth: int) -> Expr | None:
    """``v.comps = value`` with distinct components; a 3-vector has no .hi/.odd l-value (its w lane
    does not exist)."""
    if not t.is_vector:
        return None
    w = t.width
    forms = ["s", "S"] + (["xyzw"] if w <= 4 else []) + (["lo", "even"] if w == 3 else ["lo", "hi", "even", "odd"])
    form = g.rnd.choice(forms)
    if form in ("lo", "hi", "even", "odd"):
        comps = half_components(form, w)
    else:
        k = g.rnd.choice([k for k in VECTOR_WIDTHS if k <= w and (form != "xyzw" or k <= 4)])
        comps = tuple(g.rnd.sample(range(w), k))
    value = g.expr(Type(t.scalar, len(comps)), depth)
    return Op("insert", (g.expr(t, depth), value), t, (("components", comps), ("form", form)))


@expression("vec")
def _vec(g: Gen, t: Type, depth: int) -> Expr | None:
    """(Tn)(x) replicating a scalar, or (Tn)(parts...) whose lane counts add up to n (§6.3.6)."""
    if not t.is_vector:
        return None
    if g.b.chance(0.25):
        return Op("vec", (g.expr(Type(t.scalar), depth),), t)
    sizes, left = [], t.width
    while left:
        size = g.rnd.choice([k for k in VECTOR_WIDTHS if k <= left and k < t.width])
        sizes.append(size)
        left -= size
    return Op("vec", tuple(g.expr(Type(t.scalar, k), depth) for k in sizes), t)


@expression("vload")
def _vload(g: Gen, t: Type, depth: int) -> Expr | None:
    """vloadn(offset, p) from the scalars of an input element of m >= n lanes (m not 3)."""
    if not t.is_vector:
        return None
    m = g.rnd.choice([m for m in POW2 if m >= t.width])
    offset = g.rnd.randrange(m // t.width)
    return Op("vload", (g.b.load(Type(t.scalar, m)),), t, (("offset", offset),))


def _mask_type(t: Type) -> Type:
    return Type(UNSIGNED_OF_BITS[t.elem.bits], t.width)


@expression("shuffle")
def _shuffle(g: Gen, t: Type, depth: int) -> Expr | None:
    """shuffle(x, mask): x and the result have 2, 4, 8 or 16 lanes; the mask is unsigned, of the
    result's lane size, and drawn like any other operand (§6.15.13)."""
    if t.width not in POW2:
        return None
    m = g.rnd.choice(POW2)
    return Op("shuffle", (g.expr(Type(t.scalar, m), depth), g.expr(_mask_type(t), depth)), t)


@expression("shuffle2")
def _shuffle2(g: Gen, t: Type, depth: int) -> Expr | None:
    if t.width not in POW2:
        return None
    x = Type(t.scalar, g.rnd.choice(POW2))
    return Op("shuffle2", (g.expr(x, depth), g.expr(x, depth), g.expr(_mask_type(t), depth)), t)


# ---- selection (§6.15.6, §6.5.9) ---------------------------------------------------------------


@expression("select")
def _select(g: Gen, t: Type, depth: int) -> Expr | None:
    c = g.int_type(t.elem.bits, t.width)
    if c is None:
        return None
    return Op("select", (g.expr(t, depth), g.expr(t, depth), g.expr(c, depth)), t)


@expression("bitselect")
def _bitselect(g: Gen, t: Type, depth: int) -> Expr | None:
    return Op("bitselect", tuple(g.expr(t, depth) for _ in range(3)), t)


@expression("ternary")
def _ternary(g: Gen, t: Type, depth: int) -> Expr | None:
    """Scalars: any integer condition; vectors: an integer vector of the same lane count and lane
    size (select(y, x, c), §6.5.9). A scalar condition with vector operands is ambiguous in the
    spec (§6.5.9) and is not generated."""
    if not t.is_vector and promoted(t.scalar) != t.scalar:
        return None  # C99 §6.5.15: char ? char : char has the promoted type, int
    c = g.int_type(t.elem.bits, t.width) if t.is_vector else Type(g.rnd.choice(g.ints()))
    if c is None:
        return None
    return Op("ternary", (g.expr(c, depth), g.expr(t, depth), g.expr(t, depth)), t)


# ---- truth values (§6.5.4-§6.5.8, §6.15.6) ------------------------------------------------------


def _operand_types(g: Gen, t: Type, floats_only: bool = False) -> Type | None:
    """An operand type whose truth type is ``t``: any scalar for int, else a vector whose lanes
    have the size of t's lanes (ints of either signedness, or floats)."""
    if t.is_vector:
        names = [n for n in g.b.types if scalar(n).bits == t.elem.bits and (scalar(n).is_float or not floats_only)]
    elif t.scalar == "int":
        names = [n for n in g.b.types if scalar(n).is_float or not floats_only]
    else:
        return None
    return Type(g.rnd.choice(names), t.width) if names else None


def _is_truth(t: Type) -> bool:
    return truth_type(t) == t


def truth_valued(build: Callable[[Gen, Type, int], Expr | None]) -> Callable[[Gen, Type, int], Expr | None]:
    """A builder of truth values (int scalars, same-size signed vectors) usable for any integer
    type: built at the truth type of ``t``'s shape, then converted (0, 1 and -1 convert exactly
    to signed types and modulo 2^N to unsigned ones), as kernels use comparisons in arithmetic."""
    def wrapped(g: Gen, t: Type, depth: int) -> Expr | None:
        if _is_truth(t) or not t.elem.is_int:
            return build(g, t, depth)
        node = build(g, truth_type(t), depth)
        return None if node is None else Op("convert", (node,), t)
    wrapped.__doc__ = build.__doc__
    return wrapped


@expression("compare")
@truth_valued
def _compare(g: Gen, t: Type, depth: int) -> Expr | None:
    """Two scalars of any types (the usual arithmetic conversions apply), two vectors of one type,
    or a vector beside a scalar of its element type."""
    if not _is_truth(t):
        return None
    a = _operand_types(g, t)
    if a is None:
        return None
    if t.is_vector:
        x, y = a, g.maybe_scalar(a)
        x, y = (x, y) if g.b.chance(0.5) else (y, x)
    else:
        x, y = a, Type(g.rnd.choice(g.b.types))
    attrs = (("operator", g.rnd.choice(("==", "!=", "<", "<=", ">", ">="))),)
    return Op("compare", (g.expr(x, depth), g.expr(y, depth)), t, attrs)


@expression("logic")
@truth_valued
def _logic(g: Gen, t: Type, depth: int) -> Expr | None:
    if not _is_truth(t):
        return None
    a = _operand_types(g, t)
    if a is None:
        return None
    y = g.maybe_scalar(a) if t.is_vector else Type(g.rnd.choice(g.b.types))
    return Op("logic", (g.expr(a, depth), g.expr(y, depth)), t, (("operator", g.rnd.choice(("&&", "||"))),))


@expression("not")
@truth_valued
def _not(g: Gen, t: Type, depth: int) -> Expr | None:
    a = _operand_types(g, t) if _is_truth(t) else None
    return None if a is None else Op("not", (g.expr(a, depth),), t)


def _any_all(name: str) -> Callable[[Gen, Type, int], Expr | None]:
    def build(g: Gen, t: Type, depth: int) -> Expr | None:
        """any/all of a signed integer vector (scalar arguments are deprecated in 3.0)."""
        if t != Type("int"):
            return None
        return Op(name, (g.expr(Type(g.rnd.choice(g.ints(signed=True)), g.rnd.choice(VECTORS)), depth),), t)
    return build


for _name in ("any", "all"):
    expression(_name)(truth_valued(_any_all(_name)))


def _relational(name: str, arity: int) -> Callable[[Gen, Type, int], Expr | None]:
    def build(g: Gen, t: Type, depth: int) -> Expr | None:
        a = _operand_types(g, t, floats_only=True) if _is_truth(t) else None
        return None if a is None else Op(name, tuple(g.expr(a, depth) for _ in range(arity)), t)
    return build


for _name, _arity, _ in RELATIONAL_BUILTINS:
    expression(_name)(truth_valued(_relational(_name, _arity)))


# ---- integer operators (§6.5.1, §6.5.6, §6.5.10) ------------------------------------------------


def _scalar_pair(g: Gen, t: Type) -> tuple[Type, Type] | None:
    """Two scalar operand types whose usual arithmetic conversion gives ``t``."""
    pairs = [(x, y) for x in g.b.types for y in g.b.types if common_type(x, y) == t.scalar]
    return tuple(Type(n) for n in g.rnd.choice(pairs)) if pairs else None


def _operand_pair(g: Gen, t: Type) -> tuple[Type, Type] | None:
    if not t.is_vector:
        return _scalar_pair(g, t)
    x, y = t, g.maybe_scalar(t)
    return (x, y) if g.b.chance(0.5) else (y, x)


def signed_limits(t: Type, operator: str) -> tuple[int, int]:
    """A range for each operand of a signed + - * in ``t`` that keeps the result in range."""
    bits = t.elem.bits - 2 if operator in "+-" else (t.elem.bits - 1) // 2
    return -(1 << bits), (1 << bits) - 1


@expression("arith")
def _arith(g: Gen, t: Type, depth: int) -> Expr | None:
    """+ - * (and & | ^ on integers); signed + - * get operands narrowed until no value overflows."""
    pair = _operand_pair(g, t)
    if pair is None:
        return None
    operator = g.rnd.choice(("+", "-", "*") + (("&", "|", "^") if t.elem.is_int else ()))
    x, y = (g.expr(a, depth) for a in pair)
    op = Op("arith", (x, y), t, (("operator", operator),))
    if t.elem.is_int and t.elem.signed and operator in "+-*" and may_overflow(op):
        lo, hi = signed_limits(t, operator)
        op = Op("arith", (narrow(x, lo, hi, g.rnd), narrow(y, lo, hi, g.rnd)), t, op.attrs)
    return op


def _int_result(t: Type) -> bool:
    return t.elem.is_int and (t.is_vector or promoted(t.scalar) == t.scalar)


@expression("div")
def _div(g: Gen, t: Type, depth: int) -> Expr | None:
    if not _int_result(t):
        return None
    pair = _operand_pair(g, t)
    if pair is None:
        return None
    return Op("div", tuple(g.expr(a, depth) for a in pair), t, (("operator", g.rnd.choice(("/", "%"))),))


@expression("shift")
def _shift(g: Gen, t: Type, depth: int) -> Expr | None:
    """Scalars: any integer left operand promoting to t and any integer count; vectors: a count of
    the same type, or its element type (§6.5.10)."""
    if not _int_result(t):
        return None
    if t.is_vector:
        x, count = t, g.maybe_scalar(t)
    else:
        x = Type(g.rnd.choice([n for n in g.ints() if promoted(n) == t.scalar]))
        count = Type(g.rnd.choice(g.ints()))
    return Op("shift", (g.expr(x, depth), g.expr(count, depth)), t, (("operator", g.rnd.choice(("<<", ">>"))),))


@expression("complement")
def _complement(g: Gen, t: Type, depth: int) -> Expr | None:
    if not _int_result(t):
        return None
    x = t if t.is_vector else Type(g.rnd.choice([n for n in g.ints() if promoted(n) == t.scalar]))
    return Op("complement", (g.expr(x, depth),), t)


# ---- integer built-ins (§6.15.3) ---------------------------------------------------------------


def _builtin(name: str, arity: int) -> Callable[[Gen, Type, int], Expr | None]:
    def build(g: Gen, t: Type, depth: int) -> Expr | None:
        if not t.elem.is_int:
            return None
        if name in ("abs", "abs_diff"):  # ugentype results
            if t.elem.signed:
                return None
            x = Type(g.rnd.choice((t.scalar, SIGNED_OF_BITS[t.elem.bits])), t.width)
            return Op(name, tuple(g.expr(x, depth) for _ in range(arity)), t)
        if name == "upsample":
            if t.elem.bits == 8:
                return None
            half = (SIGNED_OF_BITS if t.elem.signed else UNSIGNED_OF_BITS)[t.elem.bits // 2]
            lo = UNSIGNED_OF_BITS[t.elem.bits // 2]
            return Op(name, (g.expr(Type(half, t.width), depth), g.expr(Type(lo, t.width), depth)), t)
        if name in ("mul24", "mad24"):
            if t.scalar not in ("int", "uint"):
                return None
            lo, hi = (-(1 << 23), (1 << 23) - 1) if t.elem.signed else (0, (1 << 24) - 1)
            args = [narrow(g.expr(t, depth), lo, hi, g.rnd) for _ in range(2)]
            return Op(name, tuple(args) + ((g.expr(t, depth),) if name == "mad24" else ()), t)
        if name == "clamp":
            return _clamp(g, t, depth)
        types = [t] * arity
        if name in ("min", "max"):
            types[1] = g.maybe_scalar(t)
        return Op(name, tuple(g.expr(a, depth) for a in types), t)
    return build


def _clamp(g: Gen, t: Type, depth: int) -> Expr:
    """clamp(x, lo, hi) with lo <= hi for every input: sorted literals, or lo a leaf y and hi
    max(y, z) (the same leaf read twice has one value)."""
    bound = g.maybe_scalar(t)
    x = g.expr(t, depth)
    if g.b.chance(0.5):
        lanes = [sorted(g.b.draw_values(bound.scalar, 2)) for _ in range(bound.width)]
        lo, hi = (Literal(bound, tuple(_bits(bound, pair[i]) for pair in lanes)) for i in (0, 1))
        return Op("clamp", (x, lo, hi), t)
    y = g.b.operand(bound)
    return Op("clamp", (x, y, Op("max", (y, g.expr(bound, depth)), bound)), t)


def _bits(t: Type, value: int) -> int:
    return value & ((1 << t.elem.bits) - 1)


for _b in INTEGER_BUILTINS:
    expression(_b.name)(_builtin(_b.name, _b.arity))


# ---- conversions inside trees (§6.4) ------------------------------------------------------------


@expression("convert")
def _convert(g: Gen, t: Type, depth: int) -> Expr | None:
    src = Type(g.rnd.choice(g.b.types), t.width)
    attrs = []
    if t.elem.is_int and g.b.chance(g.b.policy.p_sat):
        attrs.append(("sat", True))
    if g.b.chance(g.b.policy.p_rounding):
        attrs.append(("rounding", g.rnd.choice(ROUNDINGS)))
    return Op("convert", (g.expr(src, depth),), t, tuple(sorted(attrs)))


@expression("as")
def _as(g: Gen, t: Type, depth: int) -> Expr | None:
    same = [n for n in g.b.types if scalar(n).bits == t.elem.bits]
    return Op("as", (g.expr(Type(g.rnd.choice(same), t.width), depth),), t)
