"""OpenCL C scalar and vector types, declared once for every reader.

The scalar table follows OpenCL C 3.0 §6.3.1 (Table 2, built-in scalar data types) and the
vector rules of §6.3.2/§6.3.5: element types char..ulong, half, float, double; widths
2, 3, 4, 8, 16; ``sizeof(T3) == 4 * sizeof(T)`` (so a 3-vector occupies four lanes in memory).
Emitters, oracles, strategies and the judge all take their type facts from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

VECTOR_WIDTHS: tuple[int, ...] = (1, 2, 3, 4, 8, 16)
"""Lane counts: 1 is the scalar, the others are the legal vector sizes (§6.3.2)."""


@dataclass(frozen=True)
class Scalar:
    """A built-in scalar type of OpenCL C (§6.3.1 Table 2)."""

    name: str
    kind: str  # "int" or "float"
    bits: int
    signed: bool
    needs: str | None = None  # capability the device must have: "fp64", "fp16", "int64"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def size(self) -> int:
        return self.bits // 8

    @cached_property
    def dtype(self) -> np.dtype:
        """The numpy dtype holding one value of this type."""
        if self.is_float:
            return np.dtype({16: np.float16, 32: np.float32, 64: np.float64}[self.bits])
        return np.dtype(f"{'i' if self.signed else 'u'}{self.size}")

    @cached_property
    def bits_dtype(self) -> np.dtype:
        """The unsigned integer dtype of the same width: what bit comparisons use."""
        return np.dtype(f"u{self.size}")

    @property
    def min(self) -> int:
        """Least value of an integer type (C99 limits, §6.15.3.2)."""
        assert self.is_int
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        """Greatest value of an integer type (C99 limits, §6.15.3.2)."""
        assert self.is_int
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def mant_bits(self) -> int:
        """Significand precision including the implicit bit (FLT_MANT_DIG etc., §6.15.2.1)."""
        assert self.is_float
        return {16: 11, 32: 24, 64: 53}[self.bits]

    @property
    def min_exp(self) -> int:
        """Exponent e of the least normal value 2**e (FLT_MIN = 0x1.0p-126f, §6.15.2.1)."""
        assert self.is_float
        return {16: -14, 32: -126, 64: -1022}[self.bits]

    @property
    def max_exp(self) -> int:
        """Exponent e of the greatest finite binade 2**e (FLT_MAX = 0x1.fffffep127f)."""
        assert self.is_float
        return {16: 15, 32: 127, 64: 1023}[self.bits]


SCALARS: dict[str, Scalar] = {
    s.name: s
    for s in (
        Scalar("char", "int", 8, True),
        Scalar("uchar", "int", 8, False),
        Scalar("short", "int", 16, True),
        Scalar("ushort", "int", 16, False),
        Scalar("int", "int", 32, True),
        Scalar("uint", "int", 32, False),
        Scalar("long", "int", 64, True, "int64"),
        Scalar("ulong", "int", 64, False, "int64"),
        Scalar("half", "float", 16, True, "fp16"),
        Scalar("float", "float", 32, True),
        Scalar("double", "float", 64, True, "fp64"),
    )
}
INT_TYPES: tuple[str, ...] = tuple(n for n, s in SCALARS.items() if s.is_int)
FLOAT_TYPES: tuple[str, ...] = tuple(n for n, s in SCALARS.items() if s.is_float)


def scalar(name: str) -> Scalar:
    """The scalar type called ``name``; raises ``KeyError`` with the known names."""
    try:
        return SCALARS[name]
    except KeyError:
        raise KeyError(f"unknown OpenCL C scalar type {name!r}; known: {', '.join(SCALARS)}") from None


@dataclass(frozen=True, order=True)
class Type:
    """A scalar (``width == 1``) or vector type, e.g. ``Type("float", 4)`` is ``float4``."""

    scalar: str
    width: int = 1

    def __post_init__(self) -> None:
        scalar(self.scalar)
        if self.width not in VECTOR_WIDTHS:
            raise ValueError(f"vector width {self.width} is not one of {VECTOR_WIDTHS} (§6.3.2)")

    @property
    def elem(self) -> Scalar:
        return SCALARS[self.scalar]

    @property
    def is_vector(self) -> bool:
        return self.width > 1

    @property
    def c_name(self) -> str:
        """The OpenCL C spelling: ``int``, ``float4``."""
        return self.scalar if self.width == 1 else f"{self.scalar}{self.width}"

    @property
    def mem_lanes(self) -> int:
        """Lanes occupied in memory: 4 for a 3-vector (§6.3.5, sizeof(T3) = 4*sizeof(T))."""
        return 4 if self.width == 3 else self.width

    @property
    def size(self) -> int:
        """sizeof(type) in bytes, which is also its alignment (§6.3.5)."""
        return self.mem_lanes * self.elem.size

    def with_scalar(self, name: str) -> "Type":
        return Type(name, self.width)

    def __str__(self) -> str:
        return self.c_name

    @classmethod
    def parse(cls, text: str) -> "Type":
        """``"uint8"`` -> ``Type("uint", 8)``; ``"float"`` -> ``Type("float", 1)``."""
        base = text.rstrip("0123456789")
        width = int(text[len(base):] or 1)
        return cls(base, width)


TYPE_CAPABILITIES = frozenset({"fp64", "fp16"})
"""What a program requires because of a type it uses (double: fp64, half: fp16; OpenCL C 3.0
§6.1.1.1), so a part without such a type no longer requires it."""


def needs_of(*names: str) -> frozenset[str]:
    """The device capabilities the scalar types ``names`` need (double: fp64, half: fp16, long and
    ulong: int64; OpenCL C 3.0 §6.1.1.1)."""
    return frozenset(scalar(n).needs for n in names if scalar(n).needs)


def truth_type(t: Type) -> Type:
    """The type of a relational, equality or logical result on operands of type ``t``
    (OpenCL C 3.0 §6.5.4-§6.5.8, §6.15.6): ``int`` for scalars, and for vectors the signed integer
    vector whose lanes have the operand lanes' size (char4 for uchar4, long2 for double2)."""
    if t.width == 1:
        return Type("int")
    return Type(SIGNED_OF_BITS[t.elem.bits], t.width)


SIGNED_OF_BITS: dict[int, str] = {8: "char", 16: "short", 32: "int", 64: "long"}
UNSIGNED_OF_BITS: dict[int, str] = {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}


def unsigned_of(name: str) -> str:
    """The unsigned integer type of the same width (ugentype, §6.15.3)."""
    return UNSIGNED_OF_BITS[scalar(name).bits]


def promoted(name: str) -> str:
    """C99 §6.3.1.1 integer promotions: char, uchar, short, ushort -> int."""
    s = scalar(name)
    return "int" if s.is_int and s.bits < 32 else name


def common_type(a: str, b: str) -> str:
    """C99 §6.3.1.8 usual arithmetic conversions for two scalar types (OpenCL C §6.4.1)."""
    for f in ("double", "float", "half"):
        if f in (a, b):
            return f
    a, b = promoted(a), promoted(b)
    if a == b:
        return a
    sa, sb = scalar(a), scalar(b)
    if sa.signed == sb.signed:
        return a if sa.bits >= sb.bits else b
    u, s = (sa, sb) if not sa.signed else (sb, sa)
    if u.bits >= s.bits:
        return u.name
    return s.name  # the signed type is wider, so it represents every value of the unsigned one


def operand_type(a: Type, b: Type) -> Type:
    """The type both operands of a binary operator are brought to (OpenCL C 3.0 §6.5.1, §6.5.4):
    a vector's type beside a scalar (which is converted and widened), else the usual arithmetic
    conversion of two scalars."""
    if a.is_vector or b.is_vector:
        return a if a.is_vector else b
    return Type(common_type(a.scalar, b.scalar))


def format_value(bits: int, name: str) -> str:
    """A lane's value for people: decimal for integers, hex-float and decimal for floats."""
    s = scalar(name)
    v = np.array([bits], dtype=np.uint64).astype(s.bits_dtype).view(s.dtype)[0]
    if s.is_int:
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return f"nan(0x{bits:x})"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    if f != 0 and not 1e-4 <= abs(f) < 1e16:
        return f"{f.hex()} ({np.format_float_scientific(v, unique=True, trim='-')})"
    return f"{f.hex()} ({np.format_float_positional(v, unique=True, trim='-')})"
