"""What the deviation classifier (:mod:`oracles.deviation`) knows about one statement's output
buffer: the declared classes, the verdict type, and the context every check reads (the program,
the statement, the lane's expectation, the actual bits, the inputs, and a re-evaluation of the
statement for one work-item with changed operands or operations).

Nothing here decides whether a lane is judged or accepted: the context only explains a lane the
judge already found wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from lang.ir import Expr, Program, Store, buffers_of, walk
from lang.types import scalar
from oracles.interpreter import environment, evaluate
from oracles.expect import Expectation, is_nan_bits
from oracles.operands import UndefinedBehaviour, convert_to

CLASSES: dict[str, str] = {
    "flushed-coordinate": "images: the read as if a denormal coordinate component were 0",
    "other-layer": "images: the texel of another array layer at the same coordinates",
    "border-colour": "images: the border colour (the image's order's, where a texel was expected, or another "
                     "order's)",
    "other-texel": "images: the value another texel of the image reads as",
    "nan": "a NaN where a number was expected",
    "number-for-nan": "a number where a NaN was expected",
    "nan-payload": "another NaN where one NaN's bits are required",
    "signed-zero": "the opposite signed zero",
    "wrong-rounding": "another rounding of the exact result: its representable neighbour on the other side (the "
                      "value another rounding mode gives), a conversion's or a correctly rounded reference's",
    "flushed": "a denormal result, or the result of a denormal operand, flushed to zero",
    "smallest-normal": "the smallest normal value of an expected denormal's sign, where a flushed zero is allowed "
                       "(nextafter at a zero: §7.5.3's alternative, severity letter)",
    "missing-channel": "images: 0 or 1 in a channel (a missing channel's constant where a stored channel was "
                       "expected, or a missing channel's other constant)",
    "unsaturated": "the wrapped value (the exact result modulo 2^N) where saturation was expected",
    "operand": "an operand's value in the same lane, as if the operation were not applied",
    "other-lane": "the expected value of another lane of the same work-item",
    "type-limit": "the type's least or greatest value or 0 (floating types: +-MAX, +-INF, 0)",
    "off-by-ulps": "k ulp (integers: k) from the nearest allowed value, k small (detail: k)",
    "other-item": "the expected value of the same lane of another work-item",
    "other": "none of the above",
}
"""The classes of a wrong lane, most specific first (the order the checks run in)."""

MAX_ULPS = 16
"""Off by at most this many ulps (integers: units) is ``off-by-ulps``; further is another class."""


@dataclass(frozen=True)
class Deviation:
    """What a wrong lane's value is: its class (:data:`CLASSES`), a sentence for people and, where
    the value identifies the rule it breaks, that rule's index (:mod:`oracles.rules`); None keeps
    the lane's own rule."""

    cls: str
    detail: str
    rule: int | None = None

    def __post_init__(self) -> None:
        assert self.cls in CLASSES, self.cls


COMPONENTS = "xyzw"


def lane_name(j: int, width: int) -> str:
    """A lane for people: ``.x`` (up to 4 lanes), ``.s9`` (8 and 16), nothing for a scalar."""
    if width == 1:
        return ""
    return f".{COMPONENTS[j]}" if width <= 4 else f".s{j:x}"


class Context:
    """One statement's output buffer: see the module docstring. ``bits`` are the actual bits of
    the whole buffer (memory lanes, unsigned), ``exp`` its expectation."""

    def __init__(self, program: Program, stmt: Store, buffer: str, exp: Expectation, bits: np.ndarray,
                 inputs: dict[str, np.ndarray]):
        self.program, self.stmt, self.buffer, self.exp, self.inputs = program, stmt, buffer, exp, inputs
        self.s = scalar(exp.scalar)
        self.bits = np.ascontiguousarray(bits).astype(self.s.bits_dtype, copy=False)
        self.type = program.buffer(buffer).type
        self.mem = self.type.mem_lanes
        self.env = environment(program, frozenset())
        self.items = len(exp) // self.mem
        self._references: np.ndarray | None = None
        self.item_program = replace(program, global_size=1)  # one work-item's program: to evaluate again
        self._reads = buffers_of(stmt)
        self._nodes = {id(n) for n in walk(stmt.value)}  # alive with the statement: safe memo keys
        self.reevaluable = buffer == stmt.buffer and not program.shared
        """Whether the statement can be evaluated again for one work-item: the buffer is the
        statement's own result (not an out-parameter) and nothing is shared between work-items."""
        self.cache: dict = {}  # memo: the image read (its texel table), evaluations per work-item

    # ---- a lane --------------------------------------------------------------------------------

    def where(self, pos: int) -> tuple[int, int]:
        """(work-item, lane within it) of a memory position."""
        return divmod(pos, self.mem)

    def actual(self, pos: int) -> int:
        return int(self.bits[pos])

    def value(self, bits: int):
        """A bit pattern as a value of the lane type."""
        return np.array([bits], np.uint64).astype(self.s.bits_dtype).view(self.s.dtype)[0]

    def number(self, bits: int) -> int | Fraction | None:
        """A bit pattern as an exact number (None for INF and NaN)."""
        v = self.value(bits)
        if self.s.is_int:
            return int(v)
        return Fraction(float(v)) if np.isfinite(v) else None

    def is_nan(self, bits: int) -> bool:
        return self.s.is_float and bool(is_nan_bits(np.array([bits], np.uint64), self.s.name)[0])

    def denormal(self, bits: int) -> bool:
        if not self.s.is_float:
            return False
        v = abs(float(self.value(bits)))
        return 0 < v < 2.0**self.s.min_exp

    def zero(self, bits: int) -> bool:
        return self.s.is_float and bits & ~(1 << (self.s.bits - 1)) == 0

    def candidates(self, pos: int) -> list[int]:
        """The exact bit patterns the lane allows (the reference first), without repeats."""
        out: list[int] = []
        for a in self.exp.allowed:
            if int(a[pos]) not in out:
                out.append(int(a[pos]))
        return out

    def intervals(self, pos: int) -> list[tuple]:
        """The lane's non-empty intervals of values (typed lo, hi)."""
        return [(lo[pos], hi[pos]) for lo, hi in self.exp.ranges if lo[pos] <= hi[pos]]

    def accepted(self, e: Expectation, index: int, bits: int) -> bool:
        """Whether ``e`` judges lane ``index`` and accepts ``bits`` there."""
        one = e.select(slice(index, index + 1))
        return bool(one.judged[0]) and bool(one.accepts(np.array([bits], np.uint64))[0])

    def common(self, bits: int) -> bool:
        """Whether the value is the reference of many judged lanes of the buffer (more than 2 and
        than one in 64): matching it to another lane or work-item then says little."""
        if self._references is None:
            self._references = self.exp.allowed[0][self.exp.judged]
        many = max(2, len(self._references) // 64)
        return int(np.count_nonzero(self._references == self._references.dtype.type(bits))) > many

    # ---- re-evaluating the statement for one work-item ------------------------------------------

    def item_inputs(self, item: int) -> dict[str, np.ndarray]:
        """The inputs the statement reads, for one work-item (its lanes of each input buffer;
        images whole)."""
        out = {}
        for name in self._reads:
            if name not in self.inputs:
                continue
            if any(i.name == name for i in self.program.images):
                out[name] = self.inputs[name]
            elif self.program.buffer(name).role == "in":
                m = self.program.buffer(name).type.mem_lanes
                out[name] = self.inputs[name][item * m:(item + 1) * m]
        return out

    def evaluate(self, expr: Expr, item: int, inputs: dict[str, np.ndarray] | None = None,
                 env: frozenset | None = None) -> Expectation | None:
        """The expectation of ``expr`` for work-item ``item`` alone (its value lanes), or None
        where the oracle cannot say (undefined behaviour, a reference that refuses). Memoized for
        the work-item's own inputs: the lanes of one vector share it."""
        if inputs is None and env is None and id(expr) in self._nodes:
            key = ("evaluate", id(expr), item)
            if key not in self.cache:
                self.cache[key] = self.evaluate(expr, item, self.item_inputs(item), self.env)
            return self.cache[key]
        try:
            with np.errstate(all="ignore"):
                return evaluate(expr, self.item_program, inputs if inputs is not None else self.item_inputs(item),
                                self.env if env is None else env)
        except (UndefinedBehaviour, ValueError, KeyError, IndexError, ArithmeticError):
            return None

    def stored(self, value: Expectation | None, expr: Expr) -> Expectation | None:
        """A value of ``expr``'s type as the statement stores it (the assignment's conversion)."""
        if value is None or expr.type == self.type:
            return value
        try:
            with np.errstate(all="ignore"):
                return convert_to(value, expr.type, self.type, self.env)
        except (UndefinedBehaviour, ValueError):
            return None

    def statement(self, item: int, inputs: dict[str, np.ndarray] | None = None,
                  expr: Expr | None = None) -> Expectation | None:
        """The statement's stored value for one work-item (``expr`` in place of its value)."""
        expr = self.stmt.value if expr is None else expr
        return self.stored(self.evaluate(expr, item, inputs), expr)


def limit_name(s, bits: int) -> str | None:
    """The name of a type limit the bit pattern is (``INT_MAX``, ``-FLT_MAX``, ``INFINITY``, ``0``),
    or None."""
    v = np.array([bits], np.uint64).astype(s.bits_dtype).view(s.dtype)[0]
    if s.is_int:
        prefix = {"char": "CHAR", "uchar": "UCHAR", "short": "SHRT", "ushort": "USHRT", "int": "INT",
                  "uint": "UINT", "long": "LONG", "ulong": "ULONG"}[s.name]
        if int(v) == s.max:
            return f"{prefix}_MAX"
        if int(v) == s.min:
            return "0" if not s.signed else f"{prefix}_MIN"
        return "0" if int(v) == 0 else None
    f = float(v)
    top = float(np.finfo(s.dtype).max)
    name = {"half": "HALF_MAX", "float": "FLT_MAX", "double": "DBL_MAX"}[s.name]
    if abs(f) == top:
        return name if f > 0 else f"-{name}"
    if np.isinf(f):
        return "INFINITY" if f > 0 else "-INFINITY"
    if f == 0:
        return "-0" if np.signbit(v) else "0"
    return None
