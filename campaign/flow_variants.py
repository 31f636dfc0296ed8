"""Equivalence-modulo-inputs variants of a flow program in a campaign (fuzz.strategies.flow_emi):
which variants each drawn program also runs as, and how a variant's run says what it is.

Every flow program a campaign draws runs as drawn in its two builds (campaign.flow.BUILDS) and as
:data:`PER_PROGRAM` variants, each built with the program's own (default) options: one that
injects code under a condition the inputs fix (``dead`` or ``live``, alternating with the
program's id) and a ``split`` loop where the program has a loop it can split, else the other of
``dead`` and ``live``. The variants are drawn from a generator seeded with the program's id, so
every target runs the same ones. A variant is a program of its own in the corpus, stored before it
runs with its link to the original (corpus.variants: the original's id and the kind) and judged on
every lane by the interpreter's outcome for the variant itself (campaign.flow.FlowExpectations),
as any flow program; its wrong lanes are ``wrong-code`` rows keyed like any flow program's (the
constructs that write the output in the variant, campaign.flow.constructs_of), the variant kind an
attribute (the row's ``deviation_detail``, :func:`detail`) like the build.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict

from fuzz.strategies.flow_emi import CONDITIONED, variant
from lang.flow import FlowProgram

PER_PROGRAM = 2
"""Variants each drawn flow program also runs as (each one more build and run of the program)."""


KEPT = 64
"""Programs whose variants are kept (every target's lane asks for them; a campaign keeps far fewer
programs in flight)."""
_made: OrderedDict[str, list[tuple[str, FlowProgram]]] = OrderedDict()
_lock = threading.Lock()


def variants(p: FlowProgram) -> list[tuple[str, FlowProgram]]:
    """The (kind, variant) pairs ``p`` runs as besides its builds (module docstring); fewer where
    no variant of a kind can be made (a program without integer inputs has only ``split``). Made
    once per program for all targets (about 10 ms a program), the last :data:`KEPT` kept."""
    with _lock:
        if p.id in _made:
            _made.move_to_end(p.id)
            return list(_made[p.id])
    made = _draw(p)
    with _lock:
        _made[p.id] = made
        while len(_made) > KEPT:
            _made.popitem(last=False)
    return list(made)


def _draw(p: FlowProgram) -> list[tuple[str, FlowProgram]]:
    """:func:`variants` made anew."""
    rnd = random.Random(p.id)
    first = CONDITIONED[int(p.id[:8], 16) % len(CONDITIONED)]
    other = next(k for k in CONDITIONED if k != first)
    out = []
    for kinds in ((first,), ("split", other)):
        for kind in kinds:
            made = variant(p, kind, rnd)
            if made is not None and made.id != p.id:
                out.append((kind, made))
                break
    return out[:PER_PROGRAM]


def detail(kind: str, original_id: str) -> str:
    """What a variant's wrong-code row adds to its ``deviation_detail`` (after the build)."""
    return f", EMI variant {kind} of program {original_id[:12]}"
