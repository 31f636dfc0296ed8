"""Other Debian releases' drivers beside the system's: root filesystems under the state folder.

``install(["testing", "unstable"])`` (as root) builds ``<state>/releases/<suite>/`` with
``mmdebstrap`` once: a minimal Debian of that suite with its PoCL, Mesa rusticl, ICD loader,
``python3``, numpy and pyopencl, and writes ``<state>/releases/<suite>.json`` (packages and
versions, the seconds and bytes the install took). A root that exists is reused.

Each driver of a root (its ``/etc/OpenCL/vendors/*.icd``) gets a private ICD folder
``<state>/icd/<suite>-<icd>/`` like the system's; discovery probes it inside the root
(``rootfs``) and names the target by its driver's version: ``pocl-7.1``, ``rusticl-26.1``. The
system's drivers keep their names (``pocl``, ``rusticl``, ``oclgrind``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .icd import IcdLibrary, icd_folder, state_dir
from .rootfs import usable

SUITES = ("trixie", "testing", "unstable")  # what ``clfuzz releases install`` builds by default
PACKAGES = ("pocl-opencl-icd", "mesa-opencl-icd", "ocl-icd-libopencl1", "python3-pyopencl",
            "python3-numpy", "clinfo")
MIRROR = "http://deb.debian.org/debian"
# Shown in the manifest: the drivers' and the Python side's package versions.
REPORTED_PACKAGES = ("pocl-opencl-icd", "mesa-opencl-icd", "ocl-icd-libopencl1", "python3",
                     "python3-pyopencl", "python3-numpy")


@dataclass(frozen=True)
class Release:
    """One installed release root."""

    suite: str  # "testing", "unstable", "trixie", ...
    root: Path
    manifest: dict[str, Any]

    @property
    def problem(self) -> str | None:
        """Why it cannot run here (None when it can, as far as can be told without a probe)."""
        return usable(self.root)

    def libraries(self) -> list[IcdLibrary]:
        """Its OpenCL libraries, each with a short name unique beside the system's."""
        vendors = self.root / "etc/OpenCL/vendors"
        found = []
        for icd in sorted(vendors.glob("*.icd")) if vendors.is_dir() else ():
            library = icd.read_text().strip()
            if library:
                found.append(IcdLibrary(f"{self.suite}-{_slug(icd.stem)}", library, str(icd)))
        return found

    def folders(self) -> list[str]:
        """A private ICD folder per library (written when changed)."""
        return [str(icd_folder(lib)) for lib in self.libraries()]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def releases_dir() -> Path:
    """``$CLFUZZ_RELEASES`` or ``<state>/releases``."""
    env = os.environ.get("CLFUZZ_RELEASES")
    return Path(env).expanduser() if env else state_dir() / "releases"


def installed() -> list[Release]:
    """Every finished release root (a ``<suite>.json`` manifest beside its folder), by suite."""
    base = releases_dir()
    out = []
    for manifest in sorted(base.glob("*.json")) if base.is_dir() else ():
        root = base / manifest.stem
        if root.is_dir():
            try:
                doc = json.loads(manifest.read_text())
            except ValueError:
                doc = {}
            out.append(Release(manifest.stem, root, doc))
    return out


def version_of(fp: dict[str, Any]) -> str:
    """A driver's ``major.minor`` from its fingerprint: "7.1" for PoCL's "7.1+debian", "26.1" for
    rusticl's "26.1.6"; the platform version's first such number otherwise."""
    for text in (fp.get("driver_version", ""), fp.get("platform_version", "")):
        m = re.search(r"(\d+)\.(\d+)", text or "")
        if m:
            return f"{int(m[1])}.{int(m[2])}"
    return "unknown"


def release_name(base: str, fp: dict[str, Any], suite: str, taken: set[str]) -> str:
    """A release target's name: ``<base>-<major.minor>`` (``pocl-7.1``); the suite is added when
    another release already took that name (``pocl-7.1-unstable``), then a count."""
    name = f"{base}-{version_of(fp)}"
    if name in taken:
        name = f"{name}-{suite}"
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}.{n}"
    return candidate


def spirv_routes(fp: dict[str, Any]) -> list[str]:
    """The SPIR-V routes a release reports: direct (``clCreateProgramWithIL``, its IL versions)
    or none (its OpenCL C path only)."""
    il = (fp.get("il_version") or "").split()
    return [f"direct SPIR-V ({', '.join(il)})"] if il else ["none"]


# -- installing -----------------------------------------------------------------------------------


def mmdebstrap_argv(suite: str, target: Path, mirror: str = MIRROR) -> list[str]:
    """The command that builds one release root. ``Check-Valid-Until`` is off: a mirror snapshot's
    Release file may be past its validity date and still be the newest one reachable."""
    return ["mmdebstrap", "--variant=apt", "--aptopt=Acquire::Check-Valid-Until \"false\"",
            f"--include={','.join(PACKAGES)}", suite, str(target), mirror]


def _du(path: Path) -> int:
    out = subprocess.run(["du", "-sb", "-x", str(path)], capture_output=True, text=True, check=False)
    return int(out.stdout.split()[0]) if out.returncode == 0 and out.stdout else 0


def package_versions(root: Path) -> dict[str, str]:
    out = subprocess.run(["dpkg-query", f"--admindir={root}/var/lib/dpkg", "-W", "-f=${Package} ${Version}\\n",
                          *REPORTED_PACKAGES], capture_output=True, text=True, check=False)
    return dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)


def failure_reason(stderr: str) -> str:
    """Why an ``mmdebstrap`` run failed, in one line: APT's download error where there is one
    (``Failed to fetch``, ``Could not resolve``, a package it cannot find), else its first ``E:``
    line, else its last line."""
    lines = [" ".join(ln.split()) for ln in stderr.splitlines() if ln.strip()]
    telling = ("Failed to fetch", "Could not resolve", "Could not connect", "Temporary failure", "Unable to locate",
               "has no installation candidate", "NO_PUBKEY", "is not signed", "No space left")
    for line in lines:
        if any(t in line for t in telling):
            return line
    errors = [ln for ln in lines if ln.startswith("E:")]
    return (errors or lines or ["no message"])[0]


class InstallError(RuntimeError):
    """Some suites could not be built: one line, each failed suite with why."""


def install(suites: tuple[str, ...] | list[str] = SUITES, mirror: str = MIRROR, refresh: bool = False,
            log=print) -> list[Release]:
    """Build (once) the root of each suite; return every installed release. Needs root and
    ``mmdebstrap`` (``apt-get install mmdebstrap``; ``bash setup.sh releases`` does both).

    A root is built in ``<suite>.tmp`` and renamed into place only when complete, then its manifest
    is written (``installed`` counts a root only with its manifest), so a failed or interrupted
    build leaves nothing that counts as installed. Every suite is tried; if any failed,
    :class:`InstallError` names each with why (after the others are built)."""
    if shutil.which("mmdebstrap") is None:
        raise RuntimeError("mmdebstrap is not installed: apt-get install -y mmdebstrap (or bash setup.sh releases)")
    if os.geteuid() != 0:
        raise RuntimeError("building a release root needs root (mmdebstrap in root mode)")
    base = releases_dir()
    base.mkdir(parents=True, exist_ok=True)
    failed = []
    for suite in suites:
        root, manifest = base / suite, base / f"{suite}.json"
        if root.is_dir() and manifest.exists() and not refresh:
            log(f"{suite}: already installed in {root}")
            continue
        manifest.unlink(missing_ok=True)
        if root.exists():
            shutil.rmtree(root)
        log(f"{suite}: building {root} (mmdebstrap) ...")
        t0 = time.monotonic()
        problem = _build(suite, base / f"{suite}.tmp", root, mirror)
        if problem:
            failed.append(f"{suite}: {problem}")
            continue
        seconds = time.monotonic() - t0
        doc = {"suite": suite, "mirror": mirror, "installed": _dt.datetime.now(_dt.UTC).isoformat(),
               "seconds": round(seconds, 1), "bytes": _du(root), "packages": package_versions(root)}
        written = base / f"{suite}.json.tmp"
        written.write_text(json.dumps(doc, indent=2) + "\n")
        os.replace(written, manifest)
        log(f"{suite}: {doc['bytes'] / 1e9:.2f} GB in {seconds:.0f} s: "
            + ", ".join(f"{k} {v}" for k, v in doc["packages"].items()))
    if failed:
        raise InstallError(f"not installed: {'; '.join(failed)} (nothing of it kept; run again to retry)")
    return installed()


def _build(suite: str, tmp: Path, root: Path, mirror: str) -> str | None:
    """Run mmdebstrap into ``tmp`` and rename it to ``root`` when it succeeded; ``tmp`` is removed
    whatever happens (an error, Ctrl-C). Why it failed, or None."""
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        done = subprocess.run(mmdebstrap_argv(suite, tmp, mirror), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"mmdebstrap failed (exit {done.returncode}) from {mirror}: {failure_reason(done.stderr)}"
        if not tmp.is_dir():
            return f"mmdebstrap exited 0 but wrote no root at {tmp}"
        os.replace(tmp, root)
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
