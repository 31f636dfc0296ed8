"""The audit's own typing of OpenCL C expressions (triage.audit): the type an operator gives its
operands and its result, from OpenCL C 3.0.19 §6.4.6 and §6.5 and C99 §6.3.1.1/§6.3.1.8, so
that the audit can check the IR's types instead of trusting them.

Types are ``(scalar, width)`` pairs of the audit's own scalar table (audit.values).
"""

from __future__ import annotations

from audit.values import SCALARS, is_float, signed, width

AType = tuple[str, int]


class NotOpenCL(Exception):
    """The operands make no valid OpenCL C expression (§6.4.6: an error shall occur)."""


def rank(s: str) -> tuple[int, int, int]:
    """§6.4.6's rank order: floats above integers (wider float above narrower), wider integers
    above narrower, unsigned above signed of the same width."""
    if is_float(s):
        return (1, width(s), 0)
    return (0, width(s), 0 if signed(s) else 1)


def promoted(s: str) -> str:
    """C99 §6.3.1.1: char, uchar, short and ushort promote to int."""
    return "int" if not is_float(s) and width(s) < 32 else s


def c99_common(a: str, b: str) -> str:
    """C99 §6.3.1.8 usual arithmetic conversions of two scalar types."""
    for f in ("double", "float", "half"):
        if f in (a, b):
            return f
    a, b = promoted(a), promoted(b)
    if a == b:
        return a
    if signed(a) == signed(b):
        return a if width(a) > width(b) else b
    u, s = (a, b) if not signed(a) else (b, a)
    if width(u) >= width(s):
        return u
    return s


def operands_type(a: AType, b: AType) -> AType:
    """The type both operands of a binary arithmetic, relational, equality or bitwise operator
    are brought to (§6.4.6): one vector type (a scalar beside it converted and widened; an error
    if the scalar outranks the vector's element), else C99's usual arithmetic conversions."""
    if a[1] > 1 and b[1] > 1:
        if a != b:
            raise NotOpenCL(f"operands of two vector types {a} and {b}")
        return a
    if a[1] > 1 or b[1] > 1:
        vec, sca = (a, b) if a[1] > 1 else (b, a)
        if rank(sca[0]) > rank(vec[0]):
            raise NotOpenCL(f"scalar {sca[0]} outranks the vector element {vec[0]} (§6.4.6)")
        return vec
    return (c99_common(a[0], b[0]), 1)


def truth_type(t: AType) -> AType:
    """The result type of relational, equality, logical and ! operators (§6.5.4-§6.5.8): int for
    scalars, the signed integer vector with lanes of the operand lanes' size for vectors."""
    if t[1] == 1:
        return ("int", 1)
    return ({8: "char", 16: "short", 32: "int", 64: "long"}[width(t[0])], t[1])


def unsigned_of(s: str) -> str:
    return {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}[width(s)]


def known(s: str) -> bool:
    return s in SCALARS
