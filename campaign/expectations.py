"""The oracle's expectations of one program, computed once and shared by its parts, and their
compact form between processes (the harness's worker processes, campaign.pool: numpy arrays, each
lane's rule a code into the table of the rules used, never this process's rule index)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from lang.ir import Program
from lang.layout import input_values
from oracles import (FLUSHED_TYPES, ErrorScale, Expectation, Histories, adopt_rules, expected, histories, path_neutral,
                     portable_rules)


class Expectations:
    """Oracle results for one program, computed once per flush-to-zero class of target, each class
    when a target of that class first takes the program (campaign.pool.Harness.complete); a class
    computed after another that differs from it in flushed floating types only takes that one's
    outputs of the statements with no floating value (oracles.ftz_neutral).

    ``view(part)`` serves a part of the program made by :func:`lang.derive.restrict` (a batch of its
    statements over a prefix of its work-items) from the same results, without re-running the
    oracle: buffers keep their names and a prefix of work-items is a prefix of lanes."""

    def __init__(self, program: Program, *, _inputs=None, _by_ftz=None, _lane_cpu_s: float | None = None):
        self.program = program
        t0 = time.process_time()
        self.inputs = input_values(program) if _inputs is None else _inputs
        self._draw_s = time.process_time() - t0
        self._oracle_s = 0.0
        self._by_ftz: dict[frozenset, dict[str, Expectation]] = {} if _by_ftz is None else _by_ftz
        self._histories: Histories | None = None
        self._lane_cpu_s = _lane_cpu_s
        self._path_neutral: bool | None = None
        self._computed = 0  # classes the oracle computed here whole

    def get(self, ftz: frozenset[str]) -> dict[str, Expectation]:
        """The expectations of the flush-to-zero class ``ftz`` (computed now if not yet)."""
        if not self.has(ftz):
            t0 = time.process_time()
            # another class's statements with no floating value are this one's too (oracles.ftz_neutral)
            like = next((e for c, e in self._by_ftz.items() if (c ^ ftz) <= FLUSHED_TYPES), None)
            self._by_ftz[ftz] = expected(self.program, ftz, self.inputs, self.histories(), like)
            if like is None:  # what a class costs whole (lane_cpu_s: a window computes one whole)
                self._oracle_s += time.process_time() - t0
                self._computed += 1
        return self._by_ftz[ftz]

    def has(self, ftz: frozenset[str]) -> bool:
        """Whether the expectations of the flush-to-zero class ``ftz`` are here without computing:
        computed, or those of the same class on the other path where the program's are the same
        on both (oracles.path_neutral: then they are that class's, shared)."""
        if ftz not in self._by_ftz:
            twin = self._by_ftz.get(ftz ^ {"spirv"})
            if twin is not None and self._neutral():
                self._by_ftz[ftz] = twin
        return ftz in self._by_ftz

    def _neutral(self) -> bool:
        if self._path_neutral is None:
            self._path_neutral = path_neutral(self.program)
        return self._path_neutral

    def adopt(self, other: "Expectations") -> "Expectations":
        """This object, with the flush-to-zero classes that ``other`` (the same program's expectations,
        computed in another process: the inputs are the program's, lang.layout.input_values) holds
        and this one lacks."""
        for ftz, exp in list(other._by_ftz.items()):
            self._by_ftz.setdefault(ftz, exp)
        return self

    @property
    def lane_cpu_s(self) -> float | None:
        """CPU seconds per output lane of drawing the inputs and one flush-to-zero class's oracle:
        what the same statements cost the harness over other work-items (campaign.widening); None
        where this process computed no class whole (and the process that did told none)."""
        if self._lane_cpu_s is None and self._oracle_s:
            lanes = sum(b.type.mem_lanes for b in self.program.outputs) * self.program.global_size
            self._lane_cpu_s = (self._draw_s + self._oracle_s / self._computed) / max(1, lanes)
        return self._lane_cpu_s

    def histories(self) -> Histories | None:
        """The atomics oracle's histories of the program's shared locations (None without any)."""
        if not self.program.shared:
            return None
        if self._histories is None:
            self._histories = histories(self.program, self.inputs)
        return self._histories

    def view(self, part: Program) -> "Expectations":
        if part.shared:  # histories change with the operations kept: computed anew for the part
            return Expectations(part)
        n = part.global_size
        inputs = {b.name: self.inputs[b.name][: n * b.type.mem_lanes] for b in part.inputs}
        inputs.update({i.name: self.inputs[i.name] for i in part.images})  # texels are not per work-item
        if part.shape is not None:  # control words are not per work-item either (lang.shapes)
            inputs["ctl"] = self.inputs["ctl"]
        outputs = part.outputs
        by_ftz = {
            ftz: {b.name: exp[b.name].select(slice(0, n * b.type.mem_lanes)) for b in outputs}
            for ftz, exp in list(self._by_ftz.items())
        }
        return Expectations(part, _inputs=inputs, _by_ftz=by_ftz, _lane_cpu_s=self.lane_cpu_s)

    def packed(self, ftz: frozenset | None = None) -> tuple[dict[str, np.ndarray], dict[frozenset, dict]]:
        """The inputs and the expectations computed so far (of the flush-to-zero class ``ftz`` only,
        if given) as :meth:`unpacked` takes them in another process; the histories are computed
        again there (from the program and its inputs)."""
        if ftz is not None:
            self.has(ftz)  # the other path's, where the program's are the same on both
        by_ftz = {f: {name: pack(e) for name, e in exp.items()} for f, exp in list(self._by_ftz.items())
                  if ftz is None or f == ftz}
        return self.inputs, by_ftz

    @classmethod
    def unpacked(cls, program: Program, inputs: dict[str, np.ndarray], by_ftz: dict[frozenset, dict],
                 lane_cpu_s: float | None = None) -> "Expectations":
        """The expectations of ``program`` that :meth:`packed` gave in another process (and the
        :attr:`lane_cpu_s` they cost there)."""
        return cls(program, _inputs=inputs, _lane_cpu_s=lane_cpu_s,
                   _by_ftz={f: {name: unpack(e) for name, e in exp.items()} for f, exp in by_ftz.items()})


def pack(e: Expectation) -> tuple[Any, ...]:
    """One buffer's expectation as plain arrays; its rule indices as :func:`oracles.portable_rules` codes."""
    codes, table = portable_rules(e.rule)
    error = None if e.error is None else (e.error.hi, e.error.lo, e.error.ulp, e.error.limit)
    return e.scalar, e.allowed, e.judged, e.any_nan, codes, table, e.ranges, e.masks, error


def unpack(packed: tuple[Any, ...]) -> Expectation:
    """:func:`pack`'s expectation, with this process's rule indices."""
    scalar, allowed, judged, any_nan, codes, table, ranges, masks, error = packed
    return Expectation(scalar, allowed, judged, any_nan, adopt_rules(codes, table), ranges, masks,
                       None if error is None else ErrorScale(*error))
