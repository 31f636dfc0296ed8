"""The flow area in the corpus and in campaigns: a flow program's JSON form (exact round trip,
a hand-written form), its storage beside lang.ir programs, its judged lanes as wrong-code rows."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from corpus.store import Corpus
from fuzz.strategies.flow import flow_programs
from lang.flow import Assign, Bin, Const, Decl, FlowProgram, Input, Load, Loop, Output, Var, program_from_json
from lang.ir import InvalidProgram
from lang.nodes import Fill


def _tiny() -> FlowProgram:
    """``s += in0[i % 2]`` for i in 0..min(2, 3): one loop, one input, one output."""
    s = Var("s", "uint")
    body = (Loop("for", "i", Const("uint", 0), Const("uint", 2), 3, 1, False,
                 (Assign("s", Bin("add", s, Load("in0", "uint", Var("i", "uint")), "uint")),)),)
    return FlowProgram((Input("in0", "uint", 2, Fill(5, values=(1, 2))),), (Output("o", "s", "uint"),),
                       (Decl("s", "uint", 7),), (), (), body, (2,), (1,))


@settings(max_examples=60, deadline=None)
@given(flow_programs())
def test_json_round_trip_is_exact(program):
    again = FlowProgram.from_json(program.to_json())
    assert again == program
    assert again.to_json() == program.to_json() and again.id == program.id


def test_json_form_of_a_hand_written_program():
    data = json.loads(_tiny().to_json())
    assert data["node"] == "FlowProgram" and data["area"] == "flow" and data["requires"] == []
    assert data["global_size"] == [2] and data["local_size"] == [1]
    assert data["variables"] == [{"node": "Decl", "name": "s", "type": "uint", "init": 7}]
    assert data["inputs"][0]["fill"] == {"node": "Fill", "seed": 5, "pool": [], "pool_weight": 3, "values": [1, 2]}
    loop = data["body"][0]
    assert (loop["node"], loop["form"], loop["cap"], loop["step"], loop["reverse"]) == ("Loop", "for", 3, 1, False)
    assert loop["body"][0]["value"]["b"] == {"node": "Load", "buffer": "in0", "type": "uint",
                                             "index": {"node": "Var", "name": "i", "type": "uint"}}


@pytest.mark.parametrize("text, why", [
    ('{"node": "FlowProgram", "inputs": [{"node": "Nope"}]}', "unknown node 'Nope'"),
    ('{"node": "FlowProgram", "inputs": []}', "node FlowProgram: "),
    ("{", "not JSON"),
])
def test_bad_json_is_one_line(text, why):
    with pytest.raises(InvalidProgram, match=why) as e:
        program_from_json(text)
    assert "\n" not in str(e.value)


def test_stored_like_other_programs(tmp_path):
    from lang.ir import Program
    corpus = Corpus(tmp_path / "c.db")
    flow, other = _tiny(), Program.from_json(
        '{"area":"expressions","body":[],"buffers":[],"global_size":1,"options":"","requires":[]}')
    assert corpus.add_program(flow, "c") == flow.id and corpus.add_program(other, "c") == other.id
    assert corpus.program(flow.id) == flow and corpus.program(flow.id[:10]) == flow
    assert corpus.program(other.id) == other
    rows = {r["id"]: r for r in corpus.db["programs"].rows}
    assert rows[flow.id]["area"] == "flow" and rows[flow.id]["statements"] == 1
