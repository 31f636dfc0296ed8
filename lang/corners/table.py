"""The corner table (:func:`table`, see :mod:`lang.corners`): the rows of the math functions, the
integer and relational built-ins, derived from the declarations, beside each area's rows from its
module; the corners a program reaches (:func:`reached`) and those a target can run
(:func:`runnable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lang.corners import atomics, conversions, images, operators, spirv
from lang.corners.classes import (
    EXP_CLASSES,
    FLOAT_CLASSES,
    PARAM_NAMES,
    RESULT_CLASSES,
    class_keys,
    exact_results,
    exp_classes,
    float_classes,
    int_class_names,
    int_classes,
    reached_class_keys,
)
from lang.ir import Literal, Load, Op, Program, walk
from lang.maths import FLOAT_ONLY, FUNCTIONS
from lang.ops import INTEGER, INTEGER_BUILTINS, OPS, RELATIONAL_BUILTINS
from lang.types import VECTOR_WIDTHS, needs_of, scalar

RELATIONAL = frozenset(name for name, _, _ in RELATIONAL_BUILTINS)
SPIRV_OPS = frozenset(name for name, spec in OPS.items() if spec.area == "spirv")
"""The forms only SPIR-V has (lang.corners.spirv)."""
FLOATS = ("float", "double", "half")
INTS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")

CODE_CLASSES: tuple[str, ...] = ("0", "other")
"""Classes of nan()'s code: 0 and the rest."""

RESULTS: dict[str, tuple[tuple[str, str], ...]] = {
    # built-in -> (what, exact expression over the operands a, b, c) whose class is a corner
    "add_sat": (("sum", "a + b"),), "sub_sat": (("sum", "a - b"),),
    "mad_sat": (("product", "a * b"), ("sum", "a * b + c")),
    "mul_hi": (("product", "a * b"),), "mad_hi": (("product", "a * b"),),
    "hadd": (("sum", "a + b"),), "rhadd": (("sum", "a + b + 1"),),
}
"""The result halves of Table 13's built-ins whose results change where the exact value leaves
the type (saturation for add_sat/sub_sat/mad_sat, the carry of hadd/rhadd, the high half of
mul_hi/mad_hi)."""

WORK_ITEMS = 2048
"""Operand classes are read from a program's first work-items only (the sweeps use at most 1024;
a random program's later work-items draw from the same pools), which keeps reading a corpus cheap."""


@dataclass(frozen=True)
class Corner:
    op: str
    type: str  # the scalar type of the operation's first operand (nan: of its result)
    key: str  # w4, w4:scalar, x=-odd, x=+0,y=-inf, product=in-
    needs: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return f"{self.op}:{self.type}:{self.key}"

    @property
    def area(self) -> str:
        return OPS[self.op].area


def _needs(op: str, *types: str) -> frozenset[str]:
    return needs_of(*types) | OPS[op].requires


# ---- the math functions (lang.maths) ------------------------------------------------------------


def math_types(name: str) -> tuple[str, ...]:
    return ("float",) if name in FLOAT_ONLY else FLOATS


def math_widths(name: str) -> tuple[int, ...]:
    f = FUNCTIONS[name]
    return f.geometric_widths if f.group == "geometric" else VECTOR_WIDTHS


def param_classes(letter: str, tname: str = "float") -> tuple[str, ...]:
    """The classes of one parameter letter of lang.maths (``g``, ``i``, ``u``)."""
    return {"g": FLOAT_CLASSES, "i": EXP_CLASSES, "u": CODE_CLASSES}[letter]


def value_keys(name: str) -> list[str]:
    """The operand-class keys of one math function: each class of a unary or ternary function's
    operands, every pair of classes of a binary one."""
    return class_keys([param_classes(letter) for letter in FUNCTIONS[name].inputs])


def _math_corners() -> list[Corner]:
    out = []
    for name in FUNCTIONS:
        for t in math_types(name):
            needs = _needs(name, t)
            out += [Corner(name, t, f"w{w}", needs) for w in math_widths(name)]
            if FUNCTIONS[name].scalar_form:
                out += [Corner(name, t, f"w{w}:scalar", needs) for w in math_widths(name) if w > 1]
            out += [Corner(name, t, k, needs) for k in value_keys(name)]
    return out


# ---- the integer built-ins (lang.ops.INTEGER_BUILTINS) ------------------------------------------

SIGNED_OF = {8: "char", 16: "short", 32: "int", 64: "long"}
UNSIGNED_OF = {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}


def integer_types(name: str) -> tuple[str, ...]:
    """The operand types (first operand) an integer built-in takes as the strategies build it."""
    if name in ("mul24", "mad24"):
        return ("int", "uint")
    if name == "upsample":
        return ("char", "uchar", "short", "ushort", "int", "uint")
    return INTS


def integer_param_types(name: str, tname: str) -> tuple[str, ...]:
    """Each operand's scalar type for an operand type ``tname``."""
    b = INTEGER[name]
    if name == "upsample":
        return tname, UNSIGNED_OF[scalar(tname).bits]
    return (tname,) * b.arity


def result_type(name: str, tname: str) -> str:
    s = scalar(tname)
    if name in ("abs", "abs_diff"):
        return UNSIGNED_OF[s.bits]
    if name == "upsample":
        return (SIGNED_OF if s.signed else UNSIGNED_OF)[2 * s.bits]
    return tname


def result_classes(name: str, what: str, tname: str) -> tuple[str, ...]:
    if scalar(tname).signed:
        return RESULT_CLASSES
    if name == "sub_sat":
        return "in+", "=max", "=min", "<min"
    return tuple(c for c in ("in+", "=max", "=min", ">max") if not (name == "rhadd" and c == "=min"))


def integer_keys(name: str, tname: str) -> list[str]:
    keys = [f"w{w}" for w in VECTOR_WIDTHS]
    if name in ("min", "max", "clamp"):
        keys += [f"w{w}:scalar" for w in VECTOR_WIDTHS[1:]]
    limited = name in ("mul24", "mad24")
    for k, pt in enumerate(integer_param_types(name, tname)):
        keys += [f"{PARAM_NAMES[k]}={c}" for c in int_classes(pt, limited and k < 2)]
    for what, _ in RESULTS.get(name, ()):
        keys += [f"{what}={c}" for c in result_classes(name, what, tname)]
    return keys


def _integer_corners() -> list[Corner]:
    out = []
    for b in INTEGER_BUILTINS:
        for t in integer_types(b.name):
            needs = _needs(b.name, t, result_type(b.name, t))
            out += [Corner(b.name, t, k, needs) for k in integer_keys(b.name, t)]
    return out


def _relational_corners() -> list[Corner]:
    out = []
    for name, arity, _ in RELATIONAL_BUILTINS:
        for t in FLOATS:
            needs = _needs(name, t)
            out += [Corner(name, t, f"w{w}", needs) for w in VECTOR_WIDTHS]
            out += [Corner(name, t, k, needs) for k in class_keys([FLOAT_CLASSES] * arity)]
    return out


def _spirv_corners() -> list[Corner]:
    return [Corner(op, t, key, needs) for op, t, key, needs in spirv.rows()]


def _atomic_corners() -> list[Corner]:
    return [Corner(op, t, key, needs) for op, t, key, needs in atomics.rows()]


def _image_corners() -> list[Corner]:
    return [Corner("read_image", t, key, needs) for t, key, needs in images.rows()]


def _operator_corners() -> list[Corner]:
    return [Corner(op, t, key, needs | OPS[op].requires) for op, t, key, needs in operators.rows()]


def _conversion_corners() -> list[Corner]:
    return [Corner("convert", src, k, _needs("convert", src, conversions.dst_of(k)))
            for src in FLOATS + INTS for k in conversions.keys(src)]


@lru_cache(maxsize=None)
def table() -> tuple[Corner, ...]:
    """Every corner of every operation the table covers (math functions, integer built-ins, the
    relational built-ins, explicit conversions: :mod:`lang.corners.conversions`, the operators,
    vector operations, casts and as_: :mod:`lang.corners.operators`, image reads:
    :mod:`lang.corners.images`, atomics: :mod:`lang.corners.atomics`, the SPIR-V-only forms:
    :mod:`lang.corners.spirv`)."""
    return tuple(_math_corners() + _integer_corners() + _relational_corners() + _conversion_corners()
                 + _operator_corners() + _image_corners() + _atomic_corners() + _spirv_corners())


def runnable(capabilities: frozenset[str] | set[str]) -> tuple[Corner, ...]:
    """The corners a target with these capabilities (fingerprint keys ``fp64``, ``fp16``,
    ``int64``, ``cl2.0``) can run."""
    return tuple(c for c in table() if c.needs <= set(capabilities))


# ---- what a program reaches ---------------------------------------------------------------------


def _lanes(arg, program: Program, inputs: dict[str, np.ndarray], width: int) -> np.ndarray | None:
    """The values of a leaf operand as (work-items, width), a scalar widened; None for an operation."""
    t = arg.type
    if isinstance(arg, Load):
        values = inputs[arg.buffer].reshape(-1, t.mem_lanes)[:, :t.width]
    elif isinstance(arg, Literal):
        bits = np.array(arg.bits, dtype=np.uint64).astype(t.elem.bits_dtype)
        values = np.broadcast_to(bits.view(t.elem.dtype), (inputs.work_items, t.width))
    else:
        return None
    return np.broadcast_to(values, (inputs.work_items, width)).reshape(-1)


def _math_reached(op: Op, program: Program, inputs: dict[str, np.ndarray]) -> set[str]:
    f = FUNCTIONS[op.op]
    types = tuple(a.type for a in op.args)
    first = f.statement_type(op.type, types)
    out = {f"w{first.width}{':scalar' if f.form(op.type, types) == f.scalar_form else ''}"}
    lanes = [_lanes(a, program, inputs, first.width) for a in op.args]
    if any(v is None for v in lanes):
        return out
    classify = {"g": float_classes, "i": exp_classes, "u": lambda v: (v != 0).astype(np.int64)}
    idx = [classify[letter](v) for letter, v in zip(f.inputs, lanes)]
    return out | reached_class_keys(idx, [param_classes(letter) for letter in f.inputs])


def _integer_reached(op: Op, program: Program, inputs: dict[str, np.ndarray]) -> set[str]:
    tname = op.args[0].type.scalar
    scalar_form = op.op in ("min", "max", "clamp") and op.type.is_vector and op.args[-1].type.width == 1
    out = {f"w{op.type.width}{':scalar' if scalar_form else ''}"}
    lanes = [_lanes(a, program, inputs, op.type.width) for a in op.args]
    if any(v is None for v in lanes):
        return out
    for k, (a, v) in enumerate(zip(op.args, lanes)):
        out |= {f"{PARAM_NAMES[k]}={c}" for c in int_class_names(v, a.type.scalar)}
    for what, expression in RESULTS.get(op.op, ()):
        out |= {f"{what}={c}" for c in exact_results(expression, lanes, tname)}
    return out


def op_reached(op: Op, program: Program, inputs: dict[str, np.ndarray]) -> set[Corner]:
    """The corners one operation of ``program`` reaches (see the module docstring)."""
    if op.op in FUNCTIONS:
        tname = FUNCTIONS[op.op].statement_type(op.type, tuple(a.type for a in op.args)).scalar
        keys = _math_reached(op, program, inputs)
    elif op.op in INTEGER:
        tname = op.args[0].type.scalar
        keys = _integer_reached(op, program, inputs)
    elif op.op in RELATIONAL:
        first = op.args[0].type
        tname, keys = first.scalar, {f"w{first.width}"}
        lanes = [_lanes(a, program, inputs, first.width) for a in op.args]
        if not any(v is None for v in lanes):
            keys |= reached_class_keys([float_classes(v) for v in lanes], [FLOAT_CLASSES] * len(lanes))
    elif op.op in SPIRV_OPS:
        tname = op.args[0].type.scalar
        lanes = [_lanes(a, program, inputs, op.type.width) for a in op.args] if op.op in spirv.BY_VALUE else []
        keys = spirv.keys(op.op, dict(op.attrs), tuple(a.type for a in op.args), op.type,
                                  None if any(v is None for v in lanes) else lanes)
    elif op.op.startswith("atomic_"):
        tname, keys = program.buffer(op.attr("location")).type.scalar, {atomics.key_of(dict(op.attrs))}
    elif op.op == "read_image":
        tname, keys = op.type.scalar, {images.key_of(dict(op.attrs))}
    elif op.op == "convert":
        tname, dst = op.args[0].type.scalar, op.type.scalar
        lanes = _lanes(op.args[0], program, inputs, op.args[0].type.width)
        form = conversions.form_of(dict(op.attrs), tname, dst)
        keys = set() if lanes is None else {
            f"{form}:x={c}" for c in conversions.value_classes(lanes, tname, dst)}
    elif op.op in operators.OPERATIONS:
        width = max(a.type.width for a in op.args)
        lanes = [_lanes(a, program, inputs, width) if op.op in operators.BY_VALUE
                 else _lanes(a, program, inputs, a.type.width) if op.op in operators.BY_OWN_VALUE else None
                 for a in op.args]
        tname, keys = operators.keys(op, lanes)
    else:
        return set()
    known = _known()
    return {known[(op.op, tname, k)] for k in keys if (op.op, tname, k) in known}


@lru_cache(maxsize=None)
def _known() -> dict[tuple[str, str, str], Corner]:
    return {(c.op, c.type, c.key): c for c in table()}


class _Inputs(dict):
    """An input buffer's lanes (lang.layout.input_values), computed when first read."""

    def __init__(self, program: Program) -> None:
        super().__init__()
        self.program = program
        self.work_items = min(program.global_size, WORK_ITEMS)

    def __missing__(self, name: str) -> np.ndarray:
        b = self.program.buffer(name)
        lanes = self.work_items * b.type.mem_lanes  # a Fill's first lanes do not depend on its length
        self[name] = b.fill.bits(lanes, b.type.elem.bits).view(b.type.elem.dtype)
        return self[name]


def reached(program: Program, statements: tuple[int, ...] | None = None) -> set[Corner]:
    """Every corner some statement of ``program`` (or of the ``statements`` chosen) reaches."""
    inputs = _Inputs(program)
    out: set[Corner] = set()
    for i, s in enumerate(program.body):
        if statements is not None and i not in statements:
            continue
        for node in walk(s.value):
            if isinstance(node, Op):
                out |= op_reached(node, program, inputs)  # nothing for an operation without corners
    return out
