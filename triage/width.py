"""A reduced case that fails only at its vector type: the same operands as scalars are right.

A driver that mishandles one vector type (PoCL 3.1's SPIR-V path gives garbage for every math
built-in on ``double16``; PoCL 7.1 with ``-cl-opt-disable`` for built-ins on 512-bit vectors)
opens a bucket per function: each reduces to its own statement on one work-item, and nothing
in the functions' values joins them. The evidence is a re-run: the reduced case's statement with
every vector type as its scalar, one work-item per lane (work-item ``i`` computes lane ``i`` of
the same operands), which the driver gets right where the vector form was wrong. Such a bucket is
*wrong only at its width* (evidence kind ``width``, table bug_evidence, stored against itself);
triage.bugs joins the buckets of one driver so shown at the same vector type on the same front
ends into one bug: the type is what fails, not the function (OpenCL C 3.0.19 §6.15: a built-in's
vector form is defined component-wise, so its lanes are the scalar results).
"""

from __future__ import annotations

import json
import re
from typing import Any

from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from lang.ir import InvalidProgram, Op, Program, from_data, to_data, walk
from lang.maths import FUNCTIONS
from lang.ops import INTEGER
from triage.observe import observe
from triage.siblings import types_in

KIND = "width"
"""The kind of the evidence row this module stores (triage.bugs reads it)."""

_VECTOR = re.compile(r"^([a-z]+?)(2|3|4|8|16)$")


def vector_type(program: Program) -> str | None:
    """The result type of a one-operation program of a lane-wise built-in (a math function but
    the geometric ones, an integer built-in, §6.15.2-3) whose vector types are all of one width
    (``rootn(double16, int16)``: ``double16``), or None."""
    if len(program.body) != 1 or program.images:
        return None
    ops = [n for n in walk(program.body[0].value) if isinstance(n, Op)]
    if len(ops) != 1 or not (ops[0].op in INTEGER or ops[0].op in FUNCTIONS
                             and FUNCTIONS[ops[0].op].group != "geometric"):
        return None
    widths = {m.group(2) for m in map(_VECTOR.match, types_in(to_data(program))) if m}
    result = ops[0].type
    return result.c_name if len(widths) == 1 and result.is_vector else None


def scalar_form(program: Program) -> Program | None:
    """``program`` (see :func:`vector_type`) with its vector type as its scalar on one work-item per
    lane: vector buffers keep their values (lane ``i`` of work-item 0 is work-item ``i``'s), a
    scalar input is repeated on every work-item; None where that cannot be made (no vector type, a
    literal, values drawn rather than listed, more than one work-item)."""
    vector = vector_type(program)
    if vector is None or program.global_size != 1:
        return None
    width = _VECTOR.match(vector).group(2)
    data = to_data(program)
    if '"literal"' in json.dumps(data["body"]):
        return None
    for buf in data["buffers"]:
        fill = buf.get("fill")
        m = _VECTOR.match(buf.get("type", ""))
        if m:
            buf["type"] = m.group(1)
        elif fill is not None and fill.get("values") and len(fill["values"]) == 1:
            buf["fill"] = {**fill, "values": fill["values"] * int(width)}
        if buf.get("role") == "in" and not (buf.get("fill") or {}).get("values"):
            return None
    data["body"] = _scalar_types(data["body"])
    data["global_size"] = int(width)
    try:
        return from_data(data)
    except (InvalidProgram, ValueError, KeyError, TypeError):
        return None


def only_at_width(corpus: Corpus, bucket: str, reduced: Program, target: Target, worker: Worker) -> bool:
    """Run ``reduced`` (bucket ``bucket``'s case: one lane-wise built-in on one work-item) as its
    :func:`scalar_form` on ``target``; where every lane of it is right, store the evidence (kind
    :data:`KIND`: the type, the scalar program, the lanes) and say True."""
    scalar = scalar_form(reduced)
    if scalar is None:
        return False
    if observe(scalar, target, worker) != []:  # a wrong lane, a failure, or no run
        return False
    corpus.add_program(scalar, "siblings")
    corpus.add_evidence({"bucket": bucket, "same_as": bucket, "kind": KIND, "program_id": scalar.id,
                         "detail": json.dumps({"target": target.name, "type": vector_type(reduced),
                                               "lanes": scalar.global_size, "reduced": reduced.id})})
    return True


def _scalar_types(node: Any) -> Any:
    """Program data ``node`` with every vector type as its scalar."""
    if isinstance(node, list):
        return [_scalar_types(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _scalar_types(v) for k, v in node.items()}
    m = _VECTOR.match(node["type"]) if isinstance(node.get("type"), str) else None
    if m:
        out["type"] = m.group(1)
    return out
