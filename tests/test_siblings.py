"""A reduced case as its siblings' (triage.siblings): the same operands retyped exactly or sent to
a sibling entry point, never an inexact value. Without any driver (tests/drivers/test_siblings_run.py
runs one)."""

from __future__ import annotations

import struct

from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.types import Type, needs_of
from triage.siblings import scalar_map, variant


def _bits(value: float, fmt: str) -> int:
    return int.from_bytes(struct.pack("<" + fmt, value), "little")


def one(op: str, src: str, dst: str, values: list[int], attrs: tuple = ()) -> Program:
    t_in, t_out = Type(src), Type(dst)
    args = tuple(Load("in0", t_in) for _ in range(2 if op in ("pow", "powr") else 1))
    return Program((Buffer("in0", t_in, "in", Fill(0, (), 3, tuple(values))), Buffer("out0", t_out, "out")),
                   (Store("out0", Op(op, args, t_out, attrs)),), global_size=len(values), area="math",
                   requires=needs_of(src, dst) & {"fp64", "fp16"})


def sig(op: str, src: str, dst: str, deviation: str = "wrong-value") -> dict:
    return {"operation": op, "src_type": src, "dst_type": dst, "deviation": deviation, "kind": "wrong-result"}


def test_a_float_case_becomes_its_double_sibling_with_the_same_operand():
    case = one("sinpi", "float", "float", [_bits(1.0, "f"), _bits(-0.0, "f")])
    got = variant(case, sig("sinpi", "float", "float"), sig("sinpi", "double", "double"))
    assert got is not None and got.requires == frozenset({"fp64"})
    assert [b.type.c_name for b in got.buffers] == ["double", "double"]
    assert list(got.buffers[0].fill.values) == [_bits(1.0, "d"), _bits(-0.0, "d")]
    assert got.body[0].value.type.c_name == "double"


def test_a_double_that_no_float_holds_gives_no_variant():
    case = one("sinpi", "double", "double", [_bits(0.1, "d")])
    assert variant(case, sig("sinpi", "double", "double"), sig("sinpi", "float", "float")) is None
    exact = one("sinpi", "double", "double", [_bits(0.5, "d")])
    assert variant(exact, sig("sinpi", "double", "double"), sig("sinpi", "float", "float")) is not None


def test_a_conversion_takes_the_sibling_destination_of_the_same_width():
    nan = 0x7FC00000
    case = one("convert", "float", "long", [nan], (("sat", True),))
    got = variant(case, sig("convert_T_sat", "float", "signed integer"),
                  sig("convert_T_sat", "float", "unsigned integer"))
    assert got is not None and got.buffers[1].type.c_name == "ulong" and got.body[0].value.type.c_name == "ulong"
    assert list(got.buffers[0].fill.values) == [nan] and got.buffers[0].type.c_name == "float"
    assert scalar_map(sig("x", "signed integer", "signed integer"), sig("x", "unsigned integer", "unsigned integer"),
                      {"char", "long"}) == {"char": "uchar", "long": "ulong"}


def test_a_negative_integer_keeps_its_bits_in_its_unsigned_twin():
    """-1 is no uint: the unsigned variant reads the same bits (0xFFFFFFFF), the operand a lane-wise
    bug such as Oclgrind's vector min with a scalar operand mishandles alike; 3 keeps its value."""
    case = one("abs", "int", "uint", [2**32 - 1, 3])  # -1 and 3 as an int's bits
    got = variant(case, sig("abs", "signed integer", "unsigned integer"),
                  sig("abs", "unsigned integer", "unsigned integer"))
    assert got is not None and got.buffers[0].type.c_name == "uint"
    assert list(got.buffers[0].fill.values) == [2**32 - 1, 3]


def test_an_entry_point_sibling_takes_the_same_operands():
    case = one("pow", "float", "float", [_bits(2.0, "f")])
    got = variant(case, sig("pow", "float", "float"), sig("powr", "float", "float"))
    assert got is not None and got.body[0].value.op == "powr" and got.buffers == case.buffers
    assert variant(case, sig("pow", "float", "float"), sig("powr", "double", "double")) is None


def test_an_integer_entry_point_of_one_arity_is_a_sibling():
    """min and max (§6.15.3 Table 13), one family with clamp: min's case runs as max's with the
    same operands; clamp takes three and has no variant of a two-operand case."""
    from lang.ir import Literal

    t = Type("uchar", 4)
    case = Program((Buffer("in0", t, "in", Fill(0, (), 3, (0, 1, 1, 1))), Buffer("out0", t, "out")),
                   (Store("out0", Op("min", (Load("in0", t), Literal(Type("uchar"), (1,))), t)),), global_size=1,
                   area="expressions")
    got = variant(case, sig("min", "unsigned integer+unsigned integer", "unsigned integer"),
                  sig("max", "unsigned integer+unsigned integer", "unsigned integer"))
    assert got is not None and got.body[0].value.op == "max" and got.buffers == case.buffers
    assert variant(case, sig("min", "unsigned integer+unsigned integer", "unsigned integer"),
                   sig("clamp", "unsigned integer+unsigned integer", "unsigned integer")) is None


def test_a_clamp_case_runs_as_the_parts_the_specification_defines_it_by():
    """clamp(x, minval, maxval) "Returns min(max(x, minval), maxval)" (§6.15.3 Table 13): its
    case runs as max(x, minval) and as min(x, maxval), the same loads in that order; a part of
    other element types has no variant."""
    v, s = Type("short", 3), Type("short")
    case = Program((Buffer("in0", v, "in", Fill(0, (), 3, (0, 1, 1, 0))), Buffer("in3", s, "in", Fill(0, (), 3, (1,))),
                    Buffer("in4", s, "in", Fill(0, (), 3, (2,))), Buffer("out1", v, "out")),
                   (Store("out1", Op("clamp", (Load("in0", v), Load("in3", s), Load("in4", s)), v)),),
                   global_size=1, area="expressions")
    three = sig("clamp", "signed integer+signed integer+signed integer", "signed integer")
    for part, bound in (("max", "in3"), ("min", "in4")):
        got = variant(case, three, sig(part, "signed integer+signed integer", "signed integer"))
        assert got is not None and got.body[0].value.op == part
        assert [a.buffer for a in got.body[0].value.args] == ["in0", bound]
    assert variant(case, three, sig("max", "unsigned integer+unsigned integer", "unsigned integer")) is None
    assert variant(case, sig("max", "signed integer+signed integer", "signed integer"), three) is None


def test_a_case_of_nested_operations_has_no_variant():
    """convert_float(convert_short_sat(x)) retyped as another destination's would retype the inner
    conversion too: another program, not the same operands on the sibling."""
    inner = Op("convert", (Load("in0", Type("float")),), Type("short"), (("sat", True),))
    case = Program((Buffer("in0", Type("float"), "in", Fill(0, (), 3, (0x7FC00000,))), Buffer("out0", Type("float"), "out")),
                   (Store("out0", Op("convert", (inner,), Type("float"), (("rounding", "rtp"),))),), global_size=1)
    assert variant(case, sig("convert_T", "unsigned integer", "signed integer"),
                   sig("convert_T", "signed integer", "float")) is None


def _image_read(order: str, channel: str, result: str) -> Program:
    from lang.ir import Image, Sampler

    coord = Type("float", 2)
    image = Image("img0", "2d", order, channel, (1, 1), Fill(0, (), 3, (7, 7, 7, 7)[:len(order)]))
    read = Op("read_image", (Load("in0", coord),), Type(result, 4),
              (("dim", "2d"), ("form", "unnorm-nearest-clamp:argument"), ("image", "img0"), ("sampler", "s0")))
    return Program((Buffer("in0", coord, "in", Fill(0, (), 3, (0, 0))), Buffer("out0", Type(result, 4), "out")),
                   (Store("out0", read),), global_size=1, area="images", images=(image,),
                   samplers=(Sampler("s0", False, "clamp", "nearest", "argument"),))


def test_an_image_read_takes_the_sibling_read_function_on_the_same_texel_bits():
    """read_imagef of an R/UNORM_INT8 texel as read_imagei: the same coordinates, sampler, order and
    texel bits in SIGNED_INT8 (the 8-bit format read_imagei is defined on, §6.15.15.4), an int4
    result; an INTENSITY image has no integer form (never generated), so no variant."""
    f = sig("read_imagef", "float", "float")
    i = sig("read_imagei", "float", "signed integer")
    got = variant(_image_read("R", "UNORM_INT8", "float"), f, i)
    assert got is not None and (got.images[0].order, got.images[0].channel) == ("R", "SIGNED_INT8")
    assert got.images[0].fill.values == (7,) and got.body[0].value.type.c_name == "int4"
    assert got.buffers[1].type.c_name == "int4" and got.samplers[0].filter == "nearest"
    back = variant(got, i, sig("read_imageui", "float", "unsigned integer"))
    assert back is not None and back.images[0].channel == "UNSIGNED_INT8"
    assert variant(_image_read("INTENSITY", "UNORM_INT8", "float"), f, i) is None
    assert variant(_image_read("R", "UNORM_INT8", "float"), f, sig("read_imagei", "signed integer", "signed integer")) is None
