"""The nodes of the test-program IR (:mod:`lang.ir` describes them and holds the
:class:`~lang.ir.Program` that puts them together): input and shared buffers with their
:class:`Fill` recipes, images and samplers, the expressions (:class:`Load`, :class:`Literal`,
:class:`Op`) and the statements (:class:`Store`) with the arguments each uses
(:func:`buffers_of`), and the error every reader raises on a program that is not well formed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Union

import numpy as np

from lang.images import CHANNEL_TYPES, ORDERS
from lang.types import Type


class InvalidProgram(ValueError):
    """A program (or its JSON) that is not well formed: the message says what is wrong."""


@dataclass(frozen=True)
class Fill:
    """Deterministic contents of an input buffer.

    Each lane takes, from the PCG64 raw stream seeded with ``seed`` (the bit generator's raw
    output is stable across numpy versions), either one of the ``pool`` bit patterns (edge
    values drawn by Hypothesis; probability ``pool_weight``/4) or uniform random bits.
    A fill with ``values`` (the reducer writes them) gives those bit patterns instead, lane ``i``
    taking ``values[i % len(values)]``. ``skip`` lanes of the recipe are passed over: lane ``i`` is
    the recipe's lane ``skip + i`` (a window of a wider program's work-items, lang.derive.window).
    """

    seed: int
    pool: tuple[int, ...] = ()
    pool_weight: int = 3  # out of 4
    values: tuple[int, ...] = ()
    skip: int = 0

    def to_data(self) -> dict:
        """The fill's JSON form (lang.ir.to_data); ``skip`` only where it is not 0 (a program's
        JSON, and so its id, is the one it had before windows existed)."""
        return {"seed": self.seed, "pool": list(self.pool), "pool_weight": self.pool_weight,
                **({"values": list(self.values)} if self.values else {}), **({"skip": self.skip} if self.skip else {})}

    @classmethod
    def from_data(cls, d: dict) -> "Fill":
        """The inverse of :meth:`to_data`; :class:`InvalidProgram` for numbers out of range."""
        fill = cls(int(d["seed"]), tuple(int(v) for v in d["pool"]), int(d.get("pool_weight", 3)),
                   tuple(int(v) for v in d.get("values", ())), int(d.get("skip", 0)))
        if (fill.seed < 0 or fill.skip < 0 or not 0 <= fill.pool_weight <= 4
                or not all(0 <= v < 1 << 64 for v in fill.pool + fill.values)):
            raise InvalidProgram(f"fill {d}: a seed and a skip of at least 0, a pool weight of 0 to 4, "
                                 "bit patterns of 64 bits")
        return fill

    def bits(self, lanes: int, width_bits: int) -> np.ndarray:
        """``lanes`` bit patterns as unsigned integers of ``width_bits`` bits."""
        dtype = np.dtype(f"u{width_bits // 8}")
        if self.values:
            explicit = np.array(self.values, dtype=np.uint64).astype(dtype)
            return explicit[(np.arange(lanes) + self.skip) % len(explicit)]
        raw = np.random.PCG64(self.seed).advance(2 * self.skip).random_raw(2 * lanes)
        choice, uniform = raw[0::2], raw[1::2]
        out = uniform.astype(dtype)  # the low width_bits bits (an unsigned narrowing keeps them)
        if self.pool:
            pool = np.array(self.pool, dtype=np.uint64).astype(dtype)
            use_pool = (choice & np.uint64(3)) < np.uint64(self.pool_weight)
            n = len(pool)
            index = choice >> np.uint64(2)
            pick = index & np.uint64(n - 1) if n & (n - 1) == 0 else index % np.uint64(n)
            out = np.where(use_pool, pool[pick.astype(np.intp)], out)
        return out


ROLES = ("in", "out", "global", "local")
SHARED_ROLES = ("global", "local")
SHARED_KINDS = ("", "atomic", "flag")


@dataclass(frozen=True)
class Buffer:
    """A buffer of ``global_size`` elements of ``type`` (roles ``in``, ``out``), or a shared one
    (roles ``global``, ``local``; see the module docstring) of ``count`` elements, per work-group
    for local ones and global ones with ``per_group``. ``kind`` is how atomics see a shared
    buffer: plain integers (``""``, the OpenCL 1.x functions), ``atomic`` (``atomic_int`` & co.,
    §6.15.12.6) or ``flag`` (``atomic_flag``, local only, cleared before use; never read back:
    its representation is not specified)."""

    name: str
    type: Type
    role: str  # one of ROLES
    fill: Fill | None = None  # inputs and shared buffers (initial values); not flags
    count: int = 0  # shared buffers only
    per_group: bool = False  # global shared buffers only
    kind: str = ""  # shared buffers only

    @property
    def shared(self) -> bool:
        return self.role in SHARED_ROLES

    @property
    def grouped(self) -> bool:
        """One partition of ``count`` elements per work-group."""
        return self.role == "local" or self.per_group


@dataclass(frozen=True)
class Image:
    """A read-only image argument (§6.15.15): ``dim`` (lang.images.DIMS), format ``order`` and
    ``channel`` (lang.images.ORDERS, CHANNEL_TYPES), ``shape`` (the spatial sizes, then the
    layer count of an array) and its texels: ``fill`` gives every stored channel (a texel's
    channels in memory order, texels x fastest, then y, z or layer)."""

    name: str
    dim: str
    order: str
    channel: str
    shape: tuple[int, ...]
    fill: Fill

    @property
    def texels(self) -> int:
        return int(np.prod(self.shape))

    @property
    def channels(self) -> int:
        """Stored channels per texel."""
        return len(ORDERS[self.order].memory)

    @property
    def storage(self) -> Type:
        """The scalar type of one stored channel."""
        return Type(CHANNEL_TYPES[self.channel].storage)


@dataclass(frozen=True)
class Sampler:
    """A sampler (§6.15.15.1): coordinates ``normalized`` or not, an addressing mode and a filter
    mode (lang.images.ADDRESSING, FILTERS), declared as ``scope`` (lang.images.SAMPLER_SCOPES)."""

    name: str
    normalized: bool
    addressing: str
    filter: str
    scope: str = "argument"

    @property
    def exact(self) -> bool:
        """The one combination whose texel location the spec computes without loss of precision
        (§8.2 end): unnormalized coordinates, NEAREST, and CLAMP_TO_EDGE, CLAMP or NONE."""
        return not self.normalized and self.filter == "nearest" and self.addressing in ("none", "clamp_to_edge", "clamp")


@dataclass(frozen=True)
class Load:
    """``buffer[get_global_id(0)]``."""

    buffer: str
    type: Type


@dataclass(frozen=True)
class Literal:
    """A constant written in the source, one bit pattern per lane (the same for every work-item)."""

    type: Type
    bits: tuple[int, ...]


@dataclass(frozen=True)
class Op:
    """An operation of :mod:`lang.ops` applied to ``args``, producing ``type``."""

    op: str
    args: tuple["Expr", ...]
    type: Type
    attrs: tuple[tuple[str, Any], ...] = ()

    def attr(self, key: str, default: Any = None) -> Any:
        return dict(self.attrs).get(key, default)


Expr = Union[Load, Literal, Op]


@dataclass(frozen=True)
class Store:
    """``buffer[get_global_id(0)] = value``; a value of another type converts as by assignment."""

    buffer: str
    value: Expr

    @property
    def pointee(self) -> str | None:
        """The output buffer a math built-in's out-parameter is written to (its root's ``out``)."""
        return self.value.attr("out") if isinstance(self.value, Op) else None


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of an expression, parents before children."""
    yield expr
    if isinstance(expr, Op):
        for a in expr.args:
            yield from walk(a)


def buffers_of(stmt: Store) -> set[str]:
    """The arguments a statement reads or writes: its output, its loads, its atomics' locations,
    its images and samplers."""
    out = {stmt.buffer}
    for n in walk(stmt.value):
        if isinstance(n, Load):
            out.add(n.buffer)
        elif isinstance(n, Op):
            out.update(n.attr(k) for k in ("location", "image", "sampler", "out") if n.attr(k))
    return out


def location_index(index: tuple, gid: np.ndarray, local_size: int) -> np.ndarray:
    """The element of its shared buffer (within the work-group's partition for grouped buffers)
    that an atomic operation with the ``index`` attribute ``(id, div, mod, base)`` updates for
    work-items ``gid``: ``base + (id / div) % mod``, ``id`` being the global or the local id."""
    which, div, mod, base = index
    ids = gid % local_size if which == "lid" else gid
    return base + (ids // div) % mod


def memory_of(b: Buffer) -> str:
    """Where a shared buffer's locations live and who shares them: ``global`` (the NDRange),
    ``group`` (global memory, a partition per work-group) or ``local``."""
    return "local" if b.role == "local" else "group" if b.per_group else "global"
