"""The values of a flow program's function in SPIR-V (:class:`Values`; lang.flow's expressions,
the meaning :mod:`fuzz.emit.opencl_flow` writes in OpenCL C, instruction by instruction).

A scalar variable is an SSA value (its current id in :attr:`Values.values`, joined by OpPhi where
control flow meets, :mod:`fuzz.emit.spirv.flow_kernel`), or, where a helper takes its address,
a Function-storage OpVariable (:attr:`Values.memory`). Operators are those of the OpenCL C text
(:data:`fuzz.emit.opencl_flow.SYMBOLS`) on the promoted type (OpSConvert/OpUConvert by the
operand's signedness, OpenCL SPIR-V environment §6.2); shift counts are masked to the width;
the guarded signed forms compute the wrapping result (SPIR-V integer arithmetic wraps unless
decorated NoSignedWrap) and select the first operand where the exact result would not fit;
division and remainder divide by 1 where the divisor is 0 or the pair is MIN, -1
(:func:`fuzz.emit.spirv.values.safe_divisor`); the integer built-ins and ``fma`` are OpenCL.std
instructions (lang.ops.IntegerBuiltin.spirv_name: s_/u_ by the operands' signedness).
Work-item functions read the BuiltIn Input variables (OpenCL SPIR-V environment §2.9), the
linear ids spelled from the per-dimension values as in the OpenCL C text (their BuiltIns
GlobalLinearId and LocalInvocationIndex in programs that require ``cl2.0``, lang.flow_launch).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzz.emit.opencl_flow import SYMBOLS
from fuzz.emit.spirv import flow_vectors
from fuzz.emit.spirv.flow import Blocks
from fuzz.emit.spirv.module import Module
from fuzz.emit.spirv.opcodes import ARITH, BITWISE
from fuzz.emit.spirv.values import compare, convert, safe_divisor, truth
from lang.flow import (
    CL2_ITEMS,
    ITEMS,
    ALoad,
    Bin,
    Call,
    Cast,
    Const,
    Expr,
    FlowProgram,
    Item,
    Load,
    Select,
    Un,
    Var,
    promoted,
    regions,
)
from lang.flow_fp import FP_BINARY, FP_CALLS
from lang.flow_launch import CL2, LINEAR
from lang.flow_vectors import EXPRESSIONS as VECTOR_EXPRESSIONS
from lang.flow_vectors import element, split, width
from lang.nodes import Literal
from lang.ops import INTEGER
from lang.types import Type, scalar

BUILTINS = {"global_id": "GlobalInvocationId", "local_id": "LocalInvocationId", "group_id": "WorkgroupId",
            "global_size": "GlobalSize", "local_size": "WorkgroupSize", "num_groups": "NumWorkgroups",
            "global_offset": "GlobalOffset", "work_dim": "WorkDim", "enqueued_local_size": "EnqueuedWorkgroupSize",
            "global_linear_id": "GlobalLinearId", "local_linear_id": "LocalInvocationIndex"}
"""The BuiltIn of each work-item function (OpenCL SPIR-V environment §2.9); WorkDim is a uint,
the linear ids size_t scalars (read only in programs that require ``cl2.0``, lang.flow_launch:
others spell them), the others size_t vectors of three components."""
assert set(BUILTINS) == set(ITEMS) | set(CL2_ITEMS), "every work-item function of lang.flow has its BuiltIn"
ALIGNED = ("MemoryAccess", "Aligned")


def ty(t: str) -> Type:
    return Type(*split(t))  # a scalar, or a vector (lang.flow_vectors)


@dataclass
class Shared:
    """What the functions of one module share: the program, its BuiltIn variables (declared on
    first use, listed by the entry point), its helpers' ids, the kernel's ``in`` argument."""

    m: Module
    p: FlowProgram
    builtins: dict[str, int] = field(default_factory=dict)
    functions: dict[str, int] = field(default_factory=dict)
    inputs: int = 0  # the kernel's ``in`` parameter

    def builtin(self, fn: str) -> int:
        if fn not in self.builtins:
            t = Type("uint") if fn == "work_dim" else Type("ulong") if fn in LINEAR else Type("ulong", 3)
            self.builtins[fn] = self.m.builtin(BUILTINS[fn], t)
        return self.builtins[fn]


class Values(Blocks):
    """The values of one function's expressions (see the module docstring)."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared.m, shared.p.cfg == "structured")
        self.shared = shared
        self.types: dict[str, str] = {}  # every scalar name in scope -> its type
        self.values: dict[str, int] = {}  # SSA variables -> their current id
        self.memory: dict[str, int] = {}  # variables in memory -> their pointer
        # private arrays -> (pointer, element type, length, whether the pointer is to the first element)
        self.arrays: dict[str, tuple[int, str, int, bool]] = {}

    def op(self, opname: str, t: str | int, *operands: int) -> int:
        """An instruction with a result of type ``t`` (a lang type name, or a type id)."""
        return self.m.op(opname, self.m.type(ty(t)) if isinstance(t, str) else t, *operands)

    ty = staticmethod(ty)

    def const(self, t: str, value: int) -> int:
        """A scalar constant, or a vector's with ``value`` in every component."""
        bits = value & ((1 << scalar(element(t)).bits) - 1)
        return self.m.literal(Literal(ty(t), (bits,) * width(t)))

    def store(self, pointer: int, value: int, *access: int) -> None:
        self.m.inst("function", "OpStore", pointer, value, *access)

    # -- names ---------------------------------------------------------------------------------

    def read(self, name: str) -> int:
        if name in self.memory:
            return self.op("OpLoad", self.types[name], self.memory[name])
        return self.values[name]

    def write(self, name: str, value: int) -> None:
        if name in self.memory:
            self.store(self.memory[name], value)
        else:
            self.values[name] = value

    def element(self, array: str, index: Expr) -> tuple[int, str]:
        """A pointer to ``array[index % length]`` and the element type: OpAccessChain into a
        private array variable, OpInBoundsPtrAccessChain from a helper's pointer parameter."""
        pointer, t, n, first = self.arrays[array]
        at = self.op("OpUMod", "uint", self.value(index), self.const("uint", n))
        ptr = self.m.pointer("Function", self.m.type(ty(t)))
        return self.op("OpInBoundsPtrAccessChain" if first else "OpInBoundsAccessChain", ptr, pointer, at), t

    # -- expressions ---------------------------------------------------------------------------

    def value(self, e: Expr) -> int:
        """The id of ``e``'s value."""
        if isinstance(e, VECTOR_EXPRESSIONS):
            return flow_vectors.value(self, e)
        if isinstance(e, Const):
            return self.const(e.type, e.value)
        if isinstance(e, Var):
            return self.read(e.name)
        if isinstance(e, Item):
            return self.item(e.fn, e.dim)
        if isinstance(e, Load):
            i = next(i for i in self.shared.p.inputs if i.name == e.buffer)
            at = self.op("OpUMod", "uint", self.value(e.index), self.const("uint", i.count))
            pointer = self.m.address(self.shared.inputs, regions(self.shared.p)[0][i.name], ty(i.type),
                                     self.op("OpUConvert", "ulong", at))
            return self.op("OpLoad", e.type, pointer, self.m.g.enum(*ALIGNED), scalar(e.type).size)
        if isinstance(e, ALoad):
            pointer, t = self.element(e.array, e.index)
            return self.op("OpLoad", t, pointer)
        if isinstance(e, Bin):
            return self.binary(e)
        if isinstance(e, Un):
            return self.unary(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, Cast):
            return convert(self.m, self.value(e.a), ty(e.a.type), ty(e.type))
        assert isinstance(e, Select)
        cond = self.nonzero(self.value(e.cond), e.cond.type)
        return self.op("OpSelect", e.type, cond, self.value(e.a), self.value(e.b))

    def nonzero(self, value: int, t: str) -> int:
        """The Boolean ``value != 0`` of an integer."""
        return self.op("OpINotEqual", self.m.bool_type(), value, self.const(t, 0))

    def promoted(self, e: Expr) -> tuple[int, str]:
        """``e``'s value in its promoted type (C99 §6.3.1.1)."""
        p = promoted(e.type)
        return convert(self.m, self.value(e), ty(e.type), ty(p)), p

    def binary(self, e: Bin) -> int:
        (a, t), (b, _) = self.promoted(e.a), self.promoted(e.b)
        s = scalar(t)
        if e.op in ("sadd", "ssub", "smul"):
            return self.guarded(e.op, a, b, t)
        if e.op in ("sdiv", "srem"):
            d = safe_divisor(self.m, a, b, ty(t))  # 1 where b is 0 or (a, b) is (MIN, -1)
            if e.op == "sdiv":  # a / 1 is a: the guarded quotient
                return self.op("OpSDiv" if s.signed else "OpUDiv", t, a, d)
            rem = self.op("OpSRem" if s.signed else "OpUMod", t, a, d)  # C's %: the dividend's sign
            return self.op("OpSelect", t, self.op("OpINotEqual", self.m.bool_type(), d, b), a, rem)
        symbol = SYMBOLS[e.op]
        if e.op in FP_BINARY:  # float and double / (lang.flow_fp)
            return self.op("OpFDiv", t, a, b)
        if symbol in ARITH:
            return self.op(f"Op{'F' if s.is_float else 'I'}{ARITH[symbol]}", t, a, b)
        if symbol in BITWISE:
            return self.op(BITWISE[symbol], t, a, b)
        if symbol in ("<<", ">>"):  # uint/ulong only (lang.flow_rules); the count masked to the width
            count = self.op("OpBitwiseAnd", t, b, self.const(t, s.bits - 1))
            return self.op("OpShiftLeftLogical" if symbol == "<<" else "OpShiftRightLogical", t, a, count)
        return truth(self.m, compare(self.m, a, b, ty(t), symbol), ty(t))

    def guarded(self, op: str, a: int, b: int, t: str) -> int:
        """``sadd ssub smul`` of the signed type ``t``: the wrapping result, or ``a`` where the exact
        one does not fit (the sign rule for + and -; for *, the product of the double width for
        ``int``, and for ``long`` a product that does not divide back, or -1 * MIN)."""
        boolean = self.m.bool_type()
        s = scalar(t)
        if op == "smul" and s.bits == 32:
            wide = self.op("OpIMul", "long", *(self.op("OpSConvert", "long", v) for v in (a, b)))
            over = self.op("OpLogicalOr", boolean, self.op("OpSLessThan", boolean, wide, self.const("long", s.min)),
                           self.op("OpSGreaterThan", boolean, wide, self.const("long", s.max)))
            return self.op("OpSelect", t, over, a, self.op("OpSConvert", t, wide))
        r = self.op({"sadd": "OpIAdd", "ssub": "OpISub", "smul": "OpIMul"}[op], t, a, b)
        zero = self.const(t, 0)
        if op == "smul":  # a not in {0, -1}: overflow iff r / a != b (exact division otherwise)
            small = self.op("OpLogicalOr", boolean, self.op("OpIEqual", boolean, a, zero),
                            self.op("OpIEqual", boolean, a, self.const(t, -1)))
            d = self.op("OpSelect", t, small, self.const(t, 1), a)
            wrong = self.op("OpINotEqual", boolean, self.op("OpSDiv", t, r, d), b)
            minus = self.op("OpLogicalAnd", boolean, self.op("OpIEqual", boolean, a, self.const(t, -1)),
                            self.op("OpIEqual", boolean, b, self.const(t, s.min)))
            over = self.op("OpSelect", boolean, small, minus, wrong)
        else:
            x = self.op("OpBitwiseXor", t, a, r)
            y = self.op("OpBitwiseXor", t, b if op == "sadd" else a, r if op == "sadd" else b)
            over = self.op("OpSLessThan", boolean, self.op("OpBitwiseAnd", t, x, y), zero)
        return self.op("OpSelect", t, over, a, r)

    def unary(self, e: Un) -> int:
        a, t = self.promoted(e.a)
        if e.op == "neg":
            return self.op("OpSNegate", t, a)
        if e.op == "not":
            return self.op("OpNot", t, a)
        return truth(self.m, self.op("OpIEqual", self.m.bool_type(), a, self.const(t, 0)), ty(t))

    def call(self, e: Call) -> int:
        args = [self.value(a) for a in e.args]
        if e.fn in FP_CALLS:  # fma, sqrt (lang.flow_fp)
            return self.m.ext(e.fn, self.m.type(ty(e.type)), *args)
        name = INTEGER[e.fn].spirv_name(scalar(e.args[0].type).signed)
        return self.m.ext(name, self.m.type(ty(e.type)), *args)

    def item(self, fn: str, dim: int) -> int:
        """``(uint)get_<fn>(dim)``; the linear ids as the OpenCL C text spells them."""
        if fn == "work_dim":
            return self.op("OpLoad", "uint", self.shared.builtin(fn), self.m.g.enum(*ALIGNED), 4)
        if fn in LINEAR and CL2 in self.shared.p.requires:  # the BuiltIn (lang.flow_launch)
            ulong = self.op("OpLoad", "ulong", self.shared.builtin(fn), self.m.g.enum(*ALIGNED), 8)
            return self.op("OpUConvert", "uint", ulong)
        if fn == "global_linear_id":  # (gid0 - off0) + gsz0 * ((gid1 - off1) + gsz1 * (gid2 - off2))
            d = [self.op("OpISub", "ulong", self.size("global_id", k), self.size("global_offset", k)) for k in range(3)]
            return self.op("OpUConvert", "uint", self.linear(d, [self.size("global_size", k) for k in range(2)]))
        if fn == "local_linear_id":  # lid0 + lsz0 * (lid1 + lsz1 * lid2)
            ids = [self.size("local_id", k) for k in range(3)]
            return self.op("OpUConvert", "uint", self.linear(ids, [self.size("local_size", k) for k in range(2)]))
        return self.op("OpUConvert", "uint", self.size(fn, dim))

    def size(self, fn: str, dim: int) -> int:
        """Component ``dim`` of a work-item function's BuiltIn (a size_t)."""
        v3 = self.op("OpLoad", self.m.type(Type("ulong", 3)), self.shared.builtin(fn), self.m.g.enum(*ALIGNED), 32)
        return self.op("OpCompositeExtract", "ulong", v3, dim)

    def linear(self, ids: list[int], sizes: list[int]) -> int:
        """``ids[0] + sizes[0] * (ids[1] + sizes[1] * ids[2])``."""
        inner = self.op("OpIAdd", "ulong", ids[1], self.op("OpIMul", "ulong", sizes[1], ids[2]))
        return self.op("OpIAdd", "ulong", ids[0], self.op("OpIMul", "ulong", sizes[0], inner))
