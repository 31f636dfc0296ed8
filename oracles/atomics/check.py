"""Judging a run's atomic histories: does one total order of each location's operations explain
every value they returned and the final value read back (:func:`check`)?

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

**Not judged**: ordering *between* locations (memory orders beyond relaxed) and the program order
of several operations one work-item issues on the same location (coherence with sequenced-
before): the check accepts every history some total order explains, so it never rejects a
correct device, and misses only devices that break those stronger guarantees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lang.ir import Op
from lang.types import scalar
from oracles import rules
from oracles.atomics.histories import RULE_ORDER, Histories
from oracles.atomics.ops import CODE, KINDS, STORES, apply

RULE_RESULT = rules.register(
    "atomic.result", "a compare-exchange succeeds exactly when the old value equals expected (a weak one "
    "may also fail spuriously) and leaves expected unchanged on success; booleans are 0 or 1",
    "OpenCL C 3.0 §6.15.12.7.5, §6.15.12.7.6")


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
