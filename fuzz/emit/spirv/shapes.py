"""A shaped program's structure in SPIR-V (lang.shapes declares each part and what it computes;
:mod:`fuzz.emit.opencl_shapes` is the OpenCL C this module means, line for line).

:class:`Shapes` writes, for the kernel of :mod:`fuzz.emit.spirv`, the functions the ``call`` steps
call (before the kernel, as the OpenCL C helpers are), the steps that compute the element index
``x`` at kernel scope (:meth:`Shapes.index`: every buffer's element pointer is then computed from
it, as ``gid`` is without a shape) and the statements inside the wraps (:meth:`Shapes.wrap`), with
the blocks, structured or not, and the values of :class:`fuzz.emit.spirv.flow.Flow`; barriers are
those of ``barrier()``.
"""

from __future__ import annotations

from typing import Callable

from fuzz.emit.spirv.flow import ALIGNED, Flow, Loop
from fuzz.emit.spirv.module import Module, barrier
from lang.ir import Program
from lang.layout import layout
from lang.shapes import ARRAY, KINDS, Part
from lang.types import Type


class Shapes(Flow):
    """Emission state of one shaped program's kernel (see the module docstring)."""

    def __init__(self, m: Module, program: Program) -> None:
        """Write the helper functions of the ``call`` steps (before the kernel's OpFunction)."""
        super().__init__(m, program)
        self.calls = {i: _helper(m, self, i, p) for i, p in enumerate(self.shape.steps) if p.kind == "call"}

    # -- the hooks of fuzz.emit.spirv ----------------------------------------------------------

    def index(self, in_base: int) -> int:
        """The steps, at kernel scope: the id of the final ``x`` (a ulong), the element index."""
        m = self.m
        byte = self.op("OpInBoundsPtrAccessChain", m.pointer("CrossWorkgroup", m.type(Type("uchar"))), in_base,
                       m.constant("ulong", layout(self.program).inputs["ctl"].offset))
        self.ctl = self.op("OpBitcast", m.pointer("CrossWorkgroup", self.uint), byte)
        self.slid = self.op("OpUConvert", self.uint, m.ids["lid"])
        self.x = m.variable(self.ulong)
        self.store(self.x, m.ids["gid"])
        for i, (part, o) in enumerate(zip(self.shape.steps, self.shape.offsets())):
            STEPS[part.kind](self, i, o, part)
        return self.load(self.x, self.ulong)

    def wrap(self, statements: Callable[[], None]) -> None:
        """The statements (``statements()`` writes them once) inside the wraps, outermost first."""
        offsets = self.shape.offsets()[len(self.shape.steps):]
        inner = statements
        for i, (part, o) in reversed(list(enumerate(zip(self.shape.wraps, offsets)))):
            inner = _wrapped(self, i, o, part, inner)
        inner()

    def dead(self) -> None:
        """The dead block: zero stored to every output's element (``out[gid] = (T)(0)``): a vector's
        OpConstantNull, a scalar's OpConstant 0 (llvm-spirv 15, the reader of the PoCL and Oclgrind
        routes, aborts on a scalar OpConstantNull, which SPIR-V 1.0 allows: "Invalid type" in
        SPIRVConstantNull::validate)."""
        m = self.m
        for b in self.program.outputs:
            zero = m.null(m.type(b.type)) if b.type.width > 1 else m.splat(b.type, 0)
            m.inst("function", "OpStore", m.pointers[b.name], zero, m.g.enum("MemoryAccess", "Aligned"), b.type.size)


def _wrapped(s: Shapes, i: int, o: int, part: Part, inner: Callable[[], None]) -> Callable[[], None]:
    return lambda: WRAPS[part.kind](s, i, o, part, inner)


# -- steps (opencl_shapes.STEPS) ---------------------------------------------------------------


def _carried(s: Shapes, i: int, o: int, part: Part) -> None:
    n, a, b, c = s.words(o, part)
    total = s.m.variable(s.uint)
    s.store(total, s.u(0))
    boolean = s.m.bool_type()

    def body(k: int, loop: Loop) -> None:
        s.if_(s.op("OpIEqual", boolean, k, b), lambda: s.branch(loop.merge))
        s.if_(s.op("OpIEqual", boolean, s.op("OpBitwiseAnd", s.uint, k, s.u(3)), c), lambda: s.branch(loop.cont))
        s.store(total, s.op("OpIAdd", s.uint, s.load(total), s.op("OpBitwiseXor", s.uint, a, k)))

    s.counted(part.form, n, body)
    s.moved(part, s.load(total))


def _masked(s: Shapes, value: int) -> int:
    return s.op("OpBitwiseAnd", s.uint, value, s.u(s.program.local_size - 1))


def _publish(s: Shapes, sh: int) -> None:
    """``sh[slid] = (uint)x; barrier(CLK_LOCAL_MEM_FENCE);``"""
    s.store(s.element("Workgroup", sh, s.slid), s.op("OpUConvert", s.uint, s.load(s.x, s.ulong)))
    barrier(s.m)


def _take(s: Shapes, sh: int, index: int) -> None:
    """``x = sh[index & (local_size - 1)];``"""
    s.store(s.x, s.op("OpUConvert", s.ulong, s.load(s.element("Workgroup", sh, _masked(s, index)))))


def _exchange(s: Shapes, i: int, o: int, part: Part) -> None:
    sh = s.local_array(i)
    mul, add = s.words(o, part)
    _publish(s, sh)
    _take(s, sh, s.op("OpIAdd", s.uint, s.op("OpIMul", s.uint, s.slid, mul), add))


def _rounds(s: Shapes, i: int, o: int, part: Part) -> None:
    sh = s.local_array(i)
    n, mul, add = s.words(o, part)

    def body(j: int, loop: Loop) -> None:
        _publish(s, sh)
        _take(s, sh, s.op("OpIAdd", s.uint, s.op("OpIAdd", s.uint, s.op("OpIMul", s.uint, s.slid, mul), add), j))
        barrier(s.m)

    s.counted("for", n, body)


def _tree(s: Shapes, i: int, o: int, part: Part) -> None:
    sh = s.local_array(i)
    a, b = s.words(o, part)
    s.store(s.element("Workgroup", sh, s.slid), s.op("OpIAdd", s.uint, s.op("OpIMul", s.uint, s.slid, a), b))
    barrier(s.m)
    boolean = s.m.bool_type()

    def add(half: int) -> None:  # sh[slid] += sh[slid + half]
        here = s.element("Workgroup", sh, s.slid)
        other = s.load(s.element("Workgroup", sh, s.op("OpIAdd", s.uint, s.slid, half)))
        s.store(here, s.op("OpIAdd", s.uint, s.load(here), other))

    def body(half: int, loop: Loop) -> None:  # for (h = local_size / 2; h > 0; h >>= 1)
        s.if_(s.op("OpULessThan", boolean, s.slid, half), lambda: add(half))
        barrier(s.m)

    s.loop(s.u(s.program.local_size // 2), lambda half: s.op("OpUGreaterThan", boolean, half, s.u(0)),
           ("OpShiftRightLogical", s.u(1)), body)
    s.moved(part, s.load(s.element("Workgroup", sh, s.u(0))))


def _call(s: Shapes, i: int, o: int, part: Part) -> None:
    m, fn = s.m, s.calls[i]
    if part.form in ("add", "noinline", "generic", "local"):
        first, v = s.words(o, part)
        t = s.element("Workgroup", s.local_array(i), s.slid) if part.form == "local" else m.variable(s.uint)
        s.store(t, first)
        p = s.op("OpPtrCastToGeneric", m.pointer("Generic", s.uint), t) if part.form == "generic" else t
        s.op("OpFunctionCall", s.uint, fn, p, v)
        value = s.load(t)
    elif part.form == "global":
        value = s.op("OpFunctionCall", s.uint, fn, s.ctl, s.u(o))
    else:
        pair = m.variable(s.pair)
        members = [s.op("OpAccessChain", m.pointer("Function", s.uint), pair, s.u(j)) for j in (0, 1)]
        for p, w in zip(members, s.words(o, part)):
            s.store(p, w)
        if part.form == "struct":
            value = s.op("OpFunctionCall", s.uint, fn, s.load(pair, s.pair))
        else:
            s.op("OpFunctionCall", m.void(), fn, pair)
            value = s.op("OpISub", s.uint, s.load(members[0]), s.load(members[1]))
    s.moved(part, value)


def _helper(m: Module, s: Shapes, i: int, part: Part) -> int:
    """The function ``clfuzz_call<i>`` a ``call`` step calls (its OpenCL C in fuzz.emit.opencl_shapes): its id."""
    uint, ulong, cw = s.uint, s.ulong, m.pointer("CrossWorkgroup", s.uint)
    form = part.form
    ret = m.void() if form == "swap" else uint
    if form == "generic":
        m.capability("GenericPointer")
    pointee = {"add": "Function", "noinline": "Function", "generic": "Generic", "local": "Workgroup"}
    if form in pointee:  # only the form's types are declared (Generic needs its capability)
        params = (m.pointer(pointee[form], uint), uint)
    else:
        params = {"global": (cw, uint), "struct": (s.pair,), "swap": (m.pointer("Function", s.pair),)}[form]
    fn = m.id()
    control = m.g.enum("FunctionControl", "DontInline" if form == "noinline" else "None")
    m.inst("function", "OpFunction", ret, fn, control, m.function_type(ret, *params))
    m.inst("debug", "OpName", fn, f"clfuzz_call{i}")
    args = []
    for t in params:
        args.append(m.id())
        m.inst("function", "OpFunctionParameter", t, args[-1])
    m.entry_label()
    if form in ("add", "noinline", "generic", "local"):  # *p += v; return *p;
        p, v = args
        m.inst("function", "OpStore", p, m.op("OpIAdd", uint, m.op("OpLoad", uint, p), v))
        m.inst("function", "OpReturnValue", m.op("OpLoad", uint, p))
    elif form == "global":  # return c[k] + c[k + 1];
        c, k = args
        aligned = (m.g.enum("MemoryAccess", "Aligned"), ALIGNED)
        at = [m.op("OpUConvert", ulong, index) for index in (k, m.op("OpIAdd", uint, k, m.constant("uint", 1)))]
        values = [m.op("OpLoad", uint, m.op("OpInBoundsPtrAccessChain", cw, c, j), *aligned) for j in at]
        m.inst("function", "OpReturnValue", m.op("OpIAdd", uint, *values))
    elif form == "struct":  # return p.a - p.b;
        members = [m.op("OpCompositeExtract", uint, args[0], j) for j in (0, 1)]
        m.inst("function", "OpReturnValue", m.op("OpISub", uint, *members))
    else:  # const uint t = p->a; p->a = p->b; p->b = t;
        a, b = (m.op("OpAccessChain", m.pointer("Function", uint), args[0], m.constant("uint", j)) for j in (0, 1))
        t = m.op("OpLoad", uint, a)
        m.inst("function", "OpStore", a, m.op("OpLoad", uint, b))
        m.inst("function", "OpStore", b, t)
        m.inst("function", "OpReturn")
    m.end_function()
    return fn


def _array(s: Shapes, i: int, o: int, part: Part) -> None:
    m = s.m
    array = m.variable(m.array(s.uint, ARRAY))
    first, at = s.words(o, part)

    def body(j: int, loop: Loop) -> None:  # ar[j] = ctl[o] + j * j
        s.store(s.element("Function", array, j), s.op("OpIAdd", s.uint, first, s.op("OpIMul", s.uint, j, j)))

    s.counted("for", s.u(ARRAY), body)
    s.moved(part, s.load(s.element("Function", array, s.op("OpBitwiseAnd", s.uint, at, s.u(ARRAY - 1)))))


def _select(s: Shapes, i: int, o: int, part: Part) -> None:
    """``x = ctl[o] < ctl[o + 1] ? x : (x + 1) % G``"""
    a, b = s.words(o, part)
    x = s.load(s.x, s.ulong)
    other = s.op("OpUMod", s.ulong, s.op("OpIAdd", s.ulong, x, s.m.constant("ulong", 1)),
                 s.m.constant("ulong", s.program.global_size))
    s.store(s.x, s.op("OpSelect", s.ulong, s.op("OpULessThan", s.m.bool_type(), a, b), x, other))


Step = Callable[[Shapes, int, int, Part], None]
STEPS: dict[str, Step] = {"carried": _carried, "exchange": _exchange, "rounds": _rounds, "tree": _tree,
                          "call": _call, "array": _array, "select": _select}


# -- wraps (opencl_shapes.WRAPS) ---------------------------------------------------------------

Inner = Callable[[], None]


def _if_uniform(s: Shapes, i: int, o: int, part: Part, inner: Inner) -> None:
    a, b = s.words(o, part)
    if part.form == "then":  # if (ctl[o] == ctl[o + 1]) { inner } else { dead }
        s.if_(s.op("OpIEqual", s.m.bool_type(), a, b), inner, s.dead)
    else:  # if (ctl[o] != ctl[o + 1]) { dead } else { inner }
        s.if_(s.op("OpINotEqual", s.m.bool_type(), a, b), s.dead, inner)


def _if_divergent(s: Shapes, i: int, o: int, part: Part, inner: Inner) -> None:
    """``if (id < ctl[o]) { inner } else { inner }``: the id a size_t, the word widened to it."""
    ids = s.m.ids[{"lid": "lid", "gid": "gid", "group": "grp"}[part.form]]
    bound = s.op("OpUConvert", s.ulong, s.word(o))
    s.if_(s.op("OpULessThan", s.m.bool_type(), ids, bound), inner, inner)


def _loop_wrap(s: Shapes, i: int, o: int, part: Part, inner: Inner) -> None:
    form, mode = part.form.split("-")
    n, at = s.words(o, part)

    def body(k: int, loop: Loop) -> None:
        if mode == "every":
            inner()
            return

        def then() -> None:  # { inner } or { inner break; }
            inner()
            if mode == "break":
                s.branch(loop.merge)

        s.if_(s.op("OpIEqual", s.m.bool_type(), k, at), then)

    s.counted(form, n, body)


def _switch(s: Shapes, i: int, o: int, part: Part, inner: Inner) -> None:
    """``switch (ctl[o]) { case v: inner; case v ^ 1: dead; default: dead; }`` (each case breaks)."""
    m = s.m
    v = part.words[0]
    case, other, default, merge = (m.id() for _ in range(4))
    selector = s.word(o)
    s.merge("OpSelectionMerge", merge, m.g.enum("SelectionControl", "None"))
    m.inst("function", "OpSwitch", selector, default, v, case, v ^ 1, other)
    s.ended = True
    s.arms([(case, inner), (other, s.dead), (default, s.dead)], merge)


def _dead(s: Shapes, i: int, o: int, part: Part, inner: Inner) -> None:
    """``if (ctl[o] == ctl[o + 1]) { return; | dead } inner``"""
    a, b = s.words(o, part)
    s.if_(s.op("OpIEqual", s.m.bool_type(), a, b), s.ret if part.form == "return" else s.dead)
    inner()


Wrap = Callable[[Shapes, int, int, Part, Inner], None]
WRAPS: dict[str, Wrap] = {"if-uniform": _if_uniform, "if-divergent": _if_divergent, "loop": _loop_wrap,
                          "switch": _switch, "dead": _dead}
assert set(STEPS) | set(WRAPS) == set(KINDS), "the SPIR-V emitter writes every kind of lang.shapes.KINDS"
