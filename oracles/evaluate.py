"""The reference interpreter: evaluates a Program's IR into expectations for every output lane.

It reads the IR directly (never an emitter's output). Each operation of :mod:`fuzz.ops` has a
reference here (``REFERENCES``) that maps the expectations of its operands to the expectation of
its result, lane by lane over all work-items at once. Lanes are laid out work-item major:
element ``i`` lane ``j`` is position ``i * width + j``.

``ftz`` is the float environment: the set of floating-point type names whose denormals the
device may flush (its FP config lacks CL_FP_DENORM, OpenCL C 3.0 §7.2), with the device's and the
program's flags (:mod:`oracles.maths`: the profile, the OpenCL C version, what the build options
allow, :func:`fuzz.maths.option_flags`); it widens the allowed results as §7.5.3 and the options
say.
"""

from __future__ import annotations

from itertools import product
from typing import Callable

import numpy as np

from fuzz.ir import Expr, Literal, Load, Op, Program
from fuzz.layout import input_values
from fuzz.maths import FUNCTIONS, option_flags
from fuzz.ops import Handlers
from fuzz.types import Scalar, Type, common_type, scalar
from oracles import conversions, maths, rules
from oracles.expect import Expectation, as_bits, concat


class UndefinedBehaviour(AssertionError):
    """The program reached a case the spec leaves undefined: a generator bug, never a report."""


Reference = Callable[[Op, list[Expectation], int, frozenset], Expectation]
REFERENCES: Handlers[Reference] = Handlers()

MAX_CANDIDATES = 16


reference = REFERENCES.register


def _broadcast(e: Expectation, width: int) -> Expectation:
    """A scalar expectation replicated into ``width`` lanes per work-item."""
    if width == 1:
        return e
    return e.select(np.repeat(np.arange(len(e)), width))


@reference("convert")
def _convert(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§6.4.3: lane-wise conversion with the requested saturation and rounding."""
    return conversions.expect_convert(
        args[0], op.type.scalar, saturate=bool(op.attr("sat")), rounding=op.attr("rounding"), ftz=ftz
    )


@reference("cast")
def _cast(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§6.4.2: a cast converts the value (rtz to integers, rte to floats) and replicates a scalar."""
    return _convert_to(args[0], op.args[0].type, op.type, ftz)


RULE_AS_SAME = rules.register(
    "as.bits",
    "as_T with the same number of elements copies the bits unchanged",
    "OpenCL C 3.0 §6.4.4",
)
RULE_AS_4_TO_3 = rules.register(
    "as.4to3",
    "as_T from a 4-component to a 3-component type passes the bits of the first three lanes through",
    "OpenCL C 3.0 §6.4.4",
)


@reference("as")
def _as(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """§6.4.4: same lane count copies bits; 4 -> 3 lanes keeps xyz; other lane counts are
    implementation-defined (never judged). A lane that may be any NaN has unspecified bits."""
    src_t, dst_t = op.args[0].type, op.type
    arg = args[0]
    dst = scalar(dst_t.scalar)
    if src_t.width == dst_t.width or (src_t.width == 4 and dst_t.width == 3):
        if src_t.width == dst_t.width:
            keep = np.arange(len(arg))
            rule = RULE_AS_SAME
        else:
            keep = (np.arange(n)[:, None] * 4 + np.arange(3)[None, :]).ravel()
            rule = RULE_AS_4_TO_3
        sel = arg.select(keep)
        return Expectation(
            dst.name,
            [a.view(dst.bits_dtype) for a in sel.allowed],
            sel.judged & ~sel.any_nan,
            np.zeros(len(sel), bool),
            np.full(len(sel), rule, np.int16),
        )
    lanes = n * dst_t.width
    return Expectation(dst.name, [np.zeros(lanes, dst.bits_dtype)], np.zeros(lanes, bool), np.zeros(lanes, bool))


def arith_is_defined(operator: str, a: str, b: str) -> bool:
    """Whether ``a op b`` is defined for *every* pair of operand values (no signed overflow)."""
    c = scalar(common_type(a, b))
    if c.is_float or not c.signed:
        return True
    lo_a, hi_a = scalar(a).min, scalar(a).max
    lo_b, hi_b = scalar(b).min, scalar(b).max
    if operator == "+":
        extremes = [lo_a + lo_b, hi_a + hi_b]
    elif operator == "-":
        extremes = [lo_a - hi_b, hi_a - lo_b]
    else:
        extremes = [x * y for x in (lo_a, hi_a) for y in (lo_b, hi_b)]
    return c.min <= min(extremes) and max(extremes) <= c.max


RULE_ARITH_FLOAT = rules.register(
    "arith.float.correctly_rounded",
    "x + y, x - y and x * y are correctly rounded (0 ulp) in round-to-nearest-even",
    "OpenCL C 3.0 §7.4 Table 65; §7.1 default rounding",
)
RULE_ARITH_UNSIGNED = rules.register(
    "arith.unsigned.wrap",
    "unsigned arithmetic is reduced modulo 2^N",
    "C99 §6.2.5p9 (OpenCL C 3.0 §6.5.1)",
)
RULE_ARITH_SIGNED = rules.register(
    "arith.signed.exact",
    "signed arithmetic that cannot overflow gives the exact result",
    "C99 §6.5.5-6.5.6 (OpenCL C 3.0 §6.5.1)",
)


def _float_op(operator: str, x: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    """Correctly rounded + - * on a float type. binary32 and binary16 are computed in binary64
    and rounded once more: with 53 >= 2p + 2 bits the double rounding is innocuous
    (Figueroa, 'When is double rounding innocuous?', 1995), so the result is correctly rounded."""
    dtype = scalar(name).dtype
    with np.errstate(all="ignore"):
        a, b = x.astype(np.float64), y.astype(np.float64)
        r = a + b if operator == "+" else a - b if operator == "-" else a * b
        return r.astype(dtype)


def flush_variants(values: np.ndarray, s: Scalar) -> list[np.ndarray]:
    """A float operand as a device that flushes denormals may read it (004 §7.2, §7.5.3): each
    subnormal as +0 and as -0 (the sign of a flushed zero is unspecified, DIGEST §11.1 item 6)."""
    with np.errstate(all="ignore"):
        tiny = (np.abs(values.astype(np.float64)) < 2.0**s.min_exp) & (values != 0)
    if not tiny.any():
        return []
    return [np.where(tiny, np.array(z, s.dtype), values) for z in (0.0, -0.0)]


def _flush_result(values: np.ndarray, name: str, exact: np.ndarray | None = None) -> list[np.ndarray]:
    """The ±0 alternatives for lanes whose result is subnormal before rounding (§7.5.3 case 2/4)."""
    s = scalar(name)
    probe = values if exact is None else exact
    with np.errstate(all="ignore"):
        tiny = (np.abs(probe.astype(np.float64)) < 2.0**s.min_exp) & (probe != 0)
    if not tiny.any():
        return []
    return [np.where(tiny, np.array(z, s.dtype), values) for z in (0.0, -0.0)]


RULE_BITWISE = rules.register(
    "arith.bitwise",
    "& | ^ act on the bits of the operands after the usual arithmetic conversions",
    "OpenCL C 3.0 §6.5.6",
)

_INT_OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and, "|": np.bitwise_or,
            "^": np.bitwise_xor}


@reference("arith")
def _arith(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """x op y: both operands convert to the common type (§6.4.1, C99 §6.3.1.8), a scalar beside a
    vector is widened (§6.5.1), then the operation is applied in that type. Signed + - * must not
    overflow (the strategies bound the operands): an overflow in a judged lane is a generator bug."""
    operator = op.attr("operator")
    c = scalar(op.type.scalar)
    operands = converted_operands(op, args, op.type, ftz)
    judged = operands[0].judged & operands[1].judged
    outs: list[np.ndarray] = []
    if c.is_float:
        if maths.flushable(c.name, ftz):  # a subnormal operand may be read as a zero of either sign (§7.5.3)
            choices = [[v for x in o.candidates() for v in [x, *flush_variants(x, c)]] for o in operands]
        else:
            choices = [o.candidates() for o in operands]
        for x, y in product(*choices):
            r = _float_op(operator, x, y, c.name)
            outs.append(r)
            if maths.flushable(c.name, ftz):
                with np.errstate(all="ignore"):
                    wide = _float_op(operator, x, y, "double")
                outs.extend(_flush_result(r, c.name, wide))
        rule = RULE_ARITH_FLOAT
    else:
        x, y = operands[0].reference, operands[1].reference
        with np.errstate(all="ignore"):
            if not c.signed or operator in "&|^":  # unsigned wraps modulo 2^N (C99 §6.2.5p9)
                result = _INT_OPS[operator](x, y)
            else:  # exact in int64 for 32 bits and less, in Python integers for long
                wide = np.int64 if c.bits <= 32 else object
                exact = _INT_OPS[operator](x.astype(wide), y.astype(wide))
                if (judged & ((exact < c.min) | (exact > c.max))).any():
                    raise UndefinedBehaviour(f"signed overflow in {op.type} {operator}")
                result = np.where(judged, exact, 0).astype(c.dtype)
        outs.append(result.astype(c.dtype))
        rule = RULE_BITWISE if operator in "&|^" else RULE_ARITH_SIGNED if c.signed else RULE_ARITH_UNSIGNED
    any_nan = np.zeros(len(judged), bool)
    if c.is_float:
        any_nan = np.isnan(outs[0]) | operands[0].any_nan | operands[1].any_nan
        judged = judged & maths.relaxed_judged(c.name, ftz, [o.reference for o in operands], outs[0], any_nan)
        if "unsafe" in ftz:  # signed zeros are not significant (-cl-no-signed-zeros, implied)
            outs.append(np.where(outs[0] == 0, -outs[0], outs[0]).astype(c.dtype))
    base = Expectation(c.name, [as_bits(outs[0])], judged, any_nan, np.full(len(judged), rule, np.int16))
    return base.with_alternatives([as_bits(o) for o in outs[1:MAX_CANDIDATES]])


def converted_operands(op: Op, args: list[Expectation], t: Type, ftz: frozenset) -> list[Expectation]:
    """The operands of a binary operator brought to type ``t``: converted to its element type as
    implicit conversions do (rte to floats, §6.4.3.2) and, a scalar beside a vector, widened."""
    return [widen(conversions.expect_convert(e, t.scalar, ftz=ftz), a.type, t) for a, e in zip(op.args, args)]


def widen(e: Expectation, t: Type, target: Type) -> Expectation:
    """An operand of type ``t`` as lanes of ``target``: a scalar beside a vector is replicated
    (OpenCL C 3.0 §6.5.1 and the other binary operators: "widened to a vector that has the same
    number of components")."""
    return _broadcast(e, target.width) if t.width == 1 and target.width > 1 else e


def evaluate(expr: Expr, program: Program, inputs: dict[str, np.ndarray], ftz: frozenset) -> Expectation:
    """The expectation of ``expr`` for every work-item, ``global_size * width`` lanes."""
    n = program.global_size
    if isinstance(expr, Load):
        values = inputs[expr.buffer]
        if expr.type.width == 3:  # drop the padding lane of each 3-vector (§6.3.5)
            values = values.reshape(n, 4)[:, :3].ravel()
        return Expectation.exact(expr.type.scalar, values)
    if isinstance(expr, Literal):
        elem = expr.type.elem
        bits = np.tile(np.array(expr.bits, dtype=np.uint64).astype(elem.bits_dtype), n)
        return Expectation.exact(elem.name, bits.view(elem.dtype))
    args = [evaluate(a, program, inputs, ftz) for a in expr.args]
    ref = REFERENCES[expr.op]
    if getattr(ref, "reads_program", False):  # an image read needs the image and its sampler
        return ref(expr, args, n, ftz, program=program, inputs=inputs)
    return ref(expr, args, n, ftz)


def _convert_to(value: Expectation, value_t: Type, target_t: Type, ftz: frozenset) -> Expectation:
    """A value converted as by a cast or an assignment (§6.4.1, §6.4.2, §6.5.15): default
    rounding, and a scalar replicated into every lane of a vector target."""
    converted = conversions.expect_convert(value, target_t.scalar, ftz=ftz)
    return converted if value_t.width == target_t.width else _broadcast(converted, target_t.width)


def _to_memory(e: Expectation, t: Type, n: int) -> Expectation:
    """Lanes in memory order; a 3-vector's fourth (padding) lane is never judged."""
    if t.width != 3:
        return e
    pad = Expectation(e.scalar, [np.zeros(n, scalar(e.scalar).bits_dtype)], np.zeros(n, bool), np.zeros(n, bool))
    merged = concat([e, pad])
    gather = np.empty((n, 4), dtype=np.intp)
    gather[:, :3] = np.arange(3 * n).reshape(n, 3)
    gather[:, 3] = 3 * n + np.arange(n)
    return merged.select(gather.ravel())


def expected(program: Program, ftz: frozenset = frozenset(), inputs: dict[str, np.ndarray] | None = None,
             histories: "atomics.Histories | None" = None) -> dict[str, Expectation]:
    """Expectations for every output buffer, in memory lane order (like the device writes them),
    and every shared buffer's final values (from ``histories``, computed here when not given).
    ``ftz`` is the device's float environment; the program's build options add their flags."""
    inputs = input_values(program) if inputs is None else inputs
    env = ftz | option_flags(program.options)
    out = {}
    for s in program.body:
        target = program.buffer(s.buffer).type
        value = evaluate(s.value, program, inputs, env)
        if s.value.type != target:
            value = _convert_to(value, s.value.type, target, env)
        out[s.buffer] = _to_memory(value, target, program.global_size)
        if s.pointee:  # a math built-in's out-parameter (fuzz.maths), stored in its own buffer
            args = [evaluate(a, program, inputs, env) for a in s.value.args]
            second = maths.outputs(s.value, args, program.global_size, env)[1]
            out[s.pointee] = _to_memory(second, program.buffer(s.pointee).type, program.global_size)
    if program.shared:
        out.update(atomics.final_values(histories or atomics.histories(program, inputs)))
    return out


def _math(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """A math, common or geometric built-in, or / on floats (oracles.maths): its result."""
    return maths.outputs(op, args, n, ftz)[0]


for _name in FUNCTIONS:
    reference(_name)(_math)

from oracles import atomics, expressions, images, spirv_only  # noqa: E402,F401  (register the references of their operations)
