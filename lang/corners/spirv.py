"""The SPIR-V-only forms' rows of the corner table (lang.corners), from lang.ops's area ``spirv``.

For each form (SPIR-V 1.6 §3.42; their OpSpecs in lang.ops) and every scalar type it takes:

* ``bitcast``: every pair of vector (or scalar and vector) types of equal total size whose
  component counts differ and divide (§3.42.11 OpBitcast; never a 3-component vector):
  ``bitcast:short:w4:to=int2``;
* ``vector_shuffle``: operands of one width or two (``same``/``mixed``) and each result width,
  with an undefined component (§3.42.12): ``vector_shuffle:float:mixed:w3``;
* ``rem``: OpSRem/OpFRem (``rem``: the dividend's sign) and OpSMod/OpUMod/OpFMod (``mod``: the
  divisor's), unsigned types ``mod`` only, for each sign of the dividend (-, 0, +) and of the
  divisor (-, +; a zero divisor is made 1 by the program): ``rem:int:mod:x=-,y=+``;
* ``extended``: OpIAddCarry, OpISubBorrow, OpUMulExtended (unsigned) and OpSMulExtended (signed),
  each member, where the exact result leaves the type and where it does not (carry, borrow, a
  nonzero or sign-extending high half): ``extended:uint:IAddCarry:m1:over``;
* ``op_select`` and ``reduce`` (OpAny/OpAll): each comparison, ordered and unordered on floats:
  ``op_select:float:<=:unordered``, ``reduce:int:any:!=``.

These run on the SPIR-V path only: every corner needs ``spirv`` (a target on that path,
:func:`capabilities`) and its types' capabilities.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from lang.ops import COMPARES, EXTENDED
from lang.types import SCALARS, VECTOR_WIDTHS, Type, needs_of, scalar

TYPES = tuple(t for t in SCALARS if t != "half")
"""No half: spirv-val accepts the Float16 capability in no OpenCL environment, so no SPIR-V route
takes a program that needs fp16 (fuzz.drivers.routes)."""
WIDTHS = tuple(w for w in VECTOR_WIDTHS if w != 3)  # OpBitcast across counts: no 3-vectors
VECTORS = VECTOR_WIDTHS[1:]
SIGNS_X, SIGNS_Y = ("-", "0", "+"), ("-", "+")
BY_VALUE = frozenset({"rem", "extended"})
"""The forms whose corners depend on their operands' values (lane-wise: operands of the result's width)."""


@lru_cache(maxsize=None)
def bitcast_pairs(types: tuple[str, ...]) -> tuple[tuple[Type, Type], ...]:
    """(operand, result) type pairs of equal total size and different component counts, one
    count a multiple of the other (§3.42.11)."""
    return tuple(
        (Type(s, w), Type(d, v))
        for s in types for d in types for w in WIDTHS for v in WIDTHS
        if w != v and scalar(s).bits * w == scalar(d).bits * v and max(w, v) % min(w, v) == 0
    )


def extended_types(opcode: str) -> tuple[str, ...]:
    """The integer types an extended-arithmetic instruction is drawn on (signed for SMulExtended)."""
    return tuple(t for t in TYPES if scalar(t).is_int and scalar(t).signed == (opcode == "SMulExtended"))


def rem_modes(tname: str) -> tuple[str, ...]:
    return ("rem", "mod") if scalar(tname).is_float or scalar(tname).signed else ("mod",)


def signs(tname: str, classes: tuple[str, ...]) -> tuple[str, ...]:
    """The sign classes a value of ``tname`` can be in (unsigned: no negative)."""
    return classes if scalar(tname).is_float or scalar(tname).signed else tuple(c for c in classes if c != "-")


def _needs(*types: str) -> frozenset[str]:
    return needs_of(*types) | {"spirv"}


def rows() -> list[tuple[str, str, str, frozenset[str]]]:
    """``(operation, type, key, needs)`` of every SPIR-V-only corner (module docstring)."""
    out = [("bitcast", a.scalar, f"w{a.width}:to={b.scalar}{b.width}", _needs(a.scalar, b.scalar))
           for a, b in bitcast_pairs(TYPES)]
    for t in TYPES:
        out += [("vector_shuffle", t, f"{k}:w{w}", _needs(t)) for k in ("same", "mixed") for w in VECTORS]
        out += [("rem", t, f"{m}:x={x},y={y}", _needs(t)) for m in rem_modes(t) for x in signs(t, SIGNS_X)
                for y in signs(t, SIGNS_Y)]
        orders = (":ordered", ":unordered") if scalar(t).is_float else ("",)
        out += [("op_select", t, f"{c}{o}", _needs(t)) for c in COMPARES for o in orders]
        out += [("reduce", t, f"{r}:{c}{o}", _needs(t)) for r in ("any", "all") for c in COMPARES for o in orders]
    for opcode in EXTENDED:
        out += [("extended", t, f"{opcode}:m{m}:{k}", _needs(t)) for t in extended_types(opcode)
                for m in (0, 1) for k in ("within", "over")]
    return out


def _signs(values: np.ndarray, classes: tuple[str, ...]) -> set[str]:
    with np.errstate(invalid="ignore"):
        v = values.astype(np.float64)
    found = {"-" if x < 0 else "0" if x == 0 else "+" for x in np.unique(v[~np.isnan(v)])}
    return {c if c in classes else "+" for c in found}  # a zero divisor is made 1: "+"


def extended_over(opcode: str, x: np.ndarray, y: np.ndarray, tname: str) -> np.ndarray:
    """Per lane, whether the exact result of the instruction leaves ``tname`` (carry, borrow, a
    high half that is not the low half's sign extension)."""
    s = scalar(tname)
    if opcode == "IAddCarry":
        return x.astype(object) + y.astype(object) > (1 << s.bits) - 1
    if opcode == "ISubBorrow":
        return x.astype(object) < y.astype(object)
    p = x.astype(object) * y.astype(object)
    lo, hi = (-(1 << (s.bits - 1)), (1 << (s.bits - 1)) - 1) if s.signed else (0, (1 << s.bits) - 1)
    return np.array([not lo <= v <= hi for v in p], bool)


def keys(op: str, attrs: dict, operand_types: tuple[Type, ...], result: Type,
         lanes: list[np.ndarray] | None) -> set[str]:
    """The keys one SPIR-V-only operation reaches; ``lanes``: its operands' values (None: an
    operand is itself an operation, and only what the operation's attributes say counts)."""
    if op == "bitcast":
        return {f"w{operand_types[0].width}:to={result.scalar}{result.width}"}
    if op == "vector_shuffle":
        return {f"{'same' if operand_types[0] == operand_types[1] else 'mixed'}:w{result.width}"}
    order = ""
    if op in ("op_select", "reduce") and scalar(operand_types[0].scalar).is_float:
        order = ":ordered" if attrs.get("ordered") else ":unordered"
    if op == "op_select":
        return {f"{attrs['compare']}{order}"}
    if op == "reduce":
        return {f"{attrs['reduce']}:{attrs['compare']}{order}"}
    if lanes is None:
        return set()
    if op == "rem":
        return {f"{attrs['mode']}:x={x},y={y}" for x in _signs(lanes[0], SIGNS_X) for y in _signs(lanes[1], SIGNS_Y)}
    if op == "extended":
        over = extended_over(attrs["opcode"], lanes[0], lanes[1], operand_types[0].scalar)
        return {f"{attrs['opcode']}:m{attrs['member']}:{'over' if v else 'within'}" for v in np.unique(over)}
    return set()


def capabilities(fingerprint: dict) -> frozenset[str]:
    """``spirv`` for a target on the SPIR-V path."""
    return frozenset({"spirv"}) if fingerprint.get("path") == "spirv" else frozenset()
