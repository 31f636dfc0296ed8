"""A reduced case re-run as its siblings: evidence that two buckets are one bug, and a reduced
case for the sibling bucket at the cost of one run.

Once bucket A is reduced to one statement on one work-item, each bucket B of the same driver
whose operation is A's sibling (lang.families) and whose wrong values deviate as A's do, with
other element types, another destination or
another entry point gets a *variant* of A's reduced program: the same operands, retyped to B's
element types (``float`` -> ``double``: the same number, exactly; a signed destination ->
its unsigned twin of the same width, a value it does not hold as the same bits), calling B's entry point (``pow`` -> ``powr``), or B
applied to the operands the specification gives it within A (lang.families.PARTS:
``clamp(x, lo, hi)`` -> ``max(x, lo)`` and ``min(x, hi)``), or B's read function on the same
image's texel bits in a channel type of one width that B reads (``read_imagef`` of UNORM_INT8 ->
``read_imagei`` of SIGNED_INT8). The
variant runs on A's target; where a wrong lane of it lands in B's bucket (the same signature: the
operation, element types, rule and deviation class of B), the same input shows both buckets'
failure: evidence of kind ``re-run`` (table bug_evidence: the variant's program, operands and
values), and B, if not reduced yet, gets the variant as its reduced case (one statement, one
work-item).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from corpus.buckets import RESULT_KINDS, bucket_id, signature, type_family
from corpus.reads import bucket_rows
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from lang.families import OUT_PARAMETER, PARTS, root
from lang.images import CHANNEL_TYPES, READ_RESULTS, modelled
from lang.ir import InvalidProgram, Op, Program, from_data, to_data, walk
from lang.maths import FUNCTIONS
from lang.ops import INTEGER
from lang.types import needs_of, scalar
from triage.observe import observe
from triage.session import reduction_row, store_case

FLOATS = ("half", "float", "double")
SIGNED = ("char", "short", "int", "long")
UNSIGNED = ("uchar", "ushort", "uint", "ulong")


def _twin(name: str, family: str) -> str | None:
    """The scalar of ``family`` that stands for scalar ``name`` (the same width for integers)."""
    if family in FLOATS:
        return family
    pool = SIGNED if family == "signed integer" else UNSIGNED if family == "unsigned integer" else ()
    for group in (SIGNED, UNSIGNED):
        if name in group and pool:
            return pool[group.index(name)]
    return None


def scalar_map(a: dict[str, Any], b: dict[str, Any], names: set[str]) -> dict[str, str] | None:
    """How the scalars ``names`` of bucket signature ``a``'s program become bucket ``b``'s: each
    operand family of ``a`` that ``b`` has otherwise (``src_type``, ``dst_type``: families, one per
    operand in ``int+int`` lists) maps its scalars to that family's; None where the families do
    not line up."""
    pairs: dict[str, str] = {}
    for key in ("src_type", "dst_type"):
        fa, fb = a.get(key, "").split("+"), b.get(key, "").split("+")
        if len(fa) != len(fb):
            return None
        for x, y in zip(fa, fb):
            if pairs.setdefault(x, y) != y:
                return None
    out = {}
    for name in names:
        want = pairs.get(type_family(name), type_family(name))
        twin = name if want == type_family(name) else _twin(name, want)
        if twin is None:
            return None
        out[name] = twin
    return out


def _convert(bits: list[int], src: str, dst: str) -> list[int] | None:
    """Bit patterns of scalar ``src`` as ``dst`` with the same values; an integer that ``dst`` does not
    hold keeps its bit pattern where the two have one width (a signed operand's unsigned twin: the
    variant of Oclgrind's ``min(int4, int)`` as ``min(uint4, uint)`` fails alike); None where a
    value is neither."""
    s, d = scalar(src), scalar(dst)
    values = np.array(bits, dtype=np.uint64).astype(s.bits_dtype).view(s.dtype)
    if s.is_float and d.is_float:
        out = values.astype(d.dtype)
        back = out.astype(s.dtype)
        same = (back.view(s.bits_dtype) == values.view(s.bits_dtype)) | (np.isnan(values) & np.isnan(back))
        return [int(x) for x in out.view(d.bits_dtype)] if bool(same.all()) else None
    if s.is_float or d.is_float:
        return None
    info = np.iinfo(d.dtype)
    if any(int(v) < info.min or int(v) > info.max for v in values):  # the same bits, where the widths agree
        return [int(x) for x in values.view(s.bits_dtype)] if s.dtype.itemsize == d.dtype.itemsize else None
    return [int(x) for x in values.astype(d.dtype).view(d.bits_dtype)]


def _retype(node: Any, names: dict[str, str]) -> Any:
    """The program data ``node`` (lang.ir.to_data) with every type's scalar renamed by ``names``
    and every explicit value converted; raises ValueError where one is not exact."""
    if isinstance(node, list):
        return [_retype(x, names) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _retype(v, names) for k, v in node.items()}
    t = node.get("type")
    if isinstance(t, str):
        base = t.rstrip("0123456789")
        if base in names:
            out["type"] = names[base] + t[len(base):]
            if "literal" in node:
                out["literal"] = _exact(node["literal"], base, names[base])
            fill = node.get("fill")
            if fill is not None:
                if fill.get("pool") or not fill.get("values"):
                    raise ValueError("drawn values: not retyped")
                out["fill"] = {**fill, "values": _exact(fill["values"], base, names[base])}
    return out


def _exact(bits: list[int], src: str, dst: str) -> list[int]:
    found = _convert(bits, src, dst)
    if found is None:
        raise ValueError(f"a value of {src} is not a {dst}")
    return found


def _entry_point(data: dict, a: str, b: str) -> dict | None:
    """``data`` calling function ``b`` where it calls ``a`` (both of one family: math built-ins with
    the same parameters and result and no out-parameter, lang.maths, or integer built-ins of one
    arity, lang.ops)."""
    fa, fb = FUNCTIONS.get(a), FUNCTIONS.get(b)
    ia, ib = INTEGER.get(a), INTEGER.get(b)
    if ia and ib:  # integer built-ins of one arity (min, max: §6.15.3 Table 13)
        if ia.arity != ib.arity:
            return None
    elif not fa or not fb or (fa.params, fa.result) != (fb.params, fb.result) or fa.out or fb.out:
        return None
    text = json.dumps(data).replace(f'"op": "{a}"', f'"op": "{b}"')
    return json.loads(text)


def _part(data: dict, a: dict[str, Any], b: dict[str, Any]) -> dict | None:
    """``data`` (one statement) computing part ``b`` of operation ``a`` on the operands
    lang.families.PARTS gives it (``clamp(x, lo, hi)`` -> ``max(x, lo)``), where the element
    types line up with ``b``'s."""
    picks = PARTS.get(a["operation"], {}).get(b["operation"])
    families = a.get("src_type", "").split("+")
    if picks is None or a.get("dst_type") != b.get("dst_type") or (
            "+".join(families[i] for i in picks if i < len(families)) != b.get("src_type")):
        return None
    value = data["body"][0]["value"]
    data["body"][0]["value"] = {**value, "op": b["operation"], "args": [value["args"][i] for i in picks]}
    return data


def _channel(name: str, read: str) -> str | None:
    """The channel type of one storage width as ``name`` that read function ``read`` (``f``,
    ``i``, ``ui``) is defined on (lang.images.ChannelType.reads), of ``name``'s own storage type
    where one is."""
    width = scalar(CHANNEL_TYPES[name].storage).size
    fits = [t for t in CHANNEL_TYPES.values() if read in t.reads and scalar(t.storage).size == width]
    fits.sort(key=lambda t: t.storage != CHANNEL_TYPES[name].storage)
    return fits[0].name if fits else None


def _read_function(data: dict, a: dict[str, Any], b: dict[str, Any]) -> dict | None:
    """``data`` (one image read) reading with ``b``'s read function (``read_imagef`` ->
    ``read_imagei``): the same coordinates, sampler, channel order and texel bits, in a channel
    type of the same width that function is defined on (§6.15.15.3-6: ``read_imagei`` on signed
    integer data), its result and output of that function's vector type; None where the
    coordinates differ or no such format exists (an INTENSITY image has no integer form)."""
    fa, fb = (x["operation"].removeprefix("read_image") for x in (a, b))
    if root(a["operation"]) != "read_image" or fa == fb or a.get("src_type") != b.get("src_type"):
        return None
    value = data["body"][0]["value"]
    image = next(i for i in data["images"] if i["name"] == value["attrs"]["image"])
    channel = _channel(image["channel"], fb)
    if channel is None or not modelled(image["order"], channel):
        return None
    image["channel"] = channel
    value["type"] = READ_RESULTS[fb]
    for buf in data["buffers"]:
        if buf["name"] == data["body"][0]["store"]:
            buf["type"] = READ_RESULTS[fb]
    return data


def variant(program: Program, a: dict[str, Any], b: dict[str, Any]) -> Program | None:
    """``program`` (bucket ``a``'s reduced case: one statement of one operation) as bucket ``b``'s
    sibling case (module docstring), or None where it cannot be made with the same operands."""
    if (len(program.body) != 1 or OUT_PARAMETER in a["operation"] + b["operation"]
            or sum(isinstance(n, Op) for n in walk(program.body[0].value)) != 1):
        return None  # one operation on its operands: a nested one would be retyped as well
    data = to_data(program)
    if program.images:
        data = _read_function(data, a, b)
        if data is None:
            return None
    elif b["operation"] in PARTS.get(a["operation"], {}):
        data = _part(data, a, b)
        if data is None:
            return None
    elif a["operation"] != b["operation"]:
        if a.get("src_type") != b.get("src_type") or a.get("dst_type") != b.get("dst_type"):
            return None
        data = _entry_point(data, a["operation"], b["operation"])
        if data is None:
            return None
    else:
        names = {t.rstrip("0123456789") for t in types_in(data)}
        mapping = scalar_map(a, b, names)
        if not mapping or all(k == v for k, v in mapping.items()):
            return None
        try:
            data = _retype(data, mapping)
        except (ValueError, KeyError):
            return None
    scalars = {t.rstrip("0123456789") for t in types_in(data)}
    data["requires"] = sorted((set(data.get("requires", [])) - {"fp64", "fp16"}) | (needs_of(*scalars) & {"fp64", "fp16"}))
    try:
        return from_data(data)
    except (InvalidProgram, ValueError, KeyError, TypeError):
        return None


def types_in(node: Any) -> list[str]:
    """Every type named in program data ``node`` (lang.ir.to_data), in order."""
    if isinstance(node, list):
        return [t for x in node for t in types_in(x)]
    if not isinstance(node, dict):
        return []
    own = [node["type"]] if isinstance(node.get("type"), str) else []
    return own + [t for v in node.values() for t in types_in(v)]


def alike(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether buckets ``a`` and ``b`` (two of them) are siblings whose variants may show each other:
    both of a wrong value, of one driver, operations of one family (lang.families), and wrong values
    that deviate alike (oracles.deviation: a variant that fails otherwise on the same operand shows
    another bug, e.g. Oclgrind's ``fract(-inf)`` sign beside its double ``fract(inf)`` value)."""
    s, t = a["signature"], b["signature"]
    return (a["id"] != b["id"] and s.get("kind") in RESULT_KINDS and t.get("kind") in RESULT_KINDS
            and s.get("driver") == t.get("driver") and s.get("deviation") == t.get("deviation")
            and root(s.get("operation", "")) == root(t.get("operation", "")))


def siblings_of(corpus: Corpus, bucket: dict[str, Any]) -> list[dict[str, Any]]:
    """The buckets :func:`alike` ``bucket``, each new."""
    return [b for b in corpus.buckets() if alike(bucket, b) and b["status"] == "new"]


def shows(corpus: Corpus, a: dict[str, Any], program: Program, b: dict[str, Any], target: Target,
          worker: Worker) -> bool | None:
    """Run ``a``'s reduced ``program`` as ``b``'s variant on ``target``: True where a wrong lane of it
    lands in ``b`` (the variant, its rows and the evidence stored: :func:`store_variant`), False
    where none does, None where no variant can be made (nothing ran)."""
    case = variant(program, a["signature"], b["signature"])
    if case is None:
        return None
    rows = observe(case, target, worker) or []
    for r in rows:
        r.update(program_id=case.id, fingerprint_id=target.fingerprint_id, path=target.path)
    hits = [r for r in rows if r["kind"] in RESULT_KINDS and bucket_id(signature(r)) == b["id"]]
    if hits:
        store_variant(corpus, a, b, case, target, rows, hits[0])
    return bool(hits)


def rerun_siblings(corpus: Corpus, bucket: str, program: Program, target: Target, worker: Worker,
                   deadline: float | None = None) -> list[tuple[str, bool]]:
    """Run bucket ``bucket``'s reduced ``program`` as each sibling bucket's variant on ``target``
    (module docstring), until ``deadline`` (a ``time.monotonic()`` reading); returns the sibling
    buckets it showed, each with its evidence stored, and whether the variant became its reduced
    case (it had none)."""
    a = corpus.bucket(bucket)
    shown = []
    for b in siblings_of(corpus, a):
        if deadline is not None and time.monotonic() > deadline:
            break
        if shows(corpus, a, program, b, target, worker):
            shown.append((b["id"], b["reduced"] is None))
    return shown


def store_variant(corpus: Corpus, a: dict, b: dict, case: Program, target: Target, rows: list[dict], hit: dict) -> None:
    """The variant's program, run and rows (bucketed like any other), the evidence, and the
    variant as ``b``'s reduced case where ``b`` has none."""
    store_case(corpus, case, target, rows, "siblings")
    corpus.add_evidence({"bucket": b["id"], "same_as": a["id"], "kind": "re-run", "program_id": case.id,
                         "detail": json.dumps({"target": target.name, "expression": hit["expression"],
                                               "inputs": json.loads(hit["inputs"] or "{}"),
                                               "expected": hit["expected_value"], "actual": hit["actual_value"],
                                               "deviation": hit.get("deviation", "")})})
    if b["reduced"] is None:
        row = bucket_rows(corpus, b["id"])[0]
        corpus.add_reduction(reduction_row(corpus.program(row["program_id"]), case, b["id"], target, candidates=1))
