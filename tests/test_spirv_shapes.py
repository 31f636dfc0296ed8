"""The SPIR-V emitter of kernel shapes (fuzz.emit.spirv.shapes): every module is valid (every kind
and form alone, around programs of every area, nested), it uses the constructs each kind means,
the SPIR-V routes of the local drivers compute what the oracle expects, a changed control word
changes what they compute (the shape is emitted, not the twin), and a program without a shape
gives the same bytes as before shapes existed."""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import replace
from functools import lru_cache

import pytest

from campaign.caps import ATOMIC_CAPABILITIES
from fuzz.emit import spirv
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.areas import AREAS
from fuzz.strategies.conversions import Caps
from fuzz.strategies.draws import Draws
from fuzz.strategies.shapes import shape_of, words
from lang.images import CHANNEL_TYPES, DIMS, ORDERS, format_key, modelled
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.ir import validate as validate_program
from lang.ops import VERSION_KEYS
from lang.policy import Policy
from lang.shapes import CFGS, KINDS, STEPS, Part, Shape, needs
from lang.types import Type

pytestmark = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")

EVERY_FORMAT = frozenset((d, format_key(o, c)) for d in DIMS for o in ORDERS for c in CHANNEL_TYPES if modelled(o, c))
CAPS = Caps(fp64=True, atomics=frozenset(ATOMIC_CAPABILITIES), images=(EVERY_FORMAT,), versions=VERSION_KEYS)
POLICY = Policy(statements=4, global_size=64, atomic_statements=4, atomic_global_size=64, image_statements=3,
                image_global_size=32, corner_sweep=False)
BASE_AREAS = [a for a in AREAS if a not in ("shapes", "flow")]  # flow programs have their own form (lang.flow)
FORMS = [(k, f) for k, d in KINDS.items() for f in d.forms]
NEEDING = {(k, f) for k, d in KINDS.items() for f, _ in d.needs}
"""Forms that need a device feature (lang.shapes.Kind.needs: the generic address space)."""


@lru_cache(maxsize=None)
def _bases(area: str, n: int = 2) -> tuple[Program, ...]:
    """``n`` small programs of ``area`` (reproducible draws)."""
    draws = Draws(AREAS[area](CAPS, POLICY), 27)
    return tuple(draws[i] for i in range(n))


def _shaped(base: Program, steps: list[tuple[str, str]], wraps: list[tuple[str, str]], seed: int = 0,
            cfg: str = "structured") -> Program:
    """``base`` with these steps and wraps (kind, form), control words that take the intended path,
    and a power-of-two local size where a step needs one; checked valid (lang.ir.validate)."""
    rnd = random.Random(seed)
    local = base.local_size
    if any(KINDS[k].local or f in KINDS[k].local_forms for k, f in steps):
        local = min(base.global_size & -base.global_size, 64)
    shape = Shape(base.area, tuple(Part(k, f, words(k, f, rnd, local)) for k, f in steps),
                  tuple(Part(k, f, words(k, f, rnd, local)) for k, f in wraps), cfg)
    program = replace(base, area="shapes", local_size=local, shape=shape, requires=base.requires | needs(shape))
    validate_program(program)
    return program


def _check(program: Program) -> bytes:
    module = spirv.emit(program)
    problem = validate(module, target_env(program))
    assert problem is None, f"{problem}\n{program.to_json()}"
    return module


def _disassemble(module: bytes) -> str:
    return subprocess.run(["spirv-dis", "--raw-id", "-"], input=module, capture_output=True, check=True).stdout.decode()


# -- 1. every module is valid --------------------------------------------------------------------


@pytest.mark.parametrize("kind,form", FORMS, ids=[f"{k}:{f}" for k, f in FORMS])
def test_every_kind_and_form_alone_gives_valid_modules(kind, form):
    step = KINDS[kind].role == "step"
    for area in BASE_AREAS:
        for i, base in enumerate(_bases(area)):
            if base.shared and (step or form.endswith("every")):
                continue  # atomics take only wraps that run their statements once (lang.shapes.check)
            for seed, cfg in enumerate(CFGS):
                _check(_shaped(base, [(kind, form)] if step else [], [] if step else [(kind, form)], seed, cfg))


def test_nested_wraps_and_many_steps_give_valid_modules():
    every_wrap = [("dead", "store"), ("if-uniform", "then"), ("switch", "case"), ("if-divergent", "lid"),
                  ("loop", "for-break"), ("loop", "while-once"), ("dead", "return"), ("loop", "do-every"),
                  ("if-uniform", "else"), ("loop", "do-break")]
    every_step = [(k, f) for k in STEPS for f in KINDS[k].forms]
    for area in BASE_AREAS:
        for base in _bases(area):
            steps = [] if base.shared else every_step
            wraps = [w for w in every_wrap if not (base.shared and w[1].endswith("every"))]
            for cfg in CFGS:
                _check(_shaped(base, steps, wraps, cfg=cfg))
                _check(_shaped(base, steps[::-1], wraps[::-1], seed=1, cfg=cfg))
    policy = replace(POLICY, shape_steps=5, shape_wraps=5, shape_local_sizes=(1, 2, 4, 8, 16, 32))
    rnd = random.Random(5)
    for area in BASE_AREAS:
        for base in _bases(area):
            for _ in range(6):
                program = shape_of(base, rnd, policy)
                validate_program(program)
                _check(program)


def test_each_kind_uses_its_constructs():
    base = _bases("conversions")[0]
    want = {
        ("carried", "for"): ["OpPhi", "OpLoopMerge", "OpBranchConditional"],
        ("exchange", "local"): ["OpControlBarrier", "Workgroup", '"clfuzz.sh0"'],
        ("rounds", "local"): ["OpLoopMerge", "OpControlBarrier", '"clfuzz.sh0"'],
        ("tree", "local"): ["OpShiftRightLogical", "OpControlBarrier", "OpSelectionMerge"],
        ("call", "add"): ["OpFunctionCall", "OpFunctionParameter", "OpReturnValue"],
        ("call", "noinline"): ["DontInline", "OpFunctionCall"],
        ("call", "global"): ["OpFunctionCall", "OpFunctionParameter"],
        ("call", "struct"): ["OpTypeStruct", "OpCompositeExtract"],
        ("call", "swap"): ["OpTypeStruct", "OpTypePointer Function"],
        ("call", "generic"): ["GenericPointer", "OpPtrCastToGeneric", "OpTypePointer Generic"],
        ("call", "local"): ["OpTypePointer Workgroup", "OpFunctionCall", '"clfuzz.sh0"'],
        ("array", "private"): ["OpTypeArray", "OpAccessChain", "OpTypePointer Function"],
        ("select", "ternary"): ["OpSelect"],
        ("if-uniform", "then"): ["OpSelectionMerge", "OpBranchConditional"],
        ("if-divergent", "group"): ["WorkgroupId", "OpSelectionMerge"],
        ("loop", "do-break"): ["OpLoopMerge", "OpPhi"],
        ("switch", "case"): ["OpSwitch", "OpSelectionMerge"],
        ("dead", "return"): ["OpReturn"],
    }
    for (kind, form), names in want.items():
        step = KINDS[kind].role == "step"
        text = _disassemble(_check(_shaped(base, [(kind, form)] if step else [], [] if step else [(kind, form)])))
        for name in names:
            assert name in text, (kind, form, name)
    # Function-storage variables stand at the start of the kernel's first block (checked by
    # spirv-val above); the counters of every loop form are OpPhi, the sum a variable
    text = _disassemble(_check(_shaped(base, [("carried", "do")], [])))
    assert "OpPhi" in text and "OpVariable" in text


def test_unstructured_control_flow_has_no_merges_and_arms_after_their_join():
    """lang.shapes.CFGS: the same branches without OpSelectionMerge/OpLoopMerge, and the arms of an
    if (and a switch) written after the block where they join (legal in a Kernel module only)."""
    base = _bases("conversions")[0]
    steps, wraps = [("carried", "for"), ("tree", "local")], [("if-uniform", "then"), ("switch", "case")]
    structured = _disassemble(_check(_shaped(base, steps, wraps)))
    text = _disassemble(_check(_shaped(base, steps, wraps, cfg="unstructured")))
    assert "OpSelectionMerge" in structured and "OpLoopMerge" in structured
    assert "OpSelectionMerge" not in text and "OpLoopMerge" not in text
    assert text.count("OpBranchConditional") == structured.count("OpBranchConditional")
    assert text.count("OpLabel") == structured.count("OpLabel")
    lines = text.splitlines()
    order = {line.split()[0]: i for i, line in enumerate(lines) if "OpLabel" in line}
    switch = next(line for line in lines if "OpSwitch" in line).split()
    default, cases = switch[2], switch[4::2]
    join = min(i for label, i in order.items() if i > lines.index(next(ln for ln in lines if "OpSwitch" in ln)))
    assert all(order[b] > join for b in (default, *cases))  # every arm after the block right after the switch


def test_a_shapes_words_are_data():
    """Parts whose words the kernel only reads (no K, no case label) give the same module whatever
    their words: the words come from the ``ctl`` region, not from the module."""
    base = _bases("expressions")[0]
    steps = [("exchange", "local"), ("select", "ternary")]
    wraps = [("if-uniform", "then"), ("loop", "for-once"), ("if-divergent", "lid"), ("dead", "store")]
    a, b = _shaped(base, steps, wraps, 1), _shaped(base, steps, wraps, 2)
    assert a.shape.controls != b.shape.controls
    assert _check(a) == _check(b)


# -- 2. on the local drivers' SPIR-V routes -------------------------------------------------------

SPIRV_ROUTES = ("rusticl/spirv", "pocl/spirv", "oclgrind/spirv")

RUN_SHAPES = [
    ([("carried", "for"), ("exchange", "local"), ("tree", "local"), ("call", "add"), ("array", "private"),
      ("select", "ternary")], [("if-uniform", "then"), ("loop", "for-once")]),
    ([("carried", "while"), ("rounds", "local"), ("call", "noinline"), ("call", "global")],
     [("if-divergent", "lid"), ("switch", "case"), ("loop", "while-break")]),
    ([("carried", "do"), ("call", "struct"), ("call", "swap"), ("exchange", "local"), ("call", "local")],
     [("dead", "store"), ("if-uniform", "else"), ("loop", "do-every"), ("if-divergent", "gid")]),
    ([], [("dead", "return"), ("if-divergent", "group"), ("loop", "for-break"), ("loop", "while-once")]),
    ([("tree", "local"), ("rounds", "local")], [("loop", "do-once"), ("loop", "do-break"), ("loop", "for-every")]),
    ([("select", "ternary")], [("loop", "while-every"), ("switch", "case"), ("dead", "return")]),
]


def _plain_base() -> Program:
    """Statements every local driver gets right on both paths (as tests/drivers/test_spirv_routes):
    values in range, no NaN, no rounding suffix; a vector, a 3-vector and an assignment."""
    import numpy as np

    def bits(values, name):
        t = Type(name).elem
        return tuple(int(b) for b in np.array(values, dtype=t.dtype).view(t.bits_dtype))

    ints = Fill(11, bits([-5, 0, 7, 300, -129, 65535], "int"), pool_weight=4)
    floats = Fill(12, bits([-2.5, 0.0, 1.0, 3.75, 1e6, -0.0], "float"), pool_weight=4)
    bufs = (Buffer("in0", Type("int", 4), "in", ints), Buffer("in1", Type("float", 4), "in", floats),
            Buffer("in2", Type("uint"), "in", ints))
    i4, f4, u1 = (Load(b.name, b.type) for b in bufs)
    body = [(Type("float", 4), Op("convert", (i4,), Type("float", 4))),
            (Type("uint", 4), Op("as", (f4,), Type("uint", 4))),
            (Type("float", 3), Op("as", (i4,), Type("float", 3))),
            (Type("uint"), Op("arith", (u1, u1), Type("uint"), (("operator", "*"),))),
            (Type("int", 2), u1)]
    outs = tuple(Buffer(f"out{i}", t, "out") for i, (t, _) in enumerate(body))
    return Program(bufs + outs, tuple(Store(f"out{i}", v) for i, (_, v) in enumerate(body)), 256, area="conversions")


def _target(name: str):
    from fuzz.drivers import discover
    from fuzz.drivers.icd import find_libraries

    if not find_libraries():
        pytest.skip("no OpenCL ICD installed")
    found = {t.name: t for t in discover()}
    if name not in found:
        pytest.skip(f"{name} is not installed")
    return found[name]


def _verdict(program: Program, target, worker, ctl: tuple[int, ...] | None = None):
    """One run of the whole program on ``target`` judged against the oracle (no halving); ``ctl``:
    other control words in the job's ``ctl`` region than the program's."""
    import numpy as np

    from campaign.execute import Part as RunPart
    from campaign.execute import prepare
    from campaign.expectations import Expectations
    from fuzz.drivers import Job
    from fuzz.drivers.capabilities import ftz_of
    from fuzz.judge import judge
    from lang.layout import input_values, split_outputs

    inputs = input_values(program)
    if ctl is not None:
        inputs["ctl"] = np.array(ctl, dtype=np.uint32)
    part = RunPart(program, Expectations(program, _inputs=inputs))
    job = prepare(part, target)
    assert isinstance(job, Job), job
    result = worker.run(job)
    assert result.status == "ok", result.log[-2000:]
    actual = split_outputs(program, result.outputs["out"])
    return judge(program, part.expectations.get(ftz_of(target)), actual, part.expectations.inputs,
                 histories=part.expectations.histories())


@pytest.mark.drivers
@pytest.mark.parametrize("route", SPIRV_ROUTES)
def test_shaped_programs_agree_with_the_oracle_on_the_spirv_routes(route):
    from fuzz.drivers import Worker

    target = _target(route)
    programs = [_shaped(_plain_base(), steps, wraps, seed, CFGS[seed % 2])
                for seed, (steps, wraps) in enumerate(RUN_SHAPES)]
    covered = {(p.kind, p.form) for program in programs for p in program.shape.parts}
    assert covered == set(FORMS) - NEEDING, set(FORMS) - NEEDING - covered  # the local drivers lack those
    assert {program.shape.cfg for program in programs} == set(CFGS)
    with Worker(target, timeout_s=120) as w:
        for program in programs:
            verdict = _verdict(program, target, w)
            assert verdict.judged > 0 and verdict.mismatches == 0, (program.shape.signature, verdict.rows[:3])


@pytest.mark.drivers
@pytest.mark.parametrize("route", SPIRV_ROUTES)
def test_a_changed_control_word_changes_what_the_spirv_route_computes(route):
    """The oracle judges a shaped program by its twin: control words in the job that send the data
    down another path give disagreeing lanes only if the module really holds the shape (the
    straight-line twin would still agree). The index steps that move ``x`` by a sum's difference
    from ``K`` move every work-item alike, a permutation the outputs cannot show; a step that
    exchanges through local memory with an even multiplier is no permutation: some elements are
    written twice, others never."""
    from fuzz.drivers import Worker

    target = _target(route)
    base = _plain_base()
    cases = [  # (program, control words that take another path)
        (_shaped(base, [], [("if-uniform", "then")]), lambda w: (w[0], w[0] ^ 1)),  # the dead arm: zeros
        (_shaped(base, [], [("switch", "case")]), lambda w: (w[0] ^ 1,)),  # the dead case
        (_shaped(base, [], [("dead", "return")]), lambda w: (w[0], w[0])),  # the early return runs
        (_shaped(base, [], [("loop", "while-once"), ("dead", "return")], 3),
         lambda w: (w[1], w[1], w[2], w[3])),  # iteration k never comes
        (_shaped(base, [("exchange", "local")], [("if-divergent", "lid")]), lambda w: (w[0] + 1, w[1], w[2])),
        (replace(_shaped(base, [("rounds", "local")], []), shape=Shape(base.area, (Part("rounds", "local", (2, 3, 5)),))),
         lambda w: (2, 2, 5)),
    ]
    with Worker(target, timeout_s=120) as w:
        for program, other in cases:
            validate_program(program)
            words = program.shape.controls
            assert _verdict(program, target, w).mismatches == 0, program.shape
            assert _verdict(program, target, w, other(words)).mismatches > 0, (program.shape, other(words))
