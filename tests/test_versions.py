"""OpenCL C versions, and rules that follow the version a program is built as: a built-in introduced
in OpenCL C 2.0 (``ctz``, OpenCL C §6.15.3 Table 13:
"Requires support for OpenCL 2.0 or newer") is drawn only where some target builds OpenCL C 2.0
or newer, runs only on such a device, and is built there with the -cl-std that device takes."""

from __future__ import annotations

from campaign.jobs import c_options
from fuzz.drivers import Target
from fuzz.drivers.capabilities import ftz_for, runnable
from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.conversions import Caps
from fuzz.strategies.draws import sample
from fuzz.strategies.expressions import expression_programs
from lang.constructs import requirements
from lang.ir import Buffer, Fill, Load, Op, Program, Store, walk
from lang.ops import OPS
from lang.policy import Policy
from lang.types import Type
from oracles import expected, rule

POLICY = Policy(statements=16, global_size=64)
INT = Type("int")


def _uses_ctz(p: Program) -> bool:
    return any(isinstance(n, Op) and n.op == "ctz" for s in p.body for n in walk(s.value))


def test_ctz_is_declared_as_opencl_c_2_0():
    assert OPS["ctz"].since == "2.0" and OPS["ctz"].requires == {"cl2.0"}
    assert OPS["clz"].requires == frozenset()


def test_never_drawn_without_a_2_0_target():
    programs = sample(expression_programs(Caps(), POLICY), 60, seed=3)
    assert not any(_uses_ctz(p) for p in programs)
    assert not any("cl2.0" in p.requires for p in programs)


def test_drawn_with_a_2_0_target_and_required_by_the_program():
    programs = sample(expression_programs(Caps(versions=frozenset({"cl2.0"})), POLICY), 60, seed=3)
    with_ctz = [p for p in programs if _uses_ctz(p)]
    assert with_ctz, "ctz never drawn in 60 programs of 16 statements"
    assert all("cl2.0" in p.requires for p in with_ctz)
    assert all("cl2.0" not in p.requires for p in programs if not _uses_ctz(p))


def _target(**fp) -> Target:
    return Target("dev", {"fp64": False, **fp}, "fp", "", 0, 0)


def _program() -> Program:
    """Two statements: clz (OpenCL C 1.0) and ctz (2.0) of the same input."""
    x = Buffer("in0", INT, "in", Fill("bits", 1))
    body = (Store("out0", Op("clz", (Load("in0", INT),), INT)), Store("out1", Op("ctz", (Load("in0", INT),), INT)))
    outs = (Buffer("out0", INT, "out"), Buffer("out1", INT, "out"))
    return Program((x, *outs), body, 4, requires=requirements(Program((x, *outs), body, 4)))


def test_a_1_2_device_runs_the_1_0_statement_only_built_without_cl_std():
    p = _program()
    part = runnable(_target(), p)
    assert [s.value.op for s in part.body] == ["clz"]
    assert "cl2.0" not in part.requires
    assert c_options(part, _target().fingerprint) == ""


def test_a_3_0_device_builds_it_as_opencl_c_3_0():
    fp = {"cl2.0": True, "cl3.0": True}
    p = _program()
    assert runnable(_target(**fp), p) is p
    assert c_options(p, fp) == "-cl-std=CL3.0"


def test_an_opencl_2_device_builds_it_as_opencl_c_2_0():
    fp = {"cl2.0": True, "cl3.0": False}
    assert c_options(_program(), fp) == "-cl-std=CL2.0"


def test_both_emitters_write_it():
    p = _program()
    assert "ctz(" in emit(p)
    assert validate(spirv.emit(p), target_env(p)) is None  # OpenCL.std ctz (opcode 152)


def _acos_unsafe(requires: frozenset[str]) -> Program:
    f = Type("float")
    return Program((Buffer("in0", f, "in", Fill(5, (0x3F000000,), 3)), Buffer("out0", f, "out")),
                   (Store("out0", Op("acos", (Load("in0", f),), f)),), 64, "-cl-unsafe-math-optimizations",
                   requires)


def test_table_67_follows_the_opencl_c_version_the_program_is_built_as():
    """Table 67 (acos <= 4096 ulp under -cl-unsafe-math-optimizations) "requires support for
    OpenCL C 2.0 or newer" (OpenCL C 3.0.19 §7.4): an OpenCL C 3.0 device building the statement without
    -cl-std builds OpenCL C 1.2, where the option may violate §7.4 (nothing judged); built with
    -cl-std=CL3.0 the statement is judged against Table 67."""
    fp3 = {"cl2.0": True, "cl3.0": True, "single_fp_config": {"denorm": True}}
    fp12 = {"single_fp_config": {"denorm": True}}
    as_12 = _acos_unsafe(frozenset())
    as_30 = _acos_unsafe(frozenset({"cl2.0"}))
    assert c_options(as_12, fp3) == "-cl-unsafe-math-optimizations"
    assert c_options(as_30, fp3) == "-cl-unsafe-math-optimizations -cl-std=CL3.0"
    for fp in (fp12, fp3):
        assert not expected(as_12, ftz_for(fp))["out0"].judged.any()
    e = expected(as_30, ftz_for(fp3))["out0"]
    assert e.judged.sum() > 0
    assert {rule(int(r)).id for r in e.rule[e.judged]} == {"math.acos.float.unsafe.ulp"}
    assert set(e.error.limit[e.judged]) == {4096.0}


def test_a_device_without_fp64_runs_the_statements_that_use_no_double():
    """A statement over double needs fp64 (OpenCL C 3.0.19 §6.3.1.1); the other statements of its program run
    on a device without it, in a part that no longer requires fp64 (no cl_khr_fp64 pragma)."""
    d, f = Type("double"), Type("float")
    bufs = (Buffer("in0", d, "in", Fill("bits", 1)), Buffer("in1", f, "in", Fill("bits", 2)),
            Buffer("out0", d, "out"), Buffer("out1", f, "out"))
    body = (Store("out0", Op("fabs", (Load("in0", d),), d)), Store("out1", Op("fabs", (Load("in1", f),), f)))
    p = Program(bufs, body, 4, requires=frozenset({"fp64"}))
    part = runnable(_target(), p)
    assert [s.buffer for s in part.body] == ["out1"] and "fp64" not in part.requires
    assert "cl_khr_fp64" not in emit(part) and "double" not in emit(part)
    assert runnable(_target(fp64=True), p) is p
    only_double = Program(bufs[::2], body[:1], 4, requires=frozenset({"fp64"}))
    assert runnable(_target(), only_double) is None
