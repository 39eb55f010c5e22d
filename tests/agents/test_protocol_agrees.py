"""The agent side's own view of the wire format (butai/protocol.py, butai/signing.py) agrees with the
server's: the same fields, the same constants, and a delivery the stage signs verifies."""
from __future__ import annotations

import json

import pytest

from butai import protocol
from butai import signing as client_signing
from chalicelib.stage import face_images as expressions
from chalicelib.stage import models
from chalicelib.stage.waiting import MAX_WAIT_S
from chalicelib.webhooks import models as webhook_models
from chalicelib.webhooks import signing as server_signing

PAIRS = [
    (protocol.Reply, models.Reply), (protocol.AckResult, models.AckResult), (protocol.SpeakResult, models.SpeakResult),
    (protocol.LogEntry, models.LogEntry), (protocol.CurrentLine, models.CurrentLine),
    (protocol.Voice, models.Voice), (protocol.StageInfo, models.StageInfo),
    (protocol.WebhookCreated, webhook_models.WebhookCreated),
    (protocol.WebhookDelivery, webhook_models.WebhookDelivery),
    (protocol.WebhookView, webhook_models.WebhookView),
    (protocol.WebhookTestResult, webhook_models.WebhookTestResult),
]


@pytest.mark.parametrize("client,server", PAIRS, ids=[c.__name__ for c, _ in PAIRS])
def test_the_client_reads_every_field_the_server_writes(client, server):
    assert set(client.model_fields) == set(server.model_fields)
    for name, field in server.model_fields.items():
        assert client.model_fields[name].is_required() == field.is_required(), name


def test_the_stage_view_keeps_what_the_client_does_not_model():
    assert set(protocol.StageView.model_fields) == set(models.StageView.model_fields) - {"scene"}
    view = protocol.StageView.model_validate({
        "stage": {"id": "s", "name": "n", "character": "c", "character_name": "C"},
        "current": {"text": "", "expression": "neutral", "asked_expression": "neutral", "speaker": "C",
                    "image_url": "/a", "fallback_image_url": "/b", "updated_at": "t"},
        "log": [], "version": "v", "scene": {"place": "店内"}})
    assert view.model_dump()["scene"] == {"place": "店内"}


def test_constants_agree():
    assert protocol.SPEAK_MAX == models.SPEAK_MAX
    assert protocol.MAX_WAIT_S == MAX_WAIT_S
    assert (protocol.LEASE_DEFAULT_S, protocol.LEASE_MIN_S, protocol.LEASE_MAX_S, protocol.ACK_MAX) == \
        (models.LEASE_DEFAULT_S, models.LEASE_MIN_S, models.LEASE_MAX_S, models.ACK_MAX)
    assert protocol.REPLY_ID_PATTERN == models.REPLY_ID_PATTERN
    assert protocol.BASIC_EXPRESSIONS == expressions.BASIC
    assert protocol.FALLBACK_EXPRESSION == expressions.FALLBACK
    for name in ("ID_HEADER", "TIMESTAMP_HEADER", "SIGNATURE_HEADER", "SCHEME"):
        assert getattr(client_signing, name) == getattr(server_signing, name), name


def test_a_delivery_the_stage_signs_verifies_on_the_agent_side():
    secret = server_signing.new_secret()
    body = json.dumps({"type": "reply.created", "reply": {"id": "01X"}}).encode()
    headers = server_signing.sign(secret, "01X", body, now=1_000_000)
    assert client_signing.verify(secret, headers, body, now=1_000_010) == "01X"
    with pytest.raises(client_signing.SignatureError) as tampered:
        client_signing.verify(secret, headers, body + b" ", now=1_000_010)
    assert tampered.value.reason == "bad_signature"
    with pytest.raises(client_signing.SignatureError) as replayed:
        client_signing.verify(secret, headers, body, now=1_000_000 + 3600)
    assert replayed.value.reason == "stale_timestamp"
