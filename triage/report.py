"""A vendor-ready report of one bucket: a folder a driver engineer can act on without clfuzz.

``clfuzz report BUCKET -o DIR`` writes

- ``README.md`` (triage.report_readme): a one-line summary, the driver's fingerprint and the clfuzz
  version, each front end the bug shows on (its route, build options, whether this program was
  seen or checked failing there), the rule quoted from the specification with its section and
  whether it is a requirement (shall/must) or a recommendation (should), the severity the bug list
  gives, expected vs actual for each failing lane on each front end, how the program was reduced
  (where, on which target and front end), how often and since when, where the vendor's bug is
  (``clfuzz mark ID reported --url URL``);
- per front end that fails: ``kernel.cl`` (OpenCL C: a comment stating its build options, then the
  kernel as clfuzz emits it) and ``kernel.spv`` with ``kernel.spvasm`` and what the driver received
  (SPIR-V: fuzz.drivers.routes);
- ``repro.py`` (triage.repro_script): needs only pyopencl and numpy; builds and runs the kernel of
  every front end the report names exactly as clfuzz did and exits 1 while the bug is present on
  any of them, 0 once fixed on all, 2 when it cannot tell;
- ``program.json``: clfuzz's program.

The program is the bucket's reduced program (its latest reduction with rows on the target it ran
on, whichever front end that is), else the program it was seen in, which ``clfuzz report`` first
reduces in memory where the driver is on this machine (:func:`report_bucket`): the report adds no
bucket and no disagreement row to the corpus it reads. Expected values are the oracle's, computed
here from the program alone. A report of several buckets (a bug and its variants) is made of the
same parts: :func:`case_of` per bucket, :func:`front_files` per front end and
triage.report_readme.bucket_section per bucket.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

from campaign.jobs import job_for
from corpus.buckets import LANE_KINDS, WRONG_CODE, driver_family
from corpus.run_facts import TIMEOUT
from corpus.reads import bucket_rows, fingerprint_of, rows_in_bucket, rows_on_target
from corpus.store import Corpus, CorpusError
from fuzz.drivers import Job, Target, Worker, WorkerStartError
from fuzz.drivers.capabilities import ftz_for
from fuzz.drivers.discovery import lineage_of
from fuzz.drivers.routes import PATH_OPENCL_C, RouteFailure, route_of
from fuzz.emit import spirv
from fuzz.emit.opencl_c import emit
from fuzz.emit.validate import disassemble
from lang.constructs import paths_of
from lang.derive import twin
from lang.ir import Program
from triage import slow
from triage.flow_report import NOT_REDUCED, is_flow, write_flow_report
from triage.observe import observe, size
from triage.reduce import Reduction, reduce_program
from triage.repro_script import checks, job_data, repro_source
from triage.report_readme import front_label, readme_text
from triage.route_check import translated_route_verdict

class ReportError(Exception):
    """A report cannot be written where asked; the message is one line saying what to do."""


def case_of(corpus: Corpus, ref: str) -> dict[str, Any]:
    """Everything a report (and a regression file) is made of, from the corpus alone: the bucket,
    the program (its latest reduction whose reduced program has rows on the target the reduction
    ran on, else the program it was seen in), its rows on that target, the target's fingerprint,
    the reduction (``reduction``: where and how, or None) and the bucket's front ends (``fronts``:
    :func:`fronts_of`)."""
    bucket = corpus.bucket(ref)
    found = _stored_reduction(corpus, bucket)
    if found is not None:
        reduction, rows = found
        pid = reduction["reduced_id"]
        info = {"target": reduction["target"], "path": rows[0]["path"], "seconds": reduction["seconds"],
                "candidates": reduction["candidates"], "before": json.loads(reduction["size_before"] or "{}"),
                "after": json.loads(reduction["size_after"] or "{}"), "why": reduction.get("why") or "",
                "stored": True}
    else:
        seen = bucket_rows(corpus, bucket["id"])
        if not seen:
            raise CorpusError(f"bucket {bucket['id']} has no disagreement to report")
        pid, info = seen[0]["program_id"], None
        rows = [r for r in rows_in_bucket(corpus, pid, bucket["id"]) if r["target"] == seen[0]["target"]]
    return _case(corpus, bucket, corpus.program(pid), rows, fingerprint_of(corpus, rows[0]["fingerprint_id"]), info)


def _stored_reduction(corpus: Corpus, bucket: dict) -> tuple[dict, list[dict]] | None:
    """The bucket's latest reduction of its own driver whose reduced program has rows on the target
    the reduction ran on (those of the bucket, if any), with those rows; None if there is none."""
    for reduction in reversed(corpus.reductions(bucket["id"])):
        if driver_family(reduction["target"]) != bucket["signature"].get("driver"):
            continue  # a reduction linked to a bucket of another driver: not this bucket's program
        rows = rows_on_target(corpus, reduction["reduced_id"], reduction["target"])
        mine = [r for r in rows if r["bucket"] == bucket["id"]]
        if rows:
            return reduction, mine or rows
    return None


def _case(corpus: Corpus, bucket: dict, program: Program, rows: list[dict], fingerprint: dict,
          reduction: dict | None) -> dict:
    case = {"bucket": bucket, "program": program, "rows": rows, "fingerprint": fingerprint,
            "fingerprint_id": rows[0]["fingerprint_id"], "target": rows[0]["target"], "path": rows[0]["path"],
            "reduced": reduction is not None, "why": (reduction or {}).get("why", ""), "reduction": reduction}
    case["fronts"] = fronts_of(corpus, case)
    return case


def fronts_of(corpus: Corpus, case: dict) -> list[dict]:
    """The front ends of a case's bucket (its ``paths``), the case's own first: each with ``path``,
    ``target`` (the case's, else the first target of that path the bucket was seen on),
    ``fingerprint`` and ``rows``: the rows of the case's program there that show the bucket's bug
    (:func:`shows`) as the corpus holds them; ``shown`` is "stored" when there are such rows ("run"
    for the case's own front end where its reduction ran for this report), "cannot" where the
    program has an operation that front end cannot express (lang.constructs.paths_of), else None
    (not checked yet: :func:`check_fronts` runs it where the target is on this machine)."""
    bucket, program = case["bucket"], case["program"]
    ran = case["reduction"] is not None and not case["reduction"]["stored"]  # a reduction of this report's
    fronts = [{"path": case["path"], "target": case["target"], "fingerprint": case["fingerprint"],
               "fingerprint_id": case["fingerprint_id"], "rows": case["rows"], "shown": "run" if ran else "stored",
               "note": ""}]
    for path in [p for p in bucket["paths"] if p != case["path"]]:
        seen = [t for t in bucket["targets"] if t["path"] == path]
        rows = [r for t in seen for r in rows_on_target(corpus, program.id, t["target"])
                if shows(r, case["rows"], bucket)]
        first = rows[0] if rows else None
        written = path in paths_of(program)
        fronts.append({"path": path, "target": first["target"] if first else (seen[0]["target"] if seen else ""),
                       "fingerprint": fingerprint_of(corpus, first["fingerprint_id"]) if first else
                       (seen[0]["fingerprint"] if seen else case["fingerprint"]),
                       "fingerprint_id": first["fingerprint_id"] if first else "", "rows": rows,
                       "shown": "stored" if rows else None if written else "cannot",
                       "note": "" if written else "this program has an operation this front end cannot express"})
    return fronts


def shows(row: dict, rows: list[dict], bucket: dict) -> bool:
    """Whether ``row`` (of the case's program on another front end) shows the bug of ``rows``: it is
    in the bucket, or it is the same kind of failure on the same output lane (a failure: the same
    kind)."""
    if row.get("bucket") == bucket["id"]:
        return True
    if row["kind"] != rows[0]["kind"]:
        return False
    return row["kind"] not in LANE_KINDS or any((row["buffer"], row["lane"]) == (r["buffer"], r["lane"]) for r in rows)


def check_fronts(case: dict, targets: list[Target], workers: dict[str, Worker]) -> None:
    """Run the case's program on each front end the corpus holds no rows of it for, where that
    target is on this machine (``targets``), in memory: ``shown`` becomes "run" (it shows the bug:
    its rows kept) or "absent" (it does not), else ``note`` says why it was not checked."""
    local = {t.name: t for t in targets}
    for front in case["fronts"]:
        if front["shown"] is not None:
            continue
        target = local.get(front["target"])
        if case["bucket"]["signature"]["kind"] == TIMEOUT:
            front["note"] = "not checked: a report does not run a program that timed out again"
            continue
        if target is None:
            front["note"] = f"not checked: {front['target'] or 'no target'} is not on the machine that wrote this report"
            continue
        try:
            found = observe(case["program"], target, _worker(workers, target))
        except WorkerStartError as e:
            front["note"] = f"not checked: {target.name}'s worker did not start ({str(e).splitlines()[0] if str(e) else e})"
            continue
        if found is None:
            front["note"] = f"not checked: {target.name} does not take the whole kernel"
            continue
        rows = [r for r in found if shows(r, case["rows"], case["bucket"])]
        front.update(shown="run" if rows else "absent", rows=rows, fingerprint=target.fingerprint,
                     fingerprint_id=target.fingerprint_id)


def _worker(workers: dict[str, Worker], target: Target) -> Worker:
    if target.name not in workers:
        workers[target.name] = Worker(target, timeout_s=120)
    return workers[target.name]


def front_files(folder: Path, program: Program, front: dict, wrong_code: bool) -> tuple[list[str], Job | None]:
    """Write one front end's kernel files into ``folder`` (see the module docstring; a wrong-code
    bucket's straight-line twin beside them); the names written and the job its repro runs (None,
    with ``front["note"]`` saying why, where this machine cannot make what the driver receives)."""
    family, path = lineage_of(front["target"], front["fingerprint"]), front["path"]
    files, job = [], None
    try:
        job = job_for(program, None, path, family, front["fingerprint"])
    except (RouteFailure, OSError) as e:
        front["note"] = f"what the driver receives could not be made here: {str(e).splitlines()[0] if str(e) else e}"
    if path == PATH_OPENCL_C:
        options = job.options if job else ""
        (folder / "kernel.cl").write_text(options_comment(options) + emit(program))
        files.append("kernel.cl")
    else:
        module = spirv.emit(program)
        (folder / "kernel.spv").write_bytes(module)
        (folder / "kernel.spvasm").write_bytes(_disassemble(module))
        files += ["kernel.spv", "kernel.spvasm"]
        route = route_of(family, front["fingerprint"])
        if job is not None and route is not None and route.kind != "il":  # the il route's driver reads kernel.spv
            (folder / route.received).write_bytes(job.program)  # what the driver really received
            files.append(route.received)
    if wrong_code:  # the straight-line twin the driver gets right
        files += _write_twin(folder, program, path)
    return files, job


def shipped(case: dict) -> list[dict]:
    """The front ends a report ships files for: those where its program shows the bug or was not
    checked (not those where it was run and does not show it, nor those it cannot be written for)."""
    return [f for f in case["fronts"] if f["shown"] not in ("absent", "cannot")]


def write_report(corpus: Corpus, ref: str, out_dir: str | Path, targets: list[Target] | None = None,
                 reduction: tuple[Reduction, Target] | None = None) -> Path:
    """Write the report folder of bucket ``ref`` (see the module docstring); returns the folder.
    ``reduction``: a reduction of the bucket run for this report and its target (the program it
    shows instead of the corpus's). With ``targets`` (this machine's), the program is run on each
    front end of the bucket the corpus has no rows of it for (:func:`check_fronts`), and on a
    translated SPIR-V route the report says whether clang's bitcode of the same kernel reproduces
    the bug (triage.route_check)."""
    case = case_of(corpus, ref) if reduction is None else case_of_reduction(corpus, ref, *reduction)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    bucket, program = case["bucket"], case["program"]
    kind = bucket["signature"]["kind"]
    workers: dict[str, Worker] = {}
    try:
        check_fronts(case, targets or [], workers)
        files, data = [], []
        for front in shipped(case):
            written, job = front_files(folder, program, front, kind == WRONG_CODE)
            files += written
            lanes = checks(program, ftz_for(front["fingerprint"]), front["rows"] or case["rows"]) \
                if kind in LANE_KINDS else []
            front["checks"] = len(lanes)
            if front["path"] != PATH_OPENCL_C and kind in LANE_KINDS and front["rows"]:
                front["whose"] = _whose_bug(program, front, targets, workers)
            if job is not None:
                fp = front["fingerprint"]
                data.append({"path": front["path"], "label": front_label(front["path"]),
                             "platform": fp.get("platform_name", "").strip(), "device": fp.get("device_name", "").strip(),
                             "job": job_data(job), "checks": lanes})
    finally:
        for w in workers.values():
            w.close()
    (folder / "repro.py").write_text(repro_source({"title": bucket["title"], "bucket": bucket["id"], "kind": kind,
                                                   "fronts": data, "timeout_s": repro_timeout(bucket)}))
    (folder / "program.json").write_text(json.dumps(json.loads(program.to_json()), indent=1, sort_keys=True))
    (folder / "README.md").write_text(readme_text(case, files))
    return folder


def repro_timeout(bucket: dict) -> float:
    """The seconds ``repro.py`` gives each front end by default: for a timeout bucket the longest
    time its runs were given (its re-run's limit where that decided a hang: triage.slow.summary),
    so that no result within it is the bug present; else 600."""
    s = slow.summary(bucket)
    if s is None or not (s["limit_s"] if s["decision"] == "hang" else s["given_s"]):
        return 600.0
    return float(max(s["limit_s"] if s["decision"] == "hang" else s["given_s"]))


def case_of_reduction(corpus: Corpus, ref: str, reduction: Reduction, target: Target) -> dict[str, Any]:
    """The case of bucket ``ref`` with a reduction run for the report (not stored): its reduced
    program and rows on ``target``; the bucket as the report sees it carries the reduction's size,
    why it is not smaller and what of it the spec leaves undefined (triage.buglist.undefined_of)."""
    bucket = corpus.bucket(ref)
    after = size(reduction.reduced)
    bucket = {**bucket, "reduced": {"statements": after["statements"], "work_items": after["work_items"],
                                    "why": reduction.why_not_minimal, "undefined": reduction.undefined}}
    rows = [{**r, "target": target.name, "path": target.path, "fingerprint_id": target.fingerprint_id,
             "program_id": reduction.reduced.id} for r in reduction.rows]
    info = {"target": target.name, "path": target.path, "seconds": reduction.seconds,
            "candidates": reduction.candidates, "before": size(reduction.original), "after": after,
            "why": reduction.why_not_minimal, "stored": False}
    return _case(corpus, bucket, reduction.reduced, rows, target.fingerprint, info)


def options_comment(options: str) -> str:
    """The comment a report's ``kernel.cl`` begins with: the options it is built with (the report
    writes it; the emitter's kernel follows unchanged)."""
    return (f"/* Written by clfuzz's report: build this kernel with the clBuildProgram options "
            f"\"{options}\"{'' if options else ' (none)'}, as repro.py does. */\n")


def _write_twin(folder: Path, program: Program, path: str) -> list[str]:
    """The wrong-code bucket's second program: the same statements without the shape (lang.derive.twin),
    which the driver computes right (triage.reduce.passes.shapes), as the kernel of the report's path."""
    other = twin(program)
    (folder / "twin.json").write_text(json.dumps(json.loads(other.to_json()), indent=1, sort_keys=True))
    if path == PATH_OPENCL_C:
        (folder / "twin.cl").write_text(emit(other))
        return ["twin.cl", "twin.json"]
    (folder / "twin.spvasm").write_bytes(_disassemble(spirv.emit(other)))
    return ["twin.spvasm", "twin.json"]


def _whose_bug(program: Program, front: dict, targets: list[Target] | None, workers: dict[str, Worker]) -> str:
    """triage.route_check's sentence for the front end's target, if this machine has it."""
    target = next((t for t in targets or [] if t.name == front["target"]), None)
    if target is None:
        return f"not checked: {front['target']} is not on the machine that wrote this report"
    return translated_route_verdict(program, target, front["rows"][0], _worker(workers, target))


def readme(case: dict[str, Any], lanes: list[dict] | None = None) -> str:
    """The ``README.md`` text that :func:`write_report` writes for a case (:func:`case_of`),
    without writing or running anything (the front ends as the corpus holds them); ``lanes``, the
    lanes its ``repro.py`` checks (:func:`checks`, a run of the oracle), counted where given."""
    files = []
    for front in shipped(case):
        front.setdefault("checks", len(lanes or []))
        files += ["kernel.cl"] if front["path"] == PATH_OPENCL_C else ["kernel.spv", "kernel.spvasm"]
    return readme_text(case, files)


def _disassemble(module: bytes) -> bytes:
    try:
        return disassemble(module)
    except (FileNotFoundError, subprocess.CalledProcessError) as e:
        return f"; spirv-dis failed: {e}\n".encode()


def output_folder(out_dir: str | Path, force: bool, keep: list[str | Path] = ()) -> Path:
    """The folder a report goes into, checked before any long work: a new or empty folder, or with
    ``force`` an existing one emptied first (so no file of an earlier report stays); raises
    :class:`ReportError` for a non-empty folder without ``force``, a file, a folder that cannot be
    written, and a folder ``force`` must not empty (the current folder or one above it, the home
    folder, a git checkout, one holding a path of ``keep``: the corpus read)."""
    folder = Path(out_dir)
    if folder.exists() and not folder.is_dir():
        raise ReportError(f"{folder} is a file, not a folder: pass another -o folder")
    if folder.is_dir() and any(folder.iterdir()):
        if not force:
            raise ReportError(f"{folder} is not empty: pass --force to empty it first, or another -o folder")
        here = folder.resolve()
        kept = [Path(k).resolve() for k in keep]
        if here in (Path.cwd().resolve(), *Path.cwd().resolve().parents, Path.home().resolve()) \
                or (here / ".git").exists() or any(here in k.parents for k in kept):
            raise ReportError(f"--force would empty {folder}, which is not a report's own folder: "
                              "pass a folder of its own to -o")
        for entry in folder.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot create {folder}: {e.strerror}; pass another -o folder") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ReportError(f"cannot write into {folder}: pass another -o folder")
    return folder


def report_bucket(corpus: Corpus, ref: str, out_dir: str | Path, targets: list[Target], *, force: bool = False,
                  budget_s: float = 120.0, say: Callable[[str], None] = print) -> Path:
    """What ``clfuzz report`` does: find the bucket, check the output folder (:func:`output_folder`),
    reduce the bucket in memory first where it is not reduced yet (:func:`reduced_first`), write the
    report (:func:`write_report`); returns the folder. The corpus gains no bucket and no
    disagreement row. A flow program's bucket has a report of its own (triage.flow_report)."""
    bucket = corpus.bucket(ref)
    folder = output_folder(out_dir, force, [corpus.path])
    if is_flow(corpus, bucket):  # triage.flow_report: its reduced kernel, or the program as found
        if not corpus.reductions(bucket["id"]):
            say(f"{NOT_REDUCED}; the report shows the program as found")
        return write_flow_report(corpus, bucket, folder)
    reduction = reduced_first(corpus, bucket, targets, budget_s, say)
    return write_report(corpus, bucket["id"], folder, targets, reduction)


def reduced_first(corpus: Corpus, bucket: dict, targets: list[Target], budget_s: float,
                  say: Callable[[str], None]) -> tuple[Reduction, Target] | None:
    """A reduction of ``bucket`` run now, in memory, on its first row's target, where the bucket is
    not reduced yet, not flaky and that target is on this machine; None otherwise, ``say`` telling
    why where it could not be."""
    if bucket["reduced"] is not None or bucket["confirmation"] == "flaky":
        return None
    row = bucket_rows(corpus, bucket["id"])[0]
    target = next((t for t in targets if t.name == row["target"]), None)
    as_found = "the report shows the program as found"
    if target is None:
        say(f"not reduced: {row['target']} is not on this machine (`clfuzz drivers` lists what is); {as_found}")
        return None
    try:
        with Worker(target) as worker:
            found = reduce_program(corpus.program(row["program_id"]), row, target, worker, budget_s)
    except WorkerStartError as e:
        say(f"not reduced: {target.name}'s worker did not start ({str(e).splitlines()[0] if str(e) else e}); {as_found}")
        return None
    if found is None:
        say(f"not reduced: the disagreement did not show again on a fresh run; {as_found}")
        return None
    return found, target
