"""Flow programs (area ``flow``): kernels whose data flows through loops, branches, arrays and calls.

A :class:`FlowProgram` is a structured kernel over a one- to three-dimensional launch
(``global_size``, ``local_size`` and a ``global_offset``: OpenCL C 3.0.19 §6.15.1,
``get_global_id`` is ``get_group_id * get_local_size + get_local_id + get_global_offset``). Each work-item starts with its scalar variables at their
initial constants, runs :attr:`FlowProgram.body` and then writes every :class:`Output` (the value
of one variable) at its global linear id. Unlike a :class:`lang.ir.Program`, whose statements are
straight-line, the values here pass through:

* loops (:class:`Loop`): ``for``, ``while`` and ``do`` forms with an ``int`` counter stepping by
  ``step`` from ``base`` (forward or ``reverse``), ``min(trips, cap)`` iterations (``do``: at least
  one), the trips and base computed from data; ``break`` and ``continue`` (:class:`Exit`) on data;
* branches on data (:class:`If`) and ``?:`` (:class:`Select`);
* private arrays (:class:`Array`, space ``private``) indexed by data, every index reduced modulo
  the array's length, and local arrays exchanged in a work-group (:class:`Exchange`: each
  work-item writes its own element, a barrier, each reads the element its index names, a barrier);
* helper functions (:class:`Function`) with value parameters and pointer parameters (a caller's
  variable, or a caller's private array from an offset: pointer arithmetic within the object);
* integer arithmetic of every width and signedness, float and double ``+ - *`` and ``fma``, and
  (lang.flow_fp) double ``/`` and ``sqrt``, float ``/`` and ``sqrt`` under
  -cl-fp32-correctly-rounded-divide-sqrt, casts between float and double;
* work-item functions (:class:`Item`) whose values the launch fixes;
* structs (:mod:`lang.flow_structs`): struct variables whose members are scalars ``var.member``,
  helpers taking structs by value and by pointer and returning one.

The meaning of every node is the OpenCL C meaning of the text :mod:`fuzz.emit.opencl_flow`
writes for it; the exact interpreter (:mod:`oracles.flow`) computes it and
:mod:`lang.flow_rules` states and checks the rules that keep every program defined.
Nodes are frozen dataclasses; a program is pure data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from math import prod
from typing import Union

from lang.dataform import OMITTED, from_data, to_data
from lang.flow_structs import NODES as STRUCT_NODES
from lang.flow_structs import SInvoke, Struct, StructFunction, StructVar
from lang.flow_vectors import Shuffle, Swizzle, SwizzleStore, VBin, VCall, Vec, VSelect
from lang.ir import InvalidProgram, Program, canonical_json, content_id
from lang.layout import ALIGN
from lang.nodes import Fill
from lang.types import scalar

INT_TYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")
FLOAT_TYPES = ("float", "double")
TRIP_CAP = 64
"""Most iterations of one loop (far below rusticl 22.3's silent 65,535-iteration cut, lang.shapes)."""
BASE_MASK = 0xFF
"""A loop's base is its data masked to 0..255 (with TRIP_CAP and MAX_STEP, no counter overflows)."""
MAX_STEP = 8
OFFSET_CAP = 1 << 16
"""Largest global work offset of a dimension (an offset plus a global id stays far inside ``uint``)."""
ITEMS = ("global_id", "local_id", "group_id", "global_size", "local_size", "num_groups", "global_offset",
         "work_dim", "global_linear_id", "local_linear_id")
"""Work-item functions (OpenCL C 3.0 §6.15.1); ``*_linear_id`` are spelled from the per-dimension
functions (the OpenCL C 2.0 built-ins need -cl-std), except in programs that require ``cl2.0``
(lang.flow_launch), which call the built-ins."""
CL2_ITEMS = ("enqueued_local_size",)
"""Work-item functions of OpenCL C 2.0 (§6.15.1), only in programs that require ``cl2.0`` (lang.flow_launch)."""
UNIFORM_ITEMS = frozenset({"group_id", "global_size", "local_size", "num_groups", "global_offset", "work_dim",
                           "enqueued_local_size"})
"""Work-item functions with one value in a work-group."""


def promoted(t: str) -> str:
    """The type of an arithmetic operation on two values of type ``t`` (the integer promotions,
    C99 §6.3.1.1, which OpenCL C 3.0 §6.4 follows): a type narrower than ``int`` becomes ``int``."""
    return "int" if t in ("char", "uchar", "short", "ushort") else t


# ---- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Const:
    """A constant: an integer's value, or a float's bit pattern."""

    type: str
    value: int


@dataclass(frozen=True)
class Var:
    """A scalar variable (a program's, a loop counter, a helper's parameter or ``*pointer``)."""

    name: str
    type: str


@dataclass(frozen=True)
class Item:
    """``(uint)get_<fn>(dim)``: a work-item function's value for this work-item."""

    fn: str
    dim: int = 0

    @property
    def type(self) -> str:
        return "uint"


@dataclass(frozen=True)
class Load:
    """``buffer[index % count]`` of an input buffer; ``index`` is a ``uint`` expression."""

    buffer: str
    type: str
    index: "Expr"


@dataclass(frozen=True)
class ALoad:
    """``array[index % length]`` of a private array (or a helper's array parameter)."""

    array: str
    type: str
    index: "Expr"


@dataclass(frozen=True)
class Bin:
    """``(a op b)`` with ``a`` and ``b`` of one type. Operators: ``add sub mul and or xor shl shr``
    (``shl``/``shr`` on ``uint``/``ulong``, the count masked to the width), comparisons ``lt le gt
    ge eq ne`` (an ``int`` 0 or 1), and the guarded forms ``sadd ssub smul`` (signed: the exact
    result if representable, else ``a``) and ``sdiv srem`` (``a`` when ``b`` is 0 or the pair is
    MIN, -1); on floats ``add sub mul`` and ``div`` (lang.flow_fp)."""

    op: str
    a: "Expr"
    b: "Expr"
    type: str


@dataclass(frozen=True)
class Un:
    """``neg`` (unsigned, wraps), ``not`` (``~``), ``lnot`` (``!``, an ``int``)."""

    op: str
    a: "Expr"
    type: str


@dataclass(frozen=True)
class Call:
    """A built-in function: integer ``min max clamp add_sat sub_sat hadd rhadd rotate popcount
    clz abs abs_diff mul_hi mul24 mad24``, float ``fma`` and ``sqrt`` (lang.flow_fp)."""

    fn: str
    args: tuple["Expr", ...]
    type: str


@dataclass(frozen=True)
class Cast:
    """``(type)(a)``: integer to integer (two's complement truncation or extension), or a narrow
    integer to a float type that holds it exactly, or between ``float`` and ``double`` (lang.flow_fp)."""

    type: str
    a: "Expr"


@dataclass(frozen=True)
class Select:
    """``cond ? a : b`` (``cond`` an integer)."""

    cond: "Expr"
    a: "Expr"
    b: "Expr"

    @property
    def type(self) -> str:
        return self.a.type


Expr = Union[Const, Var, Item, Load, ALoad, Bin, Un, Call, Cast, Select, Vec, VBin, VCall, Swizzle, Shuffle, VSelect]


# ---- statements -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Assign:
    var: str
    value: Expr


@dataclass(frozen=True)
class AStore:
    """``array[index % length] = value``."""

    array: str
    index: Expr
    value: Expr


@dataclass(frozen=True)
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()


@dataclass(frozen=True)
class Loop:
    """A counted loop: counter ``var`` (an ``int``) takes ``b, b+step, ...`` (``reverse``: the same
    values last first) for ``n`` iterations, ``b = (int)(base & BASE_MASK)``, ``n = min(trips, cap)``
    (``do``: ``max(n, 1)``); ``form`` is how the text loops (``for``, ``while``, ``do``)."""

    form: str
    var: str
    base: Expr
    trips: Expr
    cap: int
    step: int
    reverse: bool
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class Exit:
    """``if (cond) break;`` or ``if (cond) continue;`` (``kind``) of the innermost loop."""

    kind: str
    cond: Expr


@dataclass(frozen=True)
class Exchange:
    """Through local array ``array`` (one element per work-item of the work-group):
    ``array[lid] = value; barrier; var = array[index % length]; barrier``."""

    array: str
    value: Expr
    index: Expr
    var: str


@dataclass(frozen=True)
class Pointer:
    """A pointer argument: ``&var`` (``offset`` unused) or ``array + offset``."""

    name: str
    offset: int = 0
    array: bool = False


@dataclass(frozen=True)
class Invoke:
    """``var = function(args..., pointers...)`` (``var`` empty: the result is dropped)."""

    function: str
    args: tuple[Expr, ...]
    pointers: tuple[Pointer, ...]
    var: str = ""


Stmt = Union[Assign, AStore, If, Loop, Exit, Exchange, Invoke, SwizzleStore, SInvoke]


# ---- declarations and the program -------------------------------------------------------------


@dataclass(frozen=True)
class Decl:
    """A scalar variable with its initial constant (parameters: ``init`` unused)."""

    name: str
    type: str
    init: int = 0


@dataclass(frozen=True)
class Array:
    """A private array with its initial constants, or (space ``local``) a work-group's array of
    one element per work-item (``init`` empty)."""

    name: str
    type: str
    length: int
    space: str = "private"
    init: tuple[int, ...] = ()


@dataclass(frozen=True)
class PointerParam:
    """A helper's pointer parameter: to a scalar (``length`` 0) or to ``length`` array elements."""

    name: str
    type: str
    length: int = 0


@dataclass(frozen=True)
class Function:
    """A helper: ``static T name(params..., private T *pointers...)``; its own variables, body,
    then ``return result``. ``noinline`` adds ``__attribute__((noinline))``."""

    name: str
    params: tuple[Decl, ...]
    pointers: tuple[PointerParam, ...]
    variables: tuple[Decl, ...]
    body: tuple[Stmt, ...]
    result: Expr
    noinline: bool = False

    @property
    def type(self) -> str:
        return self.result.type


@dataclass(frozen=True)
class Input:
    """An input buffer of ``count`` elements (its contents: ``fill``)."""

    name: str
    type: str
    count: int
    fill: Fill


@dataclass(frozen=True)
class Output:
    """Output buffer ``name`` gets variable ``var`` at each work-item's global linear id."""

    name: str
    var: str
    type: str


@dataclass(frozen=True)
class FlowProgram:
    inputs: tuple[Input, ...]
    outputs: tuple[Output, ...]
    variables: tuple[Decl, ...]
    arrays: tuple[Array, ...]
    functions: tuple[Function, ...]
    body: tuple[Stmt, ...]
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    requires: frozenset[str] = frozenset()
    options: str = ""
    area: str = "flow"
    global_offset: tuple[int, ...] = ()  # per dimension (empty: none); get_global_id includes it
    cfg: str = "structured"
    """How the SPIR-V module writes the control flow (lang.shapes.CFGS: with merge instructions, or
    without them and the arms of every ``if`` after their join); the OpenCL C text is the same."""
    structs: tuple[Struct, ...] = field(default=(), metadata={OMITTED: True})
    struct_vars: tuple[StructVar, ...] = field(default=(), metadata={OMITTED: True})
    struct_functions: tuple[StructFunction, ...] = field(default=(), metadata={OMITTED: True})
    """Struct types, the kernel's struct variables and the struct helpers (lang.flow_structs)."""

    @property
    def work_items(self) -> int:
        return prod(self.global_size)

    @property
    def group_items(self) -> int:
        return prod(self.local_size)

    def function(self, name: str) -> Function:
        return next(f for f in self.functions if f.name == name)

    def to_json(self) -> str:
        """The program's canonical JSON (lang.dataform): what the corpus stores and hashes."""
        return canonical_json(to_data(self))

    @cached_property
    def id(self) -> str:
        """The hash of the canonical JSON, as lang.ir.Program's (one programs table holds both)."""
        return content_id(self.to_json())

    @classmethod
    def from_json(cls, text: str) -> "FlowProgram":
        program = program_from_json(text)
        if not isinstance(program, FlowProgram):
            raise InvalidProgram("not a flow program: its JSON has no node FlowProgram")
        return program


def regions(p: FlowProgram) -> tuple[dict[str, int], int, dict[str, int], int]:
    """Where each input lives in the packed ``in`` argument and each output in ``out`` (byte
    offsets, each a multiple of lang.layout.ALIGN), and the two arguments' sizes."""
    def pack(items) -> tuple[dict[str, int], int]:
        offsets, at = {}, 0
        for name, nbytes in items:
            offsets[name] = at
            at += -(-nbytes // ALIGN) * ALIGN
        return offsets, max(at, ALIGN)

    ins, in_bytes = pack((i.name, i.count * scalar(i.type).size) for i in p.inputs)
    outs, out_bytes = pack((o.name, p.work_items * scalar(o.type).size) for o in p.outputs)
    return ins, in_bytes, outs, out_bytes



NODES = {c.__name__: c for c in (Const, Var, Item, Load, ALoad, Bin, Un, Call, Cast, Select, Assign, AStore, If, Loop,
                                 Exit, Exchange, Pointer, Invoke, Decl, Array, PointerParam, Function, Input, Output,
                                 FlowProgram, Vec, VBin, VCall, Swizzle, Shuffle, VSelect, SwizzleStore, *STRUCT_NODES)}
"""Every node of a flow program by its name in the JSON form."""


def program_from_json(text: str) -> Program | FlowProgram:
    """A stored program of any area from its JSON: a flow program (its ``node`` is ``FlowProgram``),
    else a lang.ir.Program."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InvalidProgram(f"program file is not JSON: {e}") from None
    if isinstance(data, dict) and data.get("node") == "FlowProgram":
        return from_data(data, NODES)
    return Program.from_json(text)
