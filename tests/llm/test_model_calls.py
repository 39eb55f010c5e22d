"""The model-call layer against small HTTP servers on 127.0.0.1: the probe, the json_schema →
json_object fallback, retries, error kinds, and `butai doctor`'s diagnoses."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from butai_tools.llm.doctor import banner_lines, diagnose
from chalicelib.config import Settings
from chalicelib.context import build_models
from chalicelib.llm import Chat, ChoiceMode, Chooser, ErrorKind, ModelCallError, OpenAITransport, with_retries

LABELS = ["A", "B", "none"]
MESSAGES = [{"role": "user", "content": "u"}]


class Server:
    """GET /v1/models lists `models`; POST /v1/chat/completions answers with `answer(body)` →
    (status, payload).  Every chat body is kept."""

    def __init__(self, models, answer):
        self.models, self.answer, self.bodies = models, answer, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, payload):
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                self._send(200, {"object": "list", "data": outer.models})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                self._send(*outer.answer(body))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(models, answer):
        servers.append(Server(models, answer))
        return servers[-1]
    yield start
    for server in servers:
        server.close()


def message(content):
    return 200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}]}


def standard(body):
    """A server that honours response_format json_schema, and plain chat."""
    if "response_format" in body:
        return message(json.dumps({"answer": body["response_format"]["json_schema"]["schema"]["properties"]
                                   ["answer"]["enum"][0]}))
    return message("こんばんは。")


def test_probe_picks_vllm_for_a_vllm_server(serve):
    server = serve([{"id": "qwen", "owned_by": "vllm", "max_model_len": 4096}],
                   lambda body: message(body["structured_outputs"]["choice"][1] if "structured_outputs" in body
                                        else "はい"))
    chooser = Chooser(OpenAITransport(server.url), model="qwen")
    assert chooser.choose(MESSAGES, LABELS).label == "B"
    assert chooser.current_mode is ChoiceMode.VLLM
    chat = Chat(OpenAITransport(server.url))
    chat.complete(MESSAGES, max_tokens=8, temperature=0.5)
    assert server.bodies[-1]["chat_template_kwargs"] == {"enable_thinking": False}
    assert server.bodies[-1]["model"] == "qwen" and chat.current_mode == "vllm"


def test_probe_picks_the_standard_for_other_servers(serve):
    server = serve([{"id": "qwen2.5:7b", "owned_by": "library"}], standard)
    chooser = Chooser(OpenAITransport(server.url), model="qwen2.5:7b")
    choice = chooser.choose(MESSAGES, LABELS)
    assert (choice.label, choice.mode) == ("A", ChoiceMode.JSON_SCHEMA)
    assert server.bodies[-1]["response_format"]["type"] == "json_schema"
    chat = Chat(OpenAITransport(server.url))
    assert chat.complete(MESSAGES, max_tokens=8, temperature=0.5) == "こんばんは。"
    assert set(server.bodies[-1]) == {"model", "messages", "max_tokens", "temperature"}


def test_a_server_that_rejects_json_schema_gets_json_object_from_then_on(serve):
    def older(body):
        if body["response_format"]["type"] != "json_object":
            return 422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "Input should be 'text'"}]}
        return message('{"answer": "none"}')
    server = serve([{"id": "tiny", "owned_by": "me"}], older)
    chooser = Chooser(OpenAITransport(server.url))
    assert chooser.choose(MESSAGES, LABELS).label == "none"
    assert chooser.current_mode is ChoiceMode.JSON_OBJECT
    assert [b["response_format"]["type"] for b in server.bodies] == ["json_schema", "json_object"]
    chooser.choose(MESSAGES, LABELS)
    assert server.bodies[-1]["response_format"]["type"] == "json_object"
    # llama-cpp-python's server reports the same rejection as a 500 that names the field
    def older_500(body):
        if body["response_format"]["type"] != "json_object":
            return 500, {"error": {"message": "1 validation error: response_format.type: expected 'text' or "
                                              "'json_object'"}}
        return message('{"answer": "B"}')
    other = serve([{"id": "tiny", "owned_by": "me"}], older_500)
    chooser = Chooser(OpenAITransport(other.url))
    assert chooser.choose(MESSAGES, LABELS).label == "B" and chooser.current_mode is ChoiceMode.JSON_OBJECT
    # a plain 500 is not a rejection of the form
    broken = serve([{"id": "tiny"}], lambda body: (500, {"error": "boom"}))
    with pytest.raises(ModelCallError) as caught:
        Chooser(OpenAITransport(broken.url)).choose(MESSAGES, LABELS)
    assert caught.value.kind == ErrorKind.UNAVAILABLE and len(broken.bodies) == 1
    # a configured mode is kept as configured: the rejection is the answer
    with pytest.raises(ModelCallError) as caught:
        Chooser(OpenAITransport(server.url), mode="json_schema").choose(MESSAGES, LABELS)
    assert caught.value.kind == ErrorKind.BAD_REQUEST and caught.value.status == 422


@pytest.mark.parametrize("status, payload, kind", [
    (404, {"error": {"message": "model \"qwen9\" not found, try pulling it first"}}, ErrorKind.MODEL_MISSING),
    (404, {"error": {"message": "The model `gpt-9` does not exist"}}, ErrorKind.MODEL_MISSING),
    (404, {"detail": "Not Found"}, ErrorKind.BAD_REQUEST),
    (503, {"error": "loading"}, ErrorKind.UNAVAILABLE),
    (504, {"error": "slow"}, ErrorKind.TIMEOUT),
])
def test_http_status_kinds(serve, status, payload, kind):
    server = serve([{"id": "m"}], lambda body: (status, payload))
    with pytest.raises(ModelCallError) as caught:
        OpenAITransport(server.url).chat({"messages": MESSAGES})
    assert caught.value.kind == kind and caught.value.status == status


def test_transient_failures_are_retried_and_others_not():
    calls = []

    def flaky(kind, fail_times):
        def call():
            calls.append(kind)
            if len(calls) <= fail_times:
                raise ModelCallError(kind, "x")
            return "ok"
        return call
    assert with_retries(flaky(ErrorKind.UNREACHABLE, 2), retries=2, sleep=lambda s: None) == "ok"
    assert len(calls) == 3
    calls.clear()
    with pytest.raises(ModelCallError):
        with_retries(flaky(ErrorKind.TIMEOUT, 1), retries=3, sleep=lambda s: None)
    assert len(calls) == 1                      # a timeout has already spent the turn's time
    calls.clear()
    with pytest.raises(ModelCallError):
        with_retries(flaky(ErrorKind.UNAVAILABLE, 5), retries=1, sleep=lambda s: None)
    assert len(calls) == 2


# ---------------------------------------------------------------- butai doctor

def env_for(url, **more):
    """The settings `make run MODEL_URL=url` reads (with more variables set)."""
    return Settings.from_env({"BUTAI_MODEL_URL": url, **more})


def built(settings):
    """The classifier and the generator that the services build from `settings`."""
    models = build_models(settings)
    return models.classifier(), models.generator()


def test_doctor_all_live(serve):
    server = serve([{"id": "qwen2.5:latest", "owned_by": "library"}], standard)
    checks = diagnose(env_for(server.url, BUTAI_MODEL="qwen2.5"))       # Ollama's :latest is the same model
    assert [c.ok for c in checks] == [True, True], [c.line() for c in checks]
    assert checks[0].mode == "json_schema" and "answered 'A' within the constraint" in checks[0].message
    assert "no logprobs" in checks[0].message
    assert checks[1].backend == "openai" and "こんばんは" in checks[1].message


def test_doctor_unreachable():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    checks = diagnose(env_for(f"http://127.0.0.1:{port}/v1"))
    assert all(not c.ok and c.kind == ErrorKind.UNREACHABLE for c in checks)
    assert "cannot reach the server" in checks[0].message and "MODEL_URL" in checks[0].message
    banner = banner_lines(*built(env_for(f"http://127.0.0.1:{port}/v1")))
    assert banner[0] == f"models: classifier openai at http://127.0.0.1:{port}/v1"
    assert banner[1] == f"        free conversation openai at http://127.0.0.1:{port}/v1"
    assert "unreachable" in banner[2] and len(banner) == 4       # one server, asked once


def test_doctor_missing_model(serve):
    server = serve([{"id": "llama3.2:latest", "owned_by": "library"}], standard)
    checks = diagnose(env_for(server.url, BUTAI_MODEL="qwen2.5:7b"))
    assert all(not c.ok and c.kind == ErrorKind.MODEL_MISSING for c in checks)
    assert "no model 'qwen2.5:7b'" in checks[0].message and "llama3.2:latest" in checks[0].message
    assert "ollama pull qwen2.5:7b" in checks[0].message


def test_doctor_server_that_ignores_constraints(serve):
    server = serve([{"id": "m", "owned_by": "organization_owner"}], lambda body: message("Hello and welcome!"))
    checks = diagnose(env_for(server.url))
    classifier, talk = checks
    assert not classifier.ok and classifier.kind == ErrorKind.INVALID_ANSWER
    assert "ignores constraints in mode json_schema" in classifier.message
    assert talk.ok                              # free text is what free conversation wants


def test_doctor_without_models_and_bad_settings(monkeypatch, capsys):
    checks = diagnose(Settings.from_env({}))
    assert [c.backend for c in checks] == ["lexical", "fallback lines"] and all(c.ok for c in checks)
    assert banner_lines(*built(Settings.from_env({}))) == ["models: classifier lexical (word matching, no model)",
                                                          "        free conversation fallback lines"]
    bad = diagnose(Settings.from_env({"BUTAI_CLASSIFIER": "sagemaker"}))
    assert not bad[0].ok and "endpoint" in bad[0].message
    with pytest.raises(ValueError, match="BUTAI_MODEL_URL"):
        Settings.from_env({"BUTAI_GENERATOR": "openai"})
    # the command reads the settings first and says which one is wrong
    from butai_tools.cli import main
    monkeypatch.setenv("BUTAI_GENERATOR", "openai")
    monkeypatch.delenv("BUTAI_MODEL_URL", raising=False)
    assert main(["doctor"]) == 1
    assert "FAIL settings: BUTAI_GENERATOR=openai needs BUTAI_MODEL_URL" in capsys.readouterr().err


def test_cli_doctor_exit_status(serve, capsys, monkeypatch):
    from butai_tools.cli import main
    for name in ("BUTAI_MODEL_URL", "BUTAI_MODEL", "BUTAI_CLASSIFIER", "BUTAI_GENERATOR", "BUTAI_MODEL_MODE"):
        monkeypatch.delenv(name, raising=False)
    server = serve([{"id": "m"}], standard)
    assert main(["doctor", "--base-url", server.url, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["use"] for c in out] == ["classifier", "free conversation"] and all(c["ok"] for c in out)
    server_bad = serve([{"id": "m"}], lambda body: message("free text"))
    assert main(["doctor", "--base-url", server_bad.url]) == 1
    assert "FAIL classifier" in capsys.readouterr().out
