"""The JSON form of programs built of frozen dataclasses (lang.flow): each node a dict of its
fields and ``node``, its class name (a field marked :data:`OMITTED` only where it differs from its default); a tuple a list, a set a sorted list. Canonical (sorted keys,
lang.ir.canonical_json), so a program's hash is its identity, and exact: :func:`from_data` of
:func:`to_data` is the node itself.
"""

from __future__ import annotations

from dataclasses import MISSING, fields, is_dataclass
from typing import Any

from lang.ir import InvalidProgram
from lang.nodes import Fill

OMITTED = "omitted_at_default"
"""A field's metadata key: the JSON form leaves the field out while it holds its default (a field
added later, so that every earlier node keeps its JSON and its hash)."""


def to_data(node: Any) -> Any:
    """A JSON-able form of ``node`` (module docstring); a Fill in its own form (lang.nodes.Fill)."""
    if isinstance(node, Fill):
        return {"node": "Fill", **node.to_data()}
    if is_dataclass(node):
        return {"node": type(node).__name__, **{f.name: to_data(getattr(node, f.name)) for f in fields(node)
                                                if not (OMITTED in f.metadata and getattr(node, f.name) == f.default)}}
    if isinstance(node, frozenset):
        return sorted(node)
    if isinstance(node, tuple):
        return [to_data(v) for v in node]
    return node


def from_data(data: Any, nodes: dict[str, type]) -> Any:
    """The inverse of :func:`to_data` over the node classes ``nodes`` (by name); a field whose
    default is a set is a set again. :class:`lang.ir.InvalidProgram` with one line on bad input."""
    if isinstance(data, list):
        return tuple(from_data(v, nodes) for v in data)
    if not isinstance(data, dict):
        return data
    name = data.get("node")
    if name == "Fill":
        return Fill.from_data(data)
    cls = nodes.get(name)
    if cls is None:
        raise InvalidProgram(f"unknown node {name!r} (one of {', '.join(nodes)}, Fill)")
    values = {k: from_data(v, nodes) for k, v in data.items() if k != "node"}
    for f in fields(cls):
        if f.default is not MISSING and isinstance(f.default, frozenset) and f.name in values:
            values[f.name] = frozenset(values[f.name])
    try:
        return cls(**values)
    except TypeError as e:
        raise InvalidProgram(f"node {name}: {e}") from None
