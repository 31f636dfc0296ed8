"""The test-program IR: pure data, no OpenCL C or SPIR-V text.

A :class:`Program` is a kernel over ``global_size`` work-items. Its arguments are typed buffers
(:class:`Buffer`); an input buffer's contents are a :class:`Fill` recipe, so a program with
thousands of lanes stays a few hundred bytes of JSON and still replays bit-identically. Its body
is a tuple of :class:`Store` statements, each writing one typed expression per work-item into an
output buffer (element ``get_global_id(0)``). Expressions are :class:`Load`, :class:`Literal` and
:class:`Op` (an operation from the table in :mod:`lang.ops`, with its attributes).

Atomics programs (area "atomics") also have *shared* buffers: locations in global memory
(role ``global``: ``count`` locations shared by the whole NDRange, or ``count`` per work-group
with ``per_group``) or in local memory (role ``local``: ``count`` per work-group), each with its
initial values (a Fill) and read back after the kernel (local ones copied out after a barrier).
Such a program runs in work-groups of ``local_size`` work-items; its statements store the value
an atomic operation returns (:mod:`lang.ops`, area "atomics"), and the operation names its
location in its attributes (``location``: the shared buffer; ``index``: which element, from the
work-item's ids, :func:`location_index`).

Images programs (area "images") also have read-only images (:class:`Image`: a kind from
:data:`lang.images.DIMS`, a format, a shape and its texels as a Fill) and samplers
(:class:`Sampler`); a ``read_image`` operation names its image and sampler (none for a
sampler-less read) in its attributes and takes its coordinate from an input buffer.

Every reader — the OpenCL C emitter, the oracle, the strategies, the SPIR-V emitter and the
reducer — walks this structure; none adds fields of its own. A program's id is the SHA-256 of
its canonical JSON form (fields at their defaults are left out of it, so adding a field keeps
older programs' ids).

This module holds the :class:`Program`, its JSON form and its validation; the nodes are defined
in :mod:`lang.nodes` (below it, so that validation can use them) and imported from here like the
rest; the programs made from a program (``restrict``, ``twin``) are in :mod:`lang.derive`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from lang.images import (
    ADDRESSING,
    CHANNEL_TYPES,
    DIMS,
    FILTERS,
    NORMALIZED_ONLY,
    SAMPLER_SCOPES,
    modelled,
    read_form,
    read_function,
)
from lang.maths import FUNCTIONS
from lang.nodes import (
    ROLES,
    SHARED_KINDS,
    Buffer,
    Expr,
    Fill,
    Image,
    InvalidProgram,
    Literal,
    Load,
    Op,
    Sampler,
    Store,
    buffers_of,
    location_index,
    memory_of,
    walk,
)
from lang.shapes import Shape, ShapeError
from lang.shapes import check as check_shape
from lang.shapes import from_data as shape_from_data
from lang.shapes import needs as shape_needs
from lang.shapes import to_data as shape_to_data
from lang.types import TYPE_CAPABILITIES, Type, scalar

__all__ = ["Buffer", "Expr", "Fill", "Image", "InvalidProgram", "Literal", "Load", "Op", "Program", "Sampler", "Store",
           "buffers_of", "canonical_json", "from_data", "location_index", "memory_of", "to_data", "validate", "walk"]


@dataclass(frozen=True)
class Program:
    """A whole test kernel; see the module docstring."""

    buffers: tuple[Buffer, ...]
    body: tuple[Store, ...]
    global_size: int
    options: str = ""
    requires: frozenset[str] = field(default_factory=frozenset)  # "fp64", "fp16", "int64", ...
    area: str = "conversions"
    local_size: int = 0  # work-items per work-group; 0: the driver chooses (no shared buffers)
    images: tuple[Image, ...] = ()
    samplers: tuple[Sampler, ...] = ()
    shape: Shape | None = None  # area "shapes": structure around the statements (lang.shapes)

    @property
    def base_area(self) -> str:
        """The area of the statements: the program's own, or, for a shaped program, its base's."""
        return self.shape.base if self.shape else self.area

    def image(self, name: str) -> Image:
        for i in self.images:
            if i.name == name:
                return i
        raise InvalidProgram(f"program has no image {name!r}")

    def sampler(self, name: str) -> Sampler:
        for s in self.samplers:
            if s.name == name:
                return s
        raise InvalidProgram(f"program has no sampler {name!r}")

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise InvalidProgram(f"program has no buffer {name!r}")

    @property
    def inputs(self) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.role == "in")

    @property
    def outputs(self) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.role == "out")

    @property
    def shared(self) -> tuple[Buffer, ...]:
        return tuple(b for b in self.buffers if b.shared)

    @property
    def groups(self) -> int:
        return self.global_size // self.local_size if self.local_size else 1

    def to_json(self) -> str:
        return self._json

    @cached_property
    def _json(self) -> str:  # computed once, as its id: a program is immutable
        return canonical_json(to_data(self))

    @cached_property
    def id(self) -> str:
        """The hash of the program's canonical JSON."""
        return content_id(self._json)

    @classmethod
    def from_json(cls, text: str) -> "Program":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidProgram(f"program file is not JSON: {e}") from None
        return from_data(data)

    def lanes(self, buffer: str) -> int:
        """Scalar lanes in memory for one buffer (3-vectors occupy four, §6.3.5); for a shared
        buffer, all its elements (of every work-group's partition)."""
        b = self.buffer(buffer)
        if b.shared:
            return b.count * (self.groups if b.grouped else 1) * b.type.mem_lanes
        return self.global_size * b.type.mem_lanes


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def content_id(text: str) -> str:
    """A stored program's id: the hash of its canonical JSON (one programs table holds the
    programs of every form: lang.ir's and lang.flow's)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ---- canonical data form ---------------------------------------------------------------------


def to_data(node: Any) -> Any:
    """A JSON-able form of any IR node (tagged dicts), stable for hashing."""
    if isinstance(node, Type):
        return node.c_name
    if isinstance(node, Program):
        return {
            "buffers": [to_data(b) for b in node.buffers],
            "body": [to_data(s) for s in node.body],
            "global_size": node.global_size,
            "options": node.options,
            "requires": sorted(node.requires),
            "area": node.area,
            **({"local_size": node.local_size} if node.local_size else {}),
            **({"images": [to_data(i) for i in node.images]} if node.images else {}),
            **({"samplers": [to_data(s) for s in node.samplers]} if node.samplers else {}),
            **({"shape": shape_to_data(node.shape)} if node.shape else {}),
        }
    if isinstance(node, Image):
        return {"name": node.name, "dim": node.dim, "order": node.order, "channel": node.channel,
                "shape": list(node.shape), "fill": node.fill.to_data()}
    if isinstance(node, Sampler):
        return {"name": node.name, "normalized": node.normalized, "addressing": node.addressing,
                "filter": node.filter, "scope": node.scope}
    if isinstance(node, Buffer):
        d = {"name": node.name, "type": to_data(node.type), "role": node.role}
        if node.fill is not None:
            d["fill"] = node.fill.to_data()
        if node.shared:
            d.update(count=node.count, per_group=node.per_group, kind=node.kind)
        return d
    if isinstance(node, Store):
        return {"store": node.buffer, "value": to_data(node.value)}
    if isinstance(node, Load):
        return {"load": node.buffer, "type": to_data(node.type)}
    if isinstance(node, Literal):
        return {"literal": list(node.bits), "type": to_data(node.type)}
    if isinstance(node, Op):
        return {
            "op": node.op,
            "type": to_data(node.type),
            "args": [to_data(a) for a in node.args],
            "attrs": {k: list(v) if isinstance(v, tuple) else v for k, v in node.attrs},
        }
    raise TypeError(f"not an IR node: {node!r}")


def _expr(d: dict) -> Expr:
    t = Type.parse(d["type"])
    if "load" in d:
        return Load(d["load"], t)
    if "literal" in d:
        return Literal(t, tuple(int(b) for b in d["literal"]))
    if "op" in d:
        attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in d.get("attrs", {}).items()}
        return Op(d["op"], tuple(_expr(a) for a in d["args"]), t, tuple(sorted(attrs.items())))
    raise InvalidProgram(f"unknown expression node {sorted(d)}")


def from_data(data: Any) -> Program:
    """The inverse of :func:`to_data`; raises :class:`InvalidProgram` with one line on bad input."""
    try:
        buffers = tuple(
            Buffer(
                b["name"],
                Type.parse(b["type"]),
                b["role"],
                Fill.from_data(b["fill"]) if "fill" in b else None,
                int(b.get("count", 0)),
                bool(b.get("per_group", False)),
                b.get("kind", ""),
            )
            for b in data["buffers"]
        )
        body = tuple(Store(s["store"], _expr(s["value"])) for s in data["body"])
        program = Program(
            buffers,
            body,
            int(data["global_size"]),
            data.get("options", ""),
            frozenset(data.get("requires", ())),
            data.get("area", "conversions"),
            int(data.get("local_size", 0)),
            tuple(Image(i["name"], i["dim"], i["order"], i["channel"], tuple(int(x) for x in i["shape"]), Fill.from_data(i["fill"]))
                  for i in data.get("images", ())),
            tuple(Sampler(s["name"], bool(s["normalized"]), s["addressing"], s["filter"], s.get("scope", "argument"))
                  for s in data.get("samplers", ())),
            shape_from_data(data["shape"]) if "shape" in data else None,
        )
        validate(program)
    except InvalidProgram:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, StopIteration) as e:
        raise InvalidProgram(f"malformed program: {type(e).__name__}: {e}") from None
    return program


def validate(program: Program) -> None:
    """Structural checks every reader relies on (types of loads match their buffers, ...)."""
    names = [b.name for b in program.buffers] + [i.name for i in program.images] + [s.name for s in program.samplers]
    if len(set(names)) != len(names):
        raise InvalidProgram("duplicate argument names")
    for image in program.images:
        _validate_image(image)
    for sampler in program.samplers:
        _validate_sampler(sampler)
    if program.global_size < 1 or not isinstance(program.options, str):
        raise InvalidProgram("global_size must be at least 1, options a string of build options")
    missing = type_needs(program) - program.requires
    if missing:
        raise InvalidProgram(f"the program's types need {', '.join(sorted(missing))} "
                             "but it does not require it (a device without it could not build it)")
    if program.local_size and (program.local_size < 1 or program.global_size % program.local_size):
        raise InvalidProgram(f"local_size {program.local_size} does not divide global_size {program.global_size}")
    _validate_shape(program, names)
    for b in program.buffers:
        if b.role not in ROLES:
            raise InvalidProgram(f"buffer {b.name!r} has role {b.role!r}, expected one of {', '.join(ROLES)}")
        if b.shared:
            _validate_shared(b, program)
        elif (b.role == "in") != (b.fill is not None):
            raise InvalidProgram(f"buffer {b.name!r}: inputs need a fill, outputs must not have one")
    for s in program.body:
        if program.buffer(s.buffer).role != "out":
            raise InvalidProgram(f"store into buffer {s.buffer!r}, which is not an output")
        for node in walk(s.value):
            if isinstance(node, Load):
                b = program.buffer(node.buffer)
                if b.role != "in" or b.type != node.type:
                    raise InvalidProgram(f"load of {node.buffer!r} does not match its buffer")
            if isinstance(node, Literal) and (len(node.bits) != node.type.width
                                              or not all(0 <= b < 1 << node.type.elem.bits for b in node.bits)):
                raise InvalidProgram(f"literal {list(node.bits)} does not fit {node.type.c_name} (lanes or bits)")
            if isinstance(node, Op) and node.attr("location") is not None:
                _validate_location(node, program)
            if isinstance(node, Op) and node.op == "read_image":
                _validate_read(node, program)
            if isinstance(node, Op) and node.op in FUNCTIONS:
                _validate_math(node)
            if isinstance(node, Op) and node.attr("out") is not None:
                _validate_out(node, s, program)
    normalized: dict[str, bool] = {}
    for s in program.body:
        for node in walk(s.value):
            if isinstance(node, Op) and node.op == "read_image" and node.attr("sampler"):
                flag = program.sampler(node.attr("sampler")).normalized
                if normalized.setdefault(node.attr("image"), flag) != flag:
                    raise InvalidProgram(f"image {node.attr('image')!r} is read with normalized and unnormalized "
                                         "coordinates (§6.15.15.1: every read of an image uses the same)")


def _validate_shape(program: Program, names: list[str]) -> None:
    """Area ``shapes`` exactly when a shape is attached, which is valid for the program's sizes
    (lang.shapes.check); ``ctl``, the control words' region, is no argument's name."""
    if (program.area == "shapes") != (program.shape is not None):
        raise InvalidProgram("a program of area 'shapes' has a shape, and only such a program")
    if program.shape is None:
        return
    if "ctl" in names:
        raise InvalidProgram("'ctl' names the control words of a shaped program, not an argument")
    try:
        check_shape(program.shape, program.local_size, program.global_size, bool(program.shared))
        missing = shape_needs(program.shape) - program.requires
        if missing:
            raise ShapeError(f"its parts need {', '.join(sorted(missing))} but the program does not require it")
    except ShapeError as e:
        raise InvalidProgram(f"shape: {e}") from None


def _validate_image(image: Image) -> None:
    dim = DIMS.get(image.dim)
    if dim is None:
        raise InvalidProgram(f"image {image.name!r}: unknown kind {image.dim!r} (one of {', '.join(DIMS)})")
    if not modelled(image.order, image.channel):
        raise InvalidProgram(f"image {image.name!r}: format {image.order}/{image.channel} is not one clfuzz models")
    if len(image.shape) != dim.axes or min(image.shape) < 1:
        raise InvalidProgram(f"image {image.name!r}: shape {image.shape} does not fit a {image.dim} image")


def _validate_sampler(s: Sampler) -> None:
    if s.addressing not in ADDRESSING or s.filter not in FILTERS or s.scope not in SAMPLER_SCOPES:
        raise InvalidProgram(f"sampler {s.name!r}: unknown addressing, filter or scope")
    if s.addressing in NORMALIZED_ONLY and not s.normalized:
        raise InvalidProgram(f"sampler {s.name!r}: {s.addressing} needs normalized coordinates (§6.15.15.1)")


def _validate_read(op: Op, program: Program) -> None:
    """A read is defined (§6.15.15.2-6, Tables 33-34): its function suits the channel type, a
    sampler-less read or one with integer coordinates uses the unnormalized NEAREST
    CLAMP_TO_EDGE/CLAMP/NONE form, LINEAR only with read_imagef/h, image1d_buffer_t without a
    sampler; the coordinate has the image kind's lanes."""
    image = program.image(op.attr("image"))
    dim = DIMS[image.dim]
    coord = op.args[0].type
    what = f"read_image of {image.name!r}"
    if coord.width != dim.coord_width or coord.scalar not in ("int", "float"):
        raise InvalidProgram(f"{what}: coordinate {coord.c_name} does not fit a {image.dim} image")
    if read_function(op.type.c_name) not in CHANNEL_TYPES[image.channel].reads:
        raise InvalidProgram(f"{what}: {op.type.c_name} result is undefined for {image.channel}")
    sampler = program.sampler(op.attr("sampler")) if op.attr("sampler") else None
    if op.attr("dim") != image.dim or op.attr("form") != read_form(sampler):
        raise InvalidProgram(f"{what}: attributes dim={op.attr('dim')!r} form={op.attr('form')!r} do not "
                             f"match the image ({image.dim}) and sampler ({read_form(sampler)})")
    if sampler is None:
        if coord.scalar != "int":
            raise InvalidProgram(f"{what}: a sampler-less read takes integer coordinates")
        return
    s = sampler
    if not dim.sampled:
        raise InvalidProgram(f"{what}: {dim.c_type} is read without a sampler only")
    if coord.scalar == "int" and not s.exact:
        raise InvalidProgram(f"{what}: integer coordinates need an unnormalized NEAREST sampler with "
                             "CLAMP_TO_EDGE, CLAMP or NONE (§6.15.15.2)")
    if s.filter == "linear" and read_function(op.type.c_name) not in ("f", "h"):
        raise InvalidProgram(f"{what}: LINEAR filtering is undefined for read_imagei/ui")


def _validate_math(op: Op) -> None:
    """A math built-in's operand and result types are those of one of its overloads
    (lang.maths.MathFn.forms: the declared parameters, or beside a vector the scalar-argument form)."""
    f = FUNCTIONS[op.op]
    if f.form(op.type, tuple(a.type for a in op.args)) is None:
        raise InvalidProgram(f"{op.op}({', '.join(a.type.c_name for a in op.args)}) -> {op.type.c_name} "
                             "is no overload of OpenCL C 3.0 §6.15.2, §6.15.4 or §6.15.5")


def _validate_out(op: Op, stmt: Store, program: Program) -> None:
    """A math built-in's out-parameter (lang.maths) is written to an output buffer of its pointee
    type that no other statement writes, and only by a statement's root operation."""
    f = FUNCTIONS.get(op.op)
    name = op.attr("out")
    if f is None or not f.out or stmt.value is not op:
        raise InvalidProgram(f"{op.op}: only a statement's root math built-in with an out-parameter has 'out'")
    b = program.buffer(name)
    want = f.operand_type(f.out, op.args[0].type)
    if b.role != "out" or b.type != want or name == stmt.buffer or any(
            s.buffer == name or (s.pointee == name and s is not stmt) for s in program.body):
        raise InvalidProgram(f"{op.op}: out-parameter buffer {name!r} must be an output of type {want.c_name} "
                             "written by this statement only")


def _validate_shared(b: Buffer, program: Program) -> None:
    if not program.local_size:
        raise InvalidProgram(f"shared buffer {b.name!r} needs a program with a local_size")
    if b.count < 1 or b.type.width != 1 or not b.type.elem.is_int or b.type.elem.bits < 32:
        raise InvalidProgram(f"shared buffer {b.name!r}: {b.count} elements of {b.type.c_name}; "
                             "atomics need at least one 32- or 64-bit integer")
    if b.kind not in SHARED_KINDS or (b.kind == "flag") != (b.fill is None):
        raise InvalidProgram(f"shared buffer {b.name!r}: kind {b.kind!r} (flags have no fill, others need one)")
    if b.kind == "flag" and (b.role != "local" or b.type.c_name != "int"):
        raise InvalidProgram(f"flag buffer {b.name!r} must be a local int buffer")
    if b.role == "local" and (b.per_group or b.count > program.local_size):
        raise InvalidProgram(f"local buffer {b.name!r}: at most local_size elements, one work-item each")


def _validate_location(op: Op, program: Program) -> None:
    b = program.buffer(op.attr("location"))
    which, div, mod, base = op.attr("index")
    if not b.shared or which not in ("gid", "lid") or div < 1 or mod < 1 or not 0 <= base <= b.count - mod:
        raise InvalidProgram(f"{op.op}: location {b.name}[{base} + ({which} / {div}) % {mod}] is not "
                             f"inside a shared buffer of {b.count} elements")
    if op.attr("memory") != memory_of(b):
        raise InvalidProgram(f"{op.op}: memory {op.attr('memory')!r} does not match buffer {b.name!r}")


def type_needs(program: Program, statement: Store | None = None) -> frozenset[str]:
    """The capabilities of :data:`lang.types.TYPE_CAPABILITIES` that the types of ``program``'s
    statements and buffers need (of ``statement`` alone and the buffers it uses, if given)."""
    body = program.body if statement is None else (statement,)
    used = {n.type.scalar for s in body for n in walk(s.value)}
    names = None if statement is None else buffers_of(statement)
    used |= {b.type.scalar for b in program.buffers if names is None or b.name in names}
    return frozenset(scalar(n).needs for n in used) & TYPE_CAPABILITIES
