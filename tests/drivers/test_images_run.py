"""Image programs on real drivers: generated programs build and run on every path that takes
them; hand-made reads pin the bugs clfuzz found (strict expected failures: the test goes red
when a driver is fixed, so the mark can go); a tampered result is caught."""

from __future__ import annotations

import numpy as np
import pytest

from campaign.caps import capabilities
from campaign.execute import execute
from campaign.expectations import Expectations
from campaign.jobs import job_for
from fuzz.drivers import Worker, discover
from fuzz.drivers.capabilities import runnable, supports
from fuzz.judge import judge
from fuzz.strategies.draws import sample
from fuzz.strategies.images import image_programs
from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Load, Op, Program, Sampler, Store
from lang.layout import split_outputs
from lang.types import Type

from .conftest import run_generated, skip_without_icd, target_named

skip_without_icd()
TARGETS = discover()
NAMES = ["pocl", "pocl/spirv", "rusticl", "rusticl/spirv", "oclgrind", "oclgrind/spirv"]
PROGRAMS = sample(image_programs(capabilities(TARGETS)), 8, seed=4)  # PoCL isolates its many image bugs: ~1 s a program


@pytest.mark.parametrize("name", NAMES)
def test_generated_programs_run(name):
    # "split": PoCL's disagreements are isolated by halving (campaign.execute.kernel_wide)
    assert run_generated(target_named(name), PROGRAMS, ("ok", "split")) >= 3


def _float_f32(values) -> tuple[int, ...]:
    return tuple(int(np.array(v, np.float32).view(np.uint32)) for v in values)


def read_program(image: Image, sampler: Sampler | None, coords, result: str) -> Program:
    """One statement per coordinate: every work-item reads at a point whose lanes are drawn from
    that coordinate's values only (a pool, pool_weight 4)."""
    width = len(coords[0])
    t = Type("float" if isinstance(coords[0][0], float) else "int", width)
    body, buffers = [], []
    for k, c in enumerate(coords):
        pool = _float_f32(c) if t.scalar == "float" else tuple(v & 0xFFFFFFFF for v in c)
        # every lane from the pool: a coordinate whose lanes all come from {c}; one statement per point
        buffers.append(Buffer(f"c{k}", t, "in", Fill(k, tuple(sorted(set(pool))), 4)))
        op = Op("read_image", (Load(f"c{k}", t),), Type.parse(result),
                (("dim", image.dim), ("form", read_form(sampler)), ("image", image.name),
                 ("sampler", sampler.name if sampler else "")))
        buffers.append(Buffer(f"o{k}", Type.parse(result), "out"))
        body.append(Store(f"o{k}", op))
    return Program(tuple(buffers), tuple(body), 64, area="images", images=(image,),
                   samplers=(sampler,) if sampler else ())


def _disagreements(name: str, program: Program) -> list[dict]:
    target = target_named(name)
    if runnable(target, program) is None:
        pytest.skip(f"{name} does not take this format")
    with Worker(target, timeout_s=120) as w:
        outcome = execute(program, target, w, None)
    assert outcome.status == "ok"
    return [r for r in outcome.verdict.rows if r["kind"] == "wrong-result"]


POCL_BUG = pytest.mark.xfail(strict=True, reason="PoCL 3.1 bug found by clfuzz")


@pytest.mark.parametrize("name", [pytest.param(n, marks=POCL_BUG) if n.startswith("pocl") else n for n in NAMES])
def test_array_layer_ties_round_to_even(name):
    """§8.4: layer = clamp(rint(w), 0, count - 1) with rint ties to even: layers .5 go down to
    even layers and 0.49999997 to layer 0 (PoCL reads floor(w + 0.5))."""
    image = Image("img", "1d_array", "R", "SIGNED_INT32", (2, 4), Fill(99))
    sampler = Sampler("s", False, "clamp_to_edge", "nearest")
    coords = [(0.5, w) for w in (0.5, 1.5, 2.5, 0.49999997)]
    assert _disagreements(name, read_program(image, sampler, [tuple(map(float, c)) for c in coords], "int4")) == []


@pytest.mark.parametrize("name", [pytest.param(n, marks=POCL_BUG) if n.startswith("pocl") else n for n in NAMES])
def test_integer_reads_of_r_images_have_alpha_one(name):
    """§6.15.15.7: an R image reads as (r, 0, 0, 1) (PoCL gives alpha 0 to read_imagei/ui)."""
    image = Image("img", "2d", "R", "SIGNED_INT32", (3, 2), Fill(7))
    assert _disagreements(name, read_program(image, None, [(1, 1), (2, 0)], "int4")) == []


def test_a_tampered_result_is_caught():
    """A real rusticl run of a generated program, one texel value changed: disagreement."""
    target = target_named("rusticl")
    program = next(p for p in PROGRAMS if supports(target, p))
    exp = Expectations(program)
    with Worker(target, timeout_s=120) as w:
        result = w.run(job_for(program, exp.inputs))
    actual = {k: v.copy() for k, v in split_outputs(program, result.outputs["out"]).items()}
    expectations = exp.get(frozenset({"float"}))
    name = program.body[0].buffer
    lane = int(np.flatnonzero(expectations[name].judged)[0])
    clean = judge(program, expectations, actual, exp.inputs)
    actual[name].view(np.uint32)[lane] ^= 0x40000000
    tampered = judge(program, expectations, actual, exp.inputs)
    assert tampered.mismatches == clean.mismatches + 1


@pytest.mark.parametrize("name", ["rusticl", "oclgrind", "oclgrind/spirv"])
def test_the_corner_sweep_runs_and_reaches_every_image_corner_of_the_target(name):
    """The images sweep (fuzz.strategies.sweeps.images) builds and runs, and the programs the target
    takes reach every image corner its formats allow (PoCL takes about 90 s for it: left out here)."""
    from corpus.corners import capabilities_of
    from fuzz.strategies import sweep_programs
    from lang.corners import reached
    from lang.corners import runnable as corner_runnable

    target = target_named(name)
    programs = [p for p in sweep_programs("images", capabilities(TARGETS)) if supports(target, p)]
    with Worker(target, timeout_s=120) as w:
        statuses = {execute(p, target, w, None).status for p in programs}
    assert programs and statuses <= {"ok", "split"}, statuses
    got = set().union(*(reached(runnable(target, p)) for p in programs))
    want = {c for c in corner_runnable(capabilities_of(target.fingerprint)) if c.op == "read_image"}
    swept = set().union(*(reached(p) for p in programs))
    assert want <= swept  # a statement for every corner of the target's formats
    missing = want - got  # only what the route cannot take (routes.Route.unsupported: Oclgrind's
    assert not missing or target.route is not None, sorted(c.name for c in missing)[:5]  # read_imageui via SPIR-V)
