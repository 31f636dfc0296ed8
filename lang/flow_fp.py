"""Floating point of flow programs (lang.flow) beyond float ``+ - *`` and ``fma``: ``double``,
float ``/`` and ``sqrt``, conversions between ``float`` and ``double``; the rules that keep them
exact (:func:`operation_rule`, which lang.flow_rules applies) and the build options they need.

* **double** (a program requiring ``fp64``): ``+ - * /`` (:class:`lang.flow.Bin` ``add sub mul
  div``), ``sqrt`` and ``fma`` (:class:`lang.flow.Call`) are correctly rounded (OpenCL C 3.0.19
  §7.4 Table 68: "Correctly rounded" for ``x / y`` and ``sqrt``; ``+ - *`` and ``fma`` IEEE 754),
  round to nearest even being the default (§7.1). Denormals are kept: §7.2 lets a device flush
  single precision denormals only ("Support for denormalized numbers with single precision
  floating-point is optional"), so a double value has no flush allowance.
* **float ``/`` and ``sqrt``** only in a program built with :data:`CR_OPTION` that requires
  :data:`lang.maths.CR_DIVIDE_SQRT` (a device reporting CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in
  CL_DEVICE_SINGLE_FP_CONFIG, fuzz.drivers.capabilities.has): the option makes them correctly
  rounded (OpenCL 3.0 API §5.8.6.2); without it Table 65 allows 2.5 and 3 ulp. A division by zero
  and the square root of a negative number are IEEE 754's (an infinity, a NaN). Their subnormal
  operands and results may be flushed like those of float ``+ - *`` (§7.2).
* **conversions** between ``float`` and ``double`` (§6.4.3.2: "Conversions to and from
  floating-point type shall conform to IEEE-754 rounding rules", a cast with the default rounding
  mode, round to nearest even, §7.1): widening is exact, narrowing correctly rounded (§7.4:
  "Conversion between floating-point formats ... must be correctly rounded").
"""

from __future__ import annotations

from lang.maths import CR_DIVIDE_SQRT

CR_OPTION = "-cl-fp32-correctly-rounded-divide-sqrt"
"""The build option under which float ``/`` and ``sqrt`` are correctly rounded (OpenCL 3.0 API §5.8.6.2)."""
FP_BINARY = ("div",)
"""Float operators beyond ``+ - *`` (:class:`lang.flow.Bin`): ``/``."""
FP_CALLS = {"fma": 3, "sqrt": 1}
"""Float built-ins (:class:`lang.flow.Call`) and their operand counts."""
DIVIDE_SQRT = ("div", "sqrt")
"""The float operations that need :data:`CR_OPTION`."""
FLOATS = ("float", "double")


def correctly_rounded(options: str, requires: frozenset[str]) -> bool:
    """Whether a program's float ``/`` and ``sqrt`` are correctly rounded: built with
    :data:`CR_OPTION` and requiring a device that honours it."""
    return CR_OPTION in options.split() and CR_DIVIDE_SQRT in requires


def operation_rule(op: str, t: str, options: str, requires: frozenset[str]) -> str | None:
    """The rule (one line) that float operation ``op`` (a Bin operator or a Call's function) on
    operands of type ``t`` breaks in a program with ``options`` and ``requires``, or None."""
    if t == "float" and op in DIVIDE_SQRT and not correctly_rounded(options, requires):
        return (f"float {op} only in a program built with {CR_OPTION} requiring {CR_DIVIDE_SQRT} "
                "(OpenCL 3.0 API §5.8.6.2; otherwise OpenCL C 3.0.19 §7.4 Table 65 allows 2.5 and 3 ulp)")
    return None


def float_cast(src: str, dst: str) -> bool:
    """Whether a cast from ``src`` to ``dst`` is one between float types (§6.4.3.2: exact widening,
    narrowing rounded to nearest even)."""
    return src in FLOATS and dst in FLOATS


def options_of_build(options: str, build: str) -> str:
    """The options of a program drawn with ``options`` built as ``build`` (campaign.flow.BUILDS):
    the build's, keeping :data:`CR_OPTION` (which a program with float ``/`` or ``sqrt`` needs)."""
    return " ".join(o for o in (CR_OPTION if CR_OPTION in options.split() else "", build) if o)
