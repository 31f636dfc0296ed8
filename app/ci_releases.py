"""A driver release beside the system's driver, for ``clfuzz ci --drivers pocl-6.0`` (app.ci): which
system target's known bugs a release target is judged against, and how a known bug the release no
longer shows is reported ("FIXED in pocl 6.0 (present in pocl 3.1)")."""

from __future__ import annotations

from dataclasses import dataclass

from fuzz.drivers import Target
from fuzz.drivers.releases import version_of


@dataclass(frozen=True)
class Counterpart:
    """The system driver a release target stands beside: the target name the regression files key
    its bugs by (``key``), and both drivers as "lineage major.minor" (``pocl 6.0``, ``pocl 3.1``)."""

    key: str
    release: str
    system: str

    @property
    def gone(self) -> str:
        """How a known bug this release no longer shows is reported."""
        return f"FIXED in {self.release} (present in {self.system})"


def counterpart(target: Target, system: list[Target]) -> Counterpart | None:
    """The system's target of ``target``'s lineage and front end (None for a system target); named
    by lineage and path when the system has no such driver."""
    if not target.release:
        return None
    same = next((t for t in system if not t.release and t.lineage == target.lineage and t.path == target.path), None)
    key = same.name if same else target.name.replace(target.driver, target.lineage, 1)
    return Counterpart(key, f"{target.lineage} {version_of(target.fingerprint)}",
                       f"{target.lineage} {version_of(same.fingerprint)}" if same else f"the system's {target.lineage}")
