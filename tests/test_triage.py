"""Triage without drivers: bucket signatures and statuses, the schema upgrade, and the reducer's
invariants against a simulated bug (the driver is replaced by the oracle with one construct made
wrong, so every step is deterministic and checkable)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import SMALL, meta, old_corpus
from hypothesis import HealthCheck, given, settings

from campaign.expectations import Expectations
from corpus.buckets import base_operation, bucket_id, failure_message, signature
from corpus.schema import SCHEMA_VERSION
from corpus.store import Corpus, CorpusError
from fuzz.strategies.conversions import Caps
from fuzz.strategies.expressions import expression_programs
from lang.ir import Buffer, Fill, Literal, Load, Op, Program, Store, validate, walk
from lang.layout import input_values
from lang.types import Type
from oracles import evaluate
from oracles.classes import input_class
from simulated import SimTarget, SimWorker, simulated
from triage.buglist import bug_list
from triage import observe as triage_observe
from triage.observe import size
from triage.reduce import Goal, Reducer, simplest
from triage.reduce import engine as reducer
from triage.reduce.passes.narrow import narrow_pass

ROW = {"program_id": "p", "target": "pocl/spirv", "fingerprint_id": "f", "path": "spirv", "buffer": "out0",
       "lane": 3, "work_item": 3, "kind": "wrong-result", "operation": "convert_int4_sat_rte", "src_type": "float4",
       "dst_type": "int4", "input_class": "nan", "rule": "convert.sat.nan", "actual_value": "-2147483648"}


def test_one_bug_one_signature_whatever_width_path_version_area_or_input():
    """The same wrong value of the same operation (convert_T_sat_rte of NaN gives INT_MIN: a type
    limit) is one bug on both paths (whose texts of the rule differ), at every width and size of a
    signed destination, in any area and driver version, whatever the input class (the rule,
    convert.sat.nan, names the case)."""
    sig = signature({**ROW, "deviation": "type-limit"})
    assert sig == {"kind": "wrong-result", "driver": "pocl", "operation": "convert_T_sat", "src_type": "float",
                   "dst_type": "signed integer", "rule": "convert.sat.nan", "deviation": "wrong-value"}
    # a value that happens to be an operand's or off by one on another lane: the same bug
    assert bucket_id(signature({**ROW, "deviation": "off-by-ulps"})) == bucket_id(sig)
    for other in ({"path": "opencl-c", "target": "pocl"}, {"operation": "convert_int16_sat_rte", "src_type": "float16",
                                                           "dst_type": "int16"},
                  {"operation": "convert_int_sat_rte", "src_type": "float", "dst_type": "int"},
                  {"operation": "convert_short2_sat_rte", "dst_type": "short2"},
                  {"rule": "convert.sat.nan.spirv"}, {"operation": "convert_int4_sat_rtp"},
                  {"operation": "convert_int4_sat"}):
        assert bucket_id(signature({**ROW, "deviation": "type-limit", **other})) == bucket_id(sig)
    assert bucket_id(signature({**ROW, "deviation": "type-limit", "input_class": "huge"})) == bucket_id(sig)


def test_two_bugs_behind_one_operation_stay_two():
    """Different mechanisms of the wrong value (the value before saturation vs the opposite signed
    zero), rules, element types' families (signed, unsigned, each floating type), saturation or
    drivers are different bugs."""
    sig = bucket_id(signature({**ROW, "deviation": "unsaturated"}))
    for other in ({"deviation": "signed-zero"}, {"deviation": "type-limit"}, {"rule": "convert.sat.clamp"}, {"operation": "convert_int_rte"},
                  {"dst_type": "uint4", "operation": "convert_uint4_sat_rte"}, {"src_type": "double4"},
                  {"target": "rusticl/spirv"}):
        assert bucket_id(signature({**ROW, "deviation": "unsaturated", **other})) != sig, other


def test_a_rounding_suffix_keys_only_where_the_rule_rounds():
    """NaN to 0 is one bug whatever rounding suffix the conversion spelled (rusticl's was ten buckets);
    a wrongly rounded value is a bug of its rounding mode."""
    nan = {**ROW, "deviation": "type-limit"}
    assert len({bucket_id(signature({**nan, "operation": f"convert_int4_sat{r}"}))
                for r in ("", "_rte", "_rtz", "_rtp", "_rtn")}) == 1
    rounded = {**ROW, "rule": "convert.float_to_int.round", "deviation": "wrong-rounding"}
    assert len({bucket_id(signature({**rounded, "operation": f"convert_int4_sat{r}"}))
                for r in ("", "_rte", "_rtz", "_rtp", "_rtn")}) == 5


def test_a_renamed_deviation_class_keys_as_its_new_name():
    """Signature 10: a row an older classifier called other-rounding is in the bucket of the rows
    the current one calls wrong-rounding (one bug, one bucket across the rename); a flushed value
    is still another mechanism."""
    rounded = {**ROW, "rule": "convert.float_to_int.round", "operation": "convert_short_rtn"}
    new = bucket_id(signature({**rounded, "deviation": "wrong-rounding"}))
    assert bucket_id(signature({**rounded, "deviation": "other-rounding"})) == new
    assert signature({**rounded, "deviation": "other-rounding"})["deviation"] == "wrong-rounding"
    assert bucket_id(signature({**rounded, "deviation": "flushed"})) != new


def _edges(s) -> np.ndarray:
    """Every value class of a conversion's operand: both ends of each integer type and the integers
    next to 2^24 and 2^53 (float's and double's last exact integers), signed zeros, infinities, NaN,
    subnormals, halves and every bit pattern's share of random ones."""
    ints = [0, 1, -1, 2**24 + 1, -(2**24) - 1, 2**53 + 1, 2**63 - 1, -(2**63)]
    ints += [v for b in (8, 16, 32) for v in (2**(b - 1) - 1, -(2**(b - 1)), 2**b - 1, 2**b)]
    if s.is_float:
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5, 65504.0, 1e-40, 3.4e38, 1e300,
                             2.0**63, 2.0**64, -(2.0**63) - 2048] + ints, np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            specials = specials.astype(s.dtype)
    else:
        specials = np.array([v % 2**s.bits for v in ints], np.uint64).astype(s.bits_dtype).view(s.dtype)
    noise = np.random.default_rng(s.bits).integers(0, 2**63, 4000, dtype=np.uint64).astype(s.bits_dtype)
    return np.concatenate([specials, noise.view(s.dtype)])


def test_rounding_free_rules_are_those_no_rounding_mode_changes():
    """corpus.buckets.ROUNDING_FREE_RULES, checked against the oracle (oracles.conversions): on every
    conversion between scalar types, with and without _sat, a lane judged under one of those rules
    has the same bits in all five rounding spellings, each of those rules is met, and every other
    rule that judges a lane gives different bits in two modes somewhere."""
    from corpus.buckets import ROUNDING_FREE_RULES
    from lang.types import scalar
    from oracles.conversions import ROUNDINGS, convert_all
    from oracles import rule

    names = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "double")
    seen, differs = set(), set()
    for src in names:
        values = _edges(scalar(src))
        for dst in names:
            for sat in (False, True) if not scalar(dst).is_float else (False,):
                out = [convert_all(values, src, dst, saturate=sat, rounding=r) for r in (None, *ROUNDINGS)]
                bits = np.stack([v.view(scalar(dst).bits_dtype) for v, _, _ in out])
                same = (bits == bits[0]).all(axis=0)
                for index in np.unique(out[0][2][out[0][1]]):
                    name = rule(int(index)).id
                    lanes = out[0][1] & (out[0][2] == index)
                    seen.add(name)
                    if name in ROUNDING_FREE_RULES:
                        assert same[lanes].all(), (src, dst, sat, name)
                    elif not same[lanes].all():
                        differs.add(name)
    assert ROUNDING_FREE_RULES <= seen
    assert seen - ROUNDING_FREE_RULES == differs


def test_failures_bucket_by_their_message_without_numbers():
    crash = {**ROW, "kind": "crash", "actual_value": "SIGSEGV at 0x7f3a12 in /usr/lib/x/libpocl.so line 588"}
    again = {**crash, "actual_value": "SIGSEGV at 0x55aa00 in /opt/lib/libpocl.so line 588", "operation": "clz"}
    assert failure_message(crash["actual_value"]) == failure_message(again["actual_value"])
    assert bucket_id(signature(crash)) == bucket_id(signature(again))
    assert bucket_id(signature(crash)) != bucket_id(signature({**crash, "actual_value": "SIGABRT"}))


def _run(corpus: Corpus, **changes) -> None:
    row = {**ROW, **changes}
    corpus.add_run({"program_id": row["program_id"], "target": row["target"], "fingerprint_id": "f",
                    "path": row["path"], "status": "ok", "checks": 1, "judged": 1, "mismatches": 1}, [row])


def test_buckets_count_rows_and_programs_and_keep_status(memory_corpus):
    _run(memory_corpus)
    _run(memory_corpus, lane=5)
    _run(memory_corpus, program_id="q")
    _run(memory_corpus, rule="convert.sat.clamp", lane=7)
    found = memory_corpus.buckets()
    assert [(b["rows"], b["programs"]) for b in found] == [(3, 2), (1, 1)]
    assert all(b["status"] == "new" and b["confirmation"] == "unconfirmed" for b in found)
    first = found[0]["id"]
    assert memory_corpus.mark(first[:6], "fixed", "pocl 3.2")["status"] == "fixed"
    _run(memory_corpus, program_id="r")  # a fixed bug seen again is news
    assert memory_corpus.bucket(first)["status"] == "new"
    with pytest.raises(CorpusError, match="unknown status"):
        memory_corpus.mark(first, "wontfix")
    with pytest.raises(CorpusError, match="no bucket"):
        memory_corpus.bucket("zzzz")


def test_a_disagreement_that_does_not_reproduce_is_kept_apart(memory_corpus):
    _run(memory_corpus)
    _run(memory_corpus, program_id="q")
    bucket = memory_corpus.buckets()[0]["id"]
    _run(memory_corpus, program_id="q", lane=9, rule="convert.sat.clamp")  # another bucket, same run
    memory_corpus.confirm("q", ROW["target"], bucket, False)
    memory_corpus.confirm("p", ROW["target"], bucket, True)
    found = {b["confirmation"]: b for b in memory_corpus.buckets()}
    assert set(found) == {"confirmed", "flaky", "unconfirmed"}  # the other bucket is untouched
    assert found["flaky"]["rows"] == 1 and found["flaky"]["signature"]["flaky"] is True
    assert "[flaky]" in found["flaky"]["title"]


def test_a_schema_1_corpus_is_upgraded_with_buckets(tmp_path):
    path = old_corpus(1, tmp_path)  # two wrong lanes of one bug and two build failures of another, no buckets
    upgraded = Corpus(path)
    assert meta(path) == str(SCHEMA_VERSION)
    assert [b["rows"] for b in upgraded.buckets()] == [2, 2]
    assert all(r["bucket"] for r in upgraded.disagreements())


def test_base_operation_ignores_vector_widths_only():
    assert base_operation("convert_uint4_sat_rte") == "convert_uint_sat_rte"
    assert base_operation("(float16)(...)") == "(float)(...)"
    assert base_operation("OpSMod") == "OpSMod"
    assert base_operation("convert_int_sat") != base_operation("convert_uint_sat")


@pytest.mark.parametrize("name", ["float", "double", "int", "uint", "char", "ulong", "short"])
def test_simplest_keeps_the_input_class_and_the_sign(name):
    from lang.types import scalar

    s = scalar(name)
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**63, 400, dtype=np.uint64).astype(s.bits_dtype)
    for bits in values:
        new = simplest(int(bits), name)
        old_v = np.array([bits]).astype(s.bits_dtype).view(s.dtype)
        new_v = np.array([new]).astype(s.bits_dtype).view(s.dtype)
        assert input_class(old_v, name)[0] == input_class(new_v, name)[0]
        if s.is_float and not np.isnan(old_v[0]) and input_class(old_v, name)[0] != "zero":
            assert np.signbit(old_v[0]) == np.signbit(new_v[0])


def test_simplest_values_are_the_plain_ones():
    f = lambda v: int(np.array([v], np.float32).view(np.uint32)[0])  # noqa: E731
    assert simplest(f(-37.0), "float") == f(-1.0)  # integral
    assert simplest(f(2.5), "float") == f(0.5)  # tie
    assert simplest(f(3.1), "float") == f(1.25)  # normal
    assert simplest(f(1e30), "float") == f(2.0**31)  # huge
    assert simplest(12345, "int") == 1 and simplest(2**32 - 12345, "int") == 2**32 - 1
    assert simplest(2**31 - 2, "int") == 2**31 - 2  # near-max stays near-max


# -- the reducer against a simulated bug ------------------------------------------------------

BUG_OP = "add_sat"


def _simulator(ops: frozenset[str]):
    """The oracle's own results, except that a statement whose root is one of ``ops`` gets every
    judged lane with an odd result wrong (a driver bug that depends on one construct and on the
    values)."""

    def driver(program: Program, s: Store, e, inputs) -> np.ndarray:
        bits = e.allowed[0].copy()
        if isinstance(s.value, Op) and s.value.op in ops:
            bits = np.where(e.judged & ((bits & 1) == 1), bits ^ 1, bits)
        return bits

    return simulated(driver)


def _program_with_bug() -> Program:
    t = Type("int", 4)
    a = Buffer("in0", t, "in", Fill(11, (1, 3, 5, 2**31 - 1), 3))
    b = Buffer("in1", t, "in", Fill(12, (0, 1, 2), 3))
    c = Buffer("in2", Type("float"), "in", Fill(13))
    outs = [Buffer(f"out{i}", t, "out") for i in range(3)] + [Buffer("out3", Type("float"), "out")]
    inner = Op("arith", (Load("in0", t), Load("in1", t)), t, (("operator", "&"),))
    body = (
        Store("out0", Op("max", (Load("in0", t), Load("in1", t)), t)),
        Store("out1", Op(BUG_OP, (inner, Load("in1", t)), t)),
        Store("out2", Op("min", (Load("in1", t), Load("in0", t)), t)),
        Store("out3", Load("in2", Type("float"))),
    )
    p = Program((a, b, c, *outs), body, 64, area="expressions")
    validate(p)
    return p


@pytest.fixture
def simulate(monkeypatch):
    """Make the reducer run programs on the simulated driver of :func:`_simulator`."""
    monkeypatch.setattr(triage_observe, "runnable", lambda target, program: program)

    def use(ops: frozenset[str], observe=None):
        observe = observe or _simulator(ops)
        monkeypatch.setattr(reducer, "observe", observe)
        return observe

    return use


def test_reducer_finds_the_one_statement_work_item_and_operand(simulate):
    program = _program_with_bug()
    rows = simulate(frozenset({BUG_OP}))(program, None, None)
    assert rows and all(r["operation"] == BUG_OP for r in rows)
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())
    small = result.reduced
    assert len(small.body) == 1 and small.global_size == 1
    root = small.body[0].value
    assert root.op == BUG_OP and root.type.width == 1  # narrowed to the failing lane
    # the inner & was replaced by its value, and that value simplified within its class
    assert all(isinstance(a, (Load, Literal)) for a in root.args)
    assert Goal.of(rows[0]).matches(result.rows[0])
    assert size(small)["nodes"] < size(program)["nodes"]
    again = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())  # deterministic
    assert again.reduced.id == small.id


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(expression_programs(Caps(fp64=True), SMALL))
def test_every_reduction_is_valid_smaller_and_shows_the_goal(simulate, program):
    """Whatever the program, the reduced program is valid and defined, one statement over one
    work-item, no larger, and still shows the goal (or its culprit's) on the simulated driver."""
    roots = [s.value.op for s in program.body if isinstance(s.value, Op)]
    if not roots:
        return
    observe = simulate(frozenset({roots[len(roots) // 2]}))
    rows = observe(program, None, None)
    if not rows:
        return
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())
    validate(result.reduced)
    Expectations(result.reduced).get(frozenset())  # defined: the oracle raises on UB
    again = observe(result.reduced, None, None)
    goal = Goal.of(result.rows[0] if result.culprit else rows[0])  # a culprit moves the goal to itself
    assert again and any(goal.matches(r) for r in again)
    assert size(result.reduced)["nodes"] <= size(program)["nodes"]
    assert len(result.reduced.body) == 1 and result.reduced.global_size == 1


def test_a_program_without_the_disagreement_is_not_reduced(simulate):
    program = _program_with_bug()
    row = {**simulate(frozenset({BUG_OP}))(program, None, None)[0], "operation": "rotate"}
    assert reducer.reduce_program(program, row, SimTarget(), SimWorker()) is None
    assert Reducer(SimTarget(), SimWorker(), Goal.of(row)).candidates == 0


# -- integer promotion and lanes that agreed (issue: verdicts a vendor cannot argue with) ---------


def _one_statement(root: Op, inputs: dict[str, tuple[int, ...]], global_size: int = 1) -> Program:
    loads = {n.buffer: n.type for n in walk(root) if isinstance(n, Load)}
    buffers = tuple(Buffer(name, t, "in", Fill(0, values=inputs[name])) for name, t in loads.items())
    p = Program(buffers + (Buffer("out0", root.type, "out"),), (Store("out0", root),), global_size, area="expressions")
    validate(p)
    return p


def _binary(op: str, t: Type, operator: str | None = None) -> Op:
    args = (Load("x", t),) if op == "complement" else (Load("x", t), Load("y", t))
    return Op(op, args, t, (("operator", operator),) if operator else ())


@pytest.mark.parametrize("root,narrows", [
    (_binary("shift", Type("short", 4), "<<"), False),  # short << short is an int, count masked by 31
    (_binary("shift", Type("uchar", 4), ">>"), False),
    (_binary("arith", Type("uchar", 4), "+"), False),  # uchar + uchar is an int: 300, not 44
    (_binary("arith", Type("char", 4), "&"), False),  # a char & char would pick a built-in's int overload
    (_binary("div", Type("ushort", 4), "/"), False),
    (_binary("complement", Type("char", 4)), False),  # ~char is an int
    (Op("clz", (_binary("shift", Type("short", 4), "<<"),), Type("short", 4)), False),  # promoted below a built-in
    (_binary("shift", Type("int", 4), "<<"), True),  # int is its own promoted type
    (_binary("arith", Type("ulong", 4), "*"), True),
    (_binary("add_sat", Type("short", 4)), True),  # built-ins take gentype: no promotion (OpenCL C §6.15.3)
    (_binary("rotate", Type("uchar", 4)), True),
    (Op("convert", (_binary("hadd", Type("char", 4)),), Type("int", 4)), True),
])
def test_narrowing_keeps_statements_whose_scalar_form_would_be_promoted(root, narrows):
    """A vector lane computes in its element type; the same operator on scalars of char, uchar,
    short or ushort computes in int (C99 §6.3.1.1; OpenCL C §6.4.6, §6.5.10): the narrow pass makes no
    scalar statement of another meaning. Where it narrows, the scalar's expectation is the lane's."""
    inputs = {"x": (0xC000, 3, 200, 7), "y": (17, 1, 100, 16)}
    program = _one_statement(root, inputs)
    made = list(narrow_pass(program, [{"lane": 2}], None))
    assert len(made) == int(narrows)
    if narrows:
        vector = Expectations(program).get(frozenset())["out0"]
        lane = Expectations(made[0]).get(frozenset())["out0"]
        assert made[0].body[0].value.type.width == 1
        assert int(lane.allowed[0][0]) == int(vector.allowed[0][2]) and lane.judged[0]


def _promoting_driver(program: Program, s: Store, e, inputs) -> np.ndarray:
    """A driver that computes a shift of char or short lanes as C computes a scalar one: the left
    operand promoted to int, the count masked by 31, the int stored into the lane modulo 2^N. Right
    for scalars (OpenCL C §6.5.10), a bug for vector lanes (masked by the lane's width)."""
    v = s.value
    if not (isinstance(v, Op) and v.op == "shift" and v.args[0].type.elem.bits < 32):
        return e.allowed[0].copy()
    x, k = (evaluate(a, program, inputs, frozenset()).allowed[0].view(a.type.elem.dtype).astype(np.int64)
            for a in v.args)
    shifted = x << (k & 31) if v.attr("operator") == "<<" else x >> (k & 31)
    return shifted.astype(program.buffer(s.buffer).type.elem.bits_dtype)  # modulo 2^N


def test_a_short_shift_is_not_narrowed_into_a_false_disagreement(simulate):
    """The campaign's case: a driver that gets short4 << wrong (it masks the count by 31) was
    reduced to a scalar short << short, where the driver is right (0) and an oracle computing in
    short was not (-16384). The reduction now stays a vector, and every lane it reports is one the
    driver really gets wrong (count & 16 set: 31 and 15 mask it differently)."""
    t = Type("short", 4)
    root = _binary("shift", t, "<<")
    program = _one_statement(root, {"x": (0xC000, 3, 5, 7), "y": (17, 1, 2, 16)}, global_size=8)
    observe = simulate(frozenset(), simulated(_promoting_driver))
    rows = observe(program, None, None)
    assert sorted({r["lane"] % 4 for r in rows}) == [0, 3]
    result = reducer.reduce_program(program, rows[0], SimTarget(), SimWorker())
    small = result.reduced
    assert small.global_size == 1 and small.body[0].value.type == t  # still the short4 shift
    counts = input_values(small)["y"].view(np.int16)
    assert result.rows and all(counts[r["lane"]] & 16 for r in result.rows)
    # the scalar forms: typed short (what the old narrowing made) the oracle refuses; typed int, as
    # OpenCL C types it, the promoting driver agrees with the oracle: 0, not -16384
    scalar = {"x": (0xC000,), "y": (16,)}
    s = Type("short")
    assert observe(_one_statement(_binary("shift", s, "<<"), scalar), None, None) is None
    typed = _one_statement(Op("shift", (Load("x", s), Load("y", s)), Type("int"), (("operator", "<<"),)), scalar)
    typed = replace(typed, buffers=tuple(replace(b, type=s) if b.role == "out" else b for b in typed.buffers))
    assert observe(typed, None, None) == []
    assert list(Expectations(typed).get(frozenset())["out0"].allowed[0]) == [0]


def test_buckets_of_drivers_that_fail_the_same_way_are_related(memory_corpus):
    """One bucket per driver (a vendor gets its own), linked when the signature but the driver is
    the same (one upstream component may be at fault)."""
    _run(memory_corpus)
    _run(memory_corpus, target="rusticl/spirv", program_id="r")
    _run(memory_corpus, target="oclgrind", rule="convert.sat.clamp", program_id="o")
    bugs = {b["driver"]: b for b in bug_list(memory_corpus.buckets())}
    assert bugs["pocl"]["related"] == [bugs["rusticl"]["id"]] and bugs["rusticl"]["related"] == [bugs["pocl"]["id"]]
    assert bugs["oclgrind"]["related"] == []


def test_the_report_says_whether_operands_are_literals_or_loaded():
    """Literals and buffer inputs take different paths through a compiler (constant folding):
    the report says which form the failing statement's operands have (triage.report)."""
    from triage.report_readme import operand_form

    f = Type("float")
    x = Buffer("in0", f, "in", Fill("bits", 1))
    lit = Literal(f, (0x3F800000,))
    program = Program((x, Buffer("out0", f, "out"), Buffer("out1", f, "out"), Buffer("out2", f, "out")),
                      (Store("out0", Op("fabs", (lit,), f)), Store("out1", Op("fabs", (Load("in0", f),), f)),
                       Store("out2", Op("fmax", (lit, Load("in0", f)), f))), 4)
    assert operand_form(program, "out0").startswith("written in the kernel as literals")
    assert operand_form(program, "out1").startswith("loaded from input buffers")
    assert operand_form(program, "out2") == "1 written as literals, 1 loaded from input buffers"


def test_a_math_functions_rules_are_one_key_its_deviations_are_not():
    """Which of sinpi's rules judges a lane (its special value at integers, its ulp bound elsewhere)
    depends on the operand: one bug; a wrong signed zero is still another bug than a wrong value."""
    row = {"kind": "wrong-result", "target": "oclgrind", "operation": "sinpi", "src_type": "double",
           "dst_type": "double", "deviation": "other"}
    special = bucket_id(signature({**row, "rule": "math.sinpi.special"}))
    assert special == bucket_id(signature({**row, "rule": "math.sinpi.double.ulp"}))
    assert special == bucket_id(signature({**row, "rule": "math.sinpi.special.spirv"}))
    assert special != bucket_id(signature({**row, "rule": "math.sinpi.special", "deviation": "signed-zero"}))
    assert special != bucket_id(signature({**row, "rule": "math.sinpi.special", "src_type": "float",
                                           "dst_type": "float"}))


def test_operand_lists_key_as_families_too():
    row = {"kind": "wrong-result", "target": "rusticl/spirv", "operation": "OpSMod", "rule": "spirv.smod",
           "deviation": "other"}
    assert bucket_id(signature({**row, "src_type": "int+int", "dst_type": "int"})) == bucket_id(
        signature({**row, "src_type": "long2+long2", "dst_type": "long2"}))
    assert bucket_id(signature({**row, "src_type": "int+int", "dst_type": "int"})) != bucket_id(
        signature({**row, "src_type": "uint+uint", "dst_type": "uint"}))


def test_releases_and_devices_of_one_driver_share_its_buckets():
    """A bug that PoCL 3.1 (``pocl``) and PoCL 6.0 (``pocl-6.0``) share is one bucket seen on two
    versions; rusticl's is another."""
    row = {**ROW, "deviation": "type-limit"}
    sig = bucket_id(signature(row))
    assert sig == bucket_id(signature({**row, "target": "pocl-6.0"})) == bucket_id(signature({**row, "target": "pocl-2/spirv"}))
    assert sig != bucket_id(signature({**row, "target": "rusticl-25.0"}))
