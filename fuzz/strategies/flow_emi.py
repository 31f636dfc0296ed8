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
  optimiser sees a data-dependent branch around them);
- ``split``: a loop of the kernel body with a constant base cut by hand into two loops over the two
  parts of its iteration range, the first ``K`` iterations and the rest (:func:`split`): its trip
  count kept in a new variable before them, a ``break`` of the first loop setting a new flag that
  keeps the second from running (its ``continue`` goes on with the next iteration either way, as in
  the original: C99 §6.8.6.2, §6.8.6.3).

Each variant is checked by the validator (lang.flow_rules.check): an insertion that would break a
rule (a barrier under a branch, ``break`` outside a loop) is not made. The exact interpreter
(oracles.flow) computes the same outputs for the variant as for its original, bit for bit; a
driver whose variant differs from the original, or from the interpreter, on a lane is wrong
(tests/test_flow_emi.py checks the sameness on drawn programs).
"""

from __future__ import annotations

import random
from dataclasses import replace

from lang.flow import (BASE_MASK, INT_TYPES, Assign, Bin, Call, Const, Decl, Exchange, Exit, FlowProgram, If, Load, Loop,
                       Stmt, Var)
from lang.flow_rules import check
from lang.nodes import InvalidProgram
from oracles import flow_inputs

KINDS = ("dead", "live", "split")
"""The variant kinds (module docstring)."""
CONDITIONED = ("dead", "live")
"""The kinds that insert branches on a condition the inputs fix."""


def variant(p: FlowProgram, kind: str, rnd: random.Random, edits: int = 3) -> FlowProgram | None:
    """``p`` with up to ``edits`` edits of ``kind`` (:data:`KINDS`), each one valid; None where the
    program has no integer input to condition on or no edit could be made (``split``: one loop
    split, None where no loop can be)."""
    if kind == "split":
        return split(p, rnd)
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


def split(p: FlowProgram, rnd: random.Random) -> FlowProgram | None:
    """``p`` with one loop of its kernel body (:class:`lang.flow.Loop`, a constant base) cut into two
    (module docstring): with ``n`` its trip count and ``b`` its base, the loop over
    ``b, b+step, ..., b+(n-1)*step`` becomes a loop over the first ``min(n, K)`` of these values and
    one over the other ``n - min(n, K)`` (``reverse``: the same values last first, so the loop over
    the high values runs first), ``K`` drawn from 1..cap-1 with ``b + K*step`` a base (<= BASE_MASK).
    None where no loop can be cut so that the validator accepts the program."""
    places = [(path, n) for path, body in _bodies(p.body) for n, s in enumerate(body)
              if isinstance(s, Loop) and isinstance(s.base, Const) and s.cap > 1
              and (s.base.value & BASE_MASK) + s.step <= BASE_MASK]
    rnd.shuffle(places)
    text = p.to_json()
    trips, flag = (next(f"split{k}_{role}" for k in range(len(text)) if f'"split{k}_{role}"' not in text)
                   for role in ("n", "broke"))
    for path, n in places:
        body = dict(_bodies(p.body))[path]
        loop = body[n]
        b = loop.base.value & BASE_MASK
        k = rnd.randint(1, min(loop.cap - 1, (BASE_MASK - b) // loop.step))
        cuts = _cut(loop, b, k, trips, flag)
        breaks = any(isinstance(s, Assign) and s.var == flag for s in cuts)
        candidate = replace(p, variables=(*p.variables, Decl(trips, "uint"), *([Decl(flag, "int")] * breaks)),
                            body=_put(p.body, path, body[:n] + cuts + body[n + 1:]))
        try:
            check(candidate)
        except InvalidProgram:
            continue
        return candidate
    return None


def _cut(loop: Loop, b: int, k: int, trips: str, flag: str) -> tuple[Stmt, ...]:
    """The statements that replace ``loop``: the trip count kept, the two loops (the first's
    ``break`` raising ``flag``, the second run only while it is down)."""
    n = Call("min", (loop.trips, Const("uint", loop.cap)), "uint")
    if loop.form == "do":
        n = Call("max", (n, Const("uint", 1)), "uint")
    low = Call("min", (Var(trips, "uint"), Const("uint", k)), "uint")
    high = Call("sub_sat", (Var(trips, "uint"), Const("uint", k)), "uint")
    form = "while" if loop.form == "do" else loop.form  # a part may run no iteration
    lows = replace(loop, base=Const("uint", b), trips=low)  # min(n, K) >= 1 where n >= 1 (do)
    highs = replace(loop, base=Const("uint", b + k * loop.step), trips=high, form=form)
    first, second = (highs, lows) if loop.reverse else (lows, highs)
    raised = _raise(first.body, flag)
    out: tuple[Stmt, ...] = (Assign(trips, n),)
    if raised == first.body:
        return (*out, first, second)
    down = Bin("eq", Var(flag, "int"), Const("int", 0), "int")
    return (*out, Assign(flag, Const("int", 0)), replace(first, body=raised), If(down, (second,)))


def _raise(body: tuple[Stmt, ...], flag: str) -> tuple[Stmt, ...]:
    """``body`` with each of its own ``if (c) break;`` written ``if (c) flag = 1; if (flag) break;``."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Exit) and s.kind == "break":
            out += [If(s.cond, (Assign(flag, Const("int", 1)),)), Exit("break", Var(flag, "int"))]
        elif isinstance(s, If):
            out.append(replace(s, then=_raise(s.then, flag), orelse=_raise(s.orelse, flag)))
        else:
            out.append(s)
    return tuple(out)
