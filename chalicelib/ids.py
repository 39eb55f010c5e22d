"""Time-ordered unique ids (ULID layout: 48-bit milliseconds + 80 random bits).

Sorting the Crockford base32 text sorts by creation time, which is what the
log and pending-reply sort keys need; ids made in the same millisecond by one
process stay strictly increasing.
"""
from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = -1
_last_rand = 0


def _encode(value: int, length: int) -> str:
    out = []
    for _ in range(length):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))


def new_id(now_ms: int | None = None) -> str:
    global _last_ms, _last_rand
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    with _lock:
        if ms <= _last_ms:
            ms = _last_ms
            rand = _last_rand + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last_ms, _last_rand = ms, rand
    return _encode(ms, 10) + _encode(rand & ((1 << 80) - 1), 16)


def forget() -> None:
    """Forgets the last id made: instances restored from one snapshot (SnapStart) would otherwise all
    go on from the same millisecond and random part, and could make the same next id."""
    global _last_ms, _last_rand
    with _lock:
        _last_ms, _last_rand = -1, 0


def id_time_ms(value: str) -> int:
    ms = 0
    for ch in value[:10]:
        ms = ms * 32 + _ALPHABET.index(ch)
    return ms


def iso_from_ms(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + ".%03dZ" % (ms % 1000)
