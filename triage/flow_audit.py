"""``clfuzz audit`` of a flow program's wrong-code row (lang.flow, campaign.flow): its verdict
re-derived with the independent evaluation, the program built for the host as C by gcc
(triage.flow_host: ``-fsanitize=undefined``, no recovery; nothing of the interpreter, oracles.flow).

The row names an output and a work-item (its global linear id) and records the bits the oracle
expected and the bits the target gave. The host build's bits of that lane are the independent
value (OpenCL C 3.0.19 §6.3, §6.5.1: the arithmetic a valid flow program does is exact; §7.4
Table 65: ``+ - *`` and ``fma`` correctly rounded, contraction off, §6.15.2.1, as gcc builds it
with ``-ffp-contract=off``): the verdict is **reproduced** where they are the expected bits (any
NaN for an expected NaN) and not the actual ones; **not reproduced** where they are the actual
bits, differ from the expected ones, or the host run meets undefined behaviour; **not audited**
where no gcc is installed or the host build fails (a program the host dialect cannot write).
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

from lang.flow import FlowProgram
from lang.types import scalar
from triage.flow_host import run_host

NO_GCC = "no C compiler (gcc) for the host evaluation of a flow program"


def audit_flow_row(row: dict, program: FlowProgram, cache: dict[str, dict] | None = None) -> tuple[str, str, str]:
    """(status, reason, the independent value) of one wrong-code ``row`` of ``program`` (module
    docstring); ``cache`` keeps each program's host outputs (or its failure) for the audit's other rows."""
    if shutil.which("gcc") is None:
        return "not audited", NO_GCC, ""
    cache = {} if cache is None else cache
    if program.id not in cache:
        try:
            cache[program.id] = run_host(program)
        except subprocess.CalledProcessError as e:
            cache[program.id] = ("not audited", f"the host C build failed: {(e.stderr or '').strip()[-200:]}")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            cache[program.id] = ("not reproduced", f"the host evaluation fails: {str(e)[-300:]}")
    outputs = cache[program.id]
    if isinstance(outputs, tuple):
        return (*outputs, "")
    out = next((o for o in program.outputs if o.name == row["buffer"]), None)
    item = int(row["work_item"])
    if out is None or not 0 <= item < program.work_items:
        return "not audited", "the row names no output lane of its program", ""
    s = scalar(out.type)
    host = int(outputs[out.name][item])
    expected, actual = int(row["expected"], 16), int(row["actual"], 16)

    def nan(bits: int) -> bool:
        return s.is_float and bool(np.isnan(np.array([bits], np.uint64).astype(s.bits_dtype).view(s.dtype)[0]))

    independent = f"{host:#x} (host C, gcc)"
    if host == actual or (nan(host) and nan(actual)):
        return "not reproduced", "the independent evaluation gives the actual value", independent
    if host != expected and not (nan(host) and nan(expected)):
        return "not reproduced", "the expected values differ", independent
    return "reproduced", "", independent
