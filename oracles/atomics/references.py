"""The atomics oracle: what some interleaving of a location's atomic operations allows.

Atomic operations on one location are totally ordered: every one reads the value the one before it
wrote (the modification order, OpenCL C 3.0 §3.3.4 / C11 §5.1.2.4 coherence; for the OpenCL 1.x
functions §6.15.12.8: each reads ``old``, computes and stores "atomically"). No single result of
an operation under contention is predictable, so the oracle judges a location's whole *history*:
its initial value, every operation on it with its operands and the value each one returned, and
the final value read back after the kernel (DIGEST §7.3).

The oracle's parts: what each operation does (:mod:`oracles.atomic_ops`), the histories of a
program and the final values that need no order (:mod:`oracles.atomic_histories`), and the check
of a run's histories (:mod:`oracles.atomic_check`). This module holds the references of the
atomic functions.

**Scope of the 1.x functions**: OpenCL C 3.0 §6.15.12.8 calls them equivalent to relaxed atomics
with ``memory_scope_work_group``, while the SPIR-V OpenCL 1.2 environment requires Scope Device
for every atomic instruction (000 §5.2.8, 001): the 1.x functions are device-wide as every
implementation and that mapping treat them. Histories of global locations that work-items of
several groups update with them are judged on that reading; their rows carry the input class
``atomics:global`` so that triage can tell them apart.
"""

from __future__ import annotations

import numpy as np

from lang.ir import Op
from lang.ops import Handlers
from lang.types import scalar
from oracles import rules
from oracles.atomic_histories import SECTION
from oracles.expect import Expectation
from oracles.operands import Reference

REFERENCES: Handlers[Reference] = Handlers()
"""The references of this module, by operation name (assembled in oracles.references)."""
reference = REFERENCES.register

RULE_UNOBSERVED = rules.register(
    "atomic.unobserved", "an atomic operation's result alone is not predictable: it is judged with its "
    "location's history", SECTION)


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
