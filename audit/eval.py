"""The audit's evaluator (triage.audit): one work-item of a stored program's statement, walked
over the IR as the OpenCL C (or SPIR-V) that clfuzz emits for it means, with no oracle code.

Each node gives a list of :class:`~audit.values.AuditLane` (one per vector lane). The
operations live in :mod:`audit.ops` (conversions, lanes, selections, truth values),
:mod:`audit.integers` (integer operators and built-ins, SPIR-V's integer instructions),
:mod:`audit.math` (floating-point built-ins, with :mod:`audit.common`), :mod:`audit.geometric`
(§6.15.5) and :mod:`audit.images` (image reads); an operation none of them has raises
:class:`~audit.base.Unsupported`. The program's build options are read once (:mod:`audit.build`):
-cl-denorms-are-zero (and unsafe math) lets float and double denormals be flushed, and under
unsafe or finite math a floating-point operation's lane with a NaN or infinite operand or result
is not specified ("assume that arguments and results are valid", API §5.8.6.3).
"""

from __future__ import annotations

from audit import geometric as audit_geometric
from audit import images as audit_images
from audit import integers as audit_integers
from audit import math as audit_math
from audit import ops as audit_ops
from audit.base import Lanes, Unsupported, atype, implicit
from audit.build import Build
from audit.convert import Env
from audit.types import NotOpenCL
from audit.values import FINITE, AuditLane, decode, exact_lane, is_float, undefined_lane
from lang.ir import Literal, Load, Program, Store

HANDLERS = {**audit_ops.HANDLERS, **audit_integers.HANDLERS, **audit_math.HANDLERS, **audit_images.HANDLERS,
            **audit_geometric.HANDLERS}
MOVES = frozenset({"swizzle", "insert", "vec", "vload", "vstore", "shuffle", "shuffle2", "select", "ternary",
                   "bitselect", "as", "bitcast", "vector_shuffle", "op_select", "read_image"})
"""Operations that move, select or reinterpret values and do no floating-point arithmetic: the
assumptions of unsafe and finite math (API §5.8.6.3) do not reach them."""


def _non_finite(lanes) -> bool:
    """Whether a floating lane (or any of a list of lanes) may be a NaN or an infinity."""
    if isinstance(lanes, AuditLane):
        lanes = [lanes]
    return any(not lane.undefined and is_float(lane.scalar) and (lane.nan or any(
        decode(v, lane.scalar).kind != FINITE for v in lane.values)) for lane in lanes)


class Evaluator:
    """Evaluates expressions of ``program`` for the work-item ``item`` whose loads read
    ``inputs`` (bit patterns per buffer: the loaded lanes), in the float environment ``env``, on
    a SPIR-V path or not, on a device whose fingerprint is ``fingerprint``, built with ``options``
    (the string its run recorded; None: the program's, audit.build)."""

    def __init__(self, program: Program, inputs: dict[str, list[int]], env: Env, item: int, spirv: bool = False,
                 fingerprint: dict | None = None, options: str | None = None):
        self.program, self.inputs, self.item, self.spirv = program, inputs, item, spirv
        self.fingerprint = fingerprint or {}
        self.build = Build.of_run(program.options, program.requires, options, spirv)
        # API §5.8.6.2: -cl-denorms-are-zero (implied by unsafe math) lets float and double denormals be flushed
        self.env = Env(env.flush | {"float", "double"}) if self.build.daz else env

    def value(self, expr) -> Lanes:
        if isinstance(expr, Load):
            bits = self.inputs.get(expr.buffer)
            if bits is None or len(bits) < expr.type.width:
                raise Unsupported(f"the row does not record the inputs of {expr.buffer}")
            return [exact_lane(expr.type.scalar, b) for b in bits[: expr.type.width]]
        if isinstance(expr, Literal):
            return [exact_lane(expr.type.scalar, b) for b in expr.bits]
        handler = HANDLERS.get(expr.op)
        if handler is None:
            raise Unsupported(f"no independent reference for {expr.op}")
        args = [self.value(a) for a in expr.args]
        try:
            out = handler(self, expr, args)
        except NotOpenCL as e:
            return [undefined_lane(expr.type.scalar, f"the IR's {expr.op} is not valid OpenCL C as typed: {e}")
                    ] * expr.type.width
        if len(out) != expr.type.width or any(lane.scalar != expr.type.scalar for lane in out):
            why = f"the audit's {expr.op} gives {len(out)} lanes of {out[0].scalar if out else '?'}"
            return [undefined_lane(expr.type.scalar, why)] * expr.type.width
        if not self.build.edges and expr.op not in MOVES:
            return [undefined_lane(lane.scalar, self.build.voids_edges) if any(
                _non_finite(x) for x in [lane, *(a[i:i + 1] if len(a) == len(out) else a for a in args)])
                else lane for i, lane in enumerate(out)]
        return out

    def stored(self, stmt: Store, buffer: str) -> Lanes:
        """The lanes one work-item's element of ``buffer`` holds after ``stmt`` (its output,
        converted as by assignment, or a math built-in's out-parameter), in memory order: a
        3-vector's fourth lane is padding that no statement writes."""
        target = self.program.buffer(buffer).type
        if buffer == stmt.buffer:
            value = self.value(stmt.value)
            if stmt.value.type != target:
                try:
                    value = implicit(self, value, atype(stmt.value.type), atype(target))
                except NotOpenCL as e:
                    value = [undefined_lane(target.scalar, str(e))] * target.width
        elif buffer == stmt.pointee:
            value = audit_math.out_parameter(self, stmt.value, [self.value(a) for a in stmt.value.args])
        else:
            raise Unsupported(f"statement does not write {buffer}")
        if target.width == 3:
            value = value + [undefined_lane(target.scalar, "the padding lane of a 3-vector")]
        return value
