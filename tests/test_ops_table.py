"""One declaration per construct (docs/architecture.md): every operation is declared once and every
reader handles it."""

from fuzz.emit import spirv
from fuzz.emit.opencl_c import EMITTERS
from fuzz.strategies.atomics import OPERATIONS as ATOMIC_OPERATIONS
from fuzz.strategies.conversions import BUILDERS as CONVERSION_BUILDERS
from fuzz.strategies.expressions import STATEMENTS
from fuzz.strategies.images import OPERATIONS as IMAGE_OPERATIONS
from fuzz.strategies.maths import OPERATIONS as MATH_OPERATIONS
from fuzz.strategies.spirv_only import SPIRV_BUILDERS
from fuzz.strategies.trees import EXPRESSIONS
from lang.ops import OPS
from oracles import REFERENCES

BUILDERS = {**CONVERSION_BUILDERS, **STATEMENTS, **SPIRV_BUILDERS}


def test_every_op_has_every_reader():
    for name, spec in OPS.items():
        if "opencl-c" in spec.paths:
            assert name in EMITTERS, f"{name}: no OpenCL C emitter"
        else:
            assert name not in EMITTERS, f"{name}: declared SPIR-V-only, yet has an OpenCL C emitter"
        assert name in spirv.EMITTERS, f"{name}: no SPIR-V emitter"
        assert name in REFERENCES, f"{name}: no oracle reference"
        assert name in BUILDERS or name in EXPRESSIONS or name in ATOMIC_OPERATIONS or name in IMAGE_OPERATIONS \
            or name in MATH_OPERATIONS, f"{name}: no strategy builds it"


def test_readers_handle_nothing_undeclared():
    # "assign" (implicit conversion by assignment) and "expression" (a tree) are statement kinds
    assert set(EMITTERS) <= set(OPS)
    assert set(spirv.EMITTERS) <= set(OPS)
    assert set(REFERENCES) <= set(OPS)
    assert set(BUILDERS) - {"assign", "expression"} <= set(OPS)
    assert set(EXPRESSIONS) <= set(OPS)
    assert set(ATOMIC_OPERATIONS) <= set(OPS)
    assert set(MATH_OPERATIONS) <= set(OPS)
