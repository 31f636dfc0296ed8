"""Which bound of OpenCL C 3.0 §7.4 decides a math built-in's lane (Tables 65-69 by type and
profile, Table 67 under -cl-unsafe-math-optimizations, -cl-fp32-correctly-rounded-divide-sqrt),
and the rule (:mod:`oracles.rules`) each lane names.
"""

from __future__ import annotations

import math

from lang.maths import UNSAFE_BOUNDS, Bound, MathFn
from oracles import rules
from oracles.math.specials import SHALL, source

_LIMIT_SECTION = ("C99 F.9 ¶3 ('treat infinities, NaNs, signed zeros, subnormals ... in a manner consistent with "
                  "the basic arithmetic operations covered by IEC 60559'), incorporated by OpenCL C 3.0.19 §7.5 "
                  "('shall conform to sections F.9')")
_SPECIAL_KINDS = {
    "special": lambda fn: (f"{fn}: the value prescribed for this operand is exact, sign included (NaN: any NaN)",
                           source(fn)),
    "limit": lambda fn: ((f"{fn}: at this infinite or zero operand (no listed case) the limit value, signed as "
                          "IEC 60559 arithmetic gives it, exactly (NaN: any NaN)"), _LIMIT_SECTION),
    "spirv": lambda fn: ((f"{fn}: on a SPIR-V path the value the SPIR-V environment prescribes for this operand is "
                          "exact (exp10(±0) = 1)"),
                         (f"OpenCL SPIR-V environment §6.7.1, OpExtInst {fn} ({SHALL}); OpenCL C 3.0.19 "
                          "§7.5.1 does not list it")),
}
_S = "OpenCL C 3.0.19"
_SPIRV_ENV = "OpenCL SPIR-V environment §6.7.1"
RULE_LGAMMA_SIGN = "math.lgamma_r.sign"
RULE_LGAMMA_SIGN_POLE = "math.lgamma_r.sign.pole"
RULE_NEXTAFTER_FTZ = "math.nextafter.ftz"
RULE_NORMALIZE_INF = "math.normalize.special.inf"
RULE_CROSS_W = "math.cross.w"
rules.register(RULE_LGAMMA_SIGN, "lgamma_r stores the sign of the gamma function in signp: 1 where Γ(x) > 0, -1 "
               "where Γ(x) < 0", f"{_S} §6.15.2 Table 14 ('The sign of the gamma function is returned in the signp "
               "argument of lgamma_r'; a definition)")
rules.register(RULE_LGAMMA_SIGN_POLE, "lgamma_r(x, signp) returns 0 in signp if x is zero or a negative integer",
               f"{_S} §7.5.1 ({SHALL}) and {_SPIRV_ENV} OpExtInst lgamma_r: the same sentence on both paths")
rules.register(RULE_NEXTAFTER_FTZ, "nextafter(-0, y > 0) returns the smallest positive denormal (nextafter(+0, "
               "y < 0) the smallest negative one); where denormals are flushed also ±0 (§7.5.3) or, as the device "
               "may choose, the smallest positive (negative) normal value", f"{_S} §7.5.3 ('a device may choose to conform to the following edge cases for "
               "nextafter instead of those listed in the additional requirements section'); OpenCL SPIR-V "
               "environment §6.7.3 the same")
RULE_NEXTAFTER_LETTER = "math.nextafter.ftz.letter"
"""Named by the deviation classifier (oracles.deviation.values.smallest_normal), never by the math
oracle: the lane's own rule judges every other wrong value of these operands."""
rules.register(
    RULE_NEXTAFTER_LETTER, "where denormals are flushed, nextafter(-0, y < 0) (nextafter(+0, y > 0)) may be "
    "the smallest denormal of y's sign or, flushed, ±0; the smallest normal of y's sign, which §7.5.3 lets such a "
    "device return for the other zero, is a deviation from the letter only",
    f"{_S} §7.5.3 ('a device may choose to conform to the following edge cases for nextafter instead of those "
    "listed in the additional requirements section': a permission that names nextafter(-0, y > 0) and "
    "nextafter(+0, y < 0), not these; for them the general cases 1-4 of §7.5.3 hold, and §7.4's 0 ulp); OpenCL "
    "SPIR-V environment §6.7.3 the same", severity="letter")
rules.register(RULE_NORMALIZE_INF, "normalize(v) with an infinite element and no NaN proceeds as if v[i] = isinf(v[i]) "
               "? copysign(1.0, v[i]) : 0.0 * v[i]: the result is normalize of that vector, within normalize's bound",
               f"{_S} §7.5.1 ('shall proceed as if the elements in v were replaced as follows'), §7.4 Tables 65 and "
               f"68 (the bound); {_SPIRV_ENV} OpExtInst normalize the same")
rules.register(RULE_CROSS_W, "the w component of a 4-component cross product is 0.0",
               f"{_S} §6.15.5 Table 17 ('The w component of float4 result returned will be 0.0'; a definition)")


GEOMETRIC_DEFINITION = (
    f"{_S} §6.15.5 Table 17 (length: 'Return the length of vector p, i.e., sqrt(p.x² + p.y² + ...)'; distance: "
    "'calculated as length(p0 - p1)'; fast_length and fast_distance the same with half_sqrt: definitions) in "
    "IEEE 754 arithmetic (§7: 'features of the C99 and IEEE 754 standards that must be supported'; §7.2: 'INF "
    "and NaNs must be supported'); §7.5's C99 F.9 covers the math functions, not the geometric ones")
"""Where a geometric function's value at non-finite operands is stated: its definition (Table 17),
evaluated in the arithmetic chapter 7 requires."""


def nonfinite_length_rule(fn: str) -> str:
    """The rule of length, distance and their fast_ forms at a non-finite operand."""
    rid = f"math.{fn}.special.nonfinite"
    rules.register(rid, f"{fn} with an infinite component and no NaN is +inf, with a NaN and no infinity a NaN (the "
                   "definition sqrt(p.x² + p.y² + ...) of the components" + (" of p0 - p1" if "distance" in fn else "")
                   + " in IEEE 754 arithmetic; with both, the definition gives NaN and a length computed like C99's "
                   "hypot, as §7.5.1's 'without overflow' invites, +inf: not judged)", GEOMETRIC_DEFINITION)
    return rid


_TABLES = {"float": "Table 65", "float_ep": "Table 66", "double": "Table 68", "half": "Table 69", "half_ep": "Table 69"}


def rule_for(fn: str, kind: str, profile: str, bound: Bound | None = None) -> str:
    """Register (once) and return the id of the rule deciding one lane."""
    if kind in _SPECIAL_KINDS:
        rid = f"math.{fn}." + {"special": "special", "limit": "limit", "spirv": "special.spirv"}[kind]
        rules.register(rid, *_SPECIAL_KINDS[kind](fn))
        return rid
    if kind == "unsafe":
        rid = f"math.{fn}.{profile}.unsafe.{bound.kind}"
        what = f"{bound} + floor(|2x|) ulp" if fn in ("exp", "exp2") else f"{bound} (in its domain)"
        rules.register(rid, f"{fn} on {profile} with -cl-unsafe-math-optimizations: {what}",
                       "OpenCL C 3.0 §7.4 Table 67")
        return rid
    rid = f"math.{fn}.{profile}.{kind}"
    text = {"cr": f"{fn} on {profile} is correctly rounded",
            "exact": f"{fn} on {profile} is exact (0 ulp)",
            "mad": f"{fn} on {profile} is a correctly rounded fma or a correctly rounded multiply then add",
            "ulp": f"{fn} on {profile} is within {bound} of the infinitely precise result",
            "abs": f"{fn} on {profile} is within an absolute error of {bound.value if bound else 0:g}",
            "dot": f"{fn} on {profile} is within max*max*(2n-1)*EPSILON (absolute)",
            "cross": f"{fn} on {profile} is within max*max*3*EPSILON per component (absolute)",
            "formula": f"{fn} on {profile} is within an absolute error of {bound.value if bound else 0:g} of its "
                       f"formula, evaluated exactly or with each operation rounded to {profile.removesuffix('_ep')}"
            }[kind]
    section = f"OpenCL C 3.0 §7.4 {_TABLES[profile]}"
    if kind == "formula":  # oracles.math.formulas
        section = f"OpenCL C 3.0 §6.15.4 Table 16 (\"implemented as\", a definition); §7.4 {_TABLES[profile]} (declarative)"
    rules.register(rid, text, section)
    return rid


CR_DIVIDE_SQRT = frozenset({"fdiv", "sqrt"})
"""The functions -cl-fp32-correctly-rounded-divide-sqrt makes correctly rounded on float, on the
OpenCL C path only (:func:`bound_for`)."""


def profile_of(tname: str, env: frozenset) -> str:
    """The profile whose table bounds ``tname`` (``_ep``: the embedded profile's, for float and half)."""
    return tname + ("_ep" if "embedded" in env and tname != "double" else "")


def edges_void(env: frozenset) -> bool:
    """Whether the build voids every edge-case rule (prescribed special values and limits, §7.5.1,
    C99 F.9 and the SPIR-V environment's list; the values the definitions fix at a zero, infinite
    or NaN operand or result; lgamma_r's sign at a pole; nextafter's and normalize's edge rules):
    -cl-unsafe-math-optimizations allows optimizations that "(d) may violate edge case behavior in
    the OpenCL C or OpenCL SPIR-V Environment specifications", -cl-finite-math-only "may violate
    ... edge case behavior" and assumes "that arguments and results are not NaNs, +Inf, -Inf";
    -cl-fast-relaxed-math sets both (OpenCL 3.0 API §5.8.6.3). A voided rule judges nothing."""
    return bool({"finite", "unsafe"} & env)


def accuracy_void(tname: str, env: frozenset) -> bool:
    """Whether the build voids every accuracy rule of ``tname`` (§7.4's bounds, Table 65's correctly
    rounded + - * / included): -cl-finite-math-only "may violate the OpenCL numerical compliance
    requirements for single precision and double precision floating-point" (OpenCL 3.0 API
    §5.8.6.3; half, which the sentence predates, is read alike: no report rests on it), and
    -cl-unsafe-math-optimizations "assume[s] relaxed OpenCL numerical compliance requirements as
    defined in the unsafe math optimization section" (API §5.8.6.3), which defines them for single
    precision only and "requires support for OpenCL C 2.0 or newer" (OpenCL C 3.0.19 §7.4, Table
    67): on double and half, and in OpenCL C 1.x builds (no ``cl2``), none is defined. Edges are
    void there too (:func:`edges_void`): nothing is judged."""
    return "finite" in env or ("unsafe" in env and (tname != "float" or "cl2" not in env))


def bound_for(f: MathFn, tname: str, env: frozenset) -> tuple[Bound, str]:
    """The bound of ``f`` on ``tname`` under ``env`` and the kind of rule that states it (none,
    kind ``void``, where the build voids every accuracy rule: :func:`accuracy_void`)."""
    profile = profile_of(tname, env)
    if accuracy_void(tname, env):
        return Bound("none"), "void"
    if "unsafe" in env:  # float in OpenCL C >= 2.0: Table 67, the others keep Table 65 or 66
        if f.name in UNSAFE_BOUNDS:
            b = UNSAFE_BOUNDS[f.name]
            if "embedded" in env and b.kind == "ulp" and b.value in (2.5, 3):
                b = Bound("ulp", b.value + (0.5 if b.value == 2.5 else 1))
            return b, "unsafe"
    b = f.bound(profile)
    # -cl-fp32-correctly-rounded-divide-sqrt makes float / and sqrt "used in the program source"
    # correctly rounded (OpenCL 3.0 API §5.8.6.2); a SPIR-V module keeps the SPIR-V environment's
    # bounds (OpenCL SPIR-V Environment §6.6.1: OpFDiv Float32 <= 2.5 ulp, no build option named)
    if "cr" in env and "spirv" not in env and tname == "float" and f.name in CR_DIVIDE_SQRT:
        b = Bound("cr")
    return b, b.kind


def unsafe_domain(fn: str, args: tuple) -> Bound | None | str:
    """Table 67's domains: outside them the result is not judged (None), or a different bound."""
    x = args[0]
    if fn == "fdiv":
        return None if not all(2.0**-62 <= abs(a) <= 2.0**62 for a in args) else "keep"
    if fn in ("sin", "cos", "sincos"):
        return "keep" if abs(x) <= math.pi else None
    if fn in ("sinpi", "cospi"):
        return "keep" if abs(x) <= 1 else None
    if fn in ("log", "log2", "log10"):
        return Bound("abs", 2.0**-21) if 0.5 <= x <= 2 else "keep"
    return "keep"
