"""Flow programs (lang.flow) -> SPIR-V modules: what :mod:`fuzz.emit.opencl_flow`'s kernel means,
block by block (SPIR-V 1.0, the OpenCL environment, as :mod:`fuzz.emit.spirv` writes every module:
Addresses, Kernel, Int64, Physical64, the OpenCL memory model, OpenCL.std).

* **Variables** are SSA values: where control flow meets, an OpPhi joins each variable that
  arrives with different values (the merge block of an ``if``; a loop's header, continue target
  and merge block, with the edges of ``break`` and ``continue``), so loop-carried values pass
  through OpPhi. A kernel variable whose address a helper takes is a Function-storage OpVariable.
* **Loops** (:class:`lang.flow.Loop`) are a preheader, a header (the counter's and the carried
  values' OpPhi, OpLoopMerge), the body, a continue target and a merge block, in the form of the
  OpenCL C text: ``for`` tests at the top and steps in the continue target; ``while`` tests
  ``counter ± step`` at the top and steps at the top of the body (so ``continue`` steps too);
  ``do`` steps at the top of the body and tests in the continue target (the back edge is
  conditional). ``break`` and ``continue`` branch to the merge block and the continue target
  from a selection construct.
* **Branches** are OpSelectionMerge + OpBranchConditional; ``?:`` is OpSelect.
* **Arrays**: private arrays are Function-storage OpVariables of an OpTypeArray, initialised by
  one OpStore of an OpConstantComposite, indexed by OpInBoundsAccessChain; a helper's array
  parameter is a pointer to the first element it may touch (``array + offset``: an access chain
  to that element), indexed by OpInBoundsPtrAccessChain. The local array is a Workgroup
  OpVariable at module scope named ``clfuzz.<name>`` (Oclgrind needs names); an exchange is a
  store, OpControlBarrier, a load, OpControlBarrier (:func:`fuzz.emit.spirv.module.barrier`:
  ``barrier(CLK_LOCAL_MEM_FENCE)``, Workgroup execution and memory scope, WorkgroupMemory
  semantics; OpenCL C 3.0.19 §6.15.8).
* **Helpers** are OpFunctions called by OpFunctionCall with their pointer parameters
  (Function-storage pointers); a ``noinline`` helper's function control is DontInline.
* **Structs**: OpTypeStruct variables in Function storage, members by OpInBoundsAccessChain
  (:mod:`fuzz.emit.spirv.flow_structs`).
* **Contraction off**: the kernel's ContractionOff execution mode (as ``#pragma OPENCL
  FP_CONTRACT OFF``, §6.15.2.1; helpers compute no float, lang.flow_rules).

``cfg`` ``unstructured`` (lang.shapes.CFGS, which Kernel modules allow, SPIR-V 1.0 §2.11): the same
blocks and OpPhi without OpSelectionMerge and OpLoopMerge, and the arms of every ``if`` written
after the block where they join (:class:`fuzz.emit.spirv.flow.Blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fuzz.emit.opencl_c import KERNEL_NAME
from fuzz.emit.spirv import flow_structs, flow_vectors
from fuzz.emit.spirv.flow_values import ALIGNED, Shared, Values, ty
from fuzz.emit.spirv.module import Module, barrier
from lang.flow import BASE_MASK, Assign, AStore, Exchange, Exit, FlowProgram, Function, If, Invoke, Loop, Stmt, regions
from lang.flow_launch import is_non_uniform
from lang.flow_structs import SInvoke
from lang.flow_tree import statements
from lang.flow_vectors import SwizzleStore
from lang.types import scalar


@dataclass
class Exits:
    """A loop being written: its merge block and continue target, and the variables' values on
    each edge that reaches them from a ``break`` or ``continue`` (with the block it leaves)."""

    merge: int
    cont: int
    breaks: list[tuple[dict[str, int], int]] = field(default_factory=list)
    continues: list[tuple[dict[str, int], int]] = field(default_factory=list)


def assigned(body: tuple[Stmt, ...]) -> list[str]:
    """The variables a body assigns (nested statements included), in a stable order."""
    names = [s.var for s in statements(body) if isinstance(s, (Assign, Exchange, Invoke, SwizzleStore)) and s.var]
    return list(dict.fromkeys(names))


class Writer(Values):
    """The blocks of one function: the kernel or a helper (see the module docstring)."""

    def __init__(self, shared: Shared) -> None:
        super().__init__(shared)
        self.loops: list[Exits] = []
        self.local: dict[str, tuple[int, str, int]] = {}  # local arrays -> (variable, type, length)
        self.lid = 0  # the kernel's local linear id (a uint)

    def start(self) -> None:
        """The function's first block (its Function-storage variables go after its label)."""
        self.current, self.ended = self.m.entry_label(), False

    def join(self, before: dict[str, int], ends: list[tuple[dict[str, int], int]]) -> None:
        """At the start of a block that ``ends`` (values, block) reach: each variable of
        ``before`` is the one value all edges bring, or their OpPhi."""
        assert ends, "every join is reached (a break or continue is always conditional)"
        values = {}
        for name in before:
            incoming = [(env[name], block) for env, block in ends]
            if len({v for v, _ in incoming}) == 1:
                values[name] = incoming[0][0]
                continue
            values[name] = self.m.id()
            self.m.inst("function", "OpPhi", self.m.type(ty(self.types[name])), values[name],
                        *(word for pair in incoming for word in pair))
        self.values = values

    # -- statements ----------------------------------------------------------------------------

    def body(self, body: tuple[Stmt, ...]) -> None:
        for s in body:
            if isinstance(s, Assign):
                self.write(s.var, self.value(s.value))
            elif isinstance(s, AStore):
                pointer, _ = self.element(s.array, s.index)
                self.store(pointer, self.value(s.value))
            elif isinstance(s, If):
                self.branches(s)
            elif isinstance(s, Loop):
                self.loop(s)
            elif isinstance(s, Exit):
                self.exit(s)
            elif isinstance(s, Exchange):
                self.exchange(s)
            elif isinstance(s, SwizzleStore):
                flow_vectors.store(self, s)
            elif isinstance(s, SInvoke):
                flow_structs.invoke(self, s)
            else:
                self.invoke(s)

    def branches(self, s: If) -> None:
        cond = self.nonzero(self.value(s.cond), s.cond.type)
        before = dict(self.values)
        ends = [] if s.orelse else [(before, self.current)]

        def arm(body: tuple[Stmt, ...]):
            def write() -> None:
                self.values = dict(before)
                self.body(body)
                if not self.ended:
                    ends.append((dict(self.values), self.current))
            return write

        self.if_(cond, arm(s.then), arm(s.orelse) if s.orelse else None)
        self.join(before, ends)

    def exit(self, s: Exit) -> None:
        """``if (cond) break;`` / ``continue;``: a selection whose arm branches out."""
        loop = self.loops[-1]

        def take() -> None:
            (loop.breaks if s.kind == "break" else loop.continues).append((dict(self.values), self.current))
            self.branch(loop.merge if s.kind == "break" else loop.cont)

        self.if_(self.nonzero(self.value(s.cond), s.cond.type), take)

    def loop(self, s: Loop) -> None:
        """The counter takes ``b + k * step`` (reverse: last first) for ``k < n`` in the form's
        blocks (the module docstring); the variables the body assigns are carried by OpPhi."""
        m, boolean = self.m, self.m.bool_type()
        n = m.ext("u_min", m.type(ty("uint")), self.value(s.trips), self.const("uint", s.cap))
        if s.form == "do":
            n = m.ext("u_max", m.type(ty("uint")), self.const("uint", 1), n)
        b = self.op("OpBitwiseAnd", "uint", self.value(s.base), self.const("uint", BASE_MASK))
        step = self.const("int", s.step)
        end = self.op("OpIAdd", "int", b, self.op("OpIMul", "int", n, step))
        move = "OpISub" if s.reverse else "OpIAdd"

        def moved(v: int) -> int:
            return self.op(move, "int", v, step)

        if s.form == "for":  # reverse: b + (n - 1) * step
            last = self.op("OpIMul", "int", self.op("OpISub", "int", n, self.const("int", 1)), step)
            first = self.op("OpIAdd", "int", b, last) if s.reverse else b
        else:  # while, do: the counter moves at the top of the body
            first = end if s.reverse else self.op("OpISub", "int", b, step)

        def test(v: int) -> int:  # for: v >= b or v < end; while, do: the same of the moved counter
            v = v if s.form == "for" else moved(v)
            if s.reverse:
                return self.op("OpSGreaterThanEqual", boolean, v, b)
            return self.op("OpSLessThan", boolean, v, end)

        pre, header, block, cont, merge = (m.id() for _ in range(5))
        self.branch(pre)
        self.label(pre)
        before = dict(self.values)
        self.branch(header)
        self.label(header)
        at = self.mark()
        counter = m.id()
        phis = {name: m.id() for name in assigned(s.body) if name in self.values}
        self.values.update(phis)
        top = s.form != "do"
        exits = Exits(merge, cont)
        leave: list[tuple[dict[str, int], int]] = []
        control = m.g.enum("LoopControl", "None")
        if top:
            cond = test(counter)
            self.merge("OpLoopMerge", merge, cont, control)
            m.inst("function", "OpBranchConditional", cond, block, merge)
            leave.append((dict(self.values), header))
        else:
            self.merge("OpLoopMerge", merge, cont, control)
            m.inst("function", "OpBranch", block)
        self.ended = True
        self.label(block)
        self.values[s.var] = counter if s.form == "for" else moved(counter)
        self.types[s.var] = "int"
        inside = dict(self.values)
        self.loops.append(exits)
        self.body(s.body)
        self.loops.pop()
        ends = exits.continues + ([] if self.ended else [(dict(self.values), self.current)])
        self.branch(cont)
        self.label(cont)
        self.join(inside, ends)
        after = moved(counter) if s.form == "for" else self.values[s.var]
        if top:
            m.inst("function", "OpBranch", header)
        else:
            m.inst("function", "OpBranchConditional", test(after), header, merge)
            leave.append((dict(self.values), cont))
        self.ended = True
        back = dict(self.values)

        def header_phis() -> None:
            int_t = m.type(ty("int"))
            m.inst("function", "OpPhi", int_t, counter, first, pre, after, cont)
            for name, phi in phis.items():
                m.inst("function", "OpPhi", m.type(ty(self.types[name])), phi, before[name], pre, back[name], cont)

        self.insert(at, header_phis)
        del self.types[s.var]
        self.label(merge)
        self.join(before, leave + exits.breaks)

    def group_size(self) -> int:
        """The actual work-group's work-items (a uint: a partial group's fewer, lang.flow_launch)."""
        sizes = [self.size("local_size", k) for k in range(3)]
        product = self.op("OpIMul", "ulong", self.op("OpIMul", "ulong", sizes[0], sizes[1]), sizes[2])
        return self.op("OpUConvert", "uint", product)

    def exchange(self, s: Exchange) -> None:
        """``array[lid] = value; barrier; var = array[index % length]; barrier``."""
        var, t, n = self.local[s.array]
        pointer = self.m.pointer("Workgroup", self.m.type(ty(t)))
        value = self.value(s.value)
        self.store(self.op("OpInBoundsAccessChain", pointer, var, self.lid), value)
        barrier(self.m)
        length = self.group_size() if is_non_uniform(self.shared.p) else self.const("uint", n)  # lang.flow_launch
        at = self.op("OpUMod", "uint", self.value(s.index), length)
        read = self.op("OpLoad", t, self.op("OpInBoundsAccessChain", pointer, var, at))
        barrier(self.m)
        self.write(s.var, read)

    def invoke(self, s: Invoke) -> None:
        f = self.shared.p.function(s.function)
        args = [self.value(a) for a in s.args]
        for q, d in zip(s.pointers, f.pointers):
            if q.array:  # array + offset
                var, t, _, _ = self.arrays[q.name]
                args.append(self.op("OpInBoundsAccessChain", self.m.pointer("Function", self.m.type(ty(t))), var,
                                    self.const("uint", q.offset)))
            else:
                args.append(self.memory[q.name])
        result = self.op("OpFunctionCall", f.type, self.shared.functions[f.name], *args)
        if s.var:
            self.write(s.var, result)


def _helper(shared: Shared, f: Function) -> int:
    """The OpFunction of helper ``f`` (its id)."""
    m = shared.m
    ret = m.type(ty(f.type))
    types = [m.type(ty(d.type)) for d in f.params] + [m.pointer("Function", m.type(ty(q.type))) for q in f.pointers]
    fn = m.id()
    control = m.g.enum("FunctionControl", "DontInline" if f.noinline else "None")
    m.inst("function", "OpFunction", ret, fn, control, m.function_type(ret, *types))
    m.inst("debug", "OpName", fn, f.name)
    w = Writer(shared)
    for d, t in zip((*f.params, *f.pointers), types):
        param = m.id()
        m.inst("function", "OpFunctionParameter", t, param)
        w.types[d.name] = d.type
        if d in f.params:
            w.values[d.name] = param
        elif d.length:
            w.arrays[d.name] = (param, d.type, d.length, True)
        else:
            w.memory[d.name] = param
    w.start()
    for d in f.variables:
        w.types[d.name] = d.type
        w.values[d.name] = w.const(d.type, d.init)
    w.body(f.body)
    m.inst("function", "OpReturnValue", w.value(f.result))
    w.finish()
    m.end_function()
    return fn


def _array_constant(m: Module, t: str, values: tuple[int, ...]) -> tuple[int, int]:
    """The OpTypeArray of ``len(values)`` elements of ``t`` and its OpConstantComposite."""
    array = m.array(m.type(ty(t)), len(values))
    cid = m.id()
    mask = (1 << scalar(t).bits) - 1
    m.inst("global", "OpConstantComposite", array, cid, *(m.constant(t, v & mask) for v in values))
    return array, cid


def words(p: FlowProgram) -> list[int]:
    """The module of ``p`` as 32-bit words (see the module docstring)."""
    m = Module()
    for capability in ("Addresses", "Kernel", "Int64"):  # Int64: size_t under Physical64
        m.capability(capability)
    m.std = m.id()
    m.inst("ext_import", "OpExtInstImport", m.std, "OpenCL.std")
    m.inst("memory_model", "OpMemoryModel", m.g.enum("AddressingModel", "Physical64"),
           m.g.enum("MemoryModel", "OpenCL"))
    shared = Shared(m, p)
    for f in p.functions:  # before the kernel, as in the OpenCL C text
        shared.functions[f.name] = _helper(shared, f)
    for sf in p.struct_functions:
        shared.functions[sf.name] = flow_structs.helper(shared, sf, Writer)
    void, bytes_ = m.void(), m.pointer("CrossWorkgroup", m.type(ty("uchar")))
    fn = m.id()
    m.inst("function", "OpFunction", void, fn, m.g.enum("FunctionControl", "None"),
           m.function_type(void, bytes_, bytes_))
    m.inst("debug", "OpName", fn, KERNEL_NAME)
    params = {}
    for name in ("in", "out"):
        params[name] = m.id()
        m.inst("function", "OpFunctionParameter", bytes_, params[name])
        m.inst("debug", "OpName", params[name], name)
    shared.inputs = params["in"]
    w = Writer(shared)
    w.start()
    gid = w.item("global_linear_id", 0)
    w.lid = w.item("local_linear_id", 0)
    for a in p.arrays:
        if a.space == "local":
            var = m.id()
            storage = m.pointer("Workgroup", m.array(m.type(ty(a.type)), a.length))
            m.inst("global", "OpVariable", storage, var, m.g.enum("StorageClass", "Workgroup"))
            m.inst("debug", "OpName", var, f"{KERNEL_NAME}.{a.name}")
            w.local[a.name] = (var, a.type, a.length)
        else:
            array, init = _array_constant(m, a.type, a.init)
            var = m.variable(array)
            w.store(var, init)
            w.arrays[a.name] = (var, a.type, a.length, False)
    addressed = {q.name for s in statements(p.body) if isinstance(s, Invoke) for q in s.pointers if not q.array}
    for d in p.variables:
        w.types[d.name] = d.type
        if d.name in addressed:
            w.memory[d.name] = m.variable(m.type(ty(d.type)))
        w.write(d.name, w.const(d.type, d.init))
    flow_structs.declare(w, p.struct_vars)
    w.body(p.body)
    _, _, outs, _ = regions(p)
    at = w.op("OpUConvert", "ulong", gid)
    for o in p.outputs:
        pointer = m.address(params["out"], outs[o.name], ty(o.type), at)
        w.store(pointer, w.read(o.var), m.g.enum(*ALIGNED), scalar(o.type).size)
    m.inst("function", "OpReturn")
    w.finish()
    m.end_function()
    m.inst("entry_point", "OpEntryPoint", m.g.enum("ExecutionModel", "Kernel"), fn, KERNEL_NAME,
           *shared.builtins.values())
    m.inst("execution_mode", "OpExecutionMode", fn, m.g.enum("ExecutionMode", "ContractionOff"))
    return m.words()


def emit(p: FlowProgram) -> bytes:
    """The module of ``p`` as a little-endian binary (a ``.spv`` file)."""
    return np.array(words(p), dtype="<u4").tobytes()
