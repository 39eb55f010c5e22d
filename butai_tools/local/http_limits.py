"""What the local server lets a connection cost before the Chalice app sees its request.

`http.server` (under chalice's local gateway) reads a whole body before anything looks at it, waits for
a body that never comes, treats `Transfer-Encoding: chunked` as no body at all (the chunks are then read
as the next request) and answers its own errors in HTML.  The local server puts these limits in front
of it, the ones API Gateway keeps in the cloud:

- **Time.** A kept-alive connection waits at most ``IDLE_S`` for its next request line; from then on the
  request's head and body must be in within ``REQUEST_S`` (a deadline for the whole request, not per read:
  a client that sends a byte a second is cut off as one that sends nothing).  The answer is written under
  a socket timeout of ``WRITE_S``.  A long-poll waits with no deadline on the connection: its wait is the
  server's own, bounded by `wait`.
- **Size.** The request line at most ``REQUEST_LINE_MAX`` bytes (414), line and headers together at most
  ``HEAD_MAX`` (431), the body at most the app's limit (16 KiB, 413) — refused by its declared length
  before a byte of it is read; a chunked body is read chunk by chunk and refused once it passes the limit.
- **Shape.** Every answer the server makes itself is the app's JSON error (`{"error": {"code",
  "message", "field"?}}`), 414, 431 and 505 included; a request whose framing cannot be trusted
  (two Content-Length headers, Transfer-Encoding beside Content-Length, a coding other than chunked, a
  malformed chunk) is answered 400 and its connection closed.
"""
from __future__ import annotations

import heapq
import http.client
import itertools
import json
import socket
import threading
import time
from http import HTTPStatus

from chalicelib.stage.models import BODY_MAX_BYTES

IDLE_S = 10.0
REQUEST_S = 10.0
WRITE_S = 30.0
REQUEST_LINE_MAX = 8 * 1024
HEAD_MAX = 16 * 1024
CHUNK_LINE_MAX = 1024
TRAILERS_MAX = 4 * 1024

# The error code of each status the server answers itself (the app's own errors come from the app).
CODES = {
    HTTPStatus.BAD_REQUEST: "invalid_request",
    HTTPStatus.NOT_FOUND: "not_found",
    HTTPStatus.METHOD_NOT_ALLOWED: "method_not_allowed",
    HTTPStatus.REQUEST_TIMEOUT: "request_timeout",
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: "payload_too_large",
    HTTPStatus.REQUEST_URI_TOO_LONG: "uri_too_long",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "headers_too_large",
    HTTPStatus.NOT_IMPLEMENTED: "not_implemented",
    HTTPStatus.SERVICE_UNAVAILABLE: "unavailable",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "http_version_not_supported",
}
MESSAGES = {
    HTTPStatus.BAD_REQUEST: "the request is not valid HTTP/1.1",
    HTTPStatus.REQUEST_TIMEOUT: f"the request did not arrive within {REQUEST_S:g} s",
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: f"request body over the limit of {BODY_MAX_BYTES} bytes",
    HTTPStatus.REQUEST_URI_TOO_LONG: f"the request line is over {REQUEST_LINE_MAX} bytes",
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: f"the request's line and headers are over {HEAD_MAX} bytes",
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "only HTTP/1.0 and HTTP/1.1 are served",
    HTTPStatus.NOT_IMPLEMENTED: "this method is not served",
}


def error_body(status: int, message: str | None = None, field: str | None = None, code: str | None = None) -> bytes:
    """The app's error shape, for an answer the server makes itself."""
    status = HTTPStatus(status)
    error = {"code": code or CODES.get(status, "invalid_request"),
             "message": message or MESSAGES.get(status, status.phrase.lower())}
    if field:
        error["field"] = field
    return json.dumps({"error": error}).encode()


class BadBody(Exception):
    """The body cannot be read as sent: answer ``status`` (naming ``field``) and close the connection."""

    def __init__(self, status: int, message: str, field: str = "body"):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


class Deadline:
    """One connection's deadline; ``expired`` once the reaper has cut the connection's reading side."""
    __slots__ = ("sock", "at", "expired", "armed")

    def __init__(self, sock: socket.socket):
        self.sock, self.at, self.expired, self.armed = sock, 0.0, False, False


class Deadlines:
    """A single thread that ends the reading side of connections whose deadline passed: a blocked read
    then returns at once (as at the end of the stream), whatever the client is dribbling, and the answer
    (a 408) can still be written."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._heap: list[tuple[float, int, Deadline]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: Deadline, seconds: float) -> Deadline:
        with self._cond:
            deadline.at, deadline.armed = self._clock() + seconds, True
            heapq.heappush(self._heap, (deadline.at, next(self._seq), deadline))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="http-deadlines", daemon=True)
                self._thread.start()
            self._cond.notify()
        return deadline

    def disarm(self, deadline: Deadline) -> None:
        with self._cond:
            deadline.armed = False

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    # Entries of disarmed (or re-armed) deadlines are dropped as they come up.
                    while self._heap and (not self._heap[0][2].armed or self._heap[0][0] != self._heap[0][2].at):
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    left = self._heap[0][0] - self._clock()
                    if left <= 0:
                        _, _, due = heapq.heappop(self._heap)
                        due.armed, due.expired = False, True
                        break
                    self._cond.wait(left)
            try:
                due.sock.shutdown(socket.SHUT_RD)
            except OSError:
                pass


DEADLINES = Deadlines()


class HeadReader:
    """The handler's reader while http.server parses the headers: at most ``budget`` bytes in all (past
    that, http.client's own LineTooLong, which http.server answers 431)."""

    def __init__(self, inner, budget: int):
        self._inner, self._budget = inner, budget

    def readline(self, limit: int = -1) -> bytes:
        want = self._budget + 1 if limit < 0 else min(limit, self._budget + 1)
        line = self._inner.readline(want)
        self._budget -= len(line)
        if self._budget < 0:
            raise http.client.LineTooLong("request head")
        return line

    def __getattr__(self, name):
        return getattr(self._inner, name)


def framing_problem(headers) -> tuple[str, str] | None:
    """Why the body of a request with these headers cannot be delimited safely (field, message), or None."""
    lengths = headers.get_all("Content-Length") or []
    codings = headers.get_all("Transfer-Encoding") or []
    if len(lengths) > 1:
        return "Content-Length", "send one Content-Length header"
    if lengths and not (lengths[0].strip().isascii() and lengths[0].strip().isdigit()):
        return "Content-Length", "Content-Length must be a whole number of bytes"
    if codings and lengths:
        return "Transfer-Encoding", "send Content-Length or Transfer-Encoding, not both"
    if codings and [c.strip().lower() for c in ",".join(codings).split(",")] != ["chunked"]:
        return "Transfer-Encoding", "the only transfer coding taken is chunked"
    return None


def declared_length(headers) -> int | None:
    """The body's length as the headers declare it (None: chunked, read as it comes)."""
    if headers.get("Transfer-Encoding"):
        return None
    return int((headers.get("Content-Length") or "0").strip())


def read_body(rfile, headers, limit: int = BODY_MAX_BYTES) -> bytes:
    """The request body, at most ``limit`` bytes (Content-Length or chunked); BadBody when it is over the
    limit, malformed or cut short."""
    length = declared_length(headers)
    if length is not None:
        if length > limit:
            raise BadBody(413, f"request body is {length} bytes; the limit is {limit}")
        body = rfile.read(length) if length else b""
        if len(body) < length:
            raise BadBody(408, "the request body was cut short")
        return body
    parts: list[bytes] = []
    size = 0
    while True:
        line = rfile.readline(CHUNK_LINE_MAX + 1)
        if not line.endswith(b"\n"):
            raise BadBody(408 if len(line) <= CHUNK_LINE_MAX else 400, "a chunk's size line was cut short or too long")
        digits = line.split(b";", 1)[0].strip()
        if not digits or len(digits) > 8 or any(c not in b"0123456789abcdefABCDEF" for c in digits):
            raise BadBody(400, "a chunk's size is not a hexadecimal number", "Transfer-Encoding")
        chunk = int(digits, 16)
        if chunk == 0:
            break
        size += chunk
        if size > limit:
            raise BadBody(413, f"request body is over the limit of {limit} bytes")
        data = rfile.read(chunk)
        if len(data) < chunk:
            raise BadBody(408, "the request body was cut short")
        if rfile.readline(3) not in (b"\r\n", b"\n"):
            raise BadBody(400, "a chunk does not end where its size says", "Transfer-Encoding")
        parts.append(data)
    trailers = 0
    while True:   # trailers are read and dropped, as API Gateway does
        line = rfile.readline(TRAILERS_MAX + 1)
        trailers += len(line)
        if trailers > TRAILERS_MAX:
            raise BadBody(400, f"the chunked body's trailers are over {TRAILERS_MAX} bytes", "Transfer-Encoding")
        if not line.endswith(b"\n"):
            raise BadBody(408, "the chunked body's trailers were cut short")
        if line in (b"\r\n", b"\n"):
            return b"".join(parts)


def match_route(routes, path: str) -> tuple[str, dict[str, str]] | None:
    """The route that ``path`` names exactly, as API Gateway matches it: segment by segment, no trailing
    slash dropped and no `;params` split off (chalice's local matcher does both); a `{name}` takes any one
    segment, empty only inside the path (`/stages//speak` names the stage ``""``; `/stages/` is a trailing
    slash, no route)."""
    parts = path.split("/")
    if len(parts) > 2 and parts[-1] == "":
        return None
    for route in sorted(routes):
        names = route.split("/")
        if len(names) != len(parts):
            continue
        captured = {}
        for name, part in zip(names, parts):
            if name.startswith("{") and name.endswith("}"):
                captured[name[1:-1]] = part
            elif name != part:
                break
        else:
            return route, captured
    return None
