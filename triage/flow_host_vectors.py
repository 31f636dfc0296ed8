"""The host-C spelling of a flow program's vectors (lang.flow_vectors) for tests/flow_host.py,
written independently of the interpreter (oracles.flow_vectors): GCC's vector extensions
(``vector_size``; a 3-vector has four lanes, as in OpenCL C §6.3.5) carry the values, their
``+ - * & | ^`` work component by component, and everything else is a loop over the components
in C: the built-ins call tests/flow_host.py's scalar ones on each, a swizzle copies components by
index, ``shuffle``/``shuffle2`` index by each mask component modulo ``m`` (``2m``), which for
the powers of two §6.15.13 allows is its low bits, and ``select`` tests bit ``BITS - 1`` of each
component of ``c`` (§6.15.6).
"""

from __future__ import annotations

from itertools import count

from fuzz.emit.opencl_flow_vectors import VectorText
from lang.flow_vectors import ELEMENTS, WIDTHS, Shuffle, Swizzle, SwizzleStore, VBin, VCall, Vec, VSelect, element, width
from lang.types import scalar

INTEGERS = ELEMENTS[:8]
VFN = r"""
#define VFN(F, T, N) static T##N F##_##T##N(T##N a, T##N b) { T##N r = {0}; \
    for (int i = 0; i < N; i++) r[i] = F##_##T(a[i], b[i]); return r; }
#define VFNS(T, N) VFN(min, T, N) VFN(max, T, N) VFN(add_sat, T, N) VFN(sub_sat, T, N) VFN(hadd, T, N) VFN(rhadd, T, N)
"""


class HostVectors(VectorText):
    """Vectors in the host-C dialect (the module docstring)."""

    def __init__(self) -> None:
        self.names = count()

    def header(self) -> list[str]:
        lines = [f"typedef {e} {e}{n} __attribute__((vector_size({scalar(e).size * (4 if n == 3 else n)})));"
                 for e in ELEMENTS for n in WIDTHS]
        return lines + [VFN] + [f"VFNS({e}, {n})" for e in INTEGERS for n in WIDTHS]

    def init(self, t: str, text: str) -> str:
        if t == element(t):
            return text
        return f"({{ {t} r = {{0}}; for (int i = 0; i < {width(t)}; i++) r[i] = {text}; r; }})"

    def expr(self, w, e) -> str:
        x, k = w.expr, next(self.names)
        if isinstance(e, Vec):
            return f"(({e.type}){{{', '.join(x(p) for p in e.parts)}}})"
        if isinstance(e, VBin):
            return f"({x(e.a)} {'+-*&|^'[('add', 'sub', 'mul', 'and', 'or', 'xor').index(e.op)]} {x(e.b)})"
        if isinstance(e, VCall):
            return f"{e.fn}_{e.type}({x(e.args[0])}, {x(e.args[1])})"
        if isinstance(e, Swizzle):
            picked = ", ".join(f"a{k}[{c}]" for c in e.comps)
            last = f"a{k}[{e.comps[0]}]" if len(e.comps) == 1 else f"({e.type}){{{picked}}}"
            return f"({{ {e.a.type} a{k} = {x(e.a)}; {last}; }})"
        if isinstance(e, Shuffle):
            m = width(e.x.type) * (1 if e.y is None else 2)
            y = "" if e.y is None else f"{e.x.type} y{k} = {x(e.y)}; "
            pick = f"x{k}[j]" if e.y is None else f"j < {m // 2} ? x{k}[j] : y{k}[j - {m // 2}]"
            return (f"({{ {e.x.type} x{k} = {x(e.x)}; {y}{e.mask.type} m{k} = {x(e.mask)}; {e.type} r{k} = {{0}}; "
                    f"for (int i = 0; i < {width(e.type)}; i++) {{ ulong j = (ulong)m{k}[i] % {m}; r{k}[i] = {pick}; }} "
                    f"r{k}; }})")
        assert isinstance(e, VSelect)
        bits = scalar(element(e.c.type)).bits
        return (f"({{ {e.type} a{k} = {x(e.a)}, b{k} = {x(e.b)}; {e.c.type} c{k} = {x(e.c)}; "
                f"for (int i = 0; i < {width(e.type)}; i++) if (((ulong)c{k}[i] >> {bits - 1}) & 1) a{k}[i] = b{k}[i]; "
                f"a{k}; }})")

    def store(self, w, s: SwizzleStore) -> str:
        if len(s.comps) == 1:
            return f"{s.var}[{s.comps[0]}] = {w.expr(s.value)};"
        k = next(self.names)
        parts = " ".join(f"{s.var}[{c}] = t{k}[{j}];" for j, c in enumerate(s.comps))
        return f"{{ {s.value.type} t{k} = {w.expr(s.value)}; {parts} }}"


HOST_VECTORS = HostVectors()
