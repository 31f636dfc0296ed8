"""What a campaign reports: each target's counts, the result of a run, and the snapshots of a
running campaign that the live display shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from campaign.execute import Outcome
from campaign.scheduler import Budget


@dataclass
class TargetStats:
    """One target's counts in a campaign and where its time went: ``build_s`` and ``run_s`` of
    whole programs (what the driver reported), ``harness_s`` around them (moving buffers, starting
    workers), ``timeouts_s`` lost to runs that timed out, ``isolating_s`` spent re-running halves
    to isolate a failure, ``triage_s`` confirming and reducing buckets beside the campaign; the
    rest of ``wall_s`` the target was idle (:attr:`idle_s`)."""

    programs: int = 0
    runs: int = 0
    checks: int = 0
    judged: int = 0
    mismatches: int = 0
    driver_s: float = 0.0
    wall_s: float = 0.0
    build_s: float = 0.0
    run_s: float = 0.0
    harness_s: float = 0.0
    timeouts_s: float = 0.0
    isolating_s: float = 0.0
    triage_s: float = 0.0
    skipped: int = 0  # programs of its backlog it never ran (campaign.feed.BACKLOG)
    statuses: dict[str, int] = field(default_factory=dict)
    kinds: set = field(default_factory=set)

    @property
    def checks_per_s(self) -> float:
        return self.judged / self.wall_s if self.wall_s else 0.0

    @property
    def busy_s(self) -> float:
        """Seconds the target's worker was running something for the campaign or its triage."""
        return self.build_s + self.run_s + self.harness_s + self.timeouts_s + self.isolating_s + self.triage_s

    @property
    def idle_s(self) -> float:
        return max(0.0, self.wall_s - self.busy_s)

    def spent(self, wall_s: float, build_s: float, run_s: float, how: str) -> None:
        """One worker call of ``wall_s`` seconds: a whole run (``how`` "run", of which the driver
        reported ``build_s`` and ``run_s``), ``timeouts``, an ``isolating`` run or ``triage``."""
        if how == "run":
            self.build_s += build_s
            self.run_s += run_s
            self.harness_s += max(0.0, wall_s - build_s - run_s)
        else:
            setattr(self, f"{how}_s", getattr(self, f"{how}_s") + wall_s)

    def add(self, outcome: Outcome, whole: bool = True) -> None:
        """Count one run; its status only if it ran a whole part (not a half made to isolate)."""
        self.runs += outcome.runs
        self.checks += outcome.verdict.checks
        self.judged += outcome.verdict.judged
        self.mismatches += outcome.verdict.mismatches
        self.driver_s += outcome.driver_s
        if whole:
            self.statuses[outcome.status] = self.statuses.get(outcome.status, 0) + 1
        for r in outcome.verdict.rows + outcome.failures:
            self.kinds.add((r["kind"], r["operation"], r["src_type"], r["dst_type"]))


@dataclass
class CampaignResult:
    name: str
    seed: int
    programs: int
    wall_s: float
    targets: dict[str, TargetStats]
    interrupted: bool = False
    unrun: int = 0  # programs drawn that no target took (a defect of the scheduling)
    pending: int = 0  # programs left queued or running at the stop: a resumed run runs them first
    notices: list[str] = field(default_factory=list)  # one line each: areas dropped, ...


@dataclass
class AreaView:
    """One area as the live display shows it."""

    programs: int
    share: float
    find_rate: float
    seconds: float
    cells: int
    budget: Budget


@dataclass
class Progress:
    """A snapshot of a running campaign for the live display (app.cli)."""

    programs: int
    elapsed: float
    targets: dict[str, TargetStats]
    areas: dict[str, AreaView]
    new_buckets: list[dict]  # buckets first seen in this run, newest first (id, title)
    bucket_count: int
    notices: list[str] = field(default_factory=list)
