"""The reference interpreter: evaluates a Program's IR into expectations for every output lane.

It reads the IR directly (never an emitter's output). Each operation of :mod:`lang.ops` has a
reference (:data:`oracles.references.REFERENCES`) that maps the expectations of its operands to the expectation of
its result, lane by lane over all work-items at once. Lanes are laid out work-item major:
element ``i`` lane ``j`` is position ``i * width + j``.

``ftz`` is the float environment: the set of floating-point type names whose denormals the
device may flush (its FP config lacks CL_FP_DENORM, OpenCL C 3.0 §7.2), with the device's and the
program's flags (:mod:`oracles.math`: the profile, the OpenCL C version, what the build options
allow, :func:`lang.maths.build_flags`); it widens the allowed results as §7.5.3 and the options
say.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lang.ir import Expr, Literal, Load, Op, Program, Store, walk
from lang.layout import input_values
from lang.maths import build_flags
from lang.ops import OPS
from lang.types import Type, scalar
from oracles import rules
from oracles.atomics.histories import Histories, final_values
from oracles.atomics.histories import histories as histories_of
from oracles.expect import Expectation, concat
from oracles.math import engine
from oracles.math.bounds import CR_DIVIDE_SQRT
from oracles.math.lanewise import REFERENCE_ONLY
from oracles.math.specials import SPIRV_SPECIALS
from oracles.operands import UndefinedBehaviour, convert_to
from oracles.references import REFERENCES

__all__ = ["UndefinedBehaviour", "evaluate", "expected", "path_neutral", "rederive"]

SPIRV_READERS = frozenset({*SPIRV_SPECIALS, *CR_DIVIDE_SQRT, "convert"})
"""The operations whose references read the SPIR-V path (``spirv`` in the float environment): the
values only the SPIR-V environment prescribes (oracles.math.specials.SPIRV_SPECIALS), the build
option that makes float / and sqrt correctly rounded on the OpenCL C path only
(oracles.math.bounds.CR_DIVIDE_SQRT), and a saturated conversion's NaN rule (oracles.conversions)."""


def evaluate(expr: Expr, program: Program, inputs: dict[str, np.ndarray], ftz: frozenset,
             seen: dict[int, Expectation] | None = None) -> Expectation:
    """The expectation of ``expr`` for every work-item, ``global_size * width`` lanes. Given
    ``seen``, every operation's expectation is kept in it under ``id`` of its node (what
    :mod:`oracles.undefined` looks through). A lane computed from an operand lane that rests on a
    rule softer than its own is decided by that rule (:func:`resting`)."""
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
    args = [evaluate(a, program, inputs, ftz, seen) for a in expr.args]
    ref = REFERENCES[expr.op]
    if _reads_program(expr.op):  # an image read needs the image and its sampler
        out = ref(expr, args, n, ftz, program=program, inputs=inputs)
    else:
        out = ref(expr, args, n, ftz)
    computed = [a for a, e in zip(args, expr.args) if isinstance(e, Op)]  # a load or literal rests on no rule
    if computed and OPS[expr.op].lanes != "moved":
        out = resting(out, computed, n, OPS[expr.op].lanes)
    if seen is not None:
        seen[id(expr)] = out
    return out


def resting(out: Expectation, operands: list[Expectation], n: int, lanes: str = "each") -> Expectation:
    """``out`` with each judged lane computed from an operand lane that rests on a rule softer than
    the lane's own (rules.softness: a should, a tolerance, the letter) decided by that rule: an
    operation's result is prescribed only as far as its operands are, so a wrong value there breaks
    no more than that rule. OpenCL C 3.0.19 §6.4.3.3: a saturated conversion's NaN "should be
    converted to 0", so ``convert_double(convert_uchar_sat(NaN))`` is 0 only as that should says.
    Which operand lanes (lang.ops.LANES): ``each``, lane i of an operand of as many lanes, every lane
    of the work-item's operand of another width; ``whole``, every lane of the work-item's operands.
    Where several operand lanes rest on soft rules, the softest decides."""
    soft = rules.softness()
    m = len(out)
    best = rule = None
    for a in operands:
        ranks = np.where(a.judged, soft[a.rule], np.int8(0))
        if not ranks.any():
            continue
        if lanes == "each" and len(a) == m:
            r, which = ranks, a.rule
        else:  # the softest lane of the work-item's operand, for every lane of its result
            per, rules_of = ranks.reshape(n, -1), a.rule.reshape(n, -1)
            j = per.argmax(axis=1)
            r = np.repeat(per[np.arange(n), j], m // n)
            which = np.repeat(rules_of[np.arange(n), j], m // n)
        if best is None:  # an unjudged lane keeps its reason
            best, rule = np.where(out.judged, soft[out.rule], np.int8(127)), out.rule
        take = r > best
        best, rule = np.where(take, r, best), np.where(take, which, rule)
    return out if rule is None else replace(out, rule=rule.astype(np.int16))


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


def environment(program: Program, ftz: frozenset) -> frozenset:
    """The float environment of ``program`` on a device and path whose own flags are ``ftz``
    (fuzz.drivers.capabilities.ftz_for): with the flags of how the program is built."""
    return ftz | build_flags(program.options, program.requires)


def path_neutral(program: Program) -> bool:
    """Whether ``program``'s expectations are the same on a SPIR-V path as on the OpenCL C path:
    none of its operations reads the path (:data:`SPIRV_READERS`) and no store converts its value."""
    return all(s.value.type == program.buffer(s.buffer).type
               and not any(isinstance(n, Op) and n.op in SPIRV_READERS for n in walk(s.value))
               for s in program.body)


FLUSHED_TYPES = frozenset({"half", "float", "double"})
"""The flags of a float environment that name a floating type whose denormals the device may
flush (fuzz.drivers.capabilities.ftz_for): the only ones two environments may differ in for
:func:`ftz_neutral` statements to be shared between them."""


def _reads_program(op: str) -> bool:
    """Whether ``op``'s reference reads the program itself (an image read: its image and sampler)."""
    return getattr(REFERENCES[op], "reads_program", False)


def ftz_neutral(program: Program, statement: Store) -> bool:
    """Whether ``statement``'s expectations are the same whichever floating types a device flushes
    (OpenCL C 3.0.19 §7.2: flushing concerns floating-point values only): no value of its tree, nor
    the buffer it stores to, is of a floating type, and it reads no image (whose texels' flushing
    the environment decides, oracles.images.texels.may_flush)."""
    if statement.pointee or program.buffer(statement.buffer).type.elem.is_float:
        return False
    for n in walk(statement.value):
        elem = getattr(getattr(n, "type", None), "elem", None)
        if elem is None or elem.is_float or (isinstance(n, Op) and _reads_program(n.op)):
            return False
    return True


def expected(program: Program, ftz: frozenset = frozenset(), inputs: dict[str, np.ndarray] | None = None,
             histories: Histories | None = None, like: dict[str, Expectation] | None = None) -> dict[str, Expectation]:
    """Expectations for every output buffer, in memory lane order (like the device writes them),
    and every shared buffer's final values (from ``histories``, computed here when not given).
    ``ftz`` is the device's float environment; how the program is built (its options, its OpenCL C
    version) adds its flags (:func:`lang.maths.build_flags`). ``like``: the program's expectations
    in an environment that differs from ``ftz`` in :data:`FLUSHED_TYPES` only, whose outputs of
    :func:`ftz_neutral` statements are taken as they are."""
    inputs = input_values(program) if inputs is None else inputs
    env = environment(program, ftz)
    out = {}
    for s in program.body:
        if like is not None and ftz_neutral(program, s):
            out[s.buffer] = like[s.buffer]
            continue
        target = program.buffer(s.buffer).type
        value = evaluate(s.value, program, inputs, env)
        if s.value.type != target:
            value = resting(convert_to(value, s.value.type, target, env), [value], program.global_size)
        out[s.buffer] = _to_memory(value, target, program.global_size)
        if s.pointee:  # a math built-in's out-parameter (lang.maths), stored in its own buffer
            args = [evaluate(a, program, inputs, env) for a in s.value.args]
            second = resting(engine.outputs(s.value, args, program.global_size, env)[1], args, program.global_size)
            out[s.pointee] = _to_memory(second, program.buffer(s.pointee).type, program.global_size)
    if program.shared:
        out.update(final_values(histories or histories_of(program, inputs)))
    return out


def rederive(program: Program, ftz: frozenset = frozenset(),
             inputs: dict[str, np.ndarray] | None = None) -> dict[str, Expectation]:
    """:func:`expected` computed anew with the uncached exact reference: every math lane with
    mpmath, none decided by the filter in front of it (``oracles.math.fast``) or taken from the
    operand-set cache (``oracles.math.lanewise.lanewise_at``); the other areas have neither. What a
    disagreement is checked against before it is recorded (``campaign.rederive``)."""
    token = REFERENCE_ONLY.set(True)
    try:
        return expected(program, ftz, inputs)
    finally:
        REFERENCE_ONLY.reset(token)
