"""One step of a reply's delivery, shared by the local worker and the cloud's stream handler:
look up the stage's webhook, send, record the outcome, and say when to try again."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..stage.store import ReplyRecord
from .delivery import Outcome, Schedule, Sender, record_for, reply_body
from .store import DynamoWebhookStore

log = logging.getLogger("butai.webhooks")


@dataclass
class Job:
    stage_id: str
    reply: ReplyRecord
    first_at: float = 0.0        # clock time of the first attempt
    attempts: int = 0
    delivered: bool = False


class Dispatcher:
    def __init__(self, store: DynamoWebhookStore, sender: Sender, schedule: Schedule = Schedule(),
                 clock: Callable[[], float] = time.monotonic):
        self.store = store
        self.sender = sender
        self.schedule = schedule
        self.clock = clock

    def step(self, job: Job) -> float | None:
        """Makes the next attempt; returns the pause before another one, or None when the job is done."""
        config = self.store.get(job.stage_id)
        if config is None:
            job.delivered = True     # nothing to deliver to: no webhook (or it was deleted meanwhile)
            return None
        now = self.clock()
        if job.attempts == 0:
            job.first_at = now
        job.attempts += 1
        outcome: Outcome = self.sender.send(config, job.reply.id, reply_body(job.stage_id, job.reply))
        job.delivered = outcome.ok
        delay = None if outcome.ok or not outcome.retryable else self.schedule.delay(job.attempts)
        final = delay is None or (now + delay) - job.first_at > self.schedule.total
        try:
            self.store.record(job.stage_id, record_for(job.reply.id, outcome, job.attempts, final))
        except Exception:  # noqa: BLE001 - a lost status line must not stop the delivery itself
            log.warning("could not record the delivery of %s on %s", job.reply.id, job.stage_id, exc_info=True)
        if not outcome.ok:
            log.info("webhook delivery %s on %s failed (attempt %d): %s", job.reply.id, job.stage_id,
                     job.attempts, outcome.error)
        return None if final else delay
