"""Every disagreement re-derived before it is recorded: an oracle defect is never a driver's bug.

A program's expectations are computed once for all of its work-items, fast (the math oracle's
vectorized filter and its operand-set cache: oracles.math.fast, oracles.math.lanewise) and shared
by its parts (campaign.expectations). Before a wrong or imprecise lane becomes a disagreement row,
:func:`confirm` computes its work-item again from the inputs the driver was given, with the
uncached exact reference (:func:`oracles.rederive`), on its statement alone on that one work-item
(:func:`lang.derive.one_work_item`; the rows of one statement and work-item share it). Where the
re-derived lane accepts another set of values (or is not judged at all), and so also where it
accepts the driver's value, the row is an *oracle defect*: recorded apart (table
``oracle_defects``, :mod:`campaign.record`), one line on stderr, never a bucket. Failures (no
expectation) and the rows of programs with shared (atomic) locations, whose histories depend on
every work-item, are kept as they are.

Cost: one re-derivation per statement and work-item with rows (bench/rederive.py; docs/oracle.md).
"""

from __future__ import annotations

import json

import numpy as np

from corpus.buckets import RESULT_KINDS
from fuzz.judge import accepted
from lang.derive import one_work_item
from lang.ir import Program
from oracles import Expectation, rederive


def confirm(program: Program, rows: list[dict], expectations: dict[str, Expectation], ftz: frozenset,
            inputs: dict[str, np.ndarray]) -> tuple[list[dict], list[dict]]:
    """The disagreement rows of a run of ``program`` (judged against ``expectations``, computed
    for the float environment ``ftz`` on ``inputs``) that the re-derivation confirms, and the
    oracle defects among them (module docstring): each row as the judge made it, with the
    re-derived accepted set (``rederived``) and ``why`` it is not confirmed."""
    if program.shared:
        return rows, []
    kept, defects = [], []
    fresh: dict[tuple[int, int], dict[str, Expectation]] = {}
    for row in rows:
        if row["kind"] not in RESULT_KINDS or row["work_item"] < 0:
            kept.append(row)
            continue
        again, lane = rederived(program, row, ftz, inputs, fresh)
        derived = accepted_set(again, lane)
        if derived == accepted_set(expectations[row["buffer"]], row["lane"]):
            kept.append(row)
            continue
        takes = bool(again.select(np.array([lane])).accepts(np.array([int(row["actual"], 16)]))[0])
        why = "the re-derivation accepts the actual value" if takes else "the re-derivation accepts another set"
        defects.append({**{k: row[k] for k in DEFECT_FIELDS}, "expected": row["allowed"],
                        "rederived": json.dumps(sorted(derived)), "why": why})
    return kept, defects


def rederived(program: Program, row: dict, ftz: frozenset, inputs: dict[str, np.ndarray],
              fresh: dict[tuple[int, int], dict[str, Expectation]]) -> tuple[Expectation, int]:
    """The expectation of the statement and work-item of a disagreement ``row`` of ``program``
    re-derived with the uncached exact reference (:func:`oracles.rederive` of
    :func:`lang.derive.one_work_item`), and the row's lane in it; ``fresh`` keeps each statement
    and work-item's re-derivation for the rows that share it."""
    item, buffer = row["work_item"], row["buffer"]
    index = next(i for i, s in enumerate(program.body) if buffer in (s.buffer, s.pointee))
    if (index, item) not in fresh:
        fresh[(index, item)] = rederive(one_work_item(program, item, inputs, [index]), ftz)
    return fresh[(index, item)][buffer], row["lane"] - item * program.buffer(buffer).type.mem_lanes


def accepted_set(exp: Expectation, pos: int) -> frozenset[str]:
    """What lane ``pos`` of ``exp`` accepts, as one set of the texts of fuzz.judge.accepted (a
    stored row's ``allowed``, duplicates aside), ``{"not judged"}`` where it is not judged:
    comparable between two derivations and with a stored row."""
    return frozenset(sum(accepted(exp, pos), [])) if exp.judged[pos] else frozenset({"not judged"})


DEFECT_FIELDS = ("buffer", "work_item", "lane", "operation", "expression", "inputs", "actual", "actual_value", "rule")
"""What an oracle defect keeps of its disagreement row (besides the two accepted sets and why)."""


def line(d: dict, target: str) -> str:
    """An oracle defect ``d`` (a row of :func:`confirm`'s defects) in one line, for stderr."""
    return (f"oracle defect on {target}, not stored as a disagreement: {d['expression']} work-item {d['work_item']} "
            f"lane {d['lane']}: expected {d['expected']}, re-derived {d['rederived']}, actual {d['actual_value']} "
            f"({d['why']})")
