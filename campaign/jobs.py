"""The worker job of a program: its source or module, options and packed arguments.

Pure: builds what a worker runs (fuzz.drivers.protocol) from a Program and its input values,
with no device and no corpus.
"""

from __future__ import annotations

import numpy as np

from fuzz.drivers import BufferArg, Job, Mapped
from fuzz.drivers.protocol import ImageArg, SamplerArg
from fuzz.drivers.routes import PATH_OPENCL_C, RouteFailure, binary, route_of
from fuzz.emit import spirv
from fuzz.emit.opencl_c import KERNEL_NAME, emit
from fuzz.emit.validate import target_env, validate
from lang.images import ADDRESSING, CHANNEL_TYPES, DIMS, FILTERS, ORDERS
from lang.flow import FlowProgram
from lang.ir import Program
from lang.layout import input_bytes, input_values, layout, output_bytes, sampler_arguments


def job_for(program: Program, inputs: dict[str, np.ndarray] | None = None, path: str = PATH_OPENCL_C,
            lineage: str = "", fingerprint: dict | None = None, packed: bytes | Mapped | None = None,
            out: Mapped | None = None) -> Job:
    """The worker job of a program over the packed ``in``/``out`` buffers: its OpenCL C source,
    or (``path="spirv"``) its SPIR-V module, validated, as the route of the ``lineage``'s device
    (routes.route_of its ``fingerprint``) takes it: the module itself (job kind ``il``), or a
    binary. Raises RouteFailure when the module is invalid or the route fails on it. ``packed``:
    the ``in`` argument already packed (lang.layout.input_bytes; ``inputs`` then needs only the
    images' values), or where it is (a GPU's extension: campaign.exchange); ``out``: where the
    ``out`` argument is read back into (zeros at first: a program without global shared buffers)."""
    lay = layout(program)
    if out is not None and any(b.role == "global" for b in program.buffers):
        raise ValueError("a program with global shared buffers starts its out argument with their values, not zeros")
    inputs = input_values(program) if inputs is None else inputs
    options = build_options(program, path, lineage, fingerprint)
    if path == PATH_OPENCL_C:
        kind, code = "source", emit(program).encode()
    else:
        kind, code = routed(spirv.emit(program), target_env(program), lineage, fingerprint)
    return Job(
        kind=kind,
        program=code,
        options=options,
        kernel=KERNEL_NAME,
        args=(
            BufferArg("in", input_bytes(program, inputs) if packed is None else packed, lay.in_bytes, False),
            BufferArg("out", output_bytes(program, inputs) if out is None else out, lay.out_bytes, True),
            *(ImageArg(i.name, DIMS[i.dim].cl_type, ORDERS[i.order].code, CHANNEL_TYPES[i.channel].code, i.shape,
                       inputs[i.name].tobytes(), inputs[i.name].nbytes) for i in program.images),
            *(SamplerArg(s.name, s.normalized, ADDRESSING[s.addressing][0], FILTERS[s.filter][0])
              for s in sampler_arguments(program)),
        ),
        global_size=(program.global_size,),
        local_size=(program.local_size,) if program.local_size else None,
    )


def routed(module: bytes, env: str, lineage: str, fingerprint: dict | None) -> tuple[str, bytes]:
    """The job kind and program of a SPIR-V module, validated for ``env``, as the route of the
    ``lineage``'s device (routes.route_of its ``fingerprint``) takes it: the module itself
    (``il``) or a binary. Raises RouteFailure when the module is invalid or the route fails on it."""
    problem = validate(module, env)
    if problem is not None:
        raise RouteFailure("invalid_module", f"spirv-val --target-env {env}: {problem}")
    route = route_of(lineage, fingerprint or {})
    if route is None:
        raise RouteFailure("invalid_module", f"{lineage or 'this driver'} has no SPIR-V route")
    return ("il" if route.kind == "il" else "binary"), binary(route, module)


def build_options(program: Program | FlowProgram, path: str = PATH_OPENCL_C, lineage: str = "",
                  fingerprint: dict | None = None) -> str | None:
    """The exact options string ``clBuildProgram`` gets for ``program`` on a target of ``lineage``
    with ``fingerprint`` on ``path`` (its compiler options, OpenCL 3.0 API §5.8.4): on the OpenCL
    C path the program's and the ``-cl-std`` its constructs need (:func:`c_options`); on the SPIR-V
    path the route's (fuzz.drivers.routes: ``-x spir -spir-std=1.2`` for a SPIR binary) and the
    program's. None where the target has no SPIR-V route (the program never reaches
    ``clBuildProgram``). The job (:func:`job_for`) and the run's record (campaign.record) both
    take it from here, so they cannot differ."""
    if path == PATH_OPENCL_C:
        return c_options(program, fingerprint)
    route = route_of(lineage, fingerprint or {})
    return None if route is None else " ".join(o for o in (route.options, program.options) if o)


def c_options(program: Program, fingerprint: dict | None = None) -> str:
    """Build options of the OpenCL C path: the program's, and the OpenCL C version its constructs
    need (a device's default is OpenCL C 1.2, §5.8.6.5 of the API): -cl-std=CL3.0 for the C11
    atomics; for a built-in of OpenCL C 2.0 (lang.ops C_VERSIONS), -cl-std=CL3.0 on a device that
    builds OpenCL C 3.0 and -cl-std=CL2.0 on an OpenCL 2.x device (fuzz.drivers.probe: ``cl3.0``,
    ``cl2.0``; without a fingerprint, CL3.0), and the same for the generic address space (a shape's
    ``call:generic``: §6.7.1, OpenCL C 2.0 or 3.0 with its feature)."""
    std = ""
    if "cl3.0" in program.requires:
        std = "-cl-std=CL3.0"
    elif {"cl2.0", "generic_address_space"} & program.requires:
        std = "-cl-std=CL3.0" if (fingerprint or {}).get("cl3.0", True) else "-cl-std=CL2.0"
    return " ".join(o for o in (program.options, std) if o)
