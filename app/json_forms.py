"""The ``--json`` outputs of clfuzz: each is one JSON object whose key ``schema`` is the version of
that output's form (:data:`SCHEMAS`, the one place they are kept; docs/commands.md, "JSON
outputs", lists each form's keys). A change to a form that a script reading it would notice (a
key renamed, removed or given another meaning) takes the next version.

The text is strict JSON: a float that is not finite (an infinite error in ulps) is written as the
string ``"inf"``, ``"-inf"`` or ``"nan"``, never as the ``Infinity`` that JSON parsers refuse.
"""

from __future__ import annotations

import json
import math
from typing import Any

import click

SCHEMAS = {
    "audit": 1,
    "buckets": 2,  # 1: a bare list of buckets; 2: {bugs, buckets}, each bucket with its bug
    "drivers": 1,
    "releases": 1,
    "stats": 1,
    "versions": 1,
}
"""The version of each command's ``--json`` form, by command name."""


def strict(value: Any) -> Any:
    """``value`` with every float that is not finite as a string (``"inf"``, ``"-inf"``, ``"nan"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    return value


def echo_json(command: str, data: dict[str, Any]) -> None:
    """Print ``data``, the ``--json`` output of ``command``, with its ``schema`` version, as strict
    JSON (keys sorted, indented)."""
    click.echo(json.dumps({**strict(data), "schema": SCHEMAS[command]}, indent=2, sort_keys=True, allow_nan=False))
