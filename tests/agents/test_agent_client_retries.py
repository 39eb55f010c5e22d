"""butai.client against a scripted fake server: retries, backoff, Retry-After, error mapping."""
import email.utils
import re
import socket
import time

import pytest

from butai.client import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidRequest,
    NotFound,
    RateLimited,
    Reply,
    RetryPolicy,
    ServerError,
    SpeakResult,
    Stage,
    StageError,
    Unauthorized,
)
from tests.agents.helpers import SPEAK_OK, Scripted, error_body

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def stage_for(server, sleeps, **kwargs):
    return Stage(server.url, "s_0123456789abcdef", "bka_secret", sleep=sleeps.append, **kwargs)


def test_503_then_200_retries_with_the_same_generated_request_id(fake_server, sleeps):
    fake_server.answer(Scripted(503, error_body("unavailable", "try again")), Scripted(200, SPEAK_OK))
    result = stage_for(fake_server, sleeps).speak("こんにちは", expression="smile")
    assert isinstance(result, SpeakResult) and result.expression == "smile"
    first, second = fake_server.requests
    assert first["path"] == second["path"] == "/stages/s_0123456789abcdef/speak"
    assert first["method"] == "POST" and first["headers"]["authorization"] == "Bearer bka_secret"
    assert first["body"]["request_id"] == second["body"]["request_id"]
    assert REQUEST_ID.match(first["body"]["request_id"])
    request_id = first["body"]["request_id"]
    assert first["body"] == {"text": "こんにちは", "expression": "smile", "request_id": request_id}
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5  # first backoff 0.5 s, jitter takes up to half


def test_each_speak_gets_its_own_request_id_and_a_given_one_is_kept_through_retries(fake_server, sleeps):
    fake_server.answer(Scripted(200, SPEAK_OK), Scripted(500, error_body("internal", "boom")),
                       Scripted(502, b"<html>bad gateway</html>", {"Content-Type": "text/html"}),
                       Scripted(200, SPEAK_OK))
    stage = stage_for(fake_server, sleeps)
    stage.speak("one")
    stage.speak("two", request_id="turn-7.line-1", speaker="ナレーター")
    ids = [r["body"]["request_id"] for r in fake_server.requests]
    assert ids[1] == ids[2] == ids[3] == "turn-7.line-1" and ids[0] != ids[1]
    assert fake_server.requests[3]["body"]["speaker"] == "ナレーター"
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0] * 0.99 / 2  # exponential: 0.5 then 1.0, each jittered


def test_429_waits_exactly_retry_after(fake_server, sleeps):
    fake_server.answer(Scripted(429, {"message": "Too Many Requests"}, {"Retry-After": "3"}),
                       Scripted(200, [{"id": "r1", "text": "やあ", "created_at": "2026-01-01T00:00:00.000Z"}]))
    replies = stage_for(fake_server, sleeps).fetch_replies()
    assert replies == [Reply(id="r1", text="やあ", created_at="2026-01-01T00:00:00.000Z")]
    assert sleeps == [3.0]
    assert [r["path"] for r in fake_server.requests] == ["/stages/s_0123456789abcdef/fetch_replies"] * 2


def test_retry_after_as_an_http_date_and_capped(fake_server, sleeps):
    when = email.utils.formatdate(time.time() + 5, usegmt=True)
    fake_server.answer(Scripted(503, error_body("unavailable", "later"), {"Retry-After": when}),
                       Scripted(429, {}, {"Retry-After": "3600"}), Scripted(200, SPEAK_OK))
    stage_for(fake_server, sleeps, retry=RetryPolicy(max_retry_after=30)).speak("hi")
    assert 3.0 <= sleeps[0] <= 5.0
    assert sleeps[1] == 30


def test_gives_up_after_the_attempts_with_the_server_error(fake_server, sleeps):
    fake_server.answer(*[Scripted(503, error_body("unavailable", "storage is down"), {})] * 3)
    with pytest.raises(ServerError) as caught:
        stage_for(fake_server, sleeps, retry=RetryPolicy(attempts=3, jitter=0)).get_stage()
    assert caught.value.status == 503 and caught.value.code == "unavailable"
    assert caught.value.message == "storage is down"
    assert sleeps == [0.5, 1.0] and len(fake_server.requests) == 3


def test_429_after_the_attempts_is_rate_limited(fake_server, sleeps):
    fake_server.answer(*[Scripted(429, {"message": "Too Many Requests"}, {"Retry-After": "1"})] * 2)
    with pytest.raises(RateLimited) as caught:
        stage_for(fake_server, sleeps, retry=RetryPolicy(attempts=2)).fetch_replies()
    assert caught.value.retry_after == 1.0 and "Too Many Requests" in str(caught.value)


@pytest.mark.parametrize("status,cls,code,field", [
    (400, InvalidRequest, "invalid_request", "text"),
    (401, Unauthorized, "wrong_key", "Authorization"),
    (403, Forbidden, "agent_key_required", "Authorization"),
    (404, NotFound, "stage_not_found", "stage_id"),
    (409, Conflict, "request_id_reused", "request_id"),
])
def test_4xx_raises_at_once_with_code_message_and_field(fake_server, sleeps, status, cls, code, field):
    fake_server.answer(Scripted(status, error_body(code, f"the server says {status}", field)))
    with pytest.raises(cls) as caught:
        stage_for(fake_server, sleeps).speak("x")
    err = caught.value
    assert isinstance(err, StageError)
    assert (err.status, err.code, err.message, err.field) == (status, code, f"the server says {status}", field)
    assert str(err) == f"{status} {code}: the server says {status} (field: {field})"
    assert len(fake_server.requests) == 1 and sleeps == []  # a 4xx is never retried


def test_a_dropped_connection_is_retried(fake_server, sleeps):
    fake_server.answer(Scripted(drop=True), Scripted(200, SPEAK_OK))
    assert stage_for(fake_server, sleeps).speak("落ちても一度だけ").id == "01ABC"
    first, second = fake_server.requests
    assert first["body"]["request_id"] == second["body"]["request_id"]
    assert len(sleeps) == 1


def test_nothing_listening_is_connection_failed_after_the_attempts(sleeps):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stage = Stage(f"http://127.0.0.1:{port}", "s_x", "bka_x", sleep=sleeps.append,
                  retry=RetryPolicy(attempts=4, backoff=0.1, jitter=0))
    with pytest.raises(ConnectionFailed) as caught:
        stage.fetch_replies()
    assert f"127.0.0.1:{port}" in str(caught.value) and "4 attempts" in str(caught.value)
    assert sleeps == pytest.approx([0.1, 0.2, 0.4])


def test_backoff_is_capped_and_jittered():
    policy = RetryPolicy(backoff=1, max_backoff=4, jitter=0.5)
    assert [policy.delay(n, rng=lambda: 0.0) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 4, 4]
    assert [policy.delay(n, rng=lambda: 1.0) for n in (1, 2, 3)] == [0.5, 1, 2]
    assert policy.delay(1, retry_after=0) == 0


def test_wait_for_replies_polls_until_a_reply_and_times_out_empty(fake_server):
    reply = {"id": "r1", "text": "来たよ", "created_at": "2026-01-01T00:00:00.000Z"}
    fake_server.answer(Scripted(200, []), Scripted(200, []), Scripted(200, [reply]))
    stage = Stage(fake_server.url, "s_x", "bka_x")
    assert [r.text for r in stage.wait_for_replies(timeout=10, interval=0.05, long_poll=False)] == ["来たよ"]
    assert len(fake_server.requests) == 3
    assert "wait" not in fake_server.requests[0]["body"]
    fake_server.answer(*[Scripted(200, [])] * 100)
    started = time.monotonic()
    assert stage.wait_for_replies(timeout=0.3, interval=0.05, long_poll=False) == []
    assert 0.25 <= time.monotonic() - started < 3


def test_stage_ids_are_quoted_into_the_path(fake_server, sleeps):
    fake_server.answer(Scripted(404, error_body("stage_not_found", "no such stage", "stage_id")))
    with pytest.raises(NotFound):
        Stage(fake_server.url + "/", "a/b c", "bka_x", sleep=sleeps.append).get_stage()
    assert fake_server.requests[0]["path"] == "/stages/a%2Fb%20c"


def test_wait_for_replies_long_polls_and_falls_back_to_polling_a_stage_without_wait(fake_server):
    reply = {"id": "r1", "text": "来たよ", "created_at": "2026-01-01T00:00:00.000Z"}
    fake_server.answer(Scripted(200, [reply]))
    stage = Stage(fake_server.url, "s_x", "bka_x")
    assert [r.text for r in stage.wait_for_replies(timeout=60)] == ["来たよ"]
    assert fake_server.requests[0]["body"]["wait"] == 20
    # an older stage rejects the unknown field: the client polls it instead
    fake_server.requests.clear()
    fake_server.answer(Scripted(400, error_body("invalid_request", "wait is not a known field", "wait")),
                       Scripted(200, []), Scripted(200, [reply]))
    assert [r.text for r in stage.wait_for_replies(timeout=60, interval=0.05)] == ["来たよ"]
    assert [("wait" in r["body"]) for r in fake_server.requests] == [True, False, False]


def test_a_long_poll_answered_at_once_does_not_spin(fake_server, sleeps, monkeypatch):
    # Something in between that does not hold requests: the client pauses between empty answers.
    import itertools

    import butai.client as client_module
    fake_server.answer(*[Scripted(200, [])] * 10)
    ticks = itertools.count(0, 0.01)          # every clock reading 10 ms later
    monkeypatch.setattr(client_module.time, "monotonic", lambda: next(ticks))
    stage = Stage(fake_server.url, "s_x", "bka_x", sleep=sleeps.append)
    assert stage.wait_for_replies(timeout=0.1, interval=2) == []
    assert len(sleeps) == len(fake_server.requests) - 1 >= 1
