"""Whether what reads the declarations of :mod:`lang.ops` matches them: each reader (an emitter, the
strategies) handles every declared operation it must and none that is not declared, checked at its
import; a program read from a file uses only declared operations, with their operands."""

from __future__ import annotations

from typing import Iterable

from lang.ir import InvalidProgram, Op, Program, walk
from lang.ops import OPS


def check_reader(reader: str, handled: Iterable[str], needed: Iterable[str]) -> None:
    """Fail at import when a reader of the declarations (an emitter, the oracle, the strategies)
    lacks a handler for a declared operation, or handles one that is not declared."""
    handled, needed = set(handled), set(needed)
    if needed - handled:
        raise ImportError(f"{reader} handles no {', '.join(sorted(needed - handled))}: declared in lang.ops")
    if handled - OPS.keys():
        raise ImportError(f"{reader} handles undeclared {', '.join(sorted(handled - OPS.keys()))}")


def check_program(program: Program) -> Program:
    """``program`` if every operation it uses is declared here with the operands it is declared
    with, else :class:`lang.ir.InvalidProgram` naming the first that is not (a program file
    written by hand or by another tool: its readers index this table)."""
    for statement in program.body:
        for node in walk(statement.value):
            if not isinstance(node, Op):
                continue
            spec = OPS.get(node.op)
            if spec is None:
                raise InvalidProgram(f"unknown operation {node.op!r} (lang.ops declares the operations clfuzz knows)")
            if spec.arity >= 0 and len(node.args) != spec.arity:
                raise InvalidProgram(f"{node.op} takes {spec.arity} operands, not {len(node.args)}")
    return program
