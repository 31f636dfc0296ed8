"""Generated atomics programs: every construct in every form and memory, valid, defined.

The programs come from ``fuzz.strategies.atomics`` with every atomics capability on (what a
campaign over PoCL, rusticl and Oclgrind together may draw)."""

from __future__ import annotations

import pytest

from campaign.caps import ATOMIC_CAPABILITIES
from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.atomics import ARITHMETIC, C11_OPS, FLAG_OPS, LEGACY_OPS, STRENGTH, atomic_programs
from fuzz.strategies.conversions import Caps
from fuzz.strategies.draws import sample
from lang.constructs import coverage_key
from lang.ir import Program, memory_of
from lang.layout import input_values
from lang.ops import atomic_requirements
from lang.types import scalar
from oracles import histories
from oracles.atomics import KINDS

CAPS = Caps(atomics=frozenset(ATOMIC_CAPABILITIES))


@pytest.fixture(scope="module")
def programs() -> list[Program]:
    return sample(atomic_programs(CAPS), 300, seed=11)


def test_every_operation_form_and_memory_is_drawn(programs):
    seen = {coverage_key(s.value)[0] for p in programs for s in p.body}
    wanted = set()
    for memory in ("global", "group", "local"):
        for name in LEGACY_OPS:
            wanted |= {f"atomic_{name}:atomic:{memory}", f"atomic_{name}:atom:{memory}"}
        for name in C11_OPS:
            for form in ("c11", "explicit"):
                weak = [":weak", ""] if name == "compare_exchange" else [""]
                wanted |= {f"atomic_{name}:{form}:{memory}{w}" for w in weak}
    wanted |= {f"atomic_{name}:{form}:local" for name in FLAG_OPS for form in ("c11", "explicit")}
    assert wanted - seen == set()
    types = {p.buffer(s.value.attr("location")).type.c_name for p in programs for s in p.body}
    assert types == {"int", "uint", "long", "ulong"}


def test_programs_round_trip_and_declare_what_they_need(programs):
    for p in programs:
        assert Program.from_json(p.to_json()) == p
        assert p.requires == frozenset().union(*(atomic_requirements(s.value) for s in p.body))
        assert p.global_size // p.local_size >= 2  # several work-groups contend


def test_c11_orders_and_scopes_obey_the_restrictions(programs):
    """§6.15.12.7: loads not release/acq_rel, stores not acquire/acq_rel, a failure order not
    release/acq_rel nor stronger than success; device scope where the NDRange shares a location."""
    checked = 0
    for p in programs:
        for s in p.body:
            op = s.value
            if op.attr("form") != "explicit":
                continue
            checked += 1
            name = op.op[len("atomic_"):]
            if name == "load":
                assert op.attr("order") not in ("release", "acq_rel")
            if name in ("store", "flag_clear"):
                assert op.attr("order") not in ("acquire", "acq_rel")
            if name == "compare_exchange":
                assert op.attr("failure") not in ("release", "acq_rel")
                assert STRENGTH[op.attr("failure")] <= STRENGTH[op.attr("order")]
            if memory_of(p.buffer(op.attr("location"))) == "global":
                assert op.attr("scope") == "device"
    assert checked > 300


def test_legacy_signed_arithmetic_never_overflows(programs):
    """The OpenCL 1.x functions do not say signed overflow wraps: on a legacy signed location
    every initial value and operand is within ±2^(N-4), add/sub operands within ±2^(N-19), and a
    program has fewer than 2^16 operations, so no order overflows (the strategy's argument)."""
    checked = 0
    for p in programs:
        assert p.global_size * len(p.body) < 1 << 16
        h = histories(p, input_values(p))
        for loc in h.locations:
            s = scalar(loc["type"])
            if not s.signed or p.buffer(loc["buffer"]).kind:
                continue
            signed = lambda v: v - (1 << s.bits) if v >> (s.bits - 1) else v  # noqa: E731
            assert abs(signed(loc["init"])) <= 1 << (s.bits - 4)
            sel = h.key == loc["key"]
            for kind, a, b in zip(h.kind[sel], h.a[sel], h.b[sel]):
                kind = KINDS[kind]
                bound = 1 << (s.bits - (19 if kind in ARITHMETIC else 4))
                assert abs(signed(int(a))) <= bound and abs(signed(int(b))) <= bound, (p.id, kind, int(a))
                checked += 1
    assert checked > 1000


def test_every_module_validates(programs):
    for p in programs:
        assert validate(spirv.emit(p), target_env(p)) is None, p.id
        emit(p)  # and the OpenCL C emitter takes it
