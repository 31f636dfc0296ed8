"""A flow program's vector nodes (lang.flow_vectors) in SPIR-V, for
:class:`fuzz.emit.spirv.flow_values.Values`: a vector variable is an SSA value of an OpTypeVector
(carried through loops and branches by OpPhi like a scalar).

* ``(T)(a, b, ...)`` is an OpCompositeInsert of each part into an OpUndef (llvm-spirv 14 and 15
  read every OpCompositeConstruct of a vector as a constant and crash on one of data);
  ``+ - * & | ^`` are OpIAdd ... OpBitwiseXor (integer arithmetic wraps) or OpFAdd, OpFSub, OpFMul;
  the built-ins are OpenCL.std's ``s_``/``u_`` ones on vectors (OpenCL extended instruction set);
* a swizzle is OpVectorShuffle of the vector with itself (one component: OpCompositeExtract);
  a swizzle written is an OpCompositeInsert of each component named into the old vector, the
  result a new SSA value of the variable (an OpVectorShuffle of the old vector and a value of
  another width, which SPIR-V allows, makes llvm-spirv 14 and 15 abort: they assert one type);
* ``shuffle``/``shuffle2`` are OpenCL.std ``shuffle``/``shuffle2`` (OpVectorShuffle takes only
  literal components, the mask here is data);
* ``select(a, b, c)`` is OpSelect on a bool vector: OpenCL C takes the most significant bit of
  each component of ``c`` (OpenCL C 3.0.19 §6.15.6), SPIR-V's OpSelect a Boolean, so the condition
  is ``c < 0`` as signed components (OpSLessThan against zero) choosing ``b``, else ``a``.
"""

from __future__ import annotations

from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, VBin, VCall, Vec, VSelect, element, width
from lang.ops import INTEGER
from lang.types import scalar

INTEGER_OPS = {"add": "OpIAdd", "sub": "OpISub", "mul": "OpIMul", "and": "OpBitwiseAnd", "or": "OpBitwiseOr",
               "xor": "OpBitwiseXor"}
FLOAT_OPS = {"add": "OpFAdd", "sub": "OpFSub", "mul": "OpFMul"}


def value(v, e) -> int:
    """The id of vector node ``e``'s value; ``v`` is the function's Values writer."""
    x = v.value
    if isinstance(e, Vec):  # OpUndef, each part inserted: llvm-spirv 14, 15 make constants of OpCompositeConstruct
        result = v.m.undef(v.m.type(v.ty(e.type)))
        for k, part in enumerate(e.parts):
            result = v.op("OpCompositeInsert", e.type, x(part), result, k)
        return result
    if isinstance(e, VBin):
        ops = FLOAT_OPS if scalar(element(e.type)).is_float else INTEGER_OPS
        return v.op(ops[e.op], e.type, x(e.a), x(e.b))
    if isinstance(e, VCall):
        name = INTEGER[e.fn].spirv_name(scalar(element(e.type)).signed)
        return v.m.ext(name, v.m.type(v.ty(e.type)), x(e.args[0]), x(e.args[1]))
    if isinstance(e, Swizzle):
        a = x(e.a)
        if len(e.comps) == 1:
            return v.op("OpCompositeExtract", e.type, a, e.comps[0])
        return v.op("OpVectorShuffle", e.type, a, a, *e.comps)
    if isinstance(e, Shuffle):
        operands = (x(e.x),) + (() if e.y is None else (x(e.y),)) + (x(e.mask),)
        return v.m.ext("shuffle" if e.y is None else "shuffle2", v.m.type(v.ty(e.type)), *operands)
    assert isinstance(e, VSelect)
    a, b, c = x(e.a), x(e.b), x(e.c)
    zero = v.m.null(v.m.type(v.ty(e.c.type)))
    negative = v.op("OpSLessThan", v.m.bool_type(width(e.c.type)), c, zero)
    return v.op("OpSelect", e.type, negative, b, a)


def store(v, s: SwizzleStore) -> None:
    """``var.<comps> = value``: the variable's next SSA value."""
    t = v.types[s.var]
    result, new = v.read(s.var), v.value(s.value)
    for j, c in enumerate(s.comps):
        part = new if len(s.comps) == 1 else v.op("OpCompositeExtract", element(t), new, j)
        result = v.op("OpCompositeInsert", t, part, result, c)
    v.write(s.var, result)
