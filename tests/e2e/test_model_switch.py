"""`make run MODEL_URL=… MODEL=…` sends a scenario turn's classification and its free conversation to that
server, and says so truthfully at start.

The server is a stand-in that keeps to the OpenAI standard strictly, on a real socket: it lists one model,
rejects any field the standard does not have (vLLM's ``structured_outputs`` or ``chat_template_kwargs``)
with a 400 as OpenAI's API does, answers a ``response_format`` json_schema body with a JSON answer from
the schema's labels, and a plain body with a Japanese line.  Every request is kept.  The same turn is
played against the real llama.cpp server on a real model in `make test-models` (tests/llm)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chalicelib.interpret.text import nfkc
from tests.model_switch import TEXT, play_a_turn

pytestmark = pytest.mark.e2e
MODEL = "standin-7b"
LINE = "さあねえ、いたら一杯おごってあげたいわね。"
STANDARD_FIELDS = {"model", "messages", "max_tokens", "temperature", "top_p", "n", "stop", "logprobs",
                   "top_logprobs", "response_format", "seed", "stream", "user", "presence_penalty",
                   "frequency_penalty", "max_completion_tokens"}


class StandardServer:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: dict) -> None:
                raw = json.dumps(payload, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                outer.requests.append({"method": "GET", "path": self.path})
                if self.path == "/v1/models":
                    return self._send(200, {"object": "list",
                                            "data": [{"id": MODEL, "object": "model", "owned_by": "standin"}]})
                self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"method": "POST", "path": self.path, "body": body})
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                unknown = sorted(set(body) - STANDARD_FIELDS)
                if unknown:
                    return self._send(400, {"error": {"message": f"Unrecognized request argument: {unknown[0]}"}})
                if body.get("model") != MODEL:
                    return self._send(404, {"error": {"message": f"The model {body.get('model')} does not exist"}})
                form = body.get("response_format") or {}
                if form.get("type") == "json_schema":
                    labels = form["json_schema"]["schema"]["properties"]["answer"]["enum"]
                    content = json.dumps({"answer": labels[-1]})         # "none": nothing listed fits
                else:
                    content = LINE
                self._send(200, {"object": "chat.completion", "model": MODEL, "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def chats(self) -> list[dict]:
        return [r["body"] for r in self.requests if r["path"] == "/v1/chat/completions"]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    running = StandardServer()
    yield running
    running.close()


def test_make_run_model_url_sends_classification_and_free_talk_to_that_server(server, tmp_path):
    played = play_a_turn(tmp_path / "state", server.url, MODEL)
    assert played.reply_status == 202
    # the banner names what was built, and that its server answers
    assert f"models: classifier openai at {server.url}" in played.banner
    assert f"free conversation openai at {server.url}" in played.banner
    assert f"{server.url} answers ({MODEL})" in played.banner
    chats = server.chats()
    classified = [b for b in chats if "response_format" in b]
    talked = [b for b in chats if "response_format" not in b]
    # the turn's classification reached the server: a constrained body naming the model, with the text
    # (as the interpreter reads it: normalised, so its ？ is ?)
    assert classified and all(b["model"] == MODEL for b in classified)
    assert any(nfkc(TEXT) in b["messages"][-1]["content"] for b in classified)
    # and its free conversation: a plain chat body with the player's words
    assert talked and all(b["model"] == MODEL for b in talked)
    assert any(TEXT in b["messages"][-1]["content"] for b in talked)
    turn = played.turn
    assert turn["interpretation"]["backend"]["name"] == "openai"
    assert turn["interpretation"]["backend"]["error"] is None
    assert turn["interpretation"]["backend"]["mode"] == "json_schema"
    assert turn["free_talk"]["source"] == "model" and turn["free_talk"]["text"] == LINE


def test_without_model_url_no_request_is_made(server, tmp_path):
    """The embedded default says so, and nothing is sent anywhere."""
    played = play_a_turn(tmp_path / "state", "", "")
    assert played.reply_status == 202
    assert "models: classifier lexical (word matching, no model)" in played.banner
    assert "free conversation fallback lines" in played.banner
    assert played.turn["interpretation"]["backend"]["name"] == "lexical"
    assert server.requests == []
