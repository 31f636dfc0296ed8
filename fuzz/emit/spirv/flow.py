"""The blocks of a function in SPIR-V, structured or not (:class:`Blocks`, which the flow
programs' writer :mod:`fuzz.emit.spirv.flow_kernel` extends), and the blocks and values of a
shaped program's kernel (:class:`Flow`, which :class:`fuzz.emit.spirv.shapes.Shapes` extends with
the steps and wraps of lang.shapes).

Structured control flow (SPIR-V 1.0 §2.11) unless the shape says ``unstructured``
(lang.shapes.CFGS): an ``if`` is OpSelectionMerge + OpBranchConditional, a ``switch``
OpSelectionMerge + OpSwitch, a loop a preheader, a header with
OpLoopMerge, a body, a continue target holding the back edge and a merge block (``for``/``while``
test at the top of the header, ``do`` in the continue target); ``break`` and ``continue`` branch
to the merge block and the continue target. Loop counters are OpPhi in the header; the other
values a loop or a branch carries (``x``, sums, structs, private arrays) are Function-storage
OpVariables (:meth:`fuzz.emit.spirv.module.Module.variable`). Local arrays are Workgroup
OpVariables named ``clfuzz.sh<i>`` (Oclgrind needs names).

Unstructured (Kernel modules only need the blocks in dominance order, §2.16.1): the same blocks
and branches without OpSelectionMerge and OpLoopMerge, and the arms of every ``if`` and ``switch``
written at the end of the function (:meth:`Blocks.later`), after the block where they join, which
no structured construct may do.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from fuzz.emit.opencl_c import KERNEL_NAME
from fuzz.emit.spirv.module import Module
from lang.ir import Program
from lang.shapes import Part, expected
from lang.types import Type

ALIGNED = 4  # a control word's alignment (the ctl region starts at a multiple of 128 bytes)


class Loop(NamedTuple):
    """The blocks ``break`` and ``continue`` branch to inside a loop's body."""

    merge: int
    cont: int


Body = Callable[[int, Loop], None]  # a loop's body, given the counter's value and the loop


class Blocks:
    """The blocks of one function under construction, structured or not (see the module
    docstring): labels, branches, selection constructs and the arms written later."""

    def __init__(self, m: Module, structured: bool) -> None:
        self.m = m
        self.ended = False  # the current block has its terminator (a break, continue or return)
        self.current = 0  # the label of the block being written
        self.structured = structured
        self.tail: list[list[int]] = []  # blocks written after the function's last one (unstructured)

    def label(self, block: int) -> None:
        self.m.inst("function", "OpLabel", block)
        self.current = block
        self.ended = False

    def branch(self, target: int) -> None:
        """OpBranch to ``target``, unless the block already ended (a break, continue or return)."""
        if not self.ended:
            self.m.inst("function", "OpBranch", target)
            self.ended = True

    def ret(self) -> None:
        self.m.inst("function", "OpReturn")
        self.ended = True

    def merge(self, opname: str, *operands: int) -> None:
        """A merge instruction (OpSelectionMerge, OpLoopMerge), in structured control flow only."""
        if self.structured:
            self.m.inst("function", opname, *operands)

    def arms(self, arms: list[tuple[int, Callable[[], None]]], merge: int) -> None:
        """Each ``(block, write)``: the block, what ``write()`` writes and a branch to ``merge``,
        then ``merge``; unstructured, the arms go to the end of the function (:meth:`later`)."""
        for block, arm in arms:
            def write(block=block, arm=arm) -> None:
                self.label(block)
                arm()
                self.branch(merge)
            if self.structured:
                write()
            else:
                self.later(write)
        self.label(merge)

    def later(self, write: Callable[[], None]) -> None:
        """What ``write()`` writes, moved after the function's last block (:meth:`finish`); a later
        block nested in it follows it, so every block still follows the blocks that dominate it."""
        m, chunk = self.m, []
        self.tail.append(chunk)
        here, ended, current = m.sections["function"], self.ended, self.current
        m.sections["function"] = chunk
        try:
            write()
        finally:
            m.sections["function"], self.ended, self.current = here, ended, current

    def finish(self) -> None:
        """The blocks :meth:`later` kept, after the function's last block (before OpFunctionEnd)."""
        for chunk in self.tail:
            self.m.sections["function"].extend(chunk)
        self.tail = []

    def mark(self) -> tuple[list[int], int]:
        """Where the next instruction goes (for :meth:`insert`)."""
        words = self.m.sections["function"]
        return words, len(words)

    def insert(self, at: tuple[list[int], int], write: Callable[[], None]) -> None:
        """What ``write()`` writes, put at ``at`` (a :meth:`mark` taken earlier): a loop header's
        OpPhi instructions, whose back-edge operands exist only once the loop's body is written."""
        m, chunk = self.m, []
        here = m.sections["function"]
        m.sections["function"] = chunk
        try:
            write()
        finally:
            m.sections["function"] = here
        words, index = at
        words[index:index] = chunk

    def if_(self, cond: int, then: Callable[[], None], otherwise: Callable[[], None] | None = None) -> None:
        """``if (cond) { then() } else { otherwise() }`` as a selection construct."""
        m = self.m
        then_block, else_block, merge = m.id(), m.id() if otherwise else 0, m.id()
        self.merge("OpSelectionMerge", merge, m.g.enum("SelectionControl", "None"))
        m.inst("function", "OpBranchConditional", cond, then_block, else_block or merge)
        self.ended = True
        self.arms([(then_block, then)] + ([(else_block, otherwise)] if otherwise else []), merge)


class Flow(Blocks):
    """Emission state of one shaped program's blocks and values (see the module docstring)."""

    def __init__(self, m: Module, program: Program) -> None:
        assert program.shape is not None
        super().__init__(m, program.shape.cfg == "structured")
        self.program, self.shape = program, program.shape
        self.uint, self.ulong = m.type(Type("uint")), m.type(Type("ulong"))
        self.ctl = self.x = self.slid = 0  # the kernel's: set by Shapes.index()

    @property
    def pair(self) -> int:
        """``clfuzz_pair``: ``struct { uint a; uint b; }``."""
        return self.m.struct(self.uint, self.uint)

    # -- values --------------------------------------------------------------------------------

    def op(self, opname: str, result: int, *operands: int) -> int:
        return self.m.op(opname, result, *operands)

    def u(self, value: int) -> int:
        """The uint constant ``value``."""
        return self.m.constant("uint", value)

    def word(self, at: int) -> int:
        """Control word ``ctl[at]`` (a uint)."""
        p = self.op("OpInBoundsPtrAccessChain", self.m.pointer("CrossWorkgroup", self.uint), self.ctl,
                    self.m.constant("ulong", at))
        return self.op("OpLoad", self.uint, p, self.m.g.enum("MemoryAccess", "Aligned"), ALIGNED)

    def words(self, o: int, part: Part) -> list[int]:
        """The part's control words ``ctl[o]``, ``ctl[o + 1]``, ... (read once, where they are needed)."""
        return [self.word(o + j) for j in range(len(part.words))]

    def load(self, pointer: int, t: int | None = None) -> int:
        return self.op("OpLoad", t or self.uint, pointer)

    def store(self, pointer: int, value: int) -> None:
        self.m.inst("function", "OpStore", pointer, value)

    def element(self, storage: str, base: int, index: int) -> int:
        """A pointer to uint ``base[index]`` of an array variable (Workgroup or Function)."""
        return self.op("OpAccessChain", self.m.pointer(storage, self.uint), base, index)

    def moved(self, part: Part, value: int) -> None:
        """``x = (x + (size_t)(value - K)) % G``: ``x`` moved by ``value``'s difference from ``K``."""
        k = expected(part, self.program.local_size)
        diff = self.op("OpUConvert", self.ulong, self.op("OpISub", self.uint, value, self.u(k)))
        total = self.op("OpIAdd", self.ulong, self.load(self.x, self.ulong), diff)
        self.store(self.x, self.op("OpUMod", self.ulong, total, self.m.constant("ulong", self.program.global_size)))

    def local_array(self, i: int) -> int:
        """``local uint sh<i>[local_size]``: a Workgroup array (module scope in SPIR-V)."""
        m = self.m
        var = m.id()
        array = m.array(self.uint, self.program.local_size)
        m.inst("global", "OpVariable", m.pointer("Workgroup", array), var, m.g.enum("StorageClass", "Workgroup"))
        m.inst("debug", "OpName", var, f"{KERNEL_NAME}.sh{i}")
        return var

    # -- loops ---------------------------------------------------------------------------------

    def loop(self, first: int, test: Callable[[int], int], step: tuple[str, int], body: Body, top: bool = True) -> None:
        """A loop over a uint counter (an OpPhi of ``first`` and ``counter <step[0]> step[1]``):
        ``test(counter)`` before each iteration (``top``: for, while) or ``test(next)`` after each
        one (do, which runs the body at least once)."""
        m = self.m
        pre, header, block, cont, merge, counter, after = (m.id() for _ in range(7))
        self.branch(pre)
        self.label(pre)
        self.branch(header)
        self.label(header)
        m.inst("function", "OpPhi", self.uint, counter, first, pre, after, cont)
        cond = test(counter) if top else 0
        self.merge("OpLoopMerge", merge, cont, m.g.enum("LoopControl", "None"))
        if top:
            m.inst("function", "OpBranchConditional", cond, block, merge)
        else:
            m.inst("function", "OpBranch", block)
        self.ended = True
        self.label(block)
        body(counter, Loop(merge, cont))
        self.branch(cont)
        self.label(cont)
        m.inst("function", step[0], self.uint, after, counter, step[1])
        if top:
            m.inst("function", "OpBranch", header)
        else:
            m.inst("function", "OpBranchConditional", test(after), header, merge)
        self.label(merge)

    def counted(self, form: str, n: int, body: Body) -> None:
        """``for``/``while``/``do`` over a counter from 0 while below ``n`` (the OpenCL C loops of
        fuzz.emit.opencl_shapes): the body sees the iteration's number (``k``); all three
        increment it before ``continue`` reaches the test, so for and while are the same loop."""
        self.loop(self.u(0), lambda j: self.op("OpULessThan", self.m.bool_type(), j, n), ("OpIAdd", self.u(1)),
                  body, top=form != "do")
