"""Timeouts are not violations (triage.slow): a run cut at the --timeout ceiling is a slow finding of
severity performance, after every correctness severity; triage re-runs it once at ten times the
ceiling where the deadline leaves that long, and only a run that does not finish then is a hang,
a violation. A worker stands in for the driver: it answers within the limit it is given, or not."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import numpy as np
from click.testing import CliRunner

from app.cli import cli
from app.display import triage_line
from campaign.execute import Part, conclude
from campaign.expectations import Expectations
from campaign.pipeline import Lane, LaneClosed
from campaign.progress import TargetStats
from campaign.record import record_run
from corpus.bucket_queries import triage_candidates, waiting_for_triage
from corpus.store import Corpus
from fuzz.drivers import Result, Target, WorkerStartError
from fuzz.drivers.capabilities import ftz_of
from fuzz.drivers.protocol import no_result, time_given
from fuzz.judge import failure_row
from lang.ir import Buffer, Fill, Load, Op, Program, Store
from lang.layout import layout
from lang.types import Type
from oracles import SEVERITIES, at_least
from triage.beside import Beside
from triage.buglist import bucket_severity, bug_list
from triage.report import case_of, readme
from triage.slow import FACTOR, decide

INT = Type("int")
FP = {"platform_name": "Portable Computing Language", "device_name": "cpu", "driver_version": "3.1"}
POCL = Target("pocl", FP, "fp-pocl", "", 0, 0)
CEILING = 60.0


def _program() -> Program:
    return Program((Buffer("in0", INT, "in", Fill(3, (1, 2), 3)), Buffer("out0", INT, "out")),
                   (Store("out0", Op("clz", (Load("in0", INT),), INT)),), 4)


class SlowWorker:
    """A driver that needs ``needs_s`` seconds for the program: a run given less is cut (the
    worker pool's timeout Result); one given enough finishes, its lane 0 wrong when ``wrong``."""

    def __init__(self, needs_s: float, wrong: bool = False) -> None:
        self.needs_s, self.wrong, self.limits = needs_s, wrong, []
        self.timeout_s = CEILING  # a campaign lane's worker's

    def run(self, job, timeout_s: float | None = None) -> Result:
        limit = CEILING if timeout_s is None else timeout_s
        self.limits.append(limit)
        if limit < self.needs_s:
            return Result("timeout", log=no_result(limit))
        program = _program()
        exp = Expectations(program).get(ftz_of(POCL))["out0"]
        out = bytearray(layout(program).out_bytes)
        region = layout(program).outputs["out0"]
        bits = exp.allowed[0].copy()
        bits[0] ^= np.array(int(self.wrong), bits.dtype)
        out[region.offset:region.offset + bits.nbytes] = bits.tobytes()
        return Result("ok", {"out": bytes(out)}, "", 0.25, self.needs_s - 0.25)

    def restart(self) -> None:
        pass

    def beside(self, fn):
        """As a campaign lane runs work beside the campaign (campaign.pipeline.Lane.beside): on its worker."""
        return fn(self)


def _timed_out(corpus: Corpus) -> dict:
    """The program cut at the ceiling on PoCL, recorded as a campaign records it; a run of the same
    program on rusticl that finished in 0.75 s beside it. Returns the timeout row."""
    program = _program()
    corpus.add_program(program, "c")
    corpus.add_target(POCL.name, POCL.path, POCL.fingerprint_id, POCL.fingerprint)
    part = Part(program, Expectations(program))
    record_run(corpus, conclude(part, POCL, Result("timeout", log=no_result(CEILING)))[2], "c")
    rusticl = Target("rusticl", {"device_name": "llvmpipe"}, "fp-rusticl", "", 0, 0)
    record_run(corpus, conclude(part, rusticl, SlowWorker(needs_s=0.75).run(None))[2], "c")
    [row] = [r for r in corpus.disagreements() if r["kind"] == "timeout"]
    return row


def _timeout_bucket(corpus: Corpus) -> dict:
    return next(b for b in bug_list(corpus.buckets()) if b["kind"] == "timeout")


def test_a_run_cut_at_the_ceiling_is_slow_with_the_time_it_was_given(memory_corpus):
    row = _timed_out(memory_corpus)
    assert (row["kind"], row["rule"]) == ("timeout", "run.slow") and json.loads(row["slow"]) == {"given_s": 60.0}
    bug = _timeout_bucket(memory_corpus)
    assert (bug["severity"], bug["rule"], bug["hang"]) == ("performance", "run.slow", None)
    assert bug["slow"] == {"given_s": [60.0], "decision": "undecided", "limit_s": [], "seconds": [],
                           "others": [{"target": "rusticl", "path": "opencl-c", "seconds": 0.75}]}
    text = readme(case_of(memory_corpus, bug["id"]))
    assert "Severity: **performance**" in text and "rule id: `run.slow`" in text
    assert "No rule of the specification applies: it sets no time limit." in text
    assert "cut at 60 s; hang undecided" in text and "other drivers on the same program: rusticl 0.75 s" in text


def test_performance_comes_after_every_correctness_severity():
    """The bug list orders by SEVERITIES and `clfuzz ci --severity` compares in its order: a slow
    run is listed after a letter deviation and fails no floor but its own."""
    order = list(SEVERITIES)
    assert order[-1] == "performance" and order.index("performance") > order.index("letter")
    assert [f for f in order if at_least("performance", f)] == ["performance"]
    buckets = [{"id": s, "status": "new", "rows": 1, "paths": [], "signature": sig}
               for s, sig in (("slow", {"kind": "timeout", "driver": "pocl", "failure": "no result after N s"}),
                              ("letter", {"kind": "wrong-result", "driver": "pocl",
                                          "rule": "image.coordinate.denormal"}),
                              ("crash", {"kind": "crash", "driver": "pocl", "failure": "killed by SIGSEGV"}))]
    assert [b["id"] for b in bug_list(buckets)] == ["crash", "letter", "slow"]
    assert [bucket_severity(b) for b in bug_list(buckets)] == ["violation", "letter", "performance"]


def test_no_result_at_ten_times_the_ceiling_is_a_hang(memory_corpus):
    row = _timed_out(memory_corpus)
    worker = SlowWorker(needs_s=1e9)
    verdict = decide(memory_corpus, row, POCL, worker, None, CEILING)
    assert worker.limits == [FACTOR * 60.0] and verdict == {"hang": True, "limit_s": 600.0}
    bug = _timeout_bucket(memory_corpus)
    assert (bug["hang"], bug["severity"], bug["rule"], bug["slow"]["decision"]) == (True, "violation", "valid-program",
                                                                                  "hang")
    assert "a hang: no result at 600 s either" in readme(case_of(memory_corpus, bug["id"]))


def test_a_slow_run_that_finishes_is_judged_like_any_other(memory_corpus):
    """Given 600 s it finishes in 302 s: no hang (the bucket stays slow, performance), and its run
    is recorded and judged: its wrong lane is a disagreement in a bucket of its own."""
    row = _timed_out(memory_corpus)
    verdict = decide(memory_corpus, row, POCL, SlowWorker(needs_s=302.0, wrong=True), None, CEILING)
    assert verdict == {"hang": False, "limit_s": 600.0, "seconds": 302.0, "status": "ok"}
    bug = _timeout_bucket(memory_corpus)
    assert (bug["hang"], bug["severity"], bug["slow"]["seconds"]) == (False, "performance", [302.0])
    wrong = [b for b in memory_corpus.buckets() if b["signature"]["kind"] == "wrong-result"]
    assert [(b["signature"]["operation"], b["rows"]) for b in wrong] == [("clz", 1)]


def test_a_deadline_too_near_leaves_it_undecided(memory_corpus):
    row = _timed_out(memory_corpus)
    worker = SlowWorker(needs_s=1e9)
    assert decide(memory_corpus, row, POCL, worker, FACTOR * CEILING - 1, CEILING) is None
    assert worker.limits == [] and _timeout_bucket(memory_corpus)["hang"] is None


def _beside(corpus: Corpus, worker: SlowWorker, seconds: float, share_s: float = 1e9) -> list[str]:
    """Triage beside the campaign ``c`` takes the timeout bucket on PoCL's lane (``worker``) with
    ``seconds`` left before the deadline and ``share_s`` of PoCL's triage share; returns its events."""
    events: list[str] = []
    beside = Beside(corpus, "c", reduce=False, on_event=lambda what, bucket: events.append(what))
    [candidate] = triage_candidates(corpus, "c", "pocl", 0.0)
    beside._triage(candidate, POCL, worker, seconds, share_s)
    return events


def test_triage_beside_the_campaign_decides_within_the_deadline(memory_corpus):
    """Confirmed at the ceiling (3 re-runs), then once at ten times it: a hang when the deadline
    leaves 600 s; with 599 s left, undecided, and nothing run beyond the confirmation."""
    _timed_out(memory_corpus)
    worker = SlowWorker(needs_s=1e9)
    assert _beside(memory_corpus, worker, 599.0) == ["confirmed", "undecided"]
    assert worker.limits == [CEILING] * 3 and _timeout_bucket(memory_corpus)["hang"] is None


def test_triage_beside_the_campaign_decides_within_its_triage_share(memory_corpus):
    """The deadline leaves an hour, but the target's triage share only 599 s: the re-run at ten
    times the ceiling (600 s) does not start; the bucket stays undecided for `clfuzz reduce`."""
    _timed_out(memory_corpus)
    worker = SlowWorker(needs_s=1e9)
    assert _beside(memory_corpus, worker, 3600.0, share_s=599.0) == ["confirmed", "undecided"]
    assert worker.limits == [CEILING] * 3 and _timeout_bucket(memory_corpus)["hang"] is None


def test_triage_beside_the_campaign_finds_a_hang(memory_corpus):
    _timed_out(memory_corpus)
    worker = SlowWorker(needs_s=1e9)
    assert _beside(memory_corpus, worker, 700.0) == ["confirmed", "hang"]
    assert worker.limits == [CEILING] * 3 + [600.0]
    bug = _timeout_bucket(memory_corpus)
    assert bug["hang"] is True and bug["severity"] == "violation" and bug["slow"]["limit_s"] == [600.0]


def test_the_time_given_is_read_from_the_workers_line():
    assert time_given(no_result(60)) == 60.0 and time_given(no_result(0.5)) == 0.5 and time_given("crash") is None
    program = _program()
    assert failure_row(program, "crash", "killed by SIGSEGV").get("slow") is None
    assert json.loads(failure_row(program, "timeout", no_result(7) + "\nerror: tail")["slow"]) == {"given_s": 7.0}


def test_buckets_json_says_hang(tmp_path):
    db = tmp_path / "c.db"
    corpus = Corpus(db)
    decide(corpus, _timed_out(corpus), POCL, SlowWorker(needs_s=1e9), None, CEILING)
    corpus.close()
    listed = json.loads(CliRunner().invoke(cli, ["buckets", "--corpus", str(db), "--json"]).output)["buckets"]
    [timeout] = [b for b in listed if b["kind"] == "timeout"]
    assert timeout["hang"] is True and timeout["severity"] == "violation"


def test_a_hang_verdict_decided_on_another_machine_follows_the_merge(tmp_path):
    """Two machines hold the same timeout row; one decided it (a hang): the merged corpus has it."""
    from corpus.merge import merge

    here, there = Corpus(tmp_path / "here.db"), Corpus(tmp_path / "there.db")
    _timed_out(here)
    decide(there, _timed_out(there), POCL, SlowWorker(needs_s=1e9), None, CEILING)
    there.close()
    assert _timeout_bucket(here)["hang"] is None
    merge(here, tmp_path / "there.db")
    assert _timeout_bucket(here)["hang"] is True
    here.close()


def test_a_program_that_does_not_reach_the_driver_stays_undecided(memory_corpus):
    """A SPIR-V target with no route (the module never reaches clBuildProgram): no limit of the
    driver's can be tested, nothing runs, the bucket stays undecided."""
    program = _program()
    target = Target("nvidia", {}, "fp-nvidia", "", 0, 0, path="spirv")
    memory_corpus.add_program(program, "c")
    record_run(memory_corpus, conclude(Part(program, Expectations(program)), target,
                                       Result("timeout", log=no_result(CEILING)))[2], "c")
    [row] = memory_corpus.disagreements()
    worker = SlowWorker(needs_s=1.0)
    assert decide(memory_corpus, row, target, worker, None, CEILING) is None and worker.limits == []
    assert _timeout_bucket(memory_corpus)["hang"] is None


class StartingWorker:
    """A driver whose worker, restarted, waits for a device that never opens: a child process in a
    process group of its own (as the pool's workers) until something kills it; killed, the start
    fails as the pool's does (WorkerStartError: died while starting)."""

    timeout_s = CEILING

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.child.pid if self.child else None

    def start(self) -> None:
        pass

    def restart(self) -> None:
        self.child = subprocess.Popen(["sleep", "600"], start_new_session=True)
        self.child.wait()
        raise WorkerStartError("pocl: worker died while starting (killed by SIGKILL)")

    def close(self) -> None:
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait()


def test_a_triage_worker_killed_at_the_deadline_leaves_its_bucket_pending(memory_corpus):
    """Triage restarts PoCL's worker on the campaign's lane to confirm the bucket; the deadline
    closes the lane, which kills the starting worker: the bucket is pending, stopped at the deadline,
    not a clfuzz bug."""
    _timed_out(memory_corpus)
    assert waiting_for_triage(memory_corpus, "c") == 1
    worker = StartingWorker()
    lane = Lane(POCL, worker, None, "c", TargetStats())
    events: list[tuple[str, dict]] = []
    beside = Beside(memory_corpus, "c", on_event=lambda what, bucket: events.append((what, bucket)))
    [candidate] = triage_candidates(memory_corpus, "c", "pocl", 0.0)
    raised: list[BaseException] = []

    def task() -> None:
        try:
            beside._triage(candidate, POCL, lane, 600.0, 1e9)
        except LaneClosed as e:  # the campaign's feeder takes it as the end of the lane
            raised.append(e)

    thread = threading.Thread(target=task)
    thread.start()
    deadline = time.monotonic() + 30
    while worker.child is None and time.monotonic() < deadline:
        time.sleep(0.05)
    lane.close()  # the campaign's deadline
    thread.join(30)
    assert raised and [what for what, _ in events] == ["stopped"]
    line = triage_line(*events[0])
    assert "stopped at the deadline; pending" in line and "clfuzz bug" not in line and "WorkerStartError" not in line
    assert waiting_for_triage(memory_corpus, "c") == 1 and _timeout_bucket(memory_corpus)["confirmation"] == "unconfirmed"


def test_a_worker_that_cannot_start_is_the_drivers_failure(memory_corpus):
    """Not at the deadline, a worker that does not open its device is reported with its error as
    the driver's, the bucket left pending; any other error in triage is a clfuzz bug."""
    _timed_out(memory_corpus)

    class NoDevice(SlowWorker):
        def restart(self) -> None:
            raise WorkerStartError("pocl: worker could not start:\nclGetPlatformIDs: -1001")

    class Buggy(SlowWorker):
        def restart(self) -> None:
            raise ZeroDivisionError("division by zero")

    for worker, whose in ((NoDevice(1e9), "the driver's"), (Buggy(1e9), "a clfuzz bug: please report it")):
        events: list[tuple[str, dict]] = []
        beside = Beside(memory_corpus, "c", on_event=lambda what, bucket: events.append((what, bucket)))
        [candidate] = triage_candidates(memory_corpus, "c", "pocl", 0.0)
        beside._triage(candidate, POCL, worker, 600.0, 1e9)
        [(what, bucket)] = events
        assert what == "failed" and triage_line(what, bucket).endswith(f"({whose})" if "bug" in whose
                                                                         else f"({whose}; the bucket stays pending)")
    assert waiting_for_triage(memory_corpus, "c") == 1
