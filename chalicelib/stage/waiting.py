"""How a long-polling `fetch_replies` learns that a reply may have arrived.

Two ways, one interface (``ReplyWaiter``):

* ``ReplySignal`` — in one process (the local runtime), the reply write itself
  notifies: ``StageService.reply`` calls ``published`` after its write, which
  wakes every waiter on that stage at once.  No timer, no re-query while idle.
  Listeners (the local webhook worker) hear of each reply the same way.
* ``BackoffPolling`` — across processes (Lambda: the reply and the waiting
  fetch run in different invocations, which cannot signal each other), the
  waiter re-queries after a pause that starts short and doubles up to a cap:
  fast for a reply that comes soon, cheap for one that does not.

The caller takes a ``mark`` before its own check for unread replies and waits
for a change since that mark, so a reply written between the check and the
wait is never slept through.

A server that can see its caller's connection (the local runtime) installs a
probe for the request's thread (``watch_client``): a waiting fetch whose
caller has gone stops waiting and claims nothing for it.  API Gateway and
Lambda cannot see that; there the lease brings such replies back.
"""
from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Protocol

from .store import ReplyRecord

# The most a fetch may wait: API Gateway ends a request after 29 s, and the
# client needs headroom for its own round trip.
MAX_WAIT_S = 20.0


class ReplyWaiter(Protocol):
    closed: bool

    def admit(self, stage_id: str) -> bool:
        """Whether a fetch on ``stage_id`` may wait now (``release`` gives the slot back)."""
        ...

    def release(self, stage_id: str) -> None: ...

    def mark(self, stage_id: str) -> object: ...

    def wait(self, stage_id: str, mark: object, timeout: float) -> object | None:
        """Returns when a reply may have arrived since ``mark`` — with the mark to wait from next — or
        None when ``timeout`` passed first."""
        ...


Listener = Callable[[str, ReplyRecord], None]

# How often a waiting fetch looks at its caller's connection (the local runtime only).
CLIENT_CHECK_S = 0.25
_request = threading.local()


def watch_client(probe: Callable[[], bool] | None) -> None:
    """Installs (or with None removes) the current request thread's "has the caller gone?" probe."""
    _request.gone = probe


def client_gone() -> bool:
    """Whether the server knows that the caller of this thread's request has gone (closed its connection)."""
    probe = getattr(_request, "gone", None)
    if probe is None:
        return False
    try:
        return bool(probe())
    except Exception:  # noqa: BLE001 - a probe that fails says nothing: keep serving
        return False


class ReplySignal:
    """In-process wake-up on the reply write: a condition variable and a counter per stage.

    Each waiting fetch holds a thread of the one process, so waits are admitted up to
    ``max_per_stage`` per stage (one agent key) and ``max_total`` in all; past either, a fetch answers
    at once instead of waiting (docs/scaling.md)."""

    HISTORY = 256

    def __init__(self, max_per_stage: int = 16, max_total: int = 256):
        self.max_per_stage = max_per_stage
        self.max_total = max_total
        self._waiting: dict[str, int] = {}
        self._cond = threading.Condition()
        self._counts: dict[str, int] = {}
        # The latest replies per stage with their count, so a woken fetch can claim them without
        # querying for them first.
        self._recent: dict[str, collections.deque] = {}
        self._listeners: list[Listener] = []
        self._closed = False

    def mark(self, stage_id: str) -> int:
        with self._cond:
            return self._counts.get(stage_id, 0)

    @property
    def closed(self) -> bool:
        return self._closed

    def admit(self, stage_id: str) -> bool:
        """Takes a waiting slot for ``stage_id``; False when the stage's or the process's are all taken."""
        with self._cond:
            if self._waiting.get(stage_id, 0) >= self.max_per_stage or \
                    sum(self._waiting.values()) >= self.max_total:
                return False
            self._waiting[stage_id] = self._waiting.get(stage_id, 0) + 1
            return True

    def release(self, stage_id: str) -> None:
        with self._cond:
            left = self._waiting.get(stage_id, 0) - 1
            if left > 0:
                self._waiting[stage_id] = left
            else:
                self._waiting.pop(stage_id, None)

    def wait(self, stage_id: str, mark: object, timeout: float) -> int | None:
        end = time.monotonic() + max(0.0, timeout)
        watched = getattr(_request, "gone", None) is not None
        with self._cond:
            while True:
                left = end - time.monotonic()
                # In slices while a probe watches the caller: a caller that has gone ends the wait.
                changed = self._cond.wait_for(
                    lambda: self._closed or self._counts.get(stage_id, 0) != mark,
                    timeout=max(0.0, min(left, CLIENT_CHECK_S) if watched else left))
                if changed and not self._closed:
                    # Taken under the lock, before the caller looks again: nothing written later is missed.
                    return self._counts.get(stage_id, 0)
                if self._closed or left <= CLIENT_CHECK_S or not watched:
                    return None
                self._cond.release()
                try:
                    gone = client_gone()
                finally:
                    self._cond.acquire()
                if gone:
                    return None

    def published(self, stage_id: str, reply: ReplyRecord) -> None:
        """Called after a reply was written: wakes the stage's waiters and tells the listeners."""
        with self._cond:
            count = self._counts[stage_id] = self._counts.get(stage_id, 0) + 1
            self._recent.setdefault(stage_id, collections.deque(maxlen=self.HISTORY)).append((count, reply))
            self._cond.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            # A listener only queues work; it must never fail or slow the player's reply.
            try:
                listener(stage_id, reply)
            except Exception:  # noqa: BLE001
                pass

    def published_since(self, stage_id: str, mark: object) -> list[ReplyRecord] | None:
        """The replies published after ``mark``, oldest first; None when they are no longer all known."""
        if not isinstance(mark, int):
            return None         # not one of this signal's marks
        with self._cond:
            recent = list(self._recent.get(stage_id, ()))
        newer = [(count, reply) for count, reply in recent if count > mark]
        if not newer or newer[0][0] != mark + 1:
            return None
        return [reply for _, reply in newer]

    def listen(self, listener: Listener) -> None:
        with self._cond:
            self._listeners.append(listener)

    def close(self) -> None:
        """Releases every waiter at once (shutdown: a long-poll answers [] instead of holding the drain)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class _Pause:
    def __init__(self, seconds: float):
        self.seconds = seconds


class BackoffPolling:
    """Re-query after 0.05 s, 0.1 s, 0.2 s … up to ``cap`` seconds apart (each fetch its own backoff)."""

    closed = False

    def __init__(self, first: float = 0.05, cap: float = 0.5, sleep: Callable[[float], None] = time.sleep):
        self.first = first
        self.cap = cap
        self._sleep = sleep

    def admit(self, stage_id: str) -> bool:
        # One request per Lambda instance: the long-poll function's own concurrency is the cap (template).
        return True

    def release(self, stage_id: str) -> None:
        pass

    def mark(self, stage_id: str) -> _Pause:
        return _Pause(self.first)

    def wait(self, stage_id: str, mark: object, timeout: float) -> _Pause | None:
        if timeout <= 0:
            return None
        assert isinstance(mark, _Pause)
        self._sleep(min(mark.seconds, timeout))
        mark.seconds = min(self.cap, mark.seconds * 2)
        return mark

    def queries_per_wait(self, seconds: float) -> int:
        """How many queries one empty wait of ``seconds`` makes, the first included (for the cost figures)."""
        total, pause, count = 0.0, self.first, 1
        while total < seconds:
            total += pause
            count += 1
            pause = min(self.cap, pause * 2)
        return count
