"""Per-key token buckets for the local runtime (API Gateway throttles in the cloud).

A bucket is kept per caller (the hash of its key, else its address), in a
bounded map, so a flood of made-up keys cannot grow memory without limit.
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable


class TokenBuckets:
    def __init__(self, rate: float, burst: float, *, clock: Callable[[], float] = time.monotonic,
                 max_buckets: int = 10_000):
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._max = max_buckets
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, caller: str) -> float:
        """Takes one token; returns 0 when allowed, else the seconds until a token is there."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.pop(caller, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1:
                wait, tokens = 0.0, tokens - 1
            else:
                wait = (1 - tokens) / self.rate
            self._buckets[caller] = (tokens, now)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
        return wait


def retry_after_header(wait: float) -> str:
    return str(max(1, math.ceil(wait)))
