"""The local AWS's write-ahead journal: every write it answers is on disk first.

The snapshot (``data.json``) is the state at one moment; the journal holds each
write after it, in the order the writes were applied.  A write is appended to
the journal and the journal is synced (``fdatasync``) before its answer leaves
the local AWS, so a write the app was told succeeded survives ``kill -9``: on
start the snapshot is loaded and the journal replayed over it (SQLite's WAL and
Redis's AOF work this way).

Group commit: the record is appended while the local AWS's lock is held (so the
journal's order is the order of application), the sync happens after the lock
is released, and one sync covers every record appended before it, so writers
arriving together share one sync.  A write's answer waits for the sync that
covers it; a read may see a write whose sync is still running (that write was
not acknowledged yet, and nothing acknowledged after it can depend on it
without being journaled after it).

Records: ``<length:4><crc32:4><JSON>``, big-endian.  A record cut short by a
crash (its write was never answered) fails its length or checksum and ends the
replay.  Segments (``journal-<n>.log``) are rotated when a snapshot is taken;
the snapshot names the first segment to replay, and older ones are deleted once
the snapshot is safely on disk.
"""
from __future__ import annotations

import base64
import json
import os
import re
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

_HEADER = struct.Struct(">II")
_SEGMENT = re.compile(r"^journal-(\d{8})\.log$")
FILE_MODE = 0o600        # the journal holds what the tables hold: keys' hashes, webhook secrets


def segment_name(number: int) -> str:
    return f"journal-{number:08d}.log"


def encode(request: dict) -> bytes:
    payload = json.dumps({**request, "body": base64.b64encode(request["body"]).decode("ascii")},
                         separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def decode(payload: bytes) -> dict:
    request = json.loads(payload)
    request["body"] = base64.b64decode(request["body"])
    return request


class Journal:
    def __init__(self, directory: Path):
        self.directory = directory
        self._fd: int | None = None
        self.segment = 0
        self._written = 0          # records appended (all segments)
        self._synced = 0           # records known to be on disk
        self._sync_lock = threading.Lock()
        self.syncs = 0             # how many fdatasync calls (the benchmark divides by it)

    # -- writing ------------------------------------------------------------
    def open(self, segment: int) -> None:
        """Starts appending to segment ``segment`` (a new, empty file)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / segment_name(segment)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, FILE_MODE)
        os.fchmod(fd, FILE_MODE)
        sync_directory(self.directory)       # the new file's name is durable too
        self._fd, self.segment = fd, segment

    def append(self, request: dict) -> int:
        """Appends one write (call with the local AWS's lock held); returns its number for ``sync``."""
        assert self._fd is not None, "journal not open"
        record = encode(request)
        written = 0
        while written < len(record):
            written += os.write(self._fd, record[written:])
        self._written += 1
        return self._written

    def sync(self, number: int) -> None:
        """Returns once record ``number`` is on disk (one fdatasync covers every record appended before it)."""
        with self._sync_lock:
            if self._synced >= number or self._fd is None:
                return
            upto = self._written
            os.fdatasync(self._fd)
            self.syncs += 1
            self._synced = upto

    def rotate(self) -> int:
        """Syncs and closes the current segment and starts the next one (call with the local AWS's lock held,
        at the moment the snapshot is read).  Returns the new segment's number: the first to replay."""
        with self._sync_lock:
            if self._fd is not None:
                os.fdatasync(self._fd)
                self.syncs += 1
                os.close(self._fd)
                self._fd = None
            self._synced = self._written
            self.open(self.segment + 1)
            return self.segment

    def close(self) -> None:
        with self._sync_lock:
            if self._fd is not None:
                os.fdatasync(self._fd)
                os.close(self._fd)
                self._fd = None

    def drop_before(self, segment: int) -> None:
        """Deletes the segments older than ``segment`` (their writes are in a snapshot on disk)."""
        for number, path in self.segments():
            if number < segment:
                path.unlink(missing_ok=True)

    # -- reading ------------------------------------------------------------
    def segments(self) -> list[tuple[int, Path]]:
        if not self.directory.exists():
            return []
        found = [(int(m.group(1)), p) for p in self.directory.iterdir() if (m := _SEGMENT.match(p.name))]
        return sorted(found)

    def records(self, first_segment: int) -> Iterator[dict]:
        """The journaled writes from ``first_segment`` on, in order; stops at a record cut short by a crash."""
        for number, path in self.segments():
            if number < first_segment:
                continue
            data = path.read_bytes()
            offset = 0
            while offset + _HEADER.size <= len(data):
                length, crc = _HEADER.unpack_from(data, offset)
                payload = data[offset + _HEADER.size: offset + _HEADER.size + length]
                if len(payload) < length or zlib.crc32(payload) != crc:
                    return          # torn: written but never synced, so never answered
                yield decode(payload)
                offset += _HEADER.size + length
            if offset != len(data):
                return


def sync_directory(directory: Path) -> None:
    """fsync a directory, so that a file created or renamed in it survives a crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
