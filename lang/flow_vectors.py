"""Vector values of flow programs (lang.flow): the nodes, and the facts of their types.

A vector variable is a :class:`lang.flow.Decl` of a vector type (``uint4``, ``char16``,
``float3``: an element type of lang.flow and a width of 2, 3, 4, 8 or 16, OpenCL C 3.0.19 §6.3.2),
every component starting at ``init``; it is read by :class:`lang.flow.Var`, assigned whole by
:class:`lang.flow.Assign` and carried through loops and branches like a scalar. The nodes here
change it:

* :class:`Vec` ``(T)(a, b, ...)``: a vector of scalar parts (§6.3.6, vector literals);
* :class:`VBin` component-wise ``+ - * & | ^`` (§6.5: vectors take no integer promotion; ``+ - *``
  on unsigned and float elements only, where they are defined) and :class:`VCall` the
  component-wise built-ins ``min max add_sat sub_sat hadd rhadd`` (§6.15.3);
* :class:`Swizzle` a read of components (§6.3.7, vector components: ``v.s31``, ``v.xy``,
  ``v.lo``, ``v.hi``, ``v.even``, ``v.odd``); one component is a scalar of the element type;
* :class:`SwizzleStore` ``v.xz = value`` (a statement; each component named once, §6.3.7);
* :class:`Shuffle` ``shuffle(x, mask)`` and ``shuffle2(x, y, mask)`` (§6.15.13, miscellaneous
  vector functions: only the low ``log2(m)`` (``log2(2m)``) bits of each mask component count);
* :class:`VSelect` ``select(a, b, c)`` (§6.15.6, relational: each component is ``b``'s where the
  most significant bit of ``c``'s is set, else ``a``'s).

This module imports nothing of lang.flow (which lists these nodes in its Expr and Stmt unions).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

ELEMENTS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double")
WIDTHS = (2, 3, 4, 8, 16)
NAMES = "xyzw"
HALVES = ("lo", "hi", "even", "odd")
SPELLINGS = ("s", "xyzw", *HALVES)


def split(t: str) -> tuple[str, int]:
    """``(element, width)`` of a type name: ``("uint", 4)`` for ``uint4``, ``("uint", 1)`` for ``uint``."""
    head = t.rstrip("0123456789")
    return (head, int(t[len(head):])) if head != t else (t, 1)


def is_vector(t: str) -> bool:
    e, w = split(t)
    return w > 1 and e in ELEMENTS and w in WIDTHS


def element(t: str) -> str:
    """The element type of a vector type; a scalar type itself."""
    return split(t)[0]


def width(t: str) -> int:
    return split(t)[1]


def vector(e: str, w: int) -> str:
    """The type of ``w`` components of ``e`` (``e`` itself when ``w`` is 1)."""
    return e if w == 1 else f"{e}{w}"


def half(spelling: str, n: int) -> tuple[int, ...]:
    """The components ``.lo .hi .even .odd`` name in a vector of ``n`` (a power of two)."""
    return {"lo": tuple(range(n // 2)), "hi": tuple(range(n // 2, n)), "even": tuple(range(0, n, 2)),
            "odd": tuple(range(1, n, 2))}[spelling]


def suffix(comps: tuple[int, ...], spelling: str) -> str:
    """The text after the dot: ``s31``, ``xy``, ``lo``."""
    if spelling == "s":
        return "s" + "".join("0123456789abcdef"[c] for c in comps)
    return "".join(NAMES[c] for c in comps) if spelling == "xyzw" else spelling


@dataclass(frozen=True)
class Vec:
    """``(type)(parts...)``: one scalar part of the element type per component."""

    type: str
    parts: tuple[Any, ...]


@dataclass(frozen=True)
class VBin:
    """``(a op b)`` component-wise, ``op`` one of ``add sub mul and or xor``."""

    op: str
    a: Any
    b: Any
    type: str


@dataclass(frozen=True)
class VCall:
    """A component-wise built-in of two vectors: ``min max add_sat sub_sat hadd rhadd``."""

    fn: str
    args: tuple[Any, ...]
    type: str


@dataclass(frozen=True)
class Swizzle:
    """``a.<suffix(comps, spelling)>``: the components ``comps`` of vector ``a``, of ``type``."""

    a: Any
    comps: tuple[int, ...]
    spelling: str
    type: str


@dataclass(frozen=True)
class Shuffle:
    """``shuffle(x, mask)`` (``y`` None) or ``shuffle2(x, y, mask)``: ``mask`` an unsigned vector
    with elements of ``x``'s size; the result has ``mask``'s width and ``x``'s element type."""

    x: Any
    y: Any
    mask: Any
    type: str


@dataclass(frozen=True)
class VSelect:
    """``select(a, b, c)``: per component, ``b`` where the MSB of ``c`` is set, else ``a``."""

    a: Any
    b: Any
    c: Any

    @property
    def type(self) -> str:
        return self.a.type


@dataclass(frozen=True)
class SwizzleStore:
    """``var.<suffix(comps, spelling)> = value``: the named components of vector ``var`` take
    ``value``'s (a scalar when one component is named)."""

    var: str
    comps: tuple[int, ...]
    spelling: str
    value: Any


EXPRESSIONS = (Vec, VBin, VCall, Swizzle, Shuffle, VSelect)
STATEMENTS = (SwizzleStore,)
VBIN_OPS = ("add", "sub", "mul", "and", "or", "xor")
VCALL_FNS = ("min", "max", "add_sat", "sub_sat", "hadd", "rhadd")
_FIELDS = {Vec: ("parts",), VBin: ("a", "b"), VCall: ("args",), Swizzle: ("a",), Shuffle: ("x", "y", "mask"),
           VSelect: ("a", "b", "c")}


def children(e: Any) -> tuple[Any, ...]:
    """The operands of a vector expression."""
    if isinstance(e, (Vec, VCall)):
        return e.parts if isinstance(e, Vec) else e.args
    return tuple(getattr(e, f) for f in _FIELDS[type(e)] if getattr(e, f) is not None)


def with_child(e: Any, i: int, c: Any) -> Any:
    """``e`` with its ``i``-th operand (as :func:`children` counts) replaced by ``c``."""
    if isinstance(e, (Vec, VCall)):
        name = _FIELDS[type(e)][0]
        old = getattr(e, name)
        return replace(e, **{name: old[:i] + (c,) + old[i + 1:]})
    names = [f for f in _FIELDS[type(e)] if getattr(e, f) is not None]
    return replace(e, **{names[i]: c})
