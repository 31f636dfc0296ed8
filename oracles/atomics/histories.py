"""A program's atomic histories: every atomic operation grouped by the location it updates, with
each location's initial value, and the final values that need no order (see :mod:`oracles.atomics`).

**Final values**: where a location's operations all commute (only add/sub/inc/dec, or only one of
and, or, xor, min, max; loads beside them) the final value is exact whatever the order, and it
is judged lane by lane (rule ``atomic.final``); otherwise it is the end of the trail that
:mod:`oracles.atomics.check` finds. A flag's final state is never read (an ``atomic_flag``'s
representation is unspecified).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lang.ir import Literal, Load, Op, Program, location_index, memory_of
from oracles import rules
from oracles.atomics.ops import CODE, COMMUTING, KINDS, bit_mask, combine
from oracles.expect import Expectation

SECTION = "OpenCL C 3.0 §6.15.12.7-9, §3.3.4"
RULE_ORDER = rules.register(
    "atomic.order", "the values a location's atomic operations return and its final value are explained "
    "by one total order of those operations (each reads what the previous one wrote)", SECTION)
RULE_FINAL = rules.register(
    "atomic.final", "where a location's operations commute (add/sub/inc/dec, or one of and/or/xor/min/max), "
    "its final value is the initial value combined with every operand, whatever the order", SECTION)


@dataclass
class Histories:
    """Every atomic operation of a program, grouped by location (see :mod:`oracles.atomics`).

    Arrays over all operations, sorted by location: ``key`` (the location), ``kind`` (index into
    :data:`KINDS`), operands ``a`` and ``b`` (uint64 bit patterns), the statement and work-item
    that issued it. Per location: its shared buffer and lane, type, initial value, and whether its
    final value is read (not for flags) and judged here (not where :func:`final_values` judges
    it exactly)."""

    program: Program
    key: np.ndarray
    kind: np.ndarray
    a: np.ndarray
    b: np.ndarray
    stmt: np.ndarray
    item: np.ndarray
    locations: list[dict] = field(default_factory=list)
    finals: dict[int, int] = field(default_factory=dict)  # exact final values (commuting locations)

    @property
    def operations(self) -> int:
        return int(self.key.shape[0])


def _operand(expr, program: Program, inputs: dict[str, np.ndarray], n: int, bits: int) -> np.ndarray:
    """An atomic operand's bit patterns for work-items 0..n-1 (a load or a literal)."""
    if isinstance(expr, Load):
        v = np.ascontiguousarray(inputs[expr.buffer][:n])
        return v.view(np.dtype(f"u{v.dtype.itemsize}")).astype(np.uint64)
    if isinstance(expr, Literal):
        return np.full(n, expr.bits[0], np.uint64)
    raise ValueError(f"atomic operands are loads or literals, not {type(expr).__name__}")


def _location_keys(op: Op, program: Program) -> tuple[int, np.ndarray]:
    """The shared buffer's position in the program and each work-item's lane in it."""
    names = [b.name for b in program.buffers]
    b = program.buffer(op.attr("location"))
    gid = np.arange(program.global_size)
    lane = location_index(op.attr("index"), gid, program.local_size)
    if b.grouped:
        lane = lane + (gid // program.local_size) * b.count
    return names.index(b.name), lane


def histories(program: Program, inputs: dict[str, np.ndarray]) -> Histories:
    """The histories of every shared location of ``program`` (its inputs: layout.input_values)."""
    n = program.global_size
    cols: dict[str, list[np.ndarray]] = {c: [] for c in ("key", "kind", "a", "b", "stmt", "item")}
    for i, s in enumerate(program.body):
        op = s.value
        if not (isinstance(op, Op) and op.op.startswith("atomic_")):
            continue
        bits = op.type.elem.bits
        ordinal, lane = _location_keys(op, program)
        operands = [_operand(e, program, inputs, n, bits) for e in op.args]
        zeros = np.zeros(n, np.uint64)
        cols["key"].append((np.int64(ordinal) << 40) + lane.astype(np.int64))
        cols["kind"].append(np.full(n, CODE[op.op[len("atomic_"):]], np.int8))
        cols["a"].append(operands[0] if operands else zeros)
        cols["b"].append(operands[1] if len(operands) > 1 else zeros)
        cols["stmt"].append(np.full(n, i, np.int32))
        cols["item"].append(np.arange(n, dtype=np.int32))
    empty = {"key": np.int64, "kind": np.int8, "a": np.uint64, "b": np.uint64, "stmt": np.int32, "item": np.int32}
    arrays = {c: np.concatenate(v) if v else np.zeros(0, empty[c]) for c, v in cols.items()}
    order = np.argsort(arrays["key"], kind="stable")
    h = Histories(program, **{c: v[order] for c, v in arrays.items()})
    h.finals = finals = _commuting_finals(h, inputs)
    for ordinal, b in enumerate(program.buffers):
        if not b.shared:
            continue
        init = inputs[b.name] if b.fill is not None else None
        for lane in range(program.lanes(b.name)):
            k = (ordinal << 40) + lane
            h.locations.append({
                "key": k, "buffer": b.name, "lane": lane, "type": b.type.scalar, "kind": b.kind,
                "init": 0 if init is None else int(init[lane:lane + 1].view(b.type.elem.bits_dtype)[0]),
                "final_observed": b.kind != "flag" and k not in finals,
                "memory": memory_of(b),
            })
    return h


def _commuting_finals(h: Histories, inputs: dict[str, np.ndarray]) -> dict[int, int]:
    """The exact final value of each location whose operations commute, by location key."""
    program = h.program
    out: dict[int, int] = {}
    starts = np.flatnonzero(np.r_[True, h.key[1:] != h.key[:-1]]) if h.operations else np.zeros(0, int)
    bounds = list(zip(starts, list(starts[1:]) + [h.operations]))
    by_key = {int(h.key[s]): (s, e) for s, e in bounds}
    for ordinal, b in enumerate(program.buffers):
        if not b.shared or b.kind == "flag":
            continue
        init = inputs[b.name].view(b.type.elem.bits_dtype)
        bits, signed = b.type.elem.bits, b.type.elem.signed
        for lane in range(program.lanes(b.name)):
            k = (ordinal << 40) + lane
            s, e = by_key.get(k, (0, 0))
            kinds = {KINDS[c] for c in np.unique(h.kind[s:e])} - {"load"}
            family = next((f for f in COMMUTING if kinds <= f), None) if kinds else {"add"}
            if family is None:
                continue
            a = h.a[s:e]
            kind_of = h.kind[s:e]
            if family == {"add", "sub", "inc", "dec"}:
                m = bit_mask(bits)
                with np.errstate(over="ignore"):
                    effect = np.select(
                        [kind_of == CODE["add"], kind_of == CODE["sub"], kind_of == CODE["inc"], kind_of == CODE["dec"]],
                        [a, (np.uint64(0) - a) & m, np.ones_like(a), np.full_like(a, m)], np.zeros_like(a))
                out[k] = combine("add", int(init[lane]), effect, bits, signed)
            else:
                (kind,) = family
                out[k] = combine(kind, int(init[lane]), a[kind_of != CODE["load"]], bits, signed)
    return out


def final_values(h: Histories) -> dict[str, Expectation]:
    """Expectations for each shared buffer's final values (not flags): exact where the location's
    operations commute (rule atomic.final), judged with the history elsewhere."""
    program, finals = h.program, h.finals
    out = {}
    for ordinal, b in enumerate(program.buffers):
        if not b.shared or b.kind == "flag":
            continue
        n = program.lanes(b.name)
        s = b.type.elem
        keys = (ordinal << 40) + np.arange(n)
        judged = np.array([int(k) in finals for k in keys], bool)
        values = np.array([finals.get(int(k), 0) for k in keys], np.uint64).astype(s.bits_dtype)
        rule = np.where(judged, RULE_FINAL, RULE_ORDER).astype(np.int16)
        out[b.name] = Expectation(b.type.scalar, [values], judged, np.zeros(n, bool), rule)
    return out
