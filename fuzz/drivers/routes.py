"""How a SPIR-V module reaches each driver: its route (docs/spirv.md), chosen
from what the device reports (:func:`route_of`).

- ``il``: a device whose ``CL_DEVICE_IL_VERSION`` names SPIR-V takes the module as it is
  (``clCreateProgramWithIL``) into its own SPIR-V front end: the newer releases' PoCL (6.0+) and
  Mesa rusticl (25+) (fuzz.drivers.releases).
- ``translated``: the system's PoCL and Oclgrind report no IL and take the LLVM translator's
  output (``llvm-spirv -r``: SPIR-V -> LLVM bitcode) as a SPIR binary;
- ``container``: the system's rusticl (Mesa 22.3) reports no IL either and takes the module in its
  own binary container (a 12-byte header ``(1, byte length, 4)``, then the words), read by Mesa's
  own SPIR-V front end.

A route's ``unsupported`` names the constructs it cannot take (program
requirements, operations, ``op:variant``: ``lang.constructs.constructs``): such programs are skipped
for that route only (``supports``), and ``clfuzz drivers`` shows the set.

Every module is validated (``fuzz.emit.validate``) before a route sees it: the translator and
rusticl abort on invalid input.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import _proc

PATH_OPENCL_C = "opencl-c"
PATH_SPIRV = "spirv"
PATHS = (PATH_OPENCL_C, PATH_SPIRV)

SPIR_OPTIONS = "-x spir -spir-std=1.2"
# spirv-val accepts the Float16 capability in no OpenCL environment, so half arithmetic has no
# valid module: no route takes programs that need fp16.
NO_FP16 = frozenset({"fp16"})
# The LLVM translator (14 and 15) does not implement the extended-arithmetic instructions
# (drivers.md), and crashes on OpVectorShuffle of two vectors of different lengths (found by
# clfuzz: SPIR-V allows it, LLVM's shufflevector does not): those statements go to rusticl only.
TRANSLATOR = NO_FP16 | {"extended", "vector_shuffle:mixed"}


ROUTE_KINDS = ("translated", "container", "il")


@dataclass(frozen=True)
class Route:
    family: str  # the driver's lineage ("pocl", fuzz.drivers.discovery.Target.lineage)
    description: str
    translator: str | None  # the llvm-spirv executable of a translated route, else None
    options: str  # build options of the binary
    unsupported: frozenset[str]  # constructs this route cannot take (lang.constructs.constructs)
    driver: str  # how the driver reads the binary
    kind: str = "translated"  # ROUTE_KINDS

    @property
    def received(self) -> str:
        """The file name a report gives what the driver received."""
        return {"translated": "kernel.bc", "container": "kernel.rusticl-container", "il": "kernel.spv"}[self.kind]

    def chain(self, version: str = "") -> str:
        """The route as it is: module -> translator (version) -> what the driver reads, or the
        module straight to the driver's own SPIR-V front end."""
        if self.translator:
            return (f"SPIR-V module -> {version or self.translator} -r -> LLVM bitcode (SPIR 1.2) -> "
                    f"{self.driver}")
        return f"SPIR-V module -> {self.driver} (SPIR-V straight to the driver)"

    def command(self, module: str = "kernel.spv") -> str:
        """The command that makes :attr:`received` from ``module`` ("" for the ``il`` route: the
        driver reads the module as it is)."""
        if self.translator:
            return f"{self.translator} -r {module} -o {self.received}"
        if self.kind == "il":
            return ""
        return (f"python3 -c \"import struct,sys; m=open('{module}','rb').read(); "
                f"open('{self.received}','wb').write(struct.pack('<III',1,len(m),4)+m)\"")


ROUTES: dict[str, Route] = {
    r.family: r
    for r in (
        Route("pocl", "llvm-spirv-15 -r, SPIR binary", "llvm-spirv-15", SPIR_OPTIONS, TRANSLATOR,
              f"PoCL clCreateProgramWithBinary ({SPIR_OPTIONS})"),
        # Oclgrind's LLVM 14 reads typed pointers only: the LLVM 14 translator. OpFMod becomes a
        # call of llvm.copysign, which Oclgrind cannot execute (drivers.md).
        # SPIR-V 1.0 cannot say read_imageui (no ZeroExtend operand before 1.4): the translator
        # writes read_imagei, which Oclgrind answers with zeros on UNSIGNED_INT images.
        Route("oclgrind", "llvm-spirv-14 -r, SPIR binary", "llvm-spirv-14", SPIR_OPTIONS,
              TRANSLATOR | {"rem:OpFMod", "read_imageui"}, f"Oclgrind clCreateProgramWithBinary ({SPIR_OPTIONS})"),
        Route("rusticl", "rusticl binary container (spirv_to_nir)", None, "", NO_FP16,
              "rusticl clCreateProgramWithBinary of its container (12-byte header (1, length, 4)), read by "
              "Mesa's spirv_to_nir", "container"),
    )
}
"""The routes of drivers that report no SPIR-V IL, by lineage."""

IL_UNSUPPORTED: dict[str, frozenset[str]] = {"pocl": frozenset({"extended"})}
"""What the ``il`` route of a lineage cannot take beyond :data:`NO_FP16` (route data, measured on
the releases): PoCL 6.0 and 7.1 read SPIR-V through the LLVM translator and their kernel library
has no ``__spirv_IAddCarry``/``ISubBorrow``/``UMulExtended``/``SMulExtended`` ("Cannot find symbol
... in kernel library" at link time); Mesa 25-26 take every construct clfuzz writes."""


def il_route(lineage: str) -> Route:
    """The direct route of a device that reports a SPIR-V IL version: ``clCreateProgramWithIL``."""
    return Route(lineage, "clCreateProgramWithIL (the driver's SPIR-V front end)", None, "",
                 NO_FP16 | IL_UNSUPPORTED.get(lineage, frozenset()),
                 f"{lineage} clCreateProgramWithIL, read by its own SPIR-V front end", "il")


def reports_il(fingerprint: dict) -> bool:
    """Whether the device's CL_DEVICE_IL_VERSION (the probe's ``il_version``) names SPIR-V."""
    return "SPIR-V" in (fingerprint.get("il_version") or "")


def route_of(lineage: str, fingerprint: dict) -> Route | None:
    """The SPIR-V route of a device of ``lineage``, from what it reports: ``il`` where it takes
    SPIR-V (:func:`reports_il`), else its lineage's translated or container route (:data:`ROUTES`),
    else None."""
    return il_route(lineage) if reports_il(fingerprint) else ROUTES.get(lineage)


def chain_of(lineage: str, path: str, version: str = "", fingerprint: dict | None = None) -> str:
    """How a program reaches the driver on ``path``: its OpenCL C compiler, or the SPIR-V route
    (:meth:`Route.chain`) of ``lineage`` and the device's ``fingerprint``."""
    route = route_of(lineage, fingerprint or {}) if path != PATH_OPENCL_C else None
    if route is None:
        return "OpenCL C source -> the driver's compiler (clCreateProgramWithSource)"
    return route.chain(version)


class RouteFailure(Exception):
    """The route could not turn the module into a binary: ``status`` as a run status."""

    def __init__(self, status: str, log: str) -> None:
        super().__init__(log)
        self.status, self.log = status, log


def route_for(lineage: str, fingerprint: dict) -> Route | None:
    """The device's route (:func:`route_of`) when this machine has what it needs (its
    translator), else None."""
    route = route_of(lineage, fingerprint)
    if route is None or (route.translator and shutil.which(route.translator) is None):
        return None
    return route


@lru_cache(maxsize=None)
def translator_version(route: Route) -> str:
    """The Debian package version of the route's translator ("" for a container route)."""
    if not route.translator:
        return ""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", route.translator],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0 and out.stdout:
            return f"{route.translator} {out.stdout}"
    except (OSError, subprocess.TimeoutExpired):
        pass
    out = subprocess.run([route.translator, "--version"], capture_output=True, text=True, timeout=10)
    return f"{route.translator} {out.stdout.strip().splitlines()[0] if out.stdout else '?'}"


def binary(route: Route, module: bytes, timeout_s: float = 60) -> bytes:
    """What the route's driver loads: the module itself (``il``, clCreateProgramWithIL), or the
    binary of clCreateProgramWithBinary."""
    if route.kind == "il":
        return module
    if route.kind == "container":
        return struct.pack("<III", 1, len(module), 4) + module
    with tempfile.TemporaryDirectory(prefix="clfuzz-spirv-") as tmp:
        spv, bc = Path(tmp) / "m.spv", Path(tmp) / "m.bc"
        spv.write_bytes(module)
        try:
            rc, out, err = _proc.run([route.translator, "-r", str(spv), "-o", str(bc)], env=dict(os.environ),
                                    timeout_s=timeout_s)
        except subprocess.TimeoutExpired:
            raise RouteFailure("timeout", f"{route.translator} -r: no result after {timeout_s:g} s") from None
        text = (out + err).decode(errors="replace").strip()
        if rc != 0:
            status = "crash" if rc < 0 else "build_error"
            raise RouteFailure(status, f"{route.translator} -r: {_proc.describe_exit(rc)}\n{text}"[-8000:])
        return bc.read_bytes()
