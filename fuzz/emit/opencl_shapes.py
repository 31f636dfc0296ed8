"""A shaped program's structure in OpenCL C (lang.shapes declares each part and what it computes).

:func:`index_lines` replaces the kernel's ``const size_t gid = get_global_id(0);`` by the steps
that compute the element index ``x`` (kernel scope: local arrays and barriers are allowed there,
§6.7.2, §6.15.8), :func:`wrap_lines` puts the statements' lines inside the wraps, and
:func:`helpers` writes the functions the ``call`` steps call, before the kernel.
"""

from __future__ import annotations

from typing import Callable

from lang.ir import Program
from lang.layout import Layout
from lang.shapes import ARRAY, KINDS, Part, expected

PAIR = "typedef struct { uint a; uint b; } clfuzz_pair;"


def _moved(i: int, value: str, part: Part, program: Program) -> list[str]:
    """``x`` moved by ``value``'s difference from the value the generator knows (0 when right)."""
    k = expected(part, program.local_size)
    return [f"x = (x + (size_t)({value} - {k}u)) % {program.global_size}u;"]


def _loop(form: str, i: int, n: str, body: list[str], var: str = "j") -> list[str]:
    """``for``/``while``/``do`` over ``{var}{i}`` from 0 while below ``n``; the body sees the
    iteration's number as ``k{i}`` (lang.shapes.carried_sum spells out each form)."""
    j, k = f"{var}{i}", f"k{i}"
    if form == "for":
        return [f"for (uint {j} = 0; {j} < {n}; {j}++) {{", f"    const uint {k} = {j};", *_indent(body), "}"]
    head = [f"uint {j} = 0;"]
    inner = [f"    const uint {k} = {j}++;", *_indent(body)]
    if form == "while":
        return ["{", *_indent([*head, f"while ({j} < {n}) {{", *inner, "}"]), "}"]
    return ["{", *_indent([*head, "do {", *inner, f"}} while ({j} < {n});"]), "}"]


def _indent(lines: list[str]) -> list[str]:
    return [f"    {line}" for line in lines]


def _carried(i: int, o: int, part: Part, program: Program) -> list[str]:
    body = [f"if (k{i} == ctl[{o + 2}]) break;", f"if ((k{i} & 3u) == ctl[{o + 3}]) continue;",
            f"s{i} += ctl[{o + 1}] ^ k{i};"]
    return [f"uint s{i} = 0;", *_loop(part.form, i, f"ctl[{o}]", body), *_moved(i, f"s{i}", part, program)]


def _exchange(i: int, o: int, part: Part, program: Program) -> list[str]:
    mask = program.local_size - 1
    return [f"local uint sh{i}[{program.local_size}];", f"sh{i}[slid] = (uint)x;", "barrier(CLK_LOCAL_MEM_FENCE);",
            f"x = sh{i}[(slid * ctl[{o}] + ctl[{o + 1}]) & {mask}u];"]


def _rounds(i: int, o: int, part: Part, program: Program) -> list[str]:
    mask = program.local_size - 1
    return [f"local uint sh{i}[{program.local_size}];",
            f"for (uint j{i} = 0; j{i} < ctl[{o}]; j{i}++) {{",
            f"    sh{i}[slid] = (uint)x;", "    barrier(CLK_LOCAL_MEM_FENCE);",
            f"    x = sh{i}[(slid * ctl[{o + 1}] + ctl[{o + 2}] + j{i}) & {mask}u];", "    barrier(CLK_LOCAL_MEM_FENCE);",
            "}"]


def _tree(i: int, o: int, part: Part, program: Program) -> list[str]:
    ls = program.local_size
    return [f"local uint sh{i}[{ls}];", f"sh{i}[slid] = slid * ctl[{o}] + ctl[{o + 1}];", "barrier(CLK_LOCAL_MEM_FENCE);",
            f"for (uint h{i} = {ls // 2}u; h{i} > 0; h{i} >>= 1) {{",
            f"    if (slid < h{i}) sh{i}[slid] += sh{i}[slid + h{i}];", "    barrier(CLK_LOCAL_MEM_FENCE);", "}",
            *_moved(i, f"sh{i}[0]", part, program)]


def _call(i: int, o: int, part: Part, program: Program) -> list[str]:
    pair = [f"clfuzz_pair q{i};", f"q{i}.a = ctl[{o}];", f"q{i}.b = ctl[{o + 1}];"]
    call = {
        "add": [f"uint ct{i} = ctl[{o}];", f"clfuzz_call{i}(&ct{i}, ctl[{o + 1}]);"],
        "global": [f"const uint ct{i} = clfuzz_call{i}(ctl, {o}u);"],
        "struct": [*pair, f"const uint ct{i} = clfuzz_call{i}(q{i});"],
        "swap": [*pair, f"clfuzz_call{i}(&q{i});", f"const uint ct{i} = q{i}.a - q{i}.b;"],
        "local": [f"local uint sh{i}[{program.local_size}];", f"sh{i}[slid] = ctl[{o}];",
                  f"clfuzz_call{i}(&sh{i}[slid], ctl[{o + 1}]);", f"const uint ct{i} = sh{i}[slid];"],
    }
    return [*call["add" if part.form in ("noinline", "generic") else part.form], *_moved(i, f"ct{i}", part, program)]


def _helper(i: int, part: Part) -> list[str]:
    """The function a ``call`` step calls (program scope, before the kernel)."""
    name = f"clfuzz_call{i}"
    return {
        "add": [f"static uint {name}(private uint* p, uint v) {{ *p += v; return *p; }}"],
        "noinline": [f"__attribute__((noinline)) static uint {name}(private uint* p, uint v) {{ *p += v; return *p; }}"],
        "global": [f"static uint {name}(global const uint* c, uint k) {{ return c[k] + c[k + 1]; }}"],
        "struct": [f"static uint {name}(clfuzz_pair p) {{ return p.a - p.b; }}"],
        "swap": [f"static void {name}(private clfuzz_pair* p) {{ const uint t = p->a; p->a = p->b; p->b = t; }}"],
        "generic": [f"static uint {name}(uint* p, uint v) {{ *p += v; return *p; }}"],  # generic (§6.7.1)
        "local": [f"static uint {name}(local uint* p, uint v) {{ *p += v; return *p; }}"],
    }[part.form]


def _array(i: int, o: int, part: Part, program: Program) -> list[str]:
    return [f"uint ar{i}[{ARRAY}];", f"for (uint j{i} = 0; j{i} < {ARRAY}u; j{i}++) ar{i}[j{i}] = ctl[{o}] + j{i} * j{i};",
            *_moved(i, f"ar{i}[ctl[{o + 1}] & {ARRAY - 1}u]", part, program)]


def _select(i: int, o: int, part: Part, program: Program) -> list[str]:
    return [f"x = ctl[{o}] < ctl[{o + 1}] ? x : (x + 1) % {program.global_size}u;"]


Step = Callable[[int, int, Part, Program], list[str]]
STEPS: dict[str, Step] = {"carried": _carried, "exchange": _exchange, "rounds": _rounds, "tree": _tree,
                          "call": _call, "array": _array, "select": _select}


def _if_uniform(i: int, o: int, part: Part, inner: list[str], dead: list[str]) -> list[str]:
    if part.form == "then":
        return [f"if (ctl[{o}] == ctl[{o + 1}]) {{", *_indent(inner), "} else {", *_indent(dead), "}"]
    return [f"if (ctl[{o}] != ctl[{o + 1}]) {{", *_indent(dead), "} else {", *_indent(inner), "}"]


def _if_divergent(i: int, o: int, part: Part, inner: list[str], dead: list[str]) -> list[str]:
    ids = {"lid": "get_local_id(0)", "gid": "get_global_id(0)", "group": "get_group_id(0)"}[part.form]
    return [f"if ({ids} < ctl[{o}]) {{", *_indent(inner), "} else {", *_indent(inner), "}"]


def _loop_wrap(i: int, o: int, part: Part, inner: list[str], dead: list[str]) -> list[str]:
    form, mode = part.form.split("-")
    body = {"once": [f"if (k{i} == ctl[{o + 1}]) {{", *_indent(inner), "}"],
            "break": [f"if (k{i} == ctl[{o + 1}]) {{", *_indent(inner), "    break;", "}"],
            "every": inner}[mode]
    return _loop(form, i, f"ctl[{o}]", body, var="w")


def _switch(i: int, o: int, part: Part, inner: list[str], dead: list[str]) -> list[str]:
    v = part.words[0]
    return [f"switch (ctl[{o}]) {{", f"case {v}u: {{", *_indent(inner), "    break;", "}",
            f"case {v ^ 1}u: {{", *_indent(dead), "    break;", "}", "default: {", *_indent(dead), "    break;", "}", "}"]


def _dead(i: int, o: int, part: Part, inner: list[str], dead: list[str]) -> list[str]:
    block = ["return;"] if part.form == "return" else dead
    return [f"if (ctl[{o}] == ctl[{o + 1}]) {{", *_indent(block), "}", *inner]


Wrap = Callable[[int, int, Part, list[str], list[str]], list[str]]
WRAPS: dict[str, Wrap] = {"if-uniform": _if_uniform, "if-divergent": _if_divergent, "loop": _loop_wrap,
                          "switch": _switch, "dead": _dead}
assert set(STEPS) | set(WRAPS) == set(KINDS), "the OpenCL C emitter writes every kind of lang.shapes.KINDS"


def helpers(program: Program) -> list[str]:
    """Program-scope declarations the steps need: the pair struct and each call's function."""
    calls = [(i, p) for i, p in enumerate(program.shape.steps) if p.kind == "call"] if program.shape else []
    if not calls:
        return []
    return [PAIR, *(line for i, p in calls for line in _helper(i, p))]


def index_lines(program: Program, lay: Layout) -> list[str]:
    """The kernel-scope lines that define ``gid``, the element index of the statements."""
    if program.shape is None:
        return ["const size_t gid = get_global_id(0);"]
    shape = program.shape
    lines = [f"global const uint* ctl = (global const uint*)(in + {lay.inputs['ctl'].offset});",
             "const uint slid = (uint)get_local_id(0);", "size_t x = get_global_id(0);"]
    for i, (part, o) in enumerate(zip(shape.steps, shape.offsets())):
        lines += STEPS[part.kind](i, o, part, program)
    return [*lines, "const size_t gid = x;"]


def wrap_lines(program: Program, inner: list[str]) -> list[str]:
    """The statements' lines inside the shape's wraps (outermost first)."""
    if program.shape is None:
        return inner
    shape = program.shape
    dead = [f"{b.name}[gid] = ({b.type.c_name})(0);" for b in program.outputs]
    offsets = shape.offsets()[len(shape.steps):]
    for i, (part, o) in reversed(list(enumerate(zip(shape.wraps, offsets)))):
        inner = WRAPS[part.kind](i, o, part, inner, dead)
    return inner
