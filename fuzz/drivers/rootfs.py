"""Run a clfuzz subprocess (probe, worker) inside another Debian release's root filesystem.

A release root (``releases``) holds its own drivers, ICD loader, Python and pyopencl. The probe and
the worker run there with the release's ``python3``; the campaign stays outside. The command is

    unshare --mount [--map-root-user] sh -c MOUNTS ROOT chroot ROOT env -C PROJECT python3 -m MODULE ...

In a private mount namespace (gone with the process, nothing to clean up) ``/proc``, ``/sys`` and
``/dev`` are bound into the root, and so are the project and the state folder *at the same
paths*: ``PYTHONPATH``, the private ICD folders, the compiler caches and the pipe and memfd
descriptors (inherited) mean the same thing inside and outside. Only stdlib, numpy and pyopencl
are needed from the release (the worker and the probe import ``fuzz.drivers`` and ``lang``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .icd import PROJECT_ROOT, env_for, state_dir

# Bound into the root at the same paths, recursively (sysfs and devpts have sub-mounts).
SYSTEM_MOUNTS = ("/proc", "/sys", "/dev")
_MOUNT_SCRIPT = (
    'set -e; R="$1"; shift; '
    'for d in ' + " ".join(SYSTEM_MOUNTS) + '; do mkdir -p "$R$d"; mount --rbind "$d" "$R$d"; done; '
    'for d in "$@"; do [ "$d" = -- ] && break; mkdir -p "$R$d"; mount --bind "$d" "$R$d"; done; '
    'while [ "$1" != -- ]; do shift; done; shift; exec chroot "$R" "$@"'
)


def shared_paths() -> list[str]:
    """The host folders bound at the same path inside a release root: the project, the state."""
    state = state_dir()
    state.mkdir(parents=True, exist_ok=True)
    return [PROJECT_ROOT, str(state.resolve())]


def python_argv(root: str, module: str) -> list[str]:
    """The command that runs ``python -m module`` here (``root`` empty) or inside ``root``."""
    if not root:
        return [sys.executable, "-m", module]
    unshare = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare.append("--map-root-user")  # a user namespace: mounts and chroot without root
    return [*unshare, "sh", "-c", _MOUNT_SCRIPT, "sh", root, *shared_paths(), "--",
            "env", "-C", PROJECT_ROOT, "python3", "-m", module]


def env_in(folder: str | os.PathLike, root: str) -> dict[str, str]:
    """The environment of a subprocess that sees only this folder's driver (inside ``root``: the
    host's Python settings left out, the project alone on ``PYTHONPATH``)."""
    env = env_for(folder)
    if root:
        for var in ("PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "LD_LIBRARY_PATH", "LD_PRELOAD"):
            env.pop(var, None)
        env["PYTHONPATH"] = PROJECT_ROOT
        env["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return env


def usable(root: str | os.PathLike) -> str | None:
    """Why a release root cannot run a worker here (None when it looks runnable)."""
    root = Path(root)
    if not (root / "usr/bin/python3").exists():
        return f"{root}: no python3 in the root"
    if not any((root / "usr/lib/python3/dist-packages").glob("pyopencl*")):
        return f"{root}: no pyopencl in the root (python3-pyopencl)"
    if not any((root / "etc/OpenCL/vendors").glob("*.icd")):
        return f"{root}: no OpenCL driver in the root (/etc/OpenCL/vendors is empty)"
    if os.geteuid() != 0 and not Path("/proc/self/ns/user").exists():
        return "not root and no user namespaces: cannot enter a release root"
    return None
