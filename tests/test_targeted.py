"""The feedback search (campaign.targeted): scores reported after a program ran reach target()."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

import campaign.targeted
from campaign.campaign import error_score
from campaign.execute import Outcome
from campaign.targeted import Search
from fuzz.judge import Verdict


@dataclass(frozen=True)
class _Program:
    value: int

    @property
    def id(self) -> str:
        return f"p{self.value}"


def test_observed_scores_reach_target(monkeypatch):
    seen: list[float] = []
    monkeypatch.setattr(campaign.targeted, "target", lambda value, label: seen.append(value))
    search = Search(st.integers(0, 10**6).map(_Program), InMemoryExampleDatabase(), None, "t", examples=20)
    sent = []
    try:
        for i in range(30):
            p = search.next(10)
            sent.append(float(p.value % 97))
            search.observed(p.id, sent[-1])
        search.next(10)  # the last observed score is taken before the next program is drawn
    finally:
        search.close()
    assert seen[: len(sent)] == sent


def test_error_score_is_the_largest_error_in_units_of_its_bound():
    a, b = Outcome("ok"), Outcome("ok")
    a.verdict = Verdict(errors=[{"ulps": 2.0, "limit": 4.0}, {"ulps": 0.4, "limit": 0.5}])
    b.verdict = Verdict(errors=[{"ulps": 900.0, "limit": float("nan")}, {"ulps": 3.0, "limit": 16.0}])
    assert error_score([a, b]) == 0.8  # 0.4 / 0.5: a correctly rounded result off by 0.4 ulp
    assert error_score([]) == 0.0
