"""scripts/classifier_smoke.py against moto's SageMaker runtime and against a
small OpenAI-compatible server on 127.0.0.1."""
import importlib.util
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("classifier_smoke", ROOT / "scripts" / "classifier_smoke.py")
smoke = importlib.util.module_from_spec(spec)
spec.loader.exec_module(smoke)

ALLOWED = ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "none"]


def completion(answer: str, top: dict[str, float]) -> dict:
    """A vLLM chat completion with logprobs, as the container answers."""
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "model": "Qwen/Qwen3-4B-Instruct-2507",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": answer},
                     "logprobs": {"content": [{
                         "token": answer, "logprob": math.log(top.get(answer, 0.5)),
                         "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()]}]}}],
        "usage": {"prompt_tokens": 412, "completion_tokens": 1, "total_tokens": 413},
    }


def test_candidates_are_the_reference_scenarios():
    scenario = json.loads((ROOT / "scenarios" / "chinoike.json").read_text(encoding="utf-8"))
    intents = {i["id"] for i in scenario["intents"]}
    places = {p["id"] for p in scenario["places"]}
    for _, inp, _ in smoke.CANDIDATES:
        kind, _, name = inp.partition(":")
        assert (kind == "意図" and name in intents) or (kind == "移動" and name in places) or inp == "離脱", inp
    assert smoke.allowed_answers() == ALLOWED


def test_request_body_is_the_structured_outputs_chat_body():
    body = smoke.request_body("こんにちは", "m")
    assert body["structured_outputs"] == {"choice": ALLOWED}
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0
    assert body["model"] == "m"
    assert "発言:「こんにちは」" in body["messages"][1]["content"]
    assert "model" not in smoke.request_body("x")


# ---------------------------------------------------------------- SageMaker (moto)

@pytest.fixture
def moto_sagemaker(monkeypatch):
    from moto import mock_aws
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield


def queue_sagemaker_results(*bodies: dict) -> None:
    import requests
    results = [{"Body": json.dumps(b, ensure_ascii=False), "ContentType": "application/json",
                "InvokedProductionVariant": "AllTraffic", "CustomAttributes": ""} for b in bodies]
    response = requests.post("http://motoapi.amazonaws.com/moto-api/static/sagemaker/endpoint-results",
                             json={"region": "us-east-1", "results": results})
    assert response.status_code == 201


def test_endpoint_answer_probabilities_and_latency(moto_sagemaker, capsys):
    queue_sagemaker_results(completion("A", {"A": 0.80, "B": 0.05, "none": 0.10, "F": 0.05}))
    code = smoke.main(["--endpoint", "butai-test-classifier", "--region", "us-east-1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["answer"] == "A" and out["input"] == "A1 意図:音楽" and out["expected"] == "A"
    assert out["probabilities"]["A"] == pytest.approx(0.80, abs=1e-3)
    assert out["probabilities"]["none"] == pytest.approx(0.10, abs=1e-3)
    assert sum(out["probabilities"].values()) == pytest.approx(1.0, abs=1e-3)
    assert out["latency_ms"]["n"] == 1 and out["latency_ms"]["first"] > 0


def test_endpoint_answer_outside_the_choices_fails(moto_sagemaker, capsys):
    queue_sagemaker_results(completion("音楽の話です", {"音": 0.9}))
    code = smoke.main(["--endpoint", "butai-test-classifier", "--region", "us-east-1"])
    captured = capsys.readouterr()
    assert code == 1
    assert "is not one of" in captured.err


def test_endpoint_without_a_chat_completion_is_no_answer(moto_sagemaker, capsys):
    # moto's default answer when nothing is queued is the string "body".
    code = smoke.main(["--endpoint", "butai-test-classifier", "--region", "us-east-1"])
    assert code == 2
    assert "not a chat completion" in capsys.readouterr().err


# ---------------------------------------------------------------- OpenAI-compatible server

class FakeServer:
    def __init__(self, answer: dict | None = None, status: int = 200):
        self.requests: list[tuple[str, str, dict | None, dict]] = []
        self.answer = answer
        self.status = status
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, payload):
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer.requests.append(("GET", self.path, None, dict(self.headers)))
                if self.path == "/v1/models":
                    self.reply(200, {"object": "list", "data": [{"id": "served-classifier", "object": "model",
                                                                 "max_model_len": 8192}]})
                else:
                    self.reply(404, {"error": "not found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                outer.requests.append(("POST", self.path, body, dict(self.headers)))
                if self.path != "/v1/chat/completions":
                    self.reply(404, {"error": "not found"})
                elif outer.status != 200:
                    self.reply(outer.status, {"error": {"message": "overloaded"}})
                else:
                    self.reply(200, outer.answer)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_openai_server_gets_the_structured_outputs_body(capsys):
    answer = completion("none", {"none": 0.6, "A": 0.3, "B": 0.1})
    with FakeServer(answer) as server:
        code = smoke.main(["--url", server.url, "--api-key", "sekret", "--text", "こんばんは", "--repeat", "3"])
    out = capsys.readouterr().out
    assert code == 0
    posts = [r for r in server.requests if r[0] == "POST"]
    assert len(posts) == 3
    _, path, body, headers = posts[0]
    assert body["model"] == "served-classifier"              # from GET /v1/models
    assert body["structured_outputs"] == {"choice": ALLOWED}
    assert body["top_logprobs"] == 20 and body["logprobs"] is True
    assert headers["Authorization"] == "Bearer sekret"
    assert "answer:  none → なし" in out
    assert "over 3" in out
    assert "0.600" in out and "0.300" in out


def test_openai_server_error_is_no_answer(capsys):
    with FakeServer(status=503) as server:
        code = smoke.main(["--url", server.url, "--model", "m"])
    assert code == 2
    assert "HTTP 503" in capsys.readouterr().err


def test_nothing_listening_is_no_answer(capsys):
    with FakeServer() as server:
        url = server.url
    code = smoke.main(["--url", url, "--model", "m", "--timeout", "5"])
    assert code == 2
