"""What the targets of a campaign can take (:func:`capabilities`), which bounds what the
strategies of its areas (fuzz.strategies.areas) draw."""

from __future__ import annotations

from fuzz.drivers import Target
from fuzz.drivers.capabilities import has
from fuzz.strategies import Caps
from lang.flow_launch import CL2, NON_UNIFORM
from lang.images import DIMS, modelled
from lang.maths import CR_DIVIDE_SQRT
from lang.ops import ATOMIC_FEATURES, VERSION_KEYS
from lang.shapes import NEEDS

ATOMIC_CAPABILITIES = ATOMIC_FEATURES


def capabilities(targets: list[Target]) -> Caps:
    """What any of the targets can take; each program then runs where it is supported."""
    fps = [t.fingerprint for t in targets]
    return Caps(
        fp64=any(fp.get("fp64") for fp in fps),
        fp16=any(fp.get("fp16") for fp in fps),
        int64=all(fp.get("int64", True) for fp in fps),
        atomics=frozenset(k for k in ATOMIC_CAPABILITIES if any(fp.get(k) for fp in fps)),
        images=tuple(sorted({f for f in (_formats(fp) for fp in fps if fp.get("image_support")) if f}, key=sorted)),
        cr_divide_sqrt=any(has(fp, CR_DIVIDE_SQRT) for fp in fps),
        versions=frozenset(k for k in VERSION_KEYS if any(fp.get(k) for fp in fps)),
        features=frozenset(k for k in NEEDS if any(fp.get(k) for fp in fps)),
        launches=frozenset(k for k in (CL2, NON_UNIFORM) if any(fp.get(CL2) and fp.get(k) for fp in fps)),
    )


def _formats(fp: dict) -> frozenset[tuple[str, str]]:
    """The (image kind, format) pairs a device reports that clfuzz models (lang.images)."""
    return frozenset((dim, key) for dim, keys in fp.get("image_formats", {}).items() if dim in DIMS
                     for key in keys if "/" in key and modelled(*key.split("/")))
