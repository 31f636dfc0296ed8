"""A SPIR-V module under construction (:class:`Module`): ids, logical-layout sections, types,
constants and the binary header. Opcodes and enumerants come from the official grammar
(:mod:`fuzz.emit.grammar`).
"""

from __future__ import annotations

import struct
from typing import Callable

import numpy as np

from fuzz.emit.grammar import grammar
from fuzz.emit.spirv.opcodes import SCOPES
from lang.ir import Literal, Op
from lang.types import Type, scalar

VERSION = (1, 0)
GENERATOR = 0  # no registered generator id


def _string_words(text: str) -> list[int]:
    """A LiteralString: UTF-8, NUL-terminated, padded with NULs to whole words."""
    raw = text.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


class Module:
    """A SPIR-V module under construction: logical-layout sections, type and constant caches."""

    SECTIONS = ("capability", "ext_import", "memory_model", "entry_point", "execution_mode", "debug",
                "annotation", "global", "function")

    def __init__(self) -> None:
        self.g = grammar()
        self.bound = 1
        self.sections: dict[str, list[int]] = {s: [] for s in self.SECTIONS}
        self._types: dict[tuple, int] = {}
        self.constants: dict[tuple, int] = {}  # by key; images' constant samplers are cached here too
        self._capabilities: set[str] = set()
        self.std = 0  # the id of the imported OpenCL.std instruction set
        # the kernel being written: each buffer's element pointer, the statement's output buffer
        self.pointers: dict[str, int] = {}
        self.target = ""
        # atomics: each shared buffer's first element (of the work-group's partition), its storage
        # class, and the work-item's ids (ulong) an atomic's location is computed from
        self.shared: dict[str, tuple[int, str]] = {}
        self.ids: dict[str, int] = {}
        # images: each image parameter and its type; each sampler (a parameter or a constant)
        self.images: dict[str, tuple[int, int]] = {}
        self.samplers: dict[str, int] = {}
        # the function being written: its Function-storage variables (:meth:`variable`), spliced in
        # after its first block's OpLabel by :meth:`end_function`, and where that label ends
        self._variables: list[int] = []
        self._entry = 0

    def id(self) -> int:
        self.bound += 1
        return self.bound - 1

    def _encode(self, opname: str, operands: tuple[int | str, ...]) -> list[int]:
        words: list[int] = []
        for o in operands:
            words.extend(_string_words(o) if isinstance(o, str) else [o])
        return [(len(words) + 1) << 16 | self.g.opcode(opname), *words]

    def inst(self, section: str, opname: str, *operands: int | str) -> None:
        self.sections[section].extend(self._encode(opname, operands))

    def op(self, opname: str, result_type: int, *operands: int) -> int:
        """A function-body instruction with a result; returns the result id."""
        rid = self.id()
        self.inst("function", opname, result_type, rid, *operands)
        return rid

    def ext(self, name: str, result_type: int, *operands: int) -> int:
        """An OpenCL.std extended instruction (OpExtInst)."""
        return self.op("OpExtInst", result_type, self.std, self.g.opencl_std[name], *operands)

    # -- functions -----------------------------------------------------------------------------

    def entry_label(self) -> int:
        """The OpLabel of the first block of the function being written (its id): the function's
        variables (:meth:`variable`) will stand right after it."""
        label = self.id()
        self.inst("function", "OpLabel", label)
        self._entry = len(self.sections["function"])
        return label

    def variable(self, pointee: int) -> int:
        """A Function-storage OpVariable of the function being written (its id), placed at the
        start of the function's first block, where SPIR-V 1.0 §2.4 requires every one to be."""
        var = self.id()
        self._variables += self._encode("OpVariable", (self.pointer("Function", pointee), var,
                                                       self.g.enum("StorageClass", "Function")))
        return var

    def end_function(self) -> None:
        """OpFunctionEnd, once the function's variables are spliced in after its first OpLabel."""
        body = self.sections["function"]
        body[self._entry:self._entry] = self._variables
        self._variables = []
        self.inst("function", "OpFunctionEnd")

    def capability(self, name: str) -> None:
        if name not in self._capabilities:
            self._capabilities.add(name)
            self.inst("capability", "OpCapability", self.g.enum("Capability", name))

    def decorate(self, target: int, decoration: str, *literals: int) -> None:
        self.inst("annotation", "OpDecorate", target, self.g.enum("Decoration", decoration), *literals)

    # -- types ---------------------------------------------------------------------------------

    def declare_type(self, key: tuple, opname: str, *operands: int) -> int:
        """The id of the type ``key``, declared as ``opname`` of ``operands`` the first time."""
        if key not in self._types:
            tid = self.id()
            self.inst("global", opname, tid, *operands)
            self._types[key] = tid
        return self._types[key]

    def void(self) -> int:
        return self.declare_type(("void",), "OpTypeVoid")

    def scalar_type(self, name: str) -> int:
        s = scalar(name)
        if s.is_float:
            self.capability({16: "Float16", 32: "Kernel", 64: "Float64"}[s.bits])
            return self.declare_type(("float", s.bits), "OpTypeFloat", s.bits)
        self.capability({8: "Int8", 16: "Int16", 32: "Kernel", 64: "Int64"}[s.bits])
        return self.declare_type(("int", s.bits), "OpTypeInt", s.bits, 0)  # Kernel: Signedness 0

    def type(self, t: Type) -> int:
        elem = self.scalar_type(t.scalar)
        if t.width == 1:
            return elem
        if t.width > 4:
            self.capability("Vector16")
        return self.declare_type(("vector", elem, t.width), "OpTypeVector", elem, t.width)

    def sampler_type(self) -> int:
        return self.declare_type(("sampler",), "OpTypeSampler")

    def bool_type(self, width: int = 1) -> int:
        """OpTypeBool, or a vector of it (comparison results, OpSelect conditions)."""
        b = self.declare_type(("bool",), "OpTypeBool")
        if width == 1:
            return b
        if width > 4:
            self.capability("Vector16")
        return self.declare_type(("vector", b, width), "OpTypeVector", b, width)

    def struct(self, *members: int) -> int:
        return self.declare_type(("struct", members), "OpTypeStruct", *members)

    def array(self, elem: int, count: int) -> int:
        """OpTypeArray of ``count`` elements (the length a uint constant)."""
        return self.declare_type(("array", elem, count), "OpTypeArray", elem, self.constant("uint", count))

    def pointer(self, storage: str, pointee: int) -> int:
        sc = self.g.enum("StorageClass", storage)
        return self.declare_type(("pointer", sc, pointee), "OpTypePointer", sc, pointee)

    def function_type(self, ret: int, *params: int) -> int:
        return self.declare_type(("function", ret, params), "OpTypeFunction", ret, *params)

    # -- constants -----------------------------------------------------------------------------

    def constant(self, name: str, bits: int) -> int:
        """A scalar constant of type ``name`` with exactly these bits (low word first)."""
        s = scalar(name)
        tid = self.scalar_type(name)
        key = ("const", tid, bits)
        if key not in self.constants:
            cid = self.id()
            words = [bits & 0xFFFFFFFF, bits >> 32] if s.bits == 64 else [bits]
            self.inst("global", "OpConstant", tid, cid, *words)
            self.constants[key] = cid
        return self.constants[key]

    def literal(self, lit: Literal) -> int:
        lanes = [self.constant(lit.type.scalar, b) for b in lit.bits]
        if lit.type.width == 1:
            return lanes[0]
        tid = self.type(lit.type)
        key = ("composite", tid, tuple(lanes))
        if key not in self.constants:
            cid = self.id()
            self.inst("global", "OpConstantComposite", tid, cid, *lanes)
            self.constants[key] = cid
        return self.constants[key]

    def splat(self, t: Type, value: float | int) -> int:
        """The constant ``value`` (a number) in every lane of ``t``."""
        elem = t.elem
        bits = int(np.array(value, elem.dtype).view(elem.bits_dtype))
        return self.literal(Literal(t, (bits,) * t.width))

    def _typed_value(self, opname: str, tid: int) -> int:
        """A value of type ``tid`` that only its opcode defines (OpUndef, OpConstantNull), declared once."""
        key = (opname, tid)
        if key not in self.constants:
            cid = self.id()
            self.inst("global", opname, tid, cid)
            self.constants[key] = cid
        return self.constants[key]

    def builtin(self, name: str, t: Type) -> int:
        """An Input variable of the work-item built-in ``name`` of type ``t`` (a ulong3, or WorkDim's
        uint: OpenCL SPIR-V environment §2.9), declared constant."""
        var = self.id()
        input_ = self.g.enum("StorageClass", "Input")
        self.inst("global", "OpVariable", self.pointer("Input", self.type(t)), var, input_)
        self.decorate(var, "BuiltIn", self.g.enum("BuiltIn", name))
        self.decorate(var, "Constant")
        return var

    def address(self, base: int, offset: int, t: Type, index: int) -> int:
        """``(global T*)(base + offset) + index`` (``index`` a ulong) as a pointer to T."""
        ulong = self.type(Type("ulong"))
        at = self.op("OpIAdd", ulong, self.op("OpIMul", ulong, index, self.constant("ulong", t.size)),
                     self.constant("ulong", offset))
        byte = self.op("OpInBoundsPtrAccessChain", self.pointer("CrossWorkgroup", self.type(Type("uchar"))), base, at)
        return self.op("OpBitcast", self.pointer("CrossWorkgroup", self.type(t)), byte)

    def undef(self, tid: int) -> int:
        return self._typed_value("OpUndef", tid)

    def null(self, tid: int) -> int:
        """OpConstantNull of type ``tid``: zero in every lane."""
        return self._typed_value("OpConstantNull", tid)

    def words(self) -> list[int]:
        header = [self.g.magic, VERSION[0] << 16 | VERSION[1] << 8, GENERATOR, self.bound, 0]
        return header + [w for s in self.SECTIONS for w in self.sections[s]]


def barrier(m: Module) -> None:
    """barrier(CLK_LOCAL_MEM_FENCE): Workgroup execution and memory scope, SequentiallyConsistent
    | WorkgroupMemory (OpenCL SPIR-V environment §4; SPIR-V environment 2.2 (2017), "OpenCL 1.2",
    "Validation Rules")."""
    workgroup = m.constant("uint", SCOPES["work_group"])
    m.inst("function", "OpControlBarrier", workgroup, workgroup, m.constant("uint", 0x10 | 0x100))


Emitter = Callable[[Module, Op, list[int]], int]  # an operation's handler: its result's id
