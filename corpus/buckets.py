"""Buckets: the semantic signature that groups duplicate disagreements into one bug.

Two disagreements are the same bug when they agree on every field of :func:`signature`: the
program's area, the operation as spelled (``convert_int4_sat_rte``) with its saturation, rounding
and vector width spelled out, the source and destination types, the input class of the lane
(:mod:`oracles.classes`), the rule that judged it and the kind (wrong or imprecise result, build
error, crash, timeout), the target's driver, path and driver version — and, for a build error,
crash or timeout, the driver's message with numbers and addresses taken out. A driver update
starts new buckets (the old ones keep their status: whether a bug survived the update is what a
vendor asks). A disagreement that did not reproduce on a fresh worker (:mod:`triage.confirm`) is
*flaky* and goes to a bucket of its own, apart from the reproducible ones.

A bucket's id is a hash of its signature, so two corpora bucket alike and merging them is a union.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

STATUSES = ("new", "reported", "fixed", "ignored")
"""A bucket's status, set by people (``clfuzz mark``): ``new`` until someone looks at it,
``reported`` to the vendor, ``fixed`` in the driver (a fixed bucket that shows up again is
``new`` again), ``ignored`` (known and not worth reporting: campaigns do not confirm or reduce it)."""

RESULT_KINDS = ("wrong-result", "imprecise-result")
"""Kinds of a lane judged wrong; every other kind is a failure of the run (build error, crash, ...)."""

_SAT = re.compile(r"_sat\b|_sat_")
_ROUNDING = re.compile(r"_(rte|rtz|rtp|rtn)\b")
_WIDTH = re.compile(r"(?:char|short|int|long|half|float|double)(2|3|4|8|16)\b")
_NOISE = re.compile(r"0x[0-9a-fA-F]+|\d+")


def failure_message(text: str) -> str:
    """A driver's failure message with addresses, numbers and paths removed, so that the same
    failure in two programs reads the same (``program.rs:N: unwrap on None``)."""
    text = re.sub(r"/\S+/", "", text or "")
    return _NOISE.sub("N", text).strip()[:200]


def width_of(type_name: str) -> int:
    """The vector width in a type's name (1 for scalars and for non-type names)."""
    m = _WIDTH.search(type_name or "")
    return int(m.group(1)) if m else 1


def driver_version(fingerprint: dict[str, Any]) -> str:
    """The driver version a signature names: the device and its driver's version string."""
    return f"{fingerprint.get('device_name', '')} / {fingerprint.get('driver_version', '')}".strip(" /")


def signature(row: dict[str, Any], area: str, driver_version: str) -> dict[str, Any]:
    """The bucket signature of one disagreement row (see the module docstring)."""
    operation = row.get("operation", "")
    target = row.get("target", "")
    rounding = _ROUNDING.search(operation)
    sig = {
        "area": area,
        "operation": operation,
        "src_type": row.get("src_type", ""),
        "dst_type": row.get("dst_type", ""),
        "saturation": bool(_SAT.search(operation)),
        "rounding": rounding.group(1) if rounding else "",
        "width": width_of(row.get("dst_type", "")),
        "input_class": row.get("input_class", ""),
        "kind": row.get("kind", ""),
        "rule": row.get("rule", ""),
        "driver": target.split("/")[0],
        "path": row.get("path", ""),
        "driver_version": driver_version,
    }
    if sig["kind"] not in RESULT_KINDS:
        sig["failure"] = failure_message(row.get("actual_value", ""))
    if row.get("confirmation") == "flaky":
        sig["flaky"] = True
    return sig


def bucket_id(sig: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:12]


def title(sig: dict[str, Any]) -> str:
    """One line naming a bucket: ``pocl/spirv: convert_int_sat_rte float -> int (nan): wrong-result``."""
    types = f"{sig['src_type']} -> {sig['dst_type']}" if sig["src_type"] != sig["dst_type"] else sig["dst_type"]
    flaky = " [flaky]" if sig.get("flaky") else ""
    path = "/spirv" if sig["path"] == "spirv" else ""
    return (f"{sig['driver']}{path}: {sig['operation']} {types} ({sig['input_class']}): "
            f"{sig['kind']}{flaky}")
