"""The corner table (lang.corners), the sweeps (fuzz.strategies.sweeps), the pools they need
(fuzz.strategies.values) and corner coverage from a corpus (corpus.corners, clfuzz stats).

Classes are checked against an independent classifier written with ``math`` and ``fractions``,
midpoints with exact rational arithmetic, and the sweeps against the oracle (no undefined
behaviour) and lang.ir.validate."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from fuzz.strategies import sweep_key, sweep_programs
from fuzz.strategies.conversions import Caps
from fuzz.strategies.sweeps.base import float_representatives
from fuzz.strategies.values import midpoint_integers, mixed_magnitudes
from lang.corners import FLOAT_CLASSES, WORK_ITEMS, Corner, float_classes, reached, runnable, table
from lang.corners.classes import corner_rank
from lang.corners.images import capabilities as image_capabilities
from lang.derive import restrict
from lang.ir import Buffer, Fill, Image, Literal, Load, Op, Program, Sampler, Store, validate, walk
from lang.maths import FLOAT_ONLY, FUNCTIONS
from lang.ops import ATOMIC_FEATURES, INTEGER_BUILTINS
from lang.policy import Policy
from lang.types import VECTOR_WIDTHS, Type, scalar

SCALAR_OVERLOADS = frozenset({"ldexp", "fmin", "fmax", "mix", "step", "smoothstep", "fmin_common", "fmax_common",
                              "fclamp"})
"""The math built-ins with a scalar-argument overload, read off OpenCL C 3.0.19 Tables 11 and 16
(Table 16's ``min``, ``max`` and ``clamp`` on floats are declared by their OpenCL.std names)."""

ALL_CAPS = Caps(fp64=True, fp16=True, versions=frozenset({"cl2.0"}))
EVERYTHING = frozenset({"fp64", "fp16", "int64", "cl2.0"})


def independent_class(x: float, tname: str) -> str:
    """The operand class of ``x`` (a value of ``tname``) by its definition in lang.corners."""
    if math.isnan(x):
        return "nan"
    sign = "-" if math.copysign(1.0, x) < 0 else "+"
    a = abs(x)
    least_normal = 2.0 ** {"half": -14, "float": -126, "double": -1022}[tname]
    if math.isinf(a):
        kind = "inf"
    elif a == 0:
        kind = "0"
    elif a == 1:
        kind = "1"
    elif a < least_normal:
        kind = "sub"
    elif a == int(a):
        kind = "odd" if int(a) % 2 else "even"
    elif (2 * Fraction(a)).denominator == 1:
        kind = "half"
    else:
        kind = "frac" if a < 1 else "real"
    return sign + kind


def _value(bits: int, tname: str) -> float:
    s = scalar(tname)
    return float(np.array(bits, dtype=s.bits_dtype).view(s.dtype))


def _lane_values(program: Program, arg) -> list[float | int]:
    """An operand buffer's logical lanes over the first WORK_ITEMS work-items (Fill.values cycle)."""
    b = program.buffer(arg.buffer)
    t = b.type
    lanes = [i for i in range(min(program.global_size, WORK_ITEMS) * t.mem_lanes) if i % t.mem_lanes < t.width]
    return [b.fill.values[i % len(b.fill.values)] for i in lanes]


# ---- the table ---------------------------------------------------------------------------------


def test_table_is_derived_from_every_declaration():
    corners = table()
    names = {(c.op, c.type) for c in corners}
    for f in FUNCTIONS.values():
        types = ("float",) if f.name in FLOAT_ONLY else ("float", "double", "half")
        for t in types:
            assert (f.name, t) in names
            widths = {c.key for c in corners if c.op == f.name and c.type == t and c.key.startswith("w")}
            every = f.geometric_widths if f.group == "geometric" else VECTOR_WIDTHS
            # the scalar-argument overloads of §6.15.2 Table 11 and §6.15.4 Table 16, at every vector width
            scalar = [f"w{w}:scalar" for w in every[1:]] if f.name in SCALAR_OVERLOADS else []
            assert widths == {f"w{w}" for w in every} | set(scalar)
    for b in INTEGER_BUILTINS:
        assert any(c.op == b.name for c in corners)
    # every pair of classes for a binary function, every class for a unary one
    assert sum(c.op == "atan2" and c.type == "float" and "," in c.key for c in corners) == len(FLOAT_CLASSES) ** 2
    assert {c.key for c in corners if c.op == "sinpi" and c.type == "half" and "=" in c.key} == {
        f"x={k}" for k in FLOAT_CLASSES}
    # scalar-bound overloads, saturation edges and product halves
    keys = {c.key for c in corners if c.op == "clamp" and c.type == "long"}
    assert "w3:scalar" in keys and "w1:scalar" not in keys
    assert {"product=in-", "product=>max", "product=<min", "sum==max", "sum=>max"} <= {
        c.key for c in corners if c.op == "mad_sat" and c.type == "int"}
    assert {c.key for c in corners if c.op == "mul_hi" and c.type == "ulong" and c.key.startswith("product")} == {
        "product=in+", "product==max", "product==min", "product=>max"}


def test_runnable_follows_capabilities():
    plain = runnable(frozenset())
    assert not any(c.type in ("double", "half", "long", "ulong") or c.op in ("ctz", "read_image") for c in plain)
    assert not any(c.op.startswith("atomic_") and "explicit" in c.key for c in plain)  # C11 needs OpenCL C 3.0
    images = {n for c in table() for n in c.needs if n.startswith("image:")}
    assert not any(c.area == "spirv" for c in runnable(EVERYTHING))  # the SPIR-V path's only
    assert len(runnable(EVERYTHING | images | set(ATOMIC_FEATURES) | {"spirv"})) == len(table())
    assert any(c.op == "ctz" for c in runnable({"cl2.0"}))


def test_image_corners_are_every_kind_sampler_and_read_function_the_spec_defines():
    """§6.15.15: every image type without a sampler; the sampled ones (not image1d_buffer_t) through
    every sampler: 2 coordinate modes x 5 addressing modes (REPEAT and MIRRORED_REPEAT normalized
    only: 8 pairs) x 2 filters; read_imagef/h/i/ui, LINEAR with f and h only."""
    rows = [c for c in table() if c.op == "read_image"]
    per_sampled = 4 + 8 * 4 + 8 * 2  # no sampler (4 functions), 8 pairs with NEAREST (4), with LINEAR (f, h)
    assert len(rows) == 5 * per_sampled + 4  # image1d_buffer: no sampler only
    assert Corner("read_image", "int", "2d:norm-nearest-mirrored_repeat",
                  frozenset({"image:2d:i"})) in rows
    assert not any(c.key == "2d:unnorm-nearest-repeat" for c in rows)  # undefined (§6.15.15.1)
    assert not any(c.key.endswith("linear-clamp") and c.type in ("int", "uint") for c in rows)
    assert all(c.key == "1d_buffer:no-sampler" for c in rows if c.key.startswith("1d_buffer"))
    fp = {"image_support": True, "image_formats": {"2d": ["RGBA/UNORM_INT8", "R/SIGNED_INT32"], "3d": ["R/FLOAT"]}}
    assert image_capabilities(fp) == {"image:2d:f", "image:2d:h", "image:2d:i", "image:3d:f"}
    assert image_capabilities({**fp, "image_support": False}) == frozenset()


def test_an_image_read_reaches_its_kind_sampler_and_function():
    program = Program((Buffer("in0", Type("float", 2), "in", Fill(1)), Buffer("out0", Type("uint", 4), "out")),
                      (Store("out0", Op("read_image", (Load("in0", Type("float", 2)),), Type("uint", 4),
                                        (("dim", "2d"), ("form", "unnorm-nearest-clamp:program"),
                                         ("image", "img0"), ("sampler", "smp0")))),),
                      4, area="images",
                      images=(Image("img0", "2d", "RGBA", "UNSIGNED_INT8", (3, 3), Fill(2)),),
                      samplers=(Sampler("smp0", False, "clamp", "nearest", "program"),))
    validate(program)
    assert {c.name for c in reached(program)} == {"read_image:uint:2d:unnorm-nearest-clamp"}


def test_float_classes_agree_with_the_definition():
    for tname in ("half", "float", "double"):
        s = scalar(tname)
        rng = np.random.default_rng(1)
        bits = rng.integers(0, 1 << s.bits, 2000, dtype=np.uint64).astype(s.bits_dtype)
        special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, -4.0, 0.3, 2.7, np.inf, -np.inf, np.nan,
                            6e-8, 1e-40, 1e-310, 65504.0, 2.0**60 + 2.0**40], np.float64)
        with np.errstate(all="ignore"):
            values = np.concatenate([bits.view(s.dtype), special.astype(s.dtype)])
        got = [FLOAT_CLASSES[i] for i in float_classes(values)]
        assert got == [independent_class(float(v), tname) for v in values]


# ---- the sweeps ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def math_sweep():
    return sweep_programs("math", ALL_CAPS, Policy())


def test_math_sweep_has_every_prescribed_operand_class_of_every_function(math_sweep):
    seen: dict[tuple[str, str], set] = {}
    for p in math_sweep:
        for s in p.body:
            op = s.value
            f = FUNCTIONS[op.op]
            t = (op.args[0].type if f.inputs != "u" else op.type)
            if min(a.type.width for a in op.args) < t.width:  # the scalar-argument forms: below
                continue  # (a function's statements of every width share its operand tuples between them)
            lanes = [_lane_values(p, a) for a in op.args]
            classes = []
            for letter, a, vals in zip(f.inputs, op.args, lanes):
                if letter == "g":
                    classes.append([independent_class(_value(v, t.scalar), t.scalar) for v in vals])
                else:
                    classes.append([None] * len(vals))
            got = seen.setdefault((op.op, t.scalar), set())
            if f.inputs == "gg":
                got |= set(zip(*classes))
            elif f.inputs in ("g", "ggg"):
                for k, c in enumerate(classes):
                    got |= {(k, x) for x in c}
    for name, f in FUNCTIONS.items():
        for t in ("float",) if name in FLOAT_ONLY else ("float", "double", "half"):
            got = seen[(name, t)]
            if f.inputs == "gg":
                assert got == set(itertools.product(FLOAT_CLASSES, FLOAT_CLASSES)), (name, t)
            elif f.inputs in ("g", "ggg"):
                assert got == {(k, c) for k in range(len(f.inputs)) for c in FLOAT_CLASSES}, (name, t)
    # the named prescribed points themselves (§7.5.1: sinpi(-n), cospi(n + 0.5), pown(x, 0), lgamma poles)
    reps = {tname: {_value(b, tname) for bs in float_representatives(tname).values() for b in bs}
            for tname in ("half", "float", "double")}
    for values in reps.values():
        assert {0.0, math.inf, -math.inf, -3.0, -2.0, 0.5, -0.5, 2.5, 1.0, -1.0} <= values
        assert any(math.isnan(v) for v in values) and any(v != 0 and abs(v) < 2.0**-14 for v in values)


def test_math_sweep_reaches_its_whole_table(math_sweep):
    got = set().union(*(reached(p) for p in math_sweep))
    assert {c for c in table() if c.area == "math"} <= got
    assert {c.name for c in got if c.key.endswith(":scalar")} == {
        f"{name}:{t}:w{w}:scalar" for name in SCALAR_OVERLOADS for t in ("float", "double", "half")
        for w in VECTOR_WIDTHS[1:]}
    assert all(p.area == "math" and len(p.body) <= Policy().statements for p in math_sweep)
    assert not any("double" in p.to_json() for p in sweep_programs("math", Caps(), Policy()))


def test_integer_sweep_reaches_every_corner_and_products_of_both_halves():
    programs = sweep_programs("expressions", ALL_CAPS, Policy())
    got = set().union(*(reached(p) for p in programs))
    assert {c for c in table() if c.area == "expressions"} <= got
    # independently: some mad_sat lane on long has a negative product that fits and is beyond 2^32
    found = False
    for p in programs:
        for s in p.body:
            if s.value.op == "mad_sat" and s.value.type == Type("long"):
                a, b = ([int(np.array(v, np.uint64).view(np.int64)) for v in _lane_values(p, x)]
                        for x in s.value.args[:2])
                found |= any(-(2**63) <= x * y < -(2**32) for x, y in zip(a, b))
    assert found


def test_sweeps_are_valid_and_free_of_undefined_behaviour(math_sweep):
    from oracles import expected

    for area in ("expressions", "conversions"):
        for p in sweep_programs(area, ALL_CAPS, Policy()):
            validate(p)
            expected(p)  # raises UndefinedBehaviour on signed overflow, mul24 beyond 24 bits, clamp lo > hi
    for p in math_sweep:
        validate(p)
        keep = [i for i, s in enumerate(p.body) if s.value.type.width in (3, 4) and s.value.type.scalar == "float"]
        if keep:
            expected(restrict(p, keep))


def test_sweeps_are_deterministic_and_keyed_by_capabilities():
    a = [p.id for p in sweep_programs("expressions", ALL_CAPS, Policy())]
    assert a == [p.id for p in sweep_programs("expressions", ALL_CAPS, Policy())]
    assert sweep_key("math", ALL_CAPS) == sweep_key("math", ALL_CAPS) != sweep_key("math", Caps())
    assert sweep_programs("shapes", ALL_CAPS, Policy()) == []  # its statements are the other areas'
    without = sweep_programs("expressions", Caps(int64=False), Policy())
    assert not any(t in p.to_json() for p in without for t in ('"long', '"ulong', "ctz"))


# ---- pools ---------------------------------------------------------------------------------------


def _is_midpoint(v: int, mant: int) -> bool:
    """``v`` lies exactly halfway between two consecutive numbers of a ``mant``-bit significand."""
    e = abs(v).bit_length() - mant  # the spacing is 2^e at |v|'s magnitude
    return e > 0 and Fraction(abs(v) % 2**e, 2**e) == Fraction(1, 2)


def test_64_bit_pool_sits_at_and_next_to_float_and_double_midpoints():
    for name in ("long", "ulong"):
        s = scalar(name)
        values = [v - (1 << 64) if s.signed and v >> 63 else v for v in midpoint_integers(name)]
        assert all(abs(v) > 2**53 for v in values)
        for mant in (24, 53):
            mids = [v for v in values if _is_midpoint(v, mant)]
            assert sum(m - 1 in values and m + 1 in values for m in mids) >= 10
        if s.signed:
            assert any(v < 0 and _is_midpoint(v, 53) for v in values)
        # double rounding shows: through double, then to float, differs from one rounding to float
        twice = 0
        for v in values:  # float(v) rounds to double correctly, np.float32 that double to float
            twice += float(np.float32(float(v))) != _nearest_float(v)
        assert twice > 0


def _nearest_float(v: int) -> float:
    """v rounded to float (24-bit significand), ties to even, exactly."""
    e = max(abs(v).bit_length() - 24, 0)
    q, r = divmod(abs(v), 2**e)
    if 2 * r > 2**e or (2 * r == 2**e and q % 2):
        q += 1
    return math.copysign(float(q * 2**e), v)


def test_mixed_magnitudes_give_in_range_negative_products():
    for name in ("char", "int", "long"):
        s = scalar(name)
        vals = [v - (1 << s.bits) if v >> (s.bits - 1) else v for v in mixed_magnitudes(name)]
        products = [a * b for a in vals for b in vals]
        assert any(s.min <= p < -(1 << (s.bits // 2)) for p in products)
        assert any(p > s.max for p in products) and any(p < s.min for p in products)


# ---- coverage from a corpus ------------------------------------------------------------------------


def _sinpi_program() -> Program:
    f4 = Type("float", 4)
    bits = [int(np.array(v, np.float32).view(np.uint32)) for v in (-3.0, 0.5, -0.0, 2.0)]
    return Program((Buffer("x", f4, "in", Fill(0, (), values=tuple(bits))), Buffer("o", f4, "out"),
                    Buffer("m", Type("int", 2), "out")),
                   (Store("o", Op("sinpi", (Load("x", f4),), f4)),
                    Store("m", Op("min", (Literal(Type("int", 2), (5, 0xFFFFFFFF)), Literal(Type("int"), (7,))),
                                  Type("int", 2)))),
                   8, area="math")


def test_reached_reads_loads_and_literals():
    got = {c.name for c in reached(_sinpi_program())}
    assert {"sinpi:float:w4", "sinpi:float:x=-odd", "sinpi:float:x=+half", "sinpi:float:x=-0",
            "sinpi:float:x=+even", "min:int:w2:scalar", "min:int:x=+small", "min:int:x=-1",
            "min:int:y=+small"} <= got
    assert "sinpi:float:x=nan" not in got


def test_reached_names_the_scalar_argument_overloads_by_their_statement_width():
    f3, f = Type("float", 3), Type("float")
    bits = [int(np.array(v, np.float32).view(np.uint32)) for v in (-3.0, 0.5, -0.0, 2.0)]
    program = Program((Buffer("e", f, "in", Fill(0, (), values=(bits[0],))),
                       Buffer("x", f3, "in", Fill(0, (), values=tuple(bits))), Buffer("o", f3, "out"),
                       Buffer("p", f3, "out")),
                      (Store("o", Op("step", (Load("e", f), Load("x", f3)), f3)),
                       Store("p", Op("step", (Load("x", f3), Load("x", f3)), f3))), 8, area="math")
    validate(program)
    got = {c.name for c in reached(program)}
    # the edge is -3 in every lane: the pair classes are read with the scalar widened
    assert {"step:float:w3:scalar", "step:float:w3", "step:float:x=-odd,y=+half", "step:float:x=-odd,y=-0"} <= got
    assert "step:float:w1" not in got and "step:float:x=+half,y=-odd" not in got


def test_corpus_reports_reached_and_missing_per_target(memory_corpus, tmp_path):
    from app.cli import cli
    from corpus.corners import corners
    from corpus.store import Corpus

    def fill(corpus):
        pid = corpus.add_program(_sinpi_program())
        corpus.add_target("pocl", "opencl-c", "f1", {"fp64": True, "int64": True})
        corpus.add_target("rusticl", "opencl-c", "f2", {"int64": True})
        run = {"program_id": pid, "checks": 0, "judged": 0, "mismatches": 0, "build_s": 0.0, "run_s": 0.0,
               "log": "", "campaign": "c", "path": "opencl-c"}
        corpus.add_run({**run, "target": "pocl", "fingerprint_id": "f1", "status": "ok"}, [])
        corpus.add_run({**run, "target": "rusticl", "fingerprint_id": "f2", "status": "crash"}, [])

    fill(memory_corpus)
    out = corners(memory_corpus, missing=True)
    assert out["pocl"]["total"] == len(runnable({"fp64", "int64"})) > out["rusticl"]["total"]
    assert out["rusticl"]["reached"] == 0  # a crashed run reaches nothing
    assert out["pocl"]["reached"] == len(reached(_sinpi_program()))
    assert "sinpi:float:x=-odd" not in out["pocl"]["missing"] and "sinpi:float:x=nan" in out["pocl"]["missing"]
    assert out["pocl"]["operations"]["sinpi"][0] == 5  # w4 and four classes: -odd, +half, -0, +even
    db = tmp_path / "c.db"
    c = Corpus(db)
    fill(c)
    c.close()
    result = CliRunner().invoke(cli, ["stats", "--corpus", str(db), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["corners"]["pocl"]["reached"] == out["pocl"]["reached"]
    text = CliRunner().invoke(cli, ["stats", "--corpus", str(db), "--coverage"]).output
    assert "corners reached" in text and "sinpi" in text


def test_when_each_corner_was_first_judged_and_why_the_others_were_missed(memory_corpus, monkeypatch):
    """seconds_to from the runs' times less the campaign's start (hand-made clock); why: a failed
    run's status, another target's run, or no program; missing corners special values first."""
    import corpus.store as store
    from corpus.corners import ELSEWHERE, UNREACHED, corners, seconds_to

    a, b, c, d = table()[:4]
    assert seconds_to({a: 5.0, b: 1.0, c: None, d: 9.0}, 4) == {"50": 5.0, "90": None, "99": None, "100": None}
    assert seconds_to({a: 5.0, b: 1.0, c: 9.0}, 3) == {"50": 5.0, "90": 9.0, "99": 9.0, "100": 9.0}
    hundred = {i: (float(i) if i < 99 else None) for i in range(100)}  # 99 of 100 judged, the i-th at i s
    assert seconds_to(hundred, 100) == {"50": 49.0, "90": 89.0, "99": 98.0, "100": None}
    now = [100.0]
    monkeypatch.setattr(store, "_now", lambda: now[0])
    sinpi = _sinpi_program()
    other = restrict(sinpi, [1])
    pid, oid = memory_corpus.add_program(sinpi), memory_corpus.add_program(other)
    memory_corpus.add_target("pocl", "opencl-c", "f1", {"int64": True})
    memory_corpus.add_target("rusticl", "opencl-c", "f2", {"int64": True})
    memory_corpus.update_campaign("c", 7, {}, 0, 0)  # started at 100
    run = {"checks": 0, "judged": 0, "mismatches": 0, "build_s": 0.0, "run_s": 0.0, "log": "", "campaign": "c",
           "path": "opencl-c"}
    for at, program, target, status in ((112.5, oid, "pocl", "ok"), (130.0, pid, "pocl", "ok"),
                                        (131.0, pid, "rusticl", "crash")):
        now[0] = at
        memory_corpus.add_run({**run, "program_id": program, "target": target, "fingerprint_id": f"f{1 + (target == 'rusticl')}",
                               "status": status}, [])
    out = corners(memory_corpus, "c", missing=True)
    from corpus.corners import coverage_by_target

    first = coverage_by_target(memory_corpus, "c")["pocl"].first
    assert {x.name: t for x, t in first.items() if x.op == "min"} == {x.name: 12.5 for x in reached(other)}
    assert {x.name: t for x, t in first.items() if x.op == "sinpi"} == {x.name: 30.0 for x in reached(sinpi)
                                                                           if x.op == "sinpi"}
    why = out["rusticl"]["why"]
    assert {why[x.name] for x in reached(sinpi)} == {"crash"}
    assert why["sinpi:float:x=nan"] == UNREACHED and ELSEWHERE not in why.values()
    ranks = [corner_rank(name.split(":", 2)[2]) for name in out["pocl"]["missing"]]
    assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] == 3
    assert out["pocl"]["seconds_to"] == {"50": None, "90": None, "99": None, "100": None}  # a few corners of the table


def test_a_program_whose_operations_have_nothing_new_for_the_target_is_not_read(memory_corpus, monkeypatch):
    """Once every corner the target can run of each of a program's operations was first judged at a
    known time, the program is not parsed and classified (a GPU's windows): the coverage is the
    same as reading every program; a target that has not timed them yet (no campaign: no time)
    still reads it."""
    import corpus.corners as corners_module
    import corpus.store as store

    sinpi = _sinpi_program()
    twin = replace(sinpi, global_size=16)  # a window's like: the same statements, other work-items
    triplet = replace(sinpi, global_size=24)
    mine = reached(sinpi)
    monkeypatch.setattr(corners_module, "runnable", lambda caps: tuple(sorted(mine, key=lambda c: c.name)))
    calls = []
    monkeypatch.setattr(corners_module, "reached", lambda program: calls.append(program) or reached(program))
    now = [100.0]
    monkeypatch.setattr(store, "_now", lambda: now[0])
    pids = [memory_corpus.add_program(p) for p in (sinpi, twin, triplet)]
    memory_corpus.add_target("pocl", "opencl-c", "f1", {})
    memory_corpus.add_target("rusticl", "opencl-c", "f2", {})
    memory_corpus.update_campaign("c", 7, {}, 0, 0)  # started at 100
    run = {"checks": 0, "judged": 0, "mismatches": 0, "build_s": 0.0, "run_s": 0.0, "log": "", "path": "opencl-c",
           "status": "ok"}
    for at, pid, target, campaign in ((110.0, pids[0], "pocl", "c"), (120.0, pids[1], "pocl", "c"),
                                      (130.0, pids[0], "rusticl", ""), (140.0, pids[2], "rusticl", "")):
        now[0] = at
        memory_corpus.add_run({**run, "program_id": pid, "target": target, "campaign": campaign,
                               "fingerprint_id": "f1" if target == "pocl" else "f2"}, [])
    cover = corners_module.coverage_by_target(memory_corpus)
    assert {c: t for c, t in cover["pocl"].first.items()} == {c: 10.0 for c in mine}
    assert set(cover["rusticl"].first) == mine and set(cover["rusticl"].first.values()) == {None}
    assert [p.global_size for p in calls] == [8, 24]  # the twin not read for pocl; the triplet read for rusticl


def test_corner_names():
    c = Corner("sinpi", "float", "x=-odd")
    assert c.name == "sinpi:float:x=-odd" and c.area == "math"


def test_conversion_sweep_reaches_every_conversion_corner_without_undefined_behaviour():
    from oracles import expected

    programs = sweep_programs("conversions", ALL_CAPS, Policy())
    got = set()
    for p in programs:
        validate(p)
        expected(p)
        got |= reached(p)
    assert {c for c in table() if c.area == "conversions"} <= got
    assert "convert:long:to=float:rte:x=mid" in {c.name for c in got}
    assert not any("double" in p.to_json() for p in sweep_programs("conversions", Caps(), Policy()))


def test_conversion_classes_of_integers_against_exact_rounding():
    from lang.corners.conversions import TO_FLOAT, value_classes

    for v in [2**60 + 2**36, 2**60 + 2**36 + 1, 2**60 + 2**36 - 1, 2**60 + 2**37, 2**60 + 3 * 2**35, -(2**60 + 2**36)]:
        e = abs(v).bit_length() - 24
        r = abs(v) % 2**e
        expect = ("exact" if r == 0 else "mid" if Fraction(r, 2**e) == Fraction(1, 2)
                  else "near-mid" if abs(r - 2 ** (e - 1)) == 1 else "other")
        assert value_classes(np.array([v], np.int64), "long", "float") == {expect}, v
    assert set(TO_FLOAT) == value_classes(np.array([3, 2**60 + 2**36, 2**60 + 2**36 + 1, 2**60 + 5 * 2**34]),
                                          "long", "float")


# ---- rare swizzle shapes (fuzz.strategies.swizzles) ----------------------------------------------------


def _shape_counts(program: Program) -> tuple[bool, bool]:
    """(a half of a 3-component swizzle rvalue, a read of a 3-vector's undefined lane alone)."""
    half3 = undefined = False
    for s in program.body:
        for n in walk(s.value):
            if isinstance(n, Op) and n.op == "swizzle" and isinstance(n.args[0], Op) and n.args[0].op == "swizzle":
                inner = n.args[0]
                half3 |= n.attr("form") in ("lo", "hi", "even", "odd") and inner.type.width == 3
                undefined |= (inner.attr("form") in ("hi", "odd") and inner.args[0].type.width == 3
                              and n.attr("components") == (1,) and n.type.width == 1)
    return half3, undefined


def test_swizzle_shapes_are_drawn_valid_and_leave_undefined_lanes_unjudged():
    from fuzz.emit import spirv
    from fuzz.emit.opencl_c import emit
    from fuzz.emit.validate import ValidatorMissing, target_env
    from fuzz.emit.validate import validate as spirv_val
    from fuzz.strategies.draws import sample
    from fuzz.strategies.expressions import expression_programs
    from oracles import expected

    policy = Policy(statements=6, global_size=32, p_swizzle_shapes=1.0)
    programs = sample(expression_programs(Caps(), policy), 40, seed=5)
    counts = [_shape_counts(p) for p in programs]
    assert sum(c[0] for c in counts) >= 5 and sum(c[1] for c in counts) >= 5
    for p in programs:
        validate(p)
        expected(p)
        assert "kernel" in emit(p)
        try:
            assert spirv_val(spirv.emit(p), target_env(p)) is None
        except ValidatorMissing:
            pass
    # a statement that reads only the undefined w lane: never judged
    i4, i1 = Type("int", 4), Type("int")
    three = Op("swizzle", (Load("x", i4),), Type("int", 3), (("components", (2, 0, 1)), ("form", "s")))
    odd = Op("swizzle", (three,), Type("int", 2), (("components", (1, 3)), ("form", "odd")))
    lane = Op("swizzle", (odd,), i1, (("components", (1,)), ("form", "xyzw")))
    p = Program((Buffer("x", i4, "in", Fill(1)), Buffer("o", i1, "out")), (Store("o", lane),), 8, area="expressions")
    assert ".s201).odd).y" in emit(p)
    assert not expected(p)["o"].judged.any()


def test_swizzle_shapes_change_only_the_programs_that_take_one():
    from fuzz.strategies.draws import sample
    from fuzz.strategies.expressions import expression_programs

    small = Policy(statements=6, global_size=32)
    before = sample(expression_programs(Caps(), replace(small, p_swizzle_shapes=0.0)), 60, seed=2)
    after = sample(expression_programs(Caps(), replace(small, p_swizzle_shapes=0.05)), 60, seed=2)
    same = [a.id == b.id for a, b in zip(before, after)]
    assert 0 < sum(same) < len(same)
    assert Policy().p_swizzle_shapes == 0.01


def test_the_images_sweep_reaches_every_image_corner_each_device_can_run():
    """One statement per (kind, sampler, read function) a device's formats allow, in programs
    within the statement, image and sampler limits; valid, deterministic, and together reaching
    every image corner of each device (lang.corners.images.capabilities of its formats)."""
    a = frozenset({("2d", "RGBA/UNORM_INT8"), ("2d", "R/SIGNED_INT32"), ("3d", "R/FLOAT"),
                   ("1d_buffer", "RGBA/UNSIGNED_INT8"), ("2d_array", "RG/UNSIGNED_INT16")})
    b = frozenset({("1d", "R/FLOAT"), ("1d_array", "RGBA/SIGNED_INT8")})
    caps = Caps(images=(a, b), fp16=True)
    policy = Policy()
    programs = sweep_programs("images", caps, policy)
    assert [p.id for p in programs] == [p.id for p in sweep_programs("images", caps, policy)]
    got: set = set()
    for p in programs:
        validate(p)
        assert len(p.body) <= policy.image_statements and len(p.images) <= policy.image_count
        assert len(p.samplers) <= policy.image_samplers
        got |= reached(p)
    for formats in (a, b):
        fp = {"image_support": True, "image_formats": {}}
        for dim, key in formats:
            fp["image_formats"].setdefault(dim, []).append(key)
        want = {c for c in runnable(image_capabilities(fp) | {"fp16"}) if c.op == "read_image"}
        assert want and want <= got, sorted(c.name for c in want - got)[:5]


def test_atomic_corners_are_every_spelling_memory_order_and_scope_the_spec_defines():
    """§6.15.12: the legacy atomic_ forms 32-bit only, atom_ also 64-bit; the C11 functions plain
    and explicit with every order the operation takes and each scope (device only on a location
    the NDRange shares); compare_exchange strong and weak; flags in local memory; and every
    atomic operation a drawn program uses is one of them."""
    from fuzz.strategies.atomics import atomic_programs
    from fuzz.strategies.draws import sample
    from lang.corners import atomics as atomic_corners

    rows = {c.name: c for c in table() if c.op.startswith("atomic_")}
    assert "atomic_add:long:atom:local" in rows and "atomic_add:long:atomic:local" not in rows
    assert rows["atomic_add:ulong:atom:global"].needs == {"int64_atomics"}
    assert "atomic_load:int:explicit:group:acquire:work_group" in rows
    assert not any(k.startswith(("atomic_load:", "atomic_store:")) and ":acq_rel:" in k for k in rows)
    assert not any(":explicit:global:" in k and k.endswith(":work_group") for k in rows)
    assert "atomic_compare_exchange:uint:c11:local:weak" in rows
    assert {c.key.split(":")[1] for c in rows.values() if c.op.startswith("atomic_flag")} == {"local"}
    assert rows["atomic_min:int:explicit:local:release:device"].needs == {
        "cl3.0", "atomic_order_acq_rel", "atomic_scope_device"}
    known = {(c.op, c.type, c.key) for c in rows.values()}
    for p in sample(atomic_programs(Caps(atomics=frozenset(ATOMIC_FEATURES)), Policy()), 60, seed=3):
        for s in p.body:
            op = s.value
            assert (op.op, p.buffer(op.attr("location")).type.scalar, atomic_corners.key_of(dict(op.attrs))) in known
        assert all(c.op.startswith("atomic_") for c in reached(p))


def test_the_atomics_sweep_reaches_every_atomic_corner_the_devices_support():
    """fuzz.strategies.sweeps.atomics: one statement per atomic corner the capabilities allow (all of
    them with every atomic feature; the legacy 32-bit ones only without any), valid programs whose
    expectations the atomics oracle computes, the same list every time."""
    from campaign.expectations import Expectations
    from lang.ops import ATOMIC_FEATURES

    everything = sweep_programs("atomics", Caps(atomics=frozenset(ATOMIC_FEATURES)))
    assert [p.id for p in everything] == [p.id for p in sweep_programs("atomics", Caps(atomics=frozenset(ATOMIC_FEATURES)))]
    got = set()
    for p in everything:
        validate(p)
        got |= reached(p)
    assert {c for c in table() if c.op.startswith("atomic_")} <= got
    Expectations(everything[0]).get(frozenset())  # the histories are decided (no undefined operation)
    legacy = sweep_programs("atomics", Caps())
    keys = {c.key.split(":")[0] for p in legacy for c in reached(p)}
    assert keys == {"atomic", "atom"} and all(not p.requires for p in legacy)


def test_the_spirv_sweep_reaches_every_spirv_only_corner_with_valid_modules():
    """fuzz.strategies.sweeps.spirv: every SPIR-V-only corner (lang.corners.spirv) the types allow, in
    modules spirv-val accepts; the remainders' lanes cover every sign pair and the extended
    instructions' lanes a result beyond the type and one within it."""
    import shutil

    from fuzz.emit import spirv
    from fuzz.emit.validate import target_env
    from fuzz.emit.validate import validate as spirv_val

    programs = sweep_programs("spirv", Caps(fp64=True, fp16=True))
    got = set()
    for p in programs:
        validate(p)
        got |= reached(p)
        if shutil.which("spirv-val"):
            assert spirv_val(spirv.emit(p), target_env(p)) is None
    want = {c for c in table() if c.area == "spirv"}
    assert want <= got and not any(c.type == "half" for c in want)
    names = {c.name for c in got}
    assert {"rem:int:mod:x=-,y=+", "rem:uint:mod:x=0,y=+", "extended:ulong:UMulExtended:m1:over",
            "extended:long:SMulExtended:m0:within"} <= names
    assert "rem:uint:mod:x=-,y=+" not in {c.name for c in want}  # unsigned: no negative class


def test_relational_corners_are_every_class_or_pair_and_the_sweep_reaches_them():
    """§6.15.6 Table 18 on floats: every width, every class of a unary function's operand and every
    pair of classes of a binary one (isequal(NaN, x) is 0, isnotequal 1, isordered/isunordered by
    NaN, signbit by the sign of a zero or NaN); the expressions sweep reaches all of them."""
    from lang.corners import RELATIONAL

    rows = [c for c in table() if c.op in RELATIONAL]
    assert {c.key for c in rows if c.op == "isunordered" and c.type == "half" and "=" in c.key} == {
        f"x={a},y={b}" for a in FLOAT_CLASSES for b in FLOAT_CLASSES}
    assert {c.key for c in rows if c.op == "signbit" and c.type == "double" and "=" in c.key} == {
        f"x={a}" for a in FLOAT_CLASSES}
    got = set()
    for p in sweep_programs("expressions", ALL_CAPS, Policy()):
        validate(p)
        got |= reached(p)
    assert set(rows) <= got
