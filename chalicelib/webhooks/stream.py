"""The cloud's delivery function: DynamoDB Streams on `pending_replies` → this handler → the webhook.

The event source mapping passes only INSERT records (a new reply; a claim or an
acknowledgement is a MODIFY, the TTL expiry a REMOVE).  Each record is delivered
with backoff for at most ``LAMBDA_SCHEDULE.total`` seconds inside the
invocation; every attempt ends within its deadline (targets.ATTEMPT_DEADLINE_S,
connect to last byte).  One stage's records go one after the other (at most
one attempt in flight per stage), different stages' side by side: a slow
receiver holds its own stage's records, not the others'.  The template caps
the function's concurrency (butai_tools/infra.py).
A record still undelivered is reported as a batch item failure: Lambda retries
it (the mapping's MaximumRetryAttempts) and then sends its description to the
dead-letter queue.  The reply itself stays unread on the stage either way: a
lost delivery delays the agent, it never loses the reply.

The player's `reply` request never waits for any of this: the stream is read
after its transaction committed, by another function.
"""
from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from boto3.dynamodb.types import TypeDeserializer

from .. import aws
from ..config import Settings
from ..stage.store import ReplyRecord
from .delivery import Schedule, Sender
from .dispatch import Dispatcher, Job
from .store import DynamoWebhookStore

log = logging.getLogger("butai.webhooks")
# 1, 2, 4, 8, 8 … s apart for up to 40 s per invocation (the function's timeout is 120 s).
LAMBDA_SCHEDULE = Schedule(first=1.0, cap=8.0, total=40.0)
PARALLEL = 8
_de = TypeDeserializer()
_dispatcher: Dispatcher | None = None


def dispatcher() -> Dispatcher:
    global _dispatcher
    if _dispatcher is None:
        settings = Settings.from_env(models=False)
        _dispatcher = Dispatcher(DynamoWebhookStore(aws.client("dynamodb", settings), settings),
                                 Sender(local=False), LAMBDA_SCHEDULE)
    return _dispatcher


def reply_of(record: dict) -> tuple[str, ReplyRecord] | None:
    """The stage id and reply of an INSERT stream record (None for any other record)."""
    if record.get("eventName") != "INSERT":
        return None
    image = {k: _de.deserialize(v) for k, v in (record.get("dynamodb", {}).get("NewImage") or {}).items()}
    if "reply_id" not in image:
        return None
    return image["stage_id"], ReplyRecord(id=image["reply_id"], text=image["text"], created_at=image["created_at"])


def deliver(job: Job, target: Dispatcher, sleep=time.sleep) -> bool:
    delay = target.step(job)
    while delay is not None:
        sleep(delay)
        delay = target.step(job)
    return job.delivered


def handle(event: dict, target: Dispatcher, sleep=time.sleep) -> dict:
    records = event.get("Records") or []
    by_stage: dict[str, list[tuple[int, ReplyRecord]]] = {}
    for index, record in enumerate(records):
        found = reply_of(record)
        if found is not None:
            by_stage.setdefault(found[0], []).append((index, found[1]))
    ok = [True] * len(records)

    def run(stage_id: str) -> None:
        # One stage's replies in order, one attempt at a time.
        for index, reply in by_stage[stage_id]:
            try:
                ok[index] = deliver(Job(stage_id, reply), target, sleep)
            except Exception:  # noqa: BLE001 - storage trouble: let Lambda retry this record
                log.exception("delivery of a reply failed")
                ok[index] = False

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        list(pool.map(run, list(by_stage)))
    failures = [{"itemIdentifier": record["dynamodb"]["SequenceNumber"]}
                for record, delivered in zip(records, ok) if not delivered]
    return {"batchItemFailures": failures}


def handler(event, context):  # noqa: ARG001 - Lambda's signature
    return handle(event, dispatcher())
