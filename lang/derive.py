"""Programs made from a program: :func:`restrict` (some of its statements, on fewer work-items:
the parts a campaign runs and the reducer tries), :func:`one_work_item` (one work-item's inputs
as explicit values: the reducer's ``work_items`` pass, a disagreement's re-derivation) and
:func:`twin` (a shaped program without its shape, lang.shapes).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lang.ir import Buffer, Fill, Program, buffers_of
from lang.shapes import needs as shape_needs


def restrict(program: Program, statements: list[int], global_size: int | None = None) -> Program:
    """The program keeping only the given statements, the buffers they use and (optionally) the
    first ``global_size`` work-items (whole work-groups). Inputs are unchanged where kept: a
    :class:`lang.ir.Fill` gives the same first lanes whatever the buffer's length."""
    body = tuple(program.body[i] for i in statements)
    used = set().union(*(buffers_of(s) for s in body))
    n = min(global_size or program.global_size, program.global_size)
    if program.local_size:
        n = max(program.local_size, n - n % program.local_size)
    return Program(
        tuple(b for b in program.buffers if b.name in used),
        body,
        n,
        program.options,
        program.requires,
        program.area,
        program.local_size,
        tuple(i for i in program.images if i.name in used),
        tuple(s for s in program.samplers if s.name in used),
        program.shape,
    )


def twin(program: Program) -> Program:
    """The straight-line twin of a shaped program: the same statements without the shape, which
    computes the same outputs (lang.shapes); a local size only atomics still need, and none of
    the capabilities only the shape needed."""
    if program.shape is None:
        return program
    local = program.local_size if program.shared else 0
    return replace(program, shape=None, area=program.shape.base, local_size=local,
                   requires=program.requires - shape_needs(program.shape))


def one_work_item(program: Program, item: int, inputs: dict[str, np.ndarray],
                  statements: list[int] | None = None) -> Program:
    """``program`` (only ``statements`` of it, if given) on one work-item: work-item ``item``'s
    lanes of each input buffer (``inputs``: typed values, as lang.layout.input_values gives them)
    written as its explicit values (:class:`lang.ir.Fill` ``values``), with no local size. Not for
    programs with shared buffers, whose values depend on every work-item."""
    part = program if statements is None else restrict(program, statements)
    buffers = tuple(replace(b, fill=Fill(0, values=tuple(int(v) for v in work_item_lanes(inputs[b.name], b, item))))
                    if b.role == "in" else b for b in part.buffers)
    return replace(part, buffers=buffers, global_size=1, local_size=0)


def work_item_lanes(values: np.ndarray, b: Buffer, item: int) -> np.ndarray:
    """The lanes of work-item ``item`` in ``b``'s typed ``values``, as bit patterns."""
    n = b.type.mem_lanes
    return np.ascontiguousarray(values[item * n:(item + 1) * n]).view(b.type.elem.bits_dtype)
