"""Describe every OpenCL platform and device visible to this process: the fingerprint.

Run as ``python -m fuzz.drivers.probe`` in a subprocess whose environment (``icd.env_for``) shows
one driver; it prints one JSON document on its own stdout. Drivers print to stdout as well, so
the process moves fd 1 to stderr before loading any driver and keeps a private copy for the JSON.

Only the probe subprocess imports this module; the parent side is ``discovery.run_probe``, which
never loads a driver itself (a driver can crash or hang the process that loads it).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from lang.images import CHANNEL_TYPES, DIMS, ORDERS, format_key

from .fingerprint import decode_device_type, decode_fp_config
from .icd import library_of


def _info(obj, param, default=None):
    try:
        return obj.get_info(param)
    except Exception:  # noqa: BLE001 - a driver may reject any query
        return default


def _image_formats(cl, ctx) -> dict[str, list[str]]:
    """The formats each image kind (lang.images.DIMS) supports for reading, as "ORDER/TYPE"
    (the API's names without CL_; a code the tables do not know is written in hex)."""
    orders = {o.code: o.name for o in ORDERS.values()}
    types = {t.code: t.name for t in CHANNEL_TYPES.values()}
    out: dict[str, list[str]] = {}
    for dim in DIMS.values():
        try:
            fmts = cl.get_supported_image_formats(ctx, cl.mem_flags.READ_ONLY, dim.cl_type)
        except Exception:  # noqa: BLE001
            fmts = []
        out[dim.name] = sorted(format_key(orders.get(f.channel_order, hex(f.channel_order)),
                                          types.get(f.channel_data_type, hex(f.channel_data_type))) for f in fmts)
    return out


def _atomics(cl, device, extensions: list[str]) -> dict[str, Any]:
    """What the atomics programs need (keys a program's ``requires`` names): the 64-bit atomics
    extensions (both, as the SPIR-V environment requires, OpenCL SPIR-V environment §5.2.8), and
    OpenCL C 3.0 with its optional atomic features (§6.15.12.7). A device takes
    -cl-std=CL3.0 only when it is an OpenCL 3.0 device listing OpenCL C 3.0 (Oclgrind 21.10
    lists it on an OpenCL 1.2 device and then rejects the option). ``cl2.0``: the device builds
    OpenCL C 2.0 or newer (-cl-std=CL3.0 as above, or an OpenCL 2.x device whose
    CL_DEVICE_OPENCL_C_VERSION is 2.0 or newer: -cl-std=CL2.0), which built-ins introduced in
    OpenCL C 2.0 (lang.ops C_VERSIONS) need."""
    di = cl.device_info
    versions = _info(device, getattr(di, "OPENCL_C_ALL_VERSIONS", -1), []) or []
    features = [f.name for f in (_info(device, getattr(di, "OPENCL_C_FEATURES", -1), []) or [])]
    device_version = _info(device, di.VERSION, "") or ""
    c3 = device_version.startswith("OpenCL 3.") and any(v.version >> 22 == 3 for v in versions)
    c_version = re.match(r"OpenCL C (\d+)", _info(device, di.OPENCL_C_VERSION, "") or "")
    c2 = c3 or (device_version.startswith("OpenCL 2.") and c_version is not None and int(c_version.group(1)) >= 2)
    return {
        "cl2.0": c2,
        "opencl_c_features": sorted(features),
        "int64_atomics": {"cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"} <= set(extensions),
        "cl3.0": c3,
        # OpenCL 3.0 API clEnqueueNDRangeKernel: a 2.x device always takes non-uniform work-groups, a 3.0 one if it
        # reports CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT; a 1.x device never (lang.flow_launch)
        "non_uniform_work_groups": c2 and (device_version.startswith("OpenCL 2.") or bool(
            _info(device, getattr(di, "NON_UNIFORM_WORK_GROUP_SUPPORT", -1), False))),
        **{key: c3 and f"__opencl_c_{key}" in features
           for key in ("atomic_order_acq_rel", "atomic_order_seq_cst", "atomic_scope_device")},
        # §6.7.1: every OpenCL C 2.0 device has the generic address space, an OpenCL C 3.0 one the feature's
        "generic_address_space": (c2 and not c3) or (c3 and "__opencl_c_generic_address_space" in features),
    }


def describe_device(cl, platform, device) -> dict[str, Any]:
    """The fingerprint of one device (JSON-able)."""
    di = cl.device_info
    extensions = sorted(set((_info(device, di.EXTENSIONS, "") or "").split()))
    single = int(_info(device, di.SINGLE_FP_CONFIG, 0) or 0)
    double = int(_info(device, di.DOUBLE_FP_CONFIG, 0) or 0)
    half = int(_info(device, di.HALF_FP_CONFIG, 0) or 0) if "cl_khr_fp16" in extensions else 0
    profile = _info(device, di.PROFILE, "")
    dtype = int(_info(device, di.TYPE, 0) or 0)
    image_support = bool(_info(device, di.IMAGE_SUPPORT, False))
    fp: dict[str, Any] = {
        "platform_name": _info(platform, cl.platform_info.NAME, ""),
        "platform_vendor": _info(platform, cl.platform_info.VENDOR, ""),
        "platform_version": _info(platform, cl.platform_info.VERSION, ""),
        "device_name": (_info(device, di.NAME, "") or "").strip(),
        "device_vendor": _info(device, di.VENDOR, ""),
        "device_version": _info(device, di.VERSION, ""),
        "driver_version": _info(device, di.DRIVER_VERSION, ""),
        "opencl_c_version": _info(device, di.OPENCL_C_VERSION, ""),
        "profile": profile,
        "device_type": decode_device_type(dtype),
        "address_bits": _info(device, di.ADDRESS_BITS, 0),
        "little_endian": bool(_info(device, di.ENDIAN_LITTLE, True)),
        "extensions": extensions,
        "il_version": (_info(device, di.IL_VERSION, "") or "").strip(),
        "fp64": "cl_khr_fp64" in extensions or double != 0,
        "fp16": "cl_khr_fp16" in extensions,
        "int64": profile == "FULL_PROFILE" or "cles_khr_int64" in extensions,
        "single_fp_config": decode_fp_config(single),
        "double_fp_config": decode_fp_config(double),
        "half_fp_config": decode_fp_config(half),
        "image_support": image_support,
        "max_work_group_size": _info(device, di.MAX_WORK_GROUP_SIZE, 0),
        "max_work_item_sizes": list(_info(device, di.MAX_WORK_ITEM_SIZES, []) or []),
        "max_compute_units": _info(device, di.MAX_COMPUTE_UNITS, 0),
        "global_mem_size": _info(device, di.GLOBAL_MEM_SIZE, 0),
        "local_mem_size": _info(device, di.LOCAL_MEM_SIZE, 0),
        "max_mem_alloc_size": _info(device, di.MAX_MEM_ALLOC_SIZE, 0),
        "max_parameter_size": _info(device, di.MAX_PARAMETER_SIZE, 0),
        "image_formats": {},
        **_atomics(cl, device, extensions),
    }
    if image_support:
        try:
            ctx = cl.Context([device])
            fp["image_formats"] = _image_formats(cl, ctx)
        except Exception:  # noqa: BLE001
            pass
    return fp


def probe() -> dict[str, Any]:
    """Every platform and device this process sees."""
    import pyopencl as cl

    try:
        found = cl.get_platforms()
    except cl.Error as e:  # the loader found no platform: e.g. the library failed to load
        return {"platforms": [], "error": str(e)}
    platforms = []
    for pi, platform in enumerate(found):
        try:
            devices = platform.get_devices()
        except cl.Error:  # e.g. Clover: CL_DEVICE_NOT_FOUND
            devices = []
        platforms.append(
            {
                "index": pi,
                "name": _info(platform, cl.platform_info.NAME, ""),
                "devices": [describe_device(cl, platform, d) for d in devices],
            }
        )
    return {"platforms": platforms}


def main() -> None:
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # whatever a driver prints goes to stderr, never into the JSON
    library = library_of(os.environ["OCL_ICD_VENDORS"]) if "OCL_ICD_VENDORS" in os.environ else ""
    doc = probe()
    for platform in doc["platforms"]:
        for dev in platform["devices"]:
            dev["icd_library"] = library
    json.dump(doc, out, sort_keys=True)
    out.write("\n")
    out.flush()
    sys.stdout.flush()
    os._exit(0)  # skip driver teardown: some drivers hang or crash at exit


if __name__ == "__main__":
    main()
