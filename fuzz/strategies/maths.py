"""Hypothesis strategies for floating-point arithmetic and the math built-ins (area ``math``).

``math_programs(caps, policy)`` draws programs whose statements each apply one operation of
:data:`lang.maths.FUNCTIONS` (or ``+ - *`` on floats) to operands of the parameters' kinds:
float, double (where a device has fp64) or half (where one has fp16) scalars and vectors (the
geometric functions take 1 to 4 lanes, cross 3 or 4; the half_ and fast_ forms float only).
Float operands come from input buffers filled from pools of each function's interesting points
(±0, ±1, ±inf, NaN, subnormals, integers and half-integers where sinpi/tanpi/pown/round change
behaviour, multiples of π/2, the overflow and underflow thresholds of exp, values near 1 for
log and pow) mixed with the generic edge values and uniform bits; int operands (pown, rootn,
ldexp exponents) from small and extreme integers. A built-in with an out-parameter writes it
into an output buffer of its own (op attribute ``out``). A vector statement of a function with a
scalar-argument overload (:attr:`lang.maths.MathFn.scalar_form`: ``ldexp(float4, int)``,
``step(float, float4)`` ...) calls it in half of the draws; a program without such a vector
statement is the one the same seed gave before the overloads were drawn.

Build options (:data:`lang.maths.OPTIONS`) are program attributes: a share of the programs is
built with a random subset; -cl-fp32-correctly-rounded-divide-sqrt only where some device
reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (the program then requires it).

Every program is defined: no operation here has undefined behaviour; results the spec leaves
undefined (mix with a outside [0, 1], smoothstep with unordered edges, half_sin beyond 2^16,
...) are generated and never judged (oracles.math).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from fuzz.strategies.conversions import Builder, Caps
from fuzz.strategies.values import pools, values
from lang.ir import Buffer, Fill, Literal, Load, Op, Program, Store
from lang.maths import CR_DIVIDE_SQRT, FLOAT_ONLY, FUNCTIONS, OPTIONS
from lang.policy import Policy
from lang.types import Type, scalar

OPERATIONS = frozenset(FUNCTIONS)
"""The operations this strategy draws (tests/test_ops_table.py); ``arith`` is shared with the
conversions area."""

INTERESTING: tuple[float, ...] = (
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 2.5, 3.0, -3.0, 10.0, 0.1, 100.0, 1e-3,
    math.pi, -math.pi, math.pi / 2, -math.pi / 2, 3 * math.pi / 2, math.pi / 4, 2 * math.pi, 1e4, 1e10, -1e10,
    88.72283935546875, 89.0, -87.33654022216797, -103.97, 709.782712893384, -745.1332191019411, 11.0898,
    0.9999999, 1.0000001, 0.99, 1.01, 2.0**24, 2.0**24 + 2, 2.0**53, -2.0**24, 65504.0, 2.0**16, 2.0**16 + 1,
    1e30, -1e30, 1e-30, 3e38, -3e38, 1e300, 1e-300, math.inf, -math.inf, math.nan,
)
"""Operands where the math built-ins change behaviour (edge cases of §7.5, domain limits, ties of
round and rint, the integers and half-integers of the pi forms and pown, thresholds of exp)."""

INT_POINTS: tuple[int, ...] = (0, 1, -1, 2, -2, 3, -3, 4, 5, 7, 8, -8, 10, 31, 64, 127, 128, -126, -127, -149, 150,
                               300, -300, 1024, -1075, 2**31 - 1, -(2**31), 2**30, 12345)


def _bits(v: float, tname: str) -> int:
    s = scalar(tname)
    with np.errstate(all="ignore"):
        return int(np.array(v, np.float64).astype(s.dtype).view(s.bits_dtype))


@st.composite
def float_pool(draw, tname: str, max_size: int) -> tuple[int, ...]:
    """Bit patterns of the function-relevant points and, beside them, generic edge values."""
    points = draw(st.lists(st.sampled_from(INTERESTING), min_size=1, max_size=max_size))
    extra = draw(pools(tname, max(1, max_size // 2)))
    scale = draw(st.lists(st.floats(-40, 40, allow_nan=False), max_size=4))
    near = [math.copysign(2.0**e, e) for e in scale]
    return tuple(dict.fromkeys([_bits(v, tname) for v in points + near] + list(extra)))


class _Math:
    """One program's builder state on top of the shared :class:`Builder`."""

    def __init__(self, b: Builder, floats: tuple[str, ...]) -> None:
        self.b, self.floats = b, floats

    def load(self, t: Type) -> Load:
        b = self.b
        s = scalar(t.scalar)
        if s.is_float:
            pool = b.draw(float_pool(t.scalar, b.policy.pool_max))
        else:
            pool = tuple(v & ((1 << s.bits) - 1) for v in b.draw(st.lists(st.sampled_from(INT_POINTS), min_size=1,
                                                                           max_size=8)))
        buf = Buffer(b.name("in"), t, "in", Fill(b.draw(st.integers(0, 2**32 - 1)), pool))
        b.buffers.append(buf)
        return Load(buf.name, t)

    def operand(self, t: Type):
        b = self.b
        if b.chance(b.policy.p_literal_operand):
            if scalar(t.scalar).is_float:
                return Literal(t, tuple(_bits(b.draw(st.sampled_from(INTERESTING)), t.scalar) for _ in range(t.width)))
            return Literal(t, tuple(b.draw(values(t.scalar)) for _ in range(t.width)))
        same = [x.name for x in b.buffers if x.role == "in" and x.type == t]
        if same and b.chance(b.policy.p_reuse_input):
            return Load(b.rnd.choice(same), t)
        return self.load(t)

    def statement(self) -> Store:
        b = self.b
        names = list(FUNCTIONS) + ["arith"]
        name = b.rnd.choice(names)
        tname = "float" if name in FLOAT_ONLY else b.rnd.choice(self.floats)
        if name == "arith":
            t = Type(tname, b.width())
            op = Op("arith", (self.operand(t), self.operand(t)), t, (("operator", b.rnd.choice("+-*")),))
            return Store(b.output(t), op)
        f = FUNCTIONS[name]
        width = b.rnd.choice(f.geometric_widths) if f.group == "geometric" else b.width()
        t = Type(tname, width)
        forms = f.forms(t)  # a vector statement: the all-vector and the scalar-argument overload, half each
        params = b.rnd.choice(forms) if len(forms) > 1 else forms[0]
        args = tuple(self.operand(f.operand_type(p, t)) for p in params if p not in "GI")
        attrs = ()
        if f.out:
            attrs = (("out", b.output(f.operand_type(f.out, t))),)
        op = Op(name, args, f.result_type(t), attrs)
        return Store(b.output(op.type), op)


@st.composite
def math_programs(draw, caps: Caps = Caps(), policy: Policy = Policy()) -> Program:
    """Programs of floating-point operations (see the module docstring)."""
    rnd = draw(st.randoms(use_true_random=True))
    floats = ["float"]
    requires = set()
    if caps.fp64 and rnd.random() < policy.p_fp64:
        floats.append("double")
        requires.add("fp64")
    if caps.fp16 and rnd.random() < policy.p_fp16:
        floats.append("half")
        requires.add("fp16")
    b = Builder(draw, rnd, policy, tuple(floats))
    m = _Math(b, tuple(floats))
    body = [m.statement() for _ in range(policy.math_statements)]
    options = []
    if rnd.random() < policy.p_build_options:
        options = [o for o in OPTIONS if rnd.random() < policy.p_each_option
                   and (o != "-cl-fp32-correctly-rounded-divide-sqrt" or caps.cr_divide_sqrt)]
    if "-cl-fp32-correctly-rounded-divide-sqrt" in options:
        requires.add(CR_DIVIDE_SQRT)
    if "cl2.0" in caps.versions and rnd.random() < policy.p_opencl_c_2:  # Table 67 needs OpenCL C >= 2.0
        requires.add("cl2.0")
    used = {bb.type.scalar for bb in b.buffers}
    requires = {r for r in requires if r not in ("fp64", "fp16") or {"fp64": "double", "fp16": "half"}[r] in used}
    return Program(tuple(b.buffers), tuple(body), policy.math_global_size, " ".join(options), frozenset(requires),
                   "math")

