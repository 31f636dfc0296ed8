"""Bit-exact reference for the OpenCL C conversions ``convert_<dst>[_sat][_<rounding>](x)``.

Semantics (OpenCL C 3.0.19 §6.4, §7; the OpenCL SPIR-V environment §6.2-6.3 on SPIR-V paths):

* Default rounding is rtz to integer types and rte to floating-point types (§6.4.3.2, §7.1). A
  rounding suffix on an integer -> integer conversion has no effect (nothing is inexact).
* integer -> integer follows C99 §6.3.1.3 (§6.4.3.1): a representable value is kept; an
  out-of-range value without ``_sat`` wraps modulo 2**N for an unsigned destination; for a signed
  destination C99 says implementation-defined, but OpenCL C integers are two's complement
  (§6.3.1) and SPIR-V OpSConvert/OpUConvert truncate, so it is judged as two's-complement
  truncation under its own rule ``convert.int.wrap``. With ``_sat`` it clamps (§6.4.3.3).
* floating -> integer: the value is rounded to an integer in the mode. "Out of range" is a property
  of the *operand* (§6.4.3.3): without ``_sat`` the lane is implementation-defined (not judged)
  unless ``min <= x <= max`` exactly, so 2147483647.5 -> int and -0.5 -> uint are out of range
  even though rtz would give a representable value; NaN and +-inf are out of range; -0.0 is in
  range. With ``_sat`` the rounded value clamps to [min, max], +-inf clamp, NaN -> 0 ("should",
  §6.4.3.3; the SPIR-V SaturatedConversion decoration says "is converted to 0").
* integer -> floating and floating -> floating are correctly rounded in the mode (§6.4.3.2
  "IEEE-754 rounding rules", §7.4 "conversion between floating-point formats and explicit
  conversions must be correctly rounded", §7.1 for half), with gradual underflow (subnormal
  results rounded exactly) and IEEE overflow (footnote [17]): a finite value whose rounding
  with unbounded exponent exceeds MAX gives +-inf under rte and under the directed mode that
  rounds away from zero for its sign, else +-MAX. +-inf and +-0 are preserved; a NaN gives a NaN
  whose payload and sign are unspecified (OpenCL SPIR-V environment §6.7.1).
* A conversion to the same type has no effect (§6.4.3.1): bits unchanged, except a NaN, which
  is judged as "any NaN".

The exact arithmetic is done on integers (:mod:`oracles.rounding`): every finite source value is
``(-1)**sign * M * 2**E`` with ``M`` a uint64 (an integer's magnitude, or a float's significand)
and rounding to a binary format of precision ``p`` is integer shifting with an explicit remainder
(no floating-point rounding is ever trusted). Everything is vectorized with numpy.

``expect_convert`` lifts a conversion over an :class:`~oracles.expect.Expectation` and adds the
flush-to-zero alternatives of §7.2 / §7.5.3 for the floating types named in ``ftz``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lang.types import Scalar, scalar
from oracles.expect import Expectation
from oracles.rounding import Rounded, below_above, float64_to_int, round_to
from oracles.rules import register

ROUNDINGS: tuple[str, ...] = ("rte", "rtz", "rtp", "rtn")

_S = "OpenCL C 3.0.19"

# --- rules ------------------------------------------------------------------------------------

RULE_IDENTITY = register(
    "convert.identity",
    "a conversion to the operand's own type has no effect on the value (bits unchanged)",
    f"{_S} §6.4.3.1",
)
RULE_INT_EXACT = register(
    "convert.int.exact",
    "an integer representable in the destination integer type keeps its value",
    f"{_S} §6.4.3.1 (C99 §6.3.1.3p1)",
)
RULE_INT_WRAP = register(
    "convert.int.wrap",
    "an out-of-range integer converted without _sat wraps modulo 2^N (unsigned destination, C99 "
    "§6.3.1.3p2); for a signed destination it is taken as two's-complement truncation, as SPIR-V "
    "OpSConvert/OpUConvert do (C99 §6.3.1.3p3 leaves it implementation-defined)",
    f"{_S} §6.4.3.1, §6.4.3.3; C99 §6.3.1.3",
)
RULE_SAT_CLAMP = register(
    "convert.sat.clamp",
    "with _sat an operand outside the destination range (including +-inf) clamps to the nearest "
    "representable value",
    f"{_S} §6.4.3.3",
)
RULE_SAT_NAN = register(
    "convert.sat.nan",
    "with _sat a NaN operand should be converted to 0",
    f"{_S} §6.4.3.3 ('NaN should be converted to 0': a recommendation)",
    severity="recommendation",
    note="SPIR-V's SaturatedConversion decoration (SPIR-V 1.6 §3.20) converts NaN to 0, so a compiler "
         "that lowers convert_T_sat through SPIR-V must give 0",
)
RULE_SAT_NAN_SPIRV = register(
    "convert.sat.nan.spirv",
    "a conversion decorated SaturatedConversion converts a NaN operand to 0",
    "SPIR-V 1.6 §3.20 Decoration SaturatedConversion ('NaN is converted to 0': the decoration's definition, "
    "stated as fact, neither shall nor should); OpenCL SPIR-V environment §6.3 (out-of-range conversions "
    "without the decoration)",
)
RULE_F2I_ROUND = register(
    "convert.float_to_int.round",
    "an in-range floating-point operand is rounded to an integer in the conversion's rounding mode "
    "(rtz when none is given)",
    f"{_S} §6.4.3.2, §7.1",
)
RULE_F2I_OUT_OF_RANGE = register(
    "convert.float_to_int.out_of_range",
    "a floating-point operand outside [min, max] of the integer destination (or NaN, +-inf) "
    "converted without _sat gives an implementation-defined result (not judged)",
    f"{_S} §6.4.3.3 ('When converting from a floating-point type to integer type, the behavior is "
    "implementation-defined': neither shall nor should)",
    leaves="implementation-defined",
)
RULE_TO_FLOAT_EXACT = register(
    "convert.to_float.exact",
    "a value representable in the floating-point destination type is converted exactly",
    f"{_S} §6.4.3.2, §7.4",
)
RULE_TO_FLOAT_ROUND = register(
    "convert.to_float.round",
    "conversion to a floating-point type is correctly rounded in the requested mode (rte when none "
    "is given)",
    f"{_S} §6.4.3.2, §7.4 ('must be correctly rounded'), §7.1",
)
RULE_TO_FLOAT_SUBNORMAL = register(
    "convert.to_float.subnormal",
    "a nonzero value below the destination's smallest normal magnitude is correctly rounded with "
    "gradual underflow (subnormal or zero result)",
    f"{_S} §6.4.3.2, §7.4; IEEE 754-2008 §7.5",
)
RULE_TO_FLOAT_OVERFLOW = register(
    "convert.to_float.overflow",
    "a finite value beyond the destination's range gives +-inf (rte, and the directed mode away "
    "from zero) or +-MAX (rtz, and the directed mode toward zero), with the source's sign",
    f"{_S} §6.4.3.2 footnote [17]; IEEE 754-2008 §7.4",
)
RULE_NAN = register(
    "convert.nan",
    "a floating-point NaN converted to a floating-point type is a NaN (payload and sign unspecified)",
    f"{_S} §6.4.3.2, §7.5.1; SPIR-V env §6.7.1",
)
RULE_INF = register(
    "convert.inf",
    "+-inf converted to a floating-point type is +-inf",
    f"{_S} §6.4.3.2 (IEEE 754)",
)
RULE_FTZ = register(
    "convert.ftz",
    "where denormals may be flushed, a subnormal operand may be read as +-0 and a result that is "
    "subnormal before rounding may be +-0 (sign undefined), besides the correctly rounded result",
    f"{_S} §7.2, §7.5.3",
)


# --- helpers ----------------------------------------------------------------------------------


def _check(values: np.ndarray, src: str, dst: str, saturate: bool, rounding: str | None) -> tuple[np.ndarray, Scalar, Scalar]:
    s, d = scalar(src), scalar(dst)
    if rounding is not None and rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS} or None, not {rounding!r}")
    if saturate and d.is_float:
        raise ValueError("_sat may not be used for conversions to floating-point types (§6.4.3.3)")
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError("values must be a 1-D array")
    if values.dtype != s.dtype:
        raise TypeError(f"values have dtype {values.dtype}, expected {s.dtype} for {src}")
    return values, s, d


@dataclass
class _Result:
    value: np.ndarray  # dst dtype
    defined: np.ndarray
    rule: np.ndarray  # int16
    tiny: np.ndarray  # float destination: exact result nonzero and below TYPE_MIN (§7.5.3)
    nan: np.ndarray  # float destination: result is a NaN


def _int_to_int(values: np.ndarray, s: Scalar, d: Scalar, saturate: bool) -> _Result:
    n = values.shape[0]
    false = np.zeros(n, bool)
    if s.name == d.name:  # §6.4.3.1: no effect (with or without _sat)
        return _Result(values.copy(), np.ones(n, bool), np.full(n, RULE_IDENTITY, np.int16), false, false)
    lo, hi = max(s.min, d.min), min(s.max, d.max)  # both representable in s
    lo_v, hi_v = s.dtype.type(lo), s.dtype.type(hi)
    inside = (values >= lo_v) & (values <= hi_v)
    if saturate:
        value = np.clip(values, lo_v, hi_v).astype(d.dtype)
        rule = np.where(inside, RULE_INT_EXACT, RULE_SAT_CLAMP)
    else:
        value = values.astype(d.dtype)  # numpy integer casts truncate to the low N bits
        rule = np.where(inside, RULE_INT_EXACT, RULE_INT_WRAP)
    return _Result(value, np.ones(n, bool), rule.astype(np.int16), false, false)


def _float_to_int(values: np.ndarray, s: Scalar, d: Scalar, saturate: bool, mode: str) -> _Result:
    with np.errstate(invalid="ignore"):  # a signalling NaN sets 'invalid' when widened
        x = values.astype(np.float64)  # exact for half, float and double
    nan = np.isnan(x)
    below, above = below_above(x, d)
    inside = ~(below | above | nan)
    with np.errstate(invalid="ignore"):
        r = {"rtz": np.trunc, "rte": np.rint, "rtp": np.ceil, "rtn": np.floor}[mode](x)
    value = float64_to_int(np.where(inside, r, 0.0), d)
    # With _sat the operand is clamped; because rounding is monotonic and the bounds are
    # integers, clamping the operand or the rounded value gives the same result.
    if saturate:
        rbelow, rabove = below_above(r, d)
        lo_hit = below | rbelow
        hi_hit = above | rabove
        value = np.where(lo_hit, d.dtype.type(d.min), value)
        value = np.where(hi_hit, d.dtype.type(d.max), value)
        value = np.where(nan, d.dtype.type(0), value).astype(d.dtype)
        rule = np.where(nan, RULE_SAT_NAN, np.where(inside, RULE_F2I_ROUND, RULE_SAT_CLAMP))
        defined = np.ones(x.shape, bool)
    else:
        value = value.astype(d.dtype)
        rule = np.where(inside, RULE_F2I_ROUND, RULE_F2I_OUT_OF_RANGE)
        defined = inside
    false = np.zeros(x.shape, bool)
    return _Result(value, defined, rule.astype(np.int16), false, false)


def _assemble_float(sign, rounded: Rounded, d: Scalar) -> np.ndarray:
    with np.errstate(over="ignore"):
        v = np.where(sign, -rounded.value, rounded.value)
        return v.astype(d.dtype)  # exact: every value here is representable in d (or +-inf)


def _rule_to_float(rounded: Rounded) -> np.ndarray:
    return np.select(
        [rounded.overflow, rounded.tiny, rounded.exact],
        [RULE_TO_FLOAT_OVERFLOW, RULE_TO_FLOAT_SUBNORMAL, RULE_TO_FLOAT_EXACT],
        RULE_TO_FLOAT_ROUND,
    ).astype(np.int16)


def _int_to_float(values: np.ndarray, s: Scalar, d: Scalar, mode: str) -> _Result:
    sign, rounded = values < 0, round_to(values, s, d, mode)
    value = _assemble_float(sign, rounded, d)
    n = values.shape[0]
    return _Result(value, np.ones(n, bool), _rule_to_float(rounded), rounded.tiny, np.zeros(n, bool))


def _quiet_nan(sign: np.ndarray, d: Scalar) -> np.ndarray:
    """The default quiet NaN of ``d`` with the given signs (the payload is unspecified anyway)."""
    p = d.mant_bits
    qnan = ((1 << (d.bits - p + 1)) - 1) << (p - 2)
    bits = np.where(sign, np.array((1 << (d.bits - 1)) | qnan, d.bits_dtype), np.array(qnan, d.bits_dtype))
    return bits.view(d.dtype)


def _float_to_float(values: np.ndarray, s: Scalar, d: Scalar, mode: str) -> _Result:
    n = values.shape[0]
    if s.name == d.name:
        nan = np.isnan(values)
        rule = np.where(nan, RULE_NAN, RULE_IDENTITY).astype(np.int16)
        return _Result(values.copy(), np.ones(n, bool), rule, np.zeros(n, bool), nan)
    sign, nan, inf = np.signbit(values), np.isnan(values), np.isinf(values)
    rounded = round_to(values, s, d, mode)
    value = _assemble_float(sign, rounded, d)
    with np.errstate(over="ignore"):
        inf_value = np.where(sign, -np.inf, np.inf).astype(d.dtype)
    value = np.where(inf, inf_value, value)
    value = np.where(nan, _quiet_nan(sign, d), value)
    rule = np.where(nan, RULE_NAN, np.where(inf, RULE_INF, _rule_to_float(rounded))).astype(np.int16)
    return _Result(value, np.ones(n, bool), rule, rounded.tiny & ~nan & ~inf, nan)


def _mode(d: Scalar, rounding: str | None) -> str:
    """The rounding mode in force: rtz to integers, rte to floating types by default (§6.4.3.2)."""
    if rounding is not None:
        return rounding
    return "rte" if d.is_float else "rtz"


def _evaluate(values: np.ndarray, src: str, dst: str, saturate: bool, rounding: str | None) -> _Result:
    values, s, d = _check(values, src, dst, saturate, rounding)
    mode = _mode(d, rounding)
    if s.is_int and d.is_int:
        return _int_to_int(values, s, d, saturate)
    if s.is_float and d.is_int:
        return _float_to_int(values, s, d, saturate, mode)
    if s.is_int:
        return _int_to_float(values, s, d, mode)
    return _float_to_float(values, s, d, mode)


# --- public API -------------------------------------------------------------------------------


def convert(values: np.ndarray, src: str, dst: str, *, saturate: bool = False, rounding: str | None = None) -> np.ndarray:
    """The result of ``convert_<dst>[_sat][_<rounding>]`` on each lane of ``values`` (dtype of ``src``).

    Lanes whose result is implementation-defined (see :func:`defined`) hold an arbitrary value.
    A NaN result is the default quiet NaN with the operand's sign (any NaN is allowed).
    """
    return _evaluate(values, src, dst, saturate, rounding).value


def defined(values: np.ndarray, src: str, dst: str, *, saturate: bool = False, rounding: str | None = None) -> np.ndarray:
    """Which lanes have a result defined by the spec (False only for float -> integer without
    ``_sat`` whose operand is out of range, NaN or +-inf, §6.4.3.3)."""
    return _evaluate(values, src, dst, saturate, rounding).defined


def rules(values: np.ndarray, src: str, dst: str, *, saturate: bool = False, rounding: str | None = None) -> np.ndarray:
    """Per lane the index (:mod:`oracles.rules`) of the rule that decides the lane."""
    return _evaluate(values, src, dst, saturate, rounding).rule


def convert_all(values: np.ndarray, src: str, dst: str, *, saturate: bool = False, rounding: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(convert(...), defined(...), rules(...))`` computed in one pass."""
    r = _evaluate(values, src, dst, saturate, rounding)
    return r.value, r.defined, r.rule


def _subnormal(values: np.ndarray, s: Scalar) -> np.ndarray:
    """0 < |x| < TYPE_MIN (§7.5.3's definition of subnormal), from the bits."""
    b = np.ascontiguousarray(values).view(s.bits_dtype)
    p = s.mant_bits
    efield = (b >> s.bits_dtype.type(p - 1)) & s.bits_dtype.type((1 << (s.bits - p)) - 1)
    mant = b & s.bits_dtype.type((1 << (p - 1)) - 1)
    return (efield == 0) & (mant != 0)


def _pack(reference: np.ndarray, alternatives: list[np.ndarray]) -> list[np.ndarray]:
    """Per lane, the distinct values of ``alternatives`` other than ``reference``, packed into as
    few full-length arrays as possible (unused slots repeat the reference).

    Expectation candidates are per-lane sets (``accepts`` ORs them lane by lane), so candidates
    from different sources may share an array.
    """
    if not alternatives:
        return []
    stack = np.stack([reference, *alternatives], axis=1)
    stack.sort(axis=1)
    new = np.ones(stack.shape, bool)
    new[:, 1:] = stack[:, 1:] != stack[:, :-1]
    new &= stack != reference[:, None]
    count = new.sum(axis=1)
    k = int(count.max()) if count.size else 0
    if k == 0:
        return []
    order = np.argsort(~new, axis=1, kind="stable")
    packed = np.take_along_axis(stack, order, axis=1)
    return [np.where(count > j, packed[:, j], reference) for j in range(k)]


def expect_convert(
    arg: Expectation,
    dst: str,
    *,
    saturate: bool = False,
    rounding: str | None = None,
    ftz: frozenset[str] = frozenset(),
) -> Expectation:
    """The expectation of ``convert_<dst>[_sat][_<rounding>](arg)`` (also casts and implicit
    conversions, which are the same conversion with the default rounding, §6.4.1-§6.4.2).

    * Every candidate of ``arg`` is converted; the first converted candidate is the reference.
    * judged = ``arg.judged`` and the result is defined for every candidate (and, for a lane that
      may be any NaN, for a NaN too: float -> integer without ``_sat`` of a NaN is not judged).
    * any_nan: to a floating type, a lane whose operand may be a NaN (a NaN candidate or
      ``arg.any_nan``) may be any NaN (§7.5.1; OpenCL SPIR-V environment §6.7.1). To an integer
      type with ``_sat``, an ``arg.any_nan`` lane also allows 0 (§6.4.3.3).
    * ftz (§7.2, §7.5.3), for the floating types whose denormals the device may flush: a subnormal
      operand of a type in ``ftz`` may be read as +0 or -0 (cases 3/4: the conversion of +-0 is
      added), and a result of a type in ``ftz`` that is subnormal before rounding (exact value
      nonzero with magnitude below TYPE_MIN) may be +0 or -0 (case 2). A conversion to the
      operand's own type has no effect (§6.4.3.1) and gets no flush alternatives.
    * rule: the rule of the reference candidate's conversion (``convert.sat.nan.spirv`` for
      ``convert.sat.nan`` on a SPIR-V path: ``spirv`` in ``ftz``); ``convert.ftz`` in lanes where a
      flush alternative adds a value not otherwise allowed (the reference there is still the
      correctly rounded, unflushed result); ``arg.rule`` where ``arg`` is not judged (it says
      why); ``convert.float_to_int.out_of_range`` where ``arg`` is judged but some candidate (or
      a possible NaN) is out of range, which makes the lane unjudged.
    """
    s, d = scalar(arg.scalar), scalar(dst)
    _check(np.zeros(0, s.dtype), s.name, d.name, saturate, rounding)
    n = len(arg)
    cands = arg.candidates()
    results = [_evaluate(c, s.name, d.name, saturate, rounding) for c in cands]
    main = results[0]
    ref_bits = np.ascontiguousarray(main.value).view(d.bits_dtype)
    judged = arg.judged.copy()
    any_nan = np.zeros(n, bool)
    for r in results:
        judged &= r.defined
        any_nan |= r.nan
    normal_alts = [np.ascontiguousarray(r.value).view(d.bits_dtype) for r in results[1:]]
    rule = main.rule.copy()

    arg_any_nan = arg.any_nan & s.is_float
    if arg_any_nan.any():
        if d.is_float:
            any_nan |= arg_any_nan
        elif saturate:
            normal_alts.append(np.where(arg_any_nan, d.bits_dtype.type(0), ref_bits))
        else:
            judged &= ~arg_any_nan
            rule = np.where(arg.judged & arg_any_nan, RULE_F2I_OUT_OF_RANGE, rule).astype(np.int16)

    flush_alts: list[np.ndarray] = []
    if s.name != d.name:
        # the conversions of +0 and -0 (a flushed operand): +-0 for a float, 0 for an integer
        flushed_in = (
            [
                np.ascontiguousarray(_evaluate(np.full(1, z, s.dtype), s.name, d.name, saturate, rounding).value)
                .view(d.bits_dtype)[0]
                for z in (0.0, -0.0)
            ]
            if s.is_float and s.name in ftz
            else []
        )
        pos_neg_zero_d = [d.bits_dtype.type(0), np.full(1, -0.0, d.dtype).view(d.bits_dtype)[0]] if d.is_float else []
        for c, r in zip(cands, results):
            # (a) §7.5.3 cases 3/4: a subnormal operand read as +-0 (a zero result is not subnormal).
            if flushed_in:
                sub = _subnormal(c, s)
                if sub.any():
                    for z in flushed_in:
                        flush_alts.append(np.where(sub, z, ref_bits))
            # (b) §7.5.3 case 2: a result subnormal before rounding flushed to +-0.
            if d.name in ftz and r.tiny.any():
                for z in pos_neg_zero_d:
                    flush_alts.append(np.where(r.tiny, z, ref_bits))

    extra = _pack(ref_bits, normal_alts)
    if flush_alts:
        with_flush = _pack(ref_bits, normal_alts + flush_alts)
        # lanes where flushing allows a value that nothing else allows
        base = np.stack([ref_bits, *normal_alts], axis=1) if normal_alts else ref_bits[:, None]
        added = np.zeros(n, bool)
        for a in flush_alts:
            added |= ~(base == a[:, None]).any(axis=1)
        rule = np.where(added, RULE_FTZ, rule).astype(np.int16)
        extra = with_flush
    # a lane the operand judges but some candidate's conversion does not: out of range (§6.4.3.3)
    rule = np.where(arg.judged & ~judged, RULE_F2I_OUT_OF_RANGE, rule)
    rule = np.where(arg.judged, rule, arg.rule).astype(np.int16)
    if "spirv" in ftz:  # on a SPIR-V path the decoration makes NaN -> 0 normative
        rule = np.where(rule == RULE_SAT_NAN, RULE_SAT_NAN_SPIRV, rule).astype(np.int16)
    out = Expectation(d.name, [ref_bits], judged, any_nan, rule)
    return out.with_alternatives(extra) if extra else out
