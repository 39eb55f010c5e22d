"""Where a webhook may be sent, and the one way butai sends it (SSRF-safe).

A webhook URL is chosen by whoever holds a stage's agent key, and the request
leaves from inside butai's network, so the URL must never reach butai's own
side: loopback, private and link-local ranges, cloud metadata addresses.  The
rules:

- ``https`` only; plain ``http`` only to 127.0.0.1 / ::1 / localhost, and only
  in the local runtime (``local=True``);
- the host is a DNS name (IP addresses only for loopback, locally), the URL is
  printable ASCII without a fragment: exactly ``url_pattern(local)``, which the
  OpenAPI document publishes, so the schema allows no URL the API refuses;
- no user name or password in the URL;
- the host is resolved, **every** address it resolves to must be allowed, and
  the connection goes to the address that was checked (pinned), so a DNS
  answer that changes between the check and the connect (rebinding) cannot
  slip through; TLS still verifies the certificate against the host name;
- redirects are not followed (a 3xx is a failed delivery);
- an attempt has one wall-clock deadline, ``ATTEMPT_DEADLINE_S``, for all of it:
  connecting (at most ``CONNECT_TIMEOUT_S`` of it), the TLS handshake, sending,
  the answer's headers and its body.  A receiver that dribbles its answer a
  byte at a time cannot stretch an attempt past it;
- at most ``MAX_HEADER_BYTES`` of the answer's headers and ``MAX_RESPONSE_BYTES``
  of its body are read: a longer head fails the attempt.
"""
from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from .. import lazyre

MAX_URL_LENGTH = 2048
MAX_HEADER_BYTES = 4096
MAX_RESPONSE_BYTES = 4096
CONNECT_TIMEOUT_S = 3.0
ATTEMPT_DEADLINE_S = 5.0
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
# Instance metadata services reachable from inside clouds (AWS IPv4 and IPv6, Alibaba, Oracle).
METADATA = {ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200",
                                               "192.0.0.192")}

Resolver = Callable[[str, int], list[str]]

# The shape of a webhook URL (no DNS), written so that Python's `re` and JSON Schema (ECMA-262) read it
# alike: a DNS name whose last label starts with a letter (so no IPv4 address), a port 1-65535, and a path
# and query of printable ASCII without `#`.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"(?:{_LABEL}\.)+[A-Za-z](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?"
_PORT = r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?"
_REST = r"(?:[/?][!-\"$-~]*)?"
_LOOPBACK = r"(?:127\.0\.0\.1|localhost|\[::1\])"


def url_pattern(local: bool = False) -> str:
    """The URLs a webhook may have, before DNS (the OpenAPI document's ``pattern``)."""
    public = f"https://{_HOST}{_PORT}{_REST}"
    return f"^(?:{public}|https?://{_LOOPBACK}{_PORT}{_REST})$" if local else f"^{public}$"


_URL = {local: lazyre.compile(url_pattern(local)) for local in (False, True)}


class AnswerRefused(OSError):
    """The receiver's answer broke the limits (too slow for the deadline, a head too long, not HTTP)."""


class TargetRefused(ValueError):
    """The URL, or an address it resolves to, may not receive webhooks; ``reason`` is a stable code."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str          # path and query, as sent


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes        # at most MAX_RESPONSE_BYTES
    address: str       # the pinned address the request went to


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse(url: str, *, local: bool = False) -> Target:
    """Checks a URL's shape (no DNS); raises TargetRefused."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise TargetRefused("invalid_url", f"url must be 1-{MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetRefused("invalid_url", "url is not a valid URL") from None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("https", "http") or not host:
        raise TargetRefused("invalid_url", "url must be an absolute https:// URL")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("invalid_url", "url must not carry a user name or password")
    if parts.fragment:
        raise TargetRefused("invalid_url", "url must not have a #fragment")
    if any(ord(c) < 0x21 or ord(c) == 0x7f for c in url):
        raise TargetRefused("invalid_url", "url must not contain spaces or control characters")
    if parts.scheme == "http" and not (local and host in LOOPBACK_NAMES):
        raise TargetRefused("https_required", "url must use https (plain http only to 127.0.0.1 in a local run)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    target = Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path)
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        check_address(str(literal), local=local)
    elif host == "localhost" and not local:
        raise TargetRefused("loopback", "url points at this machine (localhost)")
    if not _URL[local].match(url):
        raise TargetRefused("invalid_url", "url must be https://<a DNS name>[:port][/path]: printable ASCII, no "
                                           "IP address (a name is checked after DNS), no #fragment")
    return target


# IPv6 ranges that carry an IPv4 address in their last 32 bits, which a translator or tunnel on the way
# may deliver to: NAT64 (well-known and local-use prefixes) and IPv4-translated addresses.
_TRAILING_IPV4 = tuple(ipaddress.ip_network(n) for n in ("64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0:0/96"))


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for: IPv4-mapped, 6to4 (2002::/16), Teredo (2001::/32:
    server and client), NAT64 and IPv4-translated.  Each must pass the same checks as the address itself."""
    found = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if any(ip in net for net in _TRAILING_IPV4):
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def check_address(address: str, *, local: bool = False) -> None:
    """Raises TargetRefused unless ``address`` is a public unicast address (or loopback, locally), and so is
    every IPv4 address it embeds."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = embedded_ipv4(ip)
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        else:
            for inner in embedded:
                _check_one(inner, local=local, within=f" (inside {address})")
    _check_one(ip, local=local)


def _check_one(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, *, local: bool, within: str = "") -> None:
    if ip in METADATA:
        raise TargetRefused("metadata_address", f"{ip}{within} is a cloud metadata address")
    if ip.is_loopback:
        if local:
            return
        raise TargetRefused("loopback", f"{ip}{within} is a loopback address")
    if ip.is_link_local:
        raise TargetRefused("link_local_address", f"{ip}{within} is a link-local address")
    if ip.is_private or ip.is_unspecified or ip.is_reserved or ip.is_multicast or not ip.is_global:
        raise TargetRefused("private_address", f"{ip}{within} is not a public address")


def resolve(target: Target, *, local: bool = False, resolver: Resolver = system_resolver) -> str:
    """The address to connect to: every address the host resolves to must be allowed."""
    try:
        addresses = resolver(target.host, target.port)
    except OSError as exc:
        raise TargetRefused("dns_failed", f"cannot resolve {target.host}: {exc}") from None
    if not addresses:
        raise TargetRefused("dns_failed", f"{target.host} resolves to no address")
    for address in addresses:
        check_address(address, local=local)
    return addresses[0]


def post(url: str, body: bytes, headers: dict[str, str], *, local: bool = False,
         resolver: Resolver = system_resolver, connect_timeout: float = CONNECT_TIMEOUT_S,
         deadline_s: float = ATTEMPT_DEADLINE_S, tls: ssl.SSLContext | None = None) -> Answer:
    """POSTs ``body`` to ``url`` under the rules above.  Raises TargetRefused before any
    connection to a refused address, OSError (AnswerRefused, TimeoutError …) when the receiver
    cannot be reached or breaks the limits within ``deadline_s`` seconds of wall clock."""
    deadline = time.monotonic() + deadline_s
    target = parse(url, local=local)
    address = resolve(target, local=local, resolver=resolver)
    watchdog: list[threading.Timer] = []

    def pinned(_address, timeout=None, source_address=None):
        sock = socket.create_connection((address, target.port), timeout=min(connect_timeout, _left(deadline)))
        sock.settimeout(_left(deadline))     # the TLS handshake and the request: what is left of the deadline
        # Whatever step is under way when the deadline passes (a handshake dribbled a byte at a time
        # too), the socket is shut then, which ends any read or write on it.
        timer = threading.Timer(_left(deadline), _shut, (sock,))
        timer.daemon = True
        timer.start()
        watchdog.append(timer)
        return sock

    if target.scheme == "https":
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            target.host, target.port, timeout=deadline_s, context=tls or ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=deadline_s)
    # http.client opens its socket through this hook; the TLS layer (for https) still
    # wraps it with the host name, so the certificate is checked against the URL's host.
    conn._create_connection = pinned  # type: ignore[attr-defined]
    try:
        conn.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": "butai-webhooks", "Connection": "close", **headers})
        assert conn.sock is not None
        status, data = _read_answer(conn.sock, deadline)
        return Answer(status, data, address)
    except OSError:
        if time.monotonic() >= deadline:
            raise TimeoutError(f"no complete answer within {deadline_s:g} s") from None
        raise
    finally:
        for timer in watchdog:
            timer.cancel()
        conn.close()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the attempt's deadline passed")
    return left


def _recv(sock: socket.socket, deadline: float, size: int) -> bytes:
    # Every read waits at most what is left of the one deadline, however the answer is dribbled.
    sock.settimeout(_left(deadline))
    return sock.recv(size)


def _read_answer(sock: socket.socket, deadline: float) -> tuple[int, bytes]:
    """The status and at most MAX_RESPONSE_BYTES of the body, read by hand: http.client's reader applies its
    timeout per read (a byte every few seconds never trips it) and reads headers without a bound."""
    buffer = b""
    while True:
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > MAX_HEADER_BYTES:
                raise AnswerRefused(f"headers longer than {MAX_HEADER_BYTES} bytes")
            chunk = _recv(sock, deadline, MAX_HEADER_BYTES + 4 - len(buffer))
            if not chunk:
                raise AnswerRefused("the connection closed before the answer's headers ended")
            buffer += chunk
        head, _, rest = buffer.partition(b"\r\n\r\n")
        if len(head) > MAX_HEADER_BYTES:
            raise AnswerRefused(f"headers longer than {MAX_HEADER_BYTES} bytes")
        status, length = _parse_head(head)
        if status >= 200 or status == 101:
            break
        buffer = rest       # an interim answer (100 Continue …): the real one follows
    wanted = MAX_RESPONSE_BYTES if length is None else min(length, MAX_RESPONSE_BYTES)
    body = rest[:wanted]
    try:
        while len(body) < wanted:
            chunk = _recv(sock, deadline, wanted - len(body))
            if not chunk:
                break
            body += chunk
    except (TimeoutError, OSError):
        pass        # the status decided the attempt; a body cut short by the deadline changes nothing
    return status, body


def _parse_head(head: bytes) -> tuple[int, int | None]:
    lines = head.split(b"\r\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not (parts[1].isdigit() and len(parts[1]) == 3):
        raise AnswerRefused("the answer is not HTTP")
    length = None
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    return int(parts[1]), length
