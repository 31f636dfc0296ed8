"""Hypothesis strategies for atomics under contention (OpenCL C 3.0 §6.15.12).

``atomic_programs(caps, policy)`` draws programs in which every work-item of several work-groups
applies atomic operations to a few shared locations: global memory shared by the whole NDRange,
global memory partitioned per work-group, and local memory (initialised, barrier, atomics,
barrier, copied out: :mod:`fuzz.emit.opencl_c`). Each statement stores the value its operation
returns; its location is ``base + (id / div) % mod`` of a shared buffer, so that anywhere from
every work-item to a handful contend for one location.

A program uses one family: the OpenCL 1.x functions (``atomic_*`` on int/uint, ``atom_*`` also on
long/ulong where every target of the campaign has the int64 atomics extensions), or the C11
functions (``atomic_fetch_*``, ``atomic_exchange``, ``atomic_load/store``,
``atomic_compare_exchange_strong/weak`` and ``atomic_flag_*`` in their plain or ``_explicit``
forms) on ``atomic_int`` & co., with the memory orders and scopes some target supports (the
program then runs where all of them are: ``Program.requires``).

Valid and race-free by construction: shared buffers are only touched by atomics between the
barriers (their initialisation and copy-out are one work-item per element, separated by the
barriers); C11 scopes are ``memory_scope_device`` for locations shared by the NDRange
(work-group scope there would make different groups' operations race, §6.15.12.3), and the
memory orders obey §6.15.12.7's restrictions (loads not release/acq_rel, stores not acquire/
acq_rel, a failure order neither release/acq_rel nor stronger than the success order). The
OpenCL 1.x functions state no wrap-around for signed overflow (only the C11 ones do,
§6.15.12.7.4), so every value a legacy signed location starts with or is given (xchg, cmpxchg,
min, max, and, or, xor) is within ±2^(N-4) and add/sub operands within ±2^(N-19): with fewer
than 2^16 operations per location (the policy is checked) the additions move a value by less than
2^(N-3), bitwise operations keep it within the power-of-two envelope of their operands, and no
intermediate value overflows, whatever the order.
"""

from __future__ import annotations

from hypothesis import strategies as st

from fuzz.strategies.conversions import Builder, Caps
from fuzz.strategies.values import values
from lang.ir import Buffer, Fill, Literal, Load, Op, Program, Store, memory_of
from lang.ops import ATOMICS, MEMORY_ORDERS, atomic_requirements
from lang.policy import Policy
from lang.types import Scalar, Type, scalar

LEGACY_OPS = tuple(name for name, _, _, legacy, _ in ATOMICS if legacy)
C11_OPS = tuple(name for name, _, c11, _, _ in ATOMICS if c11 and not name.startswith("flag"))
FLAG_OPS = ("flag_test_and_set", "flag_clear")
ARITY = {name: arity for name, arity, *_ in ATOMICS}
OPERATIONS = frozenset(f"atomic_{name}" for name in LEGACY_OPS + C11_OPS + FLAG_OPS)
"""The operations this strategy draws (tests/test_ops_table.py; tests/test_atomics_programs.py
checks that sampled programs use every one in every form and memory)."""
ARITHMETIC = ("add", "sub", "inc", "dec")
STRENGTH = {"relaxed": 0, "acquire": 1, "release": 1, "acq_rel": 2, "seq_cst": 3}
MAX_OPERATIONS_LOG2 = 16  # work-items x statements per program stay below 2^16 (policy checked)


def _orders(op: str, caps: Caps) -> list[str]:
    """Memory orders some target supports that ``op`` may take (§6.15.12.7)."""
    allowed = [o for o in MEMORY_ORDERS if o == "relaxed"
               or (o in ("acquire", "release", "acq_rel") and "atomic_order_acq_rel" in caps.atomics)
               or (o == "seq_cst" and "atomic_order_seq_cst" in caps.atomics)]
    if op == "load":
        return [o for o in allowed if o not in ("release", "acq_rel")]
    if op in ("store", "flag_clear"):
        return [o for o in allowed if o not in ("acquire", "acq_rel")]
    return allowed


def _narrow(bits: int, s: Scalar, shift: int) -> int:
    """The signed value of ``bits`` shifted right arithmetically by ``shift``, as bits: within
    ±2^(N-1-shift)."""
    value = bits - (1 << s.bits) if bits >> (s.bits - 1) else bits
    return (value >> shift) & ((1 << s.bits) - 1)


class _Atomics:
    """State while drawing one atomics program."""

    def __init__(self, b: Builder, caps: Caps, c11: bool, wide: bool, local_size: int) -> None:
        self.b, self.caps, self.c11, self.wide, self.local_size = b, caps, c11, wide, local_size

    def shared(self, role: str, flag: bool = False) -> Buffer:
        b, rnd = self.b, self.b.rnd
        names = [x.name for x in b.buffers if x.shared]
        name = f"{'L' if role == 'local' else 'A'}{len(names)}"
        count = rnd.choice((1, 1, 2, 3, 4, 8))
        if flag:
            buf = Buffer(name, Type("int"), "local", None, count, False, "flag")
        else:
            t = rnd.choice(("int", "uint", "long", "ulong") if self.wide else ("int", "uint"))
            init = [self._init(t) for _ in range(4)]
            # a C11 location the NDRange shares needs memory_scope_device (module docstring)
            device = "atomic_scope_device" in self.caps.atomics
            per_group = role == "global" and (rnd.random() < 0.5 or (self.c11 and (not device or rnd.random() < 0.5)))
            narrowed = scalar(t).signed and not self.c11  # only pool values: no uniform bits (Fill)
            fill = Fill(b.draw(st.integers(0, 2**32 - 1)), tuple(init), 4 if narrowed else 3)
            buf = Buffer(name, Type(t), role, fill, count, per_group, "atomic" if self.c11 else "")
        b.buffers.append(buf)
        return buf

    def _init(self, t: str) -> int:
        """An initial value (bits); a signed legacy one within ±2^(N-4) (module docstring)."""
        bits = self.b.draw(values(t))
        return _narrow(bits, scalar(t), 3) if scalar(t).signed and not self.c11 else bits

    def operand(self, t: Type, kind: str, shared: Buffer) -> Load | Literal:
        """An operand: edge values (or, for exchanges and compares, values the location may
        hold: its initial values and small numbers), narrowed for legacy signed arithmetic."""
        b, rnd = self.b, self.b.rnd
        s = t.elem
        if kind in ("cmpxchg", "compare_exchange", "xchg", "store"):
            pool = tuple(sorted(set(shared.fill.pool) | {0, 1, 2})) if shared.fill else (0, 1, 2)
        else:
            pool = tuple(b.draw(values(t.scalar)) for _ in range(rnd.randint(1, 6)))
        narrowed = s.signed and not self.c11
        if narrowed and kind not in ("cmpxchg", "xchg"):  # those take the (narrowed) initial values
            shift = 18 if kind in ARITHMETIC else 3  # |v| <= 2^(N-19), or 2^(N-4) like initial values
            pool = tuple(_narrow(p, s, shift) for p in pool)
        if rnd.random() < b.policy.p_literal_operand:
            return Literal(t, (rnd.choice(pool),))
        buf = Buffer(b.name("in"), t, "in", Fill(b.draw(st.integers(0, 2**32 - 1)), pool, 4 if narrowed else 3))
        b.buffers.append(buf)
        return Load(buf.name, t)

    def index(self, shared: Buffer) -> tuple:
        rnd = self.b.rnd
        mod = rnd.choice([1, 1, *range(1, shared.count + 1)])
        base = rnd.randrange(shared.count - mod + 1)
        which = "lid" if shared.grouped or rnd.random() < 0.3 else "gid"
        div = rnd.choice((1, 1, 2, 4, 16, self.local_size))
        return (which, div, mod, base)

    def statement(self, shared: Buffer) -> Store:
        b, rnd = self.b, self.b.rnd
        t = shared.type
        if shared.kind == "flag":
            kind = rnd.choices(FLAG_OPS, (4, 1))[0]
        elif self.c11:
            kind = rnd.choice(C11_OPS)
        else:
            kind = rnd.choice(LEGACY_OPS)
        attrs: dict = {"location": shared.name, "index": self.index(shared), "memory": memory_of(shared)}
        if self.c11:
            explicit = rnd.random() < 0.7 or not {"atomic_order_seq_cst", "atomic_scope_device"} <= self.caps.atomics
            attrs["form"] = "explicit" if explicit else "c11"
            if explicit:
                attrs["order"] = rnd.choice(_orders(kind, self.caps))
                device = "atomic_scope_device" in self.caps.atomics
                attrs["scope"] = "device" if memory_of(shared) == "global" or (device and rnd.random() < 0.3) else "work_group"
            if kind == "compare_exchange":
                attrs["weak"] = rnd.random() < 0.5
                if explicit:
                    success = attrs["order"]
                    attrs["failure"] = rnd.choice([o for o in _orders("load", self.caps)
                                                   if STRENGTH[o] <= STRENGTH[success] and o not in ("release", "acq_rel")])
        else:
            attrs["form"] = "atom" if t.elem.bits == 64 or rnd.random() < 0.3 else "atomic"
        args = tuple(self.operand(t, kind, shared) for _ in range(ARITY[kind]))
        result = Type(t.scalar, 2) if kind == "compare_exchange" else Type("int") if kind.startswith("flag") else t
        op = Op(f"atomic_{kind}", args, result, tuple(sorted(attrs.items())))
        return Store(b.output(result), op)


def _shape(b: Builder, policy: Policy) -> tuple[int, int]:
    """(local_size, global_size): several work-groups, at most policy.atomic_global_size items."""
    local = b.rnd.choice([x for x in (8, 16, 32, 64, 128, 256) if 2 * x <= policy.atomic_global_size])
    groups = b.rnd.choice([g for g in (2, 3, 4, 8, 16, 32) if g * local <= policy.atomic_global_size])
    return local, groups * local


@st.composite
def atomic_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Programs of atomics under contention (see the module docstring)."""
    if policy.atomic_global_size * policy.atomic_statements >= 1 << MAX_OPERATIONS_LOG2:
        raise ValueError("policy.atomic_global_size * atomic_statements must stay below 65536")
    rnd = draw(st.randoms(use_true_random=True))
    b = Builder(draw, rnd, policy, ("int", "uint"))
    local_size, global_size = _shape(b, policy)
    c11 = "cl3.0" in caps.atomics and rnd.random() < policy.p_c11_atomics
    wide = "int64_atomics" in caps.atomics and rnd.random() < policy.p_int64_atomics
    a = _Atomics(b, caps, c11, wide, local_size)
    shared = [a.shared(rnd.choice(("global", "global", "local"))) for _ in range(rnd.randint(1, 3))]
    if c11 and rnd.random() < 0.4:
        shared.append(a.shared("local", flag=True))
    body = [a.statement(rnd.choice(shared)) for _ in range(policy.atomic_statements)]
    used = {s.value.attr("location") for s in body}
    b.buffers[:] = [x for x in b.buffers if not x.shared or x.name in used]
    requires = frozenset().union(*(atomic_requirements(s.value) for s in body))
    return Program(tuple(b.buffers), tuple(body), global_size, requires=requires, area="atomics",
                   local_size=local_size)
