"""The references of the atomic functions: a returned value alone is not judged lane by lane, its
location's history is (:mod:`oracles.atomics` says why).
"""

from __future__ import annotations

import numpy as np

from lang.ir import Op
from lang.ops import Handlers
from lang.types import scalar
from oracles import rules
from oracles.atomics.histories import SECTION
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
