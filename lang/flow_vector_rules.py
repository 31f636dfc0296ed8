"""The rules of a flow program's vector values (lang.flow_vectors), which lang.flow_rules.check
applies: each function raises :class:`lang.nodes.InvalidProgram` with one line naming the rule
broken (OpenCL C 3.0.19 unless another document is named).

* **types** (§6.3.2): a vector has an element type of lang.flow and 2, 3, 4, 8 or 16 components;
  vectors are kernel variables only (no vector input, output, array, helper or constant);
* **arithmetic** (§6.5, C99 §6.5p5: a vector's components take no integer promotion, so a signed
  component's ``+ - *`` may overflow): ``+ - *`` on unsigned and float components, ``& | ^`` on
  integers, the built-ins ``min max add_sat sub_sat hadd rhadd`` on integers (§6.15.3: defined for
  every operand);
* **components** (§6.3.7): ``.xyzw`` only on vectors of up to four components, ``.lo .hi .even
  .odd`` on 2, 4, 8 and 16 components, every index below the width, a result of 1, 2, 3, 4, 8 or 16
  components; a swizzle written names each component once;
* **shuffle, shuffle2** (§6.15.13): inputs of 2, 4, 8 or 16 components, a mask of unsigned
  components of the inputs' element size and 2, 4, 8 or 16 of them;
* **select** (§6.15.6): ``c`` has integer components of ``a``'s size, as many as ``a``.
"""

from __future__ import annotations

from typing import Callable

from lang.flow_vectors import (
    ELEMENTS,
    HALVES,
    NAMES,
    SPELLINGS,
    VBIN_OPS,
    VCALL_FNS,
    WIDTHS,
    Shuffle,
    Swizzle,
    SwizzleStore,
    VBin,
    VCall,
    Vec,
    VSelect,
    element,
    half,
    is_vector,
    vector,
    width,
)
from lang.nodes import InvalidProgram
from lang.types import scalar

POWERS = (2, 4, 8, 16)


def _fail(text: str) -> None:
    raise InvalidProgram(text)


def check_declarations(p) -> None:
    """Vectors only as kernel variables (§6.3.2)."""
    named = [(d.name, d.type) for d in (*p.inputs, *p.outputs, *p.arrays)]
    named += [(d.name, d.type) for f in p.functions for d in (*f.params, *f.variables, *f.pointers)]
    for name, t in named:
        if t != element(t):
            _fail(f"{name} is a {t}: vectors are kernel variables only (outputs read their components)")
    for d in p.variables:
        if d.type != element(d.type) and not is_vector(d.type):
            _fail(f"variable {d.name}: {d.type} is no vector of 2, 3, 4, 8 or 16 {', '.join(ELEMENTS)} (§6.3.2)")


def check_expr(e, typeof: Callable) -> str:
    """Check a vector expression (``typeof`` checks an operand and gives its type); its type."""
    types = [typeof(c) for c in _operands(e)]
    if isinstance(e, Vec):
        if not is_vector(e.type) or types != [element(e.type)] * width(e.type):
            _fail(f"({e.type})(...) with parts {types}: one {element(e.type)} per component (§6.3.6)")
    elif isinstance(e, VBin):
        _vbin(e, types)
    elif isinstance(e, VCall):
        if e.fn not in VCALL_FNS or types != [e.type] * 2 or not is_vector(e.type) or _is_float(e.type):
            _fail(f"{e.fn} of {types}: {', '.join(VCALL_FNS)} of two integer vectors of one type (§6.15.3)")
    elif isinstance(e, Swizzle):
        _components(types[0], e.comps, e.spelling, e.type)
    elif isinstance(e, Shuffle):
        _shuffle(e, types)
    elif isinstance(e, VSelect):
        a, b, c = types
        if not is_vector(a) or b != a or not is_vector(c) or _is_float(c) or width(c) != width(a) or _size(c) != _size(a):
            _fail(f"select({a}, {b}, {c}): c of integer components of a's size and number (§6.15.6)")
    return e.type


def _operands(e) -> tuple:
    if isinstance(e, Vec):
        return e.parts
    if isinstance(e, VCall):
        return e.args
    if isinstance(e, Shuffle):
        return (e.x, *(() if e.y is None else (e.y,)), e.mask)
    return (e.a,) if isinstance(e, Swizzle) else (e.a, e.b) if isinstance(e, VBin) else (e.a, e.b, e.c)


def _is_float(t: str) -> bool:
    return scalar(element(t)).is_float


def _size(t: str) -> int:
    return scalar(element(t)).size


def _vbin(e: VBin, types: list[str]) -> None:
    if types != [e.type] * 2 or not is_vector(e.type) or e.op not in VBIN_OPS:
        _fail(f"{e.op} of {types} as {e.type}: {', '.join(VBIN_OPS)} of two vectors of one type")
    s = scalar(element(e.type))
    if e.op in ("add", "sub", "mul") and s.is_int and s.signed:
        _fail(f"{e.op} of {e.type}: signed components may overflow, no promotion for vectors (§6.5, C99 §6.5p5)")
    if s.is_float and e.op not in ("add", "sub", "mul"):
        _fail(f"{e.op} of {e.type}: float vectors + - * only (§7.4 Table 65)")


def _components(t: str, comps: tuple[int, ...], spelling: str, result: str) -> None:
    """The rules of §6.3.7 for ``t.<comps>`` giving ``result``."""
    if not is_vector(t) or spelling not in SPELLINGS:
        _fail(f"components of a {t} spelled {spelling!r}: a vector's, spelled {', '.join(SPELLINGS)} (§6.3.7)")
    n = width(t)
    if not all(0 <= c < n for c in comps) or len(comps) not in (1, *WIDTHS):
        _fail(f"components {comps} of a {t}: each below {n}, 1, 2, 3, 4, 8 or 16 of them (§6.3.7)")
    if spelling == "xyzw" and n > len(NAMES):
        _fail(f".xyzw of a {t}: only vectors of up to four components (§6.3.7)")
    if spelling in HALVES and (n not in POWERS or comps != half(spelling, n)):
        _fail(f".{spelling} of a {t}: 2, 4, 8 or 16 components, its half exactly (§6.3.7)")
    if result != vector(element(t), len(comps)):
        _fail(f"components {comps} of a {t} are a {vector(element(t), len(comps))}, not {result}")


def _shuffle(e: Shuffle, types: list[str]) -> None:
    x, m = types[0], types[-1]
    if not is_vector(x) or width(x) not in POWERS or (e.y is not None and types[1] != x):
        _fail(f"shuffle of {types[:-1]}: inputs of one type of 2, 4, 8 or 16 components (§6.15.13)")
    mask = scalar(element(m))
    if not is_vector(m) or width(m) not in POWERS or mask.is_float or mask.signed or mask.size != _size(x):
        _fail(f"shuffle mask {m}: 2, 4, 8 or 16 unsigned components of {x}'s element size (§6.15.13)")
    if e.type != vector(element(x), width(m)):
        _fail(f"shuffle of {x} by {m} gives a {vector(element(x), width(m))}, not {e.type}")


def check_store(s: SwizzleStore, scalars: dict[str, str], typeof: Callable) -> None:
    """``var.<comps> = value``: a vector variable in scope, each component named once (§6.3.7)."""
    t = scalars.get(s.var, "")
    if not is_vector(t) or len(set(s.comps)) != len(s.comps):
        _fail(f"store into {s.var}.{s.comps}: components of a vector variable in scope, each named once (§6.3.7)")
    _components(t, s.comps, s.spelling, typeof(s.value))


def scalar_only(e, children: Callable) -> None:
    """A scalar operation (lang.flow's nodes but a variable) neither takes nor gives a vector."""
    if any(t != element(t) for t in (e.type, *(c.type for c in children(e)))):
        _fail(f"{type(e).__name__} of a vector: vectors change only through the vector operations (lang.flow_vectors)")
