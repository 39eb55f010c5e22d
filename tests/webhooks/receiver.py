"""A webhook receiver on 127.0.0.1 for the tests: records every request, answers from a script."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, statuses=(), default: int = 204, headers: dict | None = None):
        self.statuses = list(statuses)      # answered in order, then `default`
        self.default = default
        self.extra_headers = headers or {}
        self.requests: list[dict] = []
        self.gate: threading.Event | None = None   # when set, every request waits for it first
        self.arrived = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if owner.gate is not None:
                    owner.gate.wait(60)
                with owner.arrived:
                    owner.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                    status = owner.statuses.pop(0) if owner.statuses else owner.default
                    owner.arrived.notify_all()
                self.send_response(status)
                for name, value in owner.extra_headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._http.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def wait_for(self, count: int, timeout: float = 30) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= count, timeout)

    def close(self) -> None:
        if self.gate is not None:
            self.gate.set()
        self._http.shutdown()
        self._http.server_close()
