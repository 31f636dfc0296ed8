"""The SPIR-V-only references against Python integers, exact fractions and hand-worked examples
of the SPIR-V instruction descriptions (tests/exact.py shares no code with the oracle)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from exact import INTS, NP, UNSIGNED, decode, int_range, round_to_float

from fuzz.strategies.values import edge_bits
from lang.ir import Load, Op
from lang.types import Type
from oracles import REFERENCES, Expectation

RNG = np.random.default_rng(11)
N = 4096


def _values(name: str, n: int = N) -> np.ndarray:
    """Edge values and uniform bit patterns of ``name``, as typed values."""
    nbits = np.dtype(NP[name]).itemsize * 8
    edges = np.array(edge_bits(name), dtype=np.uint64).astype(UNSIGNED[nbits])
    uniform = RNG.integers(0, 2**nbits, n, dtype=np.uint64, endpoint=False).astype(UNSIGNED[nbits])
    bits = np.where(RNG.random(n) < 0.7, edges[RNG.integers(0, len(edges), n)], uniform)
    return bits.view(NP[name])


def _ref(op: str, types: list[Type], result: Type, attrs: dict, arrays: list[np.ndarray], n: int,
         ftz: frozenset = frozenset()) -> Expectation:
    node = Op(op, tuple(Load(f"in{i}", t) for i, t in enumerate(types)), result, tuple(sorted(attrs.items())))
    args = [Expectation.exact(t.scalar, a) for t, a in zip(types, arrays)]
    return REFERENCES[op](node, args, n, ftz)


def _ints(bits: np.ndarray, name: str) -> list[int]:
    nbits, signed = INTS[name]
    out = [int(b) for b in bits.astype(UNSIGNED[nbits]).astype(np.uint64)]
    return [b - (1 << nbits) if signed and b >> (nbits - 1) else b for b in out]


# -- OpBitcast -------------------------------------------------------------------------------------

@pytest.mark.parametrize("src,dst", [(Type("ulong"), Type("uint", 2)), (Type("uint", 2), Type("uchar", 8)),
                                     (Type("float", 4), Type("ulong", 2)), (Type("char", 16), Type("double", 2)),
                                     (Type("short", 2), Type("float")), (Type("ushort", 8), Type("int", 4))])
def test_bitcast_maps_low_bits_to_low_components(src, dst):
    n = 64
    values = _values(src.scalar, n * src.width)
    e = _ref("bitcast", [src], dst, {}, [values], n)
    sbits, dbits = (np.dtype(NP[s]).itemsize * 8 for s in (src.scalar, dst.scalar))
    raw = [int(b) for b in values.view(UNSIGNED[sbits]).astype(np.uint64)]
    for item in range(n):
        whole = sum(raw[item * src.width + i] << (i * sbits) for i in range(src.width))
        want = [(whole >> (j * dbits)) & ((1 << dbits) - 1) for j in range(dst.width)]
        got = [int(b) for b in e.allowed[0][item * dst.width:(item + 1) * dst.width]]
        assert got == want
    assert e.judged.all()


def test_bitcast_worked_example():
    # ulong 0x0807060504030201 -> uchar8: the lowest byte is component 0
    e = _ref("bitcast", [Type("ulong")], Type("uchar", 8), {}, [np.array([0x0807060504030201], np.uint64)], 1)
    assert list(e.allowed[0]) == [1, 2, 3, 4, 5, 6, 7, 8]


# -- OpVectorShuffle -------------------------------------------------------------------------------

def test_shuffle_worked_example_with_an_undefined_component():
    a = np.array([10, 11, 12, 13], np.int32)  # Vector 1: components 0..3
    b = np.array([20, 21], np.int32)  # Vector 2: components 4, 5
    e = _ref("vector_shuffle", [Type("int", 4), Type("int", 2)], Type("int", 3), {"components": (5, 0, -1)}, [a, b], 1)
    assert list(e.allowed[0][:2].view(np.int32)) == [21, 10]
    assert list(e.judged) == [True, True, False]


# -- remainders ------------------------------------------------------------------------------------

def _int_remainder(x: int, y: int, name: str, mode: str) -> int:
    lo, _ = int_range(name)
    if y == 0 or (INTS[name][1] and x == lo and y == -1):
        y = 1  # the program's safe divisor
    trunc = abs(x) % abs(y) * (1 if x >= 0 else -1)  # sign of the dividend
    if mode == "rem" and INTS[name][1]:
        return trunc
    return x - y * math.floor(Fraction(x, y))  # sign of the divisor (OpSMod / OpUMod)


@pytest.mark.parametrize("name", list(INTS))
@pytest.mark.parametrize("mode", ["rem", "mod"])
def test_integer_remainders_against_python_integers(name, mode):
    x, y = _values(name), _values(name)
    y[:8] = [0, 1, 0, 1, 0, 1, 0, 1] if not INTS[name][1] else [0, -1, -1, 0, 1, -1, 0, -1]
    if INTS[name][1]:
        x[:4] = int_range(name)[0]  # MIN % -1: undefined, made safe
    t = Type(name)
    e = _ref("rem", [t, t], t, {"mode": mode}, [x, y], N)
    want = [_int_remainder(a, b, name, mode) for a, b in zip(_ints(x, name), _ints(y, name))]
    assert _ints(e.allowed[0], name) == want
    assert e.judged.all()


def test_integer_remainder_signs_worked_example():
    t = Type("int", 4)
    x = np.array([7, -7, 7, -7], np.int32)
    y = np.array([3, 3, -3, -3], np.int32)
    rem = _ref("rem", [t, t], t, {"mode": "rem"}, [x, y], 1).reference
    mod = _ref("rem", [t, t], t, {"mode": "mod"}, [x, y], 1).reference
    assert list(rem) == [1, -1, 1, -1]  # OpSRem: sign of Operand 1
    assert list(mod) == [1, 2, -2, -1]  # OpSMod: sign of Operand 2


@pytest.mark.parametrize("name", ["float", "double"])
@pytest.mark.parametrize("mode", ["rem", "mod"])
def test_float_remainders_against_fractions(name, mode):
    x, y = _values(name), _values(name)
    t = Type(name)
    e = _ref("rem", [t, t], t, {"mode": mode}, [x, y], N)
    nbits = FLOAT_BITS[name]
    checked = 0
    for i in range(N):
        (qa, _), (qb, _) = decode(int(x.view(UNSIGNED[nbits])[i]), name), decode(int(y.view(UNSIGNED[nbits])[i]), name)
        if not (isinstance(qa, Fraction) and isinstance(qb, Fraction)):
            assert not e.judged[i]  # NaN or infinite operands are not judged
            continue
        if qb == 0:
            qb = Fraction(1)  # the program's safe divisor
        if abs(qa) >= abs(qb):  # the remainder involves a division: no accuracy is specified
            assert not e.judged[i]
            continue
        r = qa - qb * math.trunc(qa / qb)
        if mode == "mod" and r != 0 and (r < 0) != (qb < 0):
            r += qb
        bits, case = round_to_float(r, r < 0, name, "rte")
        allowed = {int(a[i]) for a in e.allowed}
        if case != "exact" and case != "subnormal":  # OpFMod results that need rounding: unjudged
            assert mode == "mod" and not e.judged[i]
            continue
        assert e.judged[i]
        if r == 0:
            assert allowed == {0, 1 << (nbits - 1)}  # either zero
        else:
            assert bits in allowed and len(allowed) == 1
        checked += 1
    assert checked > N // 5


FLOAT_BITS = {"float": 32, "double": 64}


def test_float_remainders_are_not_judged_on_flushed_denormals():
    t = Type("float")
    tiny = np.array([1e-40, 3.0, 1.0], np.float32)
    y = np.array([3.0, 1e-40, 2.0], np.float32)
    e = _ref("rem", [t, t], t, {"mode": "rem"}, [tiny, y], 3, frozenset({"float"}))
    assert list(e.judged) == [False, False, True]


# -- extended arithmetic ---------------------------------------------------------------------------

def _extended(opcode: str, member: int, x: int, y: int, name: str) -> int:
    nbits = INTS[name][0]
    mask = (1 << nbits) - 1
    ux, uy = x & mask, y & mask
    if opcode == "IAddCarry":
        total = ux + uy
        return total & mask if member == 0 else total >> nbits
    if opcode == "ISubBorrow":
        return (ux - uy) & mask if member == 0 else int(ux < uy)
    product = x * y if opcode == "SMulExtended" else ux * uy  # exact
    return (product & mask) if member == 0 else (product >> nbits) & mask


@pytest.mark.parametrize("name,opcode", [(n, op) for n, (_, signed) in INTS.items()
                                         for op in ("IAddCarry", "ISubBorrow", "UMulExtended", "SMulExtended")
                                         if (op == "SMulExtended") == signed])
def test_extended_arithmetic_against_python_integers(name, opcode):
    x, y = _values(name), _values(name)
    t = Type(name)
    nbits = INTS[name][0]
    for member in (0, 1):
        e = _ref("extended", [t, t], t, {"opcode": opcode, "member": member}, [x, y], N)
        got = [int(b) for b in e.allowed[0].astype(np.uint64)]
        want = [_extended(opcode, member, a, b, name) for a, b in zip(_ints(x, name), _ints(y, name))]
        assert got == want, (opcode, member, nbits)


# -- OpSelect, OpAny, OpAll -----------------------------------------------------------------------

def _compare(a, b, how: str, ordered: bool) -> bool:
    if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
        return not ordered
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[how]


@pytest.mark.parametrize("name", ["int", "uint", "char", "ulong", "float", "double"])
@pytest.mark.parametrize("how", ["==", "!=", "<", "<=", ">", ">="])
def test_select_and_reduce_against_python_comparisons(name, how):
    width, n = 4, N // 4
    a, b = _values(name), _values(name)
    b[: N // 2] = a[: N // 2]  # equal operands are common
    x, y = _values("uint"), _values("uint")
    t, u = Type(name, width), Type("uint", width)
    for ordered in ((True, False) if name in ("float", "double") else (True,)):
        attrs = {"compare": how, "ordered": ordered}
        pa = [float(v) if name in ("float", "double") else int(v) for v in a]
        pb = [float(v) if name in ("float", "double") else int(v) for v in b]
        cond = [_compare(p, q, how, ordered) for p, q in zip(pa, pb)]
        sel = _ref("op_select", [t, t, u, u], u, attrs, [a, b, x, y], n)
        assert list(sel.reference) == [int(xx) if c else int(yy) for c, xx, yy in zip(cond, x, y)]
        for fold, py in (("any", any), ("all", all)):
            red = _ref("reduce", [t, t], Type("int"), {**attrs, "reduce": fold}, [a, b], n)
            assert list(red.reference) == [int(py(cond[i * width:(i + 1) * width])) for i in range(n)]


def test_select_allows_the_flushed_comparison_where_denormals_may_flush():
    t = Type("float", 2)
    a = np.array([1e-40, 1.0], np.float32)  # a subnormal compared with +0: equal once flushed
    b = np.array([0.0, 1.0], np.float32)
    x, y = np.array([1, 1], np.int32), np.array([2, 2], np.int32)
    u = Type("int", 2)
    exact = _ref("op_select", [t, t, u, u], u, {"compare": "=="}, [a, b, x, y], 1)
    flush = _ref("op_select", [t, t, u, u], u, {"compare": "=="}, [a, b, x, y], 1, frozenset({"float"}))
    assert [int(v) for v in exact.allowed[0]] == [2, 1] and len(exact.allowed) == 1
    assert {int(c[0]) for c in flush.allowed} == {1, 2}
