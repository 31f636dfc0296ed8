"""What a program or an expression asks of a device and of a path, read from the operations'
declarations (:data:`lang.ops.OPS`): the capabilities its operations' OpenCL C versions need
(:func:`requirements`), its constructs (:func:`constructs`: what a route's ``unsupported`` set is
matched against) and the front ends that can express it (:func:`paths_of`); and the cell one use
of an operation counts in (:func:`coverage_key`).
"""

from __future__ import annotations

from lang.ir import Expr, Op, Program, walk
from lang.ops import BOTH_PATHS, OPS, spelling


def requirements(node: Program | Expr) -> frozenset[str]:
    """The device capabilities the operations of a program or expression need by their OpenCL C
    version (:attr:`lang.ops.OpSpec.requires`)."""
    roots = [s.value for s in node.body] if isinstance(node, Program) else [node]
    return frozenset().union(*(OPS[n.op].requires for r in roots for n in walk(r) if isinstance(n, Op)))


def constructs(node: Program | Expr) -> frozenset[str]:
    """What a program (its requirements and every statement) or one expression asks of a path:
    the operations it uses, their spellings (``read_imageui``) and their variants
    (``rem:OpFMod``); a route's ``unsupported`` set is matched against these."""
    if isinstance(node, Program):
        return frozenset(node.requires).union(
            *(constructs(s.value) for s in node.body))
    out = set()
    for sub in walk(node):
        if isinstance(sub, Op):
            out.add(sub.op)
            out.add(spelling(sub.op, sub.type, dict(sub.attrs)))  # read_imageui, OpSMod, ...
            variant = OPS[sub.op].variant
            if variant is not None:
                out.add(f"{sub.op}:{variant(sub)}")
    return frozenset(out)


def paths_of(node: Program | Expr) -> frozenset[str]:
    """The front ends that can express every operation of a program or expression."""
    out = BOTH_PATHS
    for name in constructs(node) & OPS.keys():
        out = out & OPS[name].paths
    return out


def coverage_key(op: Op) -> tuple[str, str, int]:
    """The construct x type x width cell one use of an operation counts in (``clfuzz stats``):
    its name (with the variant, if any), and the type of its result, or of its first operand
    for predicates whose result type is fixed."""
    spec = OPS[op.op]
    name = op.op if spec.variant is None else f"{op.op}:{spec.variant(op)}"
    t = op.args[0].type if spec.by_operand else op.type
    return name, t.scalar, t.width
