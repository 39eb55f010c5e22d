"""Long-poll and webhooks on the real local runtime (moto + the API on 127.0.0.1, real sockets)."""
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from butai.client import Stage, verify_webhook
from butai_tools.local.runtime import LocalRuntime
from chalicelib.webhooks import signing
from tests.conftest import call
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.e2e
@pytest.fixture
def stage(runtime):
    created = runtime.stage_service.create_stage("wake")
    return created, Stage(runtime.api_url, created.stage_id, created.agent_key)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def reply(runtime, created, text):
    return call(runtime.api_url, "POST", f"/stages/{created.stage_id}/reply", created.player_key, {"text": text})


# ---------------------------------------------------------------- long-poll

def test_a_long_poll_wakes_on_the_reply_write(runtime, stage):
    created, agent = stage
    timer = threading.Timer(0.3, reply, (runtime, created, "起きて"))
    timer.start()
    got = agent.fetch_replies(wait=20)
    timer.join()
    assert [r.text for r in got] == ["起きて"]
    assert agent.fetch_replies() == []


def test_a_long_poll_with_nothing_to_read_answers_an_empty_list(runtime, stage):
    created, _ = stage
    status, _, body = call(runtime.api_url, "POST", f"/stages/{created.stage_id}/fetch_replies",
                           created.agent_key, {"wait": 0.3})
    assert (status, body) == (200, [])


def test_an_unread_reply_is_answered_at_once_without_waiting(runtime, stage):
    created, agent = stage
    reply(runtime, created, "もう書いた")
    assert [r.text for r in agent.fetch_replies(wait=20)] == ["もう書いた"]


def test_concurrent_long_polls_each_reply_once(runtime, stage):
    created, agent = stage
    texts = [f"返事{i}" for i in range(6)]

    def poll(_):
        got = []
        for _ in range(3):
            got += [r.text for r in agent.fetch_replies(wait=1.5)]
        return got

    with ThreadPoolExecutor(max_workers=8) as pool:
        polls = [pool.submit(poll, i) for i in range(6)]
        for text in texts:
            assert reply(runtime, created, text)[0] == 202
        results = [p.result() for p in polls]
    everything = [t for got in results for t in got] + [r.text for r in agent.fetch_replies()]
    assert sorted(everything) == sorted(texts)      # none lost, none twice


@pytest.mark.parametrize("body, field", [({"wait": 21}, "wait"), ({"wait": "5"}, "wait"), ({"wait": -1}, "wait")])
def test_a_bad_wait_is_a_400_naming_the_field(runtime, stage, body, field):
    created, _ = stage
    status, _, answer = call(runtime.api_url, "POST", f"/stages/{created.stage_id}/fetch_replies",
                             created.agent_key, body)
    assert status == 400 and answer["error"]["field"] == field


def test_the_key_is_checked_before_any_wait(runtime, stage):
    created, _ = stage
    path = f"/stages/{created.stage_id}/fetch_replies"
    assert call(runtime.api_url, "POST", path, None, {"wait": 20})[0] == 401
    assert call(runtime.api_url, "POST", path, "bka_wrong", {"wait": 20})[0] == 401
    status, _, body = call(runtime.api_url, "POST", path, created.player_key, {"wait": 20})
    assert status == 403 and body["error"]["code"] == "agent_key_required"


def test_a_retried_long_poll_returns_what_the_first_claimed(runtime, stage):
    created, _ = stage
    reply(runtime, created, "一度だけ")
    path = f"/stages/{created.stage_id}/fetch_replies"
    first = call(runtime.api_url, "POST", path, created.agent_key, {"wait": 5, "request_id": "lp-1"})[2]
    again = call(runtime.api_url, "POST", path, created.agent_key, {"wait": 5, "request_id": "lp-1"})[2]
    assert [r["text"] for r in first] == [r["text"] for r in again] == ["一度だけ"]


def test_wait_for_replies_long_polls_by_default(runtime, stage):
    created, agent = stage
    timer = threading.Timer(0.3, reply, (runtime, created, "待った？"))
    timer.start()
    assert [r.text for r in agent.wait_for_replies(timeout=30)] == ["待った？"]
    timer.join()
    assert agent.wait_for_replies(timeout=0.3) == []


# ---------------------------------------------------------------- webhooks

def test_each_reply_is_posted_signed_with_its_id(runtime, stage, receiver):
    created, agent = stage
    hook = agent.set_webhook(receiver.url)
    assert hook.secret.startswith(signing.SECRET_PREFIX)
    reply(runtime, created, "届いた？")
    assert receiver.wait_for(1)
    request = receiver.requests[0]
    payload = verify_webhook(hook.secret, request["headers"], request["body"])
    assert payload["type"] == "reply.created" and payload["stage_id"] == created.stage_id
    assert payload["reply"]["text"] == "届いた？"
    assert request["headers"][signing.ID_HEADER] == payload["reply"]["id"]
    # the webhook wakes the agent; fetch_replies still claims the reply, once
    assert [r.id for r in agent.fetch_replies()] == [payload["reply"]["id"]]
    assert runtime.webhook_worker.idle(10)
    view = agent.get_webhook()
    assert view.url == receiver.url and "secret" not in view.model_dump()
    assert [(d.reply_id, d.status, d.attempts, d.last_status) for d in view.deliveries] == \
        [(payload["reply"]["id"], "delivered", 1, 204)]


def test_a_failing_receiver_is_retried_until_it_answers(runtime, stage):
    created, agent = stage
    flaky = Receiver(statuses=[500, 503])
    try:
        agent.set_webhook(flaky.url)
        reply(runtime, created, "三度目の正直")
        assert flaky.wait_for(3)
        assert runtime.webhook_worker.idle(10)
        ids = {r["headers"][signing.ID_HEADER] for r in flaky.requests}
        assert len(flaky.requests) == 3 and len(ids) == 1      # the same delivery id on every attempt
        (delivery,) = agent.get_webhook().deliveries
        assert (delivery.status, delivery.attempts, delivery.last_status) == ("delivered", 3, 204)
    finally:
        flaky.close()


def test_a_receiver_that_never_answers_well_is_given_up_after_the_bounded_time(runtime, stage):
    created, agent = stage
    broken = Receiver(default=500)
    try:
        agent.set_webhook(broken.url)
        reply(runtime, created, "誰もいない")
        assert runtime.webhook_worker.idle(20)
        (delivery,) = agent.get_webhook().deliveries
        assert delivery.status == "failed" and delivery.last_status == 500 and delivery.attempts >= 3
        assert len(broken.requests) == delivery.attempts
        assert [r.text for r in agent.fetch_replies()] == ["誰もいない"]     # the reply itself is not lost
    finally:
        broken.close()


def test_a_slow_receiver_never_holds_up_the_players_reply(runtime, stage, receiver):
    created, agent = stage
    agent.set_webhook(receiver.url)
    receiver.gate = threading.Event()              # the receiver takes no request until released
    statuses = [reply(runtime, created, f"遅い{i}")[0] for i in range(5)]
    # every reply was accepted while the receiver still held the first delivery
    assert statuses == [202] * 5 and not receiver.gate.is_set() and receiver.requests == []
    receiver.gate.set()
    assert receiver.wait_for(5)


def test_no_reply_is_lost_or_sent_to_another_stage(runtime):
    stages, receivers = [], []
    try:
        for i in range(3):
            created = runtime.stage_service.create_stage(f"many{i}")
            r = Receiver()
            hook = Stage(runtime.api_url, created.stage_id, created.agent_key).set_webhook(r.url)
            stages.append((created, hook.secret))
            receivers.append(r)
        sent = {created.stage_id: [] for created, _ in stages}
        for n in range(5):
            for created, _ in stages:
                sent[created.stage_id].append(reply(runtime, created, f"{created.stage_id}:{n}")[2]["id"])
        for r in receivers:
            assert r.wait_for(5)
        assert runtime.webhook_worker.idle(10)
        for (created, secret), r in zip(stages, receivers):
            payloads = [verify_webhook(secret, q["headers"], q["body"]) for q in r.requests]
            assert {p["stage_id"] for p in payloads} == {created.stage_id}
            assert sorted(p["reply"]["id"] for p in payloads) == sorted(sent[created.stage_id])
    finally:
        for r in receivers:
            r.close()


def test_webhook_routes_check_the_key_first_and_refuse_unsafe_urls(runtime, stage, receiver):
    created, agent = stage
    path = f"/stages/{created.stage_id}/webhook"
    assert call(runtime.api_url, "PUT", path, None, {"nope": 1})[0] == 401
    assert call(runtime.api_url, "PUT", path, created.player_key, {"url": receiver.url})[0] == 403
    assert call(runtime.api_url, "GET", path, created.player_key)[0] == 403
    status, _, body = call(runtime.api_url, "GET", path, created.agent_key)
    assert status == 404 and body["error"]["code"] == "webhook_not_found"
    assert call(runtime.api_url, "PUT", path, created.agent_key, {"url": 5})[2]["error"]["field"] == "url"
    for url in ("http://10.0.0.1/x", "https://10.0.0.1/x", "https://169.254.169.254/latest/meta-data/",
                "https://[fe80::1]/x", "http://example.com/x", "http://127.0.0.1.nip.io/x"):
        status, _, body = call(runtime.api_url, "PUT", path, created.agent_key, {"url": url})
        assert status == 400 and body["error"] == {"code": "webhook_url_refused", "field": "url",
                                                   "message": body["error"]["message"]}, url
    assert call(runtime.api_url, "GET", path, created.agent_key)[0] == 404      # nothing was stored


def test_test_show_and_delete(runtime, stage, receiver):
    created, agent = stage
    hook = agent.set_webhook(receiver.url)
    result = agent.test_webhook()
    assert result.ok and result.status == 204
    assert verify_webhook(hook.secret, receiver.requests[0]["headers"], receiver.requests[0]["body"])["type"] == \
        "webhook.test"
    replaced = agent.set_webhook(receiver.url)
    assert replaced.secret != hook.secret                                  # a new secret each time
    assert agent.delete_webhook() is True and agent.delete_webhook() is False
    reply(runtime, created, "もう誰も聞いていない")
    assert runtime.webhook_worker.idle(10)
    assert len(receiver.requests) == 1


def test_a_redirecting_receiver_is_reported_not_followed(runtime, stage, receiver):
    created, agent = stage
    redirecting = Receiver(default=307, headers={"Location": receiver.url})
    try:
        agent.set_webhook(redirecting.url)
        result = agent.test_webhook()
        assert not result.ok and result.status == 307 and result.error.startswith("redirect_refused")
        assert receiver.requests == []
    finally:
        redirecting.close()


def test_a_scenario_stage_takes_no_webhook(runtime, receiver):
    director = runtime.services.director
    created = director.create("scene", director.library.put(Path(__file__).resolve().parents[2] / "scenarios" /
                                                             "chinoike.json"))
    status, _, body = call(runtime.api_url, "PUT", f"/stages/{created.stage_id}/webhook", created.agent_key,
                           {"url": receiver.url})
    assert status == 409 and body["error"]["code"] == "scenario_stage"


def test_stopping_releases_waiting_long_polls(tmp_path):
    rt = LocalRuntime(state_dir=tmp_path, port=0, demo_stage=None, scenario_stages={}, saver_interval=3600, rate=0)
    rt.start()
    created = rt.stage_service.create_stage("bye")
    answers = []
    waiting = threading.Thread(target=lambda: answers.append(
        rt.stage_service.fetch_replies(created.stage_id, created.agent_key, wait=20)))
    waiting.start()
    # let the fetch reach its wait (admitted to a waiting slot), however busy the machine
    deadline = time.monotonic() + 30
    while not rt.stage_service.waiter._waiting and time.monotonic() < deadline:
        time.sleep(0.01)
    rt.stop()
    waiting.join(5)
    assert answers == [[]]
