"""The ``subexpressions`` pass: replace an operation below the statement's root by a literal, or
else an input buffer, holding the value the oracle computes for it (only where that value is
certain: one allowed bit pattern on every lane), outermost first."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from fuzz.drivers.capabilities import ftz_of
from lang.ir import Buffer, Fill, Literal, Load, Op, Program
from lang.layout import input_values
from lang.types import Type
from oracles import UndefinedBehaviour, environment, evaluate
from triage.reduce.base import Candidates, Reducing, paths, replace_at, with_statement


def _fresh_input(program: Program, t: Type, bits: tuple[int, ...]) -> tuple[Buffer, Load]:
    names = {b.name for b in program.buffers}
    name = next(f"r{i}" for i in range(len(names) + 1) if f"r{i}" not in names)
    lanes = bits + (0,) * (t.mem_lanes - t.width)
    return Buffer(name, t, "in", Fill(0, values=lanes)), Load(name, t)


def subexpressions_pass(program: Program, rows: list[dict], reducer: Reducing) -> Candidates:
    if program.global_size != 1 or program.shared:
        return
    inputs = input_values(program)
    ftz = ftz_of(reducer.target)
    for index, stmt in enumerate(program.body):
        for path, node in paths(stmt.value):
            if not path or not isinstance(node, Op):
                continue
            try:
                values, certain = evaluate(node, program, inputs, environment(program, ftz)).certain()
            except (UndefinedBehaviour, ValueError, KeyError):
                continue
            if not certain.all():
                continue
            bits = tuple(int(b) for b in np.ascontiguousarray(values).view(node.type.elem.bits_dtype)[:node.type.width])
            yield with_statement(program, index, replace_at(stmt.value, path, Literal(node.type, bits)))
            buffer, load = _fresh_input(program, node.type, bits)
            yield with_statement(replace(program, buffers=program.buffers + (buffer,)), index,
                                 replace_at(stmt.value, path, load))
