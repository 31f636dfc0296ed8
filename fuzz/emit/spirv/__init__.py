"""Program -> SPIR-V module (binary words) for the OpenCL environment.

The module is what the OpenCL C emitter's kernel means, written instruction by instruction
(SPIR-V 1.0; Addresses, Kernel and the Int8/Int16/Int64/Float16/Float64/Vector16 capabilities a
program needs; Physical64 addressing; OpenCL memory model; OpenCL.std imported). Opcodes and
enumerants come from the official grammar (:mod:`fuzz.emit.grammar`).

The kernel ``clfuzz(in, out)`` takes the same packed byte buffers as the OpenCL C one
(:mod:`lang.layout`): element ``gid`` of a buffer lives at byte ``offset + gid * sizeof(T)``.

The kernel function is written by :mod:`fuzz.emit.spirv.kernel`, into the module under
construction (:mod:`fuzz.emit.spirv.module`); each area's operations by its module (conversions,
only: the SPIR-V-only forms, expressions, atomics, images, maths), a shaped program's structure by
:mod:`fuzz.emit.spirv.shapes`.
"""

from fuzz.emit.spirv.kernel import EMITTERS, emit, words

__all__ = ["EMITTERS", "emit", "words"]
