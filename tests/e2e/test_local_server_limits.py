"""What a connection may cost the local server, over real sockets: bodies refused by their declared size
before a byte is read (and before the key is looked up), a deadline for every request however slowly it
dribbles in, chunked bodies read within the limit without losing the connection's place, a JSON error for
every status the server answers itself, routes matched exactly as API Gateway matches them, and one
Authorization header."""
from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse

import pytest

from butai_tools.local import http_limits
from tests.conftest import call

pytestmark = pytest.mark.e2e
# The server's deadlines and a margin for a loaded machine.
SLACK_S = 8


def _connect(runtime, rcvbuf: int | None = None) -> socket.socket:
    parts = urllib.parse.urlsplit(runtime.info["api_url"])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(http_limits.IDLE_S + http_limits.REQUEST_S + SLACK_S)
    sock.connect((parts.hostname, parts.port))
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict, bytes]:
    """One response read off the socket (status, lower-case headers, body); the socket stays usable."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError(f"closed after {head!r}")
        head += chunk
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    body = b""
    while len(body) < int(headers.get("content-length", "0")):
        body += sock.recv(65536)
    return status, headers, body


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (nothing more comes)."""
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, TimeoutError):
        return True


def _error(body: bytes) -> dict:
    payload = json.loads(body)
    assert set(payload) == {"error"} and payload["error"]["code"] and payload["error"]["message"], payload
    return payload["error"]


def _log(runtime, stage) -> list[str]:
    status, _, view = call(runtime.info["api_url"], "GET", f"/stages/{stage['stage_id']}", stage["player_key"])
    assert status == 200
    return [entry["id"] for entry in view["log"]]


@pytest.fixture
def demo(local_runtime):
    return local_runtime.info["stages"]["demo"]


@pytest.mark.parametrize("length", [http_limits.BODY_MAX_BYTES + 1, 100_000_000, 10**12])
def test_a_body_over_the_limit_is_refused_by_its_length_before_a_byte_is_read(local_runtime, demo, length):
    """Before: 100 MB read before the 413, 50 MB without a key before the 401, and `Content-Length: 10^12`
    a MemoryError with no answer at all."""
    before = _log(local_runtime, demo)
    target = f"/stages/{demo['stage_id']}/speak"
    for auth, status, code in ((f"Bearer {demo['agent_key']}", 413, "payload_too_large"),
                               ("Bearer bka_not-this-stages-key", 413, "payload_too_large"),   # no read to check it
                               (None, 401, "missing_key")):
        with _connect(local_runtime) as sock:
            started = time.monotonic()
            sock.sendall((f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          + (f"Authorization: {auth}\r\n" if auth else "")
                          + f"Content-Length: {length}\r\nExpect: 100-continue\r\n\r\n").encode())
            # Nothing of the body is sent: the answer comes anyway, at once, and no `100 Continue` first.
            got, headers, body = _answer(sock)
            assert (got, _error(body)["code"]) == (status, code), body
            assert headers["content-type"] == "application/json" and headers["connection"] == "close"
            assert time.monotonic() - started < http_limits.REQUEST_S
            assert _closed(sock)
    assert _log(local_runtime, demo) == before


def test_a_request_that_never_arrives_is_cut_off_at_its_deadline(local_runtime, demo):
    """A body that never comes, a body dribbled a byte at a time, headers dribbled a line at a time: each is
    answered 408 once its deadline passes (before: a body that never came held its thread for good), and
    an idle kept-alive connection is closed; meanwhile the server answers everyone else at once."""
    target = f"/stages/{demo['stage_id']}/speak"
    head = (f"POST {target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {demo['agent_key']}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n").encode()
    results: dict[str, tuple] = {}

    def never(sock):
        sock.sendall(head + b'{"text": "')

    def dribble_body(sock):
        sock.sendall(head)
        for _ in range(100):
            sock.sendall(b" ")
            time.sleep(0.5)

    def dribble_head(sock):
        sock.sendall(f"POST {target} HTTP/1.1\r\n".encode())
        for i in range(100):
            sock.sendall(f"X-Slow-{i}: 1\r\n".encode())
            time.sleep(0.5)

    def idle(sock):
        sock.sendall(f"GET /stages/{demo['stage_id']} HTTP/1.1\r\nHost: x\r\n"
                     f"Authorization: Bearer {demo['player_key']}\r\n\r\n".encode())
        results["idle-first"] = _answer(sock)[0]

    def run(name, act):
        with _connect(local_runtime) as sock:
            started = time.monotonic()
            writer = threading.Thread(target=_quietly, args=(act, sock), daemon=True)
            writer.start()
            if name == "idle":
                writer.join()
                results[name] = (_closed(sock), time.monotonic() - started)
                return
            try:
                status, _, body = _answer(sock)
                results[name] = (status, _error(body)["code"], time.monotonic() - started)
            except ConnectionError as exc:
                results[name] = (str(exc), None, time.monotonic() - started)

    threads = [threading.Thread(target=run, args=(name, act)) for name, act in
               (("never", never), ("dribble-body", dribble_body), ("dribble-head", dribble_head), ("idle", idle))]
    for thread in threads:
        thread.start()
    # While the four hold their connections, a plain request is answered as ever.
    assert call(local_runtime.info["api_url"], "GET", f"/stages/{demo['stage_id']}", demo["player_key"])[0] == 200
    for thread in threads:
        thread.join(http_limits.IDLE_S + http_limits.REQUEST_S + 2 * SLACK_S)
    for name in ("never", "dribble-body", "dribble-head"):
        status, code, took = results[name]
        assert (status, code) == (408, "request_timeout"), results
        assert http_limits.REQUEST_S - 1 < took < http_limits.REQUEST_S + SLACK_S, results
    assert results["idle-first"] == 200
    closed, took = results["idle"]
    assert closed and took < http_limits.IDLE_S + SLACK_S, results


def _quietly(act, sock):
    try:
        act(sock)
    except OSError:
        pass       # the server cut the connection: what the test waits for


def _chunked(data: bytes, size: int = 7) -> bytes:
    pieces = [data[i:i + size] for i in range(0, len(data), size)]
    return b"".join(f"{len(p):x};ext=1\r\n".encode() + p + b"\r\n" for p in pieces) + b"0\r\nTrailer: x\r\n\r\n"


def test_a_chunked_body_is_read_within_the_limit_and_the_connection_keeps_its_place(local_runtime, demo):
    """Before: the chunks were read as the next request.  Now the body is the line, and the same connection
    serves the next request."""
    speak = (f"POST /stages/{demo['stage_id']}/speak HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
             f"{demo['agent_key']}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    with _connect(local_runtime) as sock:
        sock.sendall(speak + _chunked(json.dumps({"text": "チャンクで届いた台詞"}).encode()))
        status, _, body = _answer(sock)
        assert status == 200, body
        line = json.loads(body)
        sock.sendall(f"GET /stages/{demo['stage_id']} HTTP/1.1\r\nHost: x\r\n"
                     f"Authorization: Bearer {demo['player_key']}\r\n\r\n".encode())
        status, _, body = _answer(sock)
        assert status == 200 and json.loads(body)["current"]["text"] == "チャンクで届いた台詞"
        assert json.loads(body)["version"] == line["version"]

    before = _log(local_runtime, demo)
    over = json.dumps({"text": "あ" * 1000, "speaker": "x" * 20000}).encode()
    broken = [(speak + _chunked(over, 4096), 413, "payload_too_large", "body"),
              (speak + b"zz\r\n{}\r\n0\r\n\r\n", 400, "invalid_request", "Transfer-Encoding"),
              (speak + b"2\r\n{}xx0\r\n\r\n", 400, "invalid_request", "Transfer-Encoding"),
              (speak.replace(b"chunked", b"gzip, chunked") + b"0\r\n\r\n", 400, "invalid_request",
               "Transfer-Encoding"),
              (speak.replace(b"\r\n\r\n", b"\r\nContent-Length: 2\r\n\r\n") + b"{}", 400, "invalid_request",
               "Transfer-Encoding"),
              (speak.replace(b"Transfer-Encoding: chunked", b"Content-Length: 2\r\nContent-Length: 2") + b"{}", 400,
               "invalid_request", "Content-Length")]
    for request, status, code, field in broken:
        with _connect(local_runtime) as sock:
            sock.sendall(request)
            got, headers, body = _answer(sock)
            error = _error(body)
            assert (got, error["code"], error.get("field")) == (status, code, field), (request[-60:], body)
            assert headers["connection"] == "close" and _closed(sock)
    assert _log(local_runtime, demo) == before


@pytest.mark.parametrize("request_bytes, status, code", [
    (b"GET /" + b"a" * (http_limits.REQUEST_LINE_MAX + 10) + b" HTTP/1.1\r\n\r\n", 414, "uri_too_long"),
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * http_limits.HEAD_MAX + b"\r\n\r\n", 431, "headers_too_large"),
    (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n", 431, "headers_too_large"),
    (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
    (b"GET / HTTP/1.x\r\nHost: x\r\n\r\n", 400, "invalid_request"),
    (b"this is no request at all\r\n\r\n", 400, "invalid_request"),
    (b"GET /\r\n\r\n", 400, "invalid_request"),                               # HTTP/0.9
    (b"GET /no-such-file.txt HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"),
    (b"GET /push HTTP/1.1\r\nHost: x\r\n\r\n", 426, None),                   # the push socket, not upgraded
    (b"GET /push HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", 400, None),
])
def test_every_status_the_server_answers_itself_is_a_json_error(local_runtime, request_bytes, status, code):
    """Before: 431, 414 and 505 (and the push socket's refusals) came as HTML or plain text."""
    with _connect(local_runtime) as sock:
        sock.sendall(request_bytes)
        got, headers, body = _answer(sock)
    assert got == status, body[:200]
    assert headers["content-type"] == "application/json", headers
    error = _error(body)
    assert code is None or error["code"] == code, error
    assert b"<html" not in body.lower() and headers.get("x-content-type-options") == "nosniff"


@pytest.mark.parametrize("path, method", [
    ("/stages/{id}/speak/", "POST"), ("/stages/{id}/speak;x=1", "POST"), ("/stages/{id}/speak;", "POST"),
    ("/stages/{id}/", "GET"), ("/stages/{id}/fetch_replies/", "POST"), ("/openapi.json/", "GET"),
    ("/stages/{id};x=1", "GET"), ("/stages/", "GET"), ("/stages/{id}/webhook/", "GET")])
def test_routes_match_exactly_as_in_the_cloud(local_runtime, demo, path, method):
    """`/speak/` and `/speak;x=1` spoke locally though API Gateway has no such routes: now 404 (`/stages/<id>;x=1`
    names no stage), and nothing is written."""
    before = _log(local_runtime, demo)
    key = demo["agent_key"]
    status, _, body = call(local_runtime.info["api_url"], method, path.replace("{id}", demo["stage_id"]), key,
                           {"text": "末尾の違う道"} if method == "POST" else None)
    assert status == 404 and body["error"]["code"] in ("not_found", "stage_not_found"), body
    assert _log(local_runtime, demo) == before
    assert call(local_runtime.info["api_url"], "GET", f"/stages/{demo['stage_id']}", key)[0] == 200


@pytest.mark.parametrize("second", ["agent", "player", "wrong", "same"])
def test_two_authorization_headers_are_a_400_and_change_nothing(local_runtime, demo, second):
    """Before: the first one won."""
    before = _log(local_runtime, demo)
    other = {"agent": demo["agent_key"], "player": demo["player_key"], "wrong": "bka_wrong",
             "same": demo["agent_key"]}[second]
    body = json.dumps({"text": "鍵が二つ"}).encode()
    for first in (demo["agent_key"], "bka_wrong"):
        with _connect(local_runtime) as sock:
            sock.sendall((f"POST /stages/{demo['stage_id']}/speak HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {first}"
                          f"\r\nAuthorization: Bearer {other}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
            status, _, answer = _answer(sock)
        error = _error(answer)
        assert (status, error["code"], error["field"]) == (400, "invalid_request", "Authorization"), answer
    assert _log(local_runtime, demo) == before
