"""Corner coverage: which corners of the corner table (:mod:`lang.corners`) each target reached.

A target reaches a corner when a program it ran to completion (status ``ok``) reaches it
(:func:`lang.corners.reached`: the operation with that shape, or operands of those classes on
some lane of its first work-items); the programs stored with a run are what that target took.
A target's total is the corners it can run: those whose capabilities (fp64, fp16, int64,
OpenCL C 2.0) its fingerprint lists. Only the programs of the areas with corners are read.
"""

from __future__ import annotations

import json
from typing import Any

from corpus import _sql
from corpus.store import Corpus
from lang.corners import Corner, reached, runnable, table
from lang.corners import images as image_corners
from lang.corners import spirv as spirv_corners
from lang.ir import Program
from lang.ops import ATOMIC_FEATURES

CAPABILITIES = ("fp64", "fp16", "int64", "cl2.0", *ATOMIC_FEATURES)
"""The fingerprint keys a corner may need (lang.types.needs_of, lang.ops.C_VERSIONS, the atomics'
lang.ops.ATOMIC_FEATURES)."""


def capabilities_of(fingerprint: dict) -> frozenset[str]:
    """The corner capabilities of one target: its fingerprint keys, the image kinds and read
    functions its formats allow (lang.corners.images.capabilities), ``spirv`` on the SPIR-V path."""
    return (frozenset(k for k in CAPABILITIES if fingerprint.get(k)) | image_corners.capabilities(fingerprint)
            | spirv_corners.capabilities(fingerprint))


def reached_by_target(corpus: Corpus, campaign: str | None = None) -> dict[str, tuple[tuple[Corner, ...], set[Corner]]]:
    """Per target (sorted): the corners it can run and those of them it reached."""
    where, params = ("where r.campaign = ?", [campaign]) if campaign else ("", [])
    fingerprints = {t["fingerprint_id"]: json.loads(t["fingerprint"])
                    for t in _sql.rows(corpus, "select * from targets")}
    targets: dict[str, frozenset[str]] = {}
    for row in _sql.rows(corpus, f"select distinct r.target, r.fingerprint_id from runs r {where}", params):
        targets[row["target"]] = capabilities_of(fingerprints.get(row["fingerprint_id"], {}))
    ok = "and" if campaign else "where"
    areas = " or ".join(f"""p.json like '%"area":"{a}"%'""" for a in sorted({c.area for c in table()}))
    parsed: dict[str, set[Corner]] = {}
    got: dict[str, set[Corner]] = {t: set() for t in targets}
    for row in _sql.rows(
        corpus, f"""select r.target, r.program_id, p.json from runs r join programs p on p.id = r.program_id
            {where} {ok} r.status = 'ok' and ({areas})""", params):
        if row["program_id"] not in parsed:
            parsed[row["program_id"]] = reached(Program.from_json(row["json"]))
        got.setdefault(row["target"], set()).update(parsed[row["program_id"]])
    out = {}
    for target in sorted(targets):
        can = runnable(targets[target])
        out[target] = (can, got[target] & set(can))
    return out


def corners(corpus: Corpus, campaign: str | None = None, missing: bool = False) -> dict[str, dict[str, Any]]:
    """Per target: ``total`` (corners it can run), ``reached``, and per operation ``[reached,
    total]`` (``operations``); with ``missing``, the names of the corners not reached."""
    out = {}
    for target, (can, have) in reached_by_target(corpus, campaign).items():
        ops: dict[str, list[int]] = {}
        for c in can:
            counts = ops.setdefault(c.op, [0, 0])
            counts[0] += c in have
            counts[1] += 1
        out[target] = {"total": len(can), "reached": len(have), "operations": ops}
        if missing:
            out[target]["missing"] = [c.name for c in can if c not in have]
    return out
