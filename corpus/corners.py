"""Corner coverage: which corners of the corner table (:mod:`lang.corners`) each target reached,
when, and why it missed the others.

A target reaches a corner when a program it ran to completion (status ``ok``) reaches it
(:func:`lang.corners.reached`: the operation with that shape, or operands of those classes on
some lane of its first work-items); the programs stored with a run are what that target took.
A target's total is the corners it can run: those whose capabilities (fp64, fp16, int64,
OpenCL C 2.0) its fingerprint lists. Only the programs of the areas with corners are read.

A corner was first judged on a target at the earliest ``ok`` run that reached it, in seconds
from the start of that run's campaign (``runs.created`` less ``campaigns.started``: a resumed
campaign counts from its first start; over several campaigns, the earliest in any of them). A
corner missed is missed because a run of that target that would have reached it failed (its
status: ``crash``, ``timeout``, ``build_error`` ...), because only other targets ran a statement
with it, or because no program reached it yet.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from corpus import _sql
from corpus.store import Corpus
from lang.corners import Corner, reached, runnable, table
from lang.corners import images as image_corners
from lang.corners import spirv as spirv_corners
from lang.corners.classes import corner_rank
from lang.ir import Program
from lang.ops import ATOMIC_FEATURES

CAPABILITIES = ("fp64", "fp16", "int64", "cl2.0", *ATOMIC_FEATURES)
"""The fingerprint keys a corner may need (lang.types.needs_of, lang.ops.C_VERSIONS, the atomics'
lang.ops.ATOMIC_FEATURES)."""

SHARES = ("50", "90", "99", "100")
"""The shares of its table (percent) whose time each target's ``seconds_to`` gives ("99": a GPU's
aim, 99% of its table within its first two minutes)."""

ELSEWHERE, UNREACHED = "only other targets ran it", "no program reached it"
"""Why a corner was missed when no run of the target failed on it."""

IGNORED = frozenset({"ok", "split"})
"""Run statuses that say nothing about why a corner was missed (a split part's halves ran after it)."""


def capabilities_of(fingerprint: dict) -> frozenset[str]:
    """The corner capabilities of one target: its fingerprint keys, the image kinds and read
    functions its formats allow (lang.corners.images.capabilities), ``spirv`` on the SPIR-V path."""
    return (frozenset(k for k in CAPABILITIES if fingerprint.get(k)) | image_corners.capabilities(fingerprint)
            | spirv_corners.capabilities(fingerprint))


@dataclass
class Coverage:
    """One target's corners: those it can run, when each reached one was first judged (seconds,
    None without a campaign), and the statuses of its failed runs that would have reached others."""

    can: tuple[Corner, ...]
    first: dict[Corner, float | None] = field(default_factory=dict)
    failed: dict[Corner, str] = field(default_factory=dict)


_OP = re.compile(r'"op":\s*"([^"]+)"')
"""An operation's name in a stored program's JSON (a key of the same name elsewhere only adds names);
lang.corners.table.op_reached gives an operation only corners of its own name."""


def coverage_by_target(corpus: Corpus, campaign: str | None = None) -> dict[str, Coverage]:
    """Per target (sorted): its :class:`Coverage`. A program is read (parsed, its lanes classified:
    lang.corners.reached, some 20 ms) only where one of its operations' corners is still new to the
    target: a week's GPU corpus is mostly windows of parts whose corners were judged long before."""
    where, params = ("where r.campaign = ?", [campaign]) if campaign else ("", [])
    fingerprints = {t["fingerprint_id"]: json.loads(t["fingerprint"])
                    for t in _sql.rows(corpus, "select * from targets")}
    out: dict[str, Coverage] = {}
    for row in _sql.rows(corpus, f"select distinct r.target, r.fingerprint_id from runs r {where}", params):
        out.setdefault(row["target"], Coverage(runnable(capabilities_of(fingerprints.get(row["fingerprint_id"], {})))))
    ok = "and" if campaign else "where"
    areas = " or ".join(f"""p.json like '%"area":"{a}"%'""" for a in sorted({c.area for c in table()}))
    parsed: dict[str, set[Corner]] = {}
    ops: dict[str, frozenset[str]] = {}  # per program: its operations' names
    can = {t: set(cover.can) for t, cover in out.items()}
    left = {t: Counter(c.op for c in can[t]) for t in out}  # per target and operation: corners not yet timed
    for row in _sql.rows(
        corpus, f"""select r.target, r.program_id, r.status, r.created - c.started as seconds, p.json
            from runs r join programs p on p.id = r.program_id left join campaigns c on c.name = r.campaign
            {where} {ok} ({areas}) order by r.created""", params):
        if row["status"] in IGNORED - {"ok"}:
            continue
        target, pid = row["target"], row["program_id"]
        if pid not in parsed:
            if pid not in ops:  # its operations' names, read from the text (no parse, no lanes classified)
                ops[pid] = frozenset(_OP.findall(row["json"]))
            if not any(left[target][op] for op in ops[pid]):
                continue  # nothing it could reach is new to the target: a GPU's windows, mostly
            parsed[pid] = reached(Program.from_json(row["json"]))
        cover = out[target]
        if row["status"] == "ok":
            for c in parsed[pid]:
                if cover.first.get(c) is None:
                    cover.first[c] = row["seconds"]
                    if row["seconds"] is not None and c in can[target]:
                        left[target][c.op] -= 1
        elif row["status"] not in IGNORED:
            for c in parsed[pid]:
                cover.failed.setdefault(c, row["status"])
    for cover in out.values():
        can = set(cover.can)
        cover.first = {c: t for c, t in cover.first.items() if c in can}
    return dict(sorted(out.items()))


def reached_by_target(corpus: Corpus, campaign: str | None = None) -> dict[str, tuple[tuple[Corner, ...], set[Corner]]]:
    """Per target (sorted): the corners it can run and those of them it reached."""
    return {t: (cover.can, set(cover.first)) for t, cover in coverage_by_target(corpus, campaign).items()}


def seconds_to(first: dict[Corner, float | None], total: int) -> dict[str, float | None]:
    """Per share of :data:`SHARES`: the seconds at which ``first`` (when each corner was first
    judged) holds that share of ``total`` corners; None where it never does (or its times are
    unknown)."""
    times = sorted(t for t in first.values() if t is not None)
    out: dict[str, float | None] = {}
    for share in SHARES:
        need = max(1, math.ceil(total * int(share) / 100))
        out[share] = round(max(0.0, times[need - 1]), 1) if total and len(times) >= need else None
    return out


def missed(cover: Coverage, elsewhere: set[Corner]) -> list[tuple[Corner, str]]:
    """The corners a target missed with the reason (module docstring), the prescribed special
    values first (lang.corners.classes.corner_rank), in table order within a rank."""
    order = {c: i for i, c in enumerate(table())}
    gone = [c for c in cover.can if c not in cover.first]
    gone.sort(key=lambda c: (corner_rank(c.key), order[c]))
    return [(c, cover.failed.get(c) or (ELSEWHERE if c in elsewhere else UNREACHED)) for c in gone]


def corners(corpus: Corpus, campaign: str | None = None, missing: bool = False) -> dict[str, dict[str, Any]]:
    """Per target: ``total`` (corners it can run), ``reached``, ``seconds_to`` (:func:`seconds_to`)
    and per operation ``[reached, total]`` (``operations``); with ``missing``, the names of the
    corners not reached (:func:`missed`: the prescribed special values first) and ``why`` each was."""
    covers = coverage_by_target(corpus, campaign)
    everywhere = set().union(*(cover.first for cover in covers.values()))
    out = {}
    for target, cover in covers.items():
        ops: dict[str, list[int]] = {}
        for c in cover.can:
            counts = ops.setdefault(c.op, [0, 0])
            counts[0] += c in cover.first
            counts[1] += 1
        out[target] = {"total": len(cover.can), "reached": len(cover.first), "operations": ops,
                       "seconds_to": seconds_to(cover.first, len(cover.can))}
        if missing:
            gone = missed(cover, everywhere)
            out[target]["missing"] = [c.name for c, _ in gone]
            out[target]["why"] = {c.name: why for c, why in gone}
    return out
