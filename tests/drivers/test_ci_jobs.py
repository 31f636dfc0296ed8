"""The CI jobs of docs/ci.md, run as written on the local drivers: the GitLab job's and the GitHub
Actions job's commands (all but the installation, which ``clfuzz`` on ``PATH`` stands for) in a
folder laid out like a driver team's repository (``ci/clfuzz/regressions``,
``ci/clfuzz/expectations``), with the smoke campaign cut to seconds. The shards run side by side,
as the services run them; their artifacts travel as each service passes them on (GitLab: the same
paths in the next job's workspace; GitHub: upload-artifact, then download-artifact into a fresh
job's folder), and the merge's ``junit.xml``, ``results.csv`` and bug list must agree with its
exit status."""

from __future__ import annotations

import csv
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from triage.regressions import FOLDER

from .conftest import skip_without_icd

skip_without_icd()
pytestmark = pytest.mark.drivers

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"
SMOKE_MINUTES = "0.05"
"""The smoke budget the jobs' ``CLFUZZ_MINUTES`` is cut to (three seconds)."""


def jobs() -> tuple[dict, dict]:
    """The GitLab jobs and the GitHub workflow of docs/ci.md (its two YAML blocks)."""
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)]
    gitlab = next(b for b in blocks if "jobs" not in b)
    github = next(b for b in blocks if "jobs" in b)
    return gitlab, github


@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    """A folder with ``clfuzz``: this checkout's command line, as the jobs' installation gives it."""
    folder = tmp_path_factory.mktemp("bin")
    (folder / "clfuzz").write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m app.cli "$@"\n')
    (folder / "clfuzz").chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def repo(tmp_path_factory, shim) -> Path:
    """A team's repository: the regression files, and the expectations a first run wrote
    (docs/ci.md: ``--update-expectations``) for the driver the jobs test."""
    root = tmp_path_factory.mktemp("team")
    shutil.copytree(FOLDER, root / "ci" / "clfuzz" / "regressions")
    driver = jobs()[0]["clfuzz"]["variables"]["CLFUZZ_DRIVERS"]
    done = _bash(root, shim, f"clfuzz ci --drivers {driver} --regressions ci/clfuzz/regressions "
                             "--expectations ci/clfuzz/expectations --update-expectations --flake-reruns 0 --minutes 0", {})
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert list((root / "ci" / "clfuzz" / "expectations").glob(f"{driver}-fails.txt"))
    return root


def _bash(cwd: Path, shim: Path, script: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    args, kw = _command(cwd, shim, script, env)
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def _command(cwd: Path, shim: Path, script: str, env: dict[str, str]) -> tuple[list[str], dict]:
    """``bash -eo pipefail`` running ``script`` in ``cwd`` (as both services run a job's lines),
    with the ``shim`` folder's ``clfuzz`` first on ``PATH``."""
    path = f"{shim}:{os.environ['PATH']}"
    return ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], \
        {"cwd": cwd, "env": {**os.environ, **env, "PATH": path, "COLUMNS": "200"}}


def _side_by_side(runs: list[tuple[Path, Path, str, dict[str, str]]]) -> list[tuple[int, str]]:
    """Run several jobs at once (the shards); their exit statuses and outputs."""
    procs = []
    for cwd, shim, script, env in runs:
        args, kw = _command(cwd, shim, script, env)
        procs.append(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw))
    return [(p.wait(timeout=300), p.stdout.read()) for p in procs]


def _check_merged(folder: Path, code: int, output: str) -> None:
    """The merged results agree with each other and with the exit status; the bug list is there."""
    assert code in (0, 1), output
    root = ET.parse(folder / "junit.xml").getroot()
    with (folder / "results.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert int(root.get("tests")) == len(rows) > 0
    failing = int(root.get("failures")) + int(root.get("errors"))
    assert failing == sum(r["status"] in ("Fail", "Crash", "Timeout", "UnexpectedPass", "Missing") for r in rows)
    assert code == (1 if failing else 0), output
    regressions = [r for r in rows if not r["id"].startswith("ci-") and len(r["id"]) == 16]
    assert {r["id"] for r in regressions} == {p.stem for p in FOLDER.glob("*.json")}  # every file, once per driver
    assert len(regressions) == len({(r["id"], r["driver"]) for r in regressions})
    assert not [r for r in regressions if r["status"] in ("Fail", "Crash", "UnexpectedPass", "Missing")], output
    assert {r["id"] for r in rows if r["id"].startswith("ci-")} == {"ci-0", "ci-1"}  # a seed per shard
    assert (folder / "bugs.txt").read_text().startswith("bug\tseverity\tstatus\tdriver")


def test_the_gitlab_job_runs_as_documented(repo, shim, tmp_path):
    gitlab, _ = jobs()
    job, merge = gitlab["clfuzz"], gitlab["clfuzz-results"]
    shards = int(job["parallel"])
    assert shards >= 2 and int(str(job["timeout"]).rstrip("m")) <= 10 and int(str(merge["timeout"]).rstrip("m")) <= 10
    assert job["artifacts"]["when"] == "always" and merge["needs"] == ["clfuzz"] and merge["when"] == "always"
    work = tmp_path / "workspace"
    shutil.copytree(repo, work)
    env = {**{k: str(v) for k, v in job["variables"].items()}, "CLFUZZ_MINUTES": SMOKE_MINUTES,
           "CI_NODE_TOTAL": str(shards)}
    done = _side_by_side([(work, shim, "\n".join(job["script"]), {**env, "CI_NODE_INDEX": str(k)})
                          for k in range(1, shards + 1)])
    for code, output in done:
        assert code in (0, 1), output
    for k in range(1, shards + 1):  # what the junit report of each shard names
        assert [p.relative_to(work).as_posix() for p in work.glob(job["artifacts"]["reports"]["junit"])
                if p.parent.name == str(k)] == [f"results/{k}/junit.xml"]
    merged = _bash(work, shim, "\n".join(merge["script"]), {})
    assert merge["artifacts"]["paths"] == ["results/all/"]
    _check_merged(work / "results" / "all", merged.returncode, merged.stdout + merged.stderr)


def _expand(text: str, matrix: dict[str, object]) -> str:
    """GitHub's ``${{ matrix.X }}`` expressions (the only ones the job's commands use)."""
    out = re.sub(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", lambda m: str(matrix[m.group(1)]), text)
    assert "${{" not in out, out
    return out


def test_the_github_actions_job_runs_as_documented(repo, shim, tmp_path):
    _, github = jobs()
    job, merge = github["jobs"]["clfuzz"], github["jobs"]["clfuzz-results"]
    assert job["timeout-minutes"] <= 10 and merge["timeout-minutes"] <= 10 and merge["needs"] == "clfuzz"
    shards = job["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(job["env"]["SHARDS"]) + 1))
    env = {**{k: str(v) for k, v in job["env"].items()}, "CLFUZZ_MINUTES": SMOKE_MINUTES}
    artifacts = tmp_path / "artifacts"
    runs = []
    for shard in shards:
        work = tmp_path / f"shard{shard}"
        shutil.copytree(repo, work)  # actions/checkout
        script = "\n".join(_expand(s["run"], {"shard": shard}) for s in job["steps"]
                           if "run" in s and not s.get("name", "").startswith("Install"))
        runs.append((work, shim, script, env))
    for code, output in _side_by_side(runs):
        assert code in (0, 1), output
    for shard, (work, *_) in zip(shards, runs):  # actions/upload-artifact
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/upload-artifact"):
                shutil.copytree(work / _expand(step["with"]["path"], {"shard": shard}),
                                artifacts / _expand(step["with"]["name"], {"shard": shard}))
    work = tmp_path / "merge"
    work.mkdir()
    code, output = 0, ""
    for step in merge["steps"]:
        uses = step.get("uses", "")
        if uses.startswith("actions/download-artifact"):
            for a in artifacts.iterdir():
                if fnmatch.fnmatch(a.name, step["with"]["pattern"]):
                    shutil.copytree(a, work / step["with"]["path"] / a.name)
        elif "run" in step and not step.get("name", "").startswith("Install"):
            done = _bash(work, shim, step["run"], {})
            code, output = done.returncode, done.stdout + done.stderr
        elif "junit" in uses:
            assert (work / step["with"]["report_paths"]).exists()
    _check_merged(work / "results" / "all", code, output)
