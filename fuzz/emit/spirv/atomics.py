"""SPIR-V handlers of the atomic functions (lang.ops area "atomics"; oracles.atomics): OpAtomic*
on a shared buffer's element, with the Scope and Memory Semantics the OpenCL C call means."""

from __future__ import annotations

from fuzz.emit.spirv.module import Emitter, Module
from fuzz.emit.spirv.opcodes import ATOMIC_OPCODES, ORDER_BITS, SCOPES
from fuzz.emit.spirv.values import compose
from lang.ir import Op
from lang.ops import ATOMICS, Handlers
from lang.types import Type

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


def _location(m: Module, op: Op) -> int:
    """The pointer ``&A[base + (id / div) % mod]`` (opencl_c.location)."""
    ulong = m.type(Type("ulong"))
    which, div, mod, base = op.attr("index")
    index = m.ids[which]
    if div != 1:
        index = m.op("OpUDiv", ulong, index, m.constant("ulong", div))
    index = m.op("OpUMod", ulong, index, m.constant("ulong", mod))
    if base:
        index = m.op("OpIAdd", ulong, index, m.constant("ulong", base))
    first, storage = m.shared[op.attr("location")]
    elem = m.type(Type(op.type.scalar))
    if storage == "Workgroup":
        return m.op("OpInBoundsAccessChain", m.pointer(storage, elem), first, index)
    return m.op("OpInBoundsPtrAccessChain", m.pointer(storage, elem), first, index)


def _scope_and_semantics(m: Module, op: Op, order: str) -> tuple[int, int]:
    """The Scope and Memory Semantics operands. OpenCL 1.x functions: Device and Relaxed (the
    only ones an OpenCL 1.2 environment allows, OpenCL SPIR-V environment §4). C11 ones: the scope asked for
    (seq_cst and device without _explicit, §6.15.12.7), the order's bit, and for an order
    stronger than relaxed the memory it orders (CrossWorkgroupMemory for global, WorkgroupMemory
    for local, which needs Workgroup scope: SPIR-V environment 2.2 (2017),
    "cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics")."""
    form = op.attr("form")
    if form in ("atomic", "atom"):
        return m.constant("uint", SCOPES["device"]), m.constant("uint", 0)
    scope = op.attr("scope") if form == "explicit" else "device"
    bits = ORDER_BITS[order]
    if bits:
        if op.attr("memory") != "local":
            bits |= 0x200
        elif scope == "work_group":
            bits |= 0x100
    return m.constant("uint", SCOPES[scope]), m.constant("uint", bits)


def _atomic(m: Module, op: Op, args: list[int]) -> int | None:
    """OpAtomic* on the location; a compare-exchange gives (original, original == expected) as
    the two lanes, test-and-set its Boolean as 0 or 1; store and clear write no result."""
    name = op.op[len("atomic_"):]
    t = Type(op.type.scalar)
    tid = m.type(t)
    order = op.attr("order") if op.attr("form") == "explicit" else "seq_cst"
    scope, semantics = _scope_and_semantics(m, op, order)
    p = _location(m, op)
    if name in ("store", "flag_clear"):
        m.inst("function", ATOMIC_OPCODES[name], p, scope, semantics, *args)
        return None
    if name in ("cmpxchg", "compare_exchange"):
        failure = semantics
        if name == "compare_exchange" and op.attr("form") == "explicit":
            failure = _scope_and_semantics(m, op, op.attr("failure"))[1]
        opcode = "OpAtomicCompareExchangeWeak" if op.attr("weak") else "OpAtomicCompareExchange"
        original = m.op(opcode, tid, p, scope, semantics, failure, args[-1], args[0])
        if name == "cmpxchg":
            return original
        success = m.op("OpIEqual", m.bool_type(), original, args[0])
        flag = m.op("OpSelect", tid, success, m.splat(t, 1), m.splat(t, 0))
        return compose(m, op.type, [original, flag])
    if name == "flag_test_and_set":
        was_set = m.op("OpAtomicFlagTestAndSet", m.bool_type(), p, scope, semantics)
        return m.op("OpSelect", tid, was_set, m.splat(t, 1), m.splat(t, 0))
    if name in ("min", "max"):
        opcode = f"OpAtomic{'S' if t.elem.signed else 'U'}{name.title()}"
    else:
        opcode = ATOMIC_OPCODES[name]
    return m.op(opcode, tid, p, scope, semantics, *args)


for _name, *_ in ATOMICS:
    emitter(f"atomic_{_name}")(_atomic)
