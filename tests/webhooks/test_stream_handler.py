"""The cloud's delivery function (chalicelib.webhooks.stream) on DynamoDB stream records, over moto."""
from boto3.dynamodb.types import TypeSerializer

from butai.client import verify_webhook
from butai_tools.bench.slow_receivers import SlowLoris
from chalicelib import aws
from chalicelib.stage import keys
from chalicelib.stage.store import Guard
from chalicelib.webhooks import stream
from chalicelib.webhooks.delivery import Schedule, Sender
from chalicelib.webhooks.dispatch import Dispatcher
from chalicelib.webhooks.models import WebhookConfig
from chalicelib.webhooks.store import DynamoWebhookStore
from tests.webhooks.receiver import Receiver

_ser = TypeSerializer()


def record(event, stage_id, reply_id, text, seq):
    image = {"stage_id": stage_id, "reply_id": reply_id, "unread_id": reply_id, "text": text,
             "created_at": "2026-01-01T00:00:00.000Z"}
    return {"eventName": event, "dynamodb": {"SequenceNumber": seq,
                                             "NewImage": {k: _ser.serialize(v) for k, v in image.items()}}}


def setup(aws_settings, services, url):
    created = services.stage.create_stage("stream")
    store = DynamoWebhookStore(aws.client("dynamodb", aws_settings), aws_settings)
    store.set(created.stage_id, Guard("agent_key_hash", keys.hash_key(created.agent_key)),
              WebhookConfig(url, "bkw_secret", "2026-01-01T00:00:00.000Z"))
    sleeps = []
    dispatcher = Dispatcher(store, Sender(local=True), Schedule(first=1, cap=8, total=40))
    return created, store, dispatcher, sleeps


def test_inserts_are_delivered_and_other_records_ignored(aws_settings, services):
    receiver = Receiver()
    try:
        created, store, dispatcher, sleeps = setup(aws_settings, services, receiver.url)
        event = {"Records": [record("INSERT", created.stage_id, "01R1", "一つ目", "100"),
                             record("MODIFY", created.stage_id, "01R1", "一つ目", "101"),
                             record("INSERT", created.stage_id, "01R2", "二つ目", "102")]}
        assert stream.handle(event, dispatcher, sleep=sleeps.append) == {"batchItemFailures": []}
        texts = sorted(verify_webhook("bkw_secret", r["headers"], r["body"])["reply"]["text"]
                       for r in receiver.requests)
        assert texts == ["一つ目", "二つ目"] and sleeps == []
        assert store.delivery(created.stage_id, "01R2").status == "delivered"
    finally:
        receiver.close()


def test_an_undelivered_record_is_retried_then_reported_for_the_dead_letter_queue(aws_settings, services):
    receiver = Receiver(default=503)
    try:
        created, store, dispatcher, sleeps = setup(aws_settings, services, receiver.url)
        clock = [0.0]
        dispatcher.clock = lambda: clock[0]

        def sleep(seconds):
            sleeps.append(seconds)
            clock[0] += seconds
        event = {"Records": [record("INSERT", created.stage_id, "01R3", "届かない", "200")]}
        assert stream.handle(event, dispatcher, sleep=sleep) == {"batchItemFailures": [{"itemIdentifier": "200"}]}
        # exponential backoff, capped, bounded in total
        assert sleeps[:4] == sorted(sleeps[:4]) and max(sleeps) <= 8 and sum(sleeps) <= 40
        assert len(receiver.requests) == len(sleeps) + 1
        delivery = store.delivery(created.stage_id, "01R3")
        assert delivery.status == "failed" and delivery.last_status == 503
    finally:
        receiver.close()


def test_a_stage_without_webhook_is_skipped(aws_settings, services):
    other = services.stage.create_stage("quiet")
    store = DynamoWebhookStore(aws.client("dynamodb", aws_settings), aws_settings)
    dispatcher = Dispatcher(store, Sender(local=True))
    event = {"Records": [record("INSERT", other.stage_id, "01R4", "x", "300")]}
    assert stream.handle(event, dispatcher) == {"batchItemFailures": []}


def test_the_delivery_function_takes_one_stage_at_a_time_and_stages_side_by_side(aws_settings, services):
    slow, healthy = SlowLoris(answer=b"HTTP/1.1 200 OK\r\n\r\n" * 20, pause=1.0), Receiver()
    store = DynamoWebhookStore(aws.client("dynamodb", aws_settings), aws_settings)
    made = {}
    for name, receiver in (("slow", slow), ("healthy", healthy)):
        made[name] = services.stage.create_stage(name)
        store.set(made[name].stage_id, Guard("agent_key_hash", keys.hash_key(made[name].agent_key)),
                  WebhookConfig(receiver.url, "bkw_secret", "2026-01-01T00:00:00.000Z"))
    # One attempt per record here (the schedule's retries are tested elsewhere), each bounded by 2 s.
    dispatcher = Dispatcher(store, Sender(local=True, deadline_s=2.0), Schedule(first=1, cap=1, total=0))
    event = {"Records": [record("INSERT", made["slow"].stage_id, "01S1", "遅い一", "1"),
                         record("INSERT", made["slow"].stage_id, "01S2", "遅い二", "2"),
                         record("INSERT", made["healthy"].stage_id, "01H1", "元気", "3")]}
    try:
        result = stream.handle(event, dispatcher, sleep=lambda s: None)
        assert sorted(f["itemIdentifier"] for f in result["batchItemFailures"]) == ["1", "2"]
        assert [verify_webhook("bkw_secret", r["headers"], r["body"])["reply"]["id"] for r in healthy.requests] == ["01H1"]
        assert slow.wait_for_hang_ups(2)
        assert len(slow.connections) == 2 and slow.most_open == 1      # one attempt at a time for the stage
    finally:
        slow.close()
        healthy.close()
