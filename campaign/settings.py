"""A campaign's settings (seed, areas, policy, budgets): what defines its programs, stored in the
corpus's ``campaigns`` row so that running the campaign again resumes it, and the checks that
refuse settings a campaign cannot run with.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from campaign.scheduler import Budget
from corpus.store import Corpus
from fuzz.strategies import AREAS, DEFAULT_AREAS
from lang.policy import Policy


class CampaignError(ValueError):
    """Bad campaign settings (unknown area, no targets): one line saying what to do."""


@dataclass(frozen=True)
class Settings:
    """What defines a campaign's programs; stored with it, so that running it again resumes it."""

    seed: int = 0
    areas: tuple[str, ...] = DEFAULT_AREAS
    policy: Policy = Policy()
    budgets: dict[str, Budget] = field(default_factory=dict)

    def to_row(self) -> dict:
        return {"seed": self.seed, "areas": list(self.areas), "policy": asdict(self.policy),
                "budgets": {a: asdict(b) for a, b in sorted(self.budgets.items())}}

    @classmethod
    def from_row(cls, seed: int, row: dict) -> "Settings":
        return cls(seed, tuple(row.get("areas", DEFAULT_AREAS)), Policy.from_json(json.dumps(row.get("policy", {}))),
                   {a: Budget(**b) for a, b in row.get("budgets", {}).items()})


def check_areas(areas: tuple[str, ...]) -> None:
    """A CampaignError naming the first unknown area, if any."""
    unknown = [a for a in areas if a not in AREAS]
    if unknown:
        raise CampaignError(f"unknown area {unknown[0]!r}; available areas: {', '.join(AREAS)}")


def check_resumable(corpus: Corpus, stored: dict, settings: Settings) -> None:
    """A CampaignError unless the stored campaign row ``stored`` has ``settings`` (resuming
    never mixes settings)."""
    if Settings.from_row(stored["seed"], stored["settings"]).to_row() != settings.to_row():
        raise CampaignError(f"campaign {stored['name']!r} is in {corpus.path} with other settings (seed "
                            f"{stored['seed']}, areas {','.join(stored['settings'].get('areas', []))}); run it "
                            "again without --seed/--areas/--statements/--global-size/--budget to resume it, "
                            "or pick another --name")


def stored_settings(corpus: Corpus, name: str) -> Settings | None:
    """The settings of the campaign ``name`` if the corpus holds it (to resume it), else None."""
    row = corpus.campaign(name)
    return Settings.from_row(row["seed"], row["settings"]) if row else None
