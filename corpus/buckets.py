"""Buckets: the signature that groups the disagreements of one bug, whatever showed them.

Two disagreements are the same bug when they agree on every field of :func:`signature`: the
driver family; for a wrong or imprecise value, the operation without vector widths
(``convert_int_sat_rte``: saturation kept, rounding where the rule depends on it), its element types, the rule that judged
it, the deviation class of the wrong value (oracles.deviation: another layer's texel, a type
limit, off by k ulps, ...); not the input class (a rule of special values names its case); for a
build error, crash or timeout, its kind
and the driver's first error line (numbers, addresses and overloads taken out:
:func:`first_error`, :func:`failure_message`). The front ends and driver versions a bug was seen
on are attributes of its one bucket (corpus.store.Corpus.buckets: ``paths``, ``versions``), so
both paths of a driver failing the same way are one bucket and a bug that survives a driver update
stays in its bucket. A disagreement that did not reproduce on a fresh worker
(:mod:`triage.confirm`) is *flaky* and goes to a bucket of its own.

A bucket's id is a hash of its signature, so two corpora bucket alike and merging them is a union.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

SIGNATURE_VERSION = 11
"""Which :func:`signature` a corpus's buckets were keyed with; a corpus keyed otherwise is re-keyed
when opened (corpus.keying.rekey), statuses kept. 1: as written up to schema 5. 2: a failure (build error,
crash, timeout) keys on the line that says what failed (:func:`first_error`, mangled names as their
family), its kind and its driver, not on the statement that showed it. 3: one bug, one bucket:
the operation without widths, element types, rule and deviation class; no area, width, path or
driver version (attributes of the bucket); the input class only for special-value rules. 4:
coincidental deviation classes keyed as one (:data:`COINCIDENTAL`); a row triage blamed on a
sub-expression keys on its culprit (:data:`CULPRIT_FIELDS`). 5: no input class (a special-value
rule names its case, and the lane's class is not the deciding operand's: one Oclgrind distance bug
made six buckets by class). 6: element types as their family and the operation's own type name as
``T`` (:func:`operation_family`, :func:`type_family`: Oclgrind's saturating conversion of NaN made one
bucket per destination type), and the rule without its front end (:func:`rule_family`: the OpenCL C
and SPIR-V texts of one rule are one bug seen on both paths). 7: a math function's rules as one
(:func:`rule_family`: Oclgrind's double ``sinpi`` was one bug under its special-value rule and its
ulp bound, whichever the lane's operand chose). 8: the driver without release or device number
(:func:`driver_family`: ``pocl-6.0`` and ``pocl-2`` are ``pocl``), so a bug that several releases
of one driver share is one bucket seen on several versions. A row of a shaped program (area
``shapes``) keys on its ``shape`` (its culprit's: ``unreduced`` until triage, then the bucket of the
built-in when the straight-line twin shows it, or of the smallest shape that still differs, kind
``wrong-code``); no row had one before, so the version stays. 9: a conversion judged under a rule
whose value no rounding mode changes without its rounding suffix (:data:`ROUNDING_FREE_RULES`:
rusticl's saturated conversion of NaN was five buckets per destination family, one per suffix), and
a missing kernel-library symbol as a family only for the prefixes of one library
(:data:`SYMBOL_FAMILIES`: PoCL's missing ``fmin_common`` read ``fmin_*``). 10: the deviation class
``wrong-rounding`` (another rounding of the exact result, classified before ``flushed``: Oclgrind's
``convert_short_rtn(-0x1p-149f)`` = 0 read as a flush) takes the place of ``other-rounding``, which
older rows key as (:data:`RENAMED`); the class ``smallest-normal`` is new. A reduced flow program's
``wrong-code`` rows key on their culprit, the reduced case's first failing row (triage.flow_triage);
no row had one before, so the version stays. 11: Oclgrind's fatal errors key on the line after
``OCLGRIND FATAL ERROR (file:line)`` that says what failed (:func:`first_error`:
``Unsupported instruction: addrspacecast`` and ``Undefined external function: fmin_common`` were one
bucket)."""

STATUSES = ("new", "reported", "fixed", "ignored")
"""A bucket's status, set by people (``clfuzz mark``): ``new`` until someone looks at it,
``reported`` to the vendor, ``fixed`` in the driver (a fixed bucket that shows up again is
``new`` again), ``ignored`` (known and not worth reporting: campaigns do not confirm or reduce it)."""

RESULT_KINDS = ("wrong-result", "imprecise-result")
WRONG_CODE = "wrong-code"
"""The kind of a bucket of a shaped program whose straight-line twin computes the lanes right: the
compiler mis-handles the structure, not the built-in (a culprit's ``kind``; its rows keep theirs)."""
INTERACTION = "interaction"
"""The kind of a bucket whose wrong lanes show only when several statements run together: no
statement of the smallest set triage found shows them alone (triage.reduce). A culprit's ``kind``, as
for :data:`WRONG_CODE`; its rows keep theirs. (Until 2026-11-28 Oclgrind's OpenCL C path made many
such buckets, "modf + tanpi": the work-item stopped at the out-parameter's addrspacecast and left
the other statement's output unwritten; that run is now a runtime error, fuzz.drivers.protocol.aborted.)"""
LANE_KINDS = RESULT_KINDS + (WRONG_CODE, INTERACTION)
"""Bucket kinds of wrong lanes (every other bucket kind is a failure of the run: build error, crash, ...)."""

_NOISE = re.compile(r"0x[0-9a-fA-F]+|\d+")


_REMARK = re.compile(r"<unknown>:\d+:\d+: ")  # an LLVM optimisation remark PoCL prints, glued to the next
_NOT_ERRORS = re.compile(r"^\s*(?:\S+:\d+:\d+: )?(?:warning|remark|note)\b|instructions in function|"
                         r"(?:loop|SLP) (?:not )?vectorized|^stack backtrace:|^note: |RUST_BACKTRACE", re.I)
_ERRORS = (  # the line that names the failure, most telling first
    re.compile(r"Cannot find symbol|undefined (?:symbol|reference)|unresolved external|Undefined external function|"
               r"Unsupported instruction", re.I),  # the last two: the line after Oclgrind's "OCLGRIND FATAL ERROR (...)"
    re.compile(r"Assertion .* failed|assert(?:ion)? failed|panicked at|LLVM ERROR|UNREACHABLE|Segmentation fault",
               re.I),
    re.compile(r"\berror\b[: ]", re.I),
    re.compile(r"^killed by SIG\w+|^exited with|timeout|no result after", re.I),
)


def first_error(log: str) -> str:
    """The line of a driver's log that says what failed: a missing symbol, an assertion or panic,
    a compiler error, the signal; optimisation remarks, warnings and notes are dropped (PoCL glues
    its LLVM remarks ``<unknown>:0:0: ...`` to the real message). A failure and its re-run are
    told apart (triage.confirm) and bucketed (:func:`signature`) by this line."""
    lines = [line.strip() for line in _REMARK.sub("\n", log or "").splitlines()]
    lines = [line for line in lines if line and not _NOT_ERRORS.search(line)]
    for pattern in _ERRORS:
        for line in lines:
            if pattern.search(line):
                return line[:300]
    return lines[-1][:300] if lines else (log or "").strip()[:300]


_MANGLED = re.compile(r"_Z(\d+)([A-Za-z_]\w*)")


SYMBOL_FAMILIES = ("half_", "native_")
"""Prefixes of the built-in families a kernel library implements as one piece (OpenCL C 3.0.19
§6.15.3: the ``half_`` and ``native_`` forms of the math functions): a missing symbol of one is the
family missing. Every other name is kept whole (``fmin_common`` is not C99's ``fmin``)."""


def _function_family(m: re.Match) -> str:
    """An Itanium-mangled function name without its overload (``_Z11fmin_commonDv4_fS_`` ->
    ``fmin_common``), and a name of :data:`SYMBOL_FAMILIES` as its family (``_Z8half_cosDv3_f`` ->
    ``half_*``: overloads and siblings of one prefix are one missing piece of a kernel library)."""
    name = m.group(2)[: int(m.group(1))]
    return next((prefix + "*" for prefix in SYMBOL_FAMILIES if name.startswith(prefix)), name)


def failure_message(text: str) -> str:
    """A driver's failure line (:func:`first_error`) with mangled names as their family, and
    addresses, numbers and paths removed, so that the same failure in two programs reads the same
    (``program.rs:N: unwrap on None``, ``Cannot find symbol half_* in kernel library``)."""
    text = _MANGLED.sub(_function_family, first_error(text))
    text = re.sub(r"/\S+/", "", text)
    return _NOISE.sub("N", text).strip()[:200]


def driver_version(fingerprint: dict[str, Any]) -> str:
    """The driver version a signature names: the device and its driver's version string."""
    return f"{fingerprint.get('device_name', '')} / {fingerprint.get('driver_version', '')}".strip(" /")


_WIDTHS = re.compile(r"(char|uchar|short|ushort|int|uint|long|ulong|half|float|double)(?:2|3|4|8|16)(?![0-9])")


_RELEASE = re.compile(r"-\d[\d.]*$")


def driver_family(target: str) -> str:
    """The driver a bucket belongs to, whatever its path, device number or release: ``pocl/spirv``,
    ``pocl-2`` and ``pocl-6.0`` are ``pocl`` (fuzz.drivers.discovery names them so)."""
    return _RELEASE.sub("", (target or "").split("/")[0])


def base_operation(operation: str) -> str:
    """An operation's spelling without vector widths: ``convert_int4_sat_rte`` -> ``convert_int_sat_rte``,
    ``vload4`` -> ``vloadn`` (saturation and rounding kept: they are different conversions)."""
    return re.sub(r"^(vload|vstore)\d+$", r"\1n", _WIDTHS.sub(r"\1", operation or ""))


def element(type_name: str) -> str:
    """A type's element type: ``float4`` -> ``float``."""
    return _WIDTHS.sub(r"\1", type_name or "")


_SIGNED = frozenset({"char", "short", "int", "long"})
_UNSIGNED = frozenset({"uchar", "ushort", "uint", "ulong"})


def type_family(type_name: str) -> str:
    """What a signature keeps of a type: its element type's family, ``signed integer`` or
    ``unsigned integer`` (one library routine per family serves every width and size, as Oclgrind's
    saturating conversions do), a floating type as it is (half, float and double have their own
    libraries and rounding). Operand lists (``int+int``) are mapped operand by operand."""
    if "+" in (type_name or ""):
        return "+".join(type_family(t) for t in type_name.split("+"))
    e = element(type_name)
    return "signed integer" if e in _SIGNED else "unsigned integer" if e in _UNSIGNED else e


_OWN_TYPE = re.compile(r"^(convert_|as_|\()(?:u?(?:char|short|int|long)|half|float|double)(?![a-z])")


def operation_family(operation: str) -> str:
    """What a signature keeps of an operation: its spelling without widths (:func:`base_operation`)
    and with the type its name carries as ``T`` (``convert_uchar4_sat_rte`` -> ``convert_T_sat_rte``,
    ``as_float`` -> ``as_T``, ``(int)(...)`` -> ``(T)(...)``): the type is keyed as its family
    (:func:`type_family`), saturation and rounding are kept."""
    return _OWN_TYPE.sub(r"\1T", base_operation(operation))


ROUNDING_FREE_RULES = frozenset({"convert.identity", "convert.int.exact", "convert.int.wrap", "convert.sat.clamp",
                                 "convert.sat.nan", "convert.to_float.exact", "convert.nan", "convert.inf"})
"""Conversion rules (oracles.conversions) whose value no rounding mode changes: a value kept
exactly, wrapped, clamped, NaN to 0, a NaN or an infinity (OpenCL C 3.0.19 §6.4.3). A wrong lane
under one of them keys its conversion without the rounding suffix (``convert_T_sat_rtp`` ->
``convert_T_sat``): the suffix is not what the driver got wrong. tests/test_triage.py checks the
set against the oracle, every conversion in every rounding mode."""

_ROUNDING = re.compile(r"_rt[eznp]$")


def rule_family(rule: str) -> str:
    """What a signature keeps of a rule: without its front end (``convert.sat.nan.spirv`` ->
    ``convert.sat.nan``: the SPIR-V text of a rule the OpenCL C text also states, one bug on both
    paths), and for a math function its function alone (``math.sinpi.special`` and
    ``math.sinpi.double.ulp`` -> ``math.sinpi``: which of a function's rules judges a lane depends on
    the lane's operand, an input class, not on the bug; the deviation class still tells a wrong
    signed zero from a wrong value)."""
    rule = rule[: -len(".spirv")] if rule.endswith(".spirv") else rule
    return ".".join(rule.split(".")[:2]) if rule.startswith("math.") else rule


COINCIDENTAL = frozenset({"operand", "other-lane", "other-item", "type-limit", "off-by-ulps", "other",
                          "unclassified"})
"""Deviation classes a wrong value can fall in by coincidence of the values (one bug gives an
operand's value on one lane and is off by one on the next): a signature keys them all as
``wrong-value``; the classes that name a mechanism (another layer's texel, the border colour, a
missing channel, the value before saturation, another rounding, NaN, a signed zero, a flushed
value) are keyed as they are. Each row keeps its own class for the report."""

CULPRIT_FIELDS = ("operation", "src_type", "dst_type", "rule", "deviation", "shape", "kind")
"""What a disagreement keeps of its culprit, the faulty sub-expression triage found
(corpus.store.Corpus.blame): the fields its signature then keys on instead of its own."""


def signature(row: dict[str, Any]) -> dict[str, Any]:
    """The bucket signature of one disagreement row (see the module docstring): the driver family,
    the operation (its culprit's, where triage found one: :data:`CULPRIT_FIELDS`) without widths
    or its own type name (or its rounding suffix, under a rule of :data:`ROUNDING_FREE_RULES`), its element
    types' families, the rule without its front end, the deviation class of the wrong value (oracles.deviation;
    :data:`COINCIDENTAL` classes as one) and the kind. An :data:`INTERACTION` (a culprit: the smallest
    set of statements that shows the lane wrong, none of them alone) keys on the driver family, its
    kind, the sorted operation families of the set's statements, without widths (``operation``:
    ``floor + sincos``; no types or rule: one interaction of the same built-ins is one bug whatever
    their types and whichever of them the wrong lane belongs to) and the deviation class of the wrong
    lane. The paths and driver versions a bug was seen on are attributes of its bucket
    (corpus.store.Corpus.buckets)."""
    sig = {"kind": row.get("kind", ""), "driver": driver_family(row.get("target", ""))}
    if row.get("culprit") and sig["kind"] in RESULT_KINDS + (WRONG_CODE,):  # keyed on the faulty part, shape or
        # reduced flow kernel (triage.flow_triage: a wrong-code row of a flow program keys on its reduced case's)
        row = {**row, **{k: v for k, v in json.loads(row["culprit"]).items() if k != "kind" or v}}
        sig["kind"] = row["kind"]
        if row.get("shape"):
            sig["shape"] = row["shape"]
    if sig["kind"] not in LANE_KINDS:  # a failure is its message, whatever statement showed it
        sig["failure"] = failure_message(row.get("actual_value", ""))
    elif sig["kind"] == INTERACTION:
        sig.update(operation=" + ".join(sorted({operation_family(op) for op in row["operation"].split(" + ")})),
                   deviation=_deviation_key(row.get("deviation") or "unclassified"))
    else:
        rule = rule_family(row.get("rule", ""))
        operation = operation_family(row.get("operation", ""))
        sig.update(operation=_ROUNDING.sub("", operation) if rule in ROUNDING_FREE_RULES else operation,
                   src_type=type_family(row.get("src_type", "")), dst_type=type_family(row.get("dst_type", "")),
                   rule=rule, deviation=_deviation_key(row.get("deviation") or "unclassified"))
    if row.get("confirmation") == "flaky":
        sig["flaky"] = True
    return sig


RENAMED = {"other-rounding": "wrong-rounding"}
"""Deviation classes stored by an older classifier under another name (oracles.deviation.CLASSES):
a signature keys them by the current one, so old and new rows of one bug share a bucket."""


def _deviation_key(deviation: str) -> str:
    deviation = RENAMED.get(deviation, deviation)
    return "wrong-value" if deviation in COINCIDENTAL else deviation


def bucket_id(sig: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:12]


def title(sig: dict[str, Any]) -> str:
    """One line naming a bucket: ``pocl: convert_int_sat_rte float -> int: wrong-result, wrong-value``,
    ``pocl: build_error: Cannot find symbol half_* in kernel library``,
    ``oclgrind: floor + sincos: interaction, wrong-value``."""
    flaky = " [flaky]" if sig.get("flaky") else ""
    if "failure" in sig:
        return f"{sig['driver']}: {sig['kind']}: {sig['failure']}{flaky}"
    if sig["kind"] == INTERACTION:
        return f"{sig['driver']}: {sig['operation']}: {sig['kind']}, {sig['deviation']}{flaky}"
    types = f"{sig['src_type']} -> {sig['dst_type']}" if sig["src_type"] != sig["dst_type"] else sig["dst_type"]
    return f"{sig['driver']}: {sig['operation']} {types}: {sig['kind']}, {sig['deviation']}{flaky}"
