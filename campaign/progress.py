"""What a campaign reports: each target's counts, the result of a run, and the snapshots of a
running campaign that the live display shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from campaign.execute import Outcome
from campaign.scheduler import Budget


@dataclass
class TargetStats:
    programs: int = 0
    runs: int = 0
    checks: int = 0
    judged: int = 0
    mismatches: int = 0
    driver_s: float = 0.0
    wall_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    kinds: set = field(default_factory=set)

    @property
    def checks_per_s(self) -> float:
        return self.judged / self.wall_s if self.wall_s else 0.0

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
