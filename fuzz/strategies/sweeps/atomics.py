"""The atomics area's corner sweep (lang.corners.atomics): every atomic operation in every spelling,
memory, order and scope the campaign's devices support (``Caps.atomics``), under contention.

Each corner gets one statement on a location of its own: one element, initial value 5, that every
work-item of the NDRange (global memory), of its work-group (global memory partitioned per group)
or of its work-group's local memory updates with a small literal operand, so the final values and
the returned old values are decided by the atomics oracle's history check as for any program;
signed legacy arithmetic stays far from overflow (64 work-items adding 1 to 5). An explicit
compare_exchange fails with ``relaxed`` (never stronger than the success order, §6.15.12.7). The
statements are sorted by what they need (lang.ops.atomic_requirements), so a device without a
feature loses whole programs rather than statements, and held :data:`STATEMENTS` to a program over
64 work-items in work-groups of 16 (several groups: the per-group memory is exercised).
"""

from __future__ import annotations

from fuzz.strategies.conversions import Caps
from lang.corners.atomics import rows
from lang.ir import Buffer, Fill, Literal, Op, Program, Store
from lang.ops import ATOMICS, atomic_requirements
from lang.policy import Policy
from lang.types import Type

STATEMENTS, GLOBAL_SIZE, LOCAL_SIZE = 32, 64, 16
OPERANDS = {"add": (1,), "sub": (1,), "xchg": (7,), "cmpxchg": (5, 9), "min": (3,), "max": (3,), "and": (6,),
            "or": (6,), "xor": (6,), "store": (7,), "compare_exchange": (5, 9)}
"""Each operation's literal operands (the others take none)."""
ARITY = {name: arity for name, arity, *_ in ATOMICS}


def _statement(i: int, op: str, t: str, key: str) -> tuple[list[Buffer], Store]:
    name = op.removeprefix("atomic_")
    form, memory, *rest = key.split(":")
    weak = rest[-1:] == ["weak"]
    flag = name.startswith("flag")
    location = f"{'L' if memory == 'local' else 'A'}{i}"
    if flag:
        shared = Buffer(location, Type("int"), "local", None, 1, False, "flag")
    else:
        shared = Buffer(location, Type(t), "local" if memory == "local" else "global", Fill(0, (), values=(5,)), 1,
                        memory == "group", "atomic" if form in ("c11", "explicit") else "")
    attrs: dict = {"location": location, "index": ("gid" if memory == "global" else "lid", 1, 1, 0),
                   "memory": memory, "form": form}
    if form == "explicit":
        attrs["order"], attrs["scope"] = rest[0], rest[1]
    if name == "compare_exchange":
        attrs["weak"] = weak
        if form == "explicit":
            attrs["failure"] = "relaxed"
    lt = shared.type
    args = tuple(Literal(lt, (v,)) for v in OPERANDS.get(name, ())[:ARITY[name]])
    result = Type(lt.scalar, 2) if name == "compare_exchange" else Type("int") if flag else lt
    out = Buffer(f"out{i}", result, "out")
    return [shared, out], Store(out.name, Op(op, args, result, tuple(sorted(attrs.items()))))


def atomic_sweep(caps: Caps, policy: Policy) -> list[Program]:
    """The atomics sweep (module docstring): deterministic for given capabilities."""
    corners = [(op, t, key) for needs, op, t, key in
               sorted((sorted(needs), op, t, key) for op, t, key, needs in rows() if needs <= caps.atomics)]
    programs = []
    for start in range(0, len(corners), STATEMENTS):
        buffers, body = [], []
        for i, corner in enumerate(corners[start:start + STATEMENTS]):
            bufs, store = _statement(i, *corner)
            buffers += bufs
            body.append(store)
        requires = frozenset().union(*(atomic_requirements(s.value) for s in body))
        programs.append(Program(tuple(buffers), tuple(body), GLOBAL_SIZE, requires=requires, area="atomics",
                                local_size=LOCAL_SIZE))
    return programs

