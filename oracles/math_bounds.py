"""Which bound of OpenCL C 3.0 §7.4 decides a math built-in's lane (Tables 65-69 by type and
profile, Table 67 under -cl-unsafe-math-optimizations, -cl-fp32-correctly-rounded-divide-sqrt),
and the rule (:mod:`oracles.rules`) each lane names.
"""

from __future__ import annotations

import math

from lang.maths import UNSAFE_BOUNDS, Bound, MathFn
from oracles import rules

SPECIAL_SECTION = "OpenCL C 3.0 §7.5.1 and C99 Annex F.9 (edge cases)"
_TABLES = {"float": "Table 65", "float_ep": "Table 66", "double": "Table 68", "half": "Table 69", "half_ep": "Table 69"}


def rule_for(fn: str, kind: str, profile: str, bound: Bound | None = None) -> str:
    """Register (once) and return the id of the rule deciding one lane."""
    if kind == "special":
        rid = f"math.{fn}.special"
        rules.register(rid, f"{fn}: the value prescribed for this operand is exact, sign included (NaN: any NaN)",
                       SPECIAL_SECTION)
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
            "cross": f"{fn} on {profile} is within max*max*3*EPSILON per component (absolute)"}[kind]
    rules.register(rid, text, f"OpenCL C 3.0 §7.4 {_TABLES[profile]}")
    return rid


def profile_of(tname: str, env: frozenset) -> str:
    """The profile whose table bounds ``tname`` (``_ep``: the embedded profile's, for float and half)."""
    return tname + ("_ep" if "embedded" in env and tname != "double" else "")


def bound_for(f: MathFn, tname: str, env: frozenset) -> tuple[Bound, str]:
    """The bound of ``f`` on ``tname`` under ``env`` and the kind of rule that states it."""
    profile = profile_of(tname, env)
    if "unsafe" in env:
        if tname != "float" or "cl2" not in env:  # Table 67 is float only, for OpenCL C >= 2.0
            return Bound("none"), "unsafe"
        if f.name in UNSAFE_BOUNDS:
            b = UNSAFE_BOUNDS[f.name]
            if "embedded" in env and b.kind == "ulp" and b.value in (2.5, 3):
                b = Bound("ulp", b.value + (0.5 if b.value == 2.5 else 1))
            return b, "unsafe"
    b = f.bound(profile)
    if "cr" in env and tname == "float" and f.name in ("fdiv", "sqrt"):
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
