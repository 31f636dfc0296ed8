"""SPIR-V handler of the floating-point arithmetic and the math, common and geometric built-ins
(lang.ops area "math"; oracles.maths): OpenCL.std instructions, OpFDiv, OpDot."""

from __future__ import annotations

from fuzz.emit.spirv_module import Emitter, Module
from lang.ir import Op
from lang.maths import FUNCTIONS
from lang.ops import Handlers

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


def _math(m: Module, op: Op, args: list[int]) -> int:
    """The OpenCL.std instruction of the same name (an out-parameter: the pointer to its output
    element, CrossWorkgroup), OpFDiv for fdiv, OpDot for dot of vectors (OpFMul of scalars:
    OpDot takes vectors only)."""
    t = m.type(op.type)
    if op.op == "fdiv":
        return m.op("OpFDiv", t, *args)
    if op.op == "dot":
        return m.op("OpDot" if op.args[0].type.is_vector else "OpFMul", t, *args)
    pointee = [m.pointers[op.attr("out")]] if FUNCTIONS[op.op].out else []
    return m.ext(op.op, t, *args, *pointee)


for _name in FUNCTIONS:
    emitter(_name)(_math)
