"""The ``statements`` pass: keep the statement the disagreement is in alone; else that statement
with one other (those that disagree themselves first: a statement that shows the disagreement only
beside another is an interaction, triage.reduce.engine); else halve the body (delta debugging),
then try the other pairs, then drop the statements one at a time. A reduction that ends on several
statements none of which shows the disagreement alone blames them together (:func:`interaction`)."""

from __future__ import annotations

from corpus.buckets import INTERACTION, operation_family
from fuzz.judge import describe_statement
from lang.derive import restrict
from lang.ir import Program
from triage.reduce.base import Candidates, Reducing, failing_statements


def statements_pass(program: Program, rows: list[dict], reducing: Reducing) -> Candidates:
    n = len(program.body)
    if n == 1:
        return
    where = failing_statements(program, rows)
    if where and len(where) < n:
        yield restrict(program, where[:1])
        yield restrict(program, where)
    disagreeing = set(failing_statements(program, reducing.known(program)))
    pairs = [sorted((where[0], i)) for i in range(n) if where and i != where[0]]
    yield from (restrict(program, p) for p in pairs if set(p) <= disagreeing)
    for chunk in (n // 2, max(1, n // 4)):
        for start in range(0, n, chunk):
            keep = [i for i in range(n) if not start <= i < start + chunk]
            if keep:
                yield restrict(program, keep)
    yield from (restrict(program, p) for p in pairs if not set(p) <= disagreeing)
    for i in range(n):
        yield restrict(program, [j for j in range(n) if j != i])


def interaction(program: Program, rows: list[dict]) -> dict[str, str]:
    """The culprit of a disagreement that only the statements of ``program`` together show
    (corpus.buckets.CULPRIT_FIELDS): kind ``interaction``, its operation the sorted operation
    families of the statements joined by `` + `` (``floor + sincos``), the deviation and rule of the
    wrong lane (``rows``: the goal's rows); no types or shape of its own."""
    ops = sorted({operation_family(describe_statement(s, program)[0]) for s in program.body})
    return {"operation": " + ".join(ops), "src_type": "", "dst_type": "", "rule": rows[0].get("rule", ""),
            "deviation": rows[0].get("deviation") or "unclassified", "shape": "", "kind": INTERACTION}

