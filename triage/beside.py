"""Triage beside a running campaign: each target's share of its time confirms and reduces the
buckets its runs opened.

The campaign (campaign.campaign) asks, for a target whose triage time is under its share, for a
task (:meth:`Beside.task`); the task runs on that target's lane, whose worker the campaign's runs
share, so triage takes driver time instead of adding a second process per driver. The bucket it
takes is a ``new`` one (not reported, fixed or ignored), not flaky, not reduced, with rows on that
target: buckets an earlier run of the campaign left pending first (they waited longest: a resumed
campaign reduces them first), then the newest. The task

1. confirms the bucket on a fresh worker (the lane's worker restarted: empty kernel caches),
   with a reproduction rate of k in n re-runs for atomics and timeouts (triage.confirm);
   a timeout (a slow run) is then re-run once at ten times its ceiling, where the campaign's
   deadline and the target's triage share both leave that long (triage.slow.decide: a hang, or a
   run judged like any other; otherwise it stays undecided for ``clfuzz reduce``);
2. reduces it (triage.session.reduce_stored) with what is left of its time;
3. runs the reduced reproducer on every installed release of the bucket's driver
   (triage.versions: present, absent, cannot-build, ...), when releases are given.

A task stopped by the campaign's deadline (or Ctrl-C) leaves its bucket as it was: pending, first
next time, and says so (event ``stopped``), also where the stop killed its worker while it ran or
started (campaign.pipeline.LaneClosed). A worker that could not start is the driver's failure
(event ``failed``, ``bug`` False); any other error is a bug of clfuzz (``failed``, ``bug`` True).
Both leave the bucket pending too. Buckets no target reached are counted by :func:`pending`.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from campaign.pipeline import LaneClosed
from corpus.bucket_queries import triage_candidates, waiting_for_triage
from corpus.reads import disagreement
from corpus.store import Corpus
from fuzz.drivers import Target, WorkerStartError
from triage.confirm import reproduction, reruns
from triage.session import reduce_stored
from triage.slow import decide, undecided
from triage.versions import check_bucket

RANGE_S = 30.0
"""Seconds a bucket's release-range check needs at least (one run per release, each in a worker of
its own: 3-16 s measured here); with less left before the deadline it waits for `clfuzz versions`."""

REDUCE_S = 60.0
"""Seconds one reduction may take at most (a bucket that needs longer is reduced in parts: what a
reduction keeps is stored)."""

class Beside:
    """Hands out the triage of one campaign's buckets, one bucket at a time per target (module
    docstring). Thread-safe: every target's feeder asks."""

    def __init__(self, corpus: Corpus, campaign: str, reduce: bool = True,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None,
                 releases: list[Target] | None = None) -> None:
        self.corpus, self.campaign, self.reduce, self.on_event = corpus, campaign, reduce, on_event
        self.releases = releases or []  # the system's targets and the installed releases' (fuzz.drivers.releases)
        self.since = time.time()  # buckets first seen before this: left pending by an earlier run
        self.tried: set[str] = set()  # buckets this run took (done, or not reproduced)
        self._lock = threading.Lock()

    def task(self, target: Target) -> Callable[[Any, float], None] | None:
        """The triage of ``target``'s next bucket, or None when it has none waiting."""
        with self._lock:
            for b in triage_candidates(self.corpus, self.campaign, target.name, self.since):
                if b["id"] in self.tried:
                    continue
                self.tried.add(b["id"])
                return lambda lane, seconds, share_s: self._triage(b, target, lane, seconds, share_s)
        return None

    def _triage(self, bucket: dict[str, Any], target: Target, lane, seconds: float, share_s: float) -> None:
        """Confirm, then reduce, ``bucket`` on ``lane`` (a Worker's run and restart) within ``seconds``
        (a slow run's re-run within ``share_s`` too: the target's triage share left).
        The campaign's stop ends it (event ``stopped``, then LaneClosed goes on up); a worker that
        cannot start or a bug of triage's own is reported (event ``failed``, with the error and
        whether it is clfuzz's ``bug``): an hours-long campaign does not end over one bucket."""
        try:
            self._confirm_and_reduce(bucket, target, lane, seconds, share_s)
        except LaneClosed:
            self._tell("stopped", bucket)
            raise
        except WorkerStartError as e:  # the driver's: its device did not open
            self._tell("failed", {**bucket, "error": str(e).splitlines()[0], "bug": False})
        except Exception as e:  # noqa: BLE001 - reported with the bucket, the campaign goes on
            self._tell("failed", {**bucket, "error": f"{type(e).__name__}: {e}", "bug": True})

    def _confirm_and_reduce(self, bucket: dict[str, Any], target: Target, lane, seconds: float,
                            share_s: float) -> None:
        start = time.monotonic()
        row = disagreement(self.corpus, bucket["example"])
        if not bucket["confirmed"]:
            program = self.corpus.program(row["program_id"])
            runs = reruns(program, row)
            lane.restart()
            shown = reproduction(program, row, target, lane, runs)
            if runs > 1:
                self.corpus.reproduced(bucket["id"], shown, runs)
            self.corpus.confirm(row["program_id"], row["target"], row["bucket"], shown > 0)
            self._tell("confirmed" if shown else "flaky", bucket)
            if not shown:
                return
        if undecided(row):  # slow: a hang only if it does not finish at ten times the ceiling either
            spent = time.monotonic() - start  # the re-run within the deadline and the triage share
            verdict = decide(self.corpus, row, target, lane, min(seconds, share_s) - spent, lane.timeouts.ceiling)
            self._tell("undecided" if verdict is None else "hang" if verdict["hang"] else "finished", bucket)
        if self.reduce:
            left = seconds - (time.monotonic() - start)
            reduction = reduce_stored(self.corpus, row, target, lane, min(REDUCE_S, left)) if left > 1 else None
            if reduction is not None:
                self._tell("reduced", bucket)
                left = seconds - (time.monotonic() - start)
                # a variant (PoCL's work-group method) has no releases of its own to range over
                if left > RANGE_S and not target.settings and any(
                        t.release and t.lineage == target.lineage for t in self.releases):
                    # the reduced rows' bucket: a shaped program's rows may have joined the built-in's
                    check_bucket(self.corpus, reduction.bucket, self.releases, timeout_s=min(60.0, left / 2))
                    self._tell("ranged", {"id": reduction.bucket})

    def _tell(self, what: str, bucket: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(what, {**self.corpus.bucket(bucket["id"]),
                                 **{k: bucket[k] for k in ("error", "bug") if k in bucket}})


def pending(corpus: Corpus, campaign: str) -> int:
    """Buckets of ``campaign`` still waiting for triage: new, not flaky, not reduced."""
    return waiting_for_triage(corpus, campaign)
