"""A stand-in for running programs on a driver, for the triage tests: programs are judged by the
oracle against output bits a Python function gives (triage.observe.observe's interface)."""

from __future__ import annotations

from campaign.expectations import Expectations
from fuzz.judge import judge
from lang.ir import Program, validate
from triage import observe as triage_observe


def expected_by_oracle(program: Program):
    """The program's Expectations and its expectations on a device that flushes nothing, or None
    for an invalid or undefined program (it never reaches the "driver")."""
    try:
        validate(program)
        exp = Expectations(program)
        return exp, exp.get(frozenset())
    except Exception:  # noqa: BLE001 - invalid or undefined
        return None


def simulated(driver):
    """A stand-in for running on a driver (:func:`triage.observe.observe`): the program is judged
    from its own expectations against the output bits ``driver(program, statement, expectation,
    inputs)`` gives for each statement."""

    def observe(program: Program, target, worker, lanes: set | None = None) -> list[dict] | None:
        judged = expected_by_oracle(program)
        if judged is None:
            return None
        exp, expectations = judged
        actual = {s.buffer: driver(program, s, expectations[s.buffer], exp.inputs) for s in program.body}
        actual.update({s.pointee: expectations[s.pointee].allowed[0] for s in program.body if s.pointee})  # right
        rows = judge(program, expectations, actual, exp.inputs).rows
        if lanes is not None:
            lanes.update(triage_observe.disagreeing_lanes(program, expectations, actual))
        for r in rows:
            r["target"] = "sim"
        return rows

    return observe


class SimTarget:
    """The target the simulated driver stands for."""

    name = "sim"
    path = "opencl-c"
    family = lineage = "sim"
    fingerprint: dict = {}
    fingerprint_id = "fp-sim"


class SimWorker:
    """The worker the simulated driver runs in: stateless, so a restart (the reducer's fresh re-run
    of its reduced case) only counts."""

    def __init__(self) -> None:
        self.restarts = 0

    def restart(self) -> None:
        self.restarts += 1


def store_observed(corpus, program: Program, observe) -> list[dict]:
    """Store ``program`` and its simulated run's rows (``observe``: a :func:`simulated` driver) in
    ``corpus`` as a campaign ``c`` would, on target ``sim``; returns the rows."""
    corpus.add_program(program, "c")
    rows = observe(program, SimTarget(), None)
    for r in rows:
        r.update(program_id=program.id, fingerprint_id="fp-sim", path="opencl-c")
    corpus.add_run({"program_id": program.id, "target": "sim", "fingerprint_id": "fp-sim", "path": "opencl-c",
                    "status": "ok", "campaign": "c", "checks": 1, "judged": 1, "mismatches": len(rows),
                    "build_s": 0.0, "run_s": 0.0, "log": ""}, rows)
    return rows
