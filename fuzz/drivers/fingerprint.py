"""What identifies a driver.

- ``decode_fp_config``, ``decode_device_type``: the raw bit fields of a device, as the probe stores
  them in a fingerprint;
- ``fingerprint_id``: a short hash of the fields that identify an implementation;
- ``base_name``: the short driver name derived from the platform name.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

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

# A SPIR-V path of a device adds how the module gets there (routes.py), a variant its driver
# settings (variants.py); the ids of targets without them are unchanged.
PATH_FIELDS = ("path", "route", "translator", "route_unsupported", "settings")

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
