"""Slow receivers on real sockets: an attempt ends at its one deadline however the answer is dribbled, at
most 4 KiB of headers are read, `webhook/test` is bounded the same way, and a slow receiver holds up only
its own stage's deliveries (locally and in the cloud's delivery function)."""
from __future__ import annotations

import pytest

from butai.client import verify_webhook
from butai_tools.bench.slow_receivers import TLS_RECORD, SlowLoris
from chalicelib.stage.models import ReplyRequest
from chalicelib.webhooks import targets
from chalicelib.webhooks.delivery import Sender
from chalicelib.webhooks.models import WebhookConfig
from tests.conftest import call
from tests.webhooks.receiver import Receiver

SECRET = "bkw_slow"
BODY = b'{"type":"reply.created"}'
# An answer that would take 30 s at a byte a second: well past the 5 s deadline.
SLOW_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

KINDS = {
    "status line a byte a second": dict(answer=SLOW_ANSWER, pause=1.0),
    "headers that never end, a line at a time": dict(answer=b"HTTP/1.1 200 OK\r\n", endless=b"X-Pad: 0\r\n",
                                                     chunk=10, pause=0.5),
    # The head at once, then 4,000 bytes of body at 44 bytes a half second.
    "a body dribbled after a 500": dict(answer=b"HTTP/1.1 500 Oops\r\nContent-Length: 4000\r\n\r\n",
                                        endless=b"x" * 44, pause=0.5, chunk=44),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_attempt_ends_at_its_deadline_however_slowly_the_answer_comes(kind):
    slow = SlowLoris(**KINDS[kind])
    try:
        outcome = Sender(local=True, deadline_s=2.0).send(WebhookConfig(slow.url, SECRET, ""), "01ABC", BODY)
        assert not outcome.ok and outcome.retryable
        if kind.startswith("a body"):
            assert outcome.status == 500      # the status decided; the dribbled body was not waited for
        else:
            assert outcome.error.startswith("timeout"), outcome.error
        assert slow.wait_for_hang_ups(1)
        # The receiver still had more to send when the sender hung up: the deadline ended it, not the answer.
        record = slow.connections[0]
        assert slow.endless is not None or record["sent"] < len(SLOW_ANSWER)
    finally:
        slow.close()


def test_a_tls_handshake_dribbled_a_byte_at_a_time_ends_at_the_deadline():
    # Every read gets a byte in time, so no read timeout ever trips: only the one deadline ends it.
    slow = SlowLoris(answer=TLS_RECORD, endless=b"\x00", pause=0.2, chunk=1, read_request=False)
    try:
        url = f"https://127.0.0.1:{slow.port}/hook"
        outcome = Sender(local=True, deadline_s=2.0).send(WebhookConfig(url, SECRET, ""), "01ABC", BODY)
        assert not outcome.ok and outcome.error.startswith("timeout"), outcome.error
        assert slow.wait_for_hang_ups(1)
        # The handshake had begun (the record header was in) and the server never ends it: the deadline did.
        assert slow.connections[0]["sent"] >= len(TLS_RECORD)
    finally:
        slow.close()


def test_at_most_4_kib_of_headers_are_read():
    # A 5 MB head, as fast as the socket takes it: refused once 4 KiB are in, not read to its end.
    flood = SlowLoris(answer=b"HTTP/1.1 200 OK\r\n", endless=b"X-Pad: " + b"a" * 1000 + b"\r\n", pause=0,
                      chunk=65536)
    try:
        outcome = Sender(local=True).send(WebhookConfig(flood.url, SECRET, ""), "01ABC", BODY)
        assert not outcome.ok and outcome.error.startswith("bad_answer: headers longer than 4096 bytes"), \
            outcome.error
        with pytest.raises(targets.AnswerRefused):
            targets.post(flood.url, BODY, {}, local=True)
    finally:
        flood.close()


def test_a_head_of_exactly_4_kib_is_read():
    head = b"HTTP/1.1 204 No Content\r\n"
    pad = targets.MAX_HEADER_BYTES - len(head) - len(b"X-Pad: ") - 2
    answer = head + b"X-Pad: " + b"a" * pad + b"\r\n\r\n"
    exact = SlowLoris(answer=answer, pause=0, chunk=len(answer))
    try:
        assert targets.post(exact.url, BODY, {}, local=True).status == 204
    finally:
        exact.close()


def test_webhook_test_is_bounded_by_the_same_deadline(runtime):
    stage = runtime.stage_service.create_stage("slow-test")
    slow = SlowLoris(answer=SLOW_ANSWER, pause=1.0)
    try:
        base = f"/stages/{stage.stage_id}/webhook"
        assert call(runtime.api_url, "PUT", base, stage.agent_key, {"url": slow.url})[0] == 201
        status, _, body = call(runtime.api_url, "POST", base + "/test", stage.agent_key)
        assert status == 200 and not body["ok"] and body["error"].startswith("timeout"), body
        assert slow.wait_for_hang_ups(1) and slow.connections[0]["sent"] < len(SLOW_ANSWER)
    finally:
        call(runtime.api_url, "DELETE", f"/stages/{stage.stage_id}/webhook", stage.agent_key)
        slow.close()


def test_slow_receivers_hold_only_their_own_stages_deliveries(runtime):
    """Six stages (more than the pool of four that slow receivers used to fill) whose receivers hold every
    attempt as long as the sender lets them, two replies each; then a reply on a healthy stage.  Its
    delivery arrives while every slow stage still has its first attempt open, and no slow stage ever has
    two attempts open at once.  The sender's deadline is raised here so that the slow attempts outlast the
    whole test: what is checked is the isolation, not the deadline."""
    sender = runtime.webhook_worker.dispatcher.sender
    sender.deadline_s = 120.0
    slow = [SlowLoris(answer=SLOW_ANSWER * 10, pause=1.0) for _ in range(6)]
    healthy = Receiver()
    stages = [runtime.stage_service.create_stage(f"slow-{i}") for i in range(6)]
    fine = runtime.stage_service.create_stage("healthy")
    try:
        for stage, receiver in [*zip(stages, slow), (fine, healthy)]:
            assert call(runtime.api_url, "PUT", f"/stages/{stage.stage_id}/webhook", stage.agent_key,
                        {"url": receiver.url})[0] == 201
        for stage in stages:
            for text in ("一", "二"):
                runtime.stage_service.reply(stage.stage_id, stage.player_key, ReplyRequest(text=text))
        for receiver in slow:
            assert receiver.wait_for_connections(1)
        sent = runtime.stage_service.reply(fine.stage_id, fine.player_key, ReplyRequest(text="元気"))
        assert healthy.wait_for(1)
        assert [r.open_connections() for r in slow] == [1] * 6      # all still held
        assert [len(r.connections) for r in slow] == [1] * 6        # each stage's second reply waits its turn
        [request] = healthy.requests
        assert verify_webhook(_secret(runtime, fine), request["headers"], request["body"])["reply"]["id"] == sent.id
    finally:
        sender.deadline_s = targets.ATTEMPT_DEADLINE_S
        for stage in [*stages, fine]:
            call(runtime.api_url, "DELETE", f"/stages/{stage.stage_id}/webhook", stage.agent_key)
        for receiver in slow:
            receiver.close()
        healthy.close()
    assert max(r.most_open for r in slow) == 1


def _secret(runtime, stage) -> str:
    store = runtime.webhook_worker.dispatcher.store
    return store.get(stage.stage_id).secret
