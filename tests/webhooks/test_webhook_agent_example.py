"""examples/webhook_agent.py: an agent that runs only when the webhook wakes it (HTTP server and Lambda)."""
import importlib.util
import json
import time
import urllib.request

import pytest

from butai.client import Stage
from chalicelib.webhooks import signing
from tests.conftest import ROOT, call

pytestmark = pytest.mark.e2e


def load_example():
    spec = importlib.util.spec_from_file_location("webhook_agent", ROOT / "examples" / "webhook_agent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def until(predicate, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError("condition not met")


def player_reply(runtime, created, text):
    assert call(runtime.api_url, "POST", f"/stages/{created.stage_id}/reply", created.player_key,
                {"text": text})[0] == 202


def lines(stage):
    return [(e.role, e.text, e.expression) for e in stage.get_stage().log]


def test_the_http_agent_wakes_on_the_webhook_and_answers_with_speak(runtime):
    example = load_example()
    created = runtime.stage_service.create_stage("woken")
    stage = Stage(runtime.api_url, created.stage_id, created.agent_key)
    server, secret = example.serve(stage)
    try:
        assert stage.get_webhook().url.startswith("http://127.0.0.1:")
        player_reply(runtime, created, "起きてる？")
        answered = until(lambda: [line for line in lines(stage) if line[0] == "character"])
        assert answered == [("character", "「起きてる？」、ちゃんと届いたよ！", "smile")]
        assert runtime.webhook_worker.idle(10)
        assert stage.get_webhook().deliveries[0].last_status == 202

        # a repeated delivery (at least once) answers nothing twice: the claim is fetch_replies'
        body = json.dumps({"type": "reply.created", "stage_id": created.stage_id,
                           "reply": {"id": "01DUP", "text": "起きてる？", "created_at": ""}}).encode()
        url = f"http://127.0.0.1:{server.server_address[1]}/butai"
        request = urllib.request.Request(url, data=body, method="POST",
                                         headers=signing.sign(secret, "01DUP", body))
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 202
        forged = urllib.request.Request(url, data=body, method="POST",
                                        headers=signing.sign("bkw_not-the-secret", "01DUP", body))
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(forged, timeout=10)
        assert err.value.code == 401
        time.sleep(0.5)      # give a wrongly repeated answer the time to appear
        assert [line[0] for line in lines(stage)] == ["player", "character"]
    finally:
        server.shutdown()
        server.server_close()


def lambda_event(secret, body: bytes, *, base64_encoded=False, now=None):
    import base64
    headers = {k.lower(): v for k, v in signing.sign(secret, "01LAMBDA", body, now=now).items()}
    return {"headers": headers, "isBase64Encoded": base64_encoded,
            "body": base64.b64encode(body).decode() if base64_encoded else body.decode()}


def test_the_same_agent_as_a_lambda_handler(runtime, monkeypatch):
    example = load_example()
    created = runtime.stage_service.create_stage("lambda")
    stage = Stage(runtime.api_url, created.stage_id, created.agent_key)
    secret = signing.new_secret()
    for name, value in {"BUTAI_API_URL": runtime.api_url, "BUTAI_STAGE_ID": created.stage_id,
                        "BUTAI_AGENT_KEY": created.agent_key, "BUTAI_WEBHOOK_SECRET": secret}.items():
        monkeypatch.setenv(name, value)
    player_reply(runtime, created, "ラムダさん")
    body = json.dumps({"type": "reply.created", "stage_id": created.stage_id,
                       "reply": {"id": "01LAMBDA", "text": "ラムダさん", "created_at": ""}}, ensure_ascii=False)
    answer = example.lambda_handler(lambda_event(secret, body.encode(), base64_encoded=True), None)
    assert answer["statusCode"] == 200 and json.loads(answer["body"]) == {"spoken": 1}
    assert lines(stage)[-1] == ("character", "「ラムダさん」、ちゃんと届いたよ！", "smile")
    # the same delivery again: nothing new to claim, nothing spoken
    assert json.loads(example.lambda_handler(lambda_event(secret, body.encode()), None)["body"]) == {"spoken": 0}
    replayed = lambda_event(secret, body.encode(), now=time.time() - 3600)
    assert example.lambda_handler(replayed, None)["statusCode"] == 401
    tampered = lambda_event(secret, body.encode())
    tampered["body"] = tampered["body"].replace("ラムダ", "ラムダ！")
    assert example.lambda_handler(tampered, None)["statusCode"] == 401
    assert len(lines(stage)) == 2
