"""The registry of oracle rules: every verdict names one, with the spec section behind it.

Rules are registered by the oracle modules at import time (``register``). A lane's rule is stored
as a small integer index into :data:`RULES` so that oracles stay vectorized; the judge turns it
back into the rule's id, text and section when it records a disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One rule of the specification as the oracle applies it."""

    id: str  # stable dotted name, e.g. "convert.sat.nan"
    text: str  # the rule in one sentence, close to the spec's words
    section: str  # where it is stated, e.g. "OpenCL C 3.0.19 §6.4.3.3"
    severity: str = "error"  # "tolerance": a bound clfuzz derives where the spec leaves precision undefined

    def cite(self) -> str:
        return f"{self.text} ({self.section})"


RULES: list[Rule] = [Rule("unspecified", "no rule recorded", "-")]
_INDEX: dict[str, int] = {RULES[0].id: 0}


SEVERITIES = ("error", "tolerance")


def register(id: str, text: str, section: str, severity: str = "error") -> int:
    """Register a rule (idempotent for identical text) and return its index. A disagreement
    under a ``tolerance`` rule is recorded as kind ``imprecise-result``, a lower-severity class
    than ``wrong-result``: the bound is clfuzz's reading of formulas whose precision the spec
    leaves undefined."""
    assert severity in SEVERITIES
    if id in _INDEX:
        existing = RULES[_INDEX[id]]
        if (existing.text, existing.section, existing.severity) != (text, section, severity):
            raise ValueError(f"rule {id!r} registered twice with different text")
        return _INDEX[id]
    RULES.append(Rule(id, text, section, severity))
    _INDEX[id] = len(RULES) - 1
    return _INDEX[id]


def index(id: str) -> int:
    """The index of a registered rule."""
    return _INDEX[id]


def rule(i: int) -> Rule:
    return RULES[i]
