"""The kernel function of a program's SPIR-V module (see :mod:`fuzz.emit.spirv`).

The module under construction is :class:`fuzz.emit.spirv.module.Module`; conversions and the
other values the operations' handlers share are in :mod:`fuzz.emit.spirv.values`, their tables in
:mod:`fuzz.emit.spirv.opcodes`; each operation's handler is in the module of its area
(conversions, only, expressions, atomics, images, maths), and :data:`EMITTERS` gathers them.
A shaped program's structure (lang.shapes) is :class:`fuzz.emit.spirv.shapes.Shapes`: its helper
functions before the kernel, the steps that compute the element index (instead of ``gid``) and
the wraps around the statements.
"""

from __future__ import annotations

import numpy as np

from fuzz.emit.opencl_c import KERNEL_NAME
from fuzz.emit.spirv import atomics, conversions, expressions, images, maths, only
from fuzz.emit.spirv.images import constant_sampler, image_type
from fuzz.emit.spirv.module import Emitter, Module, barrier
from fuzz.emit.spirv.opcodes import SCOPES
from fuzz.emit.spirv.shapes import Shapes
from fuzz.emit.spirv.values import operand
from lang.declared import check_reader
from lang.ir import Expr, Literal, Load, Program
from lang.layout import layout, sampler_arguments
from lang.ops import OPS, Handlers
from lang.types import Type

EMITTERS: Handlers[Emitter] = Handlers({**conversions.EMITTERS, **only.EMITTERS, **expressions.EMITTERS,
                                        **atomics.EMITTERS, **images.EMITTERS, **maths.EMITTERS})
check_reader("the SPIR-V emitter", EMITTERS, OPS)


class _Kernel:
    """Emission state of one program's kernel function."""

    def __init__(self, m: Module, program: Program) -> None:
        self.m, self.program = m, program
        self.layout = layout(program)
        self.ulong = m.type(Type("ulong"))
        self.uchar_ptr = m.pointer("CrossWorkgroup", m.type(Type("uchar")))

    def expression(self, e: Expr, pointers: dict[str, int]) -> int:
        m = self.m
        if isinstance(e, Load):
            return m.op("OpLoad", m.type(e.type), pointers[e.buffer], m.g.enum("MemoryAccess", "Aligned"), e.type.size)
        if isinstance(e, Literal):
            return m.literal(e)
        return EMITTERS[e.op](m, e, [self.expression(a, pointers) for a in e.args])


def _if(m: Module, cond: int, then) -> None:
    """``if (cond) { then() }`` as a selection construct."""
    body, merge = m.id(), m.id()
    m.inst("function", "OpSelectionMerge", merge, m.g.enum("SelectionControl", "None"))
    m.inst("function", "OpBranchConditional", cond, body, merge)
    m.inst("function", "OpLabel", body)
    then()
    m.inst("function", "OpBranch", merge)
    m.inst("function", "OpLabel", merge)


def _shared(m: Module, k: "_Kernel", b, bases: dict[str, int], prologue: list, epilogue: list) -> None:
    """A shared buffer's first element (what the OpenCL C emitter's shared buffers mean,
    fuzz.emit.opencl_c): a pointer into ``out`` (moved to the work-group's partition when
    per_group), or a Workgroup array (named ``clfuzz.<name>``: Oclgrind needs the name,
    drivers.md) initialised and copied out by one work-item per element around barriers."""
    t = m.type(b.type)
    aligned = (m.g.enum("MemoryAccess", "Aligned"), b.type.size)
    if b.role == "global":
        first = m.address(bases["out"], k.layout.outputs[b.name].offset, b.type,
                          m.op("OpIMul", k.ulong, m.ids["grp"], m.constant("ulong", b.count)) if b.per_group
                          else m.constant("ulong", 0))
        m.shared[b.name] = (first, "CrossWorkgroup")
        return
    array = m.array(t, b.count)
    var = m.id()
    m.inst("global", "OpVariable", m.pointer("Workgroup", array), var, m.g.enum("StorageClass", "Workgroup"))
    m.inst("debug", "OpName", var, f"{KERNEL_NAME}.{b.name}")
    m.shared[b.name] = (var, "Workgroup")
    lid, grp = m.ids["lid"], m.ids["grp"]

    def element() -> int:
        return m.op("OpInBoundsAccessChain", m.pointer("Workgroup", t), var, lid)

    def lane(base: str, region) -> int:
        index = m.op("OpIAdd", k.ulong, m.op("OpIMul", k.ulong, grp, m.constant("ulong", b.count)), lid)
        return m.address(bases[base], region.offset, b.type, index)

    def init() -> None:
        if b.kind == "flag":
            m.inst("function", "OpAtomicFlagClear", element(), m.constant("uint", SCOPES["work_group"]),
                   m.constant("uint", 0))
        else:
            value = m.op("OpLoad", t, lane("in", k.layout.inputs[b.name]), *aligned)
            m.inst("function", "OpStore", element(), value)  # atomic_init is a plain store (§6.15.12.6)

    def copy_out() -> None:
        value = m.op("OpLoad", t, element()) if b.kind == "" else m.op(
            "OpAtomicLoad", t, element(), m.constant("uint", SCOPES["work_group"]), m.constant("uint", 0))
        m.inst("function", "OpStore", lane("out", k.layout.outputs[b.name]), value, *aligned)

    def inside() -> int:
        return m.op("OpULessThan", m.bool_type(), lid, m.constant("ulong", b.count))

    prologue.append(lambda: _if(m, inside(), init))
    if b.kind != "flag":
        epilogue.append(lambda: _if(m, inside(), copy_out))


def _statements(m: Module, k: _Kernel, program: Program) -> None:
    """The statements: each one's value stored at its output's element pointer."""
    for s in program.body:
        dst = program.buffer(s.buffer).type
        m.target = s.buffer
        value = k.expression(s.value, m.pointers)
        if value is None:  # a statement form that wrote its own store (vstoren, void atomics)
            continue
        src = s.value.type
        if src != dst:  # assignment: converted as by a cast (§6.4.1)
            value = operand(m, value, src, dst)
        m.inst("function", "OpStore", m.pointers[s.buffer], value, m.g.enum("MemoryAccess", "Aligned"), dst.size)


def words(program: Program) -> list[int]:
    """The module of ``program`` as 32-bit words (see the module docstring)."""
    m = Module()
    m.capability("Addresses")
    m.capability("Kernel")
    m.capability("Int64")  # size_t under Physical64
    if "int64_atomics" in program.requires:
        # the capability alone, as the LLVM translator writes it: its reader rejects the
        # OpExtension "cl_khr_int64_base_atomics" that the 2017 SPIR-V environment (2.2) asks for
        # ("unknown extension")
        m.capability("Int64Atomics")
    m.std = m.id()
    m.inst("ext_import", "OpExtInstImport", m.std, "OpenCL.std")
    m.inst("memory_model", "OpMemoryModel", m.g.enum("AddressingModel", "Physical64"),
           m.g.enum("MemoryModel", "OpenCL"))
    k = _Kernel(m, program)
    v3ulong = m.type(Type("ulong", 3))
    builtins = {"gid": m.builtin("GlobalInvocationId", Type("ulong", 3))}
    if program.local_size or program.shape:
        builtins.update(lid=m.builtin("LocalInvocationId", Type("ulong", 3)), grp=m.builtin("WorkgroupId", Type("ulong", 3)))
    shapes = Shapes(m, program) if program.shape else None  # its helper functions first, as in OpenCL C
    void = m.void()
    fn = m.id()
    m.inst("entry_point", "OpEntryPoint", m.g.enum("ExecutionModel", "Kernel"), fn, KERNEL_NAME, *builtins.values())
    # FP_CONTRACT OFF, as in the OpenCL C kernel
    m.inst("execution_mode", "OpExecutionMode", fn, m.g.enum("ExecutionMode", "ContractionOff"))
    m.inst("debug", "OpName", fn, KERNEL_NAME)
    params = [("in", k.uchar_ptr), ("out", k.uchar_ptr), *((i.name, image_type(m, i)) for i in program.images),
              *((s.name, m.sampler_type()) for s in sampler_arguments(program))]
    m.inst("function", "OpFunction", void, fn, m.g.enum("FunctionControl", "None"),
           m.function_type(void, *(t for _, t in params)))
    bases = {}
    for name, t in params:
        bases[name] = m.id()
        m.inst("function", "OpFunctionParameter", t, bases[name])
        m.inst("debug", "OpName", bases[name], name)
    m.images = {i.name: (bases[i.name], image_type(m, i)) for i in program.images}
    m.samplers = {s.name: bases[s.name] if s.scope == "argument" else constant_sampler(m, s) for s in program.samplers}
    m.entry_label()
    for name, var in builtins.items():
        ids = m.op("OpLoad", v3ulong, var, m.g.enum("MemoryAccess", "Aligned"), 32)
        m.ids[name] = m.op("OpCompositeExtract", k.ulong, ids, 0)
    gid = shapes.index(bases["in"]) if shapes else m.ids["gid"]  # the element index: x of the steps
    prologue: list = []
    epilogue: list = []
    for b in program.buffers:
        if b.shared:
            _shared(m, k, b, bases, prologue, epilogue)
            continue
        region = (k.layout.inputs if b.role == "in" else k.layout.outputs)[b.name]
        m.pointers[b.name] = m.address(bases[b.role], region.offset, b.type, gid)
    for step in prologue:
        step()
    if prologue:
        barrier(m)
    if shapes:
        shapes.wrap(lambda: _statements(m, k, program))  # as many times as the wraps write them
    else:
        _statements(m, k, program)
    if epilogue:
        barrier(m)
    for step in epilogue:
        step()
    m.inst("function", "OpReturn")
    if shapes:
        shapes.finish()
    m.end_function()
    return m.words()


def emit(program: Program) -> bytes:
    """The module of ``program`` as a little-endian binary (a ``.spv`` file)."""
    return np.array(words(program), dtype="<u4").tobytes()
