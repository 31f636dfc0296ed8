"""Tables of the SPIR-V emitter: the opcode each IR operator, predicate or atomic function
becomes, and the Scope, Memory Semantics and capability operands they take."""

# conversions (lang.ops area "conversions"): arithmetic and bitwise operators
ARITH = {"+": "Add", "-": "Sub", "*": "Mul"}
BITWISE = {"&": "OpBitwiseAnd", "|": "OpBitwiseOr", "^": "OpBitwiseXor"}

# comparisons: the opcode name after OpFOrd/OpFUnord, OpS/OpU or OpI
COMPARE_NAMES = {"==": "Equal", "!=": "NotEqual", "<": "LessThan", "<=": "LessThanEqual",
                 ">": "GreaterThan", ">=": "GreaterThanEqual"}

# expressions (lang.ops area "expressions")
UNDEFINED = 0xFFFFFFFF  # an OpVectorShuffle component literal that leaves the component undefined
PREDICATES = {"isequal": "OpFOrdEqual", "isnotequal": "OpFUnordNotEqual", "isgreater": "OpFOrdGreaterThan",
              "isgreaterequal": "OpFOrdGreaterThanEqual", "isless": "OpFOrdLessThan",
              "islessequal": "OpFOrdLessThanEqual", "islessgreater": "OpFOrdNotEqual", "isfinite": "OpIsFinite",
              "isinf": "OpIsInf", "isnan": "OpIsNan", "isnormal": "OpIsNormal", "isordered": "OpOrdered",
              "isunordered": "OpUnordered", "signbit": "OpSignBitSet"}

# atomics (lang.ops area "atomics")
SCOPES = {"device": 1, "work_group": 2}  # SPIR-V Scope: Device 1, Workgroup 2
ORDER_BITS = {"relaxed": 0, "acquire": 0x2, "release": 0x4, "acq_rel": 0x8, "seq_cst": 0x10}
ATOMIC_OPCODES = {
    "add": "OpAtomicIAdd", "sub": "OpAtomicISub", "xchg": "OpAtomicExchange", "inc": "OpAtomicIIncrement",
    "dec": "OpAtomicIDecrement", "and": "OpAtomicAnd", "or": "OpAtomicOr", "xor": "OpAtomicXor",
    "load": "OpAtomicLoad", "store": "OpAtomicStore", "flag_test_and_set": "OpAtomicFlagTestAndSet",
    "flag_clear": "OpAtomicFlagClear",
}

# images (lang.ops area "images"): the capabilities each image dimensionality needs
IMAGE_CAPABILITIES = {"1D": ("ImageBasic", "Sampled1D"), "Buffer": ("ImageBasic", "SampledBuffer"),
                      "2D": ("ImageBasic",), "3D": ("ImageBasic",)}
