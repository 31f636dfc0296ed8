"""Whose bug is it on a translated route: the driver's, or the translator's?

PoCL's and Oclgrind's SPIR-V paths give the driver LLVM bitcode that ``llvm-spirv -r`` made from
the module (fuzz.drivers.routes). A disagreement there may be the translator's or the driver's
bitcode intake's. The check compiles the same kernel's OpenCL C with clang (the version of the
translator's LLVM) to SPIR bitcode, loads it on the same device the same way, and judges it with
the oracle: if the same lane is wrong again, the driver is wrong whatever made its bitcode; if
not, the translation is what differs.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from campaign.jobs import c_options, job_for
from corpus.buckets import RESULT_KINDS
from fuzz.drivers import Target, Worker
from fuzz.drivers.routes import PATH_OPENCL_C, ROUTES, SPIR_OPTIONS, Route
from fuzz.emit.opencl_c import emit
from lang.constructs import paths_of
from lang.ir import Program
from triage.observe import observe


def clang_for(route: Route | str | None) -> str | None:
    """The clang whose LLVM matches the route's translator (``llvm-spirv-15`` -> ``clang-15``),
    when installed; None for a route without translator or without that clang. A lineage name
    (``"pocl"``) means its translated route (routes.ROUTES)."""
    route = ROUTES.get(route) if isinstance(route, str) else route
    if route is None or not route.translator:
        return None
    clang = route.translator.replace("llvm-spirv", "clang")
    return clang if shutil.which(clang) else None


def clang_bitcode(program: Program, clang: str, fingerprint: dict) -> bytes:
    """The program's OpenCL C compiled by ``clang`` to SPIR bitcode for the device's address bits
    (raises subprocess.CalledProcessError with clang's message when it rejects it)."""
    triple = "spir64" if fingerprint.get("address_bits", 64) == 64 else "spir"
    std = [o for o in c_options(program, fingerprint).split() if o.startswith("-cl-std=")] or ["-cl-std=CL1.2"]
    with tempfile.TemporaryDirectory(prefix="clfuzz-clang-") as tmp:
        src, out = Path(tmp) / "kernel.cl", Path(tmp) / "kernel.bc"
        src.write_text(emit(program))
        subprocess.run([clang, "-c", "-emit-llvm", "-target", triple, *std, "-Xclang", "-finclude-default-header",
                        "-O0", str(src), "-o", str(out)], check=True, capture_output=True, text=True, timeout=120)
        return out.read_bytes()


def translated_route_verdict(program: Program, target: Target, row: dict, worker: Worker) -> str:
    """For a disagreement ``row`` of ``program`` on a translated SPIR-V route: one sentence saying
    whether clang's bitcode of the same kernel, on the same device, reproduces it. The route is
    the target's own (Target.route, from what its device reports): a release's ``il`` path has no
    translator, whatever its lineage's system driver takes."""
    route = target.route
    if route is None or not route.translator:
        return "not a translated route"
    clang = clang_for(route)
    if clang is None:
        return f"not checked: {route.translator.replace('llvm-spirv', 'clang')} is not installed"
    if PATH_OPENCL_C not in paths_of(program):
        return "not checked: the kernel uses an operation only SPIR-V has, clang cannot compile it"
    try:
        bitcode = clang_bitcode(program, clang, target.fingerprint)
    except subprocess.CalledProcessError as e:
        first = (e.stderr or "").strip().splitlines()
        return f"not checked: {clang} rejects the kernel ({first[0] if first else e.returncode})"
    job = replace(job_for(program, None, PATH_OPENCL_C, target.lineage, target.fingerprint), kind="binary",
                  program=bitcode, options=" ".join(o for o in (SPIR_OPTIONS, program.options) if o))
    rows = observe(program, target, worker, job=job)
    if rows is None:
        return f"not checked: {target.name} does not take the whole kernel"
    failed = [r for r in rows if r["kind"] not in RESULT_KINDS]
    if failed:
        return f"not checked: clang's bitcode did not run ({failed[0]['kind']}: {failed[0]['actual_value']})"
    same = any((r["buffer"], r["work_item"], r["lane"]) == (row["buffer"], row["work_item"], row["lane"])
               for r in rows)
    if same:
        return (f"the same kernel compiled by {clang} to SPIR bitcode gives the same wrong lane on this device: "
                "the driver's bug, whatever made its bitcode")
    return (f"the same kernel compiled by {clang} to SPIR bitcode is right on this device: the translation "
            f"({route.translator} -r) is what makes it wrong: the translator's bug, or the driver's "
            "intake of the translator's bitcode")
