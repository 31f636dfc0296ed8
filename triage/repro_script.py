"""The ``repro.py`` of a vendor report (triage.report): a standalone script that needs only pyopencl
and numpy, with the case (the job as clfuzz built it, the lanes to check) embedded, compressed.
"""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

from fuzz.drivers import image_setup

_REPRO = '''#!/usr/bin/env python3
"""{title}

Standalone reproducer written by clfuzz (bucket {bucket}): needs only pyopencl and numpy.
Exit status: 1 while the bug is present, 0 once it is fixed, 2 if it cannot run here.
"""
import argparse
import base64
import json
import sys
import zlib
from types import SimpleNamespace

import numpy as np
import pyopencl as cl

CASE = json.loads(zlib.decompress(base64.b64decode("""
{blob}
""")))


{make_image}

def pick_device(want):
    found = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
    for p, d in found:
        if want and want.lower() in (p.name + " " + d.name).lower():
            return d
    for p, d in found:
        if not want and d.name.strip() == CASE["device"] and p.name.strip() == CASE["platform"]:
            return d
    return None


def main():
    parser = argparse.ArgumentParser(description=CASE["title"])
    parser.add_argument("--device", help="a platform or device name substring (default: the reported device)")
    device = pick_device(parser.parse_args().device)
    if device is None:
        print(f"no device {{CASE['device']!r}} of platform {{CASE['platform']!r}} here (--device picks another)")
        return 2
    print(f"device: {{device.name.strip()}} ({{device.platform.name}}, driver {{device.driver_version}})")
    job = CASE["job"]
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx)
    code = base64.b64decode(job["program"])
    try:
        if job["kind"] == "source":
            program = cl.Program(ctx, code.decode()).build(options=job["options"])
        else:
            program = cl.Program(ctx, [device], [code]).build(options=job["options"])
    except cl.Error as e:
        print(f"build failed: {{e}}")
        return 1 if CASE["kind"] == "build_error" else 2
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
    if CASE["kind"] not in ("wrong-result", "imprecise-result"):
        print("the kernel built and ran: the failure is gone")
        return 0
    wrong = 0
    for c in CASE["checks"]:
        raw = out[1][c["offset"]:c["offset"] + np.dtype(c["bits"]).itemsize]
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
    print(f"{{wrong}} of {{len(CASE['checks'])}} lanes wrong: {{'bug present' if wrong else 'fixed'}}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def repro_source(data: dict) -> str:
    """The text of ``repro.py`` for a case: ``title``, ``bucket``, ``kind``, ``platform``,
    ``device``, ``job`` and ``checks`` (triage.report.write_report); it embeds the image set-up a
    worker does (fuzz.drivers.image_setup)."""
    blob = base64.b64encode(zlib.compress(json.dumps(data).encode(), 9)).decode()
    wrapped = "\n".join(blob[i:i + 100] for i in range(0, len(blob), 100))
    return _REPRO.format(title=data["title"], bucket=data["bucket"], blob=wrapped,
                         make_image=Path(image_setup.__file__).read_text())
