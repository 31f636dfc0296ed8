"""What every corner sweep (fuzz.strategies.sweeps) builds with: representatives of each operand
class of the corner table (lang.corners.classes), programs whose operands are input buffers
listing their lanes exactly (:meth:`Sweep.load`: logical lane ``j`` of an operand, component
``j % width`` of work-item ``j // width``, takes value ``j % n``), and the packing of one
operation's operand tuples into the lanes of its statements (:func:`pack`, :func:`lanes`): the
statements of one operation and type (one per width the table names) share its tuples, each
taking the next ``work_items * width`` of them, so a statement carries as many corners as it has
lanes and a program runs no more work-items than its statements need."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from functools import lru_cache

import numpy as np

from lang.constructs import requirements
from lang.corners import FLOAT_CLASSES, float_classes, int_classes
from lang.ir import Buffer, Fill, Load, Program, Store, type_needs
from lang.types import Type, scalar

_FLOAT_CANDIDATES: dict[str, tuple[float, ...]] = {
    "0": (0.0,), "inf": (math.inf,), "1": (1.0,), "frac": (0.3, 0.75, 1e-3, 0.9999),
    "half": (0.5, 2.5, 1.5, 1000.5), "odd": (3.0, 2047.0, 2.0**24 - 1, 2.0**53 - 1),
    "even": (2.0, 4.0, 2.0**24, 1e30, 1e300), "real": (2.7, 1.0001, 1e4 + 0.3, 100.25),
}


@lru_cache(maxsize=None)
def float_representatives(tname: str) -> dict[str, tuple[int, ...]]:
    """Bit patterns of ``tname`` in each class of :data:`lang.corners.classes.FLOAT_CLASSES`, the
    simplest first; every candidate is checked to lie in its class once converted."""
    s = scalar(tname)
    info = np.finfo(s.dtype)
    tiny, least = float(info.tiny), float(info.smallest_subnormal)
    candidates = dict(_FLOAT_CANDIDATES, sub=(least, tiny - least, tiny / 2),
                      even=_FLOAT_CANDIDATES["even"] + (float(info.max),))
    out: dict[str, tuple[int, ...]] = {}
    with np.errstate(all="ignore"):
        for kind, values in candidates.items():
            for sign in (1.0, -1.0):
                arr = np.array([sign * v for v in values], np.float64).astype(s.dtype)
                name = f"{'+' if sign > 0 else '-'}{kind}"
                keep = [int(b) for b, c in zip(arr.view(s.bits_dtype), float_classes(arr))
                        if FLOAT_CLASSES[c] == name]
                out[name] = tuple(dict.fromkeys(keep))
        nans = np.array([math.nan, -math.nan], np.float64).astype(s.dtype).view(s.bits_dtype)
    out["nan"] = tuple(int(b) for b in nans) + (int(nans[0]) ^ (1 << (info.nmant - 1)) | 1,)  # quiet, -quiet, signaling
    return {c: out[c] for c in FLOAT_CLASSES}


EXP_REPRESENTATIVES: dict[str, tuple[int, ...]] = {
    "0": (0,), "+1": (1,), "-1": (-1,), "+odd": (3, 127, 149, 1075), "-odd": (-3, -127, -149, -1075),
    "+even": (2, 128, 300, 1024), "-even": (-2, -126, -300, -1076), "max": (2**31 - 1,), "min": (-(2**31),),
}
"""Exponents of pown, rootn and ldexp in each class of :data:`lang.corners.EXP_CLASSES`."""


def int_representatives(tname: str, limited: bool = False) -> dict[str, tuple[int, ...]]:
    """Values of an integer type in each class it can take (:func:`lang.corners.int_classes`):
    ``small`` below 2^(N/2), ``large`` a third of MAX, so that two large ones overflow a product
    and a small and a large one do not; ``limited``: within mul24's 24 bits."""
    s = scalar(tname)
    small = 1 << (s.bits // 2)
    top = (1 << 23) - 5 if limited and s.signed else (1 << 24) - 5 if limited else s.max // 3
    reps = {"0": (0,), "1": (1,), "-1": (-1,), "max": (s.max,), "min": (s.min,),
            "+small": (5, small - 3), "-small": (-5, -(small - 3)), "+large": (top, small + 3),
            "-large": (-top, -(small + 3))}
    return {c: reps[c] for c in int_classes(tname, limited)}


SPECIAL = 1
"""The rank (lang.corners.classes.value_rank) up to which an operand tuple is one of prescribed
special values (NaN, zeros, infinities, 1, subnormals, the integer limits)."""


def value_order(tuples, ranks) -> tuple[list[tuple], int]:
    """Operand tuples with the prescribed special values first, by the least special of their
    operands (``ranks``: per operand, value -> :func:`lang.corners.classes.value_rank`), then by
    their sum; and how many hold only special values (:data:`SPECIAL`)."""
    items = list(tuples)
    key = [[r[v] for r, v in zip(ranks, t)] for t in items]
    order = sorted(range(len(items)), key=lambda i: (max(key[i]), sum(key[i]), i))
    return [items[i] for i in order], sum(max(k) <= SPECIAL for k in key)


def bits_of(value: int, tname: str) -> int:
    return value & ((1 << scalar(tname).bits) - 1)


class Sweep:
    """The statements and buffers of one sweep program being built."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self.body: list[Store] = []
        self.work_items = 1  # the most any operand needs to show each of its values once
        self._inputs: dict[tuple[Type, tuple[int, ...]], str] = {}

    def load(self, t: Type, values: tuple[int, ...]) -> Load:
        """An input of type ``t`` whose logical lanes take ``values`` in turn (lane ``j``: component
        ``j % width`` of work-item ``j // width``), laid out in memory (a 3-vector's fourth lane
        repeats its first): ``ceil(len / width)`` work-items show each value once, and two operands
        of one width given lists of one length pair lane by lane."""
        w = t.width
        items = -(-len(values) // w)
        logical = [values[j % len(values)] for j in range(items * w)]
        work_item = (logical[g * w:(g + 1) * w] + logical[g * w:g * w + 1] * (t.mem_lanes - w) for g in range(items))
        laid = tuple(v for lanes_of_one in work_item for v in lanes_of_one)
        self.work_items = max(self.work_items, items)
        key = (t, laid)
        if key not in self._inputs:
            self._inputs[key] = f"in{len(self._inputs)}"
            self.buffers.append(Buffer(self._inputs[key], t, "in", Fill(0, (), values=laid)))
        return Load(self._inputs[key], t)

    def output(self, t: Type) -> str:
        name = f"out{sum(b.role == 'out' for b in self.buffers)}"
        self.buffers.append(Buffer(name, t, "out"))
        return name


def chunks(statements: list, size: int) -> list[list]:
    return [statements[i:i + size] for i in range(0, len(statements), size)]


SPECIALS, CLASSES, SHAPES, SPARSE, BUILT_IN_SHAPES, UNDEFINED_LANES = 0, 1, 2, 3, 4, 5
"""The passes of a sweep (:func:`place`, :func:`by_pass`), the most corners per second of build
first: every operation's prescribed special values, then its other operand classes (hundreds of
corners a program), then its shapes (widths, forms: a corner a statement); then the sweeps whose
programs hold few corners each (images, atomics, the SPIR-V-only forms: a few to seventy a
program); last the math built-ins' shapes (fuzz.strategies.sweeps.maths: a corner a statement,
sixteen a program, and a built-in's statement builds in 0.05 to 0.4 s where an operator's takes
0.005 to 0.1 s: NVIDIA's 16-statement math programs took 0.87 s to build and its 64-statement
operator programs 0.33 s; rusticl 22.3 compiled a math statement in 0.17 to 0.44 s, a swizzle in
0.04 s); after them the reads of a 3-component swizzle rvalue's undefined lane
(fuzz.strategies.sweeps.operators.undefined_lane_statements: run, never judged, a corner each),
which crash clang 14 and 15 and NVIDIA's compiler, each crash a worker restart (51 of NVIDIA's 248
runs in a 2-minute campaign, 36 s of isolating)."""


def place(n: int, special: int, widths: list[int], vectors: int) -> list[tuple[int, tuple[int, int], int, int]]:
    """Where each statement of one operation (of ``widths``, the first ``vectors`` with every operand
    as wide as the statement, smallest first) takes its lanes among the operation's ``n`` operand
    tuples, of which the first ``special`` hold only prescribed special values: per statement its
    pass, its tuples (``lo``, ``hi``), its first tuple among them and its work-items. The first
    statement carries the special tuples and the second the others, a lane each (passes 0 and 1:
    every class corner of the operation in two statements, the special values first); the others
    share all the tuples between them (pass 2: its shapes, :func:`lanes`)."""
    kinds = [k for k in ((SPECIALS, (0, special)), (CLASSES, (special, n))) if k[1][1] > k[1][0]][:vectors]
    out = [(p, (lo, hi), 0, -(-(hi - lo) // widths[k])) for k, (p, (lo, hi)) in enumerate(kinds)]
    rest = widths[len(kinds):]
    work_items = max(1, -(-n // (sum(rest[:vectors - len(kinds)]) or n)))
    firsts = itertools.accumulate((work_items * w for w in rest[:-1]), initial=0)
    return out + [(SHAPES, (0, n), first, work_items) for first in firsts]


def by_pass(statements: list[tuple[int, object]], size: int) -> list[tuple[int, list]]:
    """Statements tagged with their pass (:func:`place`) cut into programs of ``size``, a pass at a
    time (every operation's special values, then its other classes, then its shapes), each chunk
    with its pass."""
    return [(p, c) for p in sorted({p for p, _ in statements}) for c in chunks([b for q, b in statements if q == p], size)]


def lanes(column: tuple[int, ...], first: int, width: int, work_items: int, scalar: bool = False) -> tuple[int, ...]:
    """One operand's logical lanes (:meth:`Sweep.load`) in a statement of ``width`` lanes holding
    the tuples ``first``, ``first + 1`` ... of ``column`` (lane ``c`` of work-item ``g``: tuple
    ``first + g * width + c``); a ``scalar`` operand beside vectors (a scalar-argument overload)
    takes the tuple of its work-item's first lane."""
    n = len(column)
    if scalar:
        return tuple(column[(first + g * width) % n] for g in range(work_items))
    return tuple(column[(first + j) % n] for j in range(work_items * width))


def sweep_program(statements: list, global_size: int, area: str) -> Program:
    """One program of ``statements`` (each a function of a :class:`Sweep` returning its Store), on
    the work-items its operands need to show each of their values once (:meth:`Sweep.load`), at
    most ``global_size`` (the math sweep ran 2.7 to 16 times the lanes it needed on 1,024
    work-items, and timed out on a slow driver)."""
    s = Sweep()
    for build in statements:
        s.body.append(build(s))
    program = Program(tuple(s.buffers), tuple(s.body), min(global_size, s.work_items), area=area)
    # the types of every node, intermediate ones included (long -> double -> float needs fp64)
    return replace(program, requires=type_needs(program) | requirements(program))
