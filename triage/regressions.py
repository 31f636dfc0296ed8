"""The regression corpus: reduced cases as small reviewed text files in ``corpus/regressions/``.

``clfuzz export-regressions`` writes one JSON file per reduced program (named by its id): the
program, the oracle's verdict on the lanes that matter (what the specification allows there, for
the denormal mode named in the file), and, per local target, whether that driver is known to be
wrong on it and in which bucket. ``tests/drivers/test_regressions.py`` replays every file: the
oracle's verdict is asserted, and each local driver is run on the program; a driver known to be
wrong is an expected failure (strict), so the suite goes red both when a known bug disappears
and when a new one appears.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from corpus.buckets import bucket_id, signature
from corpus.store import Corpus
from fuzz.drivers import Target, Worker
from fuzz.drivers.capabilities import ftz_of, supports
from lang.declared import check_program
from lang.ir import Program, from_data, to_data
from triage.observe import observe
from triage.report import case_of
from triage.repro_script import checks

FOLDER = Path(__file__).resolve().parent.parent / "corpus" / "regressions"


def verdict(program: Program, ftz: frozenset[str], lanes: list[tuple[str, int]]) -> list[dict]:
    """The oracle's verdict a file records: per lane, the allowed bits, any NaN and intervals."""
    rows = [{"buffer": b, "lane": lane} for b, lane in lanes]
    return [{k: c[k] for k in ("buffer", "lane", "allowed", "any_nan", "ranges")} for c in checks(program, ftz, rows)]


def known_wrong(program: Program, targets: list[Target], workers: dict[str, Worker]) -> dict[str, dict[str, str]]:
    """Run ``program`` on each target that takes it (on ``workers``, one per target name, started
    as needed): the ones that disagree, with the bucket and the title of their first disagreement."""
    out = {}
    for target in targets:
        if not supports(target, program):
            continue
        rows = run_on(program, target, workers) or []
        if rows:
            sig = signature(rows[0])
            out[target.name] = {"bucket": bucket_id(sig), "what": f"{rows[0]['kind']}: {rows[0]['expression']} = "
                                f"{rows[0]['actual_value']}, expected {rows[0]['expected_value']}"}
    return out


def run_on(program: Program, target: Target, workers: dict[str, Worker], timeout_s: float = 60) -> list[dict] | None:
    """Run ``program`` on ``target`` by its worker in ``workers`` (one per target name, started as
    needed) and judge it (triage.observe.observe): the disagreement rows, [] when the driver gives
    the allowed results; None when the program is invalid or the target cannot take all of it."""
    worker = workers.get(target.name) or workers.setdefault(target.name, Worker(target, timeout_s=timeout_s))
    return observe(program, target, worker)


def current_verdict(case: dict[str, Any]) -> list[dict]:
    """The oracle's verdict today on the lanes a regression file (as :func:`load` returns it)
    records: equal to ``case["verdict"]`` unless the oracle changed."""
    lanes = [(c["buffer"], c["lane"]) for c in case["verdict"]]
    return verdict(case["program"], frozenset(case["ftz"]), lanes)


def export(corpus: Corpus, targets: list[Target], folder: Path = FOLDER,
           buckets: list[str] | None = None) -> list[Path]:
    """Write a file for each reduced bucket (or the given ones) not ``ignored``; returns them."""
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    wanted = buckets or [b["id"] for b in corpus.buckets() if b["reduced"] and b["status"] != "ignored"]
    workers: dict[str, Worker] = {}
    try:
        for ref in wanted:
            program, path = _export_one(corpus, ref, targets, folder, workers)
            written[program.id] = path
    finally:
        for w in workers.values():
            w.close()
    return list(written.values())


def _export_one(corpus: Corpus, ref: str, targets: list[Target], folder: Path,
                workers: dict[str, Worker]) -> tuple[Program, Path]:
    case = case_of(corpus, ref)
    program: Program = case["program"]
    ftz = next((ftz_of(t) for t in targets if t.name == case["target"]), frozenset())
    lanes = [(r["buffer"], r["lane"]) for r in case["rows"] if r["lane"] >= 0]
    path = folder / f"{program.id}.json"
    data = json.loads(path.read_text()) if path.exists() else {"found_in": []}
    data.update({
        "title": case["bucket"]["title"],
        "rule": f"{case['rows'][0]['rule_text']} ({case['rows'][0]['section']})",
        "program": to_data(program),
        "ftz": sorted(ftz),
        "verdict": verdict(program, ftz, lanes),
        "known_wrong": known_wrong(program, targets, workers),
        "exported": time.strftime("%Y-%m-%d"),
    })
    if case["bucket"]["id"] not in data["found_in"]:
        data["found_in"].append(case["bucket"]["id"])
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return program, path


def load(path: Path) -> dict[str, Any]:
    """A regression file, its program parsed (lang.ir.from_data validates it, lang.declared.check_program
    checks its operations)."""
    data = json.loads(path.read_text())
    data["program"] = check_program(from_data(data["program"]))
    return data
