"""The IR: canonical JSON round trip, content ids, validation with one-line errors."""

import json

import pytest
from conftest import SMALL
from hypothesis import HealthCheck, given, settings

from fuzz.strategies.conversions import Caps, conversion_programs
from lang.derive import restrict
from lang.ir import InvalidProgram, Program


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


def test_fill_contents_never_change():
    """A stored program replays bit-identically only if a Fill gives the same lanes forever: these
    digests were computed with the first implementation (PCG64 raw stream, pool choice)."""
    import hashlib

    from lang.ir import Fill

    golden = [((7, (1, 2, 3), 3), 8, "4708260b0a91c447"),
              ((2**31 + 5, tuple(range(16)), 2), 32, "68db6fa5e5e42c3e"),
              ((99, (), 3), 64, "32514b63c084d4d9"),
              ((123, (2**63, 5, 6, 7, 8), 4), 64, "8a025f903efc5c0e")]
    for (seed_, pool, weight), width, digest in golden:
        bits = Fill(seed_, pool, weight).bits(1000, width)
        assert hashlib.sha256(bits.tobytes()).hexdigest()[:16] == digest
