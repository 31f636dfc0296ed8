"""The audit's operations that convert, move, select and compare values (triage.audit), from
OpenCL C 3.0.19 §6.3.6-§6.3.7, §6.4, §6.5.1 (+ - * & | ^ under the usual arithmetic conversions),
§6.5.4-§6.5.9, §6.15.6, §6.15.7 and §6.15.13, with no oracle code.

Every handler checks the IR's types against C's (audit.types): an expression the IR types
otherwise is reported, never evaluated as the IR says.
"""

from __future__ import annotations

from audit.base import Lanes, Registry, Unsupported, atype, check, implicit, msb, nonzero, relation, truth
from audit.convert import compute, convert_lane, float_arith, merge
from audit.integers import integer_arith
from audit.types import AType, NotOpenCL, c99_common, operands_type, truth_type
from audit.values import FORMATS, AuditLane, decode, exact_lane, is_float, is_nan, undefined_lane, width
from lang.ir import Load, Op

HANDLERS = Registry()
handles = HANDLERS.handles


# ---- conversions (§6.4) ---------------------------------------------------------------------------


@handles("convert")
def _convert(ev, op: Op, args: list[Lanes]) -> Lanes:
    src = op.args[0].type
    if src.width != op.type.width:
        raise NotOpenCL("convert_T needs the same number of lanes")
    return [convert_lane(lane, src.scalar, op.type.scalar, ev.env, bool(op.attr("sat")), op.attr("rounding"))
            for lane in args[0]]


@handles("cast")
def _cast(ev, op: Op, args: list[Lanes]) -> Lanes:
    """§6.4.2: a scalar cast converts (rtz to integers, rte to floats); a scalar to a vector is
    converted and replicated; vector casts are illegal."""
    src = atype(op.args[0].type)
    if src[1] > 1:
        raise NotOpenCL("explicit casts between vector types are illegal (§6.4.2)")
    return implicit(ev, args[0], src, atype(op.type))


@handles("as")
def _as(ev, op: Op, args: list[Lanes]) -> Lanes:
    """§6.4.4: the same number of lanes copies the bits; 4 lanes to 3 keeps the first three; any
    other change of lane count is implementation-defined. A NaN operand's bits are not specified."""
    src, dst = op.args[0].type, op.type
    if src.size != dst.size:
        raise NotOpenCL("as_T needs operand and result of the same size (§6.4.4)")
    if not (src.width == dst.width or (src.width == 4 and dst.width == 3)):
        return [undefined_lane(dst.scalar, "as_T between different lane counts is implementation-defined "
                                           "(§6.4.4)")] * dst.width
    out = []
    for lane in args[0][: dst.width]:
        if lane.undefined or lane.nan or len(lane.values) > 1 or lane.ranges:
            out.append(undefined_lane(dst.scalar, lane.undefined or "the operand's bits are not certain "
                                                  "(a NaN's payload and sign, or a flushed alternative)"))
        else:
            out.append(exact_lane(dst.scalar, lane.values[0]))
    return out


@handles("arith")
def _arith(ev, op: Op, args: list[Lanes]) -> Lanes:
    operator = op.attr("operator")
    t = operands_type(atype(op.args[0].type), atype(op.args[1].type))
    check(op, t)
    x = implicit(ev, args[0], atype(op.args[0].type), t)
    y = implicit(ev, args[1], atype(op.args[1].type), t)
    if is_float(t[0]):
        if operator not in "+-*":
            raise NotOpenCL(f"operator {operator} on floating types")
        out = [compute(lambda a, b: float_arith(operator, a, b, t[0], ev.env), [p, q], t[0], ev.env)
               for p, q in zip(x, y)]
        return _relaxed(ev, op, t[0], out)
    return [compute(lambda a, b: integer_arith(operator, a, b, t[0]), [p, q], t[0], ev.env) for p, q in zip(x, y)]


def _relaxed(ev, op: Op, s: str, out: Lanes) -> Lanes:
    """+ - * under the program's build options (audit.build): -cl-mad-enable (and unsafe math)
    may contract a*b+c (not audited); -cl-finite-math-only leaves no accuracy rule, and
    -cl-unsafe-math-optimizations none on OpenCL C 1.x builds or on double (Table 67 does not
    list + - *: float keeps Table 65's correct rounding); where the sign of zero is not
    significant, a zero result may be either zero. A NaN or infinite operand or result under
    unsafe or finite math is the evaluator's (audit.eval)."""
    build = ev.build
    if build.mad and op.attr("operator") in "+-" and any(
            isinstance(a, Op) and a.op == "arith" and a.attr("operator") == "*" for a in op.args):
        raise Unsupported("a*b+c that -cl-mad-enable or unsafe math may contract")
    why = build.voids_accuracy(s)
    if why:
        return [undefined_lane(s, why)] * len(out)
    if not build.no_signed_zeros:
        return out
    both = AuditLane(s, (0, 1 << (width(s) - 1)))
    return [merge(s, [lane, both]) if not lane.undefined and any(decode(b, s).is_zero for b in lane.values)
            else lane for lane in out]


# ---- lanes: components, literals, vloadn / vstoren, shuffles (§6.3.6, §6.3.7, §6.15.7, §6.15.13) ----


@handles("swizzle")
def _swizzle(ev, op: Op, args: list[Lanes]) -> Lanes:
    src = args[0]
    return [src[c] if c < len(src) else
            undefined_lane(op.type.scalar, "the w lane of a 3-component vector is undefined (§6.3.7)")
            for c in op.attr("components")]


@handles("insert")
def _insert(ev, op: Op, args: list[Lanes]) -> Lanes:
    base, value = list(args[0]), args[1]
    if op.args[0].type != op.type or op.args[1].type.scalar != op.type.scalar:
        raise NotOpenCL("an assignment to a swizzle needs exactly the component type (§6.3.7)")
    comps = op.attr("components")
    if len(set(comps)) != len(comps) or len(comps) != len(value):
        raise NotOpenCL("a swizzle l-value names distinct components, one per value lane (§6.3.7)")
    for c, lane in zip(comps, value):
        base[c] = lane
    return base


@handles("vec")
def _vec(ev, op: Op, args: list[Lanes]) -> Lanes:
    """(Tn)(parts): a single scalar is replicated; otherwise the parts' lanes in order (§6.3.6)."""
    elem = op.type.scalar
    if len(args) == 1 and op.args[0].type.width == 1:
        return implicit(ev, args[0], atype(op.args[0].type), atype(op.type))
    out: Lanes = []
    for part, lanes in zip(op.args, args):
        if part.type.width > 1 and part.type.scalar != elem:
            raise NotOpenCL("a vector literal's vector parts have the element type (§6.3.6)")
        out += implicit(ev, lanes, atype(part.type), (elem, part.type.width)) if part.type.width == 1 else lanes
    return out


@handles("vload")
def _vload(ev, op: Op, args: list[Lanes]) -> Lanes:
    """vloadn(offset, p): the n scalars at p + offset * n, p the first scalar of the element."""
    k, o = op.type.width, op.attr("offset")
    if not isinstance(op.args[0], Load):
        raise NotOpenCL("vloadn reads from memory: its operand is a load")
    src = args[0]
    return [src[i] if i < len(src) else undefined_lane(op.type.scalar, "vloadn reads past the element's lanes")
            for i in range(o * k, o * k + k)]


@handles("vstore")
def _vstore(ev, op: Op, args: list[Lanes]) -> Lanes:
    m, k, o = op.type.width, op.args[0].type.width, op.attr("offset")
    out = [undefined_lane(op.type.scalar, "a lane vstoren does not write (§6.15.7)")] * m
    out[o * k:o * k + k] = args[0]
    return out[:m]


@handles("shuffle", "shuffle2")
def _shuffle(ev, op: Op, args: list[Lanes]) -> Lanes:
    """Only the low ilogb(2m - 1) bits of each mask lane count, one more for shuffle2 (§6.15.13)."""
    m = op.args[0].type.width
    sources = [lane for a in args[:-1] for lane in a]
    bits = (2 * m - 1).bit_length() - 1 + (len(args) - 2)
    mask_t = op.args[-1].type
    if width(mask_t.scalar) != width(op.type.scalar) or is_float(mask_t.scalar):
        raise NotOpenCL("the mask is ugentype with the result's element width (§6.15.13)")
    out = []
    for lane in args[-1]:
        if lane.undefined or len(set(lane.values)) > 1:
            out.append(undefined_lane(op.type.scalar, lane.undefined or "the mask lane is not certain"))
        else:
            out.append(sources[lane.values[0] & ((1 << bits) - 1)])
    return out


# ---- selections (§6.5.9, §6.15.6) ------------------------------------------------------------------


def _choose(ev, cond: Lanes, cond_t: AType, on_true: Lanes, on_false: Lanes, n: int) -> Lanes:
    """Lane-wise selection: a vector condition's lane picks by its MSB, a scalar one by != 0."""
    out = []
    for i in range(n):
        c = cond[i] if cond_t[1] > 1 else cond[0]
        picks = set()
        if c.undefined or c.ranges:
            out.append(undefined_lane(on_true[i].scalar, c.undefined or "condition not certain"))
            continue
        for v in c.values:
            picks.add(msb(v, c.scalar) if cond_t[1] > 1 else nonzero(v, c.scalar))
        if len(picks) > 1:
            out.append(merge(on_true[i].scalar, [on_true[i], on_false[i]]))
        else:
            out.append(on_true[i] if picks.pop() else on_false[i])
    return out


@handles("select")
def _select(ev, op: Op, args: list[Lanes]) -> Lanes:
    t = atype(op.type)
    a = implicit(ev, args[0], atype(op.args[0].type), t)
    b = implicit(ev, args[1], atype(op.args[1].type), t)
    c_t = atype(op.args[2].type)
    if is_float(c_t[0]) or (t[1] > 1 and (c_t[1] != t[1] or width(c_t[0]) != width(t[0]))):
        raise NotOpenCL("select's c is an integer type with the lanes and lane size of a (§6.15.6)")
    return _choose(ev, args[2], c_t, b, a, t[1])


@handles("ternary")
def _ternary(ev, op: Op, args: list[Lanes]) -> Lanes:
    """§6.5.9: all scalars follow C99 (the result has the usual arithmetic conversion of the
    second and third operands); a vector result is select(exp3, exp2, exp1)."""
    t = atype(op.type)
    x_t, y_t, c_t = atype(op.args[1].type), atype(op.args[2].type), atype(op.args[0].type)
    if is_float(c_t[0]):
        raise NotOpenCL("the first expression of ?: is not a float (§6.5.9)")
    if t[1] == 1:
        check(op, (c99_common(x_t[0], y_t[0]), 1))
    x, y = implicit(ev, args[1], x_t, t), implicit(ev, args[2], y_t, t)
    return _choose(ev, args[0], c_t, x, y, t[1])


@handles("bitselect")
def _bitselect(ev, op: Op, args: list[Lanes]) -> Lanes:
    """(a & ~c) | (b & c) on the bits (§6.15.6); a NaN operand's bits are not specified."""
    s = op.type.scalar

    def one(a: int, b: int, c: int) -> AuditLane:
        if any(is_nan(v, s) for v in (a, b, c)):
            return undefined_lane(s, "a NaN operand's bits (payload and sign) are not specified")
        return AuditLane(s, ((a & ~c) | (b & c),))

    return [compute(one, list(lanes), s, ev.env, flush_operands=False) for lanes in zip(*args)]


# ---- truth values (§6.5.4-§6.5.8, §6.15.6) ----------------------------------------------------------

@handles("compare")
def _compare(ev, op: Op, args: list[Lanes]) -> Lanes:
    t = operands_type(atype(op.args[0].type), atype(op.args[1].type))
    check(op, truth_type(t))
    x = implicit(ev, args[0], atype(op.args[0].type), t)
    y = implicit(ev, args[1], atype(op.args[1].type), t)
    operator = op.attr("operator")
    return [compute(lambda a, b: truth(relation(operator, a, b, t[0]), t), [p, q], truth_type(t)[0], ev.env)
            for p, q in zip(x, y)]


@handles("logic")
def _logic(ev, op: Op, args: list[Lanes]) -> Lanes:
    """&& and ||: scalars compare each operand with 0 in its own type; with a vector, a scalar
    operand is converted to the element type and widened (§6.5.7)."""
    a_t, b_t = atype(op.args[0].type), atype(op.args[1].type)
    t = operands_type(a_t, b_t) if max(a_t[1], b_t[1]) > 1 else ("int", 1)
    check(op, truth_type(t))
    x, y = args
    if t[1] > 1:
        x, y = implicit(ev, x, a_t, t), implicit(ev, y, b_t, t)
    both = op.attr("operator") == "&&"
    out_t = truth_type(t)[0]

    def one(a: int, b: int, sa: str, sb: str) -> AuditLane:
        p, q = nonzero(a, sa), nonzero(b, sb)
        return truth((p and q) if both else (p or q), t)

    return [compute(lambda a, b, p=p, q=q: one(a, b, p.scalar, q.scalar), [p, q], out_t, ev.env)
            for p, q in zip(x, y)]


@handles("not")
def _not(ev, op: Op, args: list[Lanes]) -> Lanes:
    t = atype(op.args[0].type)
    check(op, truth_type(t))
    return [compute(lambda a, lane=lane: truth(not nonzero(a, lane.scalar), t), [lane], truth_type(t)[0], ev.env)
            for lane in args[0]]


@handles("any", "all")
def _any_all(ev, op: Op, args: list[Lanes]) -> Lanes:
    """1 if the MSB of any (all) lanes is set, else 0 (§6.15.6)."""
    s = op.args[0].type.scalar
    if is_float(s):
        raise NotOpenCL("any/all take integer vectors")
    flags = []
    for lane in args[0]:
        if lane.undefined or len({msb(v, s) for v in lane.values}) > 1:
            return [undefined_lane("int", lane.undefined or "an operand lane is not certain")]
        flags.append(msb(lane.values[0], s))
    return [AuditLane("int", (int((any if op.op == "any" else all)(flags)),))]


_RELATIONAL = {"isequal": "==", "isnotequal": "!=", "isgreater": ">", "isgreaterequal": ">=", "isless": "<",
               "islessequal": "<="}


def _classify(name: str, bits: list[int], s: str) -> bool | None:
    if name in _RELATIONAL:
        return relation(_RELATIONAL[name], bits[0], bits[1], s)
    rs = [decode(b, s) for b in bits]
    if name == "islessgreater":
        return relation("<", bits[0], bits[1], s) or relation(">", bits[0], bits[1], s)
    if name == "isordered":
        return all(r.kind != "nan" for r in rs)
    if name == "isunordered":
        return any(r.kind == "nan" for r in rs)
    r = rs[0]
    if name == "isfinite":
        return r.kind == "finite"
    if name == "isinf":
        return r.kind == "inf"
    if name == "isnan":
        return r.kind == "nan"
    if name == "isnormal":
        return r.kind == "finite" and abs(r.value) >= 2 ** FORMATS[s][1]
    if name == "signbit":
        return r.neg
    raise KeyError(name)


@handles(*_RELATIONAL, "islessgreater", "isordered", "isunordered", "isfinite", "isinf", "isnan", "isnormal",
         "signbit")
def _relational(ev, op: Op, args: list[Lanes]) -> Lanes:
    """Table 18: int 1/0 for scalars, -1/0 lanes for vectors. signbit reads the sign bit: a
    loaded NaN's is its own, a NaN an operation produced has an unspecified sign (§7.5.1)."""
    t = atype(op.args[0].type)
    if not is_float(t[0]) or any(a.type != op.args[0].type for a in op.args):
        raise NotOpenCL("the relational built-ins take floating operands of one type")
    check(op, truth_type(t))
    out_t = truth_type(t)[0]

    def one(*bits: int) -> AuditLane:
        return truth(_classify(op.op, list(bits), t[0]), t)

    out = []
    for lanes in zip(*args):
        if op.op == "signbit" and lanes[0].nan:
            out.append(undefined_lane(out_t, "the sign of a NaN an operation produced is not specified (§7.5.1)"))
        else:
            out.append(compute(one, list(lanes), out_t, ev.env))
    return out
