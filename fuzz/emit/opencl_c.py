"""Program -> OpenCL C kernel source.

One handler per operation of :mod:`lang.ops` (``EMITTERS``). Literals are spelled so that the
compiler sees exactly the intended bits: hexadecimal floating constants for finite values
(§6.1.1 / C99 §6.4.4.2), ``INFINITY`` for infinities, ``as_T`` of an unsigned constant for NaNs
with payloads, and integer constants with their suffix and cast.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from fuzz.emit.opencl_shapes import helpers, index_lines, wrap_lines
from lang.declared import check_reader
from lang.images import ADDRESSING, DIMS, FILTERS
from lang.ir import Buffer, Expr, Literal, Load, Op, Program, Sampler
from lang.layout import layout, sampler_arguments
from lang.maths import FUNCTIONS
from lang.ops import (
    ATOMICS,
    INTEGER_BUILTINS,
    OPS,
    RELATIONAL_BUILTINS,
    Handlers,
    atomic_function,
    spelling,
    swizzle_suffix,
)
from lang.types import Type, scalar

KERNEL_NAME = "clfuzz"

class Body:
    """The statements of a kernel body being written. An operation that needs a variable (an
    assignment to a swizzle, operands a guard reads twice) declares a temporary before the
    statement that uses it: expressions have no side effects, so that changes no value.
    ``target`` is the output buffer of the statement being written (vstoren writes into it)."""

    def __init__(self, fallback: Callable[[Op, list[str]], str] | None = None) -> None:
        self.lines: list[str] = []
        self.temps = 0
        self.target = ""
        self.fallback = fallback  # renders operations OpenCL C cannot express (the judge's texts)

    def temp(self, t: Type, value: str) -> str:
        name = f"t{self.temps}"
        self.temps += 1
        self.lines.append(f"{t.c_name} {name} = {value};")
        return name

    def expression(self, expr: Expr) -> str | None:
        """The text of ``expr``; None for a statement form that wrote its own line (vstoren)."""
        if isinstance(expr, Load):
            return f"{expr.buffer}[gid]"
        if isinstance(expr, Literal):
            return literal(expr)
        args = [self.expression(a) for a in expr.args]
        if expr.op not in EMITTERS and self.fallback is not None:
            return self.fallback(expr, args)
        return EMITTERS[expr.op](self, expr, args)


EMITTERS: Handlers[Callable[[Body, Op, list[str]], str | None]] = Handlers()
emitter = EMITTERS.register


@emitter("convert")
def _convert(body: Body, op: Op, args: list[str]) -> str:
    return f"{spelling('convert', op.type, dict(op.attrs))}({args[0]})"


@emitter("cast")
def _cast(body: Body, op: Op, args: list[str]) -> str:
    return f"(({op.type.c_name})({args[0]}))"


@emitter("as")
def _as(body: Body, op: Op, args: list[str]) -> str:
    return f"as_{op.type.c_name}({args[0]})"


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


def text(expr: Expr, fallback: Callable[[Op, list[str]], str] | None = None, target: str = "") -> str:
    """``expr`` (stored into ``target``) as one line for people: its temporaries' declarations,
    then the expression."""
    body = Body(fallback)
    body.target = target
    value = body.expression(expr)
    return " ".join(body.lines + ([value] if value is not None else []))


def _pointer(t: Type, const: bool) -> str:
    return f"global {'const ' if const else ''}{t.c_name}*"


def shared_type(b: Buffer) -> str:
    """The element type atomics see in a shared buffer: ``int``, ``atomic_int``, ``atomic_flag``."""
    return {"": b.type.c_name, "atomic": f"atomic_{b.type.c_name}", "flag": "atomic_flag"}[b.kind]


RELAXED_WORK_GROUP = "memory_order_relaxed, memory_scope_work_group"


def _shared(b: Buffer, lay, lines: list[str], prologue: list[str], epilogue: list[str]) -> None:
    """Declare a shared buffer: a pointer into ``out`` (global; moved to the work-group's partition
    when ``per_group``) or a local array initialised from ``in`` by one work-item per element
    before a barrier and copied out to ``out`` after the last one (§6.15.12.6 atomic_init,
    §6.15.12.10 flags start clear after atomic_flag_clear)."""
    t = shared_type(b)
    if b.role == "global":
        region = lay.outputs[b.name]
        partition = f" + grp * {b.count}" if b.per_group else ""
        lines.append(f"volatile global {t}* {b.name} = (volatile global {t}*)(out + {region.offset}){partition};")
        return
    lines.append(f"local {t} {b.name}[{b.count}];")
    elem = f"{b.name}[lid]"
    if b.kind == "flag":
        prologue.append(f"if (lid < {b.count}) atomic_flag_clear_explicit(&{elem}, {RELAXED_WORK_GROUP});")
        return
    init = f"((global const {b.type.c_name}*)(in + {lay.inputs[b.name].offset}))[grp * {b.count} + lid]"
    final = f"((global {b.type.c_name}*)(out + {lay.outputs[b.name].offset}))[grp * {b.count} + lid]"
    if b.kind == "atomic":
        prologue.append(f"if (lid < {b.count}) atomic_init(&{elem}, {init});")
        epilogue.append(f"if (lid < {b.count}) {final} = atomic_load_explicit(&{elem}, {RELAXED_WORK_GROUP});")
    else:
        prologue.append(f"if (lid < {b.count}) {elem} = {init};")
        epilogue.append(f"if (lid < {b.count}) {final} = {elem};")


def emit(program: Program, params: tuple[str, ...] = (), tail: tuple[str, ...] = ()) -> str:
    """The OpenCL C source of ``program``: one kernel ``clfuzz(in, out)`` over packed buffers;
    ``params`` are appended to the kernel's parameters and ``tail`` to its body, after the
    statements (a piglit test's copies of the lanes it checks: triage.piglit_text)."""
    lay = layout(program)
    lines = []
    if "fp64" in program.requires:
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if "fp16" in program.requires:
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
    if "int64_atomics" in program.requires:
        lines.append("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable")
        lines.append("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable")
    # FP_CONTRACT defaults to ON (§6.15.2.1): turn it off so a*b+c is never fused.
    lines.append("#pragma OPENCL FP_CONTRACT OFF")
    kernel_params = ["global const uchar* restrict in", "global uchar* restrict out"]
    kernel_params += [f"read_only {DIMS[i.dim].c_type} {i.name}" for i in program.images]
    kernel_params += [f"sampler_t {s.name}" for s in sampler_arguments(program)] + list(params)
    lines += [f"constant sampler_t {s.name} = {sampler_value(s)};" for s in program.samplers if s.scope == "program"]
    lines += helpers(program)
    lines.append(f"__kernel void {KERNEL_NAME}({', '.join(kernel_params)})")
    lines.append("{")
    lines += [f"    {line}" for line in index_lines(program, lay)]
    lines += [f"    const sampler_t {s.name} = {sampler_value(s)};" for s in program.samplers if s.scope == "kernel"]
    if program.local_size:
        lines.append("    const size_t lid = get_local_id(0), grp = get_group_id(0);")
    decls: list[str] = []
    prologue: list[str] = []
    epilogue: list[str] = []
    for b in program.buffers:
        if b.shared:
            _shared(b, lay, decls, prologue, epilogue)
            continue
        region = (lay.inputs if b.role == "in" else lay.outputs)[b.name]
        base = "in" if b.role == "in" else "out"
        ptr = _pointer(b.type, b.role == "in")
        decls.append(f"{ptr} {b.name} = ({ptr})({base} + {region.offset});")
    body = Body()
    for s in program.body:
        body.target = s.buffer
        value = body.expression(s.value)
        if value is not None:
            body.lines.append(f"{s.buffer}[gid] = {value};")
    barrier = ["barrier(CLK_LOCAL_MEM_FENCE);"]
    lines.extend(f"    {line}" for line in decls + (prologue and prologue + barrier) + wrap_lines(program, body.lines)
                 + (epilogue and barrier + epilogue) + list(tail))
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- expressions (lang.ops area "expressions"; oracles.expressions) --------------------------------


@emitter("swizzle")
def _swizzle(body: Body, op: Op, args: list[str]) -> str:
    return f"({args[0]}).{swizzle_suffix(op.attr('form'), op.attr('components'))}"


@emitter("insert")
def _insert(body: Body, op: Op, args: list[str]) -> str:
    """``T t = base; t.comps = value;``: a swizzle is an l-value only on a variable (§6.3.7)."""
    t = body.temp(op.type, args[0])
    body.lines.append(f"{t}.{swizzle_suffix(op.attr('form'), op.attr('components'))} = {args[1]};")
    return t


@emitter("vec")
def _vec(body: Body, op: Op, args: list[str]) -> str:
    return f"(({op.type.c_name})({', '.join(args)}))"


@emitter("vload")
def _vload(body: Body, op: Op, args: list[str]) -> str:
    """vloadn from the scalars of the operand's element: ``vload3(1, (const global T*)&in0[gid])``."""
    return f"vload{op.type.width}({op.attr('offset')}, (const global {op.type.scalar}*)&{args[0]})"


@emitter("vstore")
def _vstore(body: Body, op: Op, args: list[str]) -> None:
    n = op.args[0].type.width
    body.lines.append(f"vstore{n}({args[0]}, {op.attr('offset')}, (global {op.type.scalar}*)&{body.target}[gid]);")


@emitter("ternary")
def _ternary(body: Body, op: Op, args: list[str]) -> str:
    return f"({args[0]} ? {args[1]} : {args[2]})"


@emitter("arith")
@emitter("compare")
@emitter("logic")
@emitter("shift")
def _binary(body: Body, op: Op, args: list[str]) -> str:
    return f"({args[0]} {op.attr('operator')} {args[1]})"


@emitter("not")
@emitter("complement")
def _unary(body: Body, op: Op, args: list[str]) -> str:
    return f"({'!' if op.op == 'not' else '~'}{args[0]})"


def _splat(t: Type, value: int) -> str:
    """An integer constant of type ``t`` (a scalar, or a vector cast from one)."""
    lane = _int_literal(value, t.scalar)
    return lane if t.width == 1 else f"(({t.c_name}){lane})"


@emitter("div")
def _div(body: Body, op: Op, args: list[str]) -> str:
    """``x / y`` with the divisor replaced by 1 where it is 0, or -1 under MIN, in the program
    itself: ``(y == 0 || (x == MIN && y == -1)) ? 1 : y`` for scalars, and for vectors
    ``select(y, (T)1, (y == 0) | (x == MIN & y == -1))`` (the condition's lanes are -1/0, §6.15.6).
    Not a vector ?:, whose own bugs would then be reported as the division's: Oclgrind 21.10 gives
    0xFF in the true lanes of ``(s == (short2)0) ? (short2)1 : s``."""
    t = op.type
    x, y = body.temp(t, args[0]), body.temp(t, args[1])
    either, both = ("|", "&") if t.is_vector else ("||", "&&")
    unsafe = f"({y} == {_splat(t, 0)})"
    if t.elem.signed:
        unsafe = f"({unsafe} {either} (({x} == {_splat(t, t.elem.min)}) {both} ({y} == {_splat(t, -1)})))"
    divisor = f"select({y}, {_splat(t, 1)}, {unsafe})" if t.is_vector else f"({unsafe} ? {_splat(t, 1)} : {y})"
    return f"({x} {op.attr('operator')} {divisor})"


def _call(body: Body, op: Op, args: list[str]) -> str:
    return f"{op.op}({', '.join(args)})"


for _name in ("shuffle", "shuffle2", "select", "bitselect", "any", "all",
              *(b.name for b in INTEGER_BUILTINS), *(n for n, _, _ in RELATIONAL_BUILTINS)):
    emitter(_name)(_call)


# -- atomics (lang.ops area "atomics"; oracles.atomics) ----------------------------------------------


def location(op: Op) -> str:
    """``&A[base + (id / div) % mod]`` (a grouped global buffer's pointer already points at the
    work-group's partition)."""
    which, div, mod, base = op.attr("index")
    index = which if div == 1 else f"{which} / {div}"
    index = f"{base}" if mod == 1 else f"{index} % {mod}" if base == 0 else f"{base} + {index} % {mod}"
    return f"&{op.attr('location')}[{index}]"


def _order(name: str) -> str:
    return f"memory_order_{name}"


def _atomic(body: Body, op: Op, args: list[str]) -> str | None:
    """The atomic function of the operation's form with its pointer, operands and (``_explicit``)
    memory order(s) and scope; a compare-exchange keeps expected in a variable and gives
    ``(T2)(expected after, success)``; store and clear are statements of their own."""
    name = op.op[len("atomic_"):]
    call = atomic_function(op.op, dict(op.attrs))
    explicit = [_order(op.attr("order"))]
    if name == "compare_exchange":
        t = op.type.elem
        expected = body.temp(Type(t.name), args[0])
        operands = [location(op), f"&{expected}", args[1]]
        explicit.append(_order(op.attr("failure")))
    else:
        operands = [location(op), *args]
    if op.attr("form") == "explicit":
        operands += explicit + [f"memory_scope_{op.attr('scope')}"]
    text = f"{call}({', '.join(operands)})"
    if name in ("store", "flag_clear"):
        body.lines.append(f"{text};")
        return None
    if name == "compare_exchange":
        success = body.temp(Type(op.type.scalar), text)
        return f"(({op.type.c_name})({expected}, {success}))"
    return f"(({op.type.c_name}){text})"


for _name, *_ in ATOMICS:
    emitter(f"atomic_{_name}")(_atomic)


# -- images (lang.ops area "images"; oracles.images) ------------------------------------------------


def sampler_value(s: Sampler) -> str:
    """A sampler literal (§6.15.15.1): ``CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR``."""
    coords = f"CLK_NORMALIZED_COORDS_{'TRUE' if s.normalized else 'FALSE'}"
    return f"{coords} | {ADDRESSING[s.addressing][1]} | {FILTERS[s.filter][1]}"


@emitter("read_image")
def _read_image(body: Body, op: Op, args: list[str]) -> str:
    """``read_imagef(img, smp, coord)``, or ``read_imagef(img, coord)`` without a sampler (§6.15.15.3)."""
    operands = [op.attr("image"), *([op.attr("sampler")] if op.attr("sampler") else []), args[0]]
    return f"{spelling('read_image', op.type, {})}({', '.join(operands)})"


# -- floating-point arithmetic and built-ins (lang.ops area "math"; oracles.math) -------------------


def _math(body: Body, op: Op, args: list[str]) -> str:
    """``fn(args)``, an out-parameter as the address of its output element (``fract(x,
    &out1[gid])``: the global-pointer overload, §6.15.2), and ``x / y`` for fdiv."""
    if op.op == "fdiv":
        return f"({args[0]} / {args[1]})"
    pointee = [f"&{op.attr('out')}[gid]"] if FUNCTIONS[op.op].out else []
    return f"{FUNCTIONS[op.op].c_name}({', '.join(args + pointee)})"


for _name in FUNCTIONS:
    emitter(_name)(_math)

check_reader("the OpenCL C emitter", EMITTERS, (n for n, spec in OPS.items() if "opencl-c" in spec.paths))
