"""SPIR-V image and sampler types, constant samplers and the handler of image reads (lang.ops
area "images"; oracles.images)."""

from __future__ import annotations

from fuzz.emit.spirv.module import Emitter, Module
from fuzz.emit.spirv.opcodes import IMAGE_CAPABILITIES
from lang.images import ADDRESSING, DIMS, FILTERS
from lang.ir import Image, Op, Sampler
from lang.ops import Handlers

EMITTERS: Handlers[Emitter] = Handlers()
emitter = EMITTERS.register


def image_type(m: Module, image: Image) -> int:
    """``OpTypeImage %void Dim 0 Arrayed 0 0 Unknown ReadOnly``: the OpenCL environment's form
    (OpenCL SPIR-V environment §4: Sampled Type void, Sampled 0, Image Format Unknown, an access
    qualifier)."""
    dim = DIMS[image.dim]
    for cap in IMAGE_CAPABILITIES[dim.spirv_dim]:
        m.capability(cap)
    return m.declare_type(("image", dim.name), "OpTypeImage", m.void(), m.g.enum("Dim", dim.spirv_dim), 0,
                          int(dim.arrayed), 0, 0, m.g.enum("ImageFormat", "Unknown"),
                          m.g.enum("AccessQualifier", "ReadOnly"))


def constant_sampler(m: Module, s: Sampler) -> int:
    """OpConstantSampler for a sampler the program declares (program or kernel scope)."""
    m.capability("LiteralSampler")
    key = ("sampler", s.normalized, s.addressing, s.filter)
    if key not in m.constants:
        cid = m.id()
        m.inst("global", "OpConstantSampler", m.sampler_type(), cid, ADDRESSING[s.addressing][2], int(s.normalized),
               FILTERS[s.filter][2])
        m.constants[key] = cid
    return m.constants[key]


@emitter("read_image")
def _read_image(m: Module, op: Op, args: list[int]) -> int:
    """OpImageSampleExplicitLod (Lod 0.0) on OpSampledImage(image, sampler), or OpImageRead
    without a sampler (OpenCL SPIR-V environment §7.7). The result is a 4-vector of float or of
    32-bit int; whether 8- and 16-bit integer channels are sign- or zero-extended follows the
    image's channel type (SPIR-V 1.0 has no SignExtend/ZeroExtend image operands)."""
    image, itype = m.images[op.attr("image")]
    result = m.type(op.type)
    if not op.attr("sampler"):
        return m.op("OpImageRead", result, image, args[0])
    sampled = m.op("OpSampledImage", m.declare_type(("sampled", itype), "OpTypeSampledImage", itype), image,
                   m.samplers[op.attr("sampler")])
    return m.op("OpImageSampleExplicitLod", result, sampled, args[0], m.g.enum("ImageOperands", "Lod"),
                m.constant("float", 0))
