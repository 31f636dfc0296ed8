"""The ``values`` pass: each input or literal lane becomes the simplest value of its input class
(:mod:`oracles.classes`: 1.0 for an integral float, -1 for a negative integer, ...), all at once,
then one lane at a time."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from lang.ir import Literal, Program
from triage.reduce.base import Candidates, Reducing, paths, replace_at, simplest, with_statement


def values_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    if program.global_size != 1 or program.shared:
        return
    edits: list[tuple[Callable[[Program], Program], int, int]] = []  # (rewrite, old, new) per lane
    for b in program.inputs:
        if not b.fill.values:
            continue
        for i, old in enumerate(b.fill.values):
            new = simplest(old, b.type.scalar) if i % b.type.mem_lanes < b.type.width else 0
            if new != old:
                edits.append((_set_input(b.name, i, new), old, new))
    for index, stmt in enumerate(program.body):
        for path, node in paths(stmt.value):
            if isinstance(node, Literal):
                for i, old in enumerate(node.bits):
                    new = simplest(old, node.type.scalar)
                    if new != old:
                        edits.append((_set_literal(index, path, i, new), old, new))
    if len(edits) > 1:
        whole = program
        for rewrite, _, _ in edits:
            whole = rewrite(whole)
        yield whole
    for rewrite, _, _ in edits:
        yield rewrite(program)


def _set_input(name: str, lane: int, value: int) -> Callable[[Program], Program]:
    def rewrite(p: Program) -> Program:
        b = p.buffer(name)
        values = list(b.fill.values)
        values[lane] = value
        return replace(p, buffers=tuple(replace(x, fill=replace(x.fill, values=tuple(values))) if x.name == name
                                        else x for x in p.buffers))
    return rewrite


def _set_literal(index: int, path: tuple[int, ...], lane: int, value: int) -> Callable[[Program], Program]:
    def rewrite(p: Program) -> Program:
        stmt = p.body[index]
        node = stmt.value
        for i in path:
            node = node.args[i]
        bits = list(node.bits)
        bits[lane] = value
        return with_statement(p, index, replace_at(stmt.value, path, Literal(node.type, tuple(bits))))
    return rewrite
