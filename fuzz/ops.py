"""The operations under test, each declared once.

Every entry names an operation of the IR (:class:`fuzz.ir.Op`), its area, arity and the spec
section that defines it. The readers register their handler for each name: the OpenCL C
emitter (:data:`fuzz.emit.opencl_c.EMITTERS`), the oracle (:data:`oracles.evaluate.REFERENCES`)
and the strategies (:data:`fuzz.strategies.conversions.BUILDERS`). ``tests/test_ops_table.py``
fails when any reader lacks any entry, so adding a construct means touching every reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

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


@dataclass(frozen=True)
class OpSpec:
    name: str
    area: str
    arity: int
    section: str  # where the spec defines it
    summary: str


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
    )
}

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
    return op_name
