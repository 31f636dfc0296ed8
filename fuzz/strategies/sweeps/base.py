"""What every corner sweep (fuzz.strategies.sweeps) builds with: representatives of each operand
class of the corner table (lang.corners.classes), and programs whose operands are input buffers
listing their lanes exactly (``Fill.values``: lane ``i`` takes value ``i % n``)."""

from __future__ import annotations

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


def bits_of(value: int, tname: str) -> int:
    return value & ((1 << scalar(tname).bits) - 1)


class Sweep:
    """The statements and buffers of one sweep program being built."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self.body: list[Store] = []
        self._inputs: dict[tuple[Type, tuple[int, ...]], str] = {}

    def load(self, t: Type, values: tuple[int, ...]) -> Load:
        key = (t, values)
        if key not in self._inputs:
            self._inputs[key] = f"in{len(self._inputs)}"
            self.buffers.append(Buffer(self._inputs[key], t, "in", Fill(0, (), values=values)))
        return Load(self._inputs[key], t)

    def output(self, t: Type) -> str:
        name = f"out{sum(b.role == 'out' for b in self.buffers)}"
        self.buffers.append(Buffer(name, t, "out"))
        return name


def chunks(statements: list, size: int) -> list[list]:
    return [statements[i:i + size] for i in range(0, len(statements), size)]


WORK_GROUP = 64
"""A sweep program's work-items are a multiple of this (what every local driver's batch takes)."""


def sweep_program(statements: list, global_size: int, area: str) -> Program:
    """One program of ``statements`` (each a function of a :class:`Sweep` returning its Store), on
    at most ``global_size`` work-items and no more than its longest operand list needs: with one
    work-item per listed value every value reaches a lane of every statement (the math sweep ran
    2.7 to 16 times the lanes it needed on 1,024 work-items, and timed out on a slow driver)."""
    s = Sweep()
    for build in statements:
        s.body.append(build(s))
    longest = max((len(b.fill.values) for b in s.buffers if b.role == "in"), default=1)
    needed = -(-longest // WORK_GROUP) * WORK_GROUP
    program = Program(tuple(s.buffers), tuple(s.body), min(global_size, needed), area=area)
    # the types of every node, intermediate ones included (long -> double -> float needs fp64)
    return replace(program, requires=type_needs(program) | requirements(program))
