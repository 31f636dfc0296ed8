"""Families of sibling operations: the entry points that one implementation usually serves, so
that one driver bug shows under several of them.

A bucket (corpus.buckets) keys on the operation as spelled, its element types and the rule, which
a CI baseline needs; the bug list (triage.bugs) groups the buckets of one driver into bugs when
their cases show one root cause, and it looks for that evidence only between siblings: buckets
whose operations have the same :func:`root`. The families are declared here once:

- the element types of one function (``sinpi`` on ``float`` and on ``double``): the root ignores
  types, which a bucket keeps apart;
- the destinations and rounding modes of one conversion (``convert_T_rtn`` to signed and to
  unsigned integers): one root per conversion kind, saturating or not (OpenCL C 3.0.19 §6.4.3);
- the read functions of one image kind (``read_imagef``, ``read_imagei``, ``read_imageui``,
  §6.15.15.2): the root ``read_image``;
- a function and its out-parameter (``sincos`` and ``sincos (out-parameter)``), its reentrant
  ``_r`` form (``lgamma``, ``lgamma_r``), its ``half_`` and ``native_`` forms (§6.15.2 Tables 11
  and 12, ``half_sin`` is ``sin``);
- the functions that share one implementation in the libraries the drivers build on
  (:data:`SHARED`): the trigonometric functions of one argument reduction, the power functions;
- nested operations none of which is wrong alone (triage.reduce names them ``convert_T_rtz of
  convert_T_sat``): the family of each, outermost first, so rusticl's fold of
  ``convert_ulong_rtz(convert_ushort_sat(x))`` and of ``convert_long_rtp(convert_ushort_sat(x))``
  are siblings.
"""

from __future__ import annotations

import re

from lang.maths import FUNCTIONS

OUT_PARAMETER = " (out-parameter)"
"""How a wrong lane of a math built-in's out-parameter names its operation (fuzz.judge): the
function's name and this suffix (``sincos (out-parameter)``)."""

NESTED = " of "
"""How nested operations none wrong alone are named, outermost first (triage.reduce.composite_of)."""

SHARED: dict[str, tuple[str, ...]] = {
    "sin": ("sin", "cos", "tan", "sincos"),
    "sinpi": ("sinpi", "cospi", "tanpi"),
    "pow": ("pow", "powr", "pown", "rootn"),
    "min": ("min", "max", "clamp"),
}
"""Roots of functions implemented together: ``sin``, ``cos``, ``tan`` and ``sincos`` share their
argument reduction (OpenCL C 3.0.19 §6.15.2 Table 11; PoCL and Oclgrind compute them from one
reduced argument), ``sinpi``, ``cospi`` and ``tanpi`` theirs of ``x`` modulo 2 (Table 11 defines them
as the functions of π·x: Oclgrind evaluates each as its function of π·x, so its ``sinpi(1)`` is
``sin(π)`` in double, 0x1.1a62633145c07p-53, and its ``tanpi(1)`` ``tan(π)``), ``pow``, ``powr``, ``pown`` and ``rootn`` one ``x**y`` core, and the integer
``clamp`` "Returns min(max(x, minval), maxval)" (§6.15.3 Table 13)."""

PARTS: dict[str, dict[str, tuple[int, ...]]] = {"clamp": {"max": (0, 1), "min": (0, 2)}}
"""Operations the specification defines as others applied to some of their operands, by the
operands each part takes: the integer ``clamp`` "Returns min(max(x, minval), maxval)" (OpenCL C
3.0.19 §6.15.3 Table 13), so ``max(x, minval)`` and ``min(x, maxval)`` see ``x`` with one of its
bounds (triage.siblings re-runs a reduced ``clamp`` as each)."""

_ROOT_OF = {name: root for root, names in SHARED.items() for name in names}
_FORMS = re.compile(r"^(?:half_|native_)")
_READ_IMAGE = re.compile(r"^read_image(?:f|i|ui|h)$")
_CONVERT = re.compile(r"^convert_T(_sat)?(?:_rt[enpz])?$")


def root(operation: str) -> str:
    """The family an operation belongs to (module docstring): ``half_sin`` -> ``sin``,
    ``lgamma_r (out-parameter)`` -> ``lgamma``, ``read_imagei`` -> ``read_image``,
    ``convert_T_sat_rtn`` -> ``convert_T_sat``, ``convert_T_rtz of convert_T_sat`` -> ``convert_T of
    convert_T_sat``; an operation of no family is its own root."""
    if NESTED in operation:
        return NESTED.join(root(part) for part in operation.split(NESTED))
    name = operation.removesuffix(OUT_PARAMETER)
    if _READ_IMAGE.match(name):
        return "read_image"
    conversion = _CONVERT.match(name)
    if conversion:
        return "convert_T" + (conversion.group(1) or "")
    name = _FORMS.sub("", name)
    if name.endswith("_r") and name != "_r":
        name = name[:-2]
    return _ROOT_OF.get(name, name)


def trigger(operation: str) -> str:
    """What a statement is as a partner of an interaction (triage.bugs, ``same-trigger``): a math
    built-in with an out-parameter (lang.maths: ``sincos``, ``modf``, ``fract``, ``frexp``,
    ``remquo``, ``lgamma_r``, §6.15.2 Table 11), whose pointer argument is what a driver mishandles
    for the statements beside it, is ``out-parameter``; any other its :func:`root`."""
    name = operation.removesuffix(OUT_PARAMETER)
    fn = FUNCTIONS.get(name)
    return "out-parameter" if fn is not None and fn.out else root(operation)


def siblings(a: str, b: str) -> bool:
    """Whether operations ``a`` and ``b`` are of one family (:func:`root`)."""
    return root(a) == root(b)
