"""OpenCL drivers: discovery and fingerprints, and one worker subprocess per device.

The main process never loads a driver library: probes and workers are subprocesses that each see
one driver through a private ``OCL_ICD_VENDORS`` folder (``icd``), so a driver that crashes or
hangs costs a recorded Result, never the campaign.
"""

from .discovery import ProbeWarning, Target, UnknownDriver, discover, select
from .listing import describe, table
from .pool import Worker, WorkerStartError
from .protocol import BufferArg, Job, LocalArg, Mapped, Result, ScalarArg

__all__ = [
    "BufferArg",
    "Job",
    "LocalArg",
    "Mapped",
    "ProbeWarning",
    "Result",
    "ScalarArg",
    "Target",
    "UnknownDriver",
    "Worker",
    "WorkerStartError",
    "describe",
    "discover",
    "select",
    "table",
]
