"""Generated image programs: every image kind, sampler combination, coordinate kind and read
function is drawn; every program is valid (lang.ir.validate) and its module passes spirv-val.

The formats are those a device with every modelled format would report."""

from __future__ import annotations

import pytest

from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import target_env, validate
from fuzz.strategies.conversions import Caps
from fuzz.strategies.draws import sample
from fuzz.strategies.images import image_programs
from lang.images import (
    ADDRESSING,
    CHANNEL_TYPES,
    DIMS,
    FILTERS,
    NORMALIZED_ONLY,
    ORDERS,
    format_key,
    modelled,
    read_form,
)
from lang.ir import Buffer, Fill, Image, InvalidProgram, Load, Op, Program, Sampler, Store
from lang.types import Type

EVERY_FORMAT = frozenset((d, format_key(o, c)) for d in DIMS for o in ORDERS for c in CHANNEL_TYPES if modelled(o, c))
CAPS = Caps(images=(EVERY_FORMAT,))


@pytest.fixture(scope="module")
def programs() -> list[Program]:
    return sample(image_programs(CAPS), 250, seed=3)


def _reads(programs):
    for p in programs:
        for s in p.body:
            op = s.value
            yield p, op, p.image(op.attr("image")), p.sampler(op.attr("sampler")) if op.attr("sampler") else None


def test_every_kind_sampler_and_coordinate_is_drawn(programs):
    seen = set()
    for p, op, image, s in _reads(programs):
        coord = op.args[0].type.scalar
        seen.add((image.dim, coord, "none" if s is None else (s.normalized, s.addressing, s.filter)))
    wanted = set()
    for dim in DIMS.values():
        wanted.add((dim.name, "int", "none"))
        if not dim.sampled:
            continue
        for normalized in (False, True):
            for addressing in ADDRESSING:
                if addressing in NORMALIZED_ONLY and not normalized:
                    continue
                for filter_ in FILTERS:
                    wanted.add((dim.name, "float", (normalized, addressing, filter_)))
                    if not normalized and filter_ == "nearest" and addressing not in NORMALIZED_ONLY:
                        wanted.add((dim.name, "int", (normalized, addressing, filter_)))
    assert wanted - seen == set()


def test_functions_formats_and_sampler_scopes_are_drawn(programs):
    reads = list(_reads(programs))
    assert {op.type.c_name for _, op, _, _ in reads} == {"float4", "int4", "uint4"}
    assert {s.scope for _, _, _, s in reads if s} == {"argument", "program", "kernel"}
    assert {CHANNEL_TYPES[i.channel].kind for _, _, i, _ in reads} == {"unorm", "snorm", "sint", "uint", "half", "float"}
    assert {i.order for _, _, i, _ in reads} == set(ORDERS)


def test_programs_round_trip_and_emit(programs):
    for p in programs:
        assert Program.from_json(p.to_json()) == p
        assert "read_image" in emit(p)


def test_modules_validate(programs):
    for p in programs[:60]:
        assert validate(spirv.emit(p), target_env(p)) is None, p.id


def _program(sampler: Sampler | None, coord: str, result: str = "float4", channel: str = "FLOAT") -> Program:
    t = Type(coord, 2)
    op = Op("read_image", (Load("c", t),), Type.parse(result),
            (("dim", "2d"), ("form", read_form(sampler)), ("image", "i"), ("sampler", sampler.name if sampler else "")))
    return Program((Buffer("c", t, "in", Fill(0)), Buffer("o", Type.parse(result), "out")), (Store("o", op),), 4,
                   area="images", images=(Image("i", "2d", "R", channel, (2, 2), Fill(1)),),
                   samplers=(sampler,) if sampler else ())


@pytest.mark.parametrize("sampler, coord, result, channel, why", [
    (None, "float", "float4", "FLOAT", "sampler-less read takes integer"),
    (Sampler("s", True, "clamp", "nearest"), "int", "float4", "FLOAT", "integer coordinates need"),
    (Sampler("s", False, "clamp", "linear"), "int", "float4", "FLOAT", "integer coordinates need"),
    (Sampler("s", False, "clamp", "linear"), "float", "int4", "SIGNED_INT32", "LINEAR filtering is undefined"),
    (Sampler("s", False, "clamp", "nearest"), "float", "float4", "SIGNED_INT32", "undefined for SIGNED_INT32"),
    (Sampler("s", False, "repeat", "nearest"), "float", "float4", "FLOAT", "needs normalized"),
])
def test_undefined_reads_are_rejected(sampler, coord, result, channel, why):
    """§6.15.15.1-6: the combinations whose results are undefined are not valid programs."""
    with pytest.raises(InvalidProgram, match=why):
        Program.from_json(_program(sampler, coord, result, channel).to_json())
