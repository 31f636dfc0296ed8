"""Every rule declares its severity once (oracles.rules.SEVERITIES); a rule that depends on the
route is chosen from the path the program runs on."""

from __future__ import annotations

import numpy as np
import pytest

from oracles import Expectation, rules, severity_of
from oracles.conversions import expect_convert


def _sat_nan(env: frozenset) -> str:
    nan = np.array([np.nan, 1.5], np.float32)
    e = expect_convert(Expectation.exact("float", nan), "int", saturate=True, ftz=env)
    assert e.allowed[0][0] == 0  # NaN -> 0 on both paths
    return rules.rule(int(e.rule[0])).id


def test_sat_of_nan_is_a_recommendation_of_opencl_c_and_required_by_spir_v():
    """OpenCL C 3.0.19 §6.4.3.3: "(NaN should be converted to 0)" is a should; SPIR-V's SaturatedConversion
    decoration converts NaN to 0 (normative), so on a SPIR-V path it is a violation."""
    assert _sat_nan(frozenset()) == "convert.sat.nan"
    assert severity_of("convert.sat.nan") == "recommendation"
    assert "SaturatedConversion" in next(r.note for r in rules.RULES if r.id == "convert.sat.nan")
    assert _sat_nan(frozenset({"spirv"})) == "convert.sat.nan.spirv"
    assert severity_of("convert.sat.nan.spirv") == "violation"


def test_every_registered_rule_has_a_known_severity_and_a_section():
    severity_of("")  # every oracle module's rules registered
    for r in rules.RULES[1:]:
        assert r.severity in rules.SEVERITIES, r.id
        assert r.section and r.section != "-", r.id
        assert (r.severity == "recommendation") == bool(r.note), r.id


def test_a_recommendation_must_say_what_may_still_require_it():
    with pytest.raises(ValueError, match="names the text"):
        rules.register("test.should", "x should be y", "§0", severity="recommendation")
    with pytest.raises(ValueError, match="unknown severity"):
        rules.register("test.error", "x is y", "§0", severity="error")


def test_severity_order():
    assert list(rules.SEVERITIES) == ["violation", "recommendation", "tolerance", "letter", "performance"]
    assert rules.at_least("violation", "recommendation") and not rules.at_least("tolerance", "recommendation")
    assert severity_of("valid-program") == "violation"  # a failure of a valid program
