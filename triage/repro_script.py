"""The ``repro.py`` of a vendor report (triage.report): a standalone script that needs only pyopencl
and numpy, with the case (per front end: the job as clfuzz built it, the lanes to check) embedded,
compressed; and that data (:func:`checks`: the lanes it compares, :func:`job_data`: the job).

The script checks every front end the report names, each in a child process of its own (a crash
or a hang of the driver is then an outcome, not the end of the script), and exits 1 while the bug
is present on any of them (it says which), 0 once it is fixed on all, 2 when it cannot tell (no
matching device, a kernel that no longer builds, a child that did not finish). A child whose driver
wrote that it stopped executing the kernel (fuzz.drivers.protocol.ABORTS: Oclgrind's fatal errors,
after which every OpenCL call still succeeds) shows a runtime error, and nothing about a wrong
value.
"""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import asdict
from pathlib import Path

import numpy as np

from campaign.expectations import Expectations
from corpus.buckets import LANE_KINDS
from fuzz.drivers import Job, image_setup
from fuzz.drivers.protocol import ABORTS, BufferArg, ImageArg, SamplerArg
from lang.ir import Program
from lang.layout import layout
from lang.types import format_value, scalar
from oracles import as_bits, rule

MAX_CHECKS = 64

_REPRO = '''#!/usr/bin/env python3
"""{title}

Standalone reproducer written by clfuzz (bucket {bucket}): needs only pyopencl and numpy.
It checks each front end the report names ({paths}); --path picks one.
Exit status: 1 while the bug is present on any of them, 0 once it is fixed on all, 2 if it cannot tell.
"""
import argparse
import base64
import json
import subprocess
import sys
import zlib
from types import SimpleNamespace

CASE = json.loads(zlib.decompress(base64.b64decode("""
{blob}
""")))
PRESENT, FIXED, CANNOT = 1, 0, 2


{make_image}

def pick_device(cl, front, want):
    found = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
    for p, d in found:
        if want and want.lower() in (p.name + " " + d.name).lower():
            return d
    for p, d in found:
        if not want and d.name.strip() == front["device"] and p.name.strip() == front["platform"]:
            return d
    return None


def run(cl, np, ctx, queue, program, job):
    """Set up the job's buffers, images and samplers, run the kernel, return the output bytes."""
    kernel = cl.Kernel(program, job["kernel"])
    owned, out = [], None
    for i, arg in enumerate(job["args"]):
        data = base64.b64decode(arg["data"]) if arg.get("data") else bytes(arg.get("nbytes", 0))
        if arg["arg"] == "buffer":
            host = np.frombuffer(data, dtype=np.uint8).copy()
            buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
            if arg["read_back"]:
                out = (buf, host)
        elif arg["arg"] == "image":
            buf = make_image(cl, ctx, SimpleNamespace(**arg), np.frombuffer(data, dtype=np.uint8).copy(), owned)
        else:
            buf = cl.Sampler(ctx, arg["normalized"], arg["addressing"], arg["filter"])
        owned.append(buf)
        kernel.set_arg(i, buf)
    cl.enqueue_nd_range_kernel(queue, kernel, tuple(job["global_size"]),
                               tuple(job["local_size"]) if job["local_size"] else None)
    cl.enqueue_copy(queue, out[1], out[0])
    queue.finish()
    return out[1]


def check(front, want):
    """Run one front end's kernel in this process; its exit status says what it showed."""
    import numpy as np
    import pyopencl as cl

    try:
        device = pick_device(cl, front, want)
    except cl.Error as e:
        print(f"no OpenCL platform here ({{e}})")
        return CANNOT
    if device is None:
        print(f"no device {{front['device']!r}} of platform {{front['platform']!r}} here (--device picks another)")
        return CANNOT
    print(f"device: {{device.name.strip()}} ({{device.platform.name}}, driver {{device.driver_version}})")
    job = front["job"]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    code = base64.b64decode(job["program"])
    try:
        if job["kind"] == "source":
            program = cl.Program(ctx, code.decode()).build(options=job["options"])
        elif job["kind"] == "il":
            program = cl.Program(ctx, code).build(options=job["options"])
        else:
            program = cl.Program(ctx, [device], [code]).build(options=job["options"])
    except cl.Error as e:
        print(f"build failed: {{e}}")
        return PRESENT if CASE["kind"] == "build_error" else CANNOT
    try:
        out = run(cl, np, ctx, queue, program, job)
    except cl.Error as e:
        print(f"the kernel failed: {{e}}")
        return PRESENT if CASE["kind"] == "runtime_error" else CANNOT
    if CASE["kind"] not in CASE["lane_kinds"]:
        print("the kernel built and ran without an OpenCL error")
        return FIXED
    wrong = 0
    for c in front["checks"]:
        raw = out[c["offset"]:c["offset"] + np.dtype(c["bits"]).itemsize]
        bits = int(raw.view(c["bits"])[0])
        value = raw.view(c["value"])[0]
        ok = bits in c["allowed"] or (c["any_nan"] and bool(np.isnan(value)))
        ok = ok or any(lo <= value <= hi for _, _, lo, hi in c["ranges"])
        wrong += not ok
        allowed = c["allowed_text"] + (["any NaN"] if c["any_nan"] else []) + [f"[{{a}}, {{b}}]" for a, b, _, _ in c["ranges"]]
        shown = float(value).hex() if value.dtype.kind == "f" else int(value)
        print(f"{{'WRONG' if not ok else 'ok   '}} {{c['buffer']}} lane {{c['lane']}}: actual {{shown}} (bits {{bits:#x}}); "
              f"expected {{' or '.join(allowed)}} (bits {{', '.join(hex(a) for a in c['allowed'])}})")
        if not ok:
            print(f"      rule: {{c['rule']}}")
    print(f"{{wrong}} of {{len(front['checks'])}} lanes wrong")
    return PRESENT if wrong else FIXED


def main():
    parser = argparse.ArgumentParser(description=CASE["title"])
    parser.add_argument("--device", help="a platform or device name substring (default: the reported device)")
    parser.add_argument("--path", choices=[f["path"] for f in CASE["fronts"]],
                        help="check only this front end (default: every one the report names)")
    parser.add_argument("--timeout", type=float, default=CASE["timeout_s"],
                        help=f"seconds each front end may take (default {{CASE['timeout_s']:g}})")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return check(next(f for f in CASE["fronts"] if f["path"] == args.one), args.device)
    verdicts = {{}}
    for front in CASE["fronts"]:
        if args.path and front["path"] != args.path:
            continue
        print(f"== {{front['label']}} ({{front['path']}})", flush=True)
        command = [sys.executable, __file__, "--one", front["path"]] + (["--device", args.device] if args.device else [])
        try:
            child = subprocess.run(command, timeout=args.timeout, stderr=subprocess.PIPE, text=True, errors="replace")
            rc, said = child.returncode, child.stderr
        except subprocess.TimeoutExpired as e:
            print(f"no result after {{args.timeout:g}} s (--timeout)")
            rc, said = (PRESENT if CASE["kind"] == "timeout" else CANNOT), e.stderr or ""
        said = said.decode(errors="replace") if isinstance(said, bytes) else said
        sys.stderr.write(said)
        if rc not in (PRESENT, FIXED, CANNOT):
            print(f"the process running the kernel ended with status {{rc}} (a crash of the driver)")
            rc = PRESENT if CASE["kind"] == "crash" else CANNOT
        elif rc == FIXED and any(marker in said for marker in CASE["aborts"]):
            # its calls succeeded, but the driver says it stopped executing the kernel: no outputs to trust
            print("the driver stopped executing the kernel (its message is above)")
            rc = PRESENT if CASE["kind"] == "runtime_error" else CANNOT
        verdicts[front["path"]] = rc
    present = [p for p, rc in verdicts.items() if rc == PRESENT]
    unknown = [p for p, rc in verdicts.items() if rc == CANNOT]
    if present:
        print(f"bug present on: {{', '.join(present)}}")
        return PRESENT
    if unknown:
        print(f"could not check: {{', '.join(unknown)}}")
        return CANNOT
    print(f"fixed on: {{', '.join(verdicts)}}")
    return FIXED


if __name__ == "__main__":
    sys.exit(main())
'''


def repro_source(data: dict) -> str:
    """The text of ``repro.py`` for a case: ``title``, ``bucket``, ``kind``, ``timeout_s`` (what each
    front end may take) and ``fronts`` (one per front end: ``path``, ``label``, ``platform``,
    ``device``, ``job`` and ``checks``:
    triage.report.write_report); it embeds the image set-up a worker does (fuzz.drivers.image_setup)."""
    # a driver's words for a kernel it stopped executing; the bucket kinds whose lanes it compares
    data = {**data, "aborts": list(ABORTS), "lane_kinds": list(LANE_KINDS)}
    blob = base64.b64encode(zlib.compress(json.dumps(data).encode(), 9)).decode()
    wrapped = "\n".join(blob[i:i + 100] for i in range(0, len(blob), 100))
    title = data["title"].replace("\\", "\\\\").replace('"', '\\"')  # a docstring whatever the driver's message
    return _REPRO.format(title=title, bucket=data["bucket"], blob=wrapped,
                         paths=", ".join(f["path"] for f in data["fronts"]),
                         make_image=Path(image_setup.__file__).read_text())


def checks(program: Program, ftz: frozenset[str], rows: list[dict]) -> list[dict]:
    """The lanes a reproducer compares: every judged lane of the outputs the rows are in (the
    failing ones first), each with what the oracle allows (bits, any NaN, value intervals) on a
    device that may flush the denormals of the types in ``ftz``."""
    expectations = Expectations(program).get(ftz)
    regions = layout(program).outputs
    failing = [(r["buffer"], r["lane"]) for r in rows if r["buffer"] in regions and r["lane"] >= 0]
    lanes = failing + [(name, int(i)) for name in dict.fromkeys(b for b, _ in failing)
                       for i in np.flatnonzero(expectations[name].judged)]
    out = []
    for name, lane in list(dict.fromkeys(lanes))[:MAX_CHECKS]:
        exp = expectations[name]
        if not exp.judged[lane]:
            continue
        s = scalar(exp.scalar)
        allowed = sorted({int(a[lane]) for a in exp.allowed})
        ranges = [[format_value(int(as_bits(lo[lane:lane + 1])[0]), s.name),
                   format_value(int(as_bits(hi[lane:lane + 1])[0]), s.name),
                   float(lo[lane]) if s.is_float else int(lo[lane]),
                   float(hi[lane]) if s.is_float else int(hi[lane])]
                  for lo, hi in exp.ranges if lo[lane] <= hi[lane]]
        r = rule(int(exp.rule[lane]))
        out.append({"buffer": name, "lane": lane, "offset": regions[name].offset + lane * s.size,
                    "bits": s.bits_dtype.name, "value": s.dtype.name, "allowed": allowed,
                    "allowed_text": [format_value(a, s.name) for a in allowed], "any_nan": bool(exp.any_nan[lane]),
                    "ranges": ranges, "rule": f"{r.text} ({r.section})"})
    return out


def job_data(job: Job) -> dict:
    """A worker job as ``repro.py`` embeds it (JSON: its program and the arguments' data in base64)."""
    args = []
    for a in job.args:
        kind = {BufferArg: "buffer", ImageArg: "image", SamplerArg: "sampler"}[type(a)]
        d = asdict(a)
        if d.get("data") is not None:
            d["data"] = base64.b64encode(d["data"]).decode()
        args.append({"arg": kind, **d})
    return {"kind": job.kind, "program": base64.b64encode(job.program).decode(), "options": job.options,
            "kernel": job.kernel, "args": args, "global_size": list(job.global_size),
            "local_size": list(job.local_size) if job.local_size else None}
