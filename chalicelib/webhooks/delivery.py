"""One delivery attempt, the retry schedule, and the body that is sent.

Delivery is at least once: an attempt that got no 2xx is tried again after
1 s, 2 s, 4 s … (at most ``cap`` apart, with jitter) until ``total`` seconds
have passed since the first, then recorded as failed.  Every attempt carries
the same ``Butai-Webhook-Id`` (the reply id), so a receiver that sees one twice
knows it is a repeat.  A redirect or a refused address is not retried: trying
again cannot change the answer.
"""
from __future__ import annotations

import http.client
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import ids
from ..stage.store import ReplyRecord
from . import signing, targets
from .models import DeliveryRecord, DeliveryStatus, WebhookConfig

EVENT_REPLY = "reply.created"
EVENT_TEST = "webhook.test"


@dataclass(frozen=True)
class Schedule:
    first: float = 1.0
    factor: float = 2.0
    cap: float = 60.0
    total: float = 600.0        # give up this long after the first attempt
    jitter: float = 0.2

    def delay(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """The pause after failed attempt number ``attempt`` (1-based)."""
        base = min(self.cap, self.first * self.factor ** (attempt - 1))
        return base * (1 - self.jitter * rng())


@dataclass(frozen=True)
class Outcome:
    ok: bool
    status: int | None = None
    error: str | None = None
    retryable: bool = True
    ms: float = 0.0


def reply_body(stage_id: str, reply: ReplyRecord) -> bytes:
    return _body({"type": EVENT_REPLY, "stage_id": stage_id,
                  "reply": {"id": reply.id, "text": reply.text, "created_at": reply.created_at}})


def ping_body(stage_id: str) -> bytes:
    return _body({"type": EVENT_TEST, "stage_id": stage_id, "reply": None,
                  "created_at": ids.iso_from_ms(int(time.time() * 1000))})


def _body(payload: dict) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Sender:
    """Signs and POSTs one attempt; never raises."""

    def __init__(self, *, local: bool = False, resolver: targets.Resolver = targets.system_resolver,
                 tls=None, deadline_s: float = targets.ATTEMPT_DEADLINE_S):
        self.local = local
        self.resolver = resolver
        self.tls = tls
        self.deadline_s = deadline_s     # one attempt, connect to last byte

    def send(self, config: WebhookConfig, delivery_id: str, body: bytes) -> Outcome:
        started = time.perf_counter()

        def done(**kwargs) -> Outcome:
            return Outcome(ms=round((time.perf_counter() - started) * 1000, 2), **kwargs)

        headers = signing.sign(config.secret, delivery_id, body)
        try:
            answer = targets.post(config.url, body, headers, local=self.local, resolver=self.resolver, tls=self.tls,
                                  deadline_s=self.deadline_s)
        except targets.TargetRefused as exc:
            return done(ok=False, error=f"{exc.reason}: {exc}", retryable=False)
        except TimeoutError as exc:
            return done(ok=False, error=f"timeout: {exc}"[:300])
        except targets.AnswerRefused as exc:
            return done(ok=False, error=f"bad_answer: {exc}"[:300])
        except (OSError, http.client.HTTPException) as exc:
            return done(ok=False, error=f"unreachable: {type(exc).__name__}: {exc}"[:300])
        if 200 <= answer.status < 300:
            return done(ok=True, status=answer.status)
        if 300 <= answer.status < 400:
            return done(ok=False, status=answer.status, error="redirect_refused: redirects are not followed",
                        retryable=False)
        return done(ok=False, status=answer.status, error=f"HTTP {answer.status}")


def record_for(reply_id: str, outcome: Outcome, attempts: int, final: bool) -> DeliveryRecord:
    status: DeliveryStatus = "delivered" if outcome.ok else ("failed" if final else "retrying")
    return DeliveryRecord(reply_id=reply_id, status=status, attempts=attempts,
                          updated_at=ids.iso_from_ms(int(time.time() * 1000)), last_status=outcome.status,
                          last_error=outcome.error)
