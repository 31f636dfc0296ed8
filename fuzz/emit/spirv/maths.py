"""SPIR-V handler of the floating-point arithmetic and the math, common and geometric built-ins
(lang.ops area "math"; oracles.math): OpenCL.std instructions, OpFDiv, OpDot.

A scalar-argument overload (lang.maths.MathFn.scalar_form: ``ldexp(float4 x, int k)``,
``mix(float4, float4, float)``, ``step(float, float4)`` ...) has no instruction of its own: the
OpenCL.std instructions take operands of the Result Type's component count (fmin, fmax, mix, step,
smoothstep: "must be of type Result Type"), so the scalar is replicated into every lane first, the
widening OpenCL C gives it (§6.15.2, §6.15.4: component-wise)."""

from __future__ import annotations

from fuzz.emit.spirv.module import Emitter, Module
from fuzz.emit.spirv.values import broadcast
from lang.ir import Op
from lang.maths import FUNCTIONS
from lang.ops import Handlers
from lang.types import Type

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


def _math(m: Module, op: Op, args: list[int]) -> int:
    """The OpenCL.std instruction of the same name (an out-parameter: the pointer to its output
    element, CrossWorkgroup), OpFDiv for fdiv, OpDot for dot of vectors (OpFMul of scalars:
    OpDot takes vectors only)."""
    t = m.type(op.type)
    width = FUNCTIONS[op.op].statement_type(op.type, tuple(a.type for a in op.args)).width
    args = [broadcast(m, a, Type(e.type.scalar, width)) if e.type.width != width else a for a, e in zip(args, op.args)]
    if op.op == "fdiv":
        return m.op("OpFDiv", t, *args)
    if op.op == "dot":
        return m.op("OpDot" if op.args[0].type.is_vector else "OpFMul", t, *args)
    pointee = [m.pointers[op.attr("out")]] if FUNCTIONS[op.op].out else []
    return m.ext(op.op, t, *args, *pointee)


for _name in FUNCTIONS:
    emitter(_name)(_math)
