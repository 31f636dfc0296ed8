"""The structure-level reducer of flow programs (triage.reduce.flow) against interestingness tests
that need no driver: each models a compiler bug by what the program holds (a built-in call, a
loop around an array store), so the smallest program that keeps it is known by hand. Every
candidate it runs is defined (lang.flow_rules.check) and keeps the property."""

from __future__ import annotations

import dataclasses
import random

import pytest

from fuzz.strategies.flow import generate
from lang.flow import AStore, Call, Const, FlowProgram, Invoke, Loop
from lang.flow_tree import expressions, statements, walk
from lang.flow_rules import check
from triage.observe import size
from triage.reduce.flow import _unnamed, reduce_flow, same_failure


def _calls(p: FlowProgram, fn: str) -> int:
    """The calls of ``fn`` the kernel reaches: in its body and in the helpers it invokes."""
    reached = [p.body, *(f.body for f in p.functions
                         if any(isinstance(s, Invoke) and s.function == f.name for s in statements(p.body)))]
    results = [f.result for f in p.functions if any(isinstance(s, Invoke) and s.function == f.name
                                                    for s in statements(p.body))]
    nodes = [n for b in reached for s in statements(b) for x in expressions(s) for n in walk(x)]
    return sum(isinstance(n, Call) and n.fn == fn for n in nodes + [m for r in results for m in walk(r)])


def _drawn(holds, seeds=range(200)) -> FlowProgram:
    for seed in seeds:
        p = generate(random.Random(seed))
        if holds(p) and size(p)["statements"] >= 6:
            return p
    pytest.skip("no drawn program has the property")


def test_a_built_in_call_is_reduced_to_one_statement_on_one_work_item():
    """A 'compiler' that gets every mul_hi wrong: the reduced kernel is one statement holding the
    call, on one work-item; every candidate run was defined and the original is unchanged."""
    tried = []

    def fails(p: FlowProgram) -> bool:
        check(p)  # raises if the reducer ran an undefined candidate
        tried.append(p)
        return _calls(p, "mul_hi") > 0

    original = _drawn(lambda p: _calls(p, "mul_hi") > 0)
    r = reduce_flow(original, fails, budget_s=120)
    assert not r.stopped and r.candidates == len(tried) > 0
    assert _calls(r.reduced, "mul_hi") >= 1 and r.reduced.work_items == 1
    assert size(r.reduced)["statements"] == 1 and not r.reduced.functions
    assert size(r.reduced)["nodes"] < size(original)["nodes"]
    assert r.original is original


def test_a_loop_around_an_array_store_keeps_one_loop_and_one_store():
    """A 'compiler' that miscompiles a store to a private array inside a loop of two or more
    iterations: the reducer keeps one loop (its cap above 1) and one store in it, nothing else."""
    def holds(p: FlowProgram) -> bool:
        return any(isinstance(s, Loop) and s.cap > 1 and any(isinstance(t, AStore) for t in statements(s.body))
                   for s in statements(p.body))

    r = reduce_flow(_drawn(holds), holds, budget_s=120)
    stmts = list(statements(r.reduced.body))
    assert holds(r.reduced) and [type(s).__name__ for s in stmts] == ["Loop", "AStore"]
    store = stmts[1]
    assert all(isinstance(n, Const) or n.__class__.__name__ in ("Var", "Item") for x in (store.index, store.value)
               for n in walk(x))


def test_the_budget_stops_it_with_what_it_kept():
    original = _drawn(lambda p: True)
    r = reduce_flow(original, lambda p: True, budget_s=0)
    assert r.stopped and r.reduced == original and r.candidates == 0


def test_what_nothing_names_goes_first_so_a_short_budget_still_drops_it():
    """A drawn program cut to its first output: the first candidate the reducer runs is the program
    without every declaration nothing names any more (variables, arrays, helpers, inputs), its
    body and launch as they were, so a reduction its budget ends early still drops them."""
    def one_output(p: FlowProgram) -> FlowProgram:
        return dataclasses.replace(p, outputs=p.outputs[:1])

    program = one_output(_drawn(lambda p: p.global_size != p.local_size and _unnamed(one_output(p))))
    seen = []

    def fails(p: FlowProgram) -> bool:
        seen.append(p)
        return False

    reduce_flow(program, fails, budget_s=120)
    first = seen[0]
    assert (first.body, first.global_size, first.outputs) == (program.body, program.global_size, program.outputs)
    names = lambda p: [d.name for f in ("variables", "arrays", "functions", "inputs") for d in getattr(p, f)]  # noqa: E731
    assert set(names(first)) < set(names(program))
    assert _unnamed(first) == []  # nothing unnamed is left


def test_structs_nothing_names_go_with_the_first_cut():
    """A drawn program with structs whose one output is a plain variable and whose body is empty:
    its first candidate keeps no struct type, struct variable or struct helper."""
    original = _drawn(lambda p: p.structs and any("." not in o.var for o in p.outputs), seeds=range(400))
    out = next(o for o in original.outputs if "." not in o.var)
    program = dataclasses.replace(original, outputs=(out,), body=())
    first = next(iter(_unnamed(program)))
    assert (first.structs, first.struct_vars, first.struct_functions) == ((), (), ())
    assert [d.name for d in first.variables] == [out.var] and _unnamed(first) == []


def test_a_reduction_keeps_the_failure_it_started_from():
    """A crash keeps its message as its bucket keys it (line numbers are noise), so an assertion
    never reduces to another crash (PoCL 5.0's WorkitemLoops assertion had become a SIGSEGV); a
    wrong lane keeps its deviation class."""
    assertion = {"kind": "crash", "actual_value": "python3: ./lib/llvmopencl/WorkitemLoops.cc:1290: void "
                                                  "pocl::WorkitemLoopsImpl::addContextSaveRestore(): Assertion `x' failed."}
    assert same_failure({**assertion, "actual_value": assertion["actual_value"].replace("1290", "1301")}, assertion)
    assert not same_failure({"kind": "crash", "actual_value": "killed by SIGSEGV"}, assertion)
    assert not same_failure({**assertion, "kind": "build_error"}, assertion)
    zero = {"kind": "wrong-code", "deviation": "signed-zero"}
    assert same_failure(dict(zero), zero) and not same_failure({**zero, "deviation": "other"}, zero)
    assert same_failure({**zero, "deviation": "other"}, {"kind": "wrong-code"})  # no class stored: any lane
