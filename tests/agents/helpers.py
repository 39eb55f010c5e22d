"""Helpers for the agent-side tests: a scripted fake HTTP server, raw HTTP calls,
and fresh stages of the local runtime written into a local.json of their own."""
from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from chalicelib import context
from chalicelib.config import Settings
from tests.conftest import ROOT, call

SPEAK_OK = {"id": "01ABC", "expression": "smile", "asked_expression": "smile",
            "image_url": "/characters/hiyori/smile.svg", "version": "01ABC", "created_at": "2026-01-01T00:00:00.000Z"}


def error_body(code: str, message: str, field: str | None = None) -> dict:
    err = {"code": code, "message": message}
    if field:
        err["field"] = field
    return {"error": err}


@dataclass
class Scripted:
    status: int = 200
    body: object = None          # dict/list → JSON; bytes → as is
    headers: dict | None = None
    drop: bool = False           # close the connection without answering


class FakeServer:
    """A tiny HTTP server on 127.0.0.1 that answers from a script and records requests."""

    def __init__(self):
        self.script: list[Scripted] = []
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                with owner._lock:
                    owner.requests.append({"method": self.command, "path": self.path,
                                           "headers": {k.lower(): v for k, v in self.headers.items()},
                                           "body": json.loads(raw) if raw else None})
                    step = owner.script.pop(0) if owner.script else Scripted(500, error_body("internal", "no script"))
                if step.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = step.body if isinstance(step.body, bytes) else json.dumps(step.body).encode()
                self.send_response(step.status)
                headers = {"Content-Type": "application/json", **(step.headers or {})}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def answer(self, *steps: Scripted) -> None:
        self.script.extend(steps)


@dataclass
class LocalStage:
    """A fresh stage of the running local runtime, listed under ``name`` in a local.json of its own."""
    name: str
    api_url: str
    stage_id: str
    agent_key: str
    player_key: str
    local_json: Path
    aws_endpoint: str = ""

    def env(self, **extra: str) -> dict:
        env = {k: v for k, v in os.environ.items()
               if k not in ("BUTAI_API_URL", "BUTAI_AGENT_KEY", "BUTAI_STAGE_ID", "BUTAI_STAGE")}
        env.update({"BUTAI_LOCAL_JSON": str(self.local_json), "PYTHONPATH": str(ROOT),
                    "PYTHONUNBUFFERED": "1"}, **extra)
        return env

    def reply(self, text: str) -> None:
        status, _, body = call(self.api_url, "POST", f"/stages/{self.stage_id}/reply", self.player_key,
                               {"text": text})
        assert status == 202, body

    def view(self) -> dict:
        status, _, body = call(self.api_url, "GET", f"/stages/{self.stage_id}", self.player_key)
        assert status == 200, body
        return body

    def held(self) -> int | None:
        """When the earliest lease held on one of the stage's unacknowledged replies ends (None: no reply is
        held), read from the stage's table."""
        store = context.build(Settings(aws_endpoint=self.aws_endpoint)).stage.store
        return store.pending_replies(self.stage_id).next_lease_end_ms


def local_stage(runtime, tmp_path: Path, name: str) -> LocalStage:
    service = context.build(Settings(aws_endpoint=runtime.info["aws_endpoint"])).stage
    created = service.create_stage(name)
    api = runtime.info["api_url"]
    path = tmp_path / "local.json"
    entry = {"stage_id": created.stage_id, "agent_key": created.agent_key, "player_key": created.player_key,
             "stage_url": f"{api}/#stage={created.stage_id}&key={created.player_key}"}
    path.write_text(json.dumps({"api_url": api, "aws_endpoint": runtime.info["aws_endpoint"],
                                "pid": runtime.info["pid"], "stages": {name: entry}}), encoding="utf-8")
    return LocalStage(name, api, created.stage_id, created.agent_key, created.player_key, path,
                      runtime.info["aws_endpoint"])
