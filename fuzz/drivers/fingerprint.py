"""What identifies a driver, and how discovered targets are shown.

- ``decode_fp_config``, ``decode_device_type``: the raw bit fields of a device, as the probe stores
  them in a fingerprint;
- ``fingerprint_id``: a short hash of the fields that identify an implementation;
- ``base_name``: the short driver name derived from the platform name;
- ``describe`` (JSON, for ``clfuzz drivers --json``) and ``table`` (rich) for people.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .discovery import Target

FP_FLAGS = (  # cl_device_fp_config bits (OpenCL 3.0 §4.2, Table 5)
    ("denorm", 1 << 0),
    ("inf_nan", 1 << 1),
    ("round_to_nearest", 1 << 2),
    ("round_to_zero", 1 << 3),
    ("round_to_inf", 1 << 4),
    ("fma", 1 << 5),
    ("soft_float", 1 << 6),
    ("correctly_rounded_divide_sqrt", 1 << 7),
)

# The fields that identify an implementation; memory sizes and the library path are left out.
IDENTITY_FIELDS = (
    "platform_name",
    "platform_vendor",
    "platform_version",
    "device_name",
    "device_vendor",
    "device_version",
    "driver_version",
    "opencl_c_version",
    "extensions",
    "single_fp_config",
    "double_fp_config",
    "half_fp_config",
)

# A SPIR-V path of a device adds how the module gets there (routes.py).
PATH_FIELDS = ("path", "route", "translator", "route_unsupported")

_BASE_NAMES = (  # substring of the lowercased platform name -> short driver name
    ("portable computing language", "pocl"),
    ("pocl", "pocl"),
    ("rusticl", "rusticl"),
    ("oclgrind", "oclgrind"),
    ("nvidia", "nvidia"),
    ("clover", "clover"),
    ("intel", "intel"),
    ("amd", "amd"),
)


def decode_fp_config(bits: int) -> dict[str, bool]:
    return {name: bool(bits & bit) for name, bit in FP_FLAGS}


_DEVICE_TYPES = (("DEFAULT", 1), ("CPU", 2), ("GPU", 4), ("ACCELERATOR", 8), ("CUSTOM", 16))


def decode_device_type(bits: int) -> str:
    """cl_device_type bits as "CPU", "GPU", ... joined by "|" (Oclgrind sets them all)."""
    return "|".join(name for name, bit in _DEVICE_TYPES if bits & bit)


def base_name(platform_name: str) -> str:
    """Short driver name derived from the platform name ("Portable Computing Language" -> pocl)."""
    low = platform_name.lower()
    for key, name in _BASE_NAMES:
        if key in low:
            return name
    words = re.findall(r"[a-z0-9]+", low)
    return words[0] if words else "opencl"


def fingerprint_id(fp: dict[str, Any]) -> str:
    """sha256 (12 hex digits) of the canonical JSON of the identifying fields."""
    ident = {k: fp.get(k) for k in IDENTITY_FIELDS}
    ident.update({k: fp[k] for k in PATH_FIELDS if k in fp})  # SPIR-V paths only: C ids unchanged
    canon = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canon.encode()).hexdigest()[:12]


_ROUNDING = (("round_to_nearest", "RTE"), ("round_to_zero", "RTZ"), ("round_to_inf", "RTP/RTN"))


def describe(targets: list[Target]) -> list[dict[str, Any]]:
    """One JSON-able record per target: its name, ids, where it lives and its full fingerprint."""
    return [
        {
            "name": t.name,
            "fingerprint_id": t.fingerprint_id,
            "icd_folder": t.icd_folder,
            "platform_index": t.platform_index,
            "device_index": t.device_index,
            "fingerprint": t.fingerprint,
        }
        for t in targets
    ]


def rounding_modes(fp_config: dict[str, bool]) -> str:
    """"RTE RTZ RTP/RTN" style summary of a decoded fp config."""
    return " ".join(label for key, label in _ROUNDING if fp_config.get(key)) or "-"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def table(targets: list[Target]):
    """A rich Table with one row per target."""
    from rich.table import Table

    t = Table(title="OpenCL drivers")
    for column in (
        "name", "path (route)", "platform", "device", "driver version", "OpenCL C", "fp64", "fp16",
        "denormals (float)", "rounding modes (float)", "images", "fingerprint id",
    ):  # fmt: skip
        t.add_column(column)
    for target in targets:
        fp = target.fingerprint
        single = fp.get("single_fp_config", {})
        images = fp.get("image_formats", {}).get("2d", [])
        route = fp.get("route")
        t.add_row(
            target.name,
            f"{target.path} ({fp.get('translator') or route})" if route else target.path,
            fp.get("platform_name", ""),
            fp.get("device_name", ""),
            fp.get("driver_version", ""),
            fp.get("opencl_c_version", "").strip(),
            _yes(fp.get("fp64", False)),
            _yes(fp.get("fp16", False)),
            _yes(single.get("denorm", False)),
            rounding_modes(single),
            f"yes ({len(images)} 2D formats)" if fp.get("image_support") else "no",
            target.fingerprint_id,
        )
    return t
