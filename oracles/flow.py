"""The exact interpreter of flow programs (lang.flow): every output's bits for every work-item.

It walks the structure once with every work-item of the launch at once (numpy arrays of one
value per work-item): a statement applies to the work-items of its *mask*; an ``if`` runs both
arms under complementary masks; a loop runs iteration by iteration while some work-item still
iterates, a ``break`` or ``continue`` taking the work-items that take it out of the mask (for the
loop or for the rest of the iteration); a helper's body runs under its caller's mask, its pointer
parameters bound to the caller's variable or to a view of the caller's array. The work-items of
a work-group run in lockstep, so an exchange's barriers (§6.15.8) are phases: all writes into the
local array, then all reads. Work-item functions take their values from the launch (§6.15.1).

Every value is exact (:mod:`oracles.flow_ops`, :mod:`oracles.flow_fp`); a float output is judged by its bits, any NaN
for a NaN (its payload is not specified), and each float value carries which work-items saw a
value a device without CL_FP_DENORM may flush (§7.2): those lanes are exact only on a device
that keeps denormals (:attr:`Outcome.flushable`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lang.flow import (
    BASE_MASK,
    FLOAT_TYPES,
    ALoad,
    Assign,
    AStore,
    Bin,
    Call,
    Cast,
    Const,
    Exchange,
    Exit,
    Expr,
    FlowProgram,
    Function,
    If,
    Invoke,
    Item,
    Load,
    Loop,
    Select,
    Stmt,
    Un,
    Var,
)
from lang.flow_structs import SInvoke
from lang.flow_vectors import EXPRESSIONS as VECTOR_EXPRESSIONS
from lang.flow_vectors import SwizzleStore
from lang.nodes import Fill
from lang.types import scalar
from oracles import flow_structs, flow_vectors
from oracles.flow_fp import flushable, operation
from oracles.flow_ops import binary, builtin, dtype, unary


@dataclass
class Outcome:
    """One output's expectation: ``bits`` per work-item (its global linear id), ``nan`` where any
    NaN is right, ``flushable`` where the value is exact only if the device keeps denormals."""

    bits: np.ndarray
    nan: np.ndarray
    flushable: np.ndarray


class Launch:
    """Work-item function values of every work-item, ordered by global linear id (OpenCL C 3.0.19
    §6.15.1; a dimension's last work-group may be partial, lang.flow_launch: its ``local_size`` is
    what is left of the global size, ``enqueued_local_size`` the launch's)."""

    def __init__(self, global_size: tuple[int, ...], local_size: tuple[int, ...],
                 global_offset: tuple[int, ...] = ()) -> None:
        g = (*global_size, 1, 1)[:3]
        l = (*local_size, 1, 1)[:3]
        o = (*global_offset, 0, 0, 0)[:3]
        n = int(np.prod(g))
        i = np.arange(n, dtype=np.int64)
        gid = [i % g[0], (i // g[0]) % g[1], i // (g[0] * g[1])]
        lid = [gid[d] % l[d] for d in range(3)]
        grp = [gid[d] // l[d] for d in range(3)]
        groups = [-(-g[d] // l[d]) for d in range(3)]  # a partial last work-group counts (lang.flow_launch)
        size = [np.minimum(l[d], g[d] - grp[d] * l[d]) for d in range(3)]  # the actual work-group's size
        full = [np.full(n, v, np.int64) for v in (*g, *l, *groups, len(global_size))]
        self.n = n
        self.group_items = l[0] * l[1] * l[2]
        self.groups = groups[0] * groups[1] * groups[2]
        self.group_size = size[0] * size[1] * size[2]  # each work-item's work-group's work-items
        self.local_linear = lid[0] + size[0] * (lid[1] + size[1] * lid[2])
        self.group = grp[0] + groups[0] * (grp[1] + groups[1] * grp[2])
        self.values = {
            "global_id": [gid[d] + o[d] for d in range(3)], "local_id": lid, "group_id": grp,
            "global_size": full[0:3], "local_size": size, "num_groups": full[6:9], "work_dim": [full[9]] * 3,
            "global_offset": [np.full(n, o[d], np.int64) for d in range(3)], "enqueued_local_size": full[3:6],
            "global_linear_id": [i] * 3, "local_linear_id": [self.local_linear] * 3,
        }

    def item(self, fn: str, dim: int) -> np.ndarray:
        return self.values[fn][dim].astype(np.uint32)


def input_values(p: FlowProgram) -> dict[str, np.ndarray]:
    """Each input buffer's contents as typed values."""
    return {i.name: _fill(i.fill, i.count, i.type) for i in p.inputs}


def _fill(fill: Fill, count: int, t: str) -> np.ndarray:
    s = scalar(t)
    return fill.bits(count, s.bits).view(s.dtype)


class Frame:
    """A loop's work-items that left it (``broken``) or its current iteration (``gone``)."""

    def __init__(self, n: int) -> None:
        self.broken = np.zeros(n, bool)
        self.gone = np.zeros(n, bool)


class Machine:
    """The values of one body's names (the kernel's, or a helper's during a call)."""

    def __init__(self, p: FlowProgram, launch: Launch, inputs: dict[str, np.ndarray]) -> None:
        self.p, self.launch, self.inputs = p, launch, inputs
        self.scalars: dict[str, np.ndarray] = {}
        self.flush: dict[str, np.ndarray] = {}  # float variables: work-items that saw a flushable value
        self.arrays: dict[str, np.ndarray] = {}  # (work-items, length)
        self.local: dict[str, np.ndarray] = {}  # (work-groups, length)

    def declare(self, name: str, t: str, init: int) -> None:
        self.scalars[name], flush = flow_vectors.declare(self.launch.n, t, init)
        if flush is not None:
            self.flush[name] = flush

    # ---- expressions ----

    def value(self, e: Expr) -> tuple[np.ndarray, np.ndarray | None]:
        """``e`` for every work-item, and (a float) which work-items saw a flushable value."""
        n = self.launch.n
        if isinstance(e, VECTOR_EXPRESSIONS):
            return flow_vectors.value(e, self.value)
        if isinstance(e, Const):
            s = scalar(e.type)
            if s.is_float:
                return np.full(n, e.value, s.bits_dtype).view(s.dtype), np.zeros(n, bool)
            return np.full(n, e.value, s.dtype), None
        if isinstance(e, Var):
            return self.scalars[e.name], self.flush.get(e.name)
        if isinstance(e, Item):
            return self.launch.item(e.fn, e.dim), None
        if isinstance(e, Load):
            data = self.inputs[e.buffer]
            v = data[self.int(e.index).astype(np.int64) % len(data)]
            return v, (flushable(v) if e.type in FLOAT_TYPES else None)
        if isinstance(e, ALoad):
            a = self.arrays[e.array]
            return a[np.arange(n), self.int(e.index).astype(np.int64) % a.shape[1]], None
        if isinstance(e, Select):
            c = self.int(e.cond) != 0
            (a, fa), (b, fb) = self.value(e.a), self.value(e.b)
            return np.where(c, a, b), (None if fa is None else np.where(c, fa, fb))
        if isinstance(e, Cast):
            a, fa = self.value(e.a)
            if fa is not None and e.type in FLOAT_TYPES:  # float <-> double (lang.flow_fp)
                with np.errstate(over="ignore"):
                    r = a.astype(dtype(e.type))
                return r, fa | flushable(r)
            return a.astype(dtype(e.type)), (fa if fa is not None else None if e.type not in FLOAT_TYPES
                                              else np.zeros(n, bool))
        return self._operation(e)

    def _operation(self, e: Bin | Un | Call) -> tuple[np.ndarray, np.ndarray | None]:
        operands = (e.a, e.b) if isinstance(e, Bin) else (e.a,) if isinstance(e, Un) else e.args
        values = [self.value(a) for a in operands]
        t = operands[0].type
        if t in FLOAT_TYPES:
            xs = [v for v, _ in values]
            r = operation(e.fn if isinstance(e, Call) else e.op, xs)  # oracles.flow_fp
            flushed = values[0][1].copy()
            for _, f in values[1:]:
                flushed |= f
            return r, flushed | flushable(r)
        xs = [v for v, _ in values]
        if isinstance(e, Bin):
            return binary(e.op, xs[0], xs[1], t), None
        if isinstance(e, Un):
            return unary(e.op, xs[0], t), None
        return builtin(e.fn, xs, t), None

    def int(self, e: Expr) -> np.ndarray:
        return self.value(e)[0]

    # ---- statements ----

    def run(self, body: tuple[Stmt, ...], mask: np.ndarray, frame: Frame | None) -> None:
        for s in body:
            m = mask & ~frame.gone if frame is not None else mask
            if not m.any():
                return
            if isinstance(s, Assign):
                self.assign(s.var, self.value(s.value), m)
            elif isinstance(s, AStore):
                a = self.arrays[s.array]
                rows = np.nonzero(m)[0]
                cols = self.int(s.index).astype(np.int64)[rows] % a.shape[1]
                a[rows, cols] = self.int(s.value)[rows]
            elif isinstance(s, If):
                c = self.int(s.cond) != 0
                self.run(s.then, m & c, frame)
                self.run(s.orelse, m & ~c, frame)
            elif isinstance(s, Loop):
                self.loop(s, m)
            elif isinstance(s, Exit):
                leave = m & (self.int(s.cond) != 0)
                frame.gone |= leave
                if s.kind == "break":
                    frame.broken |= leave
            elif isinstance(s, Exchange):
                self.exchange(s, m)
            elif isinstance(s, Invoke):
                self.invoke(s, m)
            elif isinstance(s, SwizzleStore):
                self.scalars[s.var], f = flow_vectors.store(s, (self.scalars[s.var], self.flush.get(s.var)),
                                                            self.value(s.value), m)
                if f is not None:
                    self.flush[s.var] = f
            elif isinstance(s, SInvoke):
                flow_structs.invoke(self, s, m)

    def assign(self, var: str, value: tuple[np.ndarray, np.ndarray | None], m: np.ndarray) -> None:
        v, f = value
        m = m if v.ndim == 1 else m[:, None]  # a vector: every component
        self.scalars[var] = np.where(m, v.astype(self.scalars[var].dtype), self.scalars[var])
        if f is not None:
            self.flush[var] = np.where(m, f, self.flush[var])

    def loop(self, s: Loop, m: np.ndarray) -> None:
        base = (self.int(s.base) & np.uint32(BASE_MASK)).astype(np.int64)
        n = np.minimum(self.int(s.trips).astype(np.int64), s.cap)
        if s.form == "do":
            n = np.maximum(n, 1)
        frame = Frame(self.launch.n)
        for k in range(int(n[m].max(initial=0))):
            active = m & (k < n) & ~frame.broken
            if not active.any():
                break
            frame.gone[:] = False
            self.scalars[s.var] = (base + s.step * ((n - 1 - k) if s.reverse else k)).astype(np.int32)
            self.run(s.body, active, frame)
        self.scalars.pop(s.var, None)

    def exchange(self, s: Exchange, m: np.ndarray) -> None:
        """Write, barrier, read, barrier: the work-items of a work-group in lockstep."""
        a = self.local[s.array]
        value = self.int(s.value)
        a[self.launch.group[m], self.launch.local_linear[m]] = value[m]
        read = a[self.launch.group, self.int(s.index).astype(np.int64) % self.launch.group_size]  # = length if uniform
        self.assign(s.var, (read, None), m)

    def invoke(self, s: Invoke, m: np.ndarray) -> None:
        f: Function = self.p.function(s.function)
        callee = Machine(self.p, self.launch, self.inputs)
        for d, a in zip(f.params, s.args):
            callee.scalars[d.name] = self.int(a).copy()
        for d in f.variables:
            callee.declare(d.name, d.type, d.init)
        for q, d in zip(s.pointers, f.pointers):
            if d.length:
                callee.arrays[d.name] = self.arrays[q.name][:, q.offset:q.offset + d.length]  # a view: writes land
            else:
                callee.scalars[d.name] = self.scalars[q.name].copy()
        callee.run(f.body, m, None)
        result = callee.int(f.result)
        for q, d in zip(s.pointers, f.pointers):
            if not d.length:
                self.scalars[q.name] = callee.scalars[d.name]
        if s.var:
            self.assign(s.var, (result, None), m)


def interpret(p: FlowProgram, inputs: dict[str, np.ndarray] | None = None) -> dict[str, Outcome]:
    """Every output of ``p`` for every work-item (in global linear id order), exactly."""
    launch = Launch(p.global_size, p.local_size, p.global_offset)
    inputs = input_values(p) if inputs is None else inputs
    m = Machine(p, launch, inputs)
    for d in p.variables:
        m.declare(d.name, d.type, d.init)
    flow_structs.declare(m, p, p.struct_vars)
    for a in p.arrays:
        s = scalar(a.type)
        if a.space == "local":
            m.local[a.name] = np.zeros((launch.groups, a.length), s.dtype)
        else:
            m.arrays[a.name] = np.tile(np.array(a.init, dtype=s.dtype), (launch.n, 1))
    m.run(p.body, np.ones(launch.n, bool), None)
    out = {}
    for o in p.outputs:
        v = m.scalars[o.var]
        s = scalar(o.type)
        float_ = s.is_float
        out[o.name] = Outcome(v.view(s.bits_dtype).copy(), np.isnan(v) if float_ else np.zeros(launch.n, bool),
                              m.flush[o.var].copy() if float_ else np.zeros(launch.n, bool))
    return out
