"""Invariant 1 of DESIGN.md: every operation is declared once and every reader handles it."""

from fuzz.emit import spirv
from fuzz.emit.opencl_c import EMITTERS
from fuzz.ops import OPS
from fuzz.strategies.conversions import BUILDERS
from oracles.evaluate import REFERENCES


def test_every_op_has_every_reader():
    for name in OPS:
        assert name in EMITTERS, f"{name}: no OpenCL C emitter"
        assert name in spirv.EMITTERS, f"{name}: no SPIR-V emitter"
        assert name in REFERENCES, f"{name}: no oracle reference"
        assert name in BUILDERS, f"{name}: no strategy builds it"


def test_readers_handle_nothing_undeclared():
    # "assign" is a statement form (implicit conversion by assignment), not an operation
    assert set(EMITTERS) <= set(OPS)
    assert set(spirv.EMITTERS) <= set(OPS)
    assert set(REFERENCES) <= set(OPS)
    assert set(BUILDERS) - {"assign"} <= set(OPS)
