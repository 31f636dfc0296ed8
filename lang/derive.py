"""Programs made from a program: :func:`restrict` (some of its statements, on fewer work-items:
the parts a campaign runs and the reducer tries), :func:`one_work_item` (one work-item's inputs
as explicit values: the reducer's ``work_items`` pass, a disagreement's re-derivation),
:func:`twin` (a shaped program without its shape, lang.shapes) and :func:`window` (other
work-items of the same program: more lanes from one build, campaign.widening).
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


def independent(program: Program) -> bool:
    """Whether ``program``'s work-items compute independently of each other and of their number:
    no shared buffer, no work-group size, no kernel shape (each work-item reads only its own lanes
    of each input buffer), so any range of work-items is a program of its own (:func:`window`)."""
    return not program.shared and not program.local_size and program.shape is None


def window(program: Program, start: int, items: int) -> Program:
    """Work-items ``start`` to ``start + items`` of ``program`` run on as many work-items as
    ``items`` (``program`` may have fewer: a :class:`lang.ir.Fill` gives the same first lanes
    whatever the buffer's length, so a program's work-items go on past its global size): each input
    buffer's fill skips the lanes of the first ``start`` work-items. Images are not per work-item
    and stay as they are. Only for :func:`independent` programs."""
    if not independent(program):
        raise ValueError(f"program {program.id}: its work-items share memory or a shape; no window of them runs alone")
    buffers = tuple(replace(b, fill=replace(b.fill, skip=b.fill.skip + start * b.type.mem_lanes))
                    if b.role == "in" else b for b in program.buffers)
    return replace(program, buffers=buffers, global_size=items)


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
