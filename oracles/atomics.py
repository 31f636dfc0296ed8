"""The atomics oracle: what some interleaving of a location's atomic operations allows.

Atomic operations on one location are totally ordered: every one reads the value the one before it
wrote (the modification order, OpenCL C 3.0 §3.3.4 / C11 §5.1.2.4 coherence; for the OpenCL 1.x
functions §6.15.12.8: each reads ``old``, computes and stores "atomically"). No single result of
an operation under contention is predictable, so the oracle judges a location's whole *history*:
its initial value, every operation on it with its operands and the value each one returned, and
the final value read back after the kernel (DIGEST §7.3).

**The check** (exact, linear time, for any mix of operations): an operation whose returned old
value ``o`` is known is an edge ``o -> f(o)`` in a graph over values (``atomic_add(p, v)``:
``o -> o + v``; a failed compare-exchange or a load: the loop ``o -> o``); a store of ``v``
(``atomic_store``, ``atomic_flag_clear``), whose old value is not returned, may follow any value
and is a jump to ``v``. A total order of the operations explains every returned value exactly
when the edges form one trail from the initial value to the final value, entered anew at a
stored value after each store. With a super-vertex ``X`` (stores are edges ``X -> v``, trail
ends edges ``e -> X``) and the edge ``final -> initial`` that trail is an Eulerian circuit, which
exists iff every value is entered at least as often as it is left (the surplus are the ends) and
all edges are connected (Euler; Hierholzer's construction). A value returned more often than it
was produced, or a group of operations that no path from the initial value reaches, is a
disagreement that no interleaving explains, and the report says which value and how often.

What each operation adds (DIGEST §7.1-7.2, §7.4; OpenCL C 3.0 Tables 26-29, §6.15.12.7):
add/sub/inc/dec wrap modulo 2^N; min/max compare signed or unsigned by the type; xchg/exchange
store the operand; legacy cmpxchg stores ``v`` where ``old == cmp``; C11 compare-exchange reports
``(expected after, success)``: a success means ``old == expected`` (expected unchanged), a
failure returns ``old`` in expected, and only the weak form may fail with ``old == expected``
(spuriously, §6.15.12.7.5); a load returns the value without changing it; a flag's test-and-set
returns 0 or 1 (its old state) and sets it; clear clears it.

**Final values**: where a location's operations all commute (only add/sub/inc/dec, or only one of
and, or, xor, min, max; loads beside them) the final value is exact whatever the order, and it
is judged lane by lane (rule ``atomic.final``); otherwise it is the end of the trail above. A
flag's final state is never read (an ``atomic_flag``'s representation is unspecified).

**Scope of the 1.x functions**: OpenCL C 3.0 §6.15.12.8 calls them equivalent to relaxed atomics
with ``memory_scope_work_group``, while the SPIR-V OpenCL 1.2 environment requires Scope Device
for every atomic instruction (000 §5.2.8, 001): the 1.x functions are device-wide as every
implementation and that mapping treat them. Histories of global locations that work-items of
several groups update with them are judged on that reading; their rows carry the input class
``atomics:global`` so that triage can tell them apart.

**Not judged**: ordering *between* locations (memory orders beyond relaxed) and the program order
of several operations one work-item issues on the same location (coherence with sequenced-
before): the check accepts every history some total order explains, so it never rejects a
correct device, and misses only devices that break those stronger guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fuzz.ir import Literal, Load, Op, Program, location_index, memory_of
from fuzz.ops import ATOMICS
from fuzz.types import scalar
from oracles import rules
from oracles.evaluate import reference
from oracles.expect import Expectation

SECTION = "OpenCL C 3.0 §6.15.12.7-9, §3.3.4; DIGEST §7.3"
RULE_ORDER = rules.register(
    "atomic.order", "the values a location's atomic operations return and its final value are explained "
    "by one total order of those operations (each reads what the previous one wrote)", SECTION)
RULE_RESULT = rules.register(
    "atomic.result", "a compare-exchange succeeds exactly when the old value equals expected (a weak one "
    "may also fail spuriously) and leaves expected unchanged on success; booleans are 0 or 1",
    "OpenCL C 3.0 §6.15.12.7.5, §6.15.12.7.6")
RULE_FINAL = rules.register(
    "atomic.final", "where a location's operations commute (add/sub/inc/dec, or one of and/or/xor/min/max), "
    "its final value is the initial value combined with every operand, whatever the order", SECTION)
RULE_UNOBSERVED = rules.register(
    "atomic.unobserved", "an atomic operation's result alone is not predictable: it is judged with its "
    "location's history", SECTION)

KINDS = tuple(name for name, *_ in ATOMICS)
CODE = {name: i for i, name in enumerate(KINDS)}
COMMUTING = ({"add", "sub", "inc", "dec"}, {"and"}, {"or"}, {"xor"}, {"min"}, {"max"})
STORES = {"store", "flag_clear"}  # no old value returned (no result at all): a jump


@reference("atomic_add")
@reference("atomic_sub")
@reference("atomic_xchg")
@reference("atomic_inc")
@reference("atomic_dec")
@reference("atomic_cmpxchg")
@reference("atomic_min")
@reference("atomic_max")
@reference("atomic_and")
@reference("atomic_or")
@reference("atomic_xor")
@reference("atomic_load")
@reference("atomic_store")
@reference("atomic_compare_exchange")
@reference("atomic_flag_test_and_set")
@reference("atomic_flag_clear")
def _unobserved(op: Op, args: list[Expectation], n: int, ftz: frozenset) -> Expectation:
    """A returned value alone is not judged lane by lane: :func:`histories` judges it with its
    location's history."""
    lanes = n * op.type.width
    s = scalar(op.type.scalar)
    return Expectation(op.type.scalar, [np.zeros(lanes, s.bits_dtype)], np.zeros(lanes, bool),
                       np.zeros(lanes, bool), np.full(lanes, RULE_UNOBSERVED, np.int16))


def _mask(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1)


def _signed(v: np.ndarray, bits: int) -> np.ndarray:
    """Unsigned bit patterns of ``bits`` bits as signed integers (int64)."""
    if bits == 64:
        return v.view(np.int64)
    x = v.astype(np.int64)
    return np.where(x >= 1 << (bits - 1), x - (1 << bits), x)


def apply(kind: str, old: np.ndarray, a: np.ndarray, b: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """What an operation of ``kind`` stores, given the old values it read (unsigned bit patterns of
    ``bits`` bits, uint64); for a flag, 1 is set. Loads and failed exchanges store ``old``. (A C11
    compare-exchange reports its own success: :func:`check` follows that flag.)"""
    m = _mask(bits)
    with np.errstate(over="ignore"):
        if kind == "add":
            return (old + a) & m
        if kind == "sub":
            return (old - a) & m
        if kind == "inc":
            return (old + np.uint64(1)) & m
        if kind == "dec":
            return (old - np.uint64(1)) & m
    if kind in ("xchg", "store"):
        return a.copy()
    if kind == "cmpxchg":
        return np.where(old == a, b, old)
    if kind in ("min", "max"):
        x, y = (_signed(old, bits), _signed(a, bits)) if signed else (old, a)
        pick_a = (y < x) if kind == "min" else (y > x)
        return np.where(pick_a, a, old)
    if kind == "and":
        return old & a
    if kind == "or":
        return old | a
    if kind == "xor":
        return old ^ a
    if kind == "load":
        return old.copy()
    if kind == "flag_test_and_set":
        return np.ones_like(old)
    if kind == "flag_clear":
        return np.zeros_like(old)
    raise ValueError(f"unknown atomic kind {kind!r}")


def combine(kind: str, init: int, operands: np.ndarray, bits: int, signed: bool) -> int:
    """The final value of a location whose operations all commute: ``init`` combined with every
    operand (``operands``: the effect of each, e.g. +v, -v, +1)."""
    m = (1 << bits) - 1
    if kind == "add":
        return (init + int(operands.sum(dtype=np.uint64))) & m
    values = [init] + [int(v) for v in operands]
    if kind in ("min", "max"):
        key = (lambda v: v - (1 << bits) if signed and v >> (bits - 1) else v)
        return (min if kind == "min" else max)(values, key=key)
    out = init
    for v in values[1:]:
        out = out & v if kind == "and" else out | v if kind == "or" else out ^ v
    return out


@dataclass
class Histories:
    """Every atomic operation of a program, grouped by location (see the module docstring).

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
                m = _mask(bits)
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


# -- judging histories against a run's outputs ----------------------------------------------------


@dataclass
class Violation:
    """A location whose history no total order explains, or one impossible result."""

    location: dict
    rule: int
    why: str
    statements: list[int]
    work_item: int = -1
    observed: dict = field(default_factory=dict)


def observed_results(h: Histories, actual: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The old value each operation returned and its success flag (compare-exchange; 1 elsewhere),
    as uint64 bit patterns in the order of ``h``."""
    old = np.zeros(h.operations, np.uint64)
    ok = np.ones(h.operations, np.uint64)
    for i, s in enumerate(h.program.body):
        sel = np.flatnonzero(h.stmt == i)
        if not len(sel):
            continue
        kind = KINDS[h.kind[sel[0]]]
        if kind in STORES:
            continue
        got = np.ascontiguousarray(actual[s.buffer])
        got = got.view(np.dtype(f"u{got.dtype.itemsize}")).astype(np.uint64)
        items = h.item[sel].astype(np.int64)
        if kind == "compare_exchange":
            old[sel], ok[sel] = got[2 * items], got[2 * items + 1]
        else:
            old[sel] = got[items]
    return old, ok


def check(h: Histories, actual: dict[str, np.ndarray]) -> list[Violation]:
    """Every location whose history no total order explains, and every impossible result."""
    if not h.locations:
        return []
    old, ok = observed_results(h, actual)
    violations = _impossible(h, old, ok)
    # each operation's location (h.locations are in key order)
    li = np.searchsorted(np.array([loc["key"] for loc in h.locations], np.int64), h.key)
    nloc = len(h.locations)
    bits = np.array([scalar(loc["type"]).bits for loc in h.locations])
    signed = np.array([scalar(loc["type"]).signed for loc in h.locations])
    init = np.array([loc["init"] for loc in h.locations], np.uint64)
    finals = np.zeros(nloc, np.uint64)
    observed = np.array([loc["final_observed"] for loc in h.locations], bool)
    for loc_i, loc in enumerate(h.locations):
        if loc["final_observed"]:
            finals[loc_i] = int(np.ascontiguousarray(actual[loc["buffer"]][loc["lane"]:loc["lane"] + 1]).view(
                scalar(loc["type"]).bits_dtype)[0])
    # the edges of observed operations: old -> new (a failed or spurious compare-exchange: a loop)
    new = np.zeros(h.operations, np.uint64)
    for code, kind in enumerate(KINDS):
        for width in np.unique(bits):
            for sg in (False, True):
                sel = np.flatnonzero((h.kind == code) & (bits[li] == width) & (signed[li] == sg))
                if len(sel):
                    if kind == "compare_exchange":  # success: old was expected; a failure is a loop
                        success = ok[sel] == 1
                        old[sel] = np.where(success, h.a[sel], old[sel])
                        new[sel] = np.where(success, h.b[sel], old[sel])
                    else:
                        new[sel] = apply(kind, old[sel], h.a[sel], h.b[sel], int(width), sg)
    jump = np.isin(h.kind, [CODE[k] for k in STORES])
    # vertices: (location, value) pairs and one X per location
    e_loc, e_u, e_v = li[~jump], old[~jump], new[~jump]
    s_loc, s_v = li[jump], new[jump]
    ids = _Vertices(nloc)
    u, v = ids.of(e_loc, e_u), ids.of(e_loc, e_v)
    w_from = np.where(observed, ids.of(np.arange(nloc), finals), ids.x(np.arange(nloc)))  # final -> init, or X -> init
    w_to = ids.of(np.arange(nloc), init)
    st_from, st_to = ids.x(s_loc), ids.of(s_loc, s_v)
    nv, vloc = ids.count, ids.loc
    src = np.concatenate([u, w_from, st_from])
    dst = np.concatenate([v, w_to, st_to])
    surplus = np.bincount(dst, minlength=nv) - np.bincount(src, minlength=nv)  # entered - left
    real = ~ids.is_x()
    short = np.flatnonzero(real & (surplus < 0))
    ends = np.flatnonzero(real & (surplus > 0))
    root = _components(nv, np.concatenate([src, ends]), np.concatenate([dst, ids.x(vloc[ends])]))
    home = root[w_to]  # the component of each location's initial value
    touched = np.concatenate([src, dst])
    stray = touched[root[touched] != home[vloc[touched]]]
    bad_locs = sorted(set(vloc[short].tolist()) | set(vloc[stray].tolist()))
    for loc_i in bad_locs:
        violations.append(_explain(h, loc_i, li, old, jump, finals[loc_i] if observed[loc_i] else None,
                                   ids, vloc, short, stray, surplus))
    return violations


class _Vertices:
    """Dense ids for (location, value) pairs, and one extra vertex X per location (super-vertex)."""

    def __init__(self, nloc: int) -> None:
        self.nloc = nloc
        self._map: dict[tuple[int, int], int] = {}
        self._loc: list[int] = list(range(nloc))  # ids 0..nloc-1 are the X vertices
        self._value: list[int] = [0] * nloc

    def x(self, loc: np.ndarray) -> np.ndarray:
        return np.asarray(loc, np.int64)

    def of(self, loc: np.ndarray, value: np.ndarray) -> np.ndarray:
        loc = np.asarray(loc, np.int64)
        value = np.asarray(value, np.uint64)
        if not len(loc):
            return np.zeros(0, np.int64)
        pairs = np.stack([loc.astype(np.uint64), value], axis=1)
        uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
        out = np.empty(len(uniq), np.int64)
        for j, (lo, va) in enumerate(uniq.tolist()):
            k = (lo, va)
            if k not in self._map:
                self._map[k] = len(self._loc)
                self._loc.append(lo)
                self._value.append(va)
            out[j] = self._map[k]
        return out[inverse.reshape(-1)]

    @property
    def count(self) -> int:
        return len(self._loc)

    @property
    def loc(self) -> np.ndarray:
        return np.array(self._loc, np.int64)

    def value(self, vid: int) -> int:
        return self._value[vid]

    def is_x(self) -> np.ndarray:
        out = np.zeros(self.count, bool)
        out[: self.nloc] = True
        return out


def _components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The root of each of ``n`` vertices' weakly connected component (hooking and pointer
    jumping, vectorized)."""
    parent = np.arange(n)
    while True:
        pu, pv = parent[src], parent[dst]
        lo, hi = np.minimum(pu, pv), np.maximum(pu, pv)
        moved = lo != hi
        if not moved.any():
            return parent
        np.minimum.at(parent, hi[moved], lo[moved])
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped


def _impossible(h: Histories, old: np.ndarray, ok: np.ndarray) -> list[Violation]:
    """Results no execution gives, whatever the order: a compare-exchange's flag that is not 0/1,
    a success that changed expected, a strong one's failure on a match, a flag that is not 0/1."""
    out = []
    cx = h.kind == CODE["compare_exchange"]
    weak = np.array([isinstance(s.value, Op) and bool(s.value.attr("weak")) for s in h.program.body]
                    + [False], bool)[h.stmt]
    tas = h.kind == CODE["flag_test_and_set"]
    reasons = (
        (cx & (ok > 1), "compare-exchange reported a success flag that is neither 0 nor 1"),
        (cx & (ok == 1) & (old != h.a), "compare-exchange reported success but changed expected"),
        (cx & (ok == 0) & (old == h.a) & ~weak,
         "strong compare-exchange failed although the location held the expected value"),
        (tas & (old > 1), "atomic_flag_test_and_set returned a value that is neither 0 nor 1"),
    )
    keys = {loc["key"]: loc for loc in h.locations}
    for mask, why in reasons:
        for i in np.flatnonzero(mask)[:1]:  # one per reason: the statement's rows carry the count
            out.append(Violation(keys[int(h.key[i])], RULE_RESULT, f"{why} ({int(mask.sum())} operations)",
                                 [int(h.stmt[i])], int(h.item[i]),
                                 {"returned": int(old[i]), "success": int(ok[i]), "expected": int(h.a[i])}))
    return out


def _explain(h: Histories, loc_i: int, li, old, jump, final, ids: _Vertices, vloc, short, stray,
             surplus) -> Violation:
    """Why a location's history has no order: the first value read more often than produced."""
    loc = h.locations[loc_i]
    sel = np.flatnonzero(li == loc_i)
    stmts = sorted({int(s) for s in h.stmt[sel]})
    reads = {}
    for vid in short[vloc[short] == loc_i][:3]:
        value = ids.value(int(vid))
        read = int(((old[sel] == value) & ~jump[sel]).sum())
        reads[value] = (read, read + int(surplus[vid]))
    observed = {"initial": loc["init"], "operations": len(sel), "final": final}
    if reads:
        value, (read, made) = next(iter(reads.items()))
        why = (f"value {value:#x} is the old value of {read} operation(s) but only {made} write(s) "
               f"(the initial value, operations, stores) produce it")
        observed["short"] = {f"{v:#x}": {"read": r, "produced": m} for v, (r, m) in reads.items()}
    else:
        vids = stray[vloc[stray] == loc_i][:4]
        values = sorted({ids.value(int(v)) for v in vids if int(v) >= ids.nloc})  # not an X vertex
        why = ("operations returning " + ", ".join(f"{v:#x}" for v in values) +
               " form a cycle that no order starting from the initial value reaches")
    returned = old[sel][~jump[sel]]
    observed["returned_sample"] = [f"{int(v):#x}" for v in returned[:16]]
    return Violation(loc, RULE_ORDER, why, stmts, observed=observed)
