"""DynamoDB throttling and transient 5xx on every store call.

Faults are injected below botocore's retry loop (a `before-send` hook answers
in place of DynamoDB), so the project's real retry configuration — standard
mode, backoff with jitter — is what is exercised.  The store talks to a moto
*server* here: with moto's in-process mock, moto itself is a `before-send`
handler and would apply a write that the injected fault claims was refused.
Sleeps are recorded, not slept.
"""
import json

import pytest
from botocore.awsrequest import AWSResponse

from butai_tools.local.aws import LocalAws, ensure_resources
from butai_tools.stage import images
from chalicelib import aws
from chalicelib.config import Settings
from tests.api.test_routes import get, post, snapshot
from tests.conftest import ROOT


@pytest.fixture
def aws_settings():
    """Overrides the mock-based fixture: a moto server of this test's own."""
    server = LocalAws().start()
    settings = Settings(aws_endpoint=server.endpoint)
    ensure_resources(settings)
    images.upload_all_characters(aws.client("s3", settings), settings.bucket, ROOT / "static/characters")
    yield settings
    server.stop()
    _reset_moto()


def _reset_moto():
    # The server and moto's in-process mock share moto's memory; leave it empty for the next test.
    from moto.backends import get_backend
    for name in ("dynamodb", "s3"):
        for account in get_backend(name).values():
            for backend in account.values():
                backend.reset()

THROTTLED = (400, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
             "The level of configured provisioned throughput for the table was exceeded.")
BROKEN = (500, "com.amazonaws.dynamodb.v20120810#InternalServerError", "Internal server error")


class _Raw:
    def __init__(self, body):
        self.body = body

    def stream(self, **_):
        yield self.body


class Faults:
    """Answers the next `count` calls of the given operations with an error."""

    def __init__(self, client, monkeypatch):
        self.plan: dict[str, list] = {}
        self.seen: list[str] = []
        self.sleeps: list[float] = []
        client.meta.events.register("before-send.dynamodb", self._send)
        monkeypatch.setattr("botocore.endpoint.time.sleep", self.sleeps.append)

    def fail(self, operation, fault, count=10**6):
        self.plan[operation] = [fault] * count

    def _send(self, request, **_):
        op = request.headers.get("X-Amz-Target", b"")
        op = (op.decode() if isinstance(op, bytes) else op).rsplit(".", 1)[-1]
        self.seen.append(op)
        queue = self.plan.get(op) or self.plan.get("*")
        if not queue:
            return None
        status, kind, message = queue.pop(0)
        body = json.dumps({"__type": kind, "message": message}).encode()
        return AWSResponse(request.url, status, {"Content-Type": "application/x-amz-json-1.0"}, _Raw(body))


@pytest.fixture
def faults(services, monkeypatch):
    return Faults(services.stage.store._db, monkeypatch)


def agent(client, stage, route, body=None):
    return post(client, f"/stages/{stage.stage_id}/{route}", stage.agent_key, body)


@pytest.mark.parametrize("fault", [THROTTLED, BROKEN], ids=["throttled", "5xx"])
@pytest.mark.parametrize("route", ["speak", "reply", "fetch_replies", "get"])
def test_storage_busy_through_the_retries_is_a_503_and_writes_nothing(client, stage, aws_settings, faults,
                                                                       fault, route):
    post(client, f"/stages/{stage.stage_id}/reply", stage.player_key, {"text": "既存"})
    before = snapshot(aws_settings)
    faults.fail("*", fault)
    if route == "speak":
        r = agent(client, stage, "speak", {"text": "x", "expression": "smile"})
    elif route == "reply":
        r = post(client, f"/stages/{stage.stage_id}/reply", stage.player_key, {"text": "y"})
    elif route == "fetch_replies":
        r = agent(client, stage, "fetch_replies")
    else:
        r = get(client, f"/stages/{stage.stage_id}", stage.player_key)
    assert r.status_code == 503
    assert r.json_body["error"]["code"] == "unavailable" and r.headers["Retry-After"] == "1"
    assert len(faults.seen) >= 4               # botocore retried before giving up
    assert all(0 <= s <= 20 for s in faults.sleeps) and len(set(faults.sleeps)) > 1  # backoff with jitter
    faults.plan.clear()
    assert snapshot(aws_settings) == before
    assert [r.text for r in __import__("chalicelib").context.get().stage.fetch_replies(
        stage.stage_id, stage.agent_key)] == ["既存"]  # the earlier reply is still there, once


@pytest.mark.parametrize("fault", [THROTTLED, BROKEN], ids=["throttled", "5xx"])
def test_a_brief_fault_is_retried_and_the_call_succeeds_once(client, stage, aws_settings, faults, fault):
    faults.fail("TransactWriteItems", fault, count=2)
    r = agent(client, stage, "speak", {"text": "二度目で届く", "expression": "smile", "request_id": "f-1"})
    assert r.status_code == 200
    assert faults.seen.count("TransactWriteItems") == 3
    view = get(client, f"/stages/{stage.stage_id}", stage.player_key).json_body
    assert [e["text"] for e in view["log"]] == ["二度目で届く"]


def test_transactions_cancelled_for_conflicts_are_tried_again(services, stage, monkeypatch):
    """A TransactionConflict cancellation (another transaction held an item) is not an answer."""
    from botocore.exceptions import ClientError

    from chalicelib.stage.models import SpeakRequest
    store = services.stage.store
    real = store._db.transact_write_items
    calls = []

    def conflicted(**kwargs):
        calls.append(kwargs.get("ClientRequestToken"))
        if len(calls) <= 2:
            raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
                               "CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "None"}]},
                              "TransactWriteItems")
        return real(**kwargs)

    monkeypatch.setattr(store._db, "transact_write_items", conflicted)
    monkeypatch.setattr(store, "_sleep", lambda s: None)
    services.stage.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="三度目"))
    assert len(calls) == 3 and len(set(calls)) == 3   # a fresh client token per attempt
    assert services.stage.get_stage(stage.stage_id, stage.agent_key).current.text == "三度目"


def test_conflicts_that_persist_end_in_503_without_a_write(client, stage, aws_settings, services, monkeypatch):
    from botocore.exceptions import ClientError
    store = services.stage.store

    def always(**kwargs):
        raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "conflict"},
                           "CancellationReasons": [{"Code": "TransactionConflict"}]}, "TransactWriteItems")

    before = snapshot(aws_settings)
    monkeypatch.setattr(store._db, "transact_write_items", always)
    monkeypatch.setattr(store, "_sleep", lambda s: None)
    r = agent(client, stage, "speak", {"text": "x"})
    assert r.status_code == 503 and r.json_body["error"]["code"] == "unavailable"
    assert snapshot(aws_settings) == before
