"""Equivalence-modulo-inputs variants of flow programs (lang.flow): the same outputs for these
inputs, other code for the compiler.

A variant changes the program only under conditions whose value the inputs fix but the compiler
cannot know: ``in[k] != v`` where the input buffer holds ``v`` at ``k`` is false for every
work-item, ``in[k] == v`` true (an integer input: a float never decides control, lang.flow_rules).
Both are uniform over the launch (one element read by every work-item). The kinds
(:data:`KINDS`):

- ``dead``: a branch never taken, holding copies of statements of the body it sits in, inserted
  at statement boundaries of the kernel body and of its loop and branch bodies (the dead-code
  injection of Le, Afshari and Su, "Compiler validation via equivalence modulo inputs", PLDI 2014);
- ``live``: statements wrapped in a branch always taken (the same statements run: the
  optimiser sees a data-dependent branch around them).

Each variant is checked by the validator (lang.flow_rules.check): an insertion that would break a
rule (a barrier under a branch, ``break`` outside a loop) is not made. The exact interpreter
(oracles.flow) computes the same outputs for the variant as for its original, bit for bit; a
driver whose variant differs from the original, or from the interpreter, on a lane is wrong
(tests/test_flow_emi.py checks the sameness on drawn programs).
"""

from __future__ import annotations

import random
from dataclasses import replace

from lang.flow import INT_TYPES, Bin, Const, Exchange, Exit, FlowProgram, If, Load, Loop, Stmt
from lang.flow_rules import check
from lang.nodes import InvalidProgram
from oracles import flow_inputs

KINDS = ("dead", "live")
"""The variant kinds (module docstring)."""


def variant(p: FlowProgram, kind: str, rnd: random.Random, edits: int = 3) -> FlowProgram | None:
    """``p`` with up to ``edits`` edits of ``kind`` (:data:`KINDS`), each one valid; None where the
    program has no integer input to condition on or no edit could be made."""
    values = flow_inputs(p)
    inputs = [i for i in p.inputs if i.type in INT_TYPES]
    if not inputs:
        return None
    current, made = p, 0
    for _ in range(edits * 4):
        if made == edits:
            break
        i = rnd.choice(inputs)
        k = rnd.randrange(i.count)
        v = int(values[i.name][k])
        cond = Bin("ne" if kind == "dead" else "eq", Load(i.name, i.type, Const("uint", k)), Const(i.type, v), "int")
        body = _edit(current.body, kind, cond, rnd)
        if body is None:
            continue
        candidate = replace(current, body=body)
        try:
            check(candidate)
        except InvalidProgram:
            continue
        current, made = candidate, made + 1
    return current if made else None


def _bodies(body: tuple[Stmt, ...], path: tuple = ()):
    """Every body nested in ``body`` (itself first) with the path to it."""
    yield path, body
    for n, s in enumerate(body):
        if isinstance(s, Loop):
            yield from _bodies(s.body, (*path, (n, "body")))
        elif isinstance(s, If):
            yield from _bodies(s.then, (*path, (n, "then")))
            yield from _bodies(s.orelse, (*path, (n, "orelse")))


def _put(body: tuple[Stmt, ...], path: tuple, new: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
    """``body`` with the body at ``path`` replaced by ``new``."""
    if not path:
        return new
    (n, field), rest = path[0], path[1:]
    s = body[n]
    return body[:n] + (replace(s, **{field: _put(getattr(s, field), rest, new)}),) + body[n + 1:]


def _edit(body: tuple[Stmt, ...], kind: str, cond: Bin, rnd: random.Random) -> tuple[Stmt, ...] | None:
    """One edit of ``kind`` at a random place of ``body``."""
    places = [(path, b) for path, b in _bodies(body) if b]
    if not places:
        return None
    path, target = rnd.choice(places)
    n = rnd.randrange(len(target) + (kind == "dead"))
    if kind == "dead":
        copies = [s for s in target if not isinstance(s, (Exchange, Exit))]
        if not copies:
            return None
        dead = If(cond, tuple(rnd.sample(copies, min(2, len(copies)))))
        return _put(body, path, target[:n] + (dead,) + target[n:])
    if isinstance(target[n], Exit):  # "if (c) break;" moves into the branch: the validator decides
        return None
    return _put(body, path, target[:n] + (If(cond, (target[n],)),) + target[n + 1:])
