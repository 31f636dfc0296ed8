"""Subprocess helpers shared by the probe and the worker pool: run with a deadline, kill a group."""

from __future__ import annotations

import os
import signal
import subprocess


def describe_exit(returncode: int) -> str:
    """"killed by SIGSEGV" for a negative return code, else "exit code N"."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group led by ``proc`` (started with start_new_session=True).

    Call this before reaping ``proc``: while the leader is unreaped its group id cannot be reused.
    """
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: list[str], env: dict[str, str], timeout_s: float) -> tuple[int, bytes, bytes]:
    """Run ``argv`` in its own session; on timeout kill its whole group and raise TimeoutExpired."""
    proc = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        raise
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise
    kill_group(proc)  # anything the child left running in its group
    return proc.returncode, out, err
