"""How a SPIR-V module reaches each driver: its route (``../shared/notes/drivers.md``).

No local driver accepts ``clCreateProgramWithIL``. PoCL and Oclgrind take the LLVM translator's
output (``llvm-spirv -r``: SPIR-V -> LLVM bitcode) as a SPIR binary; rusticl takes the module in
its own binary container (a 12-byte header ``(1, byte length, 4)``, then the words), read by
Mesa's own SPIR-V front end. A route's ``unsupported`` names the constructs it cannot take (program
requirements, operations, ``op:variant``: ``lang.ops.constructs``): such programs are skipped
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


@dataclass(frozen=True)
class Route:
    family: str
    description: str
    translator: str | None  # the llvm-spirv executable, or None for a container route
    options: str  # build options of the binary
    unsupported: frozenset[str]  # constructs this route cannot take (lang.ops.constructs)
    driver: str  # how the driver reads the binary

    @property
    def received(self) -> str:
        """The file name a report gives what the driver received."""
        return "kernel.bc" if self.translator else "kernel.rusticl-container"

    def chain(self, version: str = "") -> str:
        """The route as it is: module -> translator (version) -> what the driver reads, or the
        module straight to the driver's own SPIR-V front end."""
        if self.translator:
            return (f"SPIR-V module -> {version or self.translator} -r -> LLVM bitcode (SPIR 1.2) -> "
                    f"{self.driver}")
        return f"SPIR-V module -> {self.driver} (SPIR-V straight to the driver)"

    def command(self, module: str = "kernel.spv") -> str:
        """The command that makes :attr:`received` from ``module``."""
        if self.translator:
            return f"{self.translator} -r {module} -o {self.received}"
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
              "Mesa's spirv_to_nir"),
    )
}


def chain_of(family: str, path: str, version: str = "") -> str:
    """How a program reaches ``family``'s driver on ``path``: its OpenCL C compiler, or the SPIR-V
    route (:meth:`Route.chain`)."""
    if path == PATH_OPENCL_C or family not in ROUTES:
        return "OpenCL C source -> the driver's compiler (clCreateProgramWithSource)"
    return ROUTES[family].chain(version)


class RouteFailure(Exception):
    """The route could not turn the module into a binary: ``status`` as a run status."""

    def __init__(self, status: str, log: str) -> None:
        super().__init__(log)
        self.status, self.log = status, log


def route_for(family: str) -> Route | None:
    """The family's route when this machine has what it needs (its translator), else None."""
    route = ROUTES.get(family)
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
    """The program binary the route's driver loads with clCreateProgramWithBinary."""
    if route.translator is None:
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
