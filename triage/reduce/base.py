"""What the reducer's passes share (the engine, triage.reduce.engine, and the pass modules of
triage.reduce.passes, whose PASSES table puts them in order): the :class:`Candidate` a pass
proposes, the reducer as a pass sees it (:class:`Reducing`), explicit input values, the simplest
value of an input class (:func:`simplest`) and the edits of a statement's expression tree
(:func:`paths`, :func:`replace_at`, :func:`with_statement`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator, Protocol

import numpy as np

from fuzz.drivers import Target
from lang.derive import restrict
from lang.ir import Expr, Fill, Op, Program, Store
from lang.types import scalar
from oracles import input_class


@dataclass(frozen=True)
class Candidate:
    """A program a pass proposes, with how the engine takes it (a bare :class:`Program` is a
    candidate with neither): kept when it shows the goal (triage.reduce.engine.Reducer.accepted)."""

    program: Program
    retarget: bool = False  # the ``culprit`` pass: its root operation, wrong on its own, becomes the goal
    defined: str = ""  # the ``defined`` pass: the buffer of the statement put in its defined form, whose lanes
    # the source left unjudged (undefined or implementation-defined): where they disagree, the goal moves to them


Candidates = Iterator[Program | Candidate]


class Reducing(Protocol):
    """The reducer as a pass sees it: the target the candidates run on (its fingerprint names the
    image formats it supports, its float environment the flushing) and what a program already run
    showed."""

    target: Target

    def known(self, program: Program) -> list[dict]:
        """Every disagreement row of ``program`` if the reducer has run it, else none (it is not run
        for the asking)."""
        ...


Pass = Callable[[Program, list[dict], Reducing], Candidates]
"""A pass: the candidates it proposes from a program, given the goal's rows on it and the reducer
(triage.reduce.passes.PASSES names each and puts them in order)."""


def explicit(values: np.ndarray) -> Fill:
    """A fill giving exactly ``values`` (typed lanes, as lang.layout.input_values gives them)."""
    bits = np.ascontiguousarray(values).view(np.dtype(f"u{values.dtype.itemsize}"))
    return Fill(0, values=tuple(int(v) for v in bits))


def simplest(bits: int, scalar_name: str) -> int:
    """The simplest value of the input class of ``bits`` (oracles.classes), keeping its sign:
    what the ``values`` pass tries in place of a lane (and the ``texels`` pass in place of a
    texel's channel)."""
    s = scalar(scalar_name)
    value = np.array([bits], dtype=np.uint64).astype(s.bits_dtype).view(s.dtype)
    label = str(input_class(value, scalar_name)[0])
    if s.is_float:
        negative = bool(np.signbit(value[0]))
        sign = -1.0 if negative else 1.0
        tiny = np.finfo(s.dtype).smallest_subnormal
        pick = {"nan": np.nan, "inf": sign * np.inf, "zero": 0.0, "subnormal": sign * tiny, "tie": sign * 0.5,
                "near-tie": sign * np.nextafter(s.dtype.type(0.5), s.dtype.type(1)), "huge": sign * 2.0**31,
                "integral": sign * 1.0, "normal": sign * 1.25}[label]
        with np.errstate(over="ignore"):
            out = np.array([pick], dtype=s.dtype)
    else:
        v = int(value[0])
        pick = {"zero": 0, "min": s.min, "max": s.max, "near-min": s.min + 1, "near-max": s.max - 1,
                "pow2-edge": v, "other": (-1 if v < 0 else 1) if s.signed else 3}[label]
        out = np.array([pick]).astype(s.dtype)
    if str(input_class(out, scalar_name)[0]) != label:
        return bits
    return int(out.view(s.bits_dtype)[0])


def paths(expr: Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Expr]]:
    """Every node with its path of argument indices, parents first."""
    yield path, expr
    if isinstance(expr, Op):
        for i, a in enumerate(expr.args):
            yield from paths(a, path + (i,))


def replace_at(expr: Expr, path: tuple[int, ...], new: Expr) -> Expr:
    """``expr`` with the node at ``path`` (:func:`paths`) replaced by ``new``."""
    if not path:
        return new
    assert isinstance(expr, Op)
    args = list(expr.args)
    args[path[0]] = replace_at(args[path[0]], path[1:], new)
    return replace(expr, args=tuple(args))


def with_statement(program: Program, index: int, value: Expr) -> Program:
    """``program`` with statement ``index`` storing ``value``, inputs no statement reads dropped."""
    body = list(program.body)
    body[index] = Store(body[index].buffer, value)
    return restrict(replace(program, body=tuple(body)), list(range(len(body))))  # drops unused inputs


def failing_statements(program: Program, rows: list[dict]) -> list[int]:
    """The statements the rows' lanes belong to (a result, or a math built-in's out-parameter), in
    program order."""
    buffers = {r["buffer"] for r in rows}
    return [i for i, s in enumerate(program.body) if s.buffer in buffers or s.pointee in buffers]
