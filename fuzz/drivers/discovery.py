"""Discover the OpenCL devices of this machine: one probe subprocess per ICD library.

``discover()`` returns one ``Target`` per device; ``select()`` picks targets by name. Results are
cached per process (drivers do not come and go while a campaign runs), never on disk.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from . import _proc
from .fingerprint import base_name, fingerprint_id
from .icd import icd_folders, library_of
from .releases import installed, release_name, spirv_routes
from .rootfs import env_in, python_argv
from .routes import PATH_OPENCL_C, PATH_SPIRV, Route, route_for, route_of, translator_version
from .variants import VARIANTS
from .variants import problem as variant_problem


class UnknownDriver(ValueError):
    """A driver name given by the user matches no discovered target."""


class ProbeWarning(UserWarning):
    """A driver's probe crashed or timed out; its devices are left out."""


class ProbeError(RuntimeError):
    """A probe subprocess crashed, timed out or printed no JSON."""


def run_probe(folder: str | os.PathLike, timeout_s: float = 30, root: str = "") -> dict[str, Any]:
    """Probe one vendors folder in a subprocess (inside a release's ``root`` when given) and
    return its parsed JSON."""
    try:
        rc, out, err = _proc.run(python_argv(root, "fuzz.drivers.probe"), env=env_in(folder, root),
                                 timeout_s=timeout_s)
    except subprocess.TimeoutExpired as e:
        raise ProbeError(f"probe of {folder} timed out after {timeout_s:g} s") from e
    if rc != 0:
        tail = err.decode(errors="replace").strip()[-2000:]
        raise ProbeError(f"probe of {folder} failed ({_proc.describe_exit(rc)}): {tail}")
    try:
        return json.loads(out)
    except ValueError as e:
        raise ProbeError(f"probe of {folder} printed no JSON: {out[:200]!r}") from e


def family_of(name: str) -> str:
    """A target name's driver without device number, variant or path: "pocl" for "pocl-2/spirv"
    and "pocl+wg-loops"."""
    return re.sub(r"-\d+$", "", name.split("/")[0].split("+")[0])


def lineage_of(name: str, fingerprint: dict[str, Any]) -> str:
    """The driver whatever its release, from the platform name a target reports ("pocl" for
    "pocl-7.1/spirv"); the name's family where there is no fingerprint."""
    return base_name(fingerprint.get("platform_name", "")) if fingerprint else family_of(name)


@dataclass(frozen=True)
class Target:
    """One device of one driver, and how to reach it from a worker process."""

    name: str  # "pocl", "rusticl", "oclgrind", "nvidia"; "pocl-1", "pocl-2" when several
    fingerprint: dict[str, Any] = field(hash=False, repr=False)
    fingerprint_id: str
    icd_folder: str
    platform_index: int
    device_index: int
    path: str = PATH_OPENCL_C  # the front end: OpenCL C source, or a SPIR-V module (routes)
    root: str = ""  # another release's root filesystem (releases), "" for the system's driver
    release: str = ""  # that release's suite ("testing"), "" for the system's
    settings: tuple[tuple[str, str], ...] = ()  # a variant's driver environment (fuzz.drivers.variants)

    def env(self) -> dict[str, str]:
        """The environment of a process that sees only this target's driver (under its settings)."""
        return {**env_in(self.icd_folder, self.root), **dict(self.settings)}

    def command(self, module: str) -> list[str]:
        """The command that runs ``python -m module`` beside this target's driver (inside its
        release's root for a release target)."""
        return python_argv(self.root, module)

    @property
    def lineage(self) -> str:
        """The driver whatever its release: "pocl" for "pocl", "pocl-2" and "pocl-7.1"."""
        return lineage_of(self.name, self.fingerprint)

    @property
    def route(self) -> Route | None:
        """How a module reaches the driver on the SPIR-V path (routes.route_of: what the device
        reports), None on the OpenCL C path."""
        return route_of(self.lineage, self.fingerprint) if self.path == PATH_SPIRV else None

    @property
    def family(self) -> str:
        """The driver without device number or path: "pocl" for "pocl-2" and "pocl-2/spirv"."""
        return family_of(self.name)

    @property
    def driver(self) -> str:
        """The device's name without the path: "pocl-2" for "pocl-2/spirv"."""
        return self.name.split("/")[0]


def spirv_target(t: Target) -> Target | None:
    """The SPIR-V path of an OpenCL C target, where its driver has a route (routes.route_for:
    direct where the device reports SPIR-V IL, else its lineage's translated or container route)."""
    route = route_for(t.lineage, t.fingerprint)
    if route is None:
        return None
    fp = {**t.fingerprint, "path": PATH_SPIRV, "route": route.description, "route_kind": route.kind,
          "translator": translator_version(route), "route_chain": route.chain(translator_version(route)),
          "route_unsupported": sorted(route.unsupported)}
    return replace(t, name=f"{t.name}/{PATH_SPIRV}", fingerprint=fp, fingerprint_id=fingerprint_id(fp),
                   path=PATH_SPIRV)


# Release roots and drivers that cannot run here, with the reason (filled by discovery).
UNAVAILABLE: dict[str, str] = {}


def _folders(releases: bool) -> list[tuple[str, str, str]]:
    """(ICD folder, release root, suite) of the system's drivers, or of every runnable release."""
    if not releases:
        return [(str(f), "", "") for f in icd_folders()]
    for name in [n for n in UNAVAILABLE if "+" not in n]:  # the releases' entries (a variant's stay)
        del UNAVAILABLE[name]
    found = []
    for release in installed():
        problem = release.problem
        if problem:
            UNAVAILABLE[release.suite] = problem
            continue
        found += [(folder, str(release.root), release.suite) for folder in release.folders()]
    return found


def _probe_all(timeout_s: float, releases: bool = False) -> list[tuple[str, str, str, int, int, dict[str, Any]]]:
    folders = _folders(releases)

    def one(entry: tuple[str, str, str]):
        try:
            return entry, run_probe(entry[0], timeout_s=timeout_s, root=entry[1]), None
        except ProbeError as e:
            return entry, None, e

    found = []
    with ThreadPoolExecutor(max_workers=max(1, len(folders))) as pool:
        for (folder, root, suite), doc, error in pool.map(one, folders):  # map keeps the order
            where = f"{suite}: " if suite else ""
            if error is not None:
                if suite:
                    UNAVAILABLE[os.path.basename(folder)] = str(error)[-500:]
                warnings.warn(where + str(error), ProbeWarning, stacklevel=4)
                continue
            if not doc["platforms"]:
                library = library_of(folder)
                reason = doc.get("error") or "no platform"
                if suite:
                    UNAVAILABLE[os.path.basename(folder)] = f"{library}: {reason}"
                warnings.warn(f"{where}{library}: {reason}", ProbeWarning, stacklevel=4)
            for platform in doc["platforms"]:
                for di, fp in enumerate(platform["devices"]):
                    found.append((folder, root, suite, platform["index"], di, fp))
    return found


@functools.cache
def _discover(timeout_s: float) -> tuple[Target, ...]:
    found = _probe_all(timeout_s)
    system = found
    bases = [base_name(fp["platform_name"]) for *_, fp in system]
    total = Counter(bases)
    seen: Counter[str] = Counter()
    targets = []
    for base, (folder, _, _, pi, di, fp) in zip(bases, system):
        seen[base] += 1
        name = base if total[base] == 1 else f"{base}-{seen[base]}"
        targets.append(Target(name, fp, fingerprint_id(fp), folder, pi, di))
    spirv = [s for s in map(spirv_target, targets) if s is not None]
    return tuple(targets + spirv)


@functools.cache
def _discover_releases(timeout_s: float) -> tuple[Target, ...]:
    """Targets of the installed releases' drivers (releases), named by version
    (releases.release_name); a device whose fingerprint is already a target's (the same driver in
    testing and unstable) is left out. Releases or drivers that cannot run: ``UNAVAILABLE``."""
    found = _probe_all(timeout_s, releases=True)
    system = _discover(timeout_s)
    taken = {t.name for t in system}
    ids = {t.fingerprint_id for t in system}
    out = []
    for folder, root, suite, pi, di, fp in found:
        fp = {**fp, "release": suite, "root": root, "spirv_routes": spirv_routes(fp)}
        fid = fingerprint_id(fp)
        if fid in ids:
            continue
        ids.add(fid)
        name = release_name(base_name(fp["platform_name"]), fp, suite, taken)
        taken.add(name)
        out.append(Target(name, fp, fid, folder, pi, di, root=root, release=suite))
    return tuple(out + [s for s in map(spirv_target, out) if s is not None])


@functools.cache
def _discover_variants(timeout_s: float) -> tuple[Target, ...]:
    """The variant targets of the system's OpenCL C targets (fuzz.drivers.variants) that their
    driver honours, checked in parallel; the others go to ``UNAVAILABLE`` with the reason."""
    candidates = [(t, suffix, settings) for t in _discover(timeout_s) if t.path == PATH_OPENCL_C
                  for suffix, settings in VARIANTS.get(t.lineage, {}).items()]

    def one(entry):
        t, _, settings = entry
        argv = [*t.command("fuzz.drivers.variants"), str(t.platform_index), str(t.device_index)]
        return variant_problem(argv, t.env(), settings, timeout_s=2 * timeout_s)

    out = []
    with ThreadPoolExecutor(max_workers=max(1, len(candidates))) as pool:
        for (t, suffix, settings), problem in zip(candidates, pool.map(one, candidates)):
            name = f"{t.name}+{suffix}"
            if problem:
                UNAVAILABLE[name] = problem
                continue
            fp = {**t.fingerprint, "settings": dict(settings)}
            out.append(replace(t, name=name, fingerprint=fp, fingerprint_id=fingerprint_id(fp), settings=settings))
    return tuple(out)


def variants(timeout_s: float = 30) -> list[Target]:
    """The variant targets this machine's drivers honour (fuzz.drivers.variants), cached per process."""
    return list(_discover_variants(float(timeout_s)))


def discover(timeout_s: float = 30, releases: bool = False) -> list[Target]:
    """Every device of every ICD library found, each probed in a subprocess (in parallel).

    Libraries without devices (Clover) give nothing; a probe that crashes or times out is
    reported as a ``ProbeWarning`` and left out. Cached per process: ``discover.cache_clear()``.
    With ``releases``, the installed releases' drivers follow (``pocl-7.1``; fuzz.drivers.releases):
    :func:`select` adds them when a name asks for them.
    """
    system = list(_discover(float(timeout_s)))
    return system + list(_discover_releases(float(timeout_s))) if releases else system


def _cache_clear() -> None:
    _discover.cache_clear()
    _discover_releases.cache_clear()
    _discover_variants.cache_clear()


discover.cache_clear = _cache_clear  # type: ignore[attr-defined]


def select(targets: list[Target], names: list[str] | None) -> list[Target]:
    """The targets named (all of them for None or an empty list), in discovery order.

    A name matches a target's name, its driver or family ("pocl" selects "pocl-1", "pocl-2" and
    their SPIR-V paths), its path ("spirv", "opencl-c") or its fingerprint id. A name written
    ``-NAME`` excludes what it matches ("pocl,-pocl/spirv"; "-spirv" alone: every OpenCL C
    path). Raises ``UnknownDriver`` when a name matches nothing.

    Other releases' targets (``pocl-7.1``, fuzz.drivers.releases) are taken only when named: by
    name, driver, fingerprint id or suite (``testing``); "pocl" and the default mean the system's.
    Variant targets (``pocl+wg-loops``, fuzz.drivers.variants) likewise, by name or fingerprint id.
    """
    system = {i for i, t in enumerate(targets) if not t.release and not t.settings}
    if not names:
        return [t for i, t in enumerate(targets) if i in system]
    unanswered = [n for n in names if not any(
        n.lstrip("-") in (t.name, t.driver, t.family, t.path, t.fingerprint_id, t.release) for t in targets)]
    if unanswered:  # a name no system target answers: a variant's or the releases' targets may
        known = {t.name for t in targets}
        more = variants() if any("+" in n for n in unanswered) else []
        more += list(_discover_releases(30.0)) if installed() else []
        targets = list(targets) + [t for t in more if t.name not in known]

    def hits(name: str) -> set[int]:
        found = {i for i, t in enumerate(targets)
                 if name in (t.name, t.driver, t.fingerprint_id)
                 or (name in (t.family, t.path) if not (t.release or t.settings) else name == t.release)}
        if not found and name in UNAVAILABLE:  # a variant or release that was found but cannot run
            raise UnknownDriver(f"driver {name!r} cannot run here: {UNAVAILABLE[name]}")
        if not found:
            known = ", ".join(t.name for t in targets) or "none (no OpenCL device found)"
            raise UnknownDriver(f"unknown driver {name!r}; known drivers: {known}")
        return found

    include = [n for n in names if not n.startswith("-")]
    chosen = set().union(*map(hits, include)) if include else set(system)
    for name in names:
        if name.startswith("-"):
            chosen -= hits(name[1:])
    return [t for i, t in enumerate(targets) if i in chosen]
