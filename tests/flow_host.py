"""The tests' name for the independent host-C evaluation of flow programs, which ``clfuzz audit``
uses too: triage.flow_host."""

from triage.flow_host import host_source, run_host

__all__ = ["host_source", "run_host"]
