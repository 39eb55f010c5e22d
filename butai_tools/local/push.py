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
- **No page waits for another.** Each socket has its own bounded send queue (``SEND_QUEUE_MAX``
  messages) and a thread that writes it; a fan-out only puts its message in the queues.  A page that
  does not read — its queue full, or one message unsent for ``SEND_TIMEOUT_S`` — is dropped: its socket
  is cut (the page falls back to polling and subscribes again) and the push finds it gone, as API
  Gateway's 410.  Fan-outs of different stages run side by side (``FAN_OUT_WORKERS``), one stage's one
  at a time.
- **Messages are rate-limited like requests**: every message a socket sends takes a token from the same
  per-key buckets as the HTTP routes (its key's, else its address's); one over the limit is answered
  `rate_limited` and the socket closed.
"""
from __future__ import annotations

import collections
import email.utils
import json
import logging
import secrets
import socket
import threading
import time
from http import HTTPStatus

from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.http11 import Response
from websockets.sync.server import ServerConnection, serve

from butai_tools.local.http_limits import error_body
from butai_tools.local.ratelimit import TokenBuckets
from chalicelib import tables
from chalicelib.config import Settings
from chalicelib.errors import ApiError
from chalicelib.push import messages
from chalicelib.push.connections import Connection
from chalicelib.push.sender import Gone
from chalicelib.push.service import FanOut, PushService
from chalicelib.stage.keys import hash_key

log = logging.getLogger("butai.push")
PATH = "/push"
_REQUEST_LINE_MAX = 512
_PEEK_TIMEOUT_S = 5.0
# Messages waiting for one page: a page that reads is never more than a push or two behind.
SEND_QUEUE_MAX = 16
# How long one message may take to leave for its page (loopback: well under a millisecond when it reads).
SEND_TIMEOUT_S = 5.0
_WATCH_S = 0.25
# Stages fanned out at once.
FAN_OUT_WORKERS = 4
# What the kernel keeps for one page's socket (Linux doubles it): a few full-size messages, so a page that
# stops reading is found out within a few pushes, not after megabytes of autotuned buffer.
SEND_BUFFER_BYTES = 128 * 1024


class RateLimited(ApiError):
    status, code = 429, "rate_limited"


class _Outbox:
    """One socket's bounded send queue and the thread that writes it."""

    def __init__(self, connection: ServerConnection):
        self.connection = connection
        self._queue: collections.deque[tuple[str, object]] = collections.deque()
        self._cond = threading.Condition()
        self.sending_since: float | None = None
        self.dropped = False
        threading.Thread(target=self._write, name="push-send", daemon=True).start()

    def put(self, kind: str, payload: object) -> bool:
        """Queues a message (``text``) or the close (``close``); False when the page is not keeping up."""
        with self._cond:
            if self.dropped or len(self._queue) >= SEND_QUEUE_MAX:
                return False
            self._queue.append((kind, payload))
            self._cond.notify()
            return True

    def stalled(self, now: float) -> bool:
        since = self.sending_since
        return since is not None and now - since > SEND_TIMEOUT_S

    def drop(self) -> None:
        """Cuts the socket: a send blocked on a page that does not read returns at once (the library's
        close would wait for that very send), and the page sees its socket end."""
        with self._cond:
            if self.dropped:
                return
            self.dropped = True
            self._queue.clear()
            self._cond.notify_all()
        try:
            self.connection.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def finish(self, timeout: float = SEND_TIMEOUT_S) -> None:
        """Lets what is queued (an error, the close after it) go out, then stops the writer."""
        with self._cond:
            self._cond.wait_for(lambda: self.dropped or (not self._queue and self.sending_since is None),
                                timeout)
            self.dropped = True
            self._cond.notify_all()

    def _write(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self.dropped:
                    self._cond.wait()
                if self.dropped:
                    return
                kind, payload = self._queue.popleft()
                self.sending_since = time.monotonic()
            try:
                if kind == "close":
                    self.connection.close(payload)
                    return
                self.connection.send(payload, text=True)
            except (ConnectionClosed, OSError):
                self.drop()
                return
            finally:
                with self._cond:
                    self.sending_since = None
                    self._cond.notify_all()


class LocalSockets:
    """The open sockets by connection id: the local ``Sender``.  A send only queues (never waits for a
    page); a page that does not keep up is dropped and its send raises Gone."""

    def __init__(self):
        self._open: dict[str, _Outbox] = {}
        self._lock = threading.Lock()
        self.dropped = 0          # pages dropped for not reading (the benchmark reads it)
        self._watch = threading.Thread(target=self._watch_stalls, name="push-watch", daemon=True)
        self._watch.start()

    def add(self, connection: ServerConnection) -> str:
        connection_id = secrets.token_urlsafe(12)
        with self._lock:
            self._open[connection_id] = _Outbox(connection)
        return connection_id

    def discard(self, connection_id: str) -> None:
        """The socket's handler is done with it: what is queued for it goes out first (a refusal's error
        and close), within the send timeout."""
        with self._lock:
            outbox = self._open.pop(connection_id, None)
        if outbox is not None:
            outbox.finish()

    def count(self) -> int:
        with self._lock:
            return len(self._open)

    def send(self, connection_id: str, data: bytes) -> None:
        with self._lock:
            outbox = self._open.get(connection_id)
        if outbox is None or outbox.dropped:
            raise Gone(connection_id)
        if outbox.stalled(time.monotonic()) or not outbox.put("text", data):
            self._drop(outbox)
            raise Gone(connection_id)

    def close(self, connection_id: str, code: int = CloseCode.POLICY_VIOLATION) -> None:
        with self._lock:
            outbox = self._open.get(connection_id)
        if outbox is not None and not outbox.put("close", code):
            self._drop(outbox)

    def close_all(self, code: int = CloseCode.GOING_AWAY, reason: str = "") -> int:
        """Closes every open socket, as API Gateway does at a connection's 2-hour end or after 10 idle
        minutes (the pages reconnect and catch up); returns how many were closed."""
        with self._lock:
            outboxes = list(self._open.values())
        for outbox in outboxes:
            if not outbox.put("close", code):
                self._drop(outbox)
        return len(outboxes)

    def _drop(self, outbox: _Outbox) -> None:
        if not outbox.dropped:
            with self._lock:
                self.dropped += 1
            outbox.drop()

    def _watch_stalls(self) -> None:
        # A page that stopped reading is dropped even when no further push comes for it.
        while True:
            time.sleep(_WATCH_S)
            now = time.monotonic()
            with self._lock:
                stalled = [outbox for outbox in self._open.values() if outbox.stalled(now)]
            for outbox in stalled:
                self._drop(outbox)


class MirroredConnections:
    """The subscriptions, kept in the `log` table as in the cloud and mirrored in this process: every
    subscription of the local run is made here, so a fan-out finds a stage's pages without a Query (one
    DynamoDB request less per push).  Items an earlier run left behind (their sockets closed with it) are
    never read again and go with their TTL."""

    def __init__(self, table):
        self._table = table
        self._by_stage: dict[str, dict[str, Connection]] = {}
        self._lock = threading.Lock()

    def add(self, connection: Connection) -> None:
        self._table.add(connection)
        with self._lock:
            self._by_stage.setdefault(connection.stage_id, {})[connection.connection_id] = connection

    def of_stage(self, stage_id: str) -> list[Connection]:
        with self._lock:
            return list(self._by_stage.get(stage_id, {}).values())

    def remove(self, stage_id: str, connection_id: str) -> None:
        with self._lock:
            self._by_stage.get(stage_id, {}).pop(connection_id, None)
        self._table.remove(stage_id, connection_id)


class _JsonRejects(ServerConnection):
    """The library's connection, whose refused upgrades (not a WebSocket request, a broken handshake, the
    stage stopping) answer in the API's JSON error shape instead of plain text."""

    def __init__(self, sock, protocol, *args, **kwargs):
        def reject(status, text: str) -> Response:
            status = HTTPStatus(status)
            body = error_body(status, text.strip().rstrip(".") or None)
            headers = Headers([("Date", email.utils.formatdate(usegmt=True)), ("Connection", "close"),
                               ("Content-Length", str(len(body))), ("Content-Type", "application/json")])
            return Response(status.value, status.phrase, headers, body)
        protocol.reject = reject
        super().__init__(sock, protocol, *args, **kwargs)


class LocalPush:
    def __init__(self, settings: Settings, host: str = "127.0.0.1", limiter: TokenBuckets | None = None):
        self.settings = settings
        self.sockets = LocalSockets()
        self.service: PushService | None = None
        # The HTTP routes' own buckets: a key's messages and its requests count alike.
        self.limiter = limiter
        self._pending: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._running: set[str] = set()
        self._seen: dict[str, tuple[str, str, str, str]] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self.fan_outs: collections.deque[tuple[str, float, FanOut]] = collections.deque(maxlen=4096)
        # The library's own server, on a socket of its own that nothing uses: the pages' sockets arrive
        # through take(); its serve_forever only keeps shutdown() able to close them.
        self._server = serve(self._serve, sock=socket.create_server((host, 0)), process_request=self._check,
                             process_response=self._headers, max_size=messages.INBOUND_MAX_BYTES,
                             compression=None, server_header="butai", ping_interval=20, ping_timeout=20,
                             close_timeout=2, create_connection=_JsonRejects)
        self._threads = [threading.Thread(target=self._server.serve_forever, name="push-server", daemon=True)]
        self._threads += [threading.Thread(target=self._fan_out_loop, name=f"push-fan-out-{n}", daemon=True)
                          for n in range(FAN_OUT_WORKERS)]

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
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
        except OSError:
            pass
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
        # As every other answer of the local server says it (a refused upgrade is a JSON error).
        response.headers["X-Content-Type-Options"] = "nosniff"
        return None

    def _serve(self, connection: ServerConnection) -> None:
        assert self.service is not None
        connection_id = self.sockets.add(connection)
        address = (connection.remote_address or ("?",))[0]
        try:
            for message in connection:
                if self._limited(connection_id, message, address):
                    return
                if not self.service.message(connection_id, message):
                    return
        except ConnectionClosed:
            pass
        finally:
            self.sockets.discard(connection_id)

    def _limited(self, connection_id: str, message, address: str) -> bool:
        """Takes the message's token (its key's bucket, else its address's); over the limit, the socket is
        answered `rate_limited` and closed."""
        if self.limiter is None:
            return False
        key = None
        try:
            data = json.loads(message) if len(message) <= messages.INBOUND_MAX_BYTES else None
            key = data.get("key") if isinstance(data, dict) else None
        except (ValueError, TypeError):
            pass
        caller = "key:" + hash_key(key) if isinstance(key, str) and key else "addr:" + address
        wait = self.limiter.take(caller)
        if not wait:
            return False
        try:
            self.sockets.send(connection_id, messages.error(RateLimited(
                f"too many messages for this key; wait {max(1, round(wait))} s before connecting again")))
        except Gone:
            pass
        self.sockets.close(connection_id)
        return True

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

    def _next_stage(self) -> str | None:
        """The longest-waiting stage no other worker is fanning out (called holding the condition)."""
        for stage_id in self._pending:
            if stage_id not in self._running:
                del self._pending[stage_id]
                return stage_id
        return None

    def _fan_out_loop(self) -> None:
        assert self.service is not None
        while True:
            with self._cond:
                stage_id = None
                while not self._stopping and (stage_id := self._next_stage()) is None:
                    self._cond.wait()
                if self._stopping or stage_id is None:
                    return
                self._running.add(stage_id)
            try:
                self._fan_out(stage_id)
            except Exception:  # noqa: BLE001 - one stage's trouble must not stop the others' pushes
                log.exception("local push fan-out for %s failed", stage_id)
            finally:
                with self._cond:
                    self._running.discard(stage_id)
                    if stage_id in self._pending:
                        self._cond.notify()      # it changed again meanwhile: its next fan-out may start

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
