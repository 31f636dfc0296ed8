"""``clfuzz export --format piglit``: reduced bugs, buckets and regression files as piglit CL program
tests (triage.piglit_text writes one), with ``index.csv``.

A bug is exported as its first reduced bucket (the lead first: triage.bugs), a bucket as its reduced
program with the rows of its OpenCL C path (stored, or run here: triage.report.check_fronts), a
regression file (triage.regressions) once per driver its ``known_wrong`` names on the OpenCL C
path, that driver's wrong values taken from a run here. What the tester cannot show (a SPIR-V-only
bug, image arrays, 1D images, results that depend on the order of atomics, a driver whose value lies
within what the specification allows ...) is listed, one line each, and skipped.

``index.csv`` has one row per test: its file, the bug, bucket or regression id, the driver (clfuzz's
target), the platform name to pass to ``-platform``, and the command that runs it from the folder
(each driver alone through clfuzz's ICD folder for it: Oclgrind has no system ICD).
"""

from __future__ import annotations

import csv
import glob
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from corpus.store import Corpus, CorpusError
from fuzz.drivers import Target, Worker
from fuzz.drivers.capabilities import ftz_for
from fuzz.drivers.icd import env_overrides
from fuzz.drivers.routes import PATH_OPENCL_C
from lang.ir import Program
from triage import regressions
from triage.bugs import PREFIX, find, listed
from triage.piglit_text import piglit_file
from triage.report import case_of, check_fronts

INDEX_COLUMNS = ("file", "id", "driver", "platform", "command")
FLUSHED = frozenset({"half", "float"})
"""Floating types whose denormals the expected values let a device flush (as one without CL_FP_DENORM
in its FP config may, OpenCL C 3.0 §7.2, §7.5.3), whatever the bug's driver does: a test passes on
every device that computes the lanes right (double denormals are required with cl_khr_fp64)."""
DEBIAN_TESTER = "/usr/lib/x86_64-linux-gnu/piglit/bin/cl-program-tester"


class ExportError(Exception):
    """A bug, bucket or file that cannot be exported (one line: what, and what to do)."""


@dataclass
class Case:
    """One test to write: the program, its driver's rows on the OpenCL C path and that driver."""

    id: str
    title: str
    program: Program
    rows: list[dict]
    target: str
    fingerprint: dict = field(repr=False)


@dataclass
class Exported:
    """What an export wrote (``index``: the rows of index.csv) and left out (one line each)."""

    index: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def cl_program_tester() -> str:
    """The path of piglit's ``cl-program-tester`` (Debian's ``piglit`` package puts it outside PATH)."""
    return shutil.which("cl-program-tester") or next(iter(glob.glob("/usr/lib/*/piglit/bin/cl-program-tester")),
                                                      DEBIAN_TESTER)


def command(file: str, platform: str, target: Target | None) -> str:
    """The shell command that runs ``file`` on ``platform`` from the export's folder; with the
    target's own ICD folder (and settings) where it is a driver of this machine."""
    env = {}
    if target is not None and not target.root:
        env["OCL_ICD_VENDORS"] = target.icd_folder
        if target.lineage == "rusticl":
            env["RUSTICL_ENABLE"] = env_overrides(target.icd_folder)["RUSTICL_ENABLE"]
        env.update(dict(target.settings))
    words = [f"{k}={shlex.quote(v)}" for k, v in env.items()] + [cl_program_tester(), file, "-platform", shlex.quote(platform)]
    return " ".join(words)


def _first_reduced(bug) -> str | None:
    """A bug's first reduced bucket (the lead first: triage.bugs), or None."""
    return next((b["id"] for b in bug.buckets if b.get("reduced")), None)


def resolve(corpus: Corpus, ref: str) -> tuple[str, str]:
    """The bucket a bug or bucket reference stands for and the id its test carries: a bug's first
    reduced bucket (the bug's id), or the bucket itself. Raises ExportError where it has no reduced
    program (corpus.store.CorpusError where ``ref`` names nothing)."""
    if ref.startswith(PREFIX):
        bug = find(corpus, ref)
        bucket = _first_reduced(bug)
        if bucket is None:
            raise ExportError(f"bug {bug.id} has no reduced bucket: `clfuzz reduce {bug.id}` first")
        return bucket, bug.id
    bucket = corpus.bucket(ref)
    if not bucket["reduced"]:
        raise ExportError(f"bucket {bucket['id']} has no reduced program: `clfuzz reduce {bucket['id']}` first")
    return bucket["id"], bucket["id"]


def bucket_case(corpus: Corpus, bucket: str, test_id: str, targets: list[Target],
                workers: dict[str, Worker]) -> Case | str:
    """The case of a reduced bucket on its OpenCL C path (its rows stored, or run here when the
    corpus has none), or why it has none (one line)."""
    case = case_of(corpus, bucket)
    front = next((f for f in case["fronts"] if f["path"] == PATH_OPENCL_C), None)
    if front is None or front["shown"] == "cannot":
        return f"{test_id}: SPIR-V only (the tester builds OpenCL C source)"
    check_fronts({**case, "fronts": [front]}, targets, workers)
    if not front["rows"]:
        return f"{test_id}: its OpenCL C path does not show it ({front['note'] or front['shown']})"
    return Case(test_id, case["bucket"]["title"], case["program"], front["rows"], front["target"],
                front["fingerprint"])


def regression_cases(path: Path, targets: list[Target], workers: dict[str, Worker]) -> list[Case | str]:
    """A regression file's cases: one per driver of this machine its ``known_wrong`` names on the
    OpenCL C path, with the rows of a run here (or why not, one line each)."""
    try:
        data = regressions.load(path)
        program, wrong, title = data["program"], data["known_wrong"], data["title"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ExportError(f"{path}: not a regression file ({str(e).splitlines()[0] if str(e) else e})") from None
    local = {t.name: t for t in targets}
    out: list[Case | str] = []
    for name in sorted(n for n in wrong if "/" not in n):
        test_id = f"{program.id}-{name}"
        if name not in local:
            out.append(f"{path.name}: {name} is not a driver of this machine: its wrong values are unknown")
            continue
        rows = regressions.run_on(program, local[name], workers)
        if not rows:
            out.append(f"{path.name}: {name} " + ("computes it right now" if rows == [] else "does not take it"))
            continue
        out.append(Case(test_id, title, program, rows, name, local[name].fingerprint))
    return out


def write(cases: list[Case | str], folder: Path, targets: list[Target]) -> Exported:
    """Write a test per case into ``folder`` and ``index.csv`` beside them; the cases the tester
    cannot show, and the lanes left out of the others, are listed in ``skipped``."""
    folder.mkdir(parents=True, exist_ok=True)
    local = {t.name: t for t in targets}
    done = Exported()
    for case in cases:
        if isinstance(case, str):
            done.skipped.append(case)
            continue
        kind = case.rows[0]["kind"]
        made = piglit_file(case.program, ftz_for(case.fingerprint) | FLUSHED, case.rows, kind,
                         f"clfuzz {case.id}: {case.title}", case.fingerprint)
        if isinstance(made, str):
            done.skipped.append(f"{case.id}: {made}")
            continue
        text, left_out = made
        file = f"{case.id}.cl"
        (folder / file).write_text(text)
        done.skipped += [f"{case.id}: left out {line}" for line in left_out]
        platform = case.fingerprint.get("platform_name", "").strip()
        done.index.append({"file": file, "id": case.id, "driver": case.target, "platform": platform,
                           "command": command(file, platform, local.get(case.target))})
    with open(folder / "index.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, INDEX_COLUMNS)
        writer.writeheader()
        writer.writerows(done.index)
    return done


def export(corpus: Corpus | None, refs: list[str], everything: bool, regression_files: list[Path], folder: Path,
           targets: list[Target]) -> Exported:
    """Export the bugs or buckets ``refs`` of ``corpus`` and the ``regression_files`` into
    ``folder``; with ``everything``, also every bug of the corpus that has a reduced bucket (the
    others listed as skipped). Every reference is resolved (:func:`resolve`: ExportError or
    corpus.store.CorpusError) before anything runs or is written."""
    if refs and corpus is None:
        raise CorpusError("bug and bucket ids need a corpus (--corpus)")
    wanted = [resolve(corpus, ref) for ref in refs]
    cases: list[Case | str] = []
    if everything and corpus is not None:
        for bug in listed(corpus)[0]:
            bucket = _first_reduced(bug)
            if bucket is None:
                cases.append(f"{bug.id}: not reduced yet (`clfuzz reduce {bug.id}`)")
            elif bug.id not in {test_id for _, test_id in wanted}:
                wanted.append((bucket, bug.id))
    workers: dict[str, Worker] = {}
    try:
        cases = [bucket_case(corpus, bucket, test_id, targets, workers) for bucket, test_id in wanted] + cases
        for path in regression_files:
            cases += regression_cases(path, targets, workers)
        return write(cases, folder, targets)
    finally:
        for w in workers.values():
            w.close()
