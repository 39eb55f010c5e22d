"""The page's push socket in the local run: `ws://127.0.0.1:8000/push`, the protocol that API Gateway's
WebSocket API serves in the cloud (chalicelib/push/messages.py), on the page's own origin.

- **Sockets.** The local HTTP server hands every connection whose request line is `GET /push` to the
  `websockets` library (its threaded server does the handshake, framing, pings and closing); each
  message a page sends goes to the same ``PushService.message`` as the cloud's message function.
- **What starts a fan-out.** In the cloud, the `current` table's stream.  Here, the API's own DynamoDB
  client: every successful write to the `current` table (a line, a reply, a turn, new keys) names its
  stage to a fan-out thread, which reads the stage once and calls the same ``PushService.fan_out``.  So
  the writer never waits for pages, as in the cloud, and no write path needs to know about pushes.
  A write made by another process (`butai stage rotate-keys`) is seen at the stage's next change.
- **Subscriptions** live in the local `log` table like the cloud's; a socket closed here is found gone
  by the next push (as API Gateway's 410 tells the cloud) and its subscription removed.
"""
from __future__ import annotations

import collections
import logging
import secrets
import socket
import threading
import time
from http import HTTPStatus

from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.sync.server import ServerConnection, serve

from chalicelib import tables
from chalicelib.config import Settings
from chalicelib.push import messages
from chalicelib.push.sender import Gone
from chalicelib.push.service import FanOut, PushService

log = logging.getLogger("butai.push")
PATH = "/push"
_REQUEST_LINE_MAX = 512
_PEEK_TIMEOUT_S = 5.0


class LocalSockets:
    """The open sockets by connection id: the local ``Sender``."""

    def __init__(self):
        self._open: dict[str, ServerConnection] = {}
        self._lock = threading.Lock()

    def add(self, connection: ServerConnection) -> str:
        connection_id = secrets.token_urlsafe(12)
        with self._lock:
            self._open[connection_id] = connection
        return connection_id

    def discard(self, connection_id: str) -> None:
        with self._lock:
            self._open.pop(connection_id, None)

    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def send(self, connection_id: str, data: bytes) -> None:
        with self._lock:
            connection = self._open.get(connection_id)
        if connection is None:
            raise Gone(connection_id)
        try:
            connection.send(data, text=True)
        except ConnectionClosed:
            raise Gone(connection_id) from None

    def close(self, connection_id: str, code: int = CloseCode.POLICY_VIOLATION) -> None:
        with self._lock:
            connection = self._open.get(connection_id)
        if connection is not None:
            connection.close(code)

    def close_all(self, code: int = CloseCode.GOING_AWAY, reason: str = "") -> int:
        """Closes every open socket, as API Gateway does at a connection's 2-hour end or after 10 idle
        minutes (the pages reconnect and catch up); returns how many were closed."""
        with self._lock:
            connections = list(self._open.values())
        for connection in connections:
            connection.close(code, reason)
        return len(connections)


class LocalPush:
    def __init__(self, settings: Settings, host: str = "127.0.0.1"):
        self.settings = settings
        self.sockets = LocalSockets()
        self.service: PushService | None = None
        self._pending: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._seen: dict[str, tuple[str, str, str, str]] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self.fan_outs: collections.deque[tuple[str, float, FanOut]] = collections.deque(maxlen=1024)
        # The library's own server, on a socket of its own that nothing uses: the pages' sockets arrive
        # through take(); its serve_forever only keeps shutdown() able to close them.
        self._server = serve(self._serve, sock=socket.create_server((host, 0)), process_request=self._check,
                             process_response=self._headers, max_size=messages.INBOUND_MAX_BYTES,
                             compression=None, server_header="butai", ping_interval=20, ping_timeout=20,
                             close_timeout=2)
        self._threads = [threading.Thread(target=self._server.serve_forever, name="push-server", daemon=True),
                         threading.Thread(target=self._fan_out_loop, name="push-fan-out", daemon=True)]

    def start(self, service: PushService, dynamodb_client) -> LocalPush:
        self.service = service
        for thread in self._threads:
            thread.start()
        self.watch(dynamodb_client)
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._server.shutdown(code=CloseCode.GOING_AWAY)
        for thread in self._threads:
            thread.join(timeout=5)

    # -- sockets -----------------------------------------------------------------------------------
    @staticmethod
    def wants(sock: socket.socket) -> bool:
        """Whether a new connection asks for the push socket (`GET /push …`), read without consuming it."""
        deadline = time.monotonic() + _PEEK_TIMEOUT_S
        head = b""
        try:
            sock.settimeout(_PEEK_TIMEOUT_S)
            while time.monotonic() < deadline:
                head = sock.recv(_REQUEST_LINE_MAX, socket.MSG_PEEK)
                if not head or b"\n" in head or len(head) >= _REQUEST_LINE_MAX:
                    break
                time.sleep(0.002)   # the rest of the request line is on its way
        except OSError:
            return False
        finally:
            try:
                sock.settimeout(None)
            except OSError:
                pass
        parts = head.split(b"\r\n", 1)[0].split(b" ")
        return len(parts) == 3 and parts[0] == b"GET" and parts[1].split(b"?", 1)[0] == PATH.encode()

    def take(self, sock: socket.socket, address) -> None:
        """Serves one connection that asked for the push socket, in the calling thread, until it closes."""
        server = self._server
        with server.lock:
            server.handler_threads.add(threading.current_thread())
        server.handler(sock, address)

    def _check(self, connection: ServerConnection, request):
        if self.service is None or self._stopping:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "the local stage is stopping\n")
        return None

    @staticmethod
    def _headers(connection: ServerConnection, request, response):
        # As every other answer of the local server says it (a refused upgrade is a text/plain body).
        response.headers["X-Content-Type-Options"] = "nosniff"
        return None

    def _serve(self, connection: ServerConnection) -> None:
        assert self.service is not None
        connection_id = self.sockets.add(connection)
        try:
            for message in connection:
                if not self.service.message(connection_id, message):
                    return
        except ConnectionClosed:
            pass
        finally:
            self.sockets.discard(connection_id)

    # -- what starts a fan-out ---------------------------------------------------------------------------
    def watch(self, dynamodb_client) -> None:
        """Hears every successful write of ``dynamodb_client`` to the `current` table."""
        current = tables.table_name(self.settings, "current")

        def noted(params, context, **_):
            # A transaction's actions, or the one item of an UpdateItem / PutItem.
            actions = [a for item in params["TransactItems"] for a in item.values()] \
                if "TransactItems" in params else [params]
            stage_ids = {((a.get("Key") or a.get("Item") or {}).get("stage_id") or {}).get("S")
                         for a in actions if isinstance(a, dict) and a.get("TableName") == current}
            stage_ids.discard(None)
            if stage_ids:
                context["butai_stages"] = stage_ids

        def written(http_response, context, **_):
            if http_response.status_code == 200 and context.get("butai_stages"):
                self.changed(*context["butai_stages"])

        events = dynamodb_client.meta.events
        for operation in ("TransactWriteItems", "UpdateItem", "PutItem"):
            events.register(f"before-parameter-build.dynamodb.{operation}", noted)
            events.register(f"after-call.dynamodb.{operation}", written)

    def changed(self, *stage_ids: str) -> None:
        with self._cond:
            for stage_id in stage_ids:
                self._pending[stage_id] = None
            self._cond.notify()

    def _fan_out_loop(self) -> None:
        assert self.service is not None
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                stage_id, _ = self._pending.popitem(last=False)
            try:
                self._fan_out(stage_id)
            except Exception:  # noqa: BLE001 - one stage's trouble must not stop the others' pushes
                log.exception("local push fan-out for %s failed", stage_id)

    def _fan_out(self, stage_id: str) -> None:
        assert self.service is not None
        stage = self.service.stages.store.get_stage(stage_id)
        if stage is None:
            return
        # The stream's old image, kept here: the version shows news, the key hashes a rotation.
        now = (stage.version, stage.agent_key_hash, stage.player_key_hash, stage.voiced)
        before = self._seen.get(stage_id)
        self._seen[stage_id] = now
        moved = before is None or before[0] != now[0]
        if not moved and before == now:
            return
        started = time.perf_counter()
        if moved or before is None or before[1:3] != now[1:3]:
            done = self.service.fan_out(stage, show=moved, since=before[0] if before else None)
            self.fan_outs.append((stage_id, time.perf_counter() - started, done))
        if before is not None and before[3] != now[3]:
            # The voice worker stored a line's audio: the pages get it as an `audio` message.
            done = self.service.fan_out_audio(stage, before[3])
            self.fan_outs.append((stage_id, time.perf_counter() - started, done))
