"""The atomics oracle: what some interleaving of a location's atomic operations allows.

Atomic operations on one location are totally ordered: every one reads the value the one before it
wrote (the modification order, OpenCL C 3.0 §3.3.4 / C11 §5.1.2.4 coherence; for the OpenCL 1.x
functions §6.15.12.8: each reads ``old``, computes and stores "atomically"). No single result of
an operation under contention is predictable, so the oracle judges a location's whole *history*:
its initial value, every operation on it with its operands and the value each one returned, and
the final value read back after the kernel (what atomicity alone implies, §6.15.12).

The oracle's parts: what each operation does (:mod:`oracles.atomics.ops`), the histories of a
program and the final values that need no order (:mod:`oracles.atomics.histories`), the check
of a run's histories (:mod:`oracles.atomics.check`), and the references of the atomic functions
(:mod:`oracles.atomics.references`: a returned value alone is not judged).

**Scope of the 1.x functions**: OpenCL C 3.0 §6.15.12.8 calls them equivalent to relaxed atomics
with ``memory_scope_work_group``, while the SPIR-V OpenCL 1.2 environment requires Scope Device
for every atomic instruction (OpenCL SPIR-V environment §4; SPIR-V environment 2.2 (2017), "OpenCL 1.2",
"Validation Rules"): the 1.x functions are device-wide as every
implementation and that mapping treat them. Histories of global locations that work-items of
several groups update with them are judged on that reading; their rows carry the input class
``atomics:global`` so that triage can tell them apart.
"""

from oracles.atomics.check import RULE_RESULT, Violation, check, observed_results
from oracles.atomics.histories import RULE_FINAL, RULE_ORDER, SECTION, Histories, final_values, histories
from oracles.atomics.ops import KINDS, apply
from oracles.atomics.references import RULE_UNOBSERVED

__all__ = [
    "KINDS", "RULE_FINAL", "RULE_ORDER", "RULE_RESULT", "RULE_UNOBSERVED", "SECTION", "Histories", "Violation",
    "apply", "check", "final_values", "histories", "observed_results",
]
