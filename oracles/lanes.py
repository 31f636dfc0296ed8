"""How references move and combine operand lanes (lane bookkeeping shared by the references of
:mod:`oracles.expressions` and :mod:`oracles.integers`).

Operations that move lanes (swizzles, literals, loads and stores, shuffles, selections) gather the
operands' expectations (:func:`gather`), so every candidate, NaN allowance and rule travels with
its lane. Operations that compute apply their function to every combination of the operands'
candidates (:func:`combine`); a lane is judged where every operand lane it reads is judged.
"""

from __future__ import annotations

from itertools import product
from typing import Callable

import numpy as np

from lang.types import scalar
from oracles import rules
from oracles.expect import Expectation, as_bits, concat, is_nan_bits
from oracles.operands import MAX_CANDIDATES, flush_variants


def per_item(n: int, width: int, lanes: list[int] | np.ndarray) -> np.ndarray:
    """Indices of lanes ``lanes`` of every work-item of an operand of ``width`` lanes each."""
    return (np.arange(n)[:, None] * width + np.asarray(lanes, dtype=np.intp)[None, :]).ravel()


def unjudge(e: Expectation, mask: np.ndarray, rule: int) -> Expectation:
    """``e`` with the lanes of ``mask`` not judged, for the reason ``rule``."""
    if not mask.any():
        return e
    judged = e.judged & ~mask
    return Expectation(e.scalar, e.allowed, judged, e.any_nan, np.where(mask, np.int16(rule), e.rule))


def with_rule(e: Expectation, rule: int) -> Expectation:
    """The same lanes, decided by ``rule`` where they are judged (an unjudged lane keeps its reason,
    and a moved value that rests on a rule softer than ``rule`` keeps that rule: rules.softness).
    A NaN that an operation moves may come out as any NaN: its payload and sign are not specified
    (OpenCL C 3.0.19 §7.5.1, OpenCL SPIR-V environment §6.7.1), and devices do quiet signalling NaNs
    they copy."""
    any_nan = e.any_nan | is_nan_bits(e.allowed[0], e.scalar) if scalar(e.scalar).is_float else e.any_nan
    soft = rules.softness()
    keep = ~e.judged | (soft[e.rule] > soft[rule])
    return Expectation(e.scalar, e.allowed, e.judged, any_nan, np.where(keep, e.rule, np.int16(rule)))


def combine(fn: Callable[..., np.ndarray], operands: list[Expectation], out: str, rule: int,
            ftz: frozenset, *, nan_ok: bool = False) -> Expectation:
    """``fn`` applied lane-wise to every combination of the operands' candidates (the first
    combination gives the reference). Float operands of a type in ``ftz`` are also read flushed.
    A lane is judged where every operand is; a lane that may be any NaN makes the result unjudged
    unless ``nan_ok`` (the function does not look at a NaN's bits)."""
    judged = np.logical_and.reduce([o.judged for o in operands])
    if not nan_ok:
        judged = judged & ~np.logical_or.reduce([o.any_nan for o in operands])
    choices = []
    for o in operands:
        cands = o.candidates()
        s = scalar(o.scalar)
        if s.is_float and s.name in ftz:
            cands = cands + [v for c in cands for v in flush_variants(c, s)]
        choices.append(cands)
    outs = []
    with np.errstate(all="ignore"):
        for combo in product(*choices):
            outs.append(np.asarray(fn(*combo)).astype(scalar(out).dtype))
            if len(outs) >= MAX_CANDIDATES:
                break
    base = Expectation(out, [as_bits(outs[0])], judged, np.zeros(len(judged), bool),
                       np.where(judged, np.int16(rule), _first_rule(operands)))
    return base.with_alternatives([as_bits(o) for o in outs[1:]])


def _first_rule(operands: list[Expectation]) -> np.ndarray:
    """For an unjudged lane, the rule of the first operand that is unjudged there (it says why)."""
    rule = operands[0].rule.copy()
    for o in reversed(operands):
        rule = np.where(o.judged, rule, o.rule)
    return rule


def gather(parts: list[Expectation], index: np.ndarray) -> Expectation:
    """Lanes of several expectations of one type (numbered one after another), gathered."""
    return concat(parts).select(index) if len(parts) > 1 else parts[0].select(index)
