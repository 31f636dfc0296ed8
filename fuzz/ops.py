"""The operations under test, each declared once.

Every entry names an operation of the IR (:class:`fuzz.ir.Op`), its area, arity and the spec
section that defines it. The readers register their handler for each name: the OpenCL C
emitter (:data:`fuzz.emit.opencl_c.EMITTERS`, for the operations OpenCL C can express), the
SPIR-V emitter (:data:`fuzz.emit.spirv.EMITTERS`), the oracle
(:data:`oracles.evaluate.REFERENCES`) and the strategies (:data:`fuzz.strategies.conversions.BUILDERS`).
``tests/test_ops_table.py`` fails when any reader lacks any entry, so adding a construct means
touching every reader.

Some operations exist only in SPIR-V (``paths`` without ``"opencl-c"``): a program that uses one
runs on the SPIR-V paths only (its other statements run everywhere). ``variant`` tells uses of an
operation apart for a route's capability data (``rem:OpFMod`` is a construct of its own: Oclgrind's
route cannot take it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from fuzz.ir import Expr, Op, Program, walk
from fuzz.types import Type

H = TypeVar("H", bound=Callable)


class Handlers(dict[str, H], Generic[H]):
    """One reader's handler for each operation (or statement form), by name: a reader declares
    ``EMITTERS = Handlers()`` and writes ``@EMITTERS.register("convert")`` on each handler."""

    def register(self, name: str) -> Callable[[H], H]:
        def add(fn: H) -> H:
            self[name] = fn
            return fn

        return add


BOTH_PATHS = frozenset({"opencl-c", "spirv"})
SPIRV_ONLY = frozenset({"spirv"})


@dataclass(frozen=True)
class OpSpec:
    name: str
    area: str
    arity: int
    section: str  # where the spec defines it
    summary: str
    paths: frozenset[str] = BOTH_PATHS  # the front ends that can express it
    variant: Callable[[Op], str] | None = None  # what makes a use of it a construct of its own


OPS: dict[str, OpSpec] = {
    o.name: o
    for o in (
        OpSpec("convert", "conversions", 1, "OpenCL C 3.0 §6.4.3",
               "explicit convert_T[_sat][_rte|_rtz|_rtp|_rtn]"),
        OpSpec("cast", "conversions", 1, "OpenCL C 3.0 §6.4.2",
               "C cast (T)x: scalar to scalar, or scalar to vector (replicated)"),
        OpSpec("as", "conversions", 1, "OpenCL C 3.0 §6.4.4",
               "as_T reinterpretation of the same number of bytes"),
        OpSpec("arith", "conversions", 2, "OpenCL C 3.0 §6.4.1, C99 §6.3.1.8",
               "mixed-type + - * under the usual arithmetic conversions"),
        # forms only SPIR-V expresses (SPIR-V 1.6 unified spec, §3.42 instructions; not in the seeds)
        OpSpec("bitcast", "spirv", 1, "SPIR-V §3.42.11 OpBitcast",
               "OpBitcast between vectors (or scalar and vector) of different component counts",
               SPIRV_ONLY),
        OpSpec("vector_shuffle", "spirv", 2, "SPIR-V §3.42.12 OpVectorShuffle",
               "OpVectorShuffle of two vectors with at least one undefined (0xFFFFFFFF) component",
               SPIRV_ONLY, lambda op: "same" if op.args[0].type == op.args[1].type else "mixed"),
        OpSpec("rem", "spirv", 2, "SPIR-V §3.42.13 OpSRem/OpSMod/OpUMod/OpFRem/OpFMod",
               "remainder with the sign of the dividend (rem) or of the divisor (mod); a divisor "
               "that would make it undefined (0, or -1 under MIN) is replaced by 1 first",
               SPIRV_ONLY, lambda op: spelling("rem", op.type, dict(op.attrs))),
        OpSpec("extended", "spirv", 2, "SPIR-V §3.42.13 OpIAddCarry/OpISubBorrow/OpUMulExtended/OpSMulExtended",
               "one member of the two-member struct an extended-arithmetic instruction returns",
               SPIRV_ONLY, lambda op: op.attr("opcode")),
        OpSpec("op_select", "spirv", 4, "SPIR-V §3.42.15 OpSelect, comparisons",
               "OpSelect(a cmp b, x, y) with a Boolean vector condition",
               SPIRV_ONLY),
        OpSpec("reduce", "spirv", 2, "SPIR-V §3.42.15 OpAny/OpAll",
               "OpAny or OpAll of a Boolean vector a cmp b, as an int 1 or 0",
               SPIRV_ONLY, lambda op: op.attr("reduce")),
    )
}

COMPARES: tuple[str, ...] = ("==", "!=", "<", "<=", ">", ">=")
EXTENDED: tuple[str, ...] = ("IAddCarry", "ISubBorrow", "UMulExtended", "SMulExtended")

ROUNDINGS: tuple[str, ...] = ("rte", "rtz", "rtp", "rtn")


def spelling(op_name: str, result: Type, attrs: dict) -> str:
    """The operation as a person reads it: ``convert_int4_sat_rte``, ``as_float``, ``cast``."""
    if op_name == "convert":
        sat = "_sat" if attrs.get("sat") else ""
        rnd = f"_{attrs['rounding']}" if attrs.get("rounding") else ""
        return f"convert_{result.c_name}{sat}{rnd}"
    if op_name == "as":
        return f"as_{result.c_name}"
    if op_name == "cast":
        return f"({result.c_name})"
    if op_name == "arith":
        return f"operator{attrs['operator']}"
    if op_name == "store":
        return "assignment"
    if op_name == "bitcast":
        return f"OpBitcast({result.c_name})"
    if op_name == "vector_shuffle":
        return f"OpVectorShuffle({result.c_name})"
    if op_name == "rem":
        if result.elem.is_int and not result.elem.signed:
            return "OpUMod"
        return f"Op{'F' if result.elem.is_float else 'S'}{'Rem' if attrs['mode'] == 'rem' else 'Mod'}"
    if op_name == "extended":
        return f"Op{attrs['opcode']}.{attrs['member']}"
    if op_name in ("op_select", "reduce"):
        comparison = f"a{attrs['compare']}b{'' if attrs.get('ordered', True) else ' unordered'}"
        return f"Op{'Select' if op_name == 'op_select' else attrs['reduce'].title()}({comparison})"
    return op_name


def constructs(node: Program | Expr) -> frozenset[str]:
    """What a program (its requirements and every statement) or one expression asks of a path:
    the operations it uses and their variants (``rem:OpFMod``); a route's ``unsupported`` set is
    matched against these."""
    if isinstance(node, Program):
        return frozenset(node.requires).union(
            *(constructs(s.value) for s in node.body))
    out = set()
    for sub in walk(node):
        if isinstance(sub, Op):
            out.add(sub.op)
            variant = OPS[sub.op].variant
            if variant is not None:
                out.add(f"{sub.op}:{variant(sub)}")
    return frozenset(out)


def paths_of(node: Program | Expr) -> frozenset[str]:
    """The front ends that can express every operation of a program or expression."""
    out = BOTH_PATHS
    for name in constructs(node) & OPS.keys():
        out = out & OPS[name].paths
    return out
