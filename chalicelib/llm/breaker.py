"""A circuit breaker per model server: a server that keeps failing is not asked again for a while.

A cold or overloaded endpoint answers every call with a timeout.  Without a breaker each turn waits the
whole timeout before it falls back, and every waiting turn holds a Lambda execution: a few turns per
second are enough to fill the API function's concurrency, and then every route is throttled with it.
With one, the server is asked again only after ``open_seconds``:

``closed``
    Calls go through.  ``failures`` server-side failures in a row (timeout, unreachable, unavailable:
    the server is not serving) open the breaker; any answer, even a rejected request, closes the count.
``open``
    Calls fail at once with `ErrorKind.CIRCUIT_OPEN` and never reach the server: the classifier answers
    なし at once (and ``lexical+<model>`` keeps the lexical reading), so the turn costs no wait.
``half_open``
    After ``open_seconds`` one call goes through as a probe while the others still fail at once; its
    success closes the breaker, its failure opens it for another ``open_seconds``.

One breaker per server (an endpoint name, a base URL) and per process, shared by every backend built for
it: the classifier is built per scenario, and the expression judge may use the same endpoint.  Each Lambda
instance learns on its own, so an instance that just started asks the server once more.  State changes
go to the listeners (``on_change``): `chalicelib.context` hands them to the metrics, which this layer does
not import.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from .errors import ErrorKind, ModelCallError

CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"
STATES = (CLOSED, OPEN, HALF_OPEN)

DEFAULT_FAILURES = 3
DEFAULT_OPEN_SECONDS = 30.0
# Failures that say the server is not serving; an answer the server gave (a 4xx, a bad label) is not one.
COUNTED = (ErrorKind.TIMEOUT, ErrorKind.UNREACHABLE, ErrorKind.UNAVAILABLE)

T = TypeVar("T")
Listener = Callable[[str, str, str], None]      # (server, old state, new state)


class CircuitBreaker:
    def __init__(self, server: str, *, failures: int = DEFAULT_FAILURES, open_seconds: float = DEFAULT_OPEN_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if failures < 1:
            raise ValueError(f"a circuit breaker opens after at least one failure, not {failures}")
        if open_seconds <= 0:
            raise ValueError(f"a circuit breaker stays open a positive time, not {open_seconds}")
        self.server = server
        self.failures = int(failures)
        self.open_seconds = float(open_seconds)
        self._clock = clock
        self._lock = threading.Lock()
        self._state = CLOSED
        self._in_a_row = 0
        self._opened_at = 0.0
        self._probing = False

    @property
    def state(self) -> str:
        """The state a call made now would meet (``open`` turns ``half_open`` when its time is up)."""
        with self._lock:
            if self._state == OPEN and self._clock() - self._opened_at >= self.open_seconds:
                return HALF_OPEN
            return self._state

    def call(self, attempt: Callable[[], T]) -> T:
        """Run `attempt` unless the breaker is open; count how it ends."""
        self._admit()
        try:
            result = attempt()
        except ModelCallError as exc:
            self._ended(failed=exc.kind in COUNTED)
            raise
        except BaseException:
            self._ended(failed=None)        # no verdict on the server (a bug, an interrupt): only the probe ends
            raise
        self._ended(failed=False)
        return result

    def _admit(self) -> None:
        change = None
        with self._lock:
            if self._state == OPEN:
                waited = self._clock() - self._opened_at
                if waited < self.open_seconds:
                    raise self._refusal(f"next probe in {self.open_seconds - waited:.1f}s")
                change = (self._state, HALF_OPEN)
                self._state, self._probing = HALF_OPEN, True
            elif self._state == HALF_OPEN:
                if self._probing:
                    raise self._refusal("a probe is under way")
                self._probing = True
        if change:
            _notify(self.server, *change)

    def _refusal(self, when: str) -> ModelCallError:
        return ModelCallError(ErrorKind.CIRCUIT_OPEN,
                              f"{self.server} not asked: {self.failures} failures in a row opened the circuit; {when}")

    def _ended(self, *, failed: bool | None) -> None:
        change = None
        with self._lock:
            probe, self._probing = self._state == HALF_OPEN, False
            if failed is None:
                pass
            elif not failed:
                self._in_a_row = 0
                if self._state != CLOSED:
                    change = (self._state, CLOSED)
                    self._state = CLOSED
            else:
                self._in_a_row += 1
                if probe or (self._state == CLOSED and self._in_a_row >= self.failures):
                    change = (self._state, OPEN)
                    self._state, self._opened_at = OPEN, self._clock()
        if change:
            _notify(self.server, *change)


# ---------------------------------------------------------------- one per server, per process

_breakers: dict[str, CircuitBreaker] = {}
_listeners: list[Listener] = []
_registry_lock = threading.Lock()


def for_server(server: str, *, failures: int = DEFAULT_FAILURES,
               open_seconds: float = DEFAULT_OPEN_SECONDS) -> CircuitBreaker | None:
    """The process's breaker for `server` (made on first use); None when ``failures`` is 0 (no breaker)."""
    if failures <= 0:
        return None
    with _registry_lock:
        breaker = _breakers.get(server)
        if breaker is None or (breaker.failures, breaker.open_seconds) != (failures, float(open_seconds)):
            breaker = _breakers[server] = CircuitBreaker(server, failures=failures, open_seconds=open_seconds)
        return breaker


def on_change(listener: Listener) -> None:
    """Call `listener(server, old, new)` on every state change of every breaker (added once)."""
    with _registry_lock:
        if listener not in _listeners:
            _listeners.append(listener)


def forget(*, listeners: bool = False) -> None:
    """Drops every breaker, and with ``listeners`` every listener (tests; a process that starts over)."""
    with _registry_lock:
        _breakers.clear()
        if listeners:
            _listeners.clear()


def _notify(server: str, old: str, new: str) -> None:
    for listener in list(_listeners):
        try:
            listener(server, old, new)
        except Exception:       # a metric must never break a call
            pass
