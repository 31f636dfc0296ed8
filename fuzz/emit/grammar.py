"""The SPIR-V grammar, read from the official machine-readable files (Debian ``spirv-headers``).

Opcodes, enumerants and OpenCL.std instruction numbers come from
``spirv.core.grammar.json`` and ``extinst.opencl.std.100.grammar.json``; nothing here is a
hand-typed number. ``$CLFUZZ_SPIRV_GRAMMAR`` points at another folder holding those files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DEFAULT_FOLDER = "/usr/include/spirv/unified1"
CORE = "spirv.core.grammar.json"
OPENCL_STD = "extinst.opencl.std.100.grammar.json"


class GrammarMissing(RuntimeError):
    """The grammar files are not installed (one line saying what to do)."""


@dataclass(frozen=True)
class Grammar:
    magic: int
    version: tuple[int, int]
    opcodes: dict[str, int]
    enums: dict[str, dict[str, int]]  # operand kind -> enumerant -> value
    opencl_std: dict[str, int]  # OpenCL.std instruction name -> number

    def opcode(self, name: str) -> int:
        return self.opcodes[name]

    def enum(self, kind: str, name: str) -> int:
        return self.enums[kind][name]


def _read(folder: Path, name: str) -> dict:
    path = folder / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise GrammarMissing(
            f"SPIR-V grammar {path} not found: install Debian's spirv-headers (`bash setup.sh test` "
            f"does) or set CLFUZZ_SPIRV_GRAMMAR to a folder holding {name}"
        ) from None


@lru_cache(maxsize=None)
def grammar() -> Grammar:
    folder = Path(os.environ.get("CLFUZZ_SPIRV_GRAMMAR", DEFAULT_FOLDER))
    core, std = _read(folder, CORE), _read(folder, OPENCL_STD)
    enums = {
        kind["kind"]: {e["enumerant"]: int(str(e["value"]), 0) for e in kind.get("enumerants", [])}
        for kind in core["operand_kinds"]
        if kind["category"] in ("ValueEnum", "BitEnum")
    }
    return Grammar(
        magic=int(core["magic_number"], 16),
        version=(core["major_version"], core["minor_version"]),
        opcodes={i["opname"]: i["opcode"] for i in core["instructions"]},
        enums=enums,
        opencl_std={i["opname"]: i["opcode"] for i in std["instructions"]},
    )
