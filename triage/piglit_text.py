"""The text of a piglit CL program test (the format of Debian 12's ``piglit`` package, read by its
``cl-program-tester``) of one reduced clfuzz program and the driver's disagreements on it.

The file is the kernel as clfuzz builds it, preceded by its ``[config]``/``[test]`` header in a
``/*! ... !*/`` comment:

- ``[config]``: the name, ``clc_version_min`` (the OpenCL C version the operations need: 2.0 or
  3.0, else 1.2), ``build_options`` with the ``-cl-std`` clfuzz builds with (the program's, else
  ``-cl-std=CL1.2``, the default a device builds without one, OpenCL 3.0 API §5.8.6.5: written out
  because the tester otherwise adds the device's own version), ``require_device_extensions``
  (``cl_khr_fp64`` for a double, ...), ``need_image_support``, the kernel name and the work sizes
  (``local_size: NULL`` where clfuzz lets the driver choose);
- ``[test]``: the packed ``in`` argument (one typed array where every region has one type, else
  the bytes as unsigned words; floating values in hexadecimal, exact), ``out`` (zeros), each 2D
  image with its texels and format, each sampler argument, and one output buffer per kind of
  comparison (triage.piglit_lanes) with the expected values of the lanes the specification judges.

The kernel gains those output buffers as parameters and, after its statements, one line per
checked element: the work-item that wrote the element copies each checked lane of it (or its bits,
``as_uint``) into them. A build error is a test of the build alone; a crash or a failed enqueue a
test that builds and runs the kernel and compares nothing.
"""

from __future__ import annotations

import math
import re

import numpy as np

from campaign.jobs import c_options
from corpus.buckets import LANE_KINDS
from fuzz.emit.opencl_c import KERNEL_NAME, emit
from lang.constructs import requirements
from lang.ir import Program
from lang.layout import input_bytes, input_values, layout, sampler_arguments
from lang.types import scalar
from triage.piglit_lanes import BITS_TYPE, Encoding, encode, float_token
from triage.repro_script import checks

RUN_KINDS = ("crash", "runtime_error")
"""Kinds the test shows by running the kernel: it builds, runs and compares nothing."""
BUILD_KINDS = ("build_error",)
"""Kinds the test shows by building the kernel alone."""

EXTENSIONS = {"fp64": "cl_khr_fp64", "fp16": "cl_khr_fp16",
              "int64_atomics": "cl_khr_int64_base_atomics cl_khr_int64_extended_atomics"}
"""The device extensions a program's requirement names (``require_device_extensions``)."""
TESTER_ORDERS = frozenset({"R", "Rx", "A", "INTENSITY", "LUMINANCE", "RG", "RGx", "RA", "RGB", "RGBx", "RGBA",
                           "ARGB", "BGRA"})
"""The image channel orders the tester parses."""
TESTER_ADDRESSING = frozenset({"none", "clamp_to_edge", "clamp"})
"""The sampler addressing modes of a sampler argument the tester parses: its REPEAT and
MIRRORED_REPEAT patterns do not compile (``Invalid regular expression``), so it rejects them."""
WORD = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}
PER_LINE = 8  # values per line of an argument


def unexpressible(program: Program, kind: str) -> str | None:
    """What of ``program`` the tester cannot express, in one line (None: it can)."""
    if kind not in LANE_KINDS + RUN_KINDS + BUILD_KINDS:
        return f"a {kind} (the tester has no time limit: a hang would stop the job)" if kind == "timeout" else \
            f"a {kind} result"
    if kind in BUILD_KINDS:
        return None
    if program.shared:
        return "results that depend on the order of atomics (a buffer the work-items share)"
    for image in program.images:
        if image.dim != "2d":
            what = {"1d": "a 1D image", "1d_buffer": "a 1D image buffer", "3d": "a 3D image"}
            return f"{what.get(image.dim, 'an image array')} ({image.name}: the tester takes 2D images only)"
        if image.order not in TESTER_ORDERS:
            return f"image channel order {image.order} ({image.name}: not one the tester parses)"
    for s in sampler_arguments(program):
        if s.addressing not in TESTER_ADDRESSING:
            return (f"a sampler argument with addressing mode {s.addressing.upper()} ({s.name}: Debian 12's tester "
                    f"rejects it)")
    return None


def piglit_file(program: Program, ftz: frozenset[str], rows: list[dict], kind: str, name: str,
              fingerprint: dict) -> tuple[str, list[str]] | str:
    """The test file of ``program`` whose driver (``fingerprint``, its denormal mode ``ftz``) gave
    the disagreement ``rows`` of ``kind``, named ``name``; with the lanes left out (one line each).
    Or, where the tester cannot show it, why (one line)."""
    problem = unexpressible(program, kind)
    if problem is not None:
        return problem
    config = _config(program, name, fingerprint, run=kind not in BUILD_KINDS)
    if kind in BUILD_KINDS:
        return _file(config, emit(program)), []
    if kind in RUN_KINDS:
        return _file(config + ["", "[test]", "name: run", *_inputs(program)], emit(program)), []
    planned = _plan(program, ftz, rows)
    if isinstance(planned, str):
        return planned
    outputs, params, tail, left_out = planned
    test = ["", "[test]", "name: the lanes the specification judges", *_inputs(program), *outputs]
    return _file(config + test, emit(program, tuple(params), tuple(tail))), left_out


def _file(header: list[str], kernel: str) -> str:
    return "/*!\n" + "\n".join(header) + "\n!*/\n" + kernel


def _config(program: Program, name: str, fingerprint: dict, run: bool) -> list[str]:
    options = c_options(program, fingerprint)
    if "-cl-std=" not in options:
        options = " ".join(o for o in (options, "-cl-std=CL1.2") if o)
    needs = requirements(program) | program.requires & {"cl3.0", "generic_address_space"}
    version = 30 if "cl3.0" in needs else 20 if needs else 12
    lines = ["[config]", f"name: {re.sub(r'[/%#]', '-', name)}", f"clc_version_min: {version}",
             f"build_options: {options}"]
    extensions = " ".join(EXTENSIONS[r] for r in sorted(program.requires) if r in EXTENSIONS)
    lines += [f"require_device_extensions: {extensions}"] if extensions else []
    if not run:
        return lines
    lines += ["need_image_support: true"] if program.images else []
    local = f"{program.local_size} 0 0" if program.local_size else "NULL"
    return lines + [f"kernel_name: {KERNEL_NAME}", "dimensions: 1", f"global_size: {program.global_size} 0 0",
                    f"local_size: {local}"]


def _tokens(raw: bytes, names: list[str]) -> tuple[str, list[str]]:
    """Bytes holding values of the scalar types ``names`` as the tester's element type and values:
    the type itself where there is one (floating values exact in hexadecimal; NaNs as ``nan`` and
    ``-nan`` when they are the tester's), else unsigned words of the smallest size (bytes where
    there is no value)."""
    names = names or ["uchar"]
    if len(set(names)) == 1:
        s = scalar(names[0])
        values = np.frombuffer(raw, dtype=s.dtype)
        if not s.is_float:
            return s.name, [str(int(v)) for v in values]
        quiet = {int(b) for b in np.array([np.nan, -np.nan], dtype=s.dtype).view(s.bits_dtype)}
        bits = values.view(s.bits_dtype)
        if s.name != "half" and all(not math.isnan(v) or int(b) in quiet for v, b in zip(values, bits)):
            return s.name, [("-nan" if b >> (s.bits - 1) else "nan") if math.isnan(v) else float_token(float(v))
                            for v, b in zip(values, bits)]
        return BITS_TYPE[s.name], [str(int(b)) for b in bits]
    word = WORD[min(scalar(n).size for n in names)]
    return word, [str(int(v)) for v in np.frombuffer(raw, dtype=scalar(word).dtype)]


def _arg(key: str, head: str, tokens: list[str], tail: str = "") -> list[str]:
    """``key: head v1 v2 ...`` over lines of :data:`PER_LINE` values (the tester joins a line
    that ends with a backslash to the next)."""
    chunks = [" ".join(tokens[i:i + PER_LINE]) for i in range(0, len(tokens), PER_LINE)] or [""]
    lines = [f"{key}: {head} \\"] + [f"    {c} \\" for c in chunks[:-1]] + [f"    {chunks[-1]}{tail}"]
    return lines if len(tokens) > PER_LINE else [f"{key}: {head} {chunks[0]}{tail}"]


def _inputs(program: Program) -> list[str]:
    """The ``arg_in`` lines: ``in``, ``out``, then each image and each sampler argument."""
    lay, values = layout(program), input_values(program)
    types = {b.name: b.type.elem.name for b in program.buffers} | {"ctl": "uint"}
    regions = sorted(lay.inputs.values(), key=lambda r: r.offset)
    ctype, tokens = _tokens(input_bytes(program, values), [types[r.name] for r in regions])
    lines = ["# in: " + ", ".join(f"{r.name} ({types[r.name]}) at byte {r.offset}" for r in regions),
             *_arg("arg_in", f"0 buffer {ctype}[{len(tokens)}]", tokens),
             "# out: " + ", ".join(f"{r.name} at byte {r.offset}" for r in lay.outputs.values()),
             f"arg_in: 1 buffer uchar[{lay.out_bytes}] repeat 0"]
    for index, image in enumerate(program.images, start=2):
        ctype, tokens = _tokens(values[image.name].tobytes(), [image.storage.elem.name])
        vector = ctype + (str(image.channels) if image.channels > 1 else "")
        width, height = image.shape
        lines += _arg("arg_in", f"{index} image {vector}", tokens,
                      f" \\\n    image_type 2d image_width {width} image_height {height} \\\n"
                      f"    image_channel_order {image.order} image_channel_data_type {image.channel}")
    for index, s in enumerate(sampler_arguments(program), start=2 + len(program.images)):
        lines.append(f"arg_in: {index} sampler normalized_coords {int(s.normalized)} "
                     f"addressing_mode {s.addressing.upper()} filter_mode {s.filter.upper()}")
    return lines


def _plan(program: Program, ftz: frozenset[str],
          rows: list[dict]) -> tuple[list[str], list[str], list[str], list[str]] | str:
    """The checked lanes (triage.repro_script.checks) as output buffers: their ``arg_out`` lines,
    the kernel's extra parameters, the copies after its statements, the lanes left out; or why no
    lane the driver got wrong can be shown."""
    types = {b.name: b.type for b in program.buffers}
    wrong = {(r["buffer"], r["lane"]): int(r["actual"], 16) for r in rows if r["lane"] >= 0 and r.get("actual")}
    groups: dict[tuple[str, str], list[tuple[int, str, Encoding, dict]]] = {}
    left_out, shown = [], 0
    for c in checks(program, ftz, rows):
        t = types[c["buffer"]]
        found = encode(c, t.elem.name, wrong.get((c["buffer"], c["lane"])))
        if isinstance(found, str):
            left_out.append(found)
            continue
        shown += (c["buffer"], c["lane"]) in wrong
        element, component = divmod(c["lane"], t.mem_lanes)
        lane = f"{c['buffer']}[{element}]" + (f".s{component:x}" if t.is_vector else "")
        if found.form == "bits":
            lane = f"as_{found.ctype}({lane})"
            if found.mask != (1 << scalar(t.elem.name).bits) - 1:
                lane = f"({lane} & {found.mask:#x}{'UL' if found.ctype == 'ulong' else 'U'})"
        groups.setdefault((found.ctype, found.tolerance), []).append((element, lane, found, c))
    if not shown:
        return left_out[0] if left_out else "no lane the driver got wrong is one the specification judges"
    outputs, params, copies = [], [], {}
    for index, ((ctype, tolerance), lanes) in enumerate(groups.items()):
        arg = 2 + len(program.images) + len(sampler_arguments(program)) + index
        params.append(f"global {ctype}* restrict check{index}")
        for j, (element, lane, found, c) in enumerate(lanes):
            copies.setdefault(element, []).append(f"check{index}[{j}] = {lane};")
            allowed = c["allowed_text"] + (["any NaN"] if c["any_nan"] else []) + [f"[{a}, {b}]" for a, b, *_ in
                                                                                  c["ranges"]]
            outputs.append(f"# check{index}[{j}] = {lane}: {c['buffer']} lane {c['lane']} may be {' or '.join(allowed)}")
        outputs += [f"# rule: {rule}" for rule in dict.fromkeys(c["rule"] for *_, c in lanes)]
        outputs += _arg("arg_out", f"{arg} buffer {ctype}[{len(lanes)}]", [f.expect for _, _, f, _ in lanes],
                        f" tolerance {tolerance}" if tolerance else "")
    tail = ["/* clfuzz: the work-item that wrote each checked element copies its lanes out */",
            *(f"if (gid == {e}) {{ {' '.join(lines)} }}" for e, lines in sorted(copies.items()))]
    return outputs, params, tail, left_out
