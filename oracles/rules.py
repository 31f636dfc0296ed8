"""The registry of oracle rules: every verdict names one, with the spec section behind it.

Rules are registered by the oracle modules at import time (``register``), each with its
severity (:data:`SEVERITIES`): what a vendor reads first. A lane's rule is stored
as a small integer index into :data:`RULES` so that oracles stay vectorized; the judge turns it
back into the rule's id, text and section when it records a disagreement.
"""

from __future__ import annotations

import threading
from dataclasses import astuple, dataclass

import numpy as np


@dataclass(frozen=True)
class Rule:
    """One rule of the specification as the oracle applies it."""

    id: str  # stable dotted name, e.g. "convert.sat.nan"
    text: str  # the rule in one sentence, close to the spec's words
    section: str  # where it is stated, e.g. "OpenCL C 3.0.19 §6.4.3.3"
    severity: str = "violation"  # one of SEVERITIES
    note: str = ""  # for a recommendation: the normative text that may still require it
    leaves: str = ""  # one of LEAVES: the spec leaves the result of the lanes it marks unjudged so

    def cite(self) -> str:
        return f"{self.text} ({self.section})"


RULES: list[Rule] = [Rule("unspecified", "no rule recorded", "-")]
_INDEX: dict[str, int] = {RULES[0].id: 0}
_REGISTER = threading.RLock()  # threads register math rules as they first use them


SEVERITIES: dict[str, str] = {
    "violation": "a shall/must/required value or bound of the spec is broken",
    "recommendation": "a 'should' of the spec is not followed (another normative text may still require it: "
                      "the rule's note says which)",
    "tolerance": "outside a bound the spec leaves loose, as clfuzz reads it (e.g. image sampling precision)",
    "letter": "a deviation by the letter of the spec that hardware practice commonly takes (e.g. a denormal "
              "coordinate flushed on a device that reports denormals), or one shown only by a program with an "
              "operation whose result the spec leaves undefined or implementation-defined",
    "performance": "slow, not wrong: a run cut at clfuzz's --timeout ceiling (no rule of the spec sets a time "
                   "limit); it is a hang, a violation, only if it does not finish at ten times the ceiling either",
}
"""How much a broken rule weighs, most serious first (bug list order, ``clfuzz ci --severity``); every
correctness severity comes before ``performance``."""

_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}  # its place in that order

LEAVES: tuple[str, ...] = ("undefined", "implementation-defined")
"""What a rule that marks lanes unjudged may say the specification leaves their result (``Rule.leaves``):
a lane so marked makes its program not a defined one (oracles.undefined, triage.reduce's ``defined`` pass).
Only the result a construct of the program has counts; a loose bound (an accuracy the spec leaves open, a
build option's relaxation, a flushed denormal, any NaN) leaves a defined program's lane unjudged and marks
none."""


def register(id: str, text: str, section: str, severity: str = "violation", note: str = "", leaves: str = "") -> int:
    """Register a rule (idempotent for identical text) and return its index. Every rule declares
    its severity (:data:`SEVERITIES`) here, once. A disagreement under a ``tolerance`` rule is
    recorded as kind ``imprecise-result``, a lower class than ``wrong-result``: the bound is
    clfuzz's reading of formulas whose precision the spec leaves undefined. A rule that marks lanes
    unjudged because the spec leaves their result undefined or implementation-defined says so in
    ``leaves`` (:data:`LEAVES`)."""
    if severity not in SEVERITIES:
        raise ValueError(f"rule {id!r}: unknown severity {severity!r}")
    if leaves and leaves not in LEAVES:
        raise ValueError(f"rule {id!r}: unknown leaves {leaves!r}")
    if severity == "recommendation" and not note:
        raise ValueError(f"rule {id!r}: a recommendation names the text that may still require it (note)")
    with _REGISTER:
        if id in _INDEX:
            existing = RULES[_INDEX[id]]
            if (existing.text, existing.section, existing.severity, existing.note, existing.leaves) != (
                    text, section, severity, note, leaves):
                raise ValueError(f"rule {id!r} registered twice with different text")
            return _INDEX[id]
        RULES.append(Rule(id, text, section, severity, note, leaves))
        _INDEX[id] = len(RULES) - 1
        return _INDEX[id]


def portable_rules(indices: np.ndarray) -> tuple[np.ndarray, tuple[tuple, ...]]:
    """Lanes' rule indices as another process reads them: an index is this process's (rules register
    as their modules are imported and a math rule when first used, so two processes number them
    apart). Returns codes into a table of the rules used (each rule's fields, :func:`adopt_rules` takes
    both)."""
    indices = np.asarray(indices, dtype=np.intp)
    counts = np.bincount(indices.ravel(), minlength=1)
    used, code = np.flatnonzero(counts), np.zeros(len(counts), dtype=np.int16)
    code[used] = np.arange(len(used))
    return code[indices], tuple(astuple(RULES[int(i)]) for i in used)


def adopt_rules(codes: np.ndarray, table: tuple[tuple, ...]) -> np.ndarray:
    """The rule indices of this process for the ``codes`` and ``table`` of :func:`portable_rules` (each rule
    registered here if it was not)."""
    local = np.array([register(*fields) for fields in table] or [0], dtype=np.int16)
    return local[codes]


def index(id: str) -> int:
    """The index of a registered rule."""
    return _INDEX[id]


def rule(i: int) -> Rule:
    return RULES[i]


FAILURE = Rule("valid-program", "a valid program must build and run",
               "OpenCL C 3.0 §6 (the program is valid by construction)")
"""The rule a build error, crash, hang or runtime error of a valid, UB-free program breaks."""

FAILURE_SPIRV = Rule(
    "valid-module", "a SPIR-V module valid for the OpenCL environment (spirv-val) must be consumed, built and run",
    "OpenCL SPIR-V environment §2.1 (an environment 'must support SPIR-V 1.0 modules'), §2.2 ('must support SPIR-V "
    "modules that import the OpenCL.std extended instruction set'), §3.1 ('must support SPIR-V 1.0 modules that "
    "declare the following capabilities'), §4 (the validation rules the module meets, as spirv-val checks them); "
    "OpenCL 3.0 API §5.8.1 clCreateProgramWithIL (CL_INVALID_VALUE only for IL that is not "
    "'well-formed intermediate language input that can be consumed by the OpenCL runtime') and §5.8.4 "
    "clBuildProgram ('must be called for program created using ... clCreateProgramWithIL'); the kernel is valid "
    "and free of undefined behaviour by construction")
""":data:`FAILURE` on a SPIR-V path: the module, not OpenCL C source, is what the driver (or the
route that translates it for the driver) was given."""


def failure_rule(spirv: bool) -> Rule:
    """The rule a failure of a valid program breaks on its path (a SPIR-V module's, or OpenCL C's)."""
    return FAILURE_SPIRV if spirv else FAILURE


SLOW = Rule("run.slow", "a run cut at clfuzz's --timeout ceiling is slow, not wrong: a valid program that runs "
            "longer than clfuzz waits breaks no rule; it is a hang (valid-program) only if it does not finish at ten "
            "times the ceiling either", "none: no OpenCL specification sets a time limit", severity="performance")
"""The rule a run cut at the ceiling is recorded under until triage's re-run at ten times the ceiling
decides it (triage.slow): not registered, like :data:`FAILURE`."""


WRONG_CODE = register(
    "shape.twin", "control flow, loops, barriers, local memory and calls around a statement do not change the value "
    "it stores: the kernel's straight-line twin computes the same outputs (its lanes agree with the oracle here)",
    "OpenCL C 3.0.19 §6 (C99 §6.8: the statements' semantics, 'shall'); §6.15.8 barrier: local memory written "
    "before it is visible to the work-group after it ('must')")
"""The rule a wrong-code bucket breaks (corpus.buckets.WRONG_CODE, triage.reduce.passes.shapes)."""


def by_id(rule_id: str) -> Rule | None:
    """The registered rule ``rule_id`` (None for a failure's, or one not registered: a math rule is
    registered when first used)."""
    i = _INDEX.get(rule_id)
    return RULES[i] if i else None


def severity_of(rule_id: str) -> str:
    """The severity of a registered rule by its id; a failure's, or one not registered:
    violation. oracles.references.severity_of registers every oracle module's rules first."""
    found = by_id(rule_id)
    return found.severity if found else "violation"


_SOFTNESS: list[np.ndarray] = [np.zeros(0, np.int8)]


def softness() -> np.ndarray:
    """Per rule index, how much weaker than a violation its severity is (0: a violation or a failure;
    the order of :data:`SEVERITIES`): a lane whose expected value rests on a rule of softness above 0
    (a should, a tolerance, the letter) is prescribed only as far as that rule goes. Grows as rules
    register (a math rule when first used)."""
    table = _SOFTNESS[0]
    if len(table) != len(RULES):
        table = np.array([_RANK[r.severity] for r in RULES], np.int8)
        _SOFTNESS[0] = table
    return table


def at_least(severity: str, floor: str) -> bool:
    """Whether ``severity`` is ``floor`` or more serious (the order of :data:`SEVERITIES`)."""
    return _RANK[severity] <= _RANK[floor]
