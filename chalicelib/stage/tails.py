"""The log tails a process remembers, by the stage's log version.

A scenario turn needs the last entries of the stage's log for the view it answers with. The process that
wrote a stage's last turn knows them exactly (what it read, plus what it wrote), so its next turn on that
stage reads no log: the tail is kept under the version the write left, and used only while the stage is
still at that version.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from .store import LogRecord

# Stages whose log tail a process remembers (the least recently used is dropped first).
TAILS = 256


class LogTails:
    def __init__(self, size: int = TAILS) -> None:
        self._size = size
        self._tails: OrderedDict[str, tuple[str, list[LogRecord]]] = OrderedDict()
        self._lock = threading.Lock()

    def at(self, stage_id: str, version: str) -> list[LogRecord] | None:
        """The remembered tail of the stage's log at ``version``, or None."""
        with self._lock:
            hit = self._tails.get(stage_id)
        return list(hit[1]) if hit is not None and hit[0] == version else None

    def keep(self, stage_id: str, version: str, log: list[LogRecord]) -> None:
        with self._lock:
            self._tails[stage_id] = (version, list(log))
            self._tails.move_to_end(stage_id)
            while len(self._tails) > self._size:
                self._tails.popitem(last=False)
