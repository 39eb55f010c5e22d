"""The local runtime's delivery worker: replies are handed over by the reply write's
signal (ReplySignal.listen), so `reply` only appends to a queue and returns.

One scheduler thread keeps the jobs in time order and waits on a condition until
the earliest is due (no polling).  At most one attempt per stage is in flight:
a stage's next job waits for its attempt to end (each attempt ends within its
deadline, chalicelib/webhooks/targets.py), so a slow receiver holds one thread
and its own stage's queue, never another stage's.  The pool is large enough
(``WORKERS``) that slow receivers on that many stages at once still leave
threads for everyone else; its threads are made only when needed.
"""
from __future__ import annotations

import collections
import heapq
import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from chalicelib.stage.store import ReplyRecord
from chalicelib.webhooks.dispatch import Dispatcher, Job

WORKERS = 64


class LocalDeliveryWorker:
    def __init__(self, dispatcher: Dispatcher, workers: int = WORKERS):
        self.dispatcher = dispatcher
        self._heap: list[tuple[float, int, Job]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._stopping = False
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webhook")
        self._thread = threading.Thread(target=self._run, name="webhook-scheduler", daemon=True)
        self._in_progress = 0
        # Stages with an attempt in flight, and their jobs that came due meanwhile (in order).
        self._busy: set[str] = set()
        self._parked: dict[str, collections.deque] = {}

    def start(self) -> LocalDeliveryWorker:
        self._thread.start()
        return self

    def reply_added(self, stage_id: str, reply: ReplyRecord) -> None:
        """Called on the player's request thread: only queues."""
        self._push(time.monotonic(), Job(stage_id, reply))

    def _push(self, due: float, job: Job) -> None:
        with self._cond:
            heapq.heappush(self._heap, (due, next(self._seq), job))
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopping and (not self._heap or self._heap[0][0] > time.monotonic()):
                    timeout = None if not self._heap else self._heap[0][0] - time.monotonic()
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                _, _, job = heapq.heappop(self._heap)
                if job.stage_id in self._busy:
                    self._parked.setdefault(job.stage_id, collections.deque()).append(job)
                    continue
                self._busy.add(job.stage_id)
                self._in_progress += 1
            self._pool.submit(self._attempt, job)

    def _attempt(self, job: Job) -> None:
        try:
            try:
                delay = self.dispatcher.step(job)
            except Exception:  # noqa: BLE001 - e.g. storage briefly down: try again later
                delay = self.dispatcher.schedule.delay(max(1, job.attempts))
            if delay is not None:
                self._push(time.monotonic() + delay, job)
        finally:
            with self._cond:
                self._in_progress -= 1
                self._busy.discard(job.stage_id)
                parked = self._parked.get(job.stage_id)
                if parked:
                    # The stage's next job goes back in line, due now (it waited for this attempt).
                    heapq.heappush(self._heap, (time.monotonic(), next(self._seq), parked.popleft()))
                    if not parked:
                        del self._parked[job.stage_id]
                self._cond.notify_all()

    def idle(self, timeout: float) -> bool:
        """Waits until nothing is queued or in flight (tests, benchmarks); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._heap and not self._in_progress and not self._parked,
                                       timeout)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)
