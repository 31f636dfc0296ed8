"""The atomics' rows of the corner table (lang.corners), derived from lang.ops.ATOMICS.

Every atomic operation of OpenCL C 3.0.19 §6.15.12 in every spelling it has: the OpenCL 1.x forms
of the legacy operations (§6.15.12.8-9: ``atomic_`` on 32-bit integers, ``atom_`` on 32- and
64-bit ones with cl_khr_int64_*_atomics) and the C11 functions (§6.15.12.7), plain (seq_cst,
device scope) or ``_explicit`` with every memory order the operation takes (a load is not release
or acq_rel, a store or a flag clear not acquire or acq_rel) and each memory scope; on every memory
its location may be in (global memory the NDRange shares, which needs device scope; global memory
partitioned per work-group; local memory; the flags live in local memory); compare_exchange
strong and weak; every integer type the spelling takes (int and uint; long and ulong with the
64-bit atomics). A corner is ``atomic_<op>:<type>:<form>:<memory>[:<order>:<scope>][:weak]``
(``atomic_compare_exchange:long:explicit:local:acq_rel:work_group:weak``), its needs the features
:func:`lang.ops.atomic_requirements` names for it.
"""

from __future__ import annotations

from lang.ir import Op
from lang.ops import ATOMICS, MEMORY_ORDERS, MEMORY_SCOPES, atomic_requirements
from lang.types import Type

MEMORIES = ("global", "group", "local")


def _orders(name: str) -> tuple[str, ...]:
    if name == "load":
        return tuple(o for o in MEMORY_ORDERS if o not in ("release", "acq_rel"))
    if name in ("store", "flag_clear"):
        return tuple(o for o in MEMORY_ORDERS if o not in ("acquire", "acq_rel"))
    return MEMORY_ORDERS


def _needs(op: str, t: str, form: str, order: str = "", scope: str = "") -> frozenset[str]:
    """What lang.ops.atomic_requirements says an operation with these attributes needs."""
    attrs = {"form": form, **({"order": order, "scope": scope} if order else {})}
    return atomic_requirements(Op(op, (), Type(t), tuple(sorted(attrs.items()))))


def rows() -> list[tuple[str, str, str, frozenset[str]]]:
    """``(operation, type, key, needs)`` of every atomic corner (module docstring)."""
    out = []
    for name, _, c11, legacy, _ in ATOMICS:
        op = f"atomic_{name}"
        flag = name.startswith("flag")
        types = ("int",) if flag else ("int", "uint", "long", "ulong")
        memories = ("local",) if flag else MEMORIES
        weak = ("", ":weak") if name == "compare_exchange" else ("",)
        for t in types:
            wide = t in ("long", "ulong")
            for memory in memories:
                if legacy:
                    out += [(op, t, f"{form}:{memory}", _needs(op, t, form)) for form in ("atomic", "atom")
                            if form == "atom" or not wide]
                if c11:
                    out += [(op, t, f"c11:{memory}{w}", _needs(op, t, "c11")) for w in weak]
                    scopes = ("device",) if memory == "global" else MEMORY_SCOPES
                    out += [(op, t, f"explicit:{memory}:{order}:{scope}{w}", _needs(op, t, "explicit", order, scope))
                            for order in _orders(name) for scope in scopes for w in weak]
    return out


def key_of(attrs: dict) -> str:
    """The corner key of one atomic operation from its attributes."""
    parts = [attrs["form"], attrs["memory"]]
    if attrs["form"] == "explicit":
        parts += [attrs["order"], attrs["scope"]]
    return ":".join(parts) + (":weak" if attrs.get("weak") else "")
