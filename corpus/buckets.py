"""Buckets: the semantic signature that groups duplicate disagreements into one bug.

Two disagreements are the same bug when they agree on every field of :func:`signature`: the
program's area, the operation as spelled (``convert_int4_sat_rte``) with its saturation, rounding
and vector width spelled out, the source and destination types, the input class of the lane
(:mod:`oracles.classes`), the rule that judged it and the kind (wrong or imprecise result, build
error, crash, timeout), the target's driver, path and driver version — and a build error, crash or
timeout keys on its kind, the driver and the driver's first error line (numbers, addresses and
overloads taken out: :func:`first_error`, :func:`failure_message`) only. A driver update
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

SIGNATURE_VERSION = 2
"""Which :func:`signature` a corpus's buckets were keyed with; a corpus keyed otherwise is re-keyed
when opened (corpus.store), statuses kept. 1: as written up to schema 5. 2: a failure (build error,
crash, timeout) keys on the line that says what failed (:func:`first_error`, mangled names as their
family), its kind and its driver, not on the statement that showed it."""

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


_REMARK = re.compile(r"<unknown>:\d+:\d+: ")  # an LLVM optimisation remark PoCL prints, glued to the next
_NOT_ERRORS = re.compile(r"^\s*(?:\S+:\d+:\d+: )?(?:warning|remark|note)\b|instructions in function|"
                         r"(?:loop|SLP) (?:not )?vectorized|^stack backtrace:|^note: |RUST_BACKTRACE", re.I)
_ERRORS = (  # the line that names the failure, most telling first
    re.compile(r"Cannot find symbol|undefined (?:symbol|reference)|unresolved external", re.I),
    re.compile(r"Assertion .* failed|assert(?:ion)? failed|panicked at|LLVM ERROR|UNREACHABLE|Segmentation fault",
               re.I),
    re.compile(r"\berror\b[: ]", re.I),
    re.compile(r"^killed by SIG\w+|^exited with|timeout|no result after", re.I),
)


def first_error(log: str) -> str:
    """The line of a driver's log that says what failed: a missing symbol, an assertion or panic,
    a compiler error, the signal; optimisation remarks, warnings and notes are dropped (PoCL glues
    its LLVM remarks ``<unknown>:0:0: ...`` to the real message). A failure and its re-run are
    told apart (triage.confirm) and bucketed (:func:`signature`) by this line."""
    lines = [line.strip() for line in _REMARK.sub("\n", log or "").splitlines()]
    lines = [line for line in lines if line and not _NOT_ERRORS.search(line)]
    for pattern in _ERRORS:
        for line in lines:
            if pattern.search(line):
                return line[:300]
    return lines[-1][:300] if lines else (log or "").strip()[:300]


_MANGLED = re.compile(r"_Z(\d+)([A-Za-z_]\w*)")


def _function_family(m: re.Match) -> str:
    """An Itanium-mangled function name as its family: ``_Z8half_cosDv3_f`` -> ``half_*``
    (overloads and siblings of one prefix are one missing piece of a kernel library)."""
    name = m.group(2)[: int(m.group(1))]
    return name.split("_")[0] + "_*" if "_" in name else name


def failure_message(text: str) -> str:
    """A driver's failure line (:func:`first_error`) with mangled names as their family, and
    addresses, numbers and paths removed, so that the same failure in two programs reads the same
    (``program.rs:N: unwrap on None``, ``Cannot find symbol half_* in kernel library``)."""
    text = _MANGLED.sub(_function_family, first_error(text))
    text = re.sub(r"/\S+/", "", text)
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
    if sig["kind"] not in RESULT_KINDS:  # a failure is its message, whatever statement showed it
        sig = {k: sig[k] for k in ("kind", "driver", "path", "driver_version")}
        sig["failure"] = failure_message(row.get("actual_value", ""))
    if row.get("confirmation") == "flaky":
        sig["flaky"] = True
    return sig


def bucket_id(sig: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:12]


def title(sig: dict[str, Any]) -> str:
    """One line naming a bucket: ``pocl/spirv: convert_int_sat_rte float -> int (nan): wrong-result``,
    ``pocl/spirv: build_error: Cannot find symbol half_* in kernel library``."""
    flaky = " [flaky]" if sig.get("flaky") else ""
    path = "/spirv" if sig["path"] == "spirv" else ""
    if "failure" in sig:
        return f"{sig['driver']}{path}: {sig['kind']}: {sig['failure']}{flaky}"
    types = f"{sig['src_type']} -> {sig['dst_type']}" if sig["src_type"] != sig["dst_type"] else sig["dst_type"]
    return (f"{sig['driver']}{path}: {sig['operation']} {types} ({sig['input_class']}): "
            f"{sig['kind']}{flaky}")
