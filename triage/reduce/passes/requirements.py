"""The ``requirements`` pass: fp64 or fp16 is no longer required once no type needs it."""

from __future__ import annotations

from dataclasses import replace

from lang.ir import Program, type_needs
from lang.types import TYPE_CAPABILITIES
from triage.reduce.base import Candidates, Reducing


def requirements_pass(program: Program, rows: list[dict], _: Reducing) -> Candidates:
    """Drop fp64/fp16 once no type of the program needs them (more drivers can then run it)."""
    unused = (program.requires & TYPE_CAPABILITIES) - type_needs(program)
    if unused:
        yield replace(program, requires=program.requires - unused)
