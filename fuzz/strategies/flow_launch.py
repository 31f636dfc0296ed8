"""OpenCL C 2.0 launches of drawn flow programs (lang.flow_launch), from a late random stream.

:func:`cl2_launch` takes a program :mod:`fuzz.strategies.flow` has drawn and, with the stream
it draws last (so that a seed's other programs stay as they were), makes some of them programs
that require ``cl2.0``: some work-item functions become OpenCL C 2.0 ones (a work-group-uniform
one ``get_enqueued_local_size``, which is uniform too; another ``get_global_linear_id`` or
``get_local_linear_id``, which the text then calls as built-ins), and some launches
non-uniform: a partial work-group added to a dimension whose local size exceeds one (then the
program requires ``non_uniform_work_groups`` as well). Every rewrite keeps the program's rules
(lang.flow_rules): a uniform function stays uniform, a local array keeps one element per
work-item of the enqueued work-group.
"""

from __future__ import annotations

import random
from dataclasses import fields, is_dataclass, replace

from lang.flow import ITEMS, UNIFORM_ITEMS, FlowProgram, Item
from lang.flow_launch import CL2, LINEAR, NON_UNIFORM

LAUNCHES = frozenset({CL2, NON_UNIFORM})
"""Every launch requirement a drawn program may have."""
SHARE = 0.25
"""The share of drawn programs that become OpenCL C 2.0 launches."""
NON_UNIFORM_SHARE = 0.6
"""The share of those (with a local size above one) whose launch gets partial work-groups."""
SWAP = 0.35
"""The share of a program's work-item functions that become OpenCL C 2.0 ones."""


def _items(node, swaps: dict[Item, Item]):
    """``node`` with each work-item function replaced as ``swaps`` says (one replacement for
    each function: ``clamp(x, min(a, b), max(a, b))`` keeps its equal operands)."""
    if isinstance(node, Item):
        return swaps.get(node, node)
    if isinstance(node, tuple):
        return tuple(_items(n, swaps) for n in node)
    if is_dataclass(node) and not isinstance(node, type):
        return replace(node, **{f.name: _items(getattr(node, f.name), swaps) for f in fields(node)})
    return node


def _swaps(rnd: random.Random) -> dict[Item, Item]:
    """Which work-item functions become OpenCL C 2.0 ones (the module docstring)."""
    swaps = {}
    for fn in sorted({*UNIFORM_ITEMS, *ITEMS}):
        for dim in range(3):
            if rnd.random() < SWAP:
                uniform = fn in UNIFORM_ITEMS
                swaps[Item(fn, dim)] = Item("enqueued_local_size", dim) if uniform else Item(rnd.choice(LINEAR))
    return swaps


def cl2_launch(p: FlowProgram, rnd: random.Random, launches: frozenset[str]) -> FlowProgram:
    """``p`` as an OpenCL C 2.0 launch (a share :data:`SHARE` of calls where ``launches`` has
    ``cl2.0``; non-uniform only where it has ``non_uniform_work_groups`` too), else ``p``."""
    if CL2 not in launches or rnd.random() >= SHARE:
        return p
    swaps = _swaps(rnd)
    body, functions = _items(p.body, swaps), _items(p.functions, swaps)
    requires = p.requires | {CL2}
    glob = p.global_size
    if NON_UNIFORM in launches and any(n > 1 for n in p.local_size) and rnd.random() < NON_UNIFORM_SHARE:
        glob = tuple(g + rnd.randrange(1, n) if n > 1 and rnd.random() < 0.7 else g
                     for g, n in zip(p.global_size, p.local_size))
        if glob == p.global_size:  # at least one dimension partial
            d = next(d for d, n in enumerate(p.local_size) if n > 1)
            glob = (*glob[:d], glob[d] + rnd.randrange(1, p.local_size[d]), *glob[d + 1:])
        requires |= {NON_UNIFORM}
    return replace(p, body=body, functions=functions, global_size=glob, requires=frozenset(requires))
