"""The OpenCL C text of a flow program's vector nodes (lang.flow_vectors), for
:mod:`fuzz.emit.opencl_flow`'s writer: a :class:`VectorText` is the part of a dialect
(:class:`fuzz.emit.opencl_flow.Dialect`) that spells vectors; the host-C dialect of the tests
spells them its own way (triage/flow_host_vectors.py).

OpenCL C 3.0.19: a vector variable starts as ``(T)(x)``, every component ``x`` (§6.3.6, a
scalar cast to a vector replicates it); component-wise operators and built-ins are spelled as
on scalars (§6.5, §6.15.3); components by ``.s<hex>``, ``.xyzw``, ``.lo .hi .even .odd``
(§6.3.7); ``shuffle``, ``shuffle2`` (§6.15.13) and ``select`` (§6.15.6) are the built-ins.
"""

from __future__ import annotations

from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, VBin, VCall, Vec, VSelect, element, suffix

SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}


class VectorText:
    """How OpenCL C spells vectors (see the module docstring); ``w`` is the body's writer, whose
    ``expr`` spells an operand."""

    def header(self) -> list[str]:
        """Declarations the text needs before its functions (none in OpenCL C)."""
        return []

    def init(self, t: str, text: str) -> str:
        """The initialiser of a variable of type ``t`` from the scalar constant ``text``."""
        return text if t == element(t) else f"(({t})({text}))"

    def expr(self, w, e) -> str:
        x = w.expr
        if isinstance(e, Vec):
            return f"(({e.type})({', '.join(x(p) for p in e.parts)}))"
        if isinstance(e, VBin):
            return f"({x(e.a)} {SYMBOLS[e.op]} {x(e.b)})"
        if isinstance(e, VCall):
            return f"{e.fn}({x(e.args[0])}, {x(e.args[1])})"
        if isinstance(e, Swizzle):
            return f"({x(e.a)}).{suffix(e.comps, e.spelling)}"
        if isinstance(e, Shuffle):
            if e.y is None:
                return f"shuffle({x(e.x)}, {x(e.mask)})"
            return f"shuffle2({x(e.x)}, {x(e.y)}, {x(e.mask)})"
        assert isinstance(e, VSelect)
        return f"select({x(e.a)}, {x(e.b)}, {x(e.c)})"

    def store(self, w, s: SwizzleStore) -> str:
        return f"{s.var}.{suffix(s.comps, s.spelling)} = {w.expr(s.value)};"


OPENCL_VECTORS = VectorText()
