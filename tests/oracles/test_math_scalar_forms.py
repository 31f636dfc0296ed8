"""The scalar-argument overloads of the math built-ins (lang.maths.MathFn.scalar_form: OpenCL C
3.0.19 §6.15.2 Table 11 ``ldexp(floatn x, int k)``, ``fmin``/``fmax(gentypef x, float y)``;
§6.15.4 Table 16 ``mix(gentypef x, gentypef y, float a)``, ``step(float edge, gentypef x)``,
``smoothstep(float edge0, float edge1, gentypef x)``, ``min``/``max(gentypef x, float y)``,
``clamp(gentypef x, float minval, float maxval)``).

The vector versions "operate component-wise" (§6.15.2, §6.15.4), so a call with a scalar operand
is, lane by lane, the all-vector call with that scalar repeated in every lane. The oracle's
expectation of the scalar form is compared, in raw bits (allowed values, intervals, masks, NaN
allowance, judged lanes, rules), with the expectation it computes for a second program that loads
the repeated scalar from a vector buffer: an independent computation, which never replicates an
operand."""

from __future__ import annotations

import numpy as np
import pytest

from fuzz.strategies.sweeps.base import EXP_REPRESENTATIVES, float_representatives
from lang.ir import Buffer, Fill, Load, Op, Program, Store, validate
from lang.maths import FUNCTIONS
from lang.types import Type, scalar
from oracles import expected

SCALAR_FORMS = {"ldexp": "gk", "fmin": "gs", "fmax": "gs", "mix": "ggs", "step": "sg", "smoothstep": "ssg",
                "fmin_common": "gs", "fmax_common": "gs", "fclamp": "gss"}
"""The overloads as Tables 11 and 16 write them (``s``: the element type, ``k``: int), read off the
spec (Table 16's ``gentypef min(gentypef x, float y)``, ``max`` alike, ``gentypef clamp(gentypef
x, float minval, float maxval)``: declared by their OpenCL.std names)."""

WIDTH = 3  # a 3-vector: its padding lane in memory must stay unjudged in both programs


def test_the_declaration_has_exactly_the_overloads_of_the_spec():
    assert {n: f.scalar_form for n, f in FUNCTIONS.items() if f.scalar_form} == SCALAR_FORMS
    assert FUNCTIONS["pown"].forms(Type("float", 4)) == ("gi",)  # pown and rootn: intn only
    assert FUNCTIONS["rootn"].forms(Type("float", 4)) == ("gi",)
    assert FUNCTIONS["ldexp"].forms(Type("float")) == ("gi",)  # a scalar statement: one overload


def _scalar_values(letter: str, tname: str) -> list[int]:
    """Bit patterns of one scalar operand, a value of every class (the sweep's representatives)."""
    if letter == "k":
        return [v & 0xFFFFFFFF for vs in EXP_REPRESENTATIVES.values() for v in vs]
    return [b for bs in float_representatives(tname).values() for b in bs]


def _programs(name: str, tname: str, options: str) -> tuple[Program, Program]:
    """The scalar-argument call and the all-vector call with each scalar repeated in every lane."""
    f = FUNCTIONS[name]
    t = Type(tname, WIDTH)
    items = max(len(_scalar_values(p, tname)) for p in f.scalar_form if p in "sk")
    mem = t.mem_lanes
    floats = [b for bs in float_representatives(tname).values() for b in bs]
    buffers_a, buffers_b, args_a, args_b = [], [], [], []
    for k, p in enumerate(f.scalar_form):
        name_k = f"in{k}"
        if p in "sk":
            values = _scalar_values(p, tname)
            per_item = [values[(j * 5 + k) % len(values)] for j in range(items)]
            st = f.operand_type(p, t)
            vt = Type(st.scalar, WIDTH)
            buffers_a.append(Buffer(name_k, st, "in", Fill(0, values=tuple(per_item))))
            buffers_b.append(Buffer(name_k, vt, "in", Fill(0, values=tuple(v for v in per_item for _ in range(mem)))))
            args_a.append(Load(name_k, st))
            args_b.append(Load(name_k, vt))
        else:
            lanes = tuple(floats[(i * 7 + 3 * k) % len(floats)] for i in range(items * mem))
            buffers_a.append(Buffer(name_k, t, "in", Fill(0, values=lanes)))
            buffers_b.append(buffers_a[-1])
            args_a.append(Load(name_k, t))
            args_b.append(Load(name_k, t))
    out = Buffer("out0", t, "out")
    requires = frozenset({"double": {"fp64"}, "half": {"fp16"}}.get(tname, set()) | {"cl2.0"})
    a = Program((*buffers_a, out), (Store("out0", Op(name, tuple(args_a), t)),), items, options, requires, "math")
    b = Program((*buffers_b, out), (Store("out0", Op(name, tuple(args_b), t)),), items, options, requires, "math")
    return a, b


def _same(x, y, tname: str) -> None:
    """Two expectations equal lane by lane, floats compared as their bits."""
    bits = scalar(tname).bits_dtype
    assert x.scalar == y.scalar
    np.testing.assert_array_equal(x.judged, y.judged)
    j = x.judged
    np.testing.assert_array_equal(x.any_nan[j], y.any_nan[j])
    np.testing.assert_array_equal(x.rule[j], y.rule[j])
    assert len(x.allowed) == len(y.allowed) and len(x.ranges) == len(y.ranges) and len(x.masks) == len(y.masks)
    for a, b in zip(x.allowed, y.allowed):
        np.testing.assert_array_equal(a[j], b[j])
    for (lo_a, hi_a), (lo_b, hi_b) in zip(x.ranges, y.ranges):
        np.testing.assert_array_equal(lo_a.view(bits)[j], lo_b.view(bits)[j])
        np.testing.assert_array_equal(hi_a.view(bits)[j], hi_b.view(bits)[j])
    for (m_a, v_a), (m_b, v_b) in zip(x.masks, y.masks):
        np.testing.assert_array_equal(m_a[j], m_b[j])
        np.testing.assert_array_equal(v_a[j], v_b[j])


@pytest.mark.parametrize("name", sorted(SCALAR_FORMS))
@pytest.mark.parametrize("tname", ["float", "double", "half"])
@pytest.mark.parametrize("options,ftz", [("", False), ("", True), ("-cl-finite-math-only", False),
                                         ("-cl-unsafe-math-optimizations", False)])
def test_scalar_form_is_the_vector_form_with_the_scalar_repeated(name, tname, options, ftz):
    a, b = _programs(name, tname, options)
    validate(a)
    validate(b)
    assert FUNCTIONS[name].form(a.body[0].value.type, tuple(x.type for x in a.body[0].value.args)) == SCALAR_FORMS[name]
    flush = frozenset({tname}) if ftz else frozenset()
    got, want = expected(a, flush)["out0"], expected(b, flush)["out0"]
    # OpenCL 3.0 API §5.8.6.3: -cl-finite-math-only "may violate the OpenCL numerical compliance
    # requirements"; unsafe math keeps them (Table 67 or Table 65) for float in OpenCL C 2.0 builds only
    kept = not options or (options == "-cl-unsafe-math-optimizations" and tname == "float")
    assert got.judged.any() == (kept and FUNCTIONS[name].bound(tname).kind != "none")  # mix, smoothstep: float only
    _same(got, want, tname)


def test_a_call_with_no_declared_overload_is_invalid():
    from lang.ir import InvalidProgram

    t, s = Type("float", 4), Type("float")
    fill = Fill(0, values=(0,))
    for op in (Op("pown", (Load("x", t), Load("k", Type("int"))), t),  # pown takes intn only
               Op("fdim", (Load("x", t), Load("y", s)), t),  # no (gentype, float) form
               Op("step", (Load("x", t), Load("y", s)), t)):  # the scalar is step's edge, not x
        buffers = [Buffer(a.buffer, a.type, "in", fill) for a in op.args] + [Buffer("o", t, "out")]
        with pytest.raises(InvalidProgram, match="no overload"):
            validate(Program(tuple(buffers), (Store("o", op),), 4, area="math"))
