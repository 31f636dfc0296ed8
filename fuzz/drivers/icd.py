"""Find the OpenCL ICD libraries and give each one a private vendors folder.

A worker that serves one device must see only its own driver: the ICD loader (ocl-icd, also the
one bundled in the pyopencl wheel) loads every ``.icd`` file of the folder named by
``OCL_ICD_VENDORS`` instead of ``/etc/OpenCL/vendors``. So every library found here gets a folder
``<state>/icd/<short>/`` holding one file ``<short>.icd`` that names it.

Libraries come from three places:

1. every ``/etc/OpenCL/vendors/*.icd`` (the file holds the library name or path);
2. known drivers that install no ``.icd`` file: Oclgrind and NVIDIA's ``libnvidia-opencl.so.1``;
3. the colon-separated paths in ``CLFUZZ_EXTRA_ICDS``.

Nothing here loads a driver: that only ever happens in a subprocess (``probe``, ``worker``).
"""

from __future__ import annotations

import ctypes.util
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

VENDORS_DIR = Path("/etc/OpenCL/vendors")
OCLGRIND_LIBRARY = "/usr/lib/oclgrind/liboclgrind-rt-icd.so"
NVIDIA_SONAME = "libnvidia-opencl.so.1"
NVIDIA_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/x86_64-linux-gnu/nvidia/current",
)
EXTRA_ENV = "CLFUZZ_EXTRA_ICDS"
STATE_ENV = "CLFUZZ_STATE"

# The project root, so that ``python -m fuzz.drivers.<x>`` works in a subprocess whatever its cwd.
PROJECT_ROOT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class IcdLibrary:
    """One OpenCL implementation library and where it was found."""

    short: str  # folder name: "pocl", "rusticl", "oclgrind", "nvidia", ...
    library: str  # what the .icd file says: a soname or an absolute path
    source: str  # the .icd file it came from, "known" or "CLFUZZ_EXTRA_ICDS"


def state_dir() -> Path:
    """The state folder: ``$CLFUZZ_STATE`` or ``~/.cache/clfuzz``."""
    env = os.environ.get(STATE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "clfuzz"


def _short_from_library(library: str) -> str:
    """``/x/liboclgrind-rt-icd.so`` -> ``oclgrind-rt-icd``; ``libpocl.so.2`` -> ``pocl``."""
    base = os.path.basename(library)
    base = re.sub(r"^lib", "", base)
    base = re.sub(r"\.so(\..*)?$", "", base)
    return _slug(base) or "icd"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _library_key(library: str) -> str:
    """Identity of a library for de-duplication: its real path if absolute, else its soname."""
    if os.path.isabs(library):
        return os.path.realpath(library)
    return library


def find_nvidia() -> str | None:
    """NVIDIA's OpenCL library, which ships without an ``.icd`` file on these machines."""
    for folder in NVIDIA_DIRS:
        path = os.path.join(folder, NVIDIA_SONAME)
        if os.path.exists(path):
            return path
    found = ctypes.util.find_library("nvidia-opencl")  # a soname, e.g. "libnvidia-opencl.so.1"
    return found


def find_libraries() -> list[IcdLibrary]:
    """Every OpenCL library on this machine, de-duplicated, each with a unique short name."""
    found: list[IcdLibrary] = []
    if VENDORS_DIR.is_dir():
        for icd in sorted(VENDORS_DIR.glob("*.icd")):
            try:
                library = icd.read_text().strip()
            except OSError:
                continue
            if library:
                found.append(IcdLibrary(_slug(icd.stem) or "icd", library, str(icd)))
    if os.path.exists(OCLGRIND_LIBRARY):
        found.append(IcdLibrary("oclgrind", OCLGRIND_LIBRARY, "known"))
    nvidia = find_nvidia()
    if nvidia:
        found.append(IcdLibrary("nvidia", nvidia, "known"))
    for path in os.environ.get(EXTRA_ENV, "").split(":"):
        if path.strip():
            found.append(IcdLibrary(_short_from_library(path), path.strip(), EXTRA_ENV))

    result: list[IcdLibrary] = []
    seen_keys: set[str] = set()
    seen_sonames: set[str] = set()
    shorts: set[str] = set()
    for lib in found:
        key, soname = _library_key(lib.library), os.path.basename(lib.library)
        # An .icd file naming "libnvidia-opencl.so.1" and the path found for it are the same library.
        if key in seen_keys or (lib.source == "known" and soname in seen_sonames):
            continue
        seen_keys.add(key)
        seen_sonames.add(soname)
        short, n = lib.short, 1
        while short in shorts:
            n += 1
            short = f"{lib.short}-{n}"
        shorts.add(short)
        result.append(IcdLibrary(short, lib.library, lib.source))
    return result


def _write_if_changed(path: Path, content: str) -> None:
    try:
        if path.read_text() == content:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old or the new file
    except BaseException:
        os.unlink(tmp)
        raise


def icd_folder(lib: IcdLibrary) -> Path:
    """Write (when changed) and return the private vendors folder of one library."""
    folder = state_dir() / "icd" / lib.short
    _write_if_changed(folder / f"{lib.short}.icd", lib.library + "\n")
    return folder


def icd_folders() -> list[Path]:
    """A private vendors folder for every library found."""
    return [icd_folder(lib) for lib in find_libraries()]


def library_of(folder: str | os.PathLike) -> str:
    """The library named by the ``.icd`` file(s) of a folder (joined with ':' if several)."""
    return ":".join(p.read_text().strip() for p in sorted(Path(folder).glob("*.icd")))


def env_overrides(folder: str | os.PathLike) -> dict[str, str]:
    """The variables a subprocess that loads only this folder's driver needs."""
    folder = Path(folder)
    cache = state_dir() / "cache" / folder.name
    (cache / "mesa").mkdir(parents=True, exist_ok=True)
    (cache / "pocl").mkdir(parents=True, exist_ok=True)
    pythonpath = os.environ.get("PYTHONPATH", "")
    return {
        "OCL_ICD_VENDORS": str(folder),
        "RUSTICL_ENABLE": "llvmpipe",
        "MESA_SHADER_CACHE_DIR": str(cache / "mesa"),
        "POCL_CACHE_DIR": str(cache / "pocl"),
        "PYOPENCL_NO_CACHE": "1",
        "PYOPENCL_COMPILER_OUTPUT": "0",
        "PYTHONPATH": PROJECT_ROOT + (os.pathsep + pythonpath if pythonpath else ""),
    }


def env_for(folder: str | os.PathLike) -> dict[str, str]:
    """The whole environment for a subprocess that sees only this folder's driver."""
    env = dict(os.environ)
    # ocl-icd would load these in addition to the vendors folder.
    for var in ("OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH"):
        env.pop(var, None)
    env.update(env_overrides(folder))
    return env
