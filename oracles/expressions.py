"""References of the expression operations (``lang.ops`` area ``expressions``): vector components,
vector literals, vloadn/vstoren, shuffles, selections, relational, equality and logical operators,
relational built-ins (OpenCL C 3.0 §6.3.6-7, §6.5.4-9, §6.15.6-7, §6.15.13). The integer operators
and built-ins of the area are in :mod:`oracles.integers`.

Operations that move lanes (swizzles, literals, loads and stores, shuffles, selections) gather the
operands' expectations, so every candidate, NaN allowance and rule travels with its lane.
Operations that compute apply their function to every combination of the operands' candidates
(:func:`oracles.lanes.combine`); a lane is judged where every operand lane it reads is judged.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from lang.ir import InvalidProgram, Op
from lang.ops import RELATIONAL_BUILTINS, Handlers
from lang.types import Type, operand_type, scalar, truth_type
from oracles import rules
from oracles.expect import Expectation, as_bits, is_nan_bits
from oracles.lanes import combine, gather, per_item, unjudge, with_rule
from oracles.operands import Reference, converted_operands, ternary_type, widen

REFERENCES: Handlers[Reference] = Handlers()
"""The references of this module, by operation name (assembled in oracles.references)."""
reference = REFERENCES.register

_S = "OpenCL C 3.0"


def _rule(key: str, text: str, section: str, leaves: str = "") -> int:
    return rules.register(key, text, f"{_S} {section}", leaves=leaves)


RULE_COMPONENTS = _rule("vector.components", "a component selection, vector literal, vloadn, vstoren or "
                        "shuffle copies the lanes it names, bits unchanged", "§6.3.6, §6.3.7, §6.15.7, §6.15.13")
RULE_UNDEFINED_LANE = _rule("vector.undefined_lane", "the w lane of a 3-component vector read through .hi or "
                            ".odd is undefined (not judged)", "§6.3.7 ('with the value in the w component undefined'; "
                            "neither shall nor should)", leaves="undefined")
RULE_UNWRITTEN = _rule("vstore.unwritten", "lanes of an output element that vstoren does not write are "
                       "not judged", "§6.15.7")
RULE_SELECT = _rule("select.msb", "select and vector ?: take b (the second expression) where the MSB of "
                    "the condition lane is set, a scalar condition where it is nonzero", "§6.15.6, §6.5.9")
RULE_BITSELECT = _rule("bitselect.bits", "bitselect takes each bit from b where c's bit is 1, else from a",
                       "§6.15.6")
RULE_TRUTH = _rule("truth.values", "relational, equality, logical and ! operators and the is* built-ins give "
                   "1/0 for scalars and -1/0 per lane for vectors; ordered comparisons are false with a NaN, "
                   "!= and isnotequal true", "§6.5.4-§6.5.8, §6.15.6")
RULE_ANY_ALL = _rule("any_all.msb", "any / all test the MSB of each lane and give int 1 or 0", "§6.15.6")


# ---- vector components, literals, loads and stores, shuffles (§6.3.6, §6.3.7, §6.15.7, §6.15.13) --


@reference("swizzle")
def _swizzle(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """The named components; index ``w`` of a 3-vector is the undefined w lane (.hi, .odd)."""
    w = op.args[0].type.width
    comps = np.array(op.attr("components"))
    index = per_item(n, w, np.minimum(comps, w - 1))
    out = with_rule(args[0].select(index), RULE_COMPONENTS)
    undefined = np.tile(comps >= w, n)
    return unjudge(out, undefined, RULE_UNDEFINED_LANE)


@reference("insert")
def _insert(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """``v.comps = value``: the named lanes of the variable take the value's lanes in order."""
    w, k = op.type.width, op.args[1].type.width
    lanes = np.arange(w)
    source = np.tile(lanes, (n, 1)) + (np.arange(n) * w)[:, None]
    for j, c in enumerate(op.attr("components")):
        source[:, c] = n * w + np.arange(n) * k + j
    return with_rule(gather([args[0], args[1]], source.ravel()), RULE_COMPONENTS)


@reference("vec")
def _vec(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """(Tn)(parts): the parts' lanes in order; a single scalar is replicated (§6.3.6)."""
    width = op.type.width
    if len(args) == 1:
        return with_rule(widen(args[0], op.args[0].type, op.type), RULE_COMPONENTS)
    offsets = np.cumsum([0] + [n * a.type.width for a in op.args])
    index = np.concatenate([offsets[i] + per_item(n, a.type.width, range(a.type.width)).reshape(n, -1)
                            for i, a in enumerate(op.args)], axis=1).ravel()
    assert index.size == n * width
    return with_rule(gather(args, index), RULE_COMPONENTS)


@reference("vload")
def _vload(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """vloadn(offset, p): the n scalars at p + offset * n, p the first scalar of the element."""
    m, k, o = op.args[0].type.width, op.type.width, op.attr("offset")
    return with_rule(args[0].select(per_item(n, m, range(o * k, o * k + k))), RULE_COMPONENTS)


@reference("vstore")
def _vstore(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """vstoren(value, offset, p): lanes offset*n .. offset*n+n-1 of the element; the others are not
    written by the program and are not judged."""
    m, k, o = op.type.width, op.args[0].type.width, op.attr("offset")
    value = args[0]
    s = scalar(value.scalar)
    pad = Expectation(s.name, [np.zeros(n, s.bits_dtype)], np.zeros(n, bool), np.zeros(n, bool),
                      np.full(n, RULE_UNWRITTEN, np.int16))
    index = np.full((n, m), n * k, dtype=np.intp) + np.arange(n)[:, None]
    index[:, o * k:o * k + k] = per_item(n, k, range(k)).reshape(n, k)
    return with_rule(gather([value, pad], index.ravel()), RULE_COMPONENTS)


def _mask_index(mask: Expectation, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """The lane each mask lane names (its low ``bits`` bits) and where that is certain."""
    values, ok = mask.certain()
    return (as_bits(values) & ((1 << bits) - 1)).astype(np.intp), ok


@reference("shuffle")
@reference("shuffle2")
def _shuffle(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """Result lane i is lane ``mask[i] mod m`` of x (shuffle) or of x ++ y (shuffle2, mod 2m): only
    the low ilogb(2m-1) bits (one more for shuffle2) of each mask lane count (§6.15.13)."""
    m, k = op.args[0].type.width, op.type.width
    sources = args[:-1]
    bits = int(np.log2(m)) + (len(sources) - 1)
    lane, ok = _mask_index(args[-1], bits)
    lane = lane.reshape(n, k)
    item = np.arange(n)[:, None]
    index = np.where(lane < m, item * m + lane, n * m + item * m + (lane - m)).ravel()
    out = with_rule(gather(sources, index), RULE_COMPONENTS)
    return unjudge(out, ~ok, RULE_COMPONENTS)


def _choose(cond: Expectation, cond_type: Type, on_true: Expectation, on_false: Expectation, n: int,
            width: int) -> Expectation:
    """Lane-wise ``cond ? on_true : on_false`` where a vector condition's lane is true when its MSB
    is set and a scalar one when it is nonzero (§6.15.6 select, §6.5.9)."""
    values, ok = widen(cond, cond_type, Type(cond_type.scalar, width)).certain()
    if cond_type.is_vector:  # the MSB of each lane, whatever the signedness
        truth = (as_bits(values) >> (scalar(cond.scalar).bits - 1)).astype(bool)
    else:
        truth = values != 0
    lanes = np.arange(n * width)
    out = gather([on_false, on_true], np.where(truth, lanes + n * width, lanes))
    out = with_rule(out, RULE_SELECT)
    return unjudge(out, ~ok, RULE_SELECT)


@reference("select")
def _select(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    a, b, c = args
    return _choose(c, op.args[2].type, b, a, n, op.type.width)


@reference("ternary")
def _ternary(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """c ? x : y. Vectors: select(y, x, c) (OpenCL C 3.0.19 §6.5.9). Scalars follow C99 (§6.5.9: "the C99
    rules for ternary operator are followed"), whose result has the type of the usual arithmetic
    conversions of x and y (C99 §6.5.15p5): ``op.type`` must be that type, and x and y of it (a
    char ? char : char node would be an int in OpenCL C)."""
    if not op.type.is_vector and not (op.args[1].type == op.args[2].type == op.type
                                      == ternary_type(op.args[1].type, op.args[2].type)):
        raise InvalidProgram(f"scalar ?: on {op.args[1].type} and {op.args[2].type} has type "
                             f"{ternary_type(op.args[1].type, op.args[2].type)} (C99 §6.5.15p5), not {op.type}")
    c, x, y = args
    return _choose(c, op.args[0].type, x, y, n, op.type.width)


@reference("bitselect")
def _bitselect(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """(a & ~c) | (b & c) on the bit patterns (floats included, §6.15.6). A NaN operand's bits are
    not specified (a device may quiet it on the way, OpenCL SPIR-V environment §6.7.1): those lanes
    are not judged."""
    def bits(a, b, c):
        a, b, c = as_bits(a), as_bits(b), as_bits(c)
        return ((a & ~c) | (b & c)).view(op.type.elem.dtype)
    out = combine(bits, args, op.type.scalar, RULE_BITSELECT, frozenset())
    if not op.type.elem.is_float:
        return out
    nan = np.logical_or.reduce([is_nan_bits(a.allowed[0], a.scalar) for a in args])
    return unjudge(out, nan, RULE_BITSELECT)


# ---- truth values (§6.5.4-§6.5.8, §6.15.6) -----------------------------------------------------


def _truth(values: np.ndarray, operand: Type) -> np.ndarray:
    """Booleans as the operator's result: int 1/0 for scalar operands, -1/0 lanes for vectors."""
    t = truth_type(operand)
    return np.where(values, -1 if operand.is_vector else 1, 0).astype(t.elem.dtype)


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
            ">=": np.greater_equal}


@reference("compare")
def _compare(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """The operands are brought to one type (§6.5.4, §6.5.5), which also sizes the result."""
    t = operand_type(*(a.type for a in op.args))
    operands = converted_operands(op, args, t, ftz)
    fn = _COMPARE[op.attr("operator")]
    return combine(lambda x, y: _truth(fn(x, y), t), operands, op.type.scalar, RULE_TRUTH, ftz, nan_ok=True)


@reference("logic")
def _logic(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """&& / ||: each operand compares unequal to 0 in its own type (§6.5.7)."""
    t = op.args[0].type if op.args[0].type.is_vector else op.args[1].type
    operands = [widen(e, a.type, t) for a, e in zip(op.args, args)]
    both = np.logical_and if op.attr("operator") == "&&" else np.logical_or
    return combine(lambda x, y: _truth(both(x != 0, y != 0), t), operands, op.type.scalar, RULE_TRUTH, ftz,
                   nan_ok=True)


@reference("not")
def _not(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    t = op.args[0].type
    return combine(lambda x: _truth(x == 0, t), args, op.type.scalar, RULE_TRUTH, ftz, nan_ok=True)


@reference("any")
@reference("all")
def _any_all(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """1 if the MSB of any (all) lanes is set, else 0 (§6.15.6)."""
    w = op.args[0].type.width
    fold = np.any if op.op == "any" else np.all
    values, ok = args[0].certain()
    out = fold((values < 0).reshape(n, w), axis=1).astype(np.int32)
    judged = ok.reshape(n, w).all(axis=1)
    return Expectation("int", [as_bits(out)], judged, np.zeros(n, bool),
                       np.where(judged, np.int16(RULE_ANY_ALL), args[0].rule.reshape(n, w)[:, 0]))


_RELATIONAL: dict[str, Callable[..., np.ndarray]] = {
    "isequal": np.equal, "isnotequal": np.not_equal, "isgreater": np.greater, "isgreaterequal": np.greater_equal,
    "isless": np.less, "islessequal": np.less_equal,
    "islessgreater": lambda x, y: np.less(x, y) | np.greater(x, y),
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
    "isordered": lambda x, y: ~(np.isnan(x) | np.isnan(y)), "isunordered": lambda x, y: np.isnan(x) | np.isnan(y),
    "signbit": np.signbit,
}


def _isnormal(x: np.ndarray) -> np.ndarray:
    s_min = np.finfo(x.dtype).tiny
    with np.errstate(all="ignore"):
        return np.isfinite(x) & (np.abs(x) >= s_min)


_RELATIONAL["isnormal"] = _isnormal
assert set(_RELATIONAL) == {name for name, _, _ in RELATIONAL_BUILTINS}


def _relational(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """Table 18; signbit reads the sign of a NaN, which is unspecified: such lanes are not judged."""
    t = op.args[0].type
    fn = _RELATIONAL[op.op]
    return combine(lambda *xs: _truth(fn(*xs), t), args, op.type.scalar, RULE_TRUTH, ftz,
                   nan_ok=op.op != "signbit")


for _name in _RELATIONAL:
    reference(_name)(_relational)
