"""The corner table: for every operation, the corners the specification names or implies, derived
from the declarations (:data:`lang.maths.FUNCTIONS`, :data:`lang.ops.INTEGER_BUILTINS`).

A corner is ``(operation, type, key)`` (:class:`Corner`, written ``sinpi:float:x=-odd``):

* **shapes** (key ``w4``, ``w4:scalar``): every width the operation takes for every type
  (OpenCL C 3.0 §6.3.2 widths 1, 2, 3, 4, 8, 16; the geometric functions 1 to 4, ``cross`` 3 and
  4), and the scalar-argument overloads the declarations generate at every vector width
  (``min``/``max``/``clamp`` with scalar bounds, §6.15.3 Table 13 "sgentype"; the math built-ins'
  :attr:`lang.maths.MathFn.scalar_form`, ``ldexp(float4, int)``, ``step(float, float4)`` ...,
  §6.15.2 Table 11 and §6.15.4 Table 16);
* **operand classes** of the math functions (§7.5.1 and C99 F.9 prescribe results by these
  classes: ±0, ±inf, NaN, ±1, subnormals, odd and even integers (the poles of tgamma/lgamma,
  the sign rules of pow/pown/sinpi), half-integers (cospi, round, tanpi), other values below and
  above 1 in magnitude (pow's |x| < 1 vs > 1 rows)): one class per operand for unary and ternary
  functions (``x=-odd``, ``z=nan``), every *pair* of classes for the binary ones (``x=-0,y=-inf``:
  F.9's atan2, pow, fmod, copysign cases are pairs); exponents (pown, rootn, ldexp) by 0, ±1,
  parity and INT_MAX/INT_MIN;
* **operand classes** of the integer built-ins (0, 1, -1, MAX, MIN, small and large of each
  sign, "small" below 2^(N/2)) and **result halves** (Table 13's saturation edges and the
  in-range / overflowing halves of the products and sums: ``product=in-`` is a negative product
  that fits the type, ``sum=>max`` one that saturates): ``mad_sat:long:product=in-``.

A program reaches a corner on a run when one of its operations has that shape, or has operands
of those classes on some lane (:func:`reached`). Operand classes are read from the program alone:
an operand that is a load or a literal (its lanes as :func:`lang.layout.input_values` gives them); an
operation whose operand is itself an operation reaches its shape corner only (what that operand
computes is the oracle's business, not the table's). The math and integer strategies' sweeps
(:mod:`fuzz.strategies.sweeps`) write every operand as a load.

* **atomics** (:mod:`lang.corners.atomics`): every atomic operation in every spelling, memory,
  order and scope it takes (``atomic_add:long:explicit:group:acq_rel:work_group``);
* **operators and vector operations** (:mod:`lang.corners.operators`): arithmetic, division,
  shifts and comparisons by operand classes, truth values, conditions, swizzles, inserts, vector
  literals, vloadn/vstoren, shuffles, casts and as_ (``compare:float:<:x=nan,y=+0``);
* **relational built-ins** (§6.15.6 Table 18, on floats): every width and every class of each
  operand (unary) or pair of classes (binary: isequal and friends are defined by them on NaN,
  infinities and signed zeros);
* **SPIR-V-only forms** (:mod:`lang.corners.spirv`): OpBitcast across component counts,
  OpVectorShuffle, the remainders by operand signs, extended arithmetic inside and beyond the type,
  OpSelect and OpAny/OpAll by comparison (``rem:int:mod:x=-,y=+``);
* **image reads** (:mod:`lang.corners.images`): every image kind read without a sampler and
  through every sampler configuration the spec defines for it, with every read function
  (``read_image:float:2d:norm-linear-repeat``).

Each corner names the capabilities a target needs to run it (``needs``: ``fp64``, ``fp16``,
``int64``, ``cl2.0``; an image read ``image:<kind>:<function>``, a format of that kind the device
reports: :func:`lang.corners.images.capabilities`), so a target's total is the corners it can run.

The table's own rows, :func:`table`, :func:`reached` and :func:`runnable` are in
:mod:`lang.corners.table`, the operand and result classes in :mod:`lang.corners.classes`; each
area's rows and the helpers its sweep shares with them in its module (:mod:`~lang.corners.atomics`,
:mod:`~lang.corners.conversions`, :mod:`~lang.corners.images`, :mod:`~lang.corners.operators`,
:mod:`~lang.corners.spirv`), which this package exports as they are.
"""

from lang.corners import atomics, conversions, images, operators, spirv
from lang.corners.classes import EXP_CLASSES, FLOAT_CLASSES, float_classes, int_classes
from lang.corners.table import (
    INTS,
    RELATIONAL,
    RESULTS,
    WORK_ITEMS,
    Corner,
    integer_param_types,
    integer_types,
    math_types,
    math_widths,
    reached,
    result_type,
    runnable,
    table,
)

__all__ = ["EXP_CLASSES", "FLOAT_CLASSES", "INTS", "RELATIONAL", "RESULTS", "WORK_ITEMS", "Corner", "atomics",
           "conversions", "float_classes", "images", "int_classes", "integer_param_types", "integer_types",
           "math_types", "math_widths", "operators", "reached", "result_type", "runnable", "spirv", "table"]
