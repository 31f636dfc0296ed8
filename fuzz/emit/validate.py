"""The validity gate for SPIR-V modules: SPIRV-Tools' ``spirv-val`` for the OpenCL environment.

Every module passes here before any route or driver sees it (the LLVM translator and rusticl
abort on invalid input, drivers.md); a module that fails is a bug of the emitter, recorded as
the run status ``invalid_module`` and never run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from lang.ir import Program

TOOL = "spirv-val"


class ValidatorMissing(RuntimeError):
    """spirv-val is not installed (one line saying what to do)."""


def target_env(program: Program) -> str:
    """The environment a program's module is validated for: OpenCL 1.2, the version every
    local route takes; 2.0 for a program of C11 atomics (their scopes and memory orders are
    not allowed in a 1.2 environment, OpenCL SPIR-V environment §4). A module with 64-bit atomics is checked
    against the universal SPIR-V 1.0 rules: spirv-val (SPIRV-Tools v2023.1) accepts the Int64Atomics
    capability in no OpenCL environment, although the environment spec allows it with
    cl_khr_int64_base_atomics declared (SPIR-V environment 2.2 (2017), "cl_khr_int64_base_atomics";
    OpenCL SPIR-V environment §5.2.8). The generic address
    space (a shape's ``call:generic``: the GenericPointer capability) is OpenCL 2.0's as well."""
    if "int64_atomics" in program.requires:
        return "spv1.0"
    return "opencl2.0" if {"cl3.0", "generic_address_space"} & program.requires else "opencl1.2"


@lru_cache(maxsize=256)  # the same module goes to several routes
def validate(module: bytes, env: str = "opencl1.2") -> str | None:
    """None when ``module`` is valid for ``env``, else spirv-val's message."""
    if shutil.which(TOOL) is None:
        raise ValidatorMissing(f"{TOOL} not found: install Debian's spirv-tools (`bash setup.sh test` does)")
    fd, path = tempfile.mkstemp(suffix=".spv", prefix="clfuzz-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(module)
        out = subprocess.run([TOOL, "--target-env", env, path], capture_output=True, text=True, timeout=60)
    finally:
        Path(path).unlink(missing_ok=True)
    if out.returncode == 0:
        return None
    return (out.stdout + out.stderr).strip() or f"{TOOL} exit code {out.returncode}"


def disassemble(module: bytes) -> bytes:
    """``spirv-dis`` of a module (raises FileNotFoundError without spirv-tools,
    CalledProcessError when it fails)."""
    return subprocess.run(["spirv-dis", "-"], input=module, capture_output=True, check=True).stdout
