"""The harness's queue of tasks waiting for a worker process (campaign.pool): a queue per target,
served in turn."""

from __future__ import annotations

from collections import deque
from typing import Any


class Turns:
    """Tasks waiting, a queue per owner, handed out one owner after another: an owner with many
    tasks waiting has the next one only after every other owner waiting has had one. An owner's
    ``first`` tasks go before its others: the draws and expectations its target waits for
    (campaign.pipeline: its next program, an extension's inputs) before the judging of what it ran,
    which its programs in flight bound (measured on an H100 machine: with a GPU's extensions of 12
    parts, its next program's expectations queued behind their windows and it waited for the
    harness half of its time)."""

    def __init__(self) -> None:
        self._queues: dict[str, tuple[deque, deque]] = {}  # owner -> (first, the rest)
        self._turn: deque[str] = deque()  # owners with tasks waiting, in turn

    def __bool__(self) -> bool:
        return bool(self._turn)

    def put(self, owner: str, task: Any, first: bool = False) -> None:
        self._queues.setdefault(owner, (deque(), deque()))[0 if first else 1].append(task)
        if owner not in self._turn:
            self._turn.append(owner)

    def next(self) -> Any:
        """The task whose turn it is (IndexError if none waits)."""
        owner = self._turn.popleft()
        first, rest = self._queues[owner]
        task = (first or rest).popleft()
        if first or rest:
            self._turn.append(owner)
        return task
