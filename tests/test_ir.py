"""The IR: canonical JSON round trip, content ids, validation with one-line errors."""

import json

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz.ir import InvalidProgram, Program, restrict
from fuzz.strategies.conversions import Caps, conversion_programs
from conftest import SMALL


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(conversion_programs(Caps(fp64=True, fp16=True), SMALL))
def test_json_round_trip_and_id(program):
    text = program.to_json()
    again = Program.from_json(text)
    assert again == program
    assert again.id == program.id
    assert json.loads(text)  # canonical and parseable


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(conversion_programs(Caps(), SMALL))
def test_restrict_keeps_only_used_buffers(program):
    sub = restrict(program, [0])
    assert len(sub.body) == 1
    Program.from_json(sub.to_json())  # still valid
    assert len(sub.buffers) < len(program.buffers) or len(program.body) == 1


@pytest.mark.parametrize("text, message", [
    ("not json", "not JSON"),
    ('{"buffers": []}', "malformed program"),
    ('{"buffers": [{"name": "a", "type": "float7", "role": "in"}], "body": [], "global_size": 1}', "malformed"),
    ('{"buffers": [{"name": "a", "type": "float", "role": "in"}], "body": [], "global_size": 1}', "need a fill"),
])
def test_bad_programs_get_one_line(text, message):
    with pytest.raises(InvalidProgram) as e:
        Program.from_json(text)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
