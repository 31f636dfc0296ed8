"""Which target takes which program: capabilities from a device's fingerprint.

A program declares what it requires (fp64, fp16, int64, OpenCL C 3.0 features, image formats,
build-option capabilities); a target takes the statements its front end can express and, on a
SPIR-V route, that the route can carry (fuzz.drivers.routes). The float environment of a device
(flush-to-zero, profile, OpenCL C version) decides which of the oracle's rules apply.
"""

from __future__ import annotations

from dataclasses import replace

from fuzz.drivers.discovery import Target
from fuzz.drivers.routes import PATH_OPENCL_C, PATH_SPIRV
from lang.constructs import constructs, paths_of, requirements
from lang.derive import restrict
from lang.flow import FlowProgram
from lang.flow_launch import NON_UNIFORM
from lang.images import format_key
from lang.ir import Program, type_needs
from lang.maths import CR_DIVIDE_SQRT
from lang.ops import VERSION_KEYS
from lang.types import TYPE_CAPABILITIES


def ftz_of(target: Target) -> frozenset[str]:
    """Floating types whose denormals this target may flush (:func:`ftz_for` its fingerprint)."""
    return ftz_for(target.fingerprint)


def ftz_for(fp: dict) -> frozenset[str]:
    """The device's float environment (oracles.math): the floating types whose denormals it may
    flush (its FP config lacks CL_FP_DENORM, OpenCL C 3.0 §7.2; the flush-to-zero results of
    §7.5.3 are then allowed), ``embedded`` for an EMBEDDED_PROFILE device (Tables 66, 69) and
    ``spirv`` for a SPIR-V path (the OpenCL SPIR-V environment's rules, §6, where they differ from
    OpenCL C's). How the program is built adds its own flags (lang.maths.build_flags: the OpenCL
    C version, the options)."""
    out = set()
    for name, key, present in (("half", "half_fp_config", fp.get("fp16")), ("float", "single_fp_config", True),
                               ("double", "double_fp_config", fp.get("fp64"))):
        if present and not (fp.get(key) or {}).get("denorm", False):
            out.add(name)
    if "EMBEDDED" in str(fp.get("profile", "")):
        out.add("embedded")
    if fp.get("path") == PATH_SPIRV:
        out.add("spirv")
    return frozenset(out)


def has(fp: dict, capability: str) -> bool:
    """Whether a device's fingerprint has a capability a program requires (a fingerprint key,
    or float's CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT for -cl-fp32-correctly-rounded-divide-sqrt)."""
    if capability == CR_DIVIDE_SQRT:
        return bool((fp.get("single_fp_config") or {}).get("correctly_rounded_divide_sqrt", False))
    return bool(fp.get(capability, False))


FLOW_PATHS = (PATH_OPENCL_C, PATH_SPIRV)
"""The paths that take a flow program (lang.flow): its OpenCL C text (fuzz.emit.opencl_flow) and
its SPIR-V module (fuzz.emit.spirv.flow_kernel)."""


def runnable(target: Target, program: Program | FlowProgram) -> Program | FlowProgram | None:
    """The part of ``program`` the target takes: every statement its path can express (an
    operation only SPIR-V has stays off the OpenCL C path), its device's OpenCL C version has
    (a built-in of OpenCL C 2.0 needs ``cl2.0``, lang.ops C_VERSIONS), its device's types have
    (a statement over double needs fp64, over half fp16) and, on a SPIR-V path, its route can take
    (routes.Route.unsupported). None when its device lacks a capability the whole program
    requires (int64, build-option capabilities), an image format of the program (its
    fingerprint's ``image_formats``), or no statement is left. A part keeps the version and type
    requirements of the statements it kept only. A flow program (lang.flow) is taken whole, with
    its requirements, on :data:`FLOW_PATHS`, or not at all; one that requires
    CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (float ``/`` and ``sqrt``, lang.flow_fp) on the OpenCL C path
    only: the option is the API's for "the program source" (§5.8.6.2), and the OpenCL SPIR-V
    environment's OpFDiv of Float32 is within 2.5 ulp with no such option."""
    fp = target.fingerprint
    if isinstance(program, FlowProgram):  # whole or not at all, on a path that has its emitter
        paths = (PATH_OPENCL_C,) if program.requires & {CR_DIVIDE_SQRT, NON_UNIFORM} else FLOW_PATHS  # lang.flow_rules
        return program if target.path in paths and all(has(fp, cap) for cap in program.requires) else None
    blocked = target.route.unsupported if target.path == PATH_SPIRV else frozenset()
    whole = program.requires - VERSION_KEYS - TYPE_CAPABILITIES  # what every statement needs
    if whole & blocked or not all(has(fp, cap) for cap in whole):
        return None
    if not all(format_key(i.order, i.channel) in fp.get("image_formats", {}).get(i.dim, ()) for i in program.images):
        return None
    typed = program.requires & TYPE_CAPABILITIES
    keep = [i for i, s in enumerate(program.body)
            if target.path in paths_of(s.value) and not constructs(s.value) & blocked
            and all(has(fp, cap) for cap in requirements(s.value))
            and (not typed or all(has(fp, cap) and cap not in blocked for cap in type_needs(program, s) & typed))]
    if not keep:
        return None
    if len(keep) == len(program.body):
        return program
    part = restrict(program, keep)
    return replace(part, requires=whole | requirements(part) | (type_needs(part) & typed))


def supports(target: Target, program: Program | FlowProgram) -> bool:
    """Whether the target takes any of ``program`` (:func:`runnable`)."""
    return runnable(target, program) is not None
