"""The operations under test, each declared once.

Every entry names an operation of the IR (:class:`lang.ir.Op`), its area, arity and the spec
section that defines it. The readers register their handler for each name: the OpenCL C
emitter (:data:`fuzz.emit.opencl_c.EMITTERS`, for the operations OpenCL C can express), the
SPIR-V emitter (:data:`fuzz.emit.spirv.EMITTERS`), the oracle
(:data:`oracles.interpreter.REFERENCES`) and the strategies (statement builders in
:data:`fuzz.strategies.conversions.BUILDERS`, tree nodes in
:data:`fuzz.strategies.trees.EXPRESSIONS`).
``tests/test_ops_table.py`` fails when any reader lacks any entry, so adding a construct means
touching every reader.

Some operations exist only in SPIR-V (``paths`` without ``"opencl-c"``): a program that uses one
runs on the SPIR-V paths only (its other statements run everywhere). ``variant`` tells uses of an
operation apart for a route's capability data (``rem:OpFMod`` is a construct of its own: Oclgrind's
route cannot take it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from lang.images import read_function
from lang.ir import Op
from lang.maths import C_NAMES, FUNCTIONS
from lang.types import Type

H = TypeVar("H", bound=Callable)


class Handlers(dict[str, H], Generic[H]):
    """One reader's handler for each operation (or statement form), by name: a reader declares
    ``EMITTERS = Handlers()`` and writes ``@EMITTERS.register("convert")`` on each handler."""

    def register(self, name: str) -> Callable[[H], H]:
        def add(fn: H) -> H:
            self[name] = fn
            return fn

        return add


BOTH_PATHS = frozenset({"opencl-c", "spirv"})
SPIRV_ONLY = frozenset({"spirv"})


@dataclass(frozen=True)
class OpSpec:
    name: str
    area: str
    arity: int  # operands; -1 for any number (a vector literal's parts)
    section: str  # where the spec defines it
    summary: str
    paths: frozenset[str] = BOTH_PATHS  # the front ends that can express it
    variant: Callable[[Op], str] | None = None  # what makes a use of it a construct of its own
    by_operand: bool = False  # coverage counts the operand's type (a predicate's result is int)
    since: str = "1.0"  # the OpenCL C version that introduced it (C_VERSIONS: what a device must list)
    lane_wise: bool = False  # an n-vector form computes each lane as the scalar form does on it
    lanes: str = "each"  # which operand lanes a result lane is computed from (LANES)

    def __post_init__(self) -> None:
        if self.lanes not in LANES:
            raise ValueError(f"operation {self.name!r}: lanes {self.lanes!r} is not one of {', '.join(LANES)}")

    @property
    def requires(self) -> frozenset[str]:
        """The device capabilities a program using it needs (its OpenCL C version's)."""
        return C_VERSIONS[self.since]


Interval = tuple[int, int]


def interval_union(*intervals: Interval) -> Interval:
    """The least interval holding every one of ``intervals``."""
    return min(i[0] for i in intervals), max(i[1] for i in intervals)


@dataclass(frozen=True)
class IntegerBuiltin:
    """One integer built-in function (OpenCL C 3.0 §6.15.3 Table 13) with what every reader needs:
    the OpenCL C call is its name; the SPIR-V OpenCL.std instruction is ``s_``/``u_`` + name by
    the operands' signedness, or the bare name (``prefixed=False``); ``since`` is the OpenCL C
    version that introduced it (a program using a 2.0 one is built with -cl-std and drawn only
    for devices that list OpenCL C 2.0 or newer); ``lane_wise`` says that its n-vector form
    computes each lane as the scalar form (the reducer narrows such statements to one lane);
    ``bounds`` maps the operands' value intervals to an interval holding the result (None: the
    whole result type), the rule the strategies use to keep other operations defined;
    ``weight`` is its default weight among an expression tree's inner nodes (lang.policy)."""

    name: str
    arity: int
    summary: str
    prefixed: bool = True
    since: str = "1.0"
    lane_wise: bool = True
    bounds: Callable[[Op, list[Interval]], Interval] | None = None
    weight: float = 1.0

    def spirv_name(self, signed: bool) -> str:
        """The OpenCL.std extended instruction (SPIR-V OpenCL extended instruction set §2.3)."""
        return f"{'s' if signed else 'u'}_{self.name}" if self.prefixed else self.name


def _bit_count(op: Op, a: list[Interval]) -> Interval:
    return 0, op.type.elem.bits


INTEGER_BUILTINS: tuple[IntegerBuiltin, ...] = (
    IntegerBuiltin("abs", 1, "|x| as the unsigned type", bounds=lambda op, a: (0, max(abs(a[0][0]), abs(a[0][1])))),
    IntegerBuiltin("abs_diff", 2, "|x - y| without overflow, as the unsigned type"),
    IntegerBuiltin("add_sat", 2, "x + y saturated"),
    IntegerBuiltin("sub_sat", 2, "x - y saturated"),
    IntegerBuiltin("mad_sat", 3, "a * b + c saturated"),
    IntegerBuiltin("hadd", 2, "(x + y) >> 1 without overflow", bounds=lambda op, a: interval_union(*a)),
    IntegerBuiltin("rhadd", 2, "(x + y + 1) >> 1 without overflow", bounds=lambda op, a: interval_union(*a)),
    IntegerBuiltin("mul_hi", 2, "high half of the double-width product"),
    IntegerBuiltin("mad_hi", 3, "mul_hi(a, b) + c"),
    IntegerBuiltin("mul24", 2, "product of 24-bit operands (int and uint; operands kept in range)", lane_wise=False),
    IntegerBuiltin("mad24", 3, "mul24(a, b) + c (int and uint; operands kept in range)", lane_wise=False),
    IntegerBuiltin("rotate", 2, "rotate left by the count modulo the lane width", prefixed=False),
    IntegerBuiltin("clz", 1, "leading zero bits (the width for 0)", prefixed=False, bounds=_bit_count),
    IntegerBuiltin("ctz", 1, "trailing zero bits (the width for 0)", prefixed=False, since="2.0", bounds=_bit_count),
    IntegerBuiltin("popcount", 1, "set bits", prefixed=False, bounds=_bit_count),
    IntegerBuiltin("upsample", 2, "(hi << N) | lo into the double-width type", lane_wise=False),
    IntegerBuiltin("min", 2, "y < x ? y : x (also with a scalar y for vector x)",
                   bounds=lambda op, a: (min(a[0][0], a[1][0]), min(a[0][1], a[1][1]))),
    IntegerBuiltin("max", 2, "x < y ? y : x (also with a scalar y for vector x)",
                   bounds=lambda op, a: (max(a[0][0], a[1][0]), max(a[0][1], a[1][1]))),
    IntegerBuiltin("clamp", 3, "min(max(x, lo), hi) with lo <= hi by construction (also with scalar bounds)",
                   bounds=lambda op, a: (a[1][0], a[2][1])),
)
"""The integer built-in functions under test (OpenCL C 3.0 §6.15.3)."""

INTEGER: dict[str, IntegerBuiltin] = {b.name: b for b in INTEGER_BUILTINS}

C_VERSIONS: dict[str, frozenset[str]] = {"1.0": frozenset(), "2.0": frozenset({"cl2.0"})}
"""What a device must list for a construct of each OpenCL C version (fingerprint keys: ``cl2.0``
for OpenCL C 2.0 or newer, fuzz.drivers.probe)."""
VERSION_KEYS: frozenset[str] = frozenset().union(*C_VERSIONS.values())

RELATIONAL_BUILTINS: tuple[tuple[str, int, str], ...] = tuple(
    (name, arity, summary) for name, arity, summary in (
        ("isequal", 2, "x == y (0 with NaN)"), ("isnotequal", 2, "x != y (true with NaN)"),
        ("isgreater", 2, "x > y"), ("isgreaterequal", 2, "x >= y"), ("isless", 2, "x < y"),
        ("islessequal", 2, "x <= y"), ("islessgreater", 2, "(x < y) || (x > y)"),
        ("isfinite", 1, "finite"), ("isinf", 1, "infinite"), ("isnan", 1, "NaN"),
        ("isnormal", 1, "normal"), ("isordered", 2, "neither is NaN"), ("isunordered", 2, "either is NaN"),
        ("signbit", 1, "sign bit set"),
    )
)
"""The relational built-in functions on float and double (OpenCL C 3.0 §6.15.6 Table 18)."""

ATOMICS: tuple[tuple[str, int, str | None, bool, str], ...] = (
    # (name, operands, C11 function or None, has OpenCL 1.x forms, what it stores; all return the old value)
    ("add", 1, "atomic_fetch_add", True, "old + v"),
    ("sub", 1, "atomic_fetch_sub", True, "old - v"),
    ("xchg", 1, "atomic_exchange", True, "v"),
    ("inc", 0, None, True, "old + 1"),
    ("dec", 0, None, True, "old - 1"),
    ("cmpxchg", 2, None, True, "old == cmp ? v : old"),
    ("min", 1, "atomic_fetch_min", True, "min(old, v), signed or unsigned by the type"),
    ("max", 1, "atomic_fetch_max", True, "max(old, v), signed or unsigned by the type"),
    ("and", 1, "atomic_fetch_and", True, "old & v"),
    ("or", 1, "atomic_fetch_or", True, "old | v"),
    ("xor", 1, "atomic_fetch_xor", True, "old ^ v"),
    ("load", 0, "atomic_load", False, "nothing (returns the value)"),
    ("store", 1, "atomic_store", False, "v (returns nothing: its statement's output is not written)"),
    ("compare_exchange", 2, "atomic_compare_exchange", False,
     "desired if old == expected (strong; weak may fail spuriously); the result is (expected after, success)"),
    ("flag_test_and_set", 0, "atomic_flag_test_and_set", False, "set (returns whether it was set, 0 or 1)"),
    ("flag_clear", 0, "atomic_flag_clear", False, "clear (returns nothing)"),
)
"""The atomic operations under test (OpenCL C 3.0 §6.15.12), IR names ``atomic_<name>``.
OpenCL 1.x forms (§6.15.12.8-9): ``atomic_add`` on 32-bit and ``atom_add`` on 32- and 64-bit
(cl_khr_int64_*_atomics) integers; C11 forms (§6.15.12.7): the function, or its ``_explicit``
form with a memory order and scope (attributes ``order``, ``failure``, ``scope``)."""

ATOMIC_FORMS: tuple[str, ...] = ("atomic", "atom", "c11", "explicit")
VOID_ATOMICS = frozenset({"atomic_store", "atomic_flag_clear"})
MEMORY_ORDERS: tuple[str, ...] = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")
MEMORY_SCOPES: tuple[str, ...] = ("work_group", "device")
ATOMIC_FEATURES: tuple[str, ...] = ("int64_atomics", "cl3.0", "atomic_order_acq_rel", "atomic_order_seq_cst",
                                    "atomic_scope_device")
"""Every capability :func:`atomic_requirements` may name (fingerprint keys, fuzz.drivers.probe)."""


def atomic_requirements(op: Op) -> frozenset[str]:
    """What a device must support for one atomic operation (§6.15.12.7 feature macros;
    keys of a target's fingerprint): ``cl3.0`` for the C11 forms (built with
    -cl-std=CL3.0), the order and scope features they use, ``int64_atomics`` for 64-bit ones."""
    out = set()
    if op.type.elem.bits == 64:
        out.add("int64_atomics")
    form = op.attr("form")
    if form in ("c11", "explicit"):
        out.add("cl3.0")
    if form == "c11":
        out |= {"atomic_order_seq_cst", "atomic_scope_device"}
    if form == "explicit":
        orders = {op.attr("order"), op.attr("failure")}
        if orders & {"acquire", "release", "acq_rel"}:
            out.add("atomic_order_acq_rel")
        if "seq_cst" in orders:
            out.add("atomic_order_seq_cst")
        if op.attr("scope") == "device":
            out.add("atomic_scope_device")
    return frozenset(out)


SWIZZLE_FORMS: tuple[str, ...] = ("xyzw", "s", "S", "lo", "hi", "even", "odd")
"""How a component selection is spelled (§6.3.7): letters, .s / .S with hex digits in that
letter case, or a half (.lo .hi .even .odd, which on a 3-vector act on a 4-vector whose w is
undefined)."""


def half_components(form: str, width: int) -> tuple[int, ...]:
    """The components .lo/.hi/.even/.odd select from a vector of ``width`` lanes; on a 3-vector
    index 3 is the undefined w lane (§6.3.7)."""
    w = 4 if width == 3 else width
    return {"lo": tuple(range(w // 2)), "hi": tuple(range(w // 2, w)),
            "even": tuple(range(0, w, 2)), "odd": tuple(range(1, w, 2))}[form]


def swizzle_suffix(form: str, components: tuple[int, ...]) -> str:
    """The text after the dot: ``xzy``, ``s0a3``, ``S0A3``, ``lo``."""
    if form == "xyzw":
        return "".join("xyzw"[c] for c in components)
    if form == "s":
        return "s" + "".join(f"{c:x}" for c in components)
    if form == "S":
        return "S" + "".join(f"{c:X}" for c in components)
    return form


def _atomic_variant(op: Op) -> str:
    """An atomic's spelling family, its memory (local, global, global per work-group) and, for
    compare-exchange, strong or weak: ``atom:local``, ``explicit:global``, ``c11:group:weak``."""
    weak = ":weak" if op.attr("weak") else ""
    return f"{op.attr('form')}:{op.attr('memory')}{weak}"


def _read_variant(op: Op) -> str:
    """An image read's kind, coordinate type and sampler: ``2d:float:norm-linear-repeat:argument``,
    ``1d_buffer:int:no-sampler`` (the attributes repeat the image's kind and the sampler's
    settings, lang.images.read_form, so that a read is a construct without its program)."""
    return f"{op.attr('dim')}:{op.args[0].type.scalar}:{op.attr('form')}"


def _math_variant(op: Op) -> str:
    """A math built-in with a scalar-argument overload: ``scalar`` for a call of that overload
    (``ldexp(float4, int)``, lang.maths.MathFn.scalar_form), ``vector`` otherwise."""
    f = FUNCTIONS[op.op]
    return "scalar" if f.form(op.type, tuple(a.type for a in op.args)) == f.scalar_form else "vector"


LANES: dict[str, str] = {
    "each": "lane i of each operand of as many lanes, every lane of an operand of another width (a scalar "
            "widened, a reinterpretation)",
    "moved": "the operand lane it copies (its reference keeps that lane's rule: oracles.lanes.with_rule)",
    "whole": "every lane of each operand (a geometric function such as cross or normalize; OpVectorShuffle, "
             "whose reference does not keep its lanes' rules)",
}
"""``OpSpec.lanes``: what a result lane depends on; the oracle carries a rule softer than the
operation's own (a should, a tolerance, the letter) from those operand lanes to it
(oracles.interpreter.evaluate)."""

OPS: dict[str, OpSpec] = {
    o.name: o
    for o in (
        OpSpec("convert", "conversions", 1, "OpenCL C 3.0 §6.4.3",
               "explicit convert_T[_sat][_rte|_rtz|_rtp|_rtn]", lane_wise=True),
        OpSpec("cast", "conversions", 1, "OpenCL C 3.0 §6.4.2",
               "C cast (T)x: scalar to scalar, or scalar to vector (replicated)"),
        OpSpec("as", "conversions", 1, "OpenCL C 3.0 §6.4.4",
               "as_T reinterpretation of the same number of bytes"),
        OpSpec("arith", "conversions", 2, "OpenCL C 3.0 §6.4.1, §6.5.1, §6.5.6, C99 §6.3.1.8",
               "+ - * (and & | ^ on integers) under the usual arithmetic conversions, a scalar "
               "widened to a vector operand's type; signed results never overflow by construction",
               variant=lambda op: op.attr("operator"), lane_wise=True),
        # forms only SPIR-V expresses (SPIR-V 1.6 unified spec, §3.42 instructions)
        OpSpec("bitcast", "spirv", 1, "SPIR-V §3.42.11 OpBitcast",
               "OpBitcast between vectors (or scalar and vector) of different component counts",
               SPIRV_ONLY),
        OpSpec("vector_shuffle", "spirv", 2, "SPIR-V §3.42.12 OpVectorShuffle",
               "OpVectorShuffle of two vectors with at least one undefined (0xFFFFFFFF) component",
               SPIRV_ONLY, lambda op: "same" if op.args[0].type == op.args[1].type else "mixed", lanes="whole"),
        OpSpec("rem", "spirv", 2, "SPIR-V §3.42.13 OpSRem/OpSMod/OpUMod/OpFRem/OpFMod",
               "remainder with the sign of the dividend (rem) or of the divisor (mod); a divisor "
               "that would make it undefined (0, or -1 under MIN) is replaced by 1 first",
               SPIRV_ONLY, lambda op: spelling("rem", op.type, dict(op.attrs)), lane_wise=True),
        OpSpec("extended", "spirv", 2, "SPIR-V §3.42.13 OpIAddCarry/OpISubBorrow/OpUMulExtended/OpSMulExtended",
               "one member of the two-member struct an extended-arithmetic instruction returns",
               SPIRV_ONLY, lambda op: op.attr("opcode")),
        OpSpec("op_select", "spirv", 4, "SPIR-V §3.42.15 OpSelect, comparisons",
               "OpSelect(a cmp b, x, y) with a Boolean vector condition",
               SPIRV_ONLY),
        OpSpec("reduce", "spirv", 2, "SPIR-V §3.42.15 OpAny/OpAll",
               "OpAny or OpAll of a Boolean vector a cmp b, as an int 1 or 0",
               SPIRV_ONLY, lambda op: op.attr("reduce")),
        # expressions over scalars and vectors (area "expressions")
        OpSpec("swizzle", "expressions", 1, "OpenCL C 3.0 §6.3.7",
               "component selection .xyzw / .sN / .SN / .lo .hi .even .odd (repeats allowed; the w "
               "lane a 3-vector's .hi/.odd reads is undefined)", variant=lambda op: op.attr("form"), lanes="moved"),
        OpSpec("insert", "expressions", 2, "OpenCL C 3.0 §6.3.7, §6.5.15",
               "assignment to a swizzle of distinct components of a vector variable",
               variant=lambda op: op.attr("form"), lanes="moved"),
        OpSpec("vec", "expressions", -1, "OpenCL C 3.0 §6.3.6",
               "vector literal (Tn)(...) from one scalar (replicated) or parts of the element type",
               variant=lambda op: "splat" if len(op.args) == 1 else "parts", lanes="moved"),
        OpSpec("vload", "expressions", 1, "OpenCL C 3.0 §6.15.7",
               "vloadn(offset, p) from the scalars of an input element",
               variant=lambda op: f"vload{op.type.width}", lanes="moved"),
        OpSpec("vstore", "expressions", 1, "OpenCL C 3.0 §6.15.7",
               "vstoren(value, offset, p) into the scalars of an output element (a statement's root)",
               variant=lambda op: f"vstore{op.args[0].type.width}", lanes="moved"),
        OpSpec("shuffle", "expressions", 2, "OpenCL C 3.0 §6.15.13",
               "shuffle(x, mask) with a runtime mask (only its low ilogb(2m-1) bits count)", lanes="moved"),
        OpSpec("shuffle2", "expressions", 3, "OpenCL C 3.0 §6.15.13",
               "shuffle2(x, y, mask) with a runtime mask (one more bit than shuffle)", lanes="moved"),
        OpSpec("select", "expressions", 3, "OpenCL C 3.0 §6.15.6",
               "select(a, b, c): c ? b : a for scalars, MSB of c[i] for vectors", lanes="moved"),
        OpSpec("bitselect", "expressions", 3, "OpenCL C 3.0 §6.15.6", "(a & ~c) | (b & c) on the bits", lane_wise=True),
        OpSpec("ternary", "expressions", 3, "OpenCL C 3.0 §6.5.9",
               "c ? x : y; with vectors it is select(y, x, c) (MSB of each c lane)",
               variant=lambda op: "vector" if op.type.is_vector else "scalar", lanes="moved"),
        OpSpec("compare", "expressions", 2, "OpenCL C 3.0 §6.5.4, §6.5.5",
               "relational and equality operators: int 1/0 for scalars, -1/0 lanes for vectors",
               variant=lambda op: op.attr("operator"), by_operand=True),
        OpSpec("logic", "expressions", 2, "OpenCL C 3.0 §6.5.7",
               "&& and ||: int 1/0 for scalars, -1/0 lanes for vectors",
               variant=lambda op: op.attr("operator"), by_operand=True),
        OpSpec("not", "expressions", 1, "OpenCL C 3.0 §6.5.8", "!x: int 1/0 for scalars, -1/0 lanes for vectors",
               by_operand=True),
        OpSpec("any", "expressions", 1, "OpenCL C 3.0 §6.15.6", "any(x): 1 if the MSB of any lane is set",
               by_operand=True),
        OpSpec("all", "expressions", 1, "OpenCL C 3.0 §6.15.6", "all(x): 1 if the MSB of every lane is set",
               by_operand=True),
        OpSpec("div", "expressions", 2, "OpenCL C 3.0 §6.5.1",
               "x / y and x % y on integers; a divisor that is 0, or -1 under MIN, is replaced by 1 "
               "in the program itself", variant=lambda op: op.attr("operator"), lane_wise=True),
        OpSpec("shift", "expressions", 2, "OpenCL C 3.0 §6.5.10",
               "x << y and x >> y: only the low log2(N) bits of y count (N after promotion for "
               "scalars, the lane width for vectors)", variant=lambda op: op.attr("operator"), lane_wise=True),
        OpSpec("complement", "expressions", 1, "OpenCL C 3.0 §6.5.6", "~x on integers", lane_wise=True),
        *(OpSpec(b.name, "expressions", b.arity, "OpenCL C 3.0 §6.15.3 Table 13", b.summary,
                 variant=(lambda op: "scalar" if op.type.is_vector and op.args[-1].type.width == 1 else "vector")
                 if b.name in ("min", "max", "clamp") else None, since=b.since, lane_wise=b.lane_wise)
          for b in INTEGER_BUILTINS),
        *(OpSpec(name, "expressions", arity, "OpenCL C 3.0 §6.15.6 Table 18", summary, by_operand=True)
          for name, arity, summary in RELATIONAL_BUILTINS),
        # atomics under contention (area "atomics"): statement roots only
        *(OpSpec(f"atomic_{name}", "atomics", arity,
                 "OpenCL C 3.0 §6.15.12.8-9 Tables 26-29" if legacy else "OpenCL C 3.0 §6.15.12.7",
                 summary, variant=_atomic_variant)
          for name, arity, _, legacy, summary in ATOMICS),
        # image reads (area "images"): statement roots only
        OpSpec("read_image", "images", 1, "OpenCL C 3.0 §6.15.15.2-6, chapter 8",
               "read_imagef/i/ui/h of an image (attribute image) through a sampler (attribute "
               "sampler) or without one, at a coordinate from an input buffer", variant=_read_variant),
        # floating-point arithmetic and the math, common and geometric built-ins (area "math"):
        # declared with their bounds in lang.maths; an out-parameter's result goes to
        # the output buffer the attribute ``out`` names (statement roots only)
        *(OpSpec(f.name, "math", len(f.inputs), f.section,
                 f"{'x / y on floats' if f.name == 'fdiv' else f.name}: {f.bound('float')} on float",
                 variant=_math_variant if f.scalar_form else None,
                 lanes="whole" if f.group == "geometric" else "each")
          for f in FUNCTIONS.values()),
    )
}

COMPARES: tuple[str, ...] = ("==", "!=", "<", "<=", ">", ">=")
EXTENDED: tuple[str, ...] = ("IAddCarry", "ISubBorrow", "UMulExtended", "SMulExtended")

ROUNDINGS: tuple[str, ...] = ("rte", "rtz", "rtp", "rtn")


def spelling(op_name: str, result: Type, attrs: dict) -> str:
    """The operation as a person reads it: ``convert_int4_sat_rte``, ``as_float``, ``cast``."""
    if op_name == "convert":
        sat = "_sat" if attrs.get("sat") else ""
        rnd = f"_{attrs['rounding']}" if attrs.get("rounding") else ""
        return f"convert_{result.c_name}{sat}{rnd}"
    if op_name == "as":
        return f"as_{result.c_name}"
    if op_name == "cast":
        return f"({result.c_name})"
    if op_name == "store":
        return "assignment"
    if op_name == "bitcast":
        return f"OpBitcast({result.c_name})"
    if op_name == "vector_shuffle":
        return f"OpVectorShuffle({result.c_name})"
    if op_name == "rem":
        if result.elem.is_int and not result.elem.signed:
            return "OpUMod"
        return f"Op{'F' if result.elem.is_float else 'S'}{'Rem' if attrs['mode'] == 'rem' else 'Mod'}"
    if op_name == "extended":
        return f"Op{attrs['opcode']}.{attrs['member']}"
    if op_name in ("swizzle", "insert"):
        return f"{'.' if op_name == 'swizzle' else 'assign to .'}{swizzle_suffix(attrs['form'], attrs['components'])}"
    if op_name in ("arith", "compare", "logic", "div", "shift"):
        return f"operator{attrs['operator']}"
    if op_name in ("not", "complement"):
        return f"operator{'!' if op_name == 'not' else '~'}"
    if op_name == "vec":
        return f"({result.c_name})(...)"
    if op_name == "vload":
        return f"vload{result.width}"
    if op_name == "vstore":
        return "vstoren"
    if op_name == "ternary":
        return "operator?:"
    if op_name == "fdiv":
        return "operator/"
    if op_name in C_NAMES:
        return C_NAMES[op_name]
    if op_name.startswith("atomic_"):
        return atomic_function(op_name, attrs)
    if op_name == "read_image":
        return f"read_image{read_function(result.c_name)}"
    if op_name in ("op_select", "reduce"):
        comparison = f"a{attrs['compare']}b{'' if attrs.get('ordered', True) else ' unordered'}"
        return f"Op{'Select' if op_name == 'op_select' else attrs['reduce'].title()}({comparison})"
    return op_name


def atomic_function(op_name: str, attrs: dict) -> str:
    """The OpenCL C function an atomic operation calls: ``atomic_add``, ``atom_add``,
    ``atomic_fetch_add``, ``atomic_compare_exchange_weak_explicit``."""
    name = op_name[len("atomic_"):]
    form = attrs["form"]
    if form in ("atomic", "atom"):
        return f"{form}_{name}"
    c11 = next(c for n, _, c, _, _ in ATOMICS if n == name)
    if name == "compare_exchange":
        c11 += "_weak" if attrs.get("weak") else "_strong"
    return c11 + ("_explicit" if form == "explicit" else "")

