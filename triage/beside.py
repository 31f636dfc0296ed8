"""Triage beside a running campaign: each target's share of its time confirms and reduces the
buckets its runs opened.

The campaign (campaign.campaign) asks, for a target whose triage time is under its share, for a
task (:meth:`Beside.task`: that target's buckets, else those of its device's other front end);
the task runs on that target's lane, whose worker the campaign's runs
share, so triage takes driver time instead of adding a second process per driver. The bucket it
takes is a ``new`` one (not reported, fixed or ignored), not flaky, not reduced, with rows on that
target: buckets an earlier run of the campaign left pending first (they waited longest: a resumed
campaign reduces them first), then the newest. Every bucket of a target gets a first turn of at
most :data:`FIRST_TURN_S` before any gets a second: a reduction its budget stopped goes on from
what it kept, for at most :data:`REDUCE_S`, once no bucket of its target waits. A bucket whose
rows a triage moved to another bucket (its reduction keyed them on the culprit or the
interaction) and that new rows of later programs filled again is taken again, as a new one. The task

1. confirms a bucket whose confirmation is a reproduction rate (atomics, timeouts: k in n re-runs
   on a fresh worker, the lane's worker restarted, triage.confirm); a timeout (a slow run) is then
   re-run once at ten times its ceiling, where the campaign's deadline and the target's triage
   share both leave that long (triage.slow.decide: a hang, or a run judged like any other;
   otherwise it stays undecided for ``clfuzz reduce``);
2. shows it, where one run can, to be a bug already reduced under another key (triage.join: a
   shaped bucket's straight-line twin, a reduced sibling's case re-run as its variant), else
   reduces it (triage.session.reduce_stored) from the rows the campaign stored; the reduced case
   is re-run on a fresh worker, which confirms the bucket (or, where neither it nor the original
   shows the disagreement there, records it flaky: it is not reduced);
3. tries an interaction it found (a statement wrong beside a call with an out-parameter) on the
   other statements of its program (triage.covictims), re-runs a case reduced to one lane-wise
   built-in on one work-item as scalars (triage.width: a driver wrong only at that vector type),
   and re-runs a case reduced to one statement on one work-item as each sibling bucket's
   (triage.siblings: evidence that they are one bug, and a reduced case for a sibling that had none),
   within the task's time;
4. runs the reduced reproducer on every installed release of the bucket's driver
   (triage.versions: present, absent, cannot-build, ...), when releases are given.

A task stopped by the campaign's deadline (or Ctrl-C) leaves its bucket as it was: pending, first
next time, and says so (event ``stopped``), also where the stop killed its worker while it ran or
started (campaign.pipeline.LaneClosed). A worker that could not start is the driver's failure
(event ``failed``, ``bug`` False); any other error is a bug of clfuzz (``failed``, ``bug`` True).
Both leave the bucket pending too. Buckets no target reached are counted by :func:`pending`.
At the end, :meth:`Beside.leave` records why each bucket still waiting was not reduced
(:func:`pending_reasons` reads it back). A bucket of flow programs is confirmed (one re-run on a
fresh worker) and reduced at the structure level (triage.flow_triage).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator

from campaign.pipeline import LaneClosed
from campaign.progress import CampaignResult
from corpus.bucket_queries import flow_waiting, triage_candidates, waiting_for_triage
from corpus.reads import disagreement
from corpus.store import Corpus
from fuzz.drivers import Target, Worker, WorkerStartError
from lang.flow import FlowProgram
from triage.confirm import reproduction, reruns
from triage.flow_triage import reduce_flow_stored
from triage.reduce import STOPPED, Reduction
from triage.covictims import covictims
from triage.join import at_width, join_known, known_widths
from triage.session import reduce_stored
from triage.siblings import rerun_siblings
from triage.slow import decide, undecided
from triage.width import only_at_width
from triage.versions import check_bucket, ranged_on

RANGE_S = 30.0
"""Seconds a bucket's release-range check needs at least (one run per release, each in a worker of
its own: 3-16 s measured here); with less left before the deadline it waits for `clfuzz versions`."""

FIRST_TURN_S = 15.0
"""Seconds a bucket's first reduction may take: most take a few candidates, about a second on Oclgrind and
rusticl, 4-9 s on PoCL's image reads (a 2-minute campaign on this machine); a longer one waits for its
second turn."""

REDUCE_S = 60.0
"""Seconds a bucket's second turn may take at most (what a reduction keeps is stored, and the second
turn goes on from it)."""


def after_reduction(corpus: Corpus, reduction: Reduction, target: Target, worker: Worker,
                    deadline: float) -> Iterator[tuple[str, str]]:
    """What triage learns once a bucket is reduced (the campaign's, and ``clfuzz reduce``'s): its
    program's other statements wrong beside the same call (triage.covictims), and of a case of one
    statement on one work-item whether it is wrong only at its vector type (triage.width) and which
    sibling buckets it shows (triage.siblings); until ``deadline`` (``time.monotonic()``). Yields
    ("reduced" or "joined", bucket id) for each bucket it reduced or joined to a bug."""
    for other in covictims(corpus, reduction, target, worker, deadline=deadline):
        yield "reduced", other
    if (len(reduction.reduced.body), reduction.reduced.global_size) == (1, 1):  # its siblings' cases too
        only_at_width(corpus, reduction.bucket, reduction.reduced, target, worker)  # wrong only at its type?
        for sibling, reduced in rerun_siblings(corpus, reduction.bucket, reduction.reduced, target, worker,
                                               deadline=deadline):
            yield ("reduced" if reduced else "joined"), sibling


class Beside:
    """Hands out the triage of one campaign's buckets, one bucket at a time per target (module
    docstring). Thread-safe: every target's feeder asks."""

    def __init__(self, corpus: Corpus, campaign: str, reduce: bool = True,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None,
                 releases: list[Target] | None = None, targets: list[Target] | None = None) -> None:
        self.corpus, self.campaign, self.reduce, self.on_event = corpus, campaign, reduce, on_event
        self.targets = targets or []  # the campaign's: a target's lane also triages its device's other front end
        self.releases = releases or []  # the system's targets and the installed releases' (fuzz.drivers.releases)
        self.since = time.time()  # buckets first seen before this: left pending by an earlier run
        self.tried: dict[str, float] = {}  # buckets this run took (done, or not reproduced) -> when
        self.done: dict[str, int] = {}  # buckets each target's triage took
        self.again: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}  # target -> (bucket, the row of
        # its reduced program) for a second turn
        self._lock = threading.Lock()

    def front_ends(self, target: Target) -> list[Target]:
        """The campaign's other targets of ``target``'s device: its other front end (``oclgrind`` and
        ``oclgrind/spirv``, fuzz.drivers.discovery), whose programs its worker runs as well."""
        device = target.name.split("/")[0]
        return [t for t in self.targets if t.name != target.name and t.name.split("/")[0] == device]

    def task(self, target: Target) -> Callable[[Any, float, float], None] | None:
        """The triage of ``target``'s next bucket, or None when it has none waiting: a first turn of
        one of its own buckets, else of one of its device's other front end (:meth:`front_ends`: run
        as that target, on this lane's worker, within this lane's share: a driver whose OpenCL C path
        opens most buckets gets the time its SPIR-V path leaves), else a second turn of a reduction
        its budget stopped. A bucket of a type its target is known to fail at only (triage.width) goes
        first: a join of two runs."""
        with self._lock:
            for owner in (target, *self.front_ends(target)):
                waiting = [b for b in [*triage_candidates(self.corpus, self.campaign, owner.name, self.since),
                                       *flow_waiting(self.corpus, self.campaign, owner.name)]
                           if b["id"] not in self.tried or self._refilled(b)]
                if waiting:  # one that joins a known bug in two runs (triage.join) before the others
                    widths = known_widths(self.corpus, owner)
                    b = next((c for c in waiting if widths and at_width(disagreement(self.corpus, c["example"]), widths)),
                             waiting[0])
                    self.tried[b["id"]] = time.time()
                    self.done[target.name] = self.done.get(target.name, 0) + 1
                    return lambda lane, seconds, share_s: self._triage(b, owner, lane, seconds, share_s)
            if self.again.get(target.name):
                bucket, row = self.again[target.name].pop(0)
                return lambda lane, seconds, share_s: self._triage(bucket, target, lane, seconds, share_s, row)
        return None

    def _refilled(self, b: dict[str, Any]) -> bool:
        """Whether waiting bucket ``b`` was taken by this run and its rows are all newer than that
        (its triage moved the rows it had to another bucket; later programs filled it again)."""
        return b["id"] in self.tried and b["first_seen"] > self.tried[b["id"]]

    def _triage(self, bucket: dict[str, Any], target: Target, lane, seconds: float, share_s: float,
                row: dict[str, Any] | None = None) -> None:
        """Confirm, then reduce, ``bucket`` on ``lane`` (campaign.pipeline.Lane.beside) within ``seconds``
        (a slow run's re-run within ``share_s`` too: the target's triage share left), from ``row``
        (a second turn: the partly reduced program's) or the bucket's first row.
        The campaign's stop ends it (event ``stopped``, then LaneClosed goes on up); a worker that
        cannot start or a bug of triage's own is reported (event ``failed``, with the error and
        whether it is clfuzz's ``bug``) and leaves the bucket pending: an hours-long campaign does
        not end over one bucket."""
        try:
            lane.beside(lambda worker: self._confirm_and_reduce(bucket, target, worker, seconds, share_s, row))
        except LaneClosed:
            self._tell("stopped", bucket)
            raise
        except WorkerStartError as e:  # the driver's: its device did not open
            self._tell("failed", {**bucket, "error": str(e).splitlines()[0], "bug": False})
        except Exception as e:  # noqa: BLE001 - reported with the bucket, the campaign goes on
            self._tell("failed", {**bucket, "error": f"{type(e).__name__}: {e}", "bug": True})

    def _confirm_and_reduce(self, bucket: dict[str, Any], target: Target, worker: Worker, seconds: float,
                            share_s: float, row: dict[str, Any] | None) -> None:
        start = time.monotonic()
        second = row is not None
        row = row or disagreement(self.corpus, bucket["example"])
        confirmed = second or bool(bucket["confirmed"])
        program = self.corpus.program(row["program_id"])
        if isinstance(program, FlowProgram):  # confirmed on a fresh worker, reduced at the structure level
            if not confirmed:
                worker.restart()
                shown = reproduction(program, row, target, worker, 1) > 0
                self._confirmed(row, bucket, shown)
                if not shown:
                    return
            left = seconds - (time.monotonic() - start)
            if self.reduce and left > 1:
                done = reduce_flow_stored(self.corpus, row, target, worker, min(REDUCE_S, left))
                if done is not None:
                    self._tell("reduced", {"id": done[0]})
                    self._range(done[0], target, seconds - (time.monotonic() - start))
            return
        if not confirmed:
            runs = reruns(program, row)
            if runs > 1 or not self.reduce:  # a reproduction rate, or no reduction to confirm it
                worker.restart()
                shown = reproduction(program, row, target, worker, runs)
                if runs > 1:
                    self.corpus.reproduced(bucket["id"], shown, runs)
                self._confirmed(row, bucket, shown > 0)
                if not shown:
                    return
                confirmed = True
        if undecided(row):  # slow: a hang only if it does not finish at ten times the ceiling either
            spent = time.monotonic() - start  # the re-run within the deadline and the triage share
            verdict = decide(self.corpus, row, target, worker, min(seconds, share_s) - spent, worker.timeout_s)
            self._tell("undecided" if verdict is None else "hang" if verdict["hang"] else "finished", bucket)
        left = seconds - (time.monotonic() - start)
        if not self.reduce:
            return
        if left <= 1:  # its confirmation took the task's time: reduced in a second turn
            with self._lock:
                self.again.setdefault(target.name, []).append((bucket, row))
            return
        if not second:  # a known bug shown by one run needs no reduction (triage.join)
            known = join_known(self.corpus, bucket["id"], row, target, worker, deadline=start + seconds,
                               on_moved=lambda other: self._tell("reduced", {"id": other}))
            if known is not None:
                self._tell("joined", {"id": known})
                return
        reduction = reduce_stored(self.corpus, row, target, worker, min(REDUCE_S if second else FIRST_TURN_S, left))
        if reduction is None:  # neither the reduced case nor the program showed it on a fresh worker
            if not confirmed:
                self._confirmed(row, bucket, False)
            return
        if not confirmed:
            self._tell("confirmed", bucket)
        self._tell("reduced", {"id": reduction.bucket})
        for what, other in after_reduction(self.corpus, reduction, target, worker, start + seconds):
            self._tell(what, {"id": other})
        if STOPPED in reduction.why_not_minimal and not second:
            with self._lock:
                self.again.setdefault(target.name, []).append(
                    ({**bucket, "id": reduction.bucket}, {**reduction.rows[0], "bucket": reduction.bucket}))
        # the reduced rows' bucket: a shaped program's rows may have joined the built-in's
        self._range(reduction.bucket, target, seconds - (time.monotonic() - start))

    def _range(self, bucket: str, target: Target, left: float) -> None:
        """The release range of a reduced bucket (triage.versions), when ``left`` seconds allow it
        and its driver has releases here; a variant (PoCL's work-group method) has none of its own."""
        if left > RANGE_S and not target.settings and any(
                t.release and t.lineage == target.lineage for t in self.releases) and ranged_on(
                self.corpus, self.corpus.bucket(bucket), self.releases) is not None:
            check_bucket(self.corpus, bucket, self.releases, timeout_s=min(60.0, left / 2))
            self._tell("ranged", {"id": bucket})

    def _confirmed(self, row: dict[str, Any], bucket: dict[str, Any], shown: bool) -> None:
        self.corpus.confirm(row["program_id"], row["target"], row["bucket"], shown)
        self._tell("confirmed" if shown else "flaky", bucket)

    def _tell(self, what: str, bucket: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(what, {**self.corpus.bucket(bucket["id"]),
                                 **{k: bucket[k] for k in ("error", "bug") if k in bucket}})

    def leave(self, result: CampaignResult, share: float, closing: float = 0.0) -> int:
        """Record why each bucket of the campaign still waiting for triage was not reduced (in the
        campaign's state, corpus.store.Corpus.left_pending), with the numbers of the triage of its
        targets: their share (and the last ``closing`` seconds: campaign.campaign.closing_s) spent
        on other buckets, or the deadline; returns how many wait."""
        reasons: dict[str, str] = {}
        ended = time.time()
        for name, stats in result.targets.items():
            closed = min(closing, stats.wall_s)
            allowed = stats.workers * (share * (stats.wall_s - closed) + closed)  # each worker's share
            others = self.done.get(name, 0)
            last = f", then all of its last {closed:.0f} s" if closed else ""
            each = f"each of its {stats.workers} workers' " if stats.workers > 1 else ""
            spent = (f"the triage share of {name} ({share:.0%} of {each}{stats.wall_s - closed:.0f} s{last}) was spent on "
                     f"{others} other buckets" if stats.triage_s >= allowed - FIRST_TURN_S else
                     f"{name}'s triage took {stats.triage_s:.0f} s of its {allowed:.0f} s share on {others} other "
                     f"buckets")
            for b in [*triage_candidates(self.corpus, self.campaign, name, self.since),
                      *flow_waiting(self.corpus, self.campaign, name)]:
                if self._refilled(b):
                    why = (f"not started again: its triage moved its earlier rows to another bucket, these came "
                           f"{ended - b['first_seen']:.0f} s before the campaign ended; {spent}")
                elif b["id"] in self.tried:
                    why = "its triage started too late: the campaign's deadline stopped it"
                else:
                    why = f"not started: found {ended - b['first_seen']:.0f} s before the campaign ended; {spent}"
                reasons.setdefault(b["id"], why)
        self.corpus.left_pending(self.campaign, reasons)
        return pending(self.corpus, self.campaign)


def pending(corpus: Corpus, campaign: str) -> int:
    """Buckets of ``campaign`` still waiting for triage: new, not flaky, not reduced."""
    return waiting_for_triage(corpus, campaign)


def pending_reasons(corpus: Corpus, campaign: str) -> dict[str, str]:
    """Why each bucket ``campaign`` left waiting for triage was not reduced (:meth:`Beside.leave`),
    by bucket id; empty for a campaign run without triage or before these were recorded."""
    stored = corpus.campaign(campaign)
    return dict(stored["state"].get("triage_left", {})) if stored else {}
