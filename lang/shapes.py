"""Kernel shapes (area ``shapes``): structure around statements the oracle already judges, whose
effect the generator knows exactly.

A :class:`Shape` is attached to a program of another area (its ``base``). It has two kinds of
parts, each declared once in :data:`KINDS` and read by the OpenCL C emitter
(:mod:`fuzz.emit.opencl_shapes`), the SPIR-V emitter (:mod:`fuzz.emit.spirv.shapes`), the
strategy (:mod:`fuzz.strategies.shapes`) and the reducer (:mod:`triage.reduce.passes.shapes`):

* **steps** compute, at kernel scope and in order, the element index ``x`` each work-item's
  statements use (``get_global_id(0)`` in a program without a shape). Each step leaves ``x``
  equal to what it was (a loop with a carried value, a work-group tree reduction, a call through a
  pointer, a private array indexed by data, a ``?:``: ``x = (x + (v - K)) % G`` where the program
  computes ``v`` and the generator ``K`` = the value ``v`` must have) or permutes it inside the
  work-group (``exchange``, ``rounds``: local memory written by each work-item, a barrier, then read
  at a permutation of the local ids). Either way every element of every output is written by
  exactly one work-item with the value the oracle computes for that element, so the oracle's
  expectations are those of the program without the shape, its *twin* (:meth:`Shape.twin`
  in :func:`lang.derive.twin`);
* **wraps** put the statements, outermost first, inside control flow whose path the data decides:
  ``if``/``else`` on a uniform value, ``if``/``else`` on the work-item's ids (the statements in both
  arms, so lanes diverge), loops with trip counts from the data running the statements once (at a
  data-chosen iteration) or on every iteration (stores of the same values again), ``switch``, and
  dead-by-construction blocks (equivalence modulo inputs: the block never runs).

The values the compiler must not see are *control words*: ``uint`` values in a region of the
``in`` argument (lang.layout, region ``ctl``), each part reading its own words.

Valid and defined by construction (:func:`check`, called by lang.ir.validate): barriers only in
steps, which run at kernel scope in uniform control flow (trip counts of loops with barriers are
control words every work-item reads alike); local-memory indices masked by ``local_size - 1``
(a power of two); every index into an output taken modulo the global size; loops bounded by
:data:`TRIP_CAP` iterations (rusticl 22.3 on llvmpipe silently ends every loop after 65,535
iterations, measured: kept far below); each local array written, then read only after the barrier that
follows the write, and never written again. OpenCL C 3.0.19 §6.15.8: "If barrier is
inside a conditional statement, then all work-items in the work-group must enter the conditional
if any work-item in the work-group enters the conditional statement and executes the barrier" (a
*must*); §6.7.2: local variables are declared at kernel function scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

MASK = 0xFFFFFFFF
TRIP_CAP = 1024
"""Most iterations of one loop of a shape (a wrap's, a step's)."""
ROUNDS_CAP = 8
"""Most iterations of a loop with barriers (``rounds``)."""
ARRAY = 8
"""Elements of a ``array`` step's private array."""
LOOP_FORMS = ("for", "while", "do")
CFGS = ("structured", "unstructured")
"""How the SPIR-V emitter writes a shape's control flow: with merge instructions and blocks in
construct order (the form Shader modules must take), or, as Kernel modules allow (SPIR-V 1.0
§2.11: the structured control flow rules apply to the Shader capability), without OpSelectionMerge
and OpLoopMerge and with each if's and switch's arms laid out after the block where they join.
The OpenCL C kernel is the same for both."""


class ShapeError(ValueError):
    """A shape that is not valid for its program (the message says why)."""


@dataclass(frozen=True)
class Part:
    """One step or wrap: its kind (:data:`KINDS`), its form (one of the kind's) and its control words."""

    kind: str
    form: str
    words: tuple[int, ...]


@dataclass(frozen=True)
class Shape:
    """Steps and wraps around the statements of a program of area ``base`` (module docstring)."""

    base: str
    steps: tuple[Part, ...] = ()
    wraps: tuple[Part, ...] = ()
    cfg: str = "structured"  # one of CFGS

    @property
    def parts(self) -> tuple[Part, ...]:
        return self.steps + self.wraps

    @property
    def controls(self) -> tuple[int, ...]:
        """Every control word, the parts' in order (steps, then wraps)."""
        return tuple(w for p in self.parts for w in p.words)

    def offsets(self) -> list[int]:
        """Where each part's words start in :attr:`controls`."""
        out, at = [], 0
        for p in self.parts:
            out.append(at)
            at += len(p.words)
        return out

    @property
    def signature(self) -> str:
        """What a bucket keys on: the kinds and forms, steps then wraps (outermost first), without
        the control words: ``carried:while > exchange | loop:for-once > if-divergent:lid``, and
        `` | unstructured`` where the SPIR-V has no merge instructions (:data:`CFGS`)."""
        steps = " > ".join(f"{p.kind}:{p.form}" for p in self.steps)
        wraps = " > ".join(f"{p.kind}:{p.form}" for p in self.wraps)
        cfg = self.cfg if self.cfg != "structured" else ""
        return " | ".join(s for s in (steps, wraps, cfg) if s) or "none"

    @property
    def local(self) -> bool:
        """Whether a step uses local memory (needs a power-of-two local size)."""
        return any(KINDS[p.kind].local or p.form in KINDS[p.kind].local_forms for p in self.steps)


# -- the values steps compute (read by both emitters and the tests) ----------------------------


def carried_sum(form: str, words: tuple[int, ...]) -> int:
    """The carried value of a ``carried`` step's loop (words: trip count ``n``, addend ``a``, break
    at ``b``, skip when ``j & 3 == c``), exactly as the emitted loop of that form computes it:

    * ``for``: ``for (j = 0; j < n; j++) { if (j == b) break; if ((j & 3) == c) continue; s += a ^ j; }``
    * ``while``: ``j = 0; while (j < n) { k = j++; if (k == b) break; if ((k & 3) == c) continue; s += a ^ k; }``
    * ``do``: ``j = 0; do { k = j++; (the same body) } while (j < n);``: the body runs at least once.
    """
    n, a, b, c = words
    s, j = 0, 0
    while True:
        if form != "do" and not j < n:
            break
        k = j
        j += 1
        if k == b:
            break
        if (k & 3) != c:
            s = (s + (a ^ k)) & MASK
        if form == "do" and not j < n:
            break
    return s


def tree_sum(words: tuple[int, ...], local_size: int) -> int:
    """The sum over a work-group of ``lid * a + b`` (uint arithmetic), a ``tree`` step's value."""
    a, b = words
    return (a * (local_size * (local_size - 1) // 2) + b * local_size) & MASK


def call_value(form: str, words: tuple[int, ...]) -> int:
    """The value a ``call`` step's helper returns: ``add`` (``*p += b`` on a private ``p = a``),
    ``global`` (``c[i] + c[i + 1]`` through a global pointer), ``struct`` (``p.a - p.b`` of a struct
    passed by value), ``swap`` (the members swapped through a pointer to a private struct, then
    ``p.a - p.b``); ``noinline`` is ``add`` in a function that must not be inlined, ``generic``
    ``add`` through a generic pointer, ``local`` through a pointer to the work-item's element of a
    local array."""
    a, b = words
    return {"add": a + b, "noinline": a + b, "global": a + b, "struct": a - b, "swap": b - a,
            "generic": a + b, "local": a + b}[form] & MASK


def array_value(words: tuple[int, ...]) -> int:
    """An ``array`` step's value: ``arr[j] = a + j * j`` for each ``j < ARRAY``, read at ``i & (ARRAY - 1)``."""
    a, i = words
    j = i & (ARRAY - 1)
    return (a + j * j) & MASK


def expected(part: Part, local_size: int) -> int:
    """``K``, the value an identity step's program value must equal (module docstring)."""
    return {"carried": lambda: carried_sum(part.form, part.words), "tree": lambda: tree_sum(part.words, local_size),
            "call": lambda: call_value(part.form, part.words), "array": lambda: array_value(part.words)}[part.kind]()


def permutation(part: Part, local_size: int) -> list[int]:
    """The local id each work-item reads after an ``exchange`` or ``rounds`` step: ``p[lid]``."""
    ids = list(range(local_size))
    if part.kind == "exchange":
        m, b = part.words
        return [(lid * m + b) & (local_size - 1) for lid in ids]
    n, m, b = part.words
    for j in range(n):  # round j: x_new[lid] = x_old[(lid * m + b + j) & mask]
        ids = [ids[(lid * m + b + j) & (local_size - 1)] for lid in range(local_size)]
    return ids


# -- the declarations --------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """A part's declaration: its role (``step`` or ``wrap``), forms, number of control words, what
    it needs and the condition its words must meet (so the path the data takes is the intended
    one); ``doc`` is what the program does, for the README and reports."""

    name: str
    role: str
    forms: tuple[str, ...]
    words: int
    valid: Callable[[str, tuple[int, ...]], bool]
    doc: str
    local: bool = False  # local memory and barriers (steps only)
    local_forms: tuple[str, ...] = ()  # the forms that use local memory (without barriers) of a kind that does not
    needs: tuple[tuple[str, str], ...] = ()  # (form, device capability a program with it requires)
    repeats: bool = False  # runs the statements more than once (a form ending in "every")
    duplicates: bool = False  # writes the statements twice (one copy per arm)


def _loop_valid(form: str, w: tuple[int, ...]) -> bool:
    n, k = w
    return 1 <= n <= TRIP_CAP and (form.endswith("every") or k < n)


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("carried", "step", LOOP_FORMS, 4, lambda f, w: w[0] <= TRIP_CAP and w[3] < 4,
         "a for/while/do loop with a trip count from the data carries a sum, with break and continue on "
         "data-dependent conditions; the index moves by the sum's difference from its known value"),
    Kind("exchange", "step", ("local",), 2, lambda f, w: w[0] % 2 == 1,
         "each work-item writes its index to local memory, barrier, then takes the one of local id "
         "(lid * m + b) mod local_size (a permutation: m is odd)", local=True),
    Kind("rounds", "step", ("local",), 3, lambda f, w: 0 <= w[0] <= ROUNDS_CAP and w[1] % 2 == 1,
         "the exchange repeated in a loop with a uniform trip count from the data, a barrier after each "
         "write and each read", local=True),
    Kind("tree", "step", ("local",), 2, lambda f, w: True,
         "a work-group sum of lid * a + b as an explicit tree in local memory (barrier per level); the index "
         "moves by the sum's difference from its known value", local=True),
    Kind("call", "step", ("add", "noinline", "global", "struct", "swap", "generic", "local"), 2, lambda f, w: True,
         "a helper function: through a pointer to private memory (inlined or never inlined), a pointer "
         "to global memory, a struct by value, a struct through a pointer, a generic pointer to private "
         "memory (OpenCL C 2.0, or 3.0 with __opencl_c_generic_address_space: §6.7.1), a pointer to the "
         "work-item's own element of a local array (no other work-item's: no barrier needed)",
         needs=(("generic", "generic_address_space"),), local_forms=("local",)),
    Kind("array", "step", ("private",), 2, lambda f, w: True,
         "a private array filled in a loop and read at an index from the data"),
    Kind("select", "step", ("ternary",), 2, lambda f, w: w[0] < w[1],
         "x = c0 < c1 ? x : other, the condition true by the data"),
    Kind("if-uniform", "wrap", ("then", "else"), 2, lambda f, w: w[0] == w[1],
         "if/else on two equal control words: the statements in the arm taken, a dead block in the other"),
    Kind("if-divergent", "wrap", ("lid", "gid", "group"), 1, lambda f, w: True,
         "if (id < t) { statements } else { statements }: lanes of a work-group take both arms",
         duplicates=True),
    Kind("loop", "wrap", tuple(f"{f}-{m}" for f in LOOP_FORMS for m in ("once", "break", "every")), 2, _loop_valid,
         "a loop with a trip count n from the data: the statements on iteration k only (once), on k then "
         "break (break), or on every iteration (every: the same stores again)", repeats=True),
    Kind("switch", "wrap", ("case",), 1, lambda f, w: True,
         "switch on a control word: the statements under its case, dead blocks under another case and default"),
    Kind("dead", "wrap", ("return", "store"), 2, lambda f, w: w[0] != w[1],
         "a block guarded by two different control words compared equal (never runs) before the "
         "statements: an early return, or stores of zero to every output"),
)}
STEPS = tuple(k for k, d in KINDS.items() if d.role == "step")
NEEDS = frozenset(cap for d in KINDS.values() for _, cap in d.needs)
"""Every device capability a part's form may need (fingerprint keys, fuzz.drivers.probe)."""
WRAPS = tuple(k for k, d in KINDS.items() if d.role == "wrap")


def needs(shape: Shape) -> frozenset[str]:
    """The device capabilities a program with this shape requires (its parts' forms': Kind.needs)."""
    return frozenset(cap for p in shape.parts for form, cap in KINDS[p.kind].needs if form == p.form)


def repeats(part: Part) -> bool:
    """Whether a wrap runs the statements more than once per work-item."""
    return part.kind == "loop" and part.form.endswith("every")


def check(shape: Shape, local_size: int, global_size: int, shared: bool) -> None:
    """Raise :class:`ShapeError` unless ``shape`` is valid and defined on a program of these sizes
    (``shared``: it has atomic locations, whose statements run exactly once and use their own ids)."""
    for role, parts in (("step", shape.steps), ("wrap", shape.wraps)):
        for p in parts:
            kind = KINDS.get(p.kind)
            if kind is None or kind.role != role:
                raise ShapeError(f"unknown {role} {p.kind!r} (one of {', '.join(STEPS if role == 'step' else WRAPS)})")
            if p.form not in kind.forms:
                raise ShapeError(f"{p.kind}: unknown form {p.form!r} (one of {', '.join(kind.forms)})")
            if len(p.words) != kind.words or any(not 0 <= w <= MASK for w in p.words):
                raise ShapeError(f"{p.kind}: needs {kind.words} control words in [0, 2^32)")
            if not kind.valid(p.form, p.words):
                raise ShapeError(f"{p.kind}:{p.form}: control words {list(p.words)} do not take the intended path")
    if shape.cfg not in CFGS:
        raise ShapeError(f"unknown control flow form {shape.cfg!r} (one of {', '.join(CFGS)})")
    if shared and (shape.steps or any(repeats(p) for p in shape.wraps)):
        raise ShapeError("a program with atomic locations takes only wraps that run its statements once")
    if shape.local and (local_size < 1 or local_size & (local_size - 1)):
        raise ShapeError(f"local-memory steps need a power-of-two local_size, not {local_size}")
    if global_size >= 1 << 31:
        raise ShapeError("shapes index in uint: global_size must stay below 2^31")


def to_data(shape: Shape) -> dict:
    """The JSON form of a shape (lang.ir.to_data)."""
    def part(p: Part) -> list:
        return [p.kind, p.form, list(p.words)]
    cfg = {"cfg": shape.cfg} if shape.cfg != "structured" else {}
    return {"base": shape.base, "steps": [part(p) for p in shape.steps], "wraps": [part(p) for p in shape.wraps], **cfg}


def from_data(d: dict) -> Shape:
    """The inverse of :func:`to_data`."""
    def part(x: list) -> Part:
        return Part(str(x[0]), str(x[1]), tuple(int(w) for w in x[2]))
    return Shape(str(d["base"]), tuple(part(x) for x in d.get("steps", ())), tuple(part(x) for x in d.get("wraps", ())),
                 str(d.get("cfg", "structured")))
