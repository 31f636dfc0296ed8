"""Defined programs only in a report (triage.reduce's ``defined`` pass, oracles.undefined_results):
the operations whose result the specification leaves undefined or implementation-defined are found
(hand-worked cases), removed or put in their defined form before any other pass, and a bug that
shows only with one of them is filed with severity ``letter`` and a report that names it.

The simulated drivers stand for PoCL 3.1, which stores nothing at all in a kernel that converts
INFINITY to char: without ``_sat`` only (an implementation-defined result, OpenCL C 3.0.19
§6.4.3.3), or with the defined ``convert_char_sat_rte`` too (the real bug)."""

from __future__ import annotations

import numpy as np
from simulated import SimTarget, SimWorker, simulated, store_observed

from corpus.reads import bucket_rows
from corpus.store import Corpus
from lang.derive import restrict
from lang.images import read_form
from lang.ir import Buffer, Fill, Image, Literal, Load, Op, Program, Sampler, Store, walk
from lang.layout import input_values
from lang.types import Type, scalar
from oracles import evaluate, undefined_results
from triage import session
from triage.buglist import bucket_severity, bug_list
from triage.reduce import PASSES
from triage.reduce import engine as reducer
from triage.reduce.passes.defined import defined_form
from triage.report import case_of, readme

F, C, I = Type("float", 1), Type("char", 1), Type("int", 1)
INF = int(np.float32(np.inf).view(np.uint32))
NAN = int(np.float32(np.nan).view(np.uint32))


def _bits(*values: float) -> tuple[int, ...]:
    return tuple(int(b) for b in np.array(values, np.float32).view(np.uint32))


def _convert(sat: bool, arg=None) -> Op:
    attrs = (("rounding", "rte"),) + ((("sat", True),) if sat else ())
    return Op("convert", (arg or Load("in0", F),), C, tuple(sorted(attrs)))


def _program(sat: bool = False, extra: bool = True) -> Program:
    """The PoCL case: ``convert_char_rte(INFINITY)`` (or its ``_sat`` form) beside ``(short)-32767``
    assigned to a float, and an unrelated ``int`` sum."""
    buffers = (Buffer("in0", F, "in", Fill(0, values=(INF, *_bits(2.5, -3.0)))),
               Buffer("in1", I, "in", Fill(1, values=(5, 7))),
               Buffer("out0", C, "out"), Buffer("out1", F, "out"), Buffer("out2", I, "out"))
    body = (Store("out0", _convert(sat)), Store("out1", Literal(Type("short", 1), (2**16 - 32767,))),
            Store("out2", Op("arith", (Load("in1", I), Load("in1", I)), I, (("operator", "+"),))))
    return restrict(Program(buffers, body, 4), [0, 1, 2] if extra else [0, 1])


# ---- the oracle's face: which operations leave their result undefined ------------------------


def test_an_out_of_range_conversion_without_sat_is_implementation_defined():
    """convert_char_rte of INFINITY (work-item 0) and of NaN: §6.4.3.3; 2.5 and -3.0 are in range,
    and with _sat every lane is defined (INFINITY saturates to 127)."""
    p = Program((Buffer("in0", F, "in", Fill(0, values=(INF, *_bits(2.5, -3.0), NAN))), Buffer("out0", C, "out")),
                (Store("out0", _convert(False)),), 4)
    (found,) = undefined_results(p)
    assert (found.statement, found.path, found.lanes, found.operands) == (0, (), (0, 3), ("inf",))
    assert found.rule.id == "convert.float_to_int.out_of_range" and found.rule.leaves == "implementation-defined"
    assert "§6.4.3.3" in found.rule.section
    assert undefined_results(defined_form(p, found)) == []
    assert defined_form(p, found).body[0].value == _convert(True)  # the same rounding, with _sat
    assert evaluate(_convert(True), p, {"in0": np.array([np.inf, 2.5, -3.0, np.nan], np.float32)},
                    frozenset()).allowed[0].view(np.int8)[:3].tolist() == [127, 2, -3]


def test_the_operation_where_undefined_lanes_start_is_named():
    """(float)convert_int(INFINITY): the conversion, not the cast above it; an INFINITY stored into
    an int buffer: the conversion by assignment (§6.4.1, §6.4.3.3), whose defined form is
    convert_int_sat."""
    p = Program((Buffer("in0", F, "in", Fill(0, values=(INF,))), Buffer("out0", F, "out"), Buffer("out1", I, "out")),
                (Store("out0", Op("cast", (Op("convert", (Load("in0", F),), I),), F)),
                 Store("out1", Load("in0", F))), 1)
    nested, assigned = undefined_results(p)
    assert (nested.statement, nested.path, nested.assignment) == (0, (0,), False)
    assert (assigned.statement, assigned.path, assigned.assignment, assigned.operands) == (1, (), True, ("inf",))
    fixed = defined_form(p, assigned)
    assert fixed.body[1].value == Op("convert", (Load("in0", F),), I, (("sat", True),))
    assert [f.statement for f in undefined_results(fixed)] == [0]


def test_undefined_vector_components():
    """.hi of a 3-vector reads the undefined w lane (§6.3.7); OpVectorShuffle's component
    0xFFFFFFFF is undefined (SPIR-V §3.42.12). Their defined forms name a defined component: .zz,
    and Vector 1's first."""
    v3, v2 = Type("int", 3), Type("int", 2)
    fill = Fill(0, values=(10, 11, 12, 13))
    p = Program((Buffer("in0", v3, "in", fill), Buffer("in1", v2, "in", fill), Buffer("out0", v2, "out"),
                 Buffer("out1", v2, "out")),
                (Store("out0", Op("swizzle", (Load("in0", v3),), v2, (("components", (2, 3)), ("form", "hi")))),
                 Store("out1", Op("vector_shuffle", (Load("in1", v2), Load("in1", v2)), v2,
                                  (("components", (1, -1)),)))), 2)
    swizzle, shuffle = undefined_results(p)
    assert swizzle.rule.id == "vector.undefined_lane" and swizzle.lanes == (1, 3) and swizzle.rule.leaves == "undefined"
    assert shuffle.rule.id == "spirv.shuffle.undefined" and shuffle.lanes == (1, 3)
    assert defined_form(p, swizzle).body[0].value.attrs == (("components", (2, 2)), ("form", "xyzw"))
    assert defined_form(p, shuffle).body[1].value.attrs == (("components", (1, 0)),)
    assert undefined_results(defined_form(defined_form(p, swizzle), shuffle)) == []


def test_a_loose_bound_leaves_a_program_defined():
    """A lane unjudged for a bound the spec leaves open is no undefined result: lgamma's value
    (Table 65: no bound) and a conversion's any-NaN are defined programs."""
    p = Program((Buffer("in0", F, "in", Fill(0, values=_bits(-2.5, np.nan))), Buffer("out0", F, "out"),
                 Buffer("out1", Type("double", 1), "out")),
                (Store("out0", Op("lgamma", (Load("in0", F),), F)),
                 Store("out1", Op("convert", (Load("in0", F),), Type("double", 1)))), 2, requires=frozenset({"fp64"}))
    assert undefined_results(p) == []


def _math(op: str, *columns: tuple[float, ...]) -> Program:
    """``op`` of float buffers ``in0``, ``in1``, ... holding ``columns`` (one value per work-item)."""
    ins = tuple(Buffer(f"in{i}", F, "in", Fill(i, values=_bits(*c))) for i, c in enumerate(columns))
    return Program((*ins, Buffer("out0", F, "out")),
                   (Store("out0", Op(op, tuple(Load(b.name, F) for b in ins), F)),), len(columns[0]), area="math")


def test_common_functions_with_undefined_operands():
    """OpenCL C 3.0.19 §6.15.4 Table 16: clamp(x, 2.0f, 1.0f) ("Results are undefined if minval >
    maxval"), min(NaN, 1.0f) and max(1.0f, INFINITY) ("If x or y are infinite or NaN, the return
    values are undefined"), mix with a = 1.5 ("If a is not in the range [0.0, 1.0] ..."),
    smoothstep with edge0 = edge1 ("undefined if edge0 >= edge1 ..."); the second work-item's
    operands are defined in each, and its lane is not reported."""
    cases = [("fclamp", "math.clamp.undefined", "minval > maxval", [(0.5, 0.5), (2.0, 0.0), (1.0, 1.0)]),
             ("fmin_common", "math.min.undefined", "infinite or NaN", [(np.nan, 3.0), (1.0, 1.0)]),
             ("fmax_common", "math.max.undefined", "infinite or NaN", [(1.0, 1.0), (np.inf, 3.0)]),
             ("mix", "math.mix.undefined", "range [0.0, 1.0]", [(1.0, 1.0), (2.0, 2.0), (1.5, 0.5)]),
             ("smoothstep", "math.smoothstep.undefined", "edge0 >= edge1", [(1.0, 0.0), (1.0, 2.0), (0.5, 0.5)])]
    for op, rule, words, columns in cases:
        (found,) = undefined_results(_math(op, *columns))
        assert (found.statement, found.path, found.lanes, found.rule.id) == (0, (), (0,), rule), op
        assert found.rule.leaves == "undefined" and "§6.15.4" in found.rule.section and words in found.rule.section
        assert undefined_results(_math(op, *(c[1:] for c in columns))) == [], op  # defined operands only
    operands = undefined_results(_math("fclamp", (0.5,), (2.0,), (1.0,)))[0].operands
    assert [o.split()[-1] for o in operands] == ["(0.5)", "(2)", "(1)"]


def test_a_nan_bound_of_clamp_or_an_infinite_mix_operand_is_no_undefined_result():
    """clamp's NaN bound: "minval > maxval" is false (the lane is left unjudged for no rule of the
    spec); mix(INFINITY, 1, 0.5): a is in [0, 1] (unjudged: no finite reference); step is defined
    everywhere §6.15.4 defines it."""
    assert undefined_results(_math("fclamp", (0.5,), (np.nan,), (1.0,))) == []
    assert undefined_results(_math("mix", (np.inf,), (1.0,), (0.5,))) == []
    assert undefined_results(_math("step", (np.nan,), (1.0,))) == []


def _image_read(sampler: Sampler | None, coords: tuple[float, ...], ctype: Type) -> Program:
    """read_imagef of a 2x2 R FLOAT image at ``coords`` (x, y pairs), one work-item per pair."""
    bits = _bits(*coords) if ctype.scalar == "float" else tuple(c & 0xFFFFFFFF for c in coords)
    op = Op("read_image", (Load("c", ctype),), Type("float", 4),
            (("dim", "2d"), ("form", read_form(sampler)), ("image", "i"), ("sampler", sampler.name if sampler else "")))
    return Program((Buffer("c", ctype, "in", Fill(0, values=bits)), Buffer("o", Type("float", 4), "out")),
                   (Store("o", op),), len(coords) // 2, area="images",
                   images=(Image("i", "2d", "R", "FLOAT", (2, 2), Fill(1)),), samplers=(sampler,) if sampler else ())


def test_image_reads_with_undefined_results():
    """CLK_ADDRESS_NONE at x = 2.5 of a 2-texel-wide image (§6.15.15.1: "otherwise the results are
    undefined"), a sampler-less read at (-1, 0) (§6.15.15.3: it behaves as CLK_ADDRESS_NONE), a NaN
    coordinate (§8.2); the second work-item reads texel (1, 1), inside the image, and is not
    reported; nor is CLK_ADDRESS_CLAMP at the same outside coordinate (the border colour)."""
    f2, i2 = Type("float", 2), Type("int", 2)
    none = Sampler("s", False, "none", "nearest")
    (outside,) = undefined_results(_image_read(none, (2.5, 0.0, 1.5, 1.5), f2))
    assert (outside.rule.id, outside.lanes, outside.width) == ("image.none.outside", (0, 1, 2, 3), 4)
    assert outside.rule.leaves == "undefined" and "§6.15.15.1" in outside.rule.section
    (samplerless,) = undefined_results(_image_read(None, (-1, 0, 1, 1), i2))
    assert (samplerless.rule.id, samplerless.lanes) == ("image.none.outside", (0, 1, 2, 3))
    (nan,) = undefined_results(_image_read(none, (np.nan, 0.0, 1.5, 1.5), f2))
    assert (nan.rule.id, nan.lanes) == ("image.coordinate.nonfinite", (0, 1, 2, 3)) and "§8.2" in nan.rule.section
    assert undefined_results(_image_read(none, (0.5, 0.0, 1.5, 1.5), f2)) == []
    assert undefined_results(_image_read(Sampler("s", False, "clamp", "nearest"), (2.5, 0.0, 1.5, 1.5), f2)) == []


# ---- the reducer: removed first, the defined form kept, letter otherwise ---------------------


def _out_of_range(program: Program, saturated_too: bool) -> bool:
    """Whether the program converts a float operand outside char's range (or not finite) to char
    (computed here with numpy from the oracle's operand values)."""
    inputs = input_values(program)
    for s in program.body:
        for n in walk(s.value):
            if isinstance(n, Op) and n.op == "convert" and (saturated_too or not n.attr("sat")):
                x = evaluate(n.args[0], program, inputs, frozenset()).allowed[0].view(np.float32)
                if (~np.isfinite(x) | (x < -129) | (x > 128)).any():
                    return True
    return False


def _pocl(saturated_too: bool):
    """Stores nothing at all (every output keeps its zeros) in a kernel with an out-of-range
    conversion to char: without _sat only, or with _sat too."""

    def driver(program: Program, s, expected, inputs):
        if _out_of_range(program, saturated_too):
            return np.zeros(len(expected), scalar(expected.scalar).bits_dtype)
        return expected.allowed[0]

    return simulated(driver)


def _stored_bucket(monkeypatch, tmp_path, observe, program: Program) -> tuple[Corpus, dict]:
    """``program`` run by ``observe`` and stored; the bucket of its row on ``out1`` reduced."""
    monkeypatch.setattr(reducer, "observe", observe)
    corpus = Corpus(tmp_path / "c.db")
    corpus.add_target("sim", "opencl-c", "fp-sim", {"device_name": "sim"})
    store_observed(corpus, program, reducer.observe)
    rows = [r for b in corpus.buckets() for r in bucket_rows(corpus, b["id"])]
    return corpus, next(r for r in rows if r["buffer"] == "out1")


def test_the_defined_pass_runs_once_the_program_is_one_work_item():
    """Before it only passes that keep the program's statements as they are or drop some (``alone``:
    the failing statement alone on one work-item; the shape passes; ``work_items``), so that its
    check of every lane runs on one work-item, not on the original's thousand."""
    names = [name for name, _ in PASSES]
    assert names[:names.index("defined")] == ["alone", "twin", "shape_parts", "work_group", "work_items"]


def test_a_bug_only_an_implementation_defined_conversion_shows_is_a_letter(monkeypatch, tmp_path):
    """(a) Without _sat only: no program without convert_char_rte(INFINITY), nor with
    convert_char_sat_rte, shows the dropped store; the reduction keeps it, the bucket's severity is
    letter and the report names the statement and §6.4.3.3; it is not a violation."""
    corpus, row = _stored_bucket(monkeypatch, tmp_path, _pocl(saturated_too=False), _program())
    reduction = session.reduce_stored(corpus, row, SimTarget(), SimWorker())
    assert reduction.reduced.body == _program(extra=False).body and reduction.reduced.global_size == 1
    (entry,) = reduction.undefined
    assert entry["statement"] == "out0[gid] = convert_char_rte(in0[gid])" and entry["operands"] == "inf"
    assert entry["rule"] == "convert.float_to_int.out_of_range" and "§6.4.3.3" in entry["section"]
    (bucket,) = [b for b in corpus.buckets() if b["id"] == reduction.bucket]
    assert bucket["signature"]["rule"] != "convert.float_to_int.out_of_range"  # keyed on the dropped store
    assert bucket_severity(bucket) == "letter" and bug_list([bucket])[0]["severity"] == "letter"
    text = readme(case_of(corpus, bucket["id"]))
    assert "Severity: **letter**" in text and "violation" not in text.split("Severity:")[1].split("\n")[0]
    assert "`out0[gid] = convert_char_rte(in0[gid])`" in text and "§6.4.3.3" in text
    assert "Only beside an operation whose result the specification leaves" in text.split("## Driver")[0]


def test_a_crash_beside_an_undefined_value_stays_a_violation():
    """The letter downgrade is for wrong values: a crash, build or runtime failure whose reduced
    kernel keeps ``min(NaN, NaN)`` (a value §6.15.4 leaves open) is a violation all the same (the
    program must build and run); a wrong value reduced with it is a letter."""
    undefined = [{"statement": "out0[gid] = min(in0[gid], in1[gid])", "operands": "nan, nan"}]
    reduced = {"statements": 1, "work_items": 1, "why": "", "undefined": undefined}
    for kind in ("crash", "build_error", "runtime_error"):
        bucket = {"signature": {"kind": kind, "driver": "sim", "failure": "killed by SIGSEGV"}, "reduced": reduced}
        assert bucket_severity(bucket) == "violation", kind
    wrong = {"signature": {"kind": "wrong-result", "driver": "sim", "operation": "convert_T_sat", "rule": "convert.sat.clamp"},
             "reduced": reduced}
    assert bucket_severity(wrong) == "letter" and bucket_severity({**wrong, "reduced": None}) == "violation"


def test_a_bug_the_sat_form_shows_too_is_filed_under_it(monkeypatch, tmp_path):
    """(b) With _sat too: the reduction keeps convert_char_sat_rte (the same rounding), whose own
    lane is now judged and dropped (127 expected), and the bucket moves to convert_T_sat: a
    violation of §6.4.3.3's clamp."""
    corpus, row = _stored_bucket(monkeypatch, tmp_path, _pocl(saturated_too=True), _program())
    reduction = session.reduce_stored(corpus, row, SimTarget(), SimWorker())
    assert [s.value for s in reduction.reduced.body] == [_convert(True)] and reduction.undefined == []
    assert reduction.culprit and reduction.rows[0]["operation"] == "convert_char_sat_rte"
    assert reduction.rows[0]["expected_value"] == "127"
    bucket = corpus.bucket(reduction.bucket)
    assert bucket["signature"]["operation"] == "convert_T_sat" and bucket["signature"]["rule"] == "convert.sat.clamp"
    assert bucket_severity(bucket) == "violation" and bucket["reduced"]["undefined"] == []


def _add_sat_as_hadd():
    """An ordinary bug: add_sat computed as hadd, wherever it appears."""

    def driver(program: Program, s, expected, inputs):
        if isinstance(s.value, Op) and s.value.op == "add_sat":
            return evaluate(Op("hadd", s.value.args, s.value.type), program, inputs, frozenset()).allowed[0]
        return expected.allowed[0]

    return simulated(driver)


def test_an_unrelated_implementation_defined_statement_goes_first(monkeypatch):
    """(c) An add_sat bug beside convert_char_rte(INFINITY): the conversion is gone before any
    other pass keeps a candidate (the ``alone`` pass keeps the add_sat statement alone), and the bug
    reduces as it does without it."""
    monkeypatch.setattr(reducer, "observe", _add_sat_as_hadd())
    base = _program()
    body = (Store("out2", Op("add_sat", (Load("in1", I), Load("in1", I)), I)), base.body[0])
    program = restrict(Program(base.buffers, body, 4), [0, 1])
    rows = reducer.observe(program, SimTarget(), SimWorker())
    assert {r["buffer"] for r in rows} == {"out2"}
    with_it = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())
    without = reducer.reduce_program(restrict(program, [0]), rows[0], SimTarget(), SimWorker())
    assert list(with_it.passes)[0] == "alone"
    assert with_it.reduced == without.reduced and with_it.undefined == [] == without.undefined
    assert [s.value.op for s in with_it.reduced.body] == ["add_sat"]
