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
import sys
import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from . import _proc
from .fingerprint import base_name, fingerprint_id
from .icd import env_for, icd_folders, library_of
from .routes import PATH_OPENCL_C, PATH_SPIRV, route_for, translator_version


class UnknownDriver(ValueError):
    """A driver name given by the user matches no discovered target."""


class ProbeWarning(UserWarning):
    """A driver's probe crashed or timed out; its devices are left out."""


class ProbeError(RuntimeError):
    """A probe subprocess crashed, timed out or printed no JSON."""


def run_probe(folder: str | os.PathLike, timeout_s: float = 30) -> dict[str, Any]:
    """Probe one vendors folder in a subprocess and return its parsed JSON."""
    try:
        rc, out, err = _proc.run(
            [sys.executable, "-m", "fuzz.drivers.probe"], env=env_for(folder), timeout_s=timeout_s
        )
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
    """A target name's driver without device number or path: "pocl" for "pocl-2/spirv"."""
    return re.sub(r"-\d+$", "", name.split("/")[0])


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

    def env(self) -> dict[str, str]:
        """The environment of a process that sees only this target's driver."""
        return env_for(self.icd_folder)

    @property
    def family(self) -> str:
        """The driver without device number or path: "pocl" for "pocl-2" and "pocl-2/spirv"."""
        return family_of(self.name)

    @property
    def driver(self) -> str:
        """The device's name without the path: "pocl-2" for "pocl-2/spirv"."""
        return self.name.split("/")[0]


def spirv_target(t: Target) -> Target | None:
    """The SPIR-V path of an OpenCL C target, where its driver has a route (routes.ROUTES)."""
    route = route_for(t.family)
    if route is None:
        return None
    fp = {**t.fingerprint, "path": PATH_SPIRV, "route": route.description,
          "translator": translator_version(route), "route_chain": route.chain(translator_version(route)),
          "route_unsupported": sorted(route.unsupported)}
    return replace(t, name=f"{t.name}/{PATH_SPIRV}", fingerprint=fp, fingerprint_id=fingerprint_id(fp),
                   path=PATH_SPIRV)


def _probe_all(timeout_s: float) -> list[tuple[str, int, int, dict[str, Any]]]:
    folders = [str(f) for f in icd_folders()]

    def one(folder: str):
        try:
            return folder, run_probe(folder, timeout_s=timeout_s), None
        except ProbeError as e:
            return folder, None, e

    found = []
    with ThreadPoolExecutor(max_workers=max(1, len(folders))) as pool:
        for folder, doc, error in pool.map(one, folders):  # map keeps the folder order
            if error is not None:
                warnings.warn(str(error), ProbeWarning, stacklevel=4)
                continue
            if not doc["platforms"]:
                library = library_of(folder)
                reason = doc.get("error") or "no platform"
                warnings.warn(f"{library}: {reason}", ProbeWarning, stacklevel=4)
            for platform in doc["platforms"]:
                for di, fp in enumerate(platform["devices"]):
                    found.append((folder, platform["index"], di, fp))
    return found


@functools.cache
def _discover(timeout_s: float) -> tuple[Target, ...]:
    found = _probe_all(timeout_s)
    bases = [base_name(fp["platform_name"]) for _, _, _, fp in found]
    total = Counter(bases)
    seen: Counter[str] = Counter()
    targets = []
    for base, (folder, pi, di, fp) in zip(bases, found):
        seen[base] += 1
        name = base if total[base] == 1 else f"{base}-{seen[base]}"
        targets.append(Target(name, fp, fingerprint_id(fp), folder, pi, di))
    spirv = [s for s in map(spirv_target, targets) if s is not None]
    return tuple(targets + spirv)


def discover(timeout_s: float = 30) -> list[Target]:
    """Every device of every ICD library found, each probed in a subprocess (in parallel).

    Libraries without devices (Clover) give nothing; a probe that crashes or times out is
    reported as a ``ProbeWarning`` and left out. Cached per process: ``discover.cache_clear()``.
    """
    return list(_discover(float(timeout_s)))


discover.cache_clear = _discover.cache_clear  # type: ignore[attr-defined]


def select(targets: list[Target], names: list[str] | None) -> list[Target]:
    """The targets named (all of them for None or an empty list), in discovery order.

    A name matches a target's name, its driver or family ("pocl" selects "pocl-1", "pocl-2" and
    their SPIR-V paths), its path ("spirv", "opencl-c") or its fingerprint id. A name written
    ``-NAME`` excludes what it matches ("pocl,-pocl/spirv"; "-spirv" alone: every OpenCL C
    path). Raises ``UnknownDriver`` when a name matches nothing.
    """
    if not names:
        return list(targets)

    def hits(name: str) -> set[int]:
        found = {i for i, t in enumerate(targets)
                 if name in (t.name, t.driver, t.family, t.path, t.fingerprint_id)}
        if not found:
            known = ", ".join(t.name for t in targets) or "none (no OpenCL device found)"
            raise UnknownDriver(f"unknown driver {name!r}; known drivers: {known}")
        return found

    include = [n for n in names if not n.startswith("-")]
    chosen = set().union(*map(hits, include)) if include else set(range(len(targets)))
    for name in names:
        if name.startswith("-"):
            chosen -= hits(name[1:])
    return [t for i, t in enumerate(targets) if i in chosen]
