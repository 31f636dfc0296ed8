"""The launch of a flow program (lang.flow) beyond uniform work-groups: OpenCL C 2.0's work-item
functions and non-uniform work-groups.

A program that requires :data:`CL2` is built with ``-cl-std=CL2.0`` or ``-cl-std=CL3.0``
(campaign.jobs.c_options) and calls the OpenCL C 2.0 work-item functions (OpenCL C 3.0.19
§6.15.1): ``get_enqueued_local_size`` (:data:`lang.flow.CL2_ITEMS`), ``get_global_linear_id``
and ``get_local_linear_id`` as built-ins (other programs spell the linear ids from the
per-dimension functions). A program that also requires :data:`NON_UNIFORM` may have a global
size that is not a multiple of its local size in any dimension: the OpenCL 3.0 API
(clEnqueueNDRangeKernel, §5.8.6.4 ``-cl-uniform-work-group-size``) allows it only for a program
built with ``-cl-std=CL2.0`` or later, without ``-cl-uniform-work-group-size``, on a device that
reports CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT (an OpenCL 2.x device always supports them).
The last work-group of such a dimension is smaller (§6.15.1): ``get_local_size`` is its actual
size, ``get_enqueued_local_size`` the local size of the launch, ``get_num_groups`` counts it.

The rules (lang.flow_rules.check states them through :func:`launch_problem`): the OpenCL C 2.0
built-ins only in programs that require :data:`CL2`; a local size not dividing its global size
only in programs that require :data:`CL2` and :data:`NON_UNIFORM`, run on the OpenCL C path only
(the SPIR-V environment does not say that a module's kernel takes non-uniform work-groups); there
an exchange reads modulo the actual work-group's size (the partial group writes only its own
elements: an element no work-item wrote is never read).
"""

from __future__ import annotations

from lang.flow import FlowProgram

CL2 = "cl2.0"
"""The requirement (a fingerprint key, fuzz.drivers.probe) of OpenCL C 2.0's work-item functions."""
LINEAR = ("global_linear_id", "local_linear_id")
"""The work-item functions a program that requires :data:`CL2` calls as OpenCL C 2.0 built-ins."""
NON_UNIFORM = "non_uniform_work_groups"
"""The requirement (a fingerprint key, fuzz.drivers.probe) of a global size that is not a multiple
of the local size."""


def is_non_uniform(p: FlowProgram) -> bool:
    """Whether some dimension's global size is not a multiple of its local size."""
    return any(g % l for g, l in zip(p.global_size, p.local_size))


def launch_problem(p: FlowProgram) -> str | None:
    """The rule of an OpenCL C 2.0 launch (lang.flow_rules) that ``p`` breaks, in one line, or None:
    a local size that does not divide its global size needs ``cl2.0`` (the build's -cl-std) and
    ``non_uniform_work_groups`` (the device's support) among the program's requirements."""
    if is_non_uniform(p) and not {CL2, NON_UNIFORM} <= p.requires:
        return (f"launch {p.global_size} / {p.local_size}: a local size not dividing its global size needs "
                f"the requirements {CL2} and {NON_UNIFORM} (OpenCL 3.0 API, clEnqueueNDRangeKernel)")
    return None
