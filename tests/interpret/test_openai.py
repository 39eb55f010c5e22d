"""The openai backend against a fake OpenAI-compatible server on 127.0.0.1."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chalicelib.interpret import ErrorKind, InterpretChoices, InterpretContext
from chalicelib.interpret.backends import build_backend
from chalicelib.interpret.backends.base import AnswerSheet
from chalicelib.interpret.backends.openai_server import OpenAIBackend
from chalicelib.scenario import PlayerInput


class FakeServer:
    """Answers /v1/chat/completions from a queue of (status, body, delay);
    /v1/models and /tokenize as a vLLM server would.  Records every request."""

    def __init__(self):
        self.queue: list[tuple[int, object, float]] = []
        self.requests: list[dict] = []
        self.models = {"object": "list", "data": [{"id": "tiny-qwen", "object": "model", "max_model_len": 4096}]}
        self.tokenize_count: int | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status, body, delay=0.0):
                if delay:
                    time.sleep(delay)
                data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                server.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers)})
                if self.path == "/v1/models":
                    self._reply(200, server.models)
                else:
                    self._reply(404, {"error": "not found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"null")
                server.requests.append({"method": "POST", "path": self.path, "headers": dict(self.headers),
                                        "body": body})
                if self.path == "/tokenize":
                    if server.tokenize_count is None:
                        self._reply(404, {"error": "no tokenizer"})
                    else:
                        self._reply(200, {"count": server.tokenize_count, "max_model_len": 4096})
                    return
                status, reply, delay = server.queue.pop(0) if server.queue else (200, completion("none"), 0.0)
                self._reply(status, reply, delay)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def chats(self):
        return [r for r in self.requests if r["path"] == "/v1/chat/completions"]


def completion(content="A", finish="stop", logprobs=None, **message):
    choice = {"index": 0, "message": {"role": "assistant", "content": content, **message}, "finish_reason": finish}
    if logprobs is not None:
        choice["logprobs"] = {"content": [{"token": content, "logprob": logprobs[0][1],
                                           "top_logprobs": [{"token": t, "logprob": lp} for t, lp in logprobs]}]}
    return {"id": "x", "object": "chat.completion", "model": "tiny-qwen", "choices": [choice]}


@pytest.fixture
def server():
    fake = FakeServer()
    fake.thread.start()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


@pytest.fixture
def call(rules, states):
    state = states["none"]
    return InterpretChoices.make(rules, state), InterpretContext.make(rules, state)


def test_exact_body_headers_and_answer(server, call):
    choices, context = call
    server.queue.append((200, completion(" B", logprobs=[("B", -0.2), ("A", -1.9), ("none", -3.0)]), 0.0))
    backend = OpenAIBackend(server.base_url, model="tiny-qwen", api_key="secret", context_limit=8192)
    result = backend.interpret("おでん、夏は暑くない？", choices, context)
    assert result.error is None, result.detail
    assert (result.input, result.token) == (PlayerInput.intent("メニュー"), "A2")
    assert set(result.scores) == {"A1", "A2", "none"} and result.scores["A2"] > result.scores["A1"]
    [request] = server.chats()
    assert request["headers"]["Authorization"] == "Bearer secret"
    sheet = AnswerSheet.make(choices)
    fit = backend.fit("おでん、夏は暑くない？", choices, context, sheet)
    assert request["body"] == {
        "model": "tiny-qwen",
        "messages": [{"role": "system", "content": backend.instructions}, {"role": "user", "content": fit.user}],
        "temperature": 0,
        "max_tokens": 16,
        "logprobs": True,
        "top_logprobs": 20,
        "structured_outputs": {"choice": ["A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "none"]},
        "chat_template_kwargs": {"enable_thinking": False},
    }
    assert "発言:「おでん、夏は暑くない？」" in fit.user


def test_model_and_context_limit_from_the_server(server, call):
    choices, context = call
    backend = OpenAIBackend(server.base_url)
    assert backend.context_limit() == 4096
    backend.interpret("こんばんは", choices, context)
    assert server.chats()[0]["body"]["model"] == "tiny-qwen"


def test_server_tokenizer_counts_when_the_prompt_may_not_fit(server, call):
    choices, context = call
    server.tokenize_count = 1500
    backend = OpenAIBackend(server.base_url, model="tiny-qwen", context_limit=1600)
    result = backend.interpret("こんばんは", choices, context)
    assert result.error is None and result.prompt_tokens == 1500 and not result.examples_dropped
    assert any(r["path"] == "/tokenize" for r in server.requests)
    server.tokenize_count = 1590               # over 1600 - 64: examples go
    assert backend.interpret("こんばんは", choices, context).examples_dropped


def test_character_count_when_the_server_has_no_tokenizer(server, call):
    choices, context = call
    backend = OpenAIBackend(server.base_url, model="tiny-qwen", context_limit=1000)
    result = backend.interpret("こんばんは", choices, context)
    assert result.examples_dropped and result.error is None
    assert "例「" not in server.chats()[0]["body"]["messages"][1]["content"]


@pytest.mark.parametrize("status, body, kind", [
    (500, {"error": "internal"}, ErrorKind.UNAVAILABLE),
    (503, "down", ErrorKind.UNAVAILABLE),
    (429, {"error": "busy"}, ErrorKind.UNAVAILABLE),
    (400, {"error": {"message": "This model's maximum context length is 4096 tokens"}}, ErrorKind.CONTEXT_OVERFLOW),
    (400, {"error": {"message": "bad"}}, ErrorKind.BAD_REQUEST),
    (504, "gateway timeout", ErrorKind.TIMEOUT),
    (200, b"{not json", ErrorKind.MALFORMED),
    (200, {"no": "choices"}, ErrorKind.MALFORMED),
    (200, completion("K"), ErrorKind.INVALID_ANSWER),
    (200, completion(""), ErrorKind.INVALID_ANSWER),
    (200, completion("A", finish="length"), ErrorKind.INVALID_ANSWER),
    (200, completion("A", finish="content_filter"), ErrorKind.REFUSED),
])
def test_failures(server, call, status, body, kind):
    choices, context = call
    server.queue.append((status, body, 0.0))
    result = OpenAIBackend(server.base_url, model="tiny-qwen", context_limit=8192).interpret("やあ", choices, context)
    assert result.error == kind, result.detail
    assert result.input == PlayerInput.none() and result.token is None


def test_timeout(server, call):
    choices, context = call
    server.queue.append((200, completion("A"), 1.0))
    backend = OpenAIBackend(server.base_url, model="tiny-qwen", context_limit=8192, timeout=0.2)
    started = time.perf_counter()
    result = backend.interpret("やあ", choices, context)
    assert result.error == ErrorKind.TIMEOUT and result.input == PlayerInput.none()
    assert time.perf_counter() - started < 0.9


def test_connection_refused_is_unreachable(call):
    choices, context = call
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = build_backend("openai", base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=1)
    result = backend.interpret("やあ", choices, context)
    assert result.error == ErrorKind.UNREACHABLE and result.input == PlayerInput.none()
