"""The floating-point operations under test (area ``math``), each declared once with its accuracy.

Every entry of :data:`FUNCTIONS` names an OpenCL C built-in (or ``fdiv``, the ``/`` operator on
floats), its parameters, its result and the bound the spec gives it per type and profile
(OpenCL C 3.0.19 §7.4 Tables 65, 66, 68, 69). The readers are the emitters (the
function's name; in SPIR-V the OpenCL.std instruction of
that name, OpFDiv for ``fdiv``, OpDot for ``dot``), the oracle (:mod:`oracles.math`: the
reference, the special values of §7.5 and C99 Annex F, the bound) and the strategy
(:mod:`fuzz.strategies.maths`), which draws operands of the parameters' kinds.

Parameter letters: ``g`` the statement's floating type (scalar or vector), ``s`` its scalar
element type, ``i`` int lanes of the same count (``intn``), ``k`` a scalar ``int``, ``u`` unsigned
lanes of the element's width (``nan``'s code). ``s`` and ``k`` are the scalar arguments of the
overloads that combine a vector gentype with a scalar (``MathFn.scalar_form``: ``floatn ldexp(floatn
x, int k)``, ``fmin(gentypef x, float y)``, ``mix(gentypef x, gentypef y, float a)``, ``step(float
edge, gentypef x)``, ``smoothstep(float edge0, float edge1, gentypef x)``, OpenCL C 3.0.19 §6.15.2
Table 11 and §6.15.4 Table 16): the scalar is the same value in every lane, and the vector versions
"operate component-wise" (§6.15.2, §6.15.4), so each lane is the scalar function of its lane's
operands with the bound and the rules of the all-vector form. A vector statement may call either
overload (:meth:`MathFn.forms`); for a scalar statement they are one and the same. An
out-parameter (``G`` a pointer to the floating type, ``I`` to ``intn``) is written through a
private variable and stored into its own output buffer (op attribute ``out``), so one call is
judged on both results. Results: ``g``, ``i`` (ilogb), ``s`` (a scalar:
dot, length, distance).

A bound (:class:`Bound`) is ``cr`` (correctly rounded), ``exact`` (0 ulp: the result needs no
rounding), ``ulp`` (at most ``value + per_lane * n`` ulp of the infinitely precise result, §7.4
definition of ulp), ``abs`` (an absolute error), ``mad`` (a correctly rounded fma, or a correctly
rounded multiply followed by a correctly rounded add), ``dot``/``cross`` (the geometric absolute
tolerances in units of the type's epsilon times max^2) or ``none`` (implementation-defined or
undefined: only prescribed special values are judged).
"""

from __future__ import annotations

from dataclasses import dataclass

from lang.types import Type


@dataclass(frozen=True)
class Bound:
    kind: str  # cr, exact, ulp, abs, mad, dot, cross, none
    value: float = 0.0
    per_lane: float = 0.0  # ulp added per vector lane n (geometric functions)

    def ulps(self, n: int = 1) -> float:
        return self.value + self.per_lane * n

    def __str__(self) -> str:
        if self.kind == "ulp":
            return f"{self.value:g}{f' + {self.per_lane:g}n' if self.per_lane else ''} ulp"
        if self.kind == "abs":
            return f"absolute {self.value:g}"
        return {"cr": "correctly rounded", "exact": "0 ulp", "mad": "fma or CR mul then CR add",
                "dot": "max^2 (2n-1) eps", "cross": "max^2 3 eps", "none": "not defined"}[self.kind]


CR, EXACT, NONE, MAD = Bound("cr"), Bound("exact"), Bound("none"), Bound("mad")

PROFILES = ("float", "float_ep", "double", "half", "half_ep")
"""Columns of the bounds: single precision (full, embedded profile), double, half (full, embedded)."""


def _u(*values: float) -> tuple[Bound, ...]:
    return tuple(Bound("ulp", v) for v in values)


def _geo(*pairs: tuple[float, float] | None) -> tuple[Bound, ...]:
    """length/distance/normalize bounds (value + per-lane ulp) for float, -, double, half, -."""
    f, d, h = pairs
    return (Bound("ulp", *f), NONE, Bound("ulp", *d), Bound("ulp", *h), NONE)


C_NAMES: dict[str, str] = {"fmin_common": "min", "fmax_common": "max", "fclamp": "clamp"}
"""The OpenCL C spelling of the functions whose name here is their OpenCL.std instruction's (SPIR-V
OpenCL extended instruction set §2.3): §6.15.4's ``min``, ``max`` and ``clamp`` on floats, whose
OpenCL C names are the integer built-ins' too (lang.ops.INTEGER_BUILTINS, §6.15.3)."""


@dataclass(frozen=True)
class MathFn:
    name: str  # the OpenCL C spelling (fdiv: the operator x / y)
    params: str  # parameter letters (module docstring)
    result: str  # g, i or s
    group: str  # math (§6.15.2), common (§6.15.4), geometric (§6.15.5), arith (§6.5.1)
    bounds: tuple[Bound, ...]  # one per PROFILES column
    geometric_widths: tuple[int, ...] = (1, 2, 3, 4)  # vector widths a geometric function takes
    scalar_form: str = ""  # the letters of the overload with scalar arguments (s, k) beside a vector, or ''

    @property
    def c_name(self) -> str:
        """The OpenCL C function's name (:data:`C_NAMES`; the declared name otherwise)."""
        return C_NAMES.get(self.name, self.name)

    @property
    def arity(self) -> int:
        return len(self.params)

    @property
    def inputs(self) -> str:
        """The parameters the call passes values for (all but the out-parameter)."""
        return "".join(p for p in self.params if p not in "GI")

    @property
    def out(self) -> str:
        """The out-parameter's letter (``G`` or ``I``), or ''."""
        return next((p for p in self.params if p in "GI"), "")

    @property
    def section(self) -> str:
        return {"math": "OpenCL C 3.0 §6.15.2 Table 14, §7.4, §7.5", "common": "OpenCL C 3.0 §6.15.4, §7.4",
                "geometric": "OpenCL C 3.0 §6.15.5, §7.4", "arith": "OpenCL C 3.0 §6.5.1, §7.4"}[self.group]

    def bound(self, profile: str) -> Bound:
        return self.bounds[PROFILES.index(profile)]

    def forms(self, t: Type) -> tuple[str, ...]:
        """The parameter letters of every overload a statement of type ``t`` may call: the declared
        one and, for a vector statement, the scalar-argument one."""
        return (self.params,) + ((self.scalar_form,) if self.scalar_form and t.is_vector else ())

    def form(self, result: Type, args: tuple[Type, ...]) -> str | None:
        """The overload (its parameter letters) a call with this result and these operand types
        is, or None where no declared overload has them."""
        t = self.statement_type(result, args)
        return next((p for p in self.forms(t)
                     if tuple(self.operand_type(x, t) for x in p if x not in "GI") == tuple(args)), None)

    def statement_type(self, result: Type, args: tuple[Type, ...]) -> Type:
        """The statement type ``t`` of a call (the inverse of :meth:`result_type`)."""
        if self.result == "g":
            return result
        if self.result == "i":
            return Type(args[0].scalar, result.width)
        return args[0]

    def operand_type(self, letter: str, t: Type) -> Type:
        """The type of a parameter (pointee for out-parameters) for a statement of type ``t``."""
        if letter in "gG":
            return t
        if letter == "s":
            return Type(t.scalar)
        if letter in "iI":
            return Type("int", t.width)
        if letter == "k":
            return Type("int")
        if letter == "u":
            return Type({16: "ushort", 32: "uint", 64: "ulong"}[_bits(t)], t.width)
        raise ValueError(letter)

    def result_type(self, t: Type) -> Type:
        return {"g": t, "i": Type("int", t.width), "s": Type(t.scalar)}[self.result]


def _bits(t: Type) -> int:
    return {"half": 16, "float": 32, "double": 64}[t.scalar]


_ALL_CR = (CR,) * 5
_ALL_EXACT = (EXACT,) * 5
_HALF_ONLY = (Bound("ulp", 8192), NONE, NONE, NONE, NONE)  # half_ functions: float only (Table 65)

_TABLE: list[tuple[str, str, str, str, tuple[Bound, ...]]] = [
    # (name, params, result, group, bounds per PROFILES)
    ("fdiv", "gg", "g", "arith", (Bound("ulp", 2.5), Bound("ulp", 3), CR, Bound("ulp", 1), Bound("ulp", 1))),
    ("fma", "ggg", "g", "math", _ALL_CR),
    ("mad", "ggg", "g", "math", (MAD, NONE, NONE, NONE, NONE)),  # OpenCL C: f32 EP, f64, half: any value
    ("sqrt", "g", "g", "math", (Bound("ulp", 3), Bound("ulp", 4), CR, Bound("ulp", 1.5), Bound("ulp", 1.5))),
    ("rsqrt", "g", "g", "math", _u(2, 4, 2, 1, 1)),
    ("cbrt", "g", "g", "math", _u(2, 4, 2, 2, 2)),
    *((n, "g", "g", "math", _u(3, 4, 3, 2, 3)) for n in ("exp", "exp2", "exp10", "expm1", "log", "log2", "log10")),
    ("log1p", "g", "g", "math", _u(2, 4, 2, 2, 3)),
    *((n, "g", "g", "math", _u(4, 4, 4, 2, 2)) for n in ("sin", "cos", "sinpi", "cospi")),
    ("sincos", "gG", "g", "math", _u(4, 4, 4, 2, 2)),
    *((n, "g", "g", "math", _u(4, 4, 4, 2, 3)) for n in ("sinh", "cosh", "acos", "asin", "acosh", "asinh")),
    ("tan", "g", "g", "math", _u(5, 5, 5, 2.5, 3)),
    ("tanh", "g", "g", "math", _u(5, 5, 5, 2, 3)),
    ("tanpi", "g", "g", "math", _u(6, 6, 6, 2, 3)),
    *((n, "g", "g", "math", _u(5, 5, 5, 2, 3)) for n in ("acospi", "asinpi", "atan", "atanh", "atanpi")),
    *((n, "gg", "g", "math", _u(6, 6, 6, 2, 3)) for n in ("atan2", "atan2pi")),
    ("hypot", "gg", "g", "math", _u(4, 4, 4, 2, 3)),
    *((n, "g", "g", "math", _u(16, 16, 16, 4, 4)) for n in ("erf", "erfc", "tgamma")),
    *((n, "gg", "g", "math", _u(16, 16, 16, 4, 5)) for n in ("pow", "powr")),
    *((n, "gi", "g", "math", _u(16, 16, 16, 4, 5)) for n in ("pown", "rootn")),
    ("lgamma", "g", "g", "math", (NONE,) * 5),  # Table 65: undefined (special values still hold)
    ("lgamma_r", "gI", "g", "math", (NONE,) * 5),
    *((n, "g", "g", "math", _ALL_CR) for n in ("ceil", "floor", "trunc", "rint", "round")),
    ("fdim", "gg", "g", "math", _ALL_CR),
    ("fract", "gG", "g", "math", _ALL_CR),
    ("ldexp", "gi", "g", "math", _ALL_CR),
    *((n, "g", "g", "math", _ALL_EXACT) for n in ("fabs", "logb")),
    ("ilogb", "g", "i", "math", _ALL_EXACT),
    *((n, "gg", "g", "math", _ALL_EXACT)
      for n in ("copysign", "fmin", "fmax", "minmag", "maxmag", "fmod", "remainder", "nextafter")),
    ("frexp", "gI", "g", "math", _ALL_EXACT),
    ("modf", "gG", "g", "math", _ALL_EXACT),
    ("remquo", "ggI", "g", "math", _ALL_EXACT),
    ("nan", "u", "g", "math", _ALL_EXACT),
    *((f"half_{n}", "g", "g", "math", _HALF_ONLY)
      for n in ("cos", "exp", "exp2", "exp10", "log", "log2", "log10", "recip", "rsqrt", "sin", "sqrt", "tan")),
    *((f"half_{n}", "gg", "g", "math", _HALF_ONLY) for n in ("divide", "powr")),
    # common functions (§6.15.4)
    *((n, "g", "g", "common", _u(2, 2, 2, 2, 2)) for n in ("degrees", "radians")),
    ("sign", "g", "g", "common", _ALL_EXACT),
    *((n, "gg", "g", "common", _ALL_EXACT) for n in ("fmin_common", "fmax_common")),  # min, max (C_NAMES)
    ("fclamp", "ggg", "g", "common", _ALL_EXACT),  # clamp
    ("step", "gg", "g", "common", _ALL_EXACT),
    ("mix", "ggg", "g", "common", (Bound("abs", 1e-3), NONE, NONE, NONE, NONE)),
    ("smoothstep", "ggg", "g", "common", (Bound("abs", 1e-5), NONE, NONE, NONE, NONE)),
    # geometric functions (§6.15.5)
    ("dot", "gg", "s", "geometric", (Bound("dot"), NONE, Bound("dot"), Bound("dot"), NONE)),
    ("cross", "gg", "g", "geometric", (Bound("cross"), NONE, Bound("cross"), Bound("cross"), NONE)),
    ("length", "g", "s", "geometric", _geo((2.75, 0.5), (5.5, 1), (0.25, 0.5))),
    ("distance", "gg", "s", "geometric", _geo((2.5, 2), (5.5, 2), (0, 2))),
    ("normalize", "g", "g", "geometric", _geo((2, 1), (4.5, 1), (1, 1))),
    ("fast_length", "g", "s", "geometric", (Bound("ulp", 8191.5, 1), NONE, NONE, NONE, NONE)),
    ("fast_distance", "gg", "s", "geometric", (Bound("ulp", 8191.5, 2), NONE, NONE, NONE, NONE)),
    ("fast_normalize", "g", "g", "geometric", (Bound("ulp", 8192, 1), NONE, NONE, NONE, NONE)),
]

SCALAR_FORMS: dict[str, str] = {"ldexp": "gk", "fmin": "gs", "fmax": "gs", "mix": "ggs", "step": "sg",
                                 "smoothstep": "ssg", "fmin_common": "gs", "fmax_common": "gs", "fclamp": "gss"}
"""The scalar-argument overloads (OpenCL C 3.0.19 §6.15.2 Table 11: ``ldexp(floatn x, int k)``,
``fmin``/``fmax(gentypef x, float y)``; §6.15.4 Table 16: ``mix(gentypef x, gentypef y, float a)``,
``step(float edge, gentypef x)``, ``smoothstep(float edge0, float edge1, gentypef x)``,
``min``/``max(gentypef x, float y)``, ``clamp(gentypef x, float minval, float maxval)``; each for
double and half alike). pown and rootn take ``intn`` only, and no other function of Table 11 has
such an overload."""

FUNCTIONS: dict[str, MathFn] = {
    name: MathFn(name, params, result, group, bounds, geometric_widths=(3, 4) if name == "cross" else (1, 2, 3, 4),
                 scalar_form=SCALAR_FORMS.get(name, ""))
    for name, params, result, group, bounds in _TABLE
}
"""Every floating-point operation of the area, by its IR operation name."""

FLOAT_ONLY = frozenset(n for n, f in FUNCTIONS.items() if n.startswith(("half_", "fast_")))
"""half_ and fast_ forms take float (and its vectors) only (§6.15.2, §6.15.5)."""

UNSAFE_BOUNDS: dict[str, Bound] = {
    # OpenCL C 3.0 Table 67 (single precision, -cl-unsafe-math-optimizations, OpenCL C >= 2.0);
    # domain-limited rules are applied by oracles.math.bounds.unsafe_domain
    "fdiv": Bound("ulp", 2.5), "acos": Bound("ulp", 4096), "asin": Bound("ulp", 4096), "atan": Bound("ulp", 4096),
    "sin": Bound("abs", 2.0**-11), "cos": Bound("abs", 2.0**-11), "sincos": Bound("abs", 2.0**-11),
    "sinpi": Bound("abs", 2.0**-11), "cospi": Bound("abs", 2.0**-11),
    "exp": Bound("ulp", 3), "exp2": Bound("ulp", 3),
    "log": Bound("ulp", 3), "log2": Bound("ulp", 3), "log10": Bound("ulp", 3),
    "mad": MAD,
    **{n: NONE for n in ("acosh", "acospi", "asinh", "asinpi", "atanh", "atanpi", "atan2", "atan2pi", "cbrt",
                         "cosh", "exp10", "expm1", "log1p", "pow", "pown", "powr", "rootn", "sinh", "tan", "tanh",
                         "tanpi")},  # "derived implementations may implement as ...": no bound in ulp
}

OPTIONS: tuple[str, ...] = (
    "-cl-fast-relaxed-math", "-cl-finite-math-only", "-cl-denorms-are-zero", "-cl-mad-enable",
    "-cl-unsafe-math-optimizations", "-cl-fp32-correctly-rounded-divide-sqrt",
)
"""The build options the math strategy draws as program attributes (OpenCL 3.0 API §5.8.6.2 Math
Intrinsics Options, §5.8.6.3 Optimization Options); :func:`option_flags` reads these and every
other option that changes the rules."""

CR_DIVIDE_SQRT = "fp32_correctly_rounded_divide_sqrt"
"""The program requirement of -cl-fp32-correctly-rounded-divide-sqrt (CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
in the device's single FP config)."""

IMPLIED: dict[str, tuple[str, ...]] = {
    # API §5.8.6.3: "Sets the optimization options -cl-finite-math-only and -cl-unsafe-math-optimizations"
    "-cl-fast-relaxed-math": ("-cl-finite-math-only", "-cl-unsafe-math-optimizations"),
    # API §5.8.6.3: "This option includes the -cl-no-signed-zeros, -cl-mad-enable, and -cl-denorms-are-zero
    # options"
    "-cl-unsafe-math-optimizations": ("-cl-no-signed-zeros", "-cl-mad-enable", "-cl-denorms-are-zero"),
}
"""The options an option sets (OpenCL 3.0 API §5.8.6.3)."""

FLAGS: dict[str, str] = {
    "-cl-finite-math-only": "finite",
    "-cl-unsafe-math-optimizations": "unsafe",
    "-cl-no-signed-zeros": "nsz",
    "-cl-mad-enable": "mad",
    "-cl-denorms-are-zero": "daz",
    "-cl-fp32-correctly-rounded-divide-sqrt": "cr",
}
"""Each option that changes the rules and its flag of the float environment (:func:`option_flags`);
an option not listed (-cl-opt-disable: "disables all optimizations", API §5.8.6.3) voids nothing."""


def build_flags(options: str, requires: frozenset[str]) -> frozenset[str]:
    """The float environment's flags of how a program is built: its options (:func:`option_flags`)
    and ``cl2`` when it is built as OpenCL C 2.0 or newer (a program requiring ``cl2.0`` or
    ``cl3.0`` gets -cl-std=CL2.0/CL3.0, campaign.jobs.c_options; without -cl-std a device builds
    OpenCL C 1.2, API §5.8.6.5). Table 67's bounds for -cl-unsafe-math-optimizations "require
    support for OpenCL C 2.0 or newer" (OpenCL C 3.0.19 §7.4): they apply to such builds only."""
    return option_flags(options) | ({"cl2"} if requires & {"cl2.0", "cl3.0"} else frozenset())


def option_flags(options: str) -> frozenset[str]:
    """What a program's build options allow, as flags of the float environment (oracles.math,
    whose ``bounds.edges_void`` and ``bounds.accuracy_void`` read them), each option with the
    options it sets (:data:`IMPLIED`, OpenCL 3.0 API §5.8.6.3):

    * ``finite`` (-cl-finite-math-only: "assume that arguments and results are not NaNs, +Inf,
      -Inf ... may violate the OpenCL numerical compliance requirements for single precision and
      double precision floating-point, as well as edge case behavior");
    * ``unsafe`` (-cl-unsafe-math-optimizations: "(c) assume relaxed OpenCL numerical compliance
      requirements as defined in the unsafe math optimization section" (Table 67) "and (d) may
      violate edge case behavior");
    * ``nsz`` (-cl-no-signed-zeros: "the sign of a zero result is not significant");
    * ``mad`` (-cl-mad-enable: "Allow a * b + c to be replaced by a mad instruction");
    * ``daz`` (-cl-denorms-are-zero, §5.8.6.2: single and double precision denormals "may be
      flushed to zero");
    * ``cr`` (-cl-fp32-correctly-rounded-divide-sqrt, §5.8.6.2: float / and sqrt correctly rounded).

    -cl-fast-relaxed-math is finite + unsafe, so all six but ``cr``."""
    words = set(options.split())
    todo = list(words)
    while todo:
        for implied in IMPLIED.get(todo.pop(), ()):
            if implied not in words:
                words.add(implied)
                todo.append(implied)
    return frozenset(FLAGS[w] for w in words if w in FLAGS)
