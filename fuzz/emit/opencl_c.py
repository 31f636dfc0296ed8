"""Program -> OpenCL C kernel source.

One handler per operation of :mod:`fuzz.ops` (``EMITTERS``). Literals are spelled so that the
compiler sees exactly the intended bits: hexadecimal floating constants for finite values
(§6.1.1 / C99 §6.4.4.2), ``INFINITY`` for infinities, ``as_T`` of an unsigned constant for NaNs
with payloads, and integer constants with their suffix and cast.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from fuzz.ir import Expr, Literal, Load, Op, Program
from fuzz.layout import layout
from fuzz.ops import Handlers
from fuzz.types import Type, scalar

KERNEL_NAME = "clfuzz"

EMITTERS: Handlers[Callable[[Op, list[str]], str]] = Handlers()
emitter = EMITTERS.register


@emitter("convert")
def _convert(op: Op, args: list[str]) -> str:
    sat = "_sat" if op.attr("sat") else ""
    rnd = f"_{op.attr('rounding')}" if op.attr("rounding") else ""
    return f"convert_{op.type.c_name}{sat}{rnd}({args[0]})"


@emitter("cast")
def _cast(op: Op, args: list[str]) -> str:
    return f"(({op.type.c_name})({args[0]}))"


@emitter("as")
def _as(op: Op, args: list[str]) -> str:
    return f"as_{op.type.c_name}({args[0]})"


@emitter("arith")
def _arith(op: Op, args: list[str]) -> str:
    return f"({args[0]} {op.attr('operator')} {args[1]})"


def _int_literal(value: int, name: str) -> str:
    s = scalar(name)
    if s.signed and value == s.min:
        # -2147483648 is not a constant of type int in C: spell MIN as -MAX-1.
        return f"(({name})(-{s.max}{'L' if s.bits == 64 else ''}-1))"
    suffix = {"long": "L", "ulong": "UL", "uint": "U"}.get(name, "")
    return f"(({name}){value}{suffix})"


def _float_literal(bits: int, name: str) -> str:
    s = scalar(name)
    value = np.array([bits], dtype=s.bits_dtype).view(s.dtype)[0]
    if math.isnan(value):
        u = {"half": "ushort", "float": "uint", "double": "ulong"}[name]
        suffix = {"uint": "U", "ulong": "UL"}.get(u, "")
        return f"as_{name}(({u}){bits:#x}{suffix})"
    if math.isinf(value):
        return f"(({name}){'-' if value < 0 else ''}INFINITY)"
    text = float(value).hex()
    if name == "float":
        return f"({text}f)"
    if name == "half":
        return f"(({name}){text}f)"
    return f"({text})"


def literal(lit: Literal) -> str:
    """The source text of a literal of any scalar or vector type."""
    elem = lit.type.elem
    lanes = []
    for bits in lit.bits:
        if elem.is_float:
            lanes.append(_float_literal(bits, elem.name))
        else:
            value = int(np.array([bits], dtype=elem.bits_dtype).view(elem.dtype)[0])
            lanes.append(_int_literal(value, elem.name))
    if lit.type.width == 1:
        return lanes[0]
    return f"(({lit.type.c_name})({', '.join(lanes)}))"


def expression(expr: Expr) -> str:
    if isinstance(expr, Load):
        return f"{expr.buffer}[gid]"
    if isinstance(expr, Literal):
        return literal(expr)
    return EMITTERS[expr.op](expr, [expression(a) for a in expr.args])


def _pointer(t: Type, const: bool) -> str:
    return f"global {'const ' if const else ''}{t.c_name}*"


def emit(program: Program) -> str:
    """The OpenCL C source of ``program``: one kernel ``clfuzz(in, out)`` over packed buffers."""
    lay = layout(program)
    lines = []
    if "fp64" in program.requires:
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if "fp16" in program.requires:
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
    # FP_CONTRACT defaults to ON (§6.9.d / DIGEST §5.1): turn it off so a*b+c is never fused.
    lines.append("#pragma OPENCL FP_CONTRACT OFF")
    lines.append(f"__kernel void {KERNEL_NAME}(global const uchar* restrict in, global uchar* restrict out)")
    lines.append("{")
    lines.append("    const size_t gid = get_global_id(0);")
    for b in program.buffers:
        region = (lay.inputs if b.role == "in" else lay.outputs)[b.name]
        base = "in" if b.role == "in" else "out"
        ptr = _pointer(b.type, b.role == "in")
        lines.append(f"    {ptr} {b.name} = ({ptr})({base} + {region.offset});")
    for s in program.body:
        lines.append(f"    {s.buffer}[gid] = {expression(s.value)};")
    lines.append("}")
    return "\n".join(lines) + "\n"
