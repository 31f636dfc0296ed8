"""What a running campaign shows: the live terminal display (rich) and the log line without one.

Three parts: per target, its throughput (judged lanes per second of wall time, programs,
mismatching lanes, failures); per area, the scheduler's view (programs, share of the draws, find
rate, driver seconds against the area's budget, coverage cells reached); and the buckets this run
opened, newest first.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table

from campaign.pool import KINDS
from campaign.progress import PoolStats, Progress, TargetStats


def targets_table(programs: int, stats: dict, elapsed: float, minutes: float) -> Table:
    """Per target: programs, judged lanes, checks per second, mismatches, failures."""
    t = Table(title=f"clfuzz: {programs} programs, {elapsed:.0f}/{minutes * 60:.0f} s")
    for col in ("target", "programs", "judged lanes", "checks/s", "mismatching lanes", "kinds", "crash/timeout/build"):
        t.add_column(col, justify="right" if col != "target" else "left")
    for name, s in stats.items():
        failures = "/".join(str(s.statuses.get(k, 0)) for k in ("crash", "timeout", "build_error"))
        t.add_row(name, str(s.programs), f"{s.judged:,}", f"{s.checks_per_s:,.0f}", f"{s.mismatches:,}",
                  str(len(s.kinds)), failures)
    return t


def time_table(stats: dict) -> Table:
    """Per target, its timeline (campaign.progress.TargetStats): the driver's builds and runs, the
    wait for the harness, timeouts, isolating failures, triage and idle add up to its wall time
    (of all its driver workers together where it has several: the row says how many); busy is the
    share of it its workers ran something (not waiting for the harness, not idle). Below it, for a
    target of several workers, the campaign's wall time of the workers as one target
    (campaign.progress.Occupancy): a call in progress, else waiting for the harness, else idle."""
    t = Table(title="where the time went (s): wall = build + run + harness + timeouts + isolating + triage + idle")
    columns = TargetStats.TIMELINE
    for col in ("target", "wall", *(c[:-2] for c in columns), "busy", "skipped"):
        t.add_column(col, justify="right" if col != "target" else "left")
    for name, s in stats.items():
        t.add_row(name if s.workers == 1 else f"{name} ({s.workers} workers)", f"{s.worker_s:.0f}",
                  *(f"{getattr(s, c):.1f}" for c in columns),
                  f"{s.busy_s / s.worker_s:.0%}" if s.worker_s else "-", str(s.skipped))
    t.caption = "\n".join(together_line(name, s) for name, s in stats.items() if s.workers > 1 and s.wall_s) or None
    t.caption_justify = "left"
    return t


def together_line(name: str, s: TargetStats) -> str:
    """One line of a target of several workers as one (:func:`time_table`'s caption)."""
    shares = {k: s.together.get(k, 0.0) / s.wall_s for k in ("working", "harness", "idle")}
    return (f"{name}'s {s.workers} workers as one target: a call in progress {shares['working']:.1%} of the "
            f"{s.wall_s:.0f} s, waiting for the harness with none in progress {shares['harness']:.1%}, "
            f"idle {shares['idle']:.1%}")


def pool_table(pool: PoolStats) -> Table:
    """The harness's CPU seconds (campaign.pool): per target, drawing, expectations and judging, in
    the worker processes or (no pool) the campaign's own process; and the campaign process's own."""
    where = f"{pool.jobs} worker processes" if pool.jobs else "no pool: the campaign's process"
    t = Table(title=f"harness CPU (s), {where}; the campaign's process: {pool.process_cpu_s:.1f} s")
    for col in ("target", *KINDS, "tasks", "total"):
        t.add_column(col, justify="right" if col != "target" else "left")
    for owner, cpu in pool.cpu.items():
        t.add_row(owner or "(resumed)", *(f"{cpu[k]:.1f}" for k in KINDS), str(sum(pool.tasks[owner].values())),
                  f"{sum(cpu.values()):.1f}")
    return t


def extensions_table(stats: dict) -> Table | None:
    """Per target and area, its extensions (campaign.widening: more work-items of a part that ran
    on a GPU) and which limit sized them: ``pace`` (the run's share of the build), ``pool`` (the
    harness's worker processes), ``memory`` (the buffers' size), ``measure`` (the first, the part's
    own size); None where no target ran one."""
    rows = [(name, area, n) for name, s in stats.items() for area, n in
            _by_area(s.widened).items()]
    if not rows:
        return None
    limits = ("pace", "pool", "memory", "measure")
    t = Table(title="extensions (campaign.widening): what limited their sizes")
    for col in ("target", "area", "extensions", *limits):
        t.add_column(col, justify="right" if col not in ("target", "area") else "left")
    for name, area, n in rows:
        t.add_row(name, area, str(sum(n.values())), *(str(n.get(limit, 0)) for limit in limits))
    return t


def _by_area(widened: dict) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (area, limit), n in sorted(widened.items()):
        out.setdefault(area, {})[limit] = n
    return out


def areas_table(progress: Progress) -> Table:
    """Per area: what the scheduler gave it and what it covered."""
    t = Table(title="areas (campaign.scheduler: each area's floor, the rest where new bugs turn up)")
    for col in ("area", "programs", "share", "find rate", "driver s", "budget", "cells covered"):
        t.add_column(col, justify="right" if col != "area" else "left")
    for name, a in progress.areas.items():
        budget = " ".join(x for x in (f"{a.budget.seconds:.0f} s" if a.budget.seconds is not None else "",
                                      f"{a.budget.programs} p" if a.budget.programs is not None else "") if x) or "-"
        t.add_row(name, str(a.programs), f"{a.share:.0%}", f"{a.find_rate:.2f}", f"{a.seconds:.1f}", budget,
                  str(a.cells))
    return t


def buckets_table(progress: Progress) -> Table:
    t = Table(title=f"new buckets this run: {progress.bucket_count} (`clfuzz buckets` lists them)")
    t.add_column("bucket")
    t.add_column("title")
    for b in progress.new_buckets:
        t.add_row(b["id"][:12], b["title"])
    return t


def render(progress: Progress, minutes: float) -> Group:
    """The live display."""
    return Group(targets_table(progress.programs, progress.targets, progress.elapsed, minutes),
                 areas_table(progress), buckets_table(progress), *progress.notices)


def line(progress: Progress) -> str:
    """One log line (no terminal)."""
    parts = [f"{n}: {s.judged:,} lanes {s.checks_per_s:,.0f}/s {s.mismatches:,} mismatching"
             for n, s in progress.targets.items()]
    areas = " ".join(f"{n} {a.programs}" for n, a in progress.areas.items())
    return (f"[{progress.elapsed:5.0f}s] {progress.programs} programs ({areas}) | {progress.bucket_count} new buckets | "
            + " | ".join(parts))


def triage_line(what: str, bucket: dict) -> str:
    """The log line of a triage event beside the campaign (triage.beside): what happened to which
    bucket; a failure says whose it is (the driver's worker that did not start, or clfuzz's bug),
    a stop at the deadline that the bucket waits, pending."""
    line = f"triage: {what:9} {bucket['id']}  {bucket['title']}"
    if what == "stopped":
        return line + ": stopped at the deadline; pending (reduced first when the campaign resumes)"
    if what == "failed":
        whose = "a clfuzz bug: please report it" if bucket.get("bug", True) else "the driver's; the bucket stays pending"
        return line + f": {bucket['error']} ({whose})"
    return line
