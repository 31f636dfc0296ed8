"""Generation policy: every weight and limit the strategies use, as plain named data.

Strategies contain no literal weights; they read a :class:`Policy`. A campaign stores its policy
(``asdict``) with its settings, so a run is reproducible from the seed plus the policy, and a
user can dump, edit and load one (``Policy.from_json``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

from lang.ops import INTEGER_BUILTINS, OPS, RELATIONAL_BUILTINS

EXPRESSION_WEIGHTS: dict[str, float] = {
    # vector components and literals
    "swizzle": 6, "insert": 3, "vec": 3, "vload": 2, "shuffle": 2, "shuffle2": 2,
    # selection
    "select": 2, "bitselect": 1, "ternary": 2,
    # truth values
    "compare": 3, "logic": 1.5, "not": 1, "any": 1, "all": 1,
    **{name: 0.7 for name, _, _ in RELATIONAL_BUILTINS},
    # integer operators and built-ins
    "arith": 5, "div": 2, "shift": 2, "complement": 1,
    **{b.name: b.weight for b in INTEGER_BUILTINS},
    # conversions inside trees
    "convert": 2, "as": 1,
}
"""Relative weights of the operations an expression tree's inner nodes are drawn from."""


@dataclass(frozen=True)
class Policy:
    # program shape
    statements: int = 64  # statements per generated program (drivers build parts: campaign.batching)
    global_size: int = 16384  # work-items per generated program
    # statement kinds (relative weights)
    w_convert: int = 10
    w_cast: int = 2
    w_as: int = 2
    w_assign: int = 2
    w_arith: int = 2
    # forms only SPIR-V expresses (area "spirv", beside the conversions above)
    w_bitcast: int = 3
    w_shuffle: int = 3
    w_rem: int = 4
    w_extended: int = 3
    w_select: int = 3
    w_reduce: int = 2
    p_undefined_component: float = 0.25  # an OpVectorShuffle component left undefined
    # expression trees (area "expressions")
    w_expression: int = 8  # a statement storing a tree
    w_vstore: int = 1  # a statement writing part of an element with vstoren
    expr_depth: int = 3  # levels of operations above the leaves
    p_leaf: float = 0.25  # an inner position that is a leaf anyway
    p_scalar_operand: float = 0.25  # a scalar operand beside a vector (widened)
    expression_weights: dict[str, float] = field(default_factory=lambda: dict(EXPRESSION_WEIGHTS))
    p_targeted: float = 0.0  # a program from the area's targeted Hypothesis search (campaign.targeted; off:
    # bench/targeted.py measured fewer coverage cells with it, docs/campaigns.md)
    # scheduling (campaign.scheduler): each target's time reserved for the areas it takes, in even floors
    area_floor: float = 0.4
    corner_sweep: bool = True  # each area's first programs sweep its corner table (fuzz.strategies.sweeps)
    # atomics under contention (area "atomics")
    atomic_statements: int = 12  # atomic operations per work-item
    atomic_global_size: int = 4096  # work-items at most (several work-groups)
    p_c11_atomics: float = 0.5  # a program of C11 atomics (where a target has OpenCL C 3.0)
    p_int64_atomics: float = 0.3  # 64-bit locations (where a target has the int64 atomics)
    # image reads (area "images")
    image_statements: int = 12  # reads per work-item
    image_global_size: int = 256  # work-items (each reads at its own coordinates)
    image_count: int = 3  # images per program at most
    image_samplers: int = 6  # samplers per program at most (CL_DEVICE_MAX_SAMPLERS >= 16)
    # floating-point arithmetic and math built-ins (area "math")
    math_statements: int = 16  # operations per work-item
    math_global_size: int = 1024  # work-items (each reads its own operands); the oracle keeps its lanes per second
    # from 256 to 1,024 (bench/oracle_maths.py --programs: about 105k/s at 16x256 and 16x1024, 83k/s at 64x1024)
    p_build_options: float = 0.3  # a program built with some of lang.maths.OPTIONS
    p_each_option: float = 0.35  # each option, in such a program
    p_opencl_c_2: float = 0.5  # a math program built as OpenCL C 2.0+ (-cl-std), where a target builds it
    p_targeted_error: float = 0.25  # a math program from the search steered toward larger observed error
    # kernel shapes (area "shapes"; lang.shapes, fuzz.strategies.shapes): structure around another area's statements
    shape_statements: int = 16  # statements of the base program (conversions, expressions)
    shape_global_size: int = 4096  # work-items of the base program at most (conversions, expressions)
    shape_steps: int = 3  # index steps at most (loops with carried values, local memory, calls, arrays)
    shape_wraps: int = 2  # wraps of control flow at most (if/else, loops, switch, dead blocks)
    shape_local_sizes: tuple[int, ...] = (16, 32, 64, 128, 256)  # work-group sizes of local-memory steps
    p_unstructured: float = 0.3  # a shaped program's SPIR-V without merge instructions (lang.shapes.CFGS)
    p_opt_disable: float = 0.3  # a shaped program built with -cl-opt-disable (API §5.8.6.3: the optimiser off)
    # operands
    p_literal_operand: float = 0.25  # operand written in the source instead of loaded
    p_reuse_input: float = 0.4  # a load of an input buffer of the same type the program already has
    p_nested: float = 0.15  # a conversion whose operand is another conversion
    p_sat: float = 0.5  # _sat on an integer destination
    p_rounding: float = 0.7  # an explicit rounding suffix
    pool_max: int = 16  # edge values per input buffer
    # types
    p_vector: float = 0.5
    p_fp64: float = 0.3  # a program that uses double (run only where fp64 is supported)
    p_fp16: float = 0.3  # a program that uses half (only where cl_khr_fp16 is supported)
    # rare shapes (fuzz.strategies.swizzles): a swizzle node that is a half or selection of a
    # swizzle rvalue (3-component ones included) or a read of a 3-vector's undefined lane alone
    p_swizzle_shapes: float = 0.01

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape_local_sizes", tuple(self.shape_local_sizes))  # a list from JSON
        unknown = set(self.expression_weights) - set(OPS)
        if unknown:
            raise ValueError(f"expression_weights name unknown operations {sorted(unknown)}; known: {sorted(OPS)}")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Policy":
        data = json.loads(text)
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown policy fields {sorted(unknown)}; known: {sorted(known)}")
        return cls(**data)
