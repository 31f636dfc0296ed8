"""How discovered targets are shown: ``describe`` (JSON, for ``clfuzz drivers --json``) and
``table`` (rich) for people."""

from __future__ import annotations

from typing import Any

from .discovery import Target

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
