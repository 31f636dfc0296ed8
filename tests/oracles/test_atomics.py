"""The atomics oracle against hand-built histories and against brute force over every order.

A history here is one location and a list of operations, each with its operands and the result a
device "returned"; the oracle (oracles.atomics) must accept it exactly when some order of the
operations explains every returned value and the final value. The independent computation is
brute force: try every permutation and run it (tests/oracles/test_atomics.py::explained).
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from lang.ir import Buffer, Fill, Literal, Op, Program, Store
from lang.types import Type, scalar
from oracles import Violation, check, expected, histories
from oracles.atomics import RULE_FINAL, RULE_ORDER

LEGACY = ("add", "sub", "xchg", "inc", "dec", "cmpxchg", "min", "max", "and", "or", "xor")
ARITY = {name: arity for name, arity, *_ in __import__("lang.ops", fromlist=["ATOMICS"]).ATOMICS}


def program_of(t: str, ops: list[tuple], memory: str = "global") -> Program:
    """One location of type ``t``, one work-item, one statement per operation ``(kind, a, b, ...)``
    (``weak`` as a fifth element for compare-exchange)."""
    flag = any(o[0].startswith("flag") for o in ops)
    role = "local" if memory == "local" or flag else "global"
    shared = Buffer("A", Type(t), role, None if flag else Fill(0), 1, False, "flag" if flag else
                    ("atomic" if any(o[0] in ("load", "store", "compare_exchange") for o in ops) else ""))
    buffers = [shared]
    body = []
    for i, (kind, a, b, *rest) in enumerate(ops):
        form = "explicit" if kind in ("load", "store", "compare_exchange") or flag else "atom"
        rt = Type(t, 2) if kind == "compare_exchange" else Type("int") if kind.startswith("flag") else Type(t)
        args = tuple(Literal(Type(t), (x,)) for x in (a, b)[:ARITY[kind]])
        attrs = {"location": "A", "index": ("gid", 1, 1, 0), "form": form, "memory": role,
                 "order": "relaxed", "scope": "work_group"}
        if kind == "compare_exchange":
            attrs.update(weak=bool(rest and rest[0]), failure="relaxed")
        buffers.append(Buffer(f"r{i}", rt, "out"))
        body.append(Store(f"r{i}", Op(f"atomic_{kind}", args, rt, tuple(sorted(attrs.items())))))
    return Program(tuple(buffers), tuple(body), 1, area="atomics", local_size=1)


def verdict(t: str, init: int, ops: list[tuple], returned: list, final: int | None) -> list[Violation]:
    """The oracle's violations for a history: ``returned[i]`` is what operation i gave (a pair
    (expected after, success) for compare-exchange; None for stores)."""
    p = program_of(t, ops)
    s = scalar(t)
    inputs = {"A": np.array([init], s.bits_dtype).view(s.dtype)}
    actual = {}
    for i, r in enumerate(returned):
        rt = p.body[i].value.type
        bits = [0] * rt.width if r is None else list(r) if isinstance(r, tuple) else [r]
        actual[f"r{i}"] = np.array(bits, rt.elem.bits_dtype).view(rt.elem.dtype)
    if final is not None:
        actual["A"] = np.array([final], s.bits_dtype).view(s.dtype)
    h = histories(p, inputs)
    out = check(h, actual)
    # a commuting location's final value is judged lane by lane instead (rule atomic.final)
    exp = expected(p, frozenset(), inputs)
    if "A" in exp and final is not None and exp["A"].judged[0] and not exp["A"].accepts(actual["A"].view(s.bits_dtype))[0]:
        out.append(Violation(h.locations[0], RULE_FINAL, "final", []))
    return out


def ok(*args) -> bool:
    return not verdict(*args)


# -- hand-built histories -------------------------------------------------------------------------


def test_inc_returns_a_permutation_of_init_onwards():
    ops = [("inc", 0, 0)] * 4
    assert ok("int", 5, ops, [7, 5, 8, 6], 9)
    assert not ok("int", 5, ops, [7, 5, 7, 6], 9)  # 7 twice, 8 never
    assert not ok("int", 5, ops, [5, 6, 7, 8], 10)  # final must be 9
    assert ok("uint", 0xFFFFFFFE, ops[:3], [0xFFFFFFFF, 0, 0xFFFFFFFE], 1)  # wraps modulo 2^32


def test_dec_and_inc_mixed():
    ops = [("inc", 0, 0), ("dec", 0, 0), ("inc", 0, 0)]
    assert ok("int", 0, ops, [0, 1, 0], 1)  # inc, dec, inc
    assert ok("int", 0, ops, [0, 0, -1 & 0xFFFFFFFF], 1)  # dec first: -1, then inc -> 0, inc -> 1
    assert not ok("int", 0, ops, [0, 0, 0], 1)


def test_add_returns_prefix_sums_of_some_order():
    ops = [("add", 3, 0), ("add", 10, 0), ("add", 100, 0)]
    assert ok("uint", 1, ops, [111, 1, 11], 114)  # 10, 100, 3
    assert not ok("uint", 1, ops, [1, 4, 104], 114)  # 4 + 100 = 104 is not reached by 3 then 10
    assert ok("long", 2**62, [("add", 2**62, 0)] * 2, [2**62, 2**63 & (2**64 - 1)], 3 * 2**62 & (2**64 - 1))


def test_sub():
    ops = [("sub", 1, 0), ("sub", 2, 0)]
    assert ok("int", 10, ops, [8, 10], 7)
    assert not ok("int", 10, ops, [10, 10], 7)


def test_xchg_chain():
    ops = [("xchg", 1, 0), ("xchg", 2, 0), ("xchg", 3, 0)]
    assert ok("int", 0, ops, [2, 0, 1], 3)  # 2, then 1, then 3? no: 0->2 (op2) 2->1 (op1) 1->3 (op3)
    assert ok("int", 0, ops, [0, 1, 2], 3)
    assert not ok("int", 0, ops, [0, 1, 2], 2)  # the final value must be the last operand written
    assert not ok("int", 0, ops, [0, 0, 2], 3)  # 0 read twice, written once


def test_cmpxchg_successes_and_failures_form_one_chain():
    ops = [("cmpxchg", 0, 1), ("cmpxchg", 0, 2), ("cmpxchg", 1, 5)]
    assert ok("int", 0, ops, [0, 1, 1], 5)  # op0 wins, op1 fails seeing 1, op2 swaps 1 -> 5
    assert ok("int", 0, ops, [0, 5, 1], 5)  # op1 fails after op2
    assert not ok("int", 0, ops, [0, 0, 1], 5)  # two successes on the same 0
    assert not ok("int", 0, ops, [0, 2, 1], 5)  # 2 never written
    assert ok("int", 7, ops, [7, 7, 7], 7)  # every one fails


def test_min_max_signed_and_unsigned():
    assert ok("int", 0, [("min", -5 & 0xFFFFFFFF, 0), ("min", 3, 0)], [0, 0xFFFFFFFB], 0xFFFFFFFB)
    assert not ok("int", 0, [("min", -5 & 0xFFFFFFFF, 0)], [0], 0)  # signed: -5 < 0
    assert ok("uint", 0, [("min", 0xFFFFFFFB, 0)], [0], 0)  # unsigned: 0 stays
    assert ok("long", -1 & (2**64 - 1), [("max", 7, 0), ("max", 2, 0)], [2**64 - 1, 7], 7)
    assert not ok("ulong", 2**64 - 1, [("max", 7, 0)], [2**64 - 1], 7)


def test_and_or_xor():
    assert ok("uint", 0xFF, [("and", 0x0F, 0), ("and", 0x3C, 0)], [0x3C, 0xFF], 0x0C)
    assert not ok("uint", 0xFF, [("and", 0x0F, 0), ("and", 0x3C, 0)], [0xFF, 0xFF], 0x0C)
    assert ok("int", 0, [("or", 1, 0), ("or", 2, 0)], [2, 0], 3)
    assert ok("int", 5, [("xor", 5, 0), ("xor", 5, 0)], [5, 0], 5)
    assert not ok("int", 5, [("xor", 5, 0), ("xor", 5, 0)], [5, 5], 5)


def test_load_and_store():
    ops = [("store", 9, 0), ("load", 0, 0), ("load", 0, 0)]
    assert ok("int", 1, ops, [None, 1, 9], 9)
    assert not ok("int", 1, ops, [None, 1, 2], 9)  # 2 is never there
    assert not ok("int", 1, ops, [None, 1, 1], 1)  # after the store the value is 9
    assert ok("int", 1, [("add", 5, 0), ("store", 3, 0), ("add", 1, 0)], [1, None, 3], 4)
    assert ok("int", 1, [("add", 5, 0), ("store", 3, 0), ("add", 1, 0)], [3, None, 1], 8)  # add 1, store, add 5
    assert not ok("int", 1, [("add", 5, 0), ("store", 3, 0)], [2, None], 3)


def test_compare_exchange_strong_and_weak():
    strong = [("compare_exchange", 0, 4, False)]
    assert ok("int", 0, strong, [(0, 1)], 4)
    assert ok("int", 2, strong, [(2, 0)], 2)
    assert not ok("int", 0, strong, [(0, 0)], 0)  # a strong one cannot fail on a match
    assert not ok("int", 0, strong, [(3, 1)], 4)  # success must leave expected unchanged
    assert not ok("int", 0, strong, [(0, 2)], 4)  # the flag is 0 or 1
    weak = [("compare_exchange", 0, 4, True)]
    assert ok("int", 0, weak, [(0, 0)], 0)  # spurious failure
    assert not ok("int", 0, weak, [(0, 0)], 4)  # ... which writes nothing


def test_flags():
    ops = [("flag_test_and_set", 0, 0)] * 3
    assert ok("int", 0, ops, [1, 0, 1], None)
    assert not ok("int", 0, ops, [0, 0, 1], None)  # set twice from clear
    assert not ok("int", 0, ops, [1, 1, 1], None)  # the first one sees it clear
    with_clear = ops + [("flag_clear", 0, 0)]
    assert ok("int", 0, with_clear, [0, 0, 1, None], None)
    assert not ok("int", 0, with_clear, [0, 0, 0, None], None)
    assert not ok("int", 0, ops, [2, 0, 1], None)


def test_violation_says_which_value():
    (v,) = verdict("int", 5, [("inc", 0, 0)] * 3, [5, 5, 6], None)
    assert v.rule == RULE_ORDER and "0x5" in v.why


def test_disconnected_cycle_is_caught():
    # xchg 1 returns 2 and xchg 2 returns 1: a cycle 1 <-> 2 that the initial 0 never enters
    ops = [("xchg", 1, 0), ("xchg", 2, 0), ("xchg", 0, 0)]
    assert not ok("int", 0, ops, [2, 1, 0], 0)
    assert ok("int", 0, ops, [0, 1, 2], 0)


# -- brute force over every order -----------------------------------------------------------------


def explained(t: str, init: int, ops: list[tuple], returned: list, final: int | None) -> bool:
    """Whether some permutation of ``ops`` run from ``init`` returns ``returned`` and ends at
    ``final``, by running every one (an independent, obviously correct computation)."""
    s = scalar(t)
    mask = (1 << s.bits) - 1

    def signed(v):
        return v - (1 << s.bits) if s.signed and v >> (s.bits - 1) else v

    def step(value, op, r):
        kind, a, b, *rest = op
        if kind in ("store", "flag_clear"):
            return a if kind == "store" else 0
        if kind == "compare_exchange":
            e, success = r
            if success == 1:
                return b if value == a and e == a else None
            if success != 0 or e != value or (value == a and not (rest and rest[0])):
                return None
            return value
        if r != value:
            return None
        return {"add": lambda: (value + a) & mask, "sub": lambda: (value - a) & mask,
                "inc": lambda: (value + 1) & mask, "dec": lambda: (value - 1) & mask,
                "xchg": lambda: a, "cmpxchg": lambda: b if value == a else value,
                "min": lambda: a if signed(a) < signed(value) else value,
                "max": lambda: a if signed(a) > signed(value) else value,
                "and": lambda: value & a, "or": lambda: value | a, "xor": lambda: value ^ a,
                "load": lambda: value, "flag_test_and_set": lambda: 1}[kind]()

    for order in itertools.permutations(range(len(ops))):
        value = init
        for i in order:
            value = step(value, ops[i], returned[i])
            if value is None:
                break
        else:
            if final is None or value == final:
                return True
    return False


def random_history(rnd: random.Random, t: str, kinds: tuple[str, ...]):
    """A small history: a true execution in a random order, then sometimes one result changed."""
    s = scalar(t)
    mask = (1 << s.bits) - 1
    small = [0, 1, 2, 3, mask, mask - 1, 1 << (s.bits - 1)]
    pick = lambda: rnd.choice(small)  # noqa: E731 - collisions make chains interesting
    ops = []
    for _ in range(rnd.randint(1, 5)):
        kind = rnd.choice(kinds)
        ops.append((kind, pick(), pick(), *([rnd.random() < 0.5] if kind == "compare_exchange" else [])))
    init = pick()
    value, returned = init, [None] * len(ops)
    for i in rnd.sample(range(len(ops)), len(ops)):
        kind, a, b, *rest = ops[i]
        if kind == "compare_exchange":
            spurious = rest[0] and rnd.random() < 0.3
            success = value == a and not spurious
            returned[i] = (a if success else value, int(success))
            value = b if success else value
            continue
        if kind in ("store", "flag_clear"):
            value = a if kind == "store" else 0
            continue
        if kind == "flag_test_and_set":
            value = value & 1  # flags live in {0, 1}
        returned[i] = value
        value = explained_step(kind, value, a, b, s)
    final = value
    if rnd.random() < 0.6:  # perturb one observation
        j = rnd.randrange(len(ops) + 1)
        if j == len(ops):
            final = pick()
        elif returned[j] is not None:
            returned[j] = (pick(), rnd.choice([0, 1])) if isinstance(returned[j], tuple) else pick()
            if ops[j][0] == "flag_test_and_set":
                returned[j] = rnd.choice([0, 1])
    return init, ops, returned, final


def explained_step(kind, value, a, b, s):
    mask = (1 << s.bits) - 1
    signed = (lambda v: v - (1 << s.bits) if s.signed and v >> (s.bits - 1) else v)
    return {"add": (value + a) & mask, "sub": (value - a) & mask, "inc": (value + 1) & mask,
            "dec": (value - 1) & mask, "xchg": a, "cmpxchg": b if value == a else value,
            "min": a if signed(a) < signed(value) else value, "max": a if signed(a) > signed(value) else value,
            "and": value & a, "or": value | a, "xor": value ^ a, "load": value, "flag_test_and_set": 1}[kind]


@pytest.mark.parametrize("t", ["int", "uint", "long", "ulong"])
@pytest.mark.parametrize("kinds", [LEGACY, ("add", "sub", "inc", "dec", "load"), ("xchg", "cmpxchg", "load"),
                                   ("min", "max", "load", "store"), ("and", "or", "xor", "store"),
                                   ("compare_exchange", "store", "load", "add")])
def test_oracle_agrees_with_brute_force(t, kinds):
    rnd = random.Random(f"{t}{kinds}")
    accepted = rejected = 0
    for _ in range(150):
        init, ops, returned, final = random_history(rnd, t, kinds)
        truth = explained(t, init, ops, returned, final)
        assert ok(t, init, ops, returned, final) == truth, (init, ops, returned, final)
        accepted += truth
        rejected += not truth
    assert accepted > 20 and rejected > 20  # both verdicts exercised


def test_flag_histories_agree_with_brute_force():
    rnd = random.Random(7)
    for _ in range(300):
        ops = [rnd.choice([("flag_test_and_set", 0, 0), ("flag_clear", 0, 0)]) for _ in range(rnd.randint(1, 5))]
        returned = [None if k == "flag_clear" else rnd.choice([0, 1]) for k, *_ in ops]
        assert ok("int", 0, ops, returned, None) == explained("int", 0, ops, returned, None), (ops, returned)


def test_commuting_final_values_are_exact():
    p = program_of("uint", [("add", 5, 0), ("sub", 7, 0), ("inc", 0, 0), ("dec", 0, 0), ("dec", 0, 0)])
    exp = expected(p, frozenset(), {"A": np.array([3], np.uint32)})
    assert exp["A"].judged[0] and int(exp["A"].allowed[0][0]) == (3 + 5 - 7 + 1 - 2) % 2**32
    p = program_of("int", [("min", 0xFFFFFFF0, 0), ("min", 4, 0)])
    assert int(expected(p, frozenset(), {"A": np.array([0], np.int32)})["A"].allowed[0][0]) == 0xFFFFFFF0
    p = program_of("int", [("xchg", 1, 0), ("add", 1, 0)])  # does not commute: not judged lane by lane
    assert not expected(p, frozenset(), {"A": np.array([0], np.int32)})["A"].judged[0]
