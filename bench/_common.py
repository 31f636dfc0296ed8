"""Shared helpers for the benchmarks: the repository on sys.path, a fixed program sample, and a
measurement run in a process of its own on another checkout."""

from __future__ import annotations

import json
import subprocess
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.strategies import Caps, conversion_programs, sample  # noqa: E402
from lang.ir import Program  # noqa: E402
from lang.policy import Policy  # noqa: E402


def sample_programs(n: int, caps: Caps, policy: Policy, seed: int = 0) -> list[Program]:
    """The first ``n`` programs a campaign with this seed and policy would generate."""
    return sample(conversion_programs(caps, policy), n, seed)


def child_json(code: str, root: Path) -> dict:
    """Run ``code`` (Python that prints a JSON object last) in a process of its own in the checkout
    at ``root``, and return that object: each side of a before/after comparison runs its own code."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(fn, repeat: int = 3) -> float:
    """The fastest of ``repeat`` timed calls of ``fn``, in seconds."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))
